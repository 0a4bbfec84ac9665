"""Every dataset the chapters need, built from the synthetic language: pre-training pairs
(MLM + NSP), sentence classification, sentence pairs, span QA, token tagging and long
documents.

Datasets are `Dataset`s: padded tensors named as the model's forward() arguments (so
`model(**batch)` works) and each row's raw example with its ground truth.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import torch

from ..model.heads import IGNORE_INDEX
from .language import (
    AGREEMENT_TOPICS,
    INTRANSITIVE,
    RELATIONS,
    SURNAMES,
    TAGS,
    TOPICS,
    TRANSITIVE,
    Document,
    Fact,
    World,
    check_count,
    corpus_tokenizer,
)
from .tokenizer import UNK, WordPiece


@dataclass
class Dataset:
    """Rows of padded tensors named as the model's forward() arguments (input_ids,
    token_type_ids, attention_mask, labels, ...), and each row's raw text and ground truth."""

    tensors: dict[str, torch.Tensor]
    examples: list[dict]
    tokenizer: WordPiece
    label_names: tuple[str, ...] | None = None

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, name: str) -> torch.Tensor:
        return self.tensors[name]

    def __contains__(self, name: str) -> bool:  # so that bert.model_inputs reads a Dataset
        return name in self.tensors

    def select(self, rows: Sequence[int]) -> Dataset:
        """The dataset restricted to some rows (e.g. a train/test split)."""
        index = torch.as_tensor(list(rows), dtype=torch.long)
        return Dataset({k: v[index] for k, v in self.tensors.items()},
                       [self.examples[i] for i in index.tolist()], self.tokenizer, self.label_names)


def batches(dataset: Dataset, batch_size: int, shuffle: bool = True,
            generator: torch.Generator | None = None, drop_last: bool = False
            ) -> Iterator[dict[str, torch.Tensor]]:
    """One pass over the dataset in batches: dicts of tensors, ready for `model(**batch)`."""
    check_count("batch_size", batch_size)
    n = len(dataset)
    order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
    for start in range(0, n, batch_size):
        rows = order[start:start + batch_size]
        if drop_last and len(rows) < batch_size:
            return
        yield {name: tensor[rows] for name, tensor in dataset.tensors.items()}


def _pad(rows: list[list[int]], value: int, length: int | None = None) -> torch.Tensor:
    """Lists of ints -> (N, length) tensor, right-padded with `value`."""
    length = length or max(len(r) for r in rows)
    return torch.tensor([r + [value] * (length - len(r)) for r in rows], dtype=torch.long)


def padded_rows(ids: list[list[int]], segments: list[list[int]], tokenizer: WordPiece,
                  length: int | None = None) -> dict[str, torch.Tensor]:
    """input_ids, token_type_ids and attention_mask, each (N, T), padded on the right."""
    return {
        "input_ids": _pad(ids, tokenizer.pad_id, length),
        "token_type_ids": _pad(segments, 0, length),
        "attention_mask": _pad([[1] * len(r) for r in ids], 0, length),
    }


def sentence_batch(sentence: str, tokenizer: WordPiece | None = None, max_length: int = 64
                   ) -> dict[str, torch.Tensor]:
    """`[CLS] sentence [SEP]` in the synthetic language as a batch of one row (each tensor
    (1, T)), for explorers that take typed text. Refuses, with a ValueError that names the
    problem, an empty sentence, words the vocabulary lacks, and more than max_length tokens."""
    tokenizer = tokenizer or corpus_tokenizer()
    if not sentence.strip():
        raise ValueError("type a sentence: the box is empty")
    unknown = [word for word in sentence.lower().split() if tokenizer.tokenize(word) == [UNK]]
    if unknown:
        raise ValueError(f"not words of the synthetic language: {', '.join(unknown)}")
    encoding = tokenizer.encode(sentence)
    if len(encoding.ids) > max_length:
        raise ValueError(f"{len(encoding.ids)} tokens with [CLS] and [SEP]: more than "
                         f"{max_length}")
    return padded_rows([encoding.ids], [encoding.token_type_ids], tokenizer)


def _ids(tokenizer: WordPiece, text: str) -> list[int]:
    return tokenizer.convert_tokens_to_ids(tokenizer.tokenize(text))


def _word_ids(tokenizer: WordPiece, words: Sequence[str]) -> tuple[list[int], list[int]]:
    """Token ids of a word list, and for each word the index of its first token."""
    ids, starts = [], []
    for word in words:
        starts.append(len(ids))
        ids += _ids(tokenizer, word)
    return ids, starts


# --- pre-training: masked LM + next sentence prediction

NEGATIVES = ("random", "same_document", None)


def pretraining_pairs(documents: Sequence[Document], tokenizer: WordPiece | None = None,
                      max_length: int = 64, negatives: str | None = "random",
                      short_seq_prob: float = 0.1, seed: int = 0) -> Dataset:
    """BERT's pre-training rows, built document by document as create_pretraining_data does:
    gather consecutive sentences up to the target length, cut them at a random sentence
    boundary into A and B; half the time swap B for a "random next" (NotNext, label 1).

    negatives: "random" takes the NotNext segment from another document, "same_document"
    from a non-adjacent place in the same document (no topic clue), None builds rows
    without NSP: one span of consecutive sentences, [CLS] span [SEP], no labels (RoBERTa).
    short_seq_prob: share of rows given a shorter random target, as in BERT.
    The MLM corruption is applied later, per batch (see minibert.text.masking)."""
    if negatives not in NEGATIVES:
        raise ValueError(f"negatives must be one of {NEGATIVES}, got {negatives!r}")
    if not isinstance(max_length, int) or max_length < 8:
        raise ValueError(f"max_length must be an integer of at least 8, got {max_length!r}")
    if not 0.0 <= short_seq_prob <= 1.0:
        raise ValueError(f"short_seq_prob must lie in [0, 1], got {short_seq_prob!r}")
    if negatives is not None and len(documents) < 2:
        raise ValueError("pretraining_pairs needs at least two documents to draw negatives")
    tokenizer = tokenizer or corpus_tokenizer()
    rng = random.Random(seed)
    docs = [[_ids(tokenizer, s.text) for s in d.sentences] for d in documents]  # token ids
    budget = max_length - (2 if negatives is None else 3)  # room left by [CLS] and [SEP]s
    ids, segments, labels, examples = [], [], [], []
    for d, doc in enumerate(docs):
        start = 0  # the next row starts with sentence doc[start]
        while start < len(doc):
            target = budget if rng.random() >= short_seq_prob else rng.randint(2, budget)
            end = start + 1  # gather sentences doc[start:end] up to the target length
            while end < len(doc) and sum(map(len, doc[start:end])) < target:
                end += 1
            if negatives is None:
                a, b, label = _flat(doc[start:end])[:budget], None, None
            else:
                if end - start == 1:  # a pair needs two sentences: take one more
                    if end == len(doc):
                        break  # a lone last sentence is dropped
                    end += 1
                a, b, is_next = _make_pair(rng, docs, d, start, end, target, negatives)
                label = 0 if is_next else 1
                _truncate_pair(rng, a, b, budget)
            row, segment = _special_wrap(tokenizer, a, b)
            ids.append(row)
            segments.append(segment)
            labels.append(label)
            examples.append({"document": d, "text_a": tokenizer.decode(a),
                             "text_b": None if b is None else tokenizer.decode(b),
                             "next_sentence_label": label})
            start = end
    tensors = padded_rows(ids, segments, tokenizer, max_length)
    if negatives is not None:
        tensors["next_sentence_label"] = torch.tensor(labels, dtype=torch.long)
    return Dataset(tensors, examples, tokenizer, ("IsNext", "NotNext"))


def _flat(sentences: Sequence[list[int]]) -> list[int]:
    return [t for s in sentences for t in s]


def _make_pair(rng: random.Random, docs, d: int, start: int, end: int, target: int,
               negatives: str):
    """Segments A and B from two or more sentences docs[d][start:end]: A is a random number
    of the first ones, B the rest (IsNext) or, half the time, a span from elsewhere
    (NotNext). Every row uses all the sentences whatever its label, so labels stay 50/50
    (Google's code returns a NotNext's unused sentences, which tilts it towards NotNext).
    Returns a, b and whether B is the true next."""
    doc = docs[d]
    a_end = rng.randint(start + 1, end - 1)
    if rng.random() < 0.5:
        return _flat(doc[start:a_end]), _flat(doc[a_end:end]), True
    if negatives == "random":
        source = rng.randrange(len(docs) - 1)
        source += source >= d  # any document but this one
        begin = rng.randrange(len(docs[source]))
    else:  # the same document, anywhere but inside A or right after it
        source = d
        choices = [k for k in range(len(doc)) if not start <= k <= a_end]
        if not choices:  # shorten A to one sentence to make room
            a_end = start + 1
            choices = [k for k in range(len(doc)) if not start <= k <= a_end]
        if not choices:  # a document of two sentences has no NotNext of its own
            return _flat(doc[start:a_end]), _flat(doc[a_end:end]), True
        begin = rng.choice(choices)
    a, b = _flat(doc[start:a_end]), []
    for sentence in docs[source][begin:]:
        if b and len(a) + len(b) >= target:
            break
        b += sentence
    return a, b, False


def _truncate_pair(rng: random.Random, a: list[int], b: list[int], budget: int) -> None:
    """Cut the longer segment, at its front or back at random, until the pair fits."""
    while len(a) + len(b) > budget:
        longer = a if len(a) > len(b) else b
        del longer[0 if rng.random() < 0.5 else -1]


def _special_wrap(tokenizer: WordPiece, a: list[int], b: list[int] | None):
    """[CLS] a [SEP] (b [SEP]) and the segment ids."""
    row = [tokenizer.cls_id, *a, tokenizer.sep_id]
    segment = [0] * len(row)
    if b is not None:
        row += [*b, tokenizer.sep_id]
        segment += [1] * (len(b) + 1)
    return row, segment


# --- fine-tuning tasks


def sentence_classification(task: str = "topic", num_examples: int = 1000, seed: int = 0,
                            max_length: int = 32, tokenizer: WordPiece | None = None) -> Dataset:
    """One sentence -> a class.
    task="topic": which of the five topics the sentence comes from;
    task="grammar": is the sentence acceptable? Half the agreement sentences get the wrong
    verb number ("the dog that chases the cats run"), so the label needs the distant subject."""
    check_count("num_examples", num_examples)
    if task not in ("topic", "grammar"):
        raise ValueError(f"task must be 'topic' or 'grammar', got {task!r}")
    tokenizer = tokenizer or corpus_tokenizer()
    world = World(random.Random(seed))
    texts, labels = [], []
    for i in range(num_examples):
        if task == "topic":
            label = i % len(TOPICS)
            texts.append(world.rng.choice(world.document(TOPICS[label]).sentences).text)
        else:
            sentence, _ = world.agreement(world.rng.choice(list(AGREEMENT_TOPICS)))
            label = i % 2  # 1 = acceptable
            words = list(sentence.words)
            if not label:
                words[-2] = OTHER_VERB_FORM[words[-2]]  # the main verb, just before "."
            texts.append(" ".join(words))
        labels.append(label)
    names = TOPICS if task == "topic" else ("unacceptable", "acceptable")
    encodings = [tokenizer.encode(t, max_length) for t in texts]
    tensors = padded_rows([e.ids for e in encodings], [e.token_type_ids for e in encodings],
                            tokenizer, max_length)
    tensors["labels"] = torch.tensor(labels, dtype=torch.long)
    examples = [{"text": t, "label": names[y]} for t, y in zip(texts, labels)]
    return Dataset(tensors, examples, tokenizer, tuple(names))


OTHER_VERB_FORM = {form: other for verbs in [*INTRANSITIVE.values(), TRANSITIVE]
                   for pair in verbs for form, other in (pair, pair[::-1])}
PAIR_LABELS = ("entailment", "contradiction", "neutral")


def pair_classification(num_examples: int = 1000, seed: int = 0, max_length: int = 64,
                        tokenizer: WordPiece | None = None,
                        hypothesis_only: bool = False) -> Dataset:
    """Does sentence B follow from A? A states one fact about each of two entities of a
    document ("the fox lives in the forest . the owl lives in the cave ."); B restates one
    in other words (entailment), gives it another value (contradiction, often the other
    entity's value, so the model must bind values to entities) or states an unrelated
    fact (neutral). Labels cycle through the three classes. Every hypothesis, whatever
    its label, uses a later ("again") wording, so the wording alone tells no label.
    hypothesis_only=True encodes the same examples as `[CLS] B [SEP]`, the premise left
    out: the baseline that shows what B alone tells. Examples hold the premise, the
    hypothesis, the label and `borrowed`: whether a contradiction takes the other
    entity's value (False for the other labels)."""
    check_count("num_examples", num_examples)
    tokenizer = tokenizer or corpus_tokenizer()
    world = World(random.Random(seed))
    rng = world.rng
    premises, hypotheses, labels, borrowed = [], [], [], []
    for i in range(num_examples):
        doc = world.document(TOPICS[rng.randrange(len(TOPICS))])
        second = doc.facts[-2:]  # the distractor entity's two facts
        target_second = rng.choice(second)
        relation = target_second.relation
        main = next(f for f in doc.facts if f.relation == relation and f not in second)
        pair = [main, target_second]
        rng.shuffle(pair)
        target = rng.choice(pair)
        other = pair[1] if target is pair[0] else pair[0]
        label = i % 3
        takes_other = False
        if label == 0:
            hypothesis = world.state(doc.topic, target, again=True)
        elif label == 1:
            takes_other = other.value != target.value and rng.random() < 0.5
            wrong = other.value if takes_other else \
                world.value(doc.topic, relation, exclude=target.value)
            hypothesis = world.state(doc.topic, Fact(target.entity, relation, wrong),
                                     again=True)
        else:
            unrelated = rng.choice([r for r in RELATIONS[doc.topic] if r != relation])
            fact = Fact(target.entity, unrelated, world.value(doc.topic, unrelated))
            hypothesis = world.state(doc.topic, fact, again=True)
        premises.append(" ".join(world.state(doc.topic, f).text for f in pair))
        hypotheses.append(hypothesis.text)
        labels.append(label)
        borrowed.append(takes_other)
    encodings = [tokenizer.encode(b, max_length) if hypothesis_only
                 else tokenizer.encode_pair(a, b, max_length)
                 for a, b in zip(premises, hypotheses)]
    tensors = padded_rows([e.ids for e in encodings], [e.token_type_ids for e in encodings],
                            tokenizer, max_length)
    tensors["labels"] = torch.tensor(labels, dtype=torch.long)
    examples = [{"premise": a, "hypothesis": b, "label": PAIR_LABELS[y], "borrowed": o}
                for a, b, y, o in zip(premises, hypotheses, labels, borrowed)]
    return Dataset(tensors, examples, tokenizer, PAIR_LABELS)


def multiple_choice(num_examples: int = 1000, seed: int = 0, max_length: int = 32,
                    num_choices: int = 4, tokenizer: WordPiece | None = None) -> Dataset:
    """SWAG-style multiple choice: which of `num_choices` endings fits the context? The
    context states one fact about each of two entities of a document ("the fox lives in
    the forest . the owl lives in the cave ."); the right ending restates one of them in
    other words; the wrong endings say the same thing about the same entity with another
    value of the right kind, one of them (when it differs) the other entity's value, so
    every ending looks plausible and only binding values to entities tells them apart.

    input_ids, token_type_ids, attention_mask: (N, num_choices, max_length), each row
    `[CLS] context [SEP] ending [SEP]`; labels (N,): the right ending's index (uniform
    over the positions). Examples hold the context, the endings and the label."""
    check_count("num_examples", num_examples)
    if num_choices < 2:
        raise ValueError(f"num_choices must be at least 2, got {num_choices}")
    tokenizer = tokenizer or corpus_tokenizer()
    world = World(random.Random(seed))
    rng = world.rng
    ids, segments, labels, examples = [], [], [], []
    for _ in range(num_examples):
        doc = world.document(TOPICS[rng.randrange(len(TOPICS))])
        second = rng.choice(doc.facts[-2:])  # a fact of the distractor entity
        main = next(f for f in doc.facts if f.relation == second.relation
                    and f not in doc.facts[-2:])
        pair = [main, second]
        rng.shuffle(pair)
        target = rng.choice(pair)
        other = pair[1] if target is pair[0] else pair[0]
        wrong = [other.value] if other.value != target.value else []
        for _ in range(100):  # draw distinct wrong values of the right kind
            if len(wrong) == num_choices - 1:
                break
            value = world.value(doc.topic, target.relation, exclude=target.value)
            if value not in wrong:
                wrong.append(value)
        else:
            raise ValueError(f"relation {target.relation!r} has too few values for "
                             f"{num_choices} choices")
        label = rng.randrange(num_choices)
        endings = [world.state(doc.topic, Fact(target.entity, target.relation, v),
                               again=True).text for v in wrong]
        endings.insert(label, world.state(doc.topic, target, again=True).text)
        context = " ".join(world.state(doc.topic, f).text for f in pair)
        encodings = [tokenizer.encode_pair(context, e, max_length) for e in endings]
        ids.extend(e.ids for e in encodings)
        segments.extend(e.token_type_ids for e in encodings)
        labels.append(label)
        examples.append({"context": context, "endings": endings, "label": label})
    tensors = padded_rows(ids, segments, tokenizer, max_length)  # (N*C, T) each
    tensors = {k: v.view(num_examples, num_choices, -1) for k, v in tensors.items()}
    tensors["labels"] = torch.tensor(labels, dtype=torch.long)
    return Dataset(tensors, examples, tokenizer, tuple(str(c) for c in range(num_choices)))


def qa_dataset(num_examples: int = 1000, seed: int = 0, max_length: int = 128,
               tokenizer: WordPiece | None = None) -> Dataset:
    """Span QA, as SQuAD: [CLS] question [SEP] document [SEP], the answer a span of the
    document. Questions ask about either entity of the document, so the other entity's
    value of the same relation is a distractor (each example's "distractor": that value, or
    None where the document gives the other entity no value of it). start_positions and
    end_positions are the answer's first and last token indices in input_ids (inclusive)."""
    check_count("num_examples", num_examples)
    tokenizer = tokenizer or corpus_tokenizer()
    world = World(random.Random(seed))
    rng = world.rng
    ids, segments, starts, ends, examples = [], [], [], [], []
    for _ in range(num_examples):
        doc = world.document(TOPICS[rng.randrange(len(TOPICS))])
        fact = rng.choice(doc.facts)
        question = RELATIONS[doc.topic][fact.relation][3].format(e=fact.entity.text)
        row = [tokenizer.cls_id, *_ids(tokenizer, question), tokenizer.sep_id]
        answer = None
        for sentence in doc.sentences:
            words_ids, word_starts = _word_ids(tokenizer, sentence.words)
            if len(row) + len(words_ids) + 1 > max_length:
                break
            if answer is None and sentence.kind == "fact" and sentence.fact == fact:
                first = len(row) + word_starts[sentence.value_start]
                last_word = sentence.value_start + len(fact.value.words)
                last = len(row) + (word_starts[last_word] if last_word < len(word_starts)
                                   else len(words_ids)) - 1
                answer = (first, last)
            row += words_ids
        if answer is None:
            raise ValueError(f"max_length={max_length} is too short to hold the answer's sentence")
        segments.append([0] * (row.index(tokenizer.sep_id) + 1)
                        + [1] * (len(row) - row.index(tokenizer.sep_id)))
        row.append(tokenizer.sep_id)
        ids.append(row)
        starts.append(answer[0])
        ends.append(answer[1])
        others = [f.value.text for f in doc.facts
                  if f.relation == fact.relation and f.entity != fact.entity]
        context = tokenizer.decode(row[len(_ids(tokenizer, question)) + 2:])
        examples.append({"question": question, "context": context, "answer": fact.value.text,
                         "relation": fact.relation,
                         "distractor": others[0] if others else None})
    tensors = padded_rows(ids, segments, tokenizer, max_length)
    tensors["start_positions"] = torch.tensor(starts, dtype=torch.long)
    tensors["end_positions"] = torch.tensor(ends, dtype=torch.long)
    return Dataset(tensors, examples, tokenizer)


def tagging_dataset(num_examples: int = 1000, seed: int = 0, max_length: int = 32,
                    tokenizer: WordPiece | None = None, split_words: float = 0.0) -> Dataset:
    """Entity tags per word, BIO scheme (TAGS): PERSON names span two words, some cities two,
    and some surnames are also city names ("anna paris" vs "in paris"), so a word's tag
    depends on its neighbours. The tag sits on a word's first token; others get -100.
    split_words: the chance that a person's surname becomes a compound of two surnames
    ("moss" -> "mossberg"), one word that the vocabulary lacks, encoded as its two known
    pieces ("moss", "berg"), as WordPiece splits a rare word; the sentences stay those of
    split_words=0 (the compounds are drawn from a separate generator)."""
    check_count("num_examples", num_examples)
    if not 0.0 <= split_words <= 1.0:
        raise ValueError(f"split_words must be a probability, got {split_words!r}")
    tokenizer = tokenizer or corpus_tokenizer()
    world = World(random.Random(seed))
    splitter = random.Random(f"split words {seed}")  # never touches the sentences' draws
    tag_id = {tag: i for i, tag in enumerate(TAGS)}
    ids, labels, examples = [], [], []
    for i in range(num_examples):
        sentence = world.rng.choice(world.document(TOPICS[i % len(TOPICS)]).sentences)
        words, word_ids, word_starts = list(sentence.words), [], []
        for k, (word, tag) in enumerate(zip(sentence.words, sentence.tags)):
            word_starts.append(len(word_ids))
            pieces = [word]
            if (split_words and tag == "I-PERSON" and word in SURNAMES
                    and splitter.random() < split_words):
                pieces = [word, splitter.choice([s for s in SURNAMES if s != word])]
                words[k] = "".join(pieces)
            for piece in pieces:
                word_ids += _ids(tokenizer, piece)
        row_labels = [IGNORE_INDEX] * len(word_ids)
        for start, tag in zip(word_starts, sentence.tags):
            row_labels[start] = tag_id[tag]
        ids.append([tokenizer.cls_id, *word_ids[:max_length - 2], tokenizer.sep_id])
        labels.append([IGNORE_INDEX, *row_labels[:max_length - 2], IGNORE_INDEX])
        examples.append({"text": " ".join(words) if split_words else sentence.text,
                         "tags": list(sentence.tags)})
    tensors = padded_rows(ids, [[0] * len(r) for r in ids], tokenizer, max_length)
    tensors["labels"] = _pad(labels, IGNORE_INDEX, max_length)
    return Dataset(tensors, examples, tokenizer, TAGS)


EVIDENCE_POSITIONS = ("beginning", "middle", "end")


def long_documents(num_examples: int = 300, seed: int = 0, min_tokens: int = 300,
                   max_tokens: int = 600, positions: Sequence[str] = EVIDENCE_POSITIONS,
                   tokenizer: WordPiece | None = None) -> Dataset:
    """Long documents (min_tokens to max_tokens tokens) with a binary label carried by one
    evidence sentence ("the fox is happy today ." = 1, "... sad ..." = 0) placed at the
    beginning, middle or end (cycling through `positions`); every other sentence comes
    from ordinary documents, minus their own mood sentences. evidence_start is the index
    in input_ids of the evidence sentence's first token; the rows are [CLS] doc [SEP]
    and longer than a small model's max_position_embeddings: see `truncate`."""
    check_count("num_examples", num_examples)
    bad = [p for p in positions if p not in EVIDENCE_POSITIONS]
    if bad or not positions:
        raise ValueError(f"positions must be a non-empty subset of {EVIDENCE_POSITIONS}, got {positions!r}")
    if not isinstance(min_tokens, int) or min_tokens < 20 or max_tokens - min_tokens < 20:
        raise ValueError(
            f"need min_tokens >= 20 and max_tokens >= min_tokens + 20 (sentences are added "
            f"whole), got min_tokens={min_tokens!r}, max_tokens={max_tokens!r}")
    tokenizer = tokenizer or corpus_tokenizer()
    world = World(random.Random(seed))
    rng = world.rng
    ids, labels, evidence_starts, examples = [], [], [], []
    for i in range(num_examples):
        position = positions[i % len(positions)]
        label = int(rng.random() < 0.5)
        evidence = world.mood(world.entity(rng.choice(["animals", "people"])), bool(label))
        evidence_ids = _ids(tokenizer, evidence.text)
        length = rng.randint(min_tokens, max_tokens)
        fillers: list[list[int]] = []
        total = len(evidence_ids)
        while total < length:
            added = False
            for sentence in world.document().sentences:
                sentence_ids = _ids(tokenizer, sentence.text)
                if sentence.kind == "mood" or total + len(sentence_ids) > max_tokens:
                    continue
                fillers.append(sentence_ids)
                total += len(sentence_ids)
                added = True
                if total >= length:
                    break
            if not added and total >= min_tokens:
                break  # no sentence of a whole document fits the room left: stop short
        if position == "beginning":
            at = 0
        elif position == "end":
            at = len(fillers)
        else:  # the sentence boundary nearest the middle token
            running = [sum(map(len, fillers[:k])) for k in range(len(fillers) + 1)]
            at = min(range(len(running)), key=lambda k: abs(running[k] - total / 2))
        evidence_starts.append(1 + sum(map(len, fillers[:at])))  # 1 for [CLS]
        row = _flat(fillers[:at]) + evidence_ids + _flat(fillers[at:])
        ids.append([tokenizer.cls_id, *row, tokenizer.sep_id])
        labels.append(label)
        examples.append({"text": tokenizer.decode(row), "evidence": evidence.text,
                         "position": position, "num_tokens": len(row), "label": label})
    tensors = padded_rows(ids, [[0] * len(r) for r in ids], tokenizer)
    tensors["labels"] = torch.tensor(labels, dtype=torch.long)
    tensors["evidence_start"] = torch.tensor(evidence_starts, dtype=torch.long)
    return Dataset(tensors, examples, tokenizer, ("negative", "positive"))


TRUNCATIONS = ("head", "tail", "head_tail")


def truncate(dataset: Dataset, max_length: int, keep: str = "head") -> Dataset:
    """Fit single-segment rows ([CLS] text [SEP]) into max_length tokens, keeping the text's
    head, its tail, or its first quarter plus last three quarters ("head_tail", the best
    mix in Sun et al. 2019, How to Fine-Tune BERT for Text Classification). An
    evidence_start tensor is moved to the evidence's new place, -1 where it was cut."""
    if keep not in TRUNCATIONS:
        raise ValueError(f"keep must be one of {TRUNCATIONS}, got {keep!r}")
    if not isinstance(max_length, int) or max_length < 3:
        raise ValueError(f"max_length must be an integer of at least 3, got {max_length!r}")
    tokenizer = dataset.tokenizer
    room = max_length - 2
    ids, evidence = [], []
    for r, length in enumerate(dataset["attention_mask"].sum(dim=1).tolist()):
        positions = list(range(1, length - 1))  # the text, between [CLS] and [SEP]
        if len(positions) > room:
            head = {"head": room, "tail": 0, "head_tail": room // 4}[keep]
            positions = positions[:head] + positions[len(positions) - (room - head):]
        row = dataset["input_ids"][r, positions].tolist()
        ids.append([tokenizer.cls_id, *row, tokenizer.sep_id])
        if "evidence_start" in dataset.tensors:
            old = int(dataset["evidence_start"][r])
            evidence.append(positions.index(old) + 1 if old in positions else -1)
    tensors = {**dataset.tensors,
               **padded_rows(ids, [[0] * len(r) for r in ids], tokenizer, max_length)}
    if evidence:
        tensors["evidence_start"] = torch.tensor(evidence, dtype=torch.long)
    return Dataset(tensors, dataset.examples, tokenizer, dataset.label_names)
