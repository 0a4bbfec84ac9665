"""The template sentence pairs of chapter 41."""

import pytest

from minibert.text import similarity_pairs


def test_a_draw_has_the_kinds_asked_for_and_no_repeated_sentence():
    pairs = similarity_pairs.similarity_pairs(num_paraphrases=30, num_same_words=5, seed=1)
    kinds = [pair.kind for pair in pairs]
    assert kinds.count("paraphrase") == 30
    assert kinds.count("word order") == kinds.count("negation") == 5
    firsts = [pair.first for pair in pairs]
    assert len(set(firsts)) == len(firsts)
    templates = {pair.template for pair in pairs if pair.kind == "paraphrase"}
    assert templates == set(range(len(similarity_pairs.PARAPHRASES)))


def test_same_words_pairs_share_their_words():
    for pair in similarity_pairs.similarity_pairs(num_same_words=5, seed=2):
        if pair.kind == "word order":
            def words(text):
                return sorted(text.lower().rstrip(".").split())
            assert words(pair.first) == words(pair.second)
            assert pair.first != pair.second
        elif pair.kind == "negation":
            assert pair.second.replace(" not", "") == pair.first


def test_draws_differ_by_seed_and_repeat_with_it():
    assert similarity_pairs.similarity_pairs(seed=0) == similarity_pairs.similarity_pairs(seed=0)
    assert similarity_pairs.similarity_pairs(seed=0) != similarity_pairs.similarity_pairs(seed=1)


@pytest.mark.parametrize("settings, message", [
    ({"num_paraphrases": 0}, "num_paraphrases"),
    ({"num_same_words": -1}, "num_same_words"),
    ({"num_same_words": 500}, "too many pairs"),
])
def test_bad_counts_are_refused_by_name(settings, message):
    with pytest.raises(ValueError, match=message):
        similarity_pairs.similarity_pairs(**settings)
