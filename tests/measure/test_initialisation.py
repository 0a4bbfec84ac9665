"""The initialisation spread: the truncated normal's formula, and the check it backs."""

import pytest
import torch

import minibert
from minibert.measure import initialisation


def test_truncated_std_matches_a_large_truncated_draw():
    draw = torch.nn.init.trunc_normal_(torch.empty(1_000_000), std=1.0, a=-2.0, b=2.0,
                                       generator=torch.Generator().manual_seed(0))
    assert initialisation.truncated_normal_std(1.0) == pytest.approx(draw.std().item(),
                                                                     rel=3e-3)


def test_a_wide_cut_is_the_plain_normal():
    assert initialisation.truncated_normal_std(0.02, cut=8.0) == pytest.approx(0.02, rel=1e-6)


def test_a_fresh_bert_passes_and_an_untruncated_draw_fails():
    config = minibert.preset("tiny", vocab_size=120, max_position_embeddings=32)
    torch.manual_seed(0)
    weights = initialisation.matrix_entries(minibert.BertForPreTraining(config))
    fresh = initialisation.weight_spread(weights, config.initializer_range)
    assert fresh.inside_bound and fresh.std_within(0.02)
    uncut = initialisation.weight_spread(torch.randn(weights.numel()) * 0.02, 0.02)
    assert not uncut.inside_bound and not uncut.std_within(0.02)


@pytest.mark.parametrize("sigma, cut", [(0.0, 2.0), (0.02, -1.0)])
def test_bad_parameters_are_refused(sigma, cut):
    with pytest.raises(ValueError, match="sigma"):
        initialisation.truncated_normal_std(sigma, cut)


def test_one_weight_is_refused():
    with pytest.raises(ValueError, match="two weights"):
        initialisation.weight_spread(torch.ones(1), 0.02)
