"""Scores of chapter 41's sentence-pair test, on hand-made cosines."""

import numpy as np

from minibert.measure import sentence_similarity
from minibert.text.similarity_pairs import SentencePair


def test_auc_counts_pairs_ranked_the_right_way_and_ties_as_half():
    assert sentence_similarity.auc(np.array([0.9, 0.8]), np.array([0.1, 0.2])) == 1.0
    assert sentence_similarity.auc(np.array([0.1]), np.array([0.9])) == 0.0
    assert sentence_similarity.auc(np.array([0.5]), np.array([0.5])) == 0.5


def test_unrelated_means_paraphrases_of_other_templates():
    pairs = [SentencePair("a", "b", "paraphrase", 0), SentencePair("c", "d", "paraphrase", 0),
             SentencePair("e", "f", "paraphrase", 1), SentencePair("g", "h", "negation", 0)]
    mask = sentence_similarity.unrelated_mask(pairs)
    assert mask.tolist() == [[False, False, True, False], [False, False, True, False],
                             [True, True, False, False], [False, False, False, False]]


def test_pair_scores_on_a_pooling_that_separates_perfectly():
    pairs = [SentencePair(str(i), str(i), "paraphrase", i) for i in range(4)]
    pairs.append(SentencePair("x", "y", "negation", 0))
    cosines = np.full((5, 5), 0.0)
    cosines[[0, 1, 2], [1, 2, 3]] = 0.2  # some spread among unrelated pairs
    np.fill_diagonal(cosines, [0.9, 0.8, 0.95, 0.85, 0.3])
    scores = sentence_similarity.pair_scores(cosines, pairs)
    assert scores["AUC vs unrelated"] == 1.0 and scores["AUC vs same words"] == 1.0
    assert scores["fooled"] == 0.0 and scores["separation"] > 3
