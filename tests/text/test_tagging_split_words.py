"""tagging_dataset(split_words=...): compound surnames split into known pieces."""

import pytest
import torch

from minibert.measure import spans
from minibert.text import datasets, language


def test_default_is_unchanged():
    plain = datasets.tagging_dataset(200, seed=3, max_length=16)
    zero = datasets.tagging_dataset(200, seed=3, max_length=16, split_words=0.0)
    for key in ("input_ids", "attention_mask", "labels"):
        assert torch.equal(plain[key], zero[key])
    assert plain.examples == zero.examples


def test_compounds_split_into_two_known_pieces():
    plain = datasets.tagging_dataset(300, seed=1, max_length=16)
    split = datasets.tagging_dataset(300, seed=1, max_length=16, split_words=1.0)
    tokenizer = split.tokenizer
    compounds = 0
    for r, (a, b) in enumerate(zip(plain.examples, split.examples)):
        assert a["tags"] == b["tags"]  # the same sentences and tags
        words, labels = b["text"].split(), split["labels"][r].tolist()
        scored = [p for p, y in enumerate(labels) if y != spans.IGNORE_INDEX]
        assert len(scored) == len(words)  # one scored token a word: its first piece
        ids = split["input_ids"][r].tolist()
        for k, (word, tag) in enumerate(zip(words, b["tags"])):
            if tag == "I-PERSON":
                assert word not in tokenizer.vocab or word in language.SURNAMES
                if word not in language.SURNAMES:  # a compound: two pieces, the first scored
                    compounds += 1
                    first, second = tokenizer.vocab[ids[scored[k]]], tokenizer.vocab[
                        ids[scored[k] + 1]]
                    assert first + second == word and labels[scored[k] + 1] == -100
                    assert {first, second} <= set(language.SURNAMES)
    assert compounds > 20


def test_split_words_must_be_a_probability():
    with pytest.raises(ValueError):
        datasets.tagging_dataset(10, split_words=1.5)
