"""Cross-attention against a word alignment: the token-level alignment of a hand-made pair,
and the scores of attention that follows it, ignores it, or spreads evenly."""

import pytest
import torch

from minibert.measure.alignment import alignment_scores, token_alignment

# source: [CLS] the red ca ##t [PAD]: words 0, 1, 2 (cat in two pieces)
SOURCE_WORDS = [None, 0, 1, 2, 2, None]
SOURCE_MASK = torch.tensor([[1, 1, 1, 1, 1, 0]])
# the rows predict: le (word 0), cha ##t (word 1), rouge (word 2), EOS
ROW_WORDS = [0, 1, 1, 2, None]
PAIRS = [(0, 0), (2, 1), (1, 2)]  # the -> le, cat -> chat, red -> rouge


def test_each_piece_of_a_target_word_aligns_with_every_piece_of_its_source_word():
    expected = torch.tensor([
        [0, 1, 0, 0, 0, 0],  # le <- the
        [0, 0, 0, 1, 1, 0],  # cha <- ca ##t
        [0, 0, 0, 1, 1, 0],  # ##t <- ca ##t
        [0, 0, 1, 0, 0, 0],  # rouge <- red
        [0, 0, 0, 0, 0, 0],  # EOS: no word
    ], dtype=torch.bool)
    assert torch.equal(token_alignment(ROW_WORDS, SOURCE_WORDS, PAIRS), expected)
    no_word_as_minus_one = [-1 if word is None else word for word in SOURCE_WORDS]
    assert torch.equal(token_alignment(ROW_WORDS, no_word_as_minus_one, PAIRS), expected)


def scores_of(weights: torch.Tensor):
    alignment = token_alignment(ROW_WORDS, SOURCE_WORDS, PAIRS)[None]  # (1, T, S)
    return alignment_scores([weights], alignment, SOURCE_MASK)


def test_attention_on_the_aligned_words_scores_one_and_elsewhere_zero():
    alignment = token_alignment(ROW_WORDS, SOURCE_WORDS, PAIRS).float()
    alignment[-1, 0] = 1.0  # EOS's row reads [CLS]; it is not scored
    following = alignment / alignment.sum(-1, keepdim=True)  # (T, S)
    elsewhere = torch.zeros(5, 6)
    elsewhere[:, 0] = 1.0  # everyone reads [CLS]
    weights = torch.stack([following, elsewhere])[None]  # (1, nh=2, T, S)
    scores = scores_of(weights)
    torch.testing.assert_close(scores.mass, torch.tensor([[1.0, 0.0]]))
    torch.testing.assert_close(scores.argmax_accuracy, torch.tensor([[1.0, 0.0]]))


def test_uniform_attention_scores_the_uniform_mass():
    uniform = SOURCE_MASK[:, None, None, :].float().expand(1, 1, 5, 6) / 5  # (1, 1, T, S)
    scores = scores_of(uniform)
    # the scored rows have 1, 2, 2 and 1 aligned tokens out of 5 real ones
    assert scores.uniform_mass == pytest.approx((1 + 2 + 2 + 1) / 4 / 5)
    torch.testing.assert_close(scores.mass, torch.tensor([[scores.uniform_mass]]))


def test_bad_alignments_are_refused():
    alignment = token_alignment(ROW_WORDS, SOURCE_WORDS, PAIRS)[None]
    weights = torch.full((1, 1, 5, 6), 1 / 6)
    with pytest.raises(ValueError, match="shape"):
        alignment_scores([weights], alignment[:, :4], SOURCE_MASK)
    padded = alignment.clone()
    padded[0, 0, 5] = True
    with pytest.raises(ValueError, match="padded source position"):
        alignment_scores([weights], padded, SOURCE_MASK)
    with pytest.raises(ValueError, match="no row"):
        alignment_scores([weights], torch.zeros_like(alignment), SOURCE_MASK)
