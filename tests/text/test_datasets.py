"""The synthetic corpus and its datasets: deterministic, well formed, labels true."""


import pytest
import torch

import minibert
from helpers import python_license_path
from minibert.text import datasets, language
from minibert.text.datasets import batches, pretraining_pairs
from minibert.text.language import ANIMALS, JOBS, TAGS, TOPICS, corpus_tokenizer, generate_corpus


@pytest.fixture(scope="module")
def tokenizer():
    return corpus_tokenizer()


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(300, seed=1)


def test_corpus_is_deterministic_and_seeded():
    first = [d.text for d in generate_corpus(20, seed=5)]
    assert first == [d.text for d in generate_corpus(20, seed=5)]
    assert first != [d.text for d in generate_corpus(20, seed=6)]


def test_documents_restate_their_facts_so_context_predicts_values(corpus):
    for document in corpus:
        assert document.topic in TOPICS and len(document.sentences) >= 8
        entities = {f.entity for f in document.facts}
        assert len(entities) == 2  # the main entity and a distractor
        for i, sentence in enumerate(document.sentences):
            if sentence.kind == "again":  # its value was stated earlier, for that entity
                earlier = document.sentences[:i]
                assert any(s.kind == "fact" and s.fact == sentence.fact for s in earlier)


def test_subject_verb_agreement_across_the_relative_clause(corpus):
    plural_nouns = set(ANIMALS.values()) | set(JOBS.values())
    sentences = [s for d in corpus for s in d.sentences if s.kind == "agreement"]
    attractors = 0
    for sentence in sentences:
        subject, verb, noun = sentence.words[1], sentence.words[-2], sentence.words[4]
        plural = subject in plural_nouns
        assert verb.endswith("s") != plural, sentence.text  # runs / run
        attractors += (noun in plural_nouns) != plural
    assert 0.35 < attractors / len(sentences) < 0.65


def test_pretraining_pairs_layout(corpus, tokenizer):
    pairs = pretraining_pairs(corpus, tokenizer, max_length=64, seed=0)
    ids, segments, mask = pairs["input_ids"], pairs["token_type_ids"], pairs["attention_mask"]
    assert ids.shape == segments.shape == mask.shape and ids.shape[1] == 64
    assert (ids[:, 0] == tokenizer.cls_id).all()
    assert ((ids == tokenizer.sep_id).sum(dim=1) == 2).all()
    assert ((ids == tokenizer.pad_id) == (mask == 0)).all()
    for row in range(len(pairs)):
        length = int(mask[row].sum())
        first_sep = int((ids[row] == tokenizer.sep_id).nonzero()[0])
        assert ids[row, length - 1] == tokenizer.sep_id
        assert (segments[row, :first_sep + 1] == 0).all()
        assert (segments[row, first_sep + 1:length] == 1).all()
        assert (segments[row, length:] == 0).all()
    share = pairs["next_sentence_label"].float().mean().item()
    assert abs(share - 0.5) < 4 * (0.25 / len(pairs)) ** 0.5


@pytest.mark.parametrize("negatives", ["random", "same_document"])
def test_next_and_not_next_segments_come_from_where_they_should(corpus, tokenizer, negatives):
    pairs = pretraining_pairs(corpus, tokenizer, max_length=128, negatives=negatives, seed=2)
    texts = [d.text for d in corpus]
    is_next = [e for e in pairs.examples if e["next_sentence_label"] == 0]
    not_next = [e for e in pairs.examples if e["next_sentence_label"] == 1]
    assert all(e["text_b"] in texts[e["document"]] for e in is_next)
    in_own = [e["text_b"] in texts[e["document"]] for e in not_next]
    if negatives == "random":
        assert sum(in_own) / len(not_next) < 0.05
    else:
        assert all(in_own)
        follows = [f". {e['text_a']} {e['text_b']}" in ". " + texts[e["document"]]
                   for e in not_next]  # A then B, from a sentence start
        assert not any(follows)


def test_pretraining_without_nsp(corpus, tokenizer):
    rows = pretraining_pairs(corpus, tokenizer, negatives=None)
    assert "next_sentence_label" not in rows.tensors
    assert (rows["token_type_ids"] == 0).all()
    assert ((rows["input_ids"] == tokenizer.sep_id).sum(dim=1) == 1).all()


def test_pretraining_pairs_refuse_bad_settings(corpus):
    with pytest.raises(ValueError, match="negatives"):
        pretraining_pairs(corpus, negatives="other")
    with pytest.raises(ValueError, match="max_length"):
        pretraining_pairs(corpus, max_length=4)
    with pytest.raises(ValueError, match="two documents"):
        pretraining_pairs(corpus[:1])


def test_batches_cover_every_row_once_in_a_seeded_order(corpus, tokenizer):
    pairs = pretraining_pairs(corpus[:50], tokenizer)
    def order(seed):
        generator = torch.Generator().manual_seed(seed)
        return torch.cat([b["input_ids"][:, 1] for b in batches(pairs, 16, True, generator)])
    assert len(order(0)) == len(pairs)
    assert torch.equal(order(0), order(0))
    assert sorted(order(0).tolist()) == sorted(pairs["input_ids"][:, 1].tolist())
    with pytest.raises(ValueError, match="batch_size"):
        next(batches(pairs, 0))


def test_sentence_classification_labels(tokenizer):
    topics = datasets.sentence_classification("topic", 200, seed=0)
    assert topics["labels"].bincount().tolist() == [40] * 5
    grammar = datasets.sentence_classification("grammar", 200, seed=0)
    plural_nouns = set(ANIMALS.values()) | set(JOBS.values())
    for example, label in zip(grammar.examples, grammar["labels"].tolist()):
        words = example["text"].split()
        agrees = words[-2].endswith("s") != (words[1] in plural_nouns)
        assert agrees == bool(label), example
    with pytest.raises(ValueError, match="task"):
        datasets.sentence_classification("sentiment")


def test_pair_classification_labels():
    pairs = datasets.pair_classification(90, seed=0)
    assert pairs["labels"].bincount().tolist() == [30, 30, 30]
    for example in pairs.examples:
        if example["label"] == "entailment":
            assert example["hypothesis"] not in example["premise"]  # restated in other words
    first_sep = (pairs["input_ids"] == pairs.tokenizer.sep_id).float().argmax(dim=1)
    assert (pairs["token_type_ids"][torch.arange(90), first_sep + 1] == 1).all()
    borrowed = [e["borrowed"] for e in pairs.examples if e["label"] == "contradiction"]
    assert any(borrowed) and not all(borrowed)  # the other entity's value, or a new one
    assert not any(e["borrowed"] for e in pairs.examples if e["label"] != "contradiction")


def test_pair_hypotheses_alone_tell_no_label():
    """Every label draws the hypothesis's wording the same way, so a bag of the hypothesis's
    words predicts the label no better than chance (1/3). With the earlier generator, where
    an entailment always used a later wording, the same probe scored about 0.5."""
    from minibert.measure import probes

    def words_of_b(data):  # (N, V): counts of each token id of sentence B
        ids = data["input_ids"] * data["token_type_ids"]  # sentence A's tokens -> 0
        counts = torch.zeros(len(ids), data.tokenizer.vocab_size)
        return counts.scatter_add_(1, ids, torch.ones_like(ids, dtype=torch.float))[:, 1:]

    train = datasets.pair_classification(1000, seed=0, max_length=32)
    test = datasets.pair_classification(600, seed=1, max_length=32)
    accuracy = probes.linear_probe(words_of_b(train), train["labels"], words_of_b(test),
                                   test["labels"])
    assert accuracy < 1 / 3 + 0.06  # 3 standard errors of an accuracy on 600 rows at 1/3
    alone = datasets.pair_classification(600, seed=1, max_length=32, hypothesis_only=True)
    assert alone["labels"].equal(test["labels"]) and alone.examples == test.examples
    assert (alone["token_type_ids"] == 0).all()  # [CLS] B [SEP]: one segment
    for row, example in zip(alone["input_ids"], alone.examples):
        assert alone.tokenizer.decode(row) == example["hypothesis"]


def test_qa_spans_hold_the_answer(tokenizer):
    qa = datasets.qa_dataset(200, seed=0)
    for row, example in enumerate(qa.examples):
        start, end = int(qa["start_positions"][row]), int(qa["end_positions"][row])
        assert tokenizer.decode(qa["input_ids"][row, start:end + 1]) == example["answer"]
        assert qa["token_type_ids"][row, start] == 1  # inside the document, not the question
    multi_word = [e for e in qa.examples if len(e["answer"].split()) > 1]
    assert multi_word  # person names span two tokens


def test_qa_distractor_is_the_other_entitys_value():
    qa = datasets.qa_dataset(200, seed=0)
    stated = [e for e in qa.examples if e["distractor"] is not None]
    assert 0 < len(stated) < len(qa.examples)  # the second entity states 2 relations of 3+
    for example in stated:  # a value of the asked relation, stated in the document
        assert example["distractor"] in example["context"]


def test_tags_sit_on_first_tokens():
    tagged = datasets.tagging_dataset(200, seed=0)
    labels = tagged["labels"]
    assert (labels[:, 0] == -100).all()
    for row, example in enumerate(tagged.examples):
        scored = labels[row][labels[row] != -100].tolist()
        assert [TAGS[t] for t in scored] == example["tags"]
    surname_cities = [e for e in tagged.examples
                      if any(t == "I-PERSON" and w in ("paris", "lima")
                             for w, t in zip(e["text"].split(), e["tags"]))]
    assert surname_cities  # the same word is a city elsewhere: context decides


def test_long_documents_put_the_evidence_where_they_say(tokenizer):
    long = datasets.long_documents(30, seed=0, min_tokens=300, max_tokens=600)
    lengths = long["attention_mask"].sum(dim=1)
    assert (lengths >= 302).all() and (lengths <= 602).all()
    for row, example in enumerate(long.examples):
        start = int(long["evidence_start"][row])
        evidence = tokenizer.tokenize(example["evidence"])
        found = tokenizer.decode(long["input_ids"][row, start:start + len(evidence)])
        assert found == example["evidence"]
        where = start / int(lengths[row])
        expected = {"beginning": (0, 0.02), "middle": (0.4, 0.6), "end": (0.95, 1)}
        low, high = expected[example["position"]]
        assert low <= where <= high, (example["position"], where)
        positive = any(w in example["evidence"].split() for w in language.POSITIVE_MOODS)
        assert positive == bool(long["labels"][row])
    head = datasets.truncate(long, 128, keep="head")
    tail = datasets.truncate(long, 128, keep="tail")
    assert head["input_ids"].shape == (30, 128)
    kept_head = head["evidence_start"] >= 0
    kept_tail = tail["evidence_start"] >= 0
    positions = [e["position"] for e in long.examples]
    assert all(kept_head[i] for i, p in enumerate(positions) if p == "beginning")
    assert all(kept_tail[i] for i, p in enumerate(positions) if p == "end")
    assert not any(kept_head[i] or kept_tail[i] for i, p in enumerate(positions) if p == "middle")
    with pytest.raises(ValueError, match="keep"):
        datasets.truncate(long, 128, keep="middle")
    with pytest.raises(ValueError, match="positions"):
        datasets.long_documents(3, positions=("top",))


def test_load_text_corpus_on_a_real_file():
    documents, tokenizer = language.load_text_corpus(python_license_path(), vocab_size=800)
    assert len(documents) > 10
    assert sum(len(d.sentences) for d in documents) > 50
    assert len(tokenizer) <= 800
    ids = [tokenizer.encode(d.text).ids for d in documents]
    unknown = sum(i.count(tokenizer.unk_id) for i in ids) / sum(map(len, ids))
    assert unknown < 0.01
    pairs = pretraining_pairs(documents, tokenizer, max_length=64)
    assert len(pairs) > 20
    with pytest.raises(ValueError, match="no such file"):
        language.load_text_corpus("/no/such/file.txt")


def test_long_documents_end_when_no_sentence_fits_the_room_left():

    documents = datasets.long_documents(6, seed=3, min_tokens=60, max_tokens=100)
    assert len(documents) == 6


def test_multiple_choice_layout_and_one_right_ending():
    """(N, C, T) rows of [CLS] context [SEP] ending [SEP]; the labelled ending restates a
    fact of the context, the others give the same entity another value of the right kind,
    and can train with train_together (the batched members accept (B, C, T) inputs)."""
    from minibert.model import BertForMultipleChoice
    from minibert.training.ensemble import train_together

    data = datasets.multiple_choice(40, seed=1, max_length=32, num_choices=4)
    tokenizer = data.tokenizer
    assert data["input_ids"].shape == data["token_type_ids"].shape == (40, 4, 32)
    assert data["labels"].shape == (40,) and set(data["labels"].tolist()) <= {0, 1, 2, 3}
    assert len(set(data["labels"].tolist())) > 1  # the right ending moves around
    assert (data["input_ids"][:, :, 0] == tokenizer.cls_id).all()
    for example, ids in zip(data.examples, data["input_ids"]):
        endings = example["endings"]
        assert len(set(endings)) == 4  # four different endings
        for row in ids:  # [CLS] context [SEP] ending [SEP]
            assert (row == tokenizer.sep_id).sum() == 2
    assert datasets.multiple_choice(5, seed=1)["input_ids"].equal(
        datasets.multiple_choice(5, seed=1)["input_ids"])  # deterministic
    config = minibert.BertConfig(vocab_size=len(tokenizer.vocab), hidden_size=16,
                                 num_hidden_layers=1, num_attention_heads=2,
                                 intermediate_size=32, max_position_embeddings=32)
    models = [BertForMultipleChoice(config) for _ in range(2)]
    histories = train_together(models, [data, data], steps=2, batch_size=4, lr=1e-3,
                               seeds=[0, 1], progress=False, device="cpu")
    assert all(len(h.loss) == 2 for h in histories)
    bad = datasets.Dataset({**data.tensors, "token_type_ids": data["token_type_ids"] + 2},
                           data.examples, tokenizer, data.label_names)
    with pytest.raises(ValueError, match="segment id 3 is beyond type_vocab_size"):
        train_together(models, [bad, bad], steps=1, batch_size=4, lr=1e-3, seeds=[0, 1],
                       progress=False, device="cpu")  # (B, C, T) rows checked by name


def test_sentence_batch_encodes_typed_text_and_names_what_it_refuses(tokenizer):
    batch = datasets.sentence_batch("the fox lives in the cave .", tokenizer)
    tokens = [tokenizer.vocab[i] for i in batch["input_ids"][0].tolist()]
    assert tokens == ["[CLS]", "the", "fox", "lives", "in", "the", "cave", ".", "[SEP]"]
    assert batch["attention_mask"].shape == batch["token_type_ids"].shape == (1, 9)
    with pytest.raises(ValueError, match="empty"):
        datasets.sentence_batch("  ", tokenizer)
    with pytest.raises(ValueError, match="synthetic language: zebra"):
        datasets.sentence_batch("the zebra lives in the cave .", tokenizer)
    with pytest.raises(ValueError, match="more than 8"):
        datasets.sentence_batch("the fox lives in the cave .", tokenizer, max_length=8)


def test_zipfian_spellings_keep_the_meaning_and_follow_zipfs_law():
    plain = generate_corpus(40, seed=3)
    respelled = language.zipfian_corpus(40, seed=3, spellings=8)
    tokenizer = language.zipfian_tokenizer(8)
    words = language.corpus_words()
    letters = sum(w.isalpha() for w in words)
    assert tokenizer.vocab_size == 5 + 8 * letters + len(words) - letters
    ranks = []
    for a, b in zip(plain, respelled):
        assert a.topic == b.topic and a.facts == b.facts
        for s, t in zip(a.sentences, b.sentences):
            assert [w.rstrip("0123456789") for w in t.words] == list(s.words)  # same words
            assert tokenizer.tokenize(t.text) == list(t.words)  # each spelling one token
            ranks += [int(w[len(v):] or 1) for w, v in zip(t.words, s.words) if v.isalpha()]
    share = torch.bincount(torch.tensor(ranks), minlength=9)[1:] / len(ranks)  # (8,)
    zipf = 1 / torch.arange(1, 9)
    assert (share - zipf / zipf.sum()).abs().max() < 0.02  # Zipf's law, exponent 1
    assert language.zipfian_tokenizer(1).vocab == corpus_tokenizer().vocab
    with pytest.raises(ValueError, match="spellings"):
        language.zipfian_corpus(10, spellings=0)
