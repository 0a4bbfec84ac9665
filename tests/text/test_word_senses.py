"""The sense sentences of chapter 01: the word at one token position, draws that differ."""

import pytest

import minibert
from minibert.text.tokenizer import WordPiece
from minibert.text.word_senses import PER_SENSE, POSITION, SENSES, sense_sentences


def test_every_sentence_puts_its_word_at_the_same_token():
    vocab = WordPiece.from_file(minibert.minilm_directory() / "vocab.txt")
    for adjectives, _ in (lists for senses in SENSES.values() for lists in senses.values()):
        assert all(len(vocab.tokenize(a)) == 1 for a in adjectives), adjectives
    for word, _, sentence in sense_sentences(seed=0):
        assert (["[CLS]"] + vocab.tokenize(sentence))[POSITION] == word


def test_a_draw_holds_distinct_sentences_per_sense_and_draws_differ():
    drawn = sense_sentences(seed=0)
    assert len(drawn) == PER_SENSE * sum(len(senses) for senses in SENSES.values())
    assert len({sentence for *_, sentence in drawn}) == len(drawn)
    assert sense_sentences(seed=0) == drawn and sense_sentences(seed=1) != drawn


def test_too_many_sentences_per_sense_is_refused():
    with pytest.raises(ValueError, match="per_sense"):
        sense_sentences(seed=0, per_sense=7)
