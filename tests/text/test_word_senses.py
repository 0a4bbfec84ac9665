"""The sense sentences of chapter 01: the word at one token position, draws that differ;
the corpus's ambiguous names, one template never standing for one sense."""

import pytest

import minibert
from minibert.text import language, word_senses
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


def test_every_name_use_puts_the_name_at_one_token_of_the_pair():
    tokenizer = language.corpus_tokenizer()
    for name, _, _, line, text in word_senses.name_uses():
        tokens = ["[CLS]", *tokenizer.tokenize(line), "[SEP]", *tokenizer.tokenize(text)]
        assert tokens[word_senses.NAME_POSITION] == name, tokens
        assert "[UNK]" not in tokens
        assert sum(t in word_senses.NAMES for t in tokens) == 1  # no filler is one of the names


def test_name_uses_share_templates_across_senses_and_are_fixed_by_the_seed():
    uses = word_senses.name_uses()
    templates_per_sense = {sense: {t for _, s, t, *_ in uses if s == sense}
                           for sense in word_senses.NAME_TEMPLATES}
    assert [len(t) for t in templates_per_sense.values()] == [7, 7]
    assert len(templates_per_sense["city"] & templates_per_sense["surname"]) == 4
    assert len(uses) == len(word_senses.NAMES) * 2 * 7 * 2  # every template filled twice per name
    assert len({(n, s, t) for n, s, t, *_ in uses}) == len(uses) // 2
    assert word_senses.name_uses(seed=0) == uses and word_senses.name_uses(seed=1) != uses
