"""BPE's merge loop (counts and WordPiece's likelihood score), and the three tokenisers
behind one interface: their splits, vocabulary sizes and measures."""

from collections import Counter

import pytest

from minibert.text.bpe import BPE, apply_merge, learn_merges, train_bpe, units
from minibert.text.language import generate_corpus
from minibert.text.subwords import (
    KINDS,
    pieces_per_word,
    rare_words,
    split_words,
    train_subwords,
    word_of,
)
from minibert.text.tokenizer import SPECIAL_TOKENS, UNK, WordPiece

# Hugging Face's course example: "hug" 10 times, "pug" 5, "pun" 12, "bun" 4, "hugs" 5.
HUG_COUNTS = Counter({"hug": 10, "pug": 5, "pun": 12, "bun": 4, "hugs": 5})
RARE = ["wolfish", "foxes", "hammers", "unbreadable", "lucasville"]


@pytest.fixture(scope="module")
def corpus_texts():
    train = [d.text for d in generate_corpus(300, seed=0)]
    held_out = [d.text for d in generate_corpus(50, seed=10_000)]
    return train, held_out


@pytest.fixture(scope="module")
def trained(corpus_texts):
    return {kind: train_subwords(kind, corpus_texts[0], 120) for kind in KINDS}


def test_units_and_merges_mark_continuing_pieces():
    assert units("fox") == ["f", "##o", "##x"]
    assert apply_merge(["h", "##u", "##g", "##u", "##g"], ("##u", "##g")) == ["h", "##ug", "##ug"]


def test_bpe_merges_the_most_frequent_pairs_first():
    # pair counts: ##u ##g 20, p ##u 17, ##u ##n 16, h ##u 15; after ##ug: ##u ##n 16,
    # h ##ug 15, p ##u 12; then h ##ug 15; then p ##un 12.
    vocab, merges = learn_merges(HUG_COUNTS, 100, "count", min_frequency=1)
    assert merges[:4] == [("##u", "##g"), ("##u", "##n"), ("h", "##ug"), ("p", "##un")]
    assert vocab[:len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS)
    assert vocab[len(SPECIAL_TOKENS):len(SPECIAL_TOKENS) + 7] == [
        "##g", "##n", "##s", "##u", "b", "h", "p"]  # the alphabet, sorted
    assert vocab[-len(merges):][:4] == ["##ug", "##un", "hug", "pun"]


def test_likelihood_score_merges_pairs_whose_parts_seldom_appear_apart():
    # ##g ##s: 5 / (20 * 5) = 1/20 beats every other pair's 1/36 (the course's first merge)
    _, merges = learn_merges(HUG_COUNTS, 100, "likelihood", min_frequency=1)
    assert merges[0] == ("##g", "##s")


def test_min_frequency_stops_the_merges():
    vocab, merges = learn_merges(Counter({"ab": 1, "cd": 3}), 100, "count", min_frequency=2)
    assert merges == [("c", "##d")] and len(vocab) == len(SPECIAL_TOKENS) + 4 + 1


def test_bpe_encodes_by_replaying_its_merges_in_order():
    bpe = BPE(*learn_merges(HUG_COUNTS, len(SPECIAL_TOKENS) + 7 + 4, "count", min_frequency=1))
    assert bpe.split_word("hugs") == ["hug", "##s"]
    assert bpe.split_word("bug") == ["b", "##ug"]
    assert bpe.split_word("bun") == ["b", "##un"]
    assert bpe.split_word("mug") == [UNK]  # "m" is not in the alphabet
    assert bpe.tokenize("Hug PUN") == ["hug", "pun"]  # lower-cased, as trained


def test_every_piece_is_an_entry_and_joins_back_into_its_word(trained, corpus_texts):
    held_out_words = {w for text in corpus_texts[1] for w in text.split() if w.isalpha()}
    for kind, tokenizer in trained.items():
        for word in [*held_out_words, *RARE]:
            pieces = tokenizer.split_word(word)
            assert word_of(pieces) == word, (kind, word, pieces)
            assert set(pieces) <= set(tokenizer.vocab)


@pytest.mark.parametrize("kind", KINDS)
def test_vocabulary_sizes_are_honoured(kind, corpus_texts):
    for size in (60, 120):
        assert len(train_subwords(kind, corpus_texts[0], size).vocab) == size
    tiny = ["ab ab cd"]  # BPE and WordPiece stop when every word seen twice is one entry
    assert len(train_subwords(kind, tiny, 50).vocab) <= 50


def test_wordpiece_is_read_greedily_and_bpe_and_wordpiece_learn_different_merges(trained):
    assert isinstance(trained["wordpiece"], WordPiece)
    bpe_entries, wordpiece_entries = set(trained["bpe"].vocab), set(trained["wordpiece"].vocab)
    assert bpe_entries != wordpiece_entries


def test_training_is_deterministic(corpus_texts):
    for kind in KINDS:
        first, second = (train_subwords(kind, corpus_texts[0], 100) for _ in range(2))
        assert first.vocab == second.vocab


def test_pieces_per_word_and_splits():
    bpe = train_bpe(["hug hug pug pug"], 50)  # every word becomes one entry
    assert pieces_per_word(bpe, ["hug pug"]) == 1.0
    assert pieces_per_word(bpe, ["hug hugug"]) == (1 + 2) / 2  # hug ##ug
    assert split_words(bpe, ["hug", "hugug"]) == {"hug": ["hug"], "hugug": ["hug", "##ug"]}


def test_rare_words_are_those_seen_at_most_max_count_times():
    train = ["the fox runs", "the fox sleeps"]
    assert rare_words(train, ["the owl runs and the owl sleeps"]) == ["owl", "and"]
    assert rare_words(train, ["the owl runs"], max_count=1) == ["owl", "runs"]


@pytest.mark.parametrize("call, message", [
    (lambda: train_subwords("sentencepiece", ["a b"], 50), "kind"),
    (lambda: train_subwords("bpe", ["", "  "], 50), "at least one text"),
    (lambda: train_subwords("bpe", ["abc abc"], 7), "at least 8"),
    (lambda: train_subwords("wordpiece", ["abc abc"], 7), "at least 8"),
    (lambda: train_subwords("unigram", ["abc abc"], 7), "at least 8"),
    (lambda: train_subwords("unigram", ["abc abc"], 50.0), "vocab_size"),
    (lambda: train_subwords("bpe", ["abc abc"], "50"), "vocab_size"),
    (lambda: learn_merges(HUG_COUNTS, 50, "frequency"), "score"),
    (lambda: learn_merges(Counter({"": 2}), 50), "non-empty words"),
    (lambda: learn_merges(HUG_COUNTS, 50, "count", min_frequency=0), "min_frequency"),
    (lambda: pieces_per_word(train_bpe(["ab ab"], 20), [""]), "at least one text"),
    (lambda: rare_words(["a"], ["a"], max_count=-1), "max_count"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()
