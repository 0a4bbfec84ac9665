"""Attention arithmetic: the variance law, the softmax Jacobian, heads as a loop."""

import math

import pytest
import torch

import minibert
from conftest import padded_batch
from minibert import attention_math
from minibert.model import BertSelfAttention


def test_dot_product_variance_is_d_k():
    g = torch.Generator().manual_seed(0)
    for d_k in (4, 64):
        assert attention_math.dot_product_variance(d_k, generator=g) == pytest.approx(d_k, rel=0.05)


def test_softmax_jacobian_matches_autograd():
    scores = torch.randn(5, dtype=torch.float64)
    expected = torch.autograd.functional.jacobian(lambda s: s.softmax(-1), scores)
    torch.testing.assert_close(attention_math.softmax_jacobian(scores), expected)


def test_scaling_keeps_the_softmax_alive_and_no_scaling_saturates_it():
    g = torch.Generator().manual_seed(0)
    unscaled = [attention_math.softmax_saturation(d, scaled=False, generator=g) for d in (4, 256)]
    scaled = [attention_math.softmax_saturation(d, scaled=True, generator=g) for d in (4, 256)]
    assert unscaled[1]["max_prob"] > 0.8 > unscaled[0]["max_prob"]
    assert unscaled[1]["gradient_norm"] < unscaled[0]["gradient_norm"] / 2
    assert scaled[1]["max_prob"] == pytest.approx(scaled[0]["max_prob"], rel=0.2)
    assert scaled[1]["score_std"] == pytest.approx(1.0, rel=0.1)
    assert unscaled[1]["score_std"] == pytest.approx(math.sqrt(256), rel=0.1)


def test_head_by_head_loop_equals_the_layer(tiny_config):
    config = tiny_config.replace(num_attention_heads=4, attention_probs_dropout_prob=0.0)
    layer = BertSelfAttention(config).eval()
    model = minibert.BertModel(config).eval()
    batch = padded_batch(config)
    mask = model.additive_mask(batch["attention_mask"], batch["input_ids"].shape[1],
                               torch.float32, torch.device("cpu"))
    x = torch.randn(*batch["input_ids"].shape, config.hidden_size)
    with torch.no_grad():
        fast, _ = layer(x, mask, need_weights=False)
        looped = attention_math.attention_head_by_head(layer, x, mask)
    torch.testing.assert_close(looped, fast, atol=1e-6, rtol=1e-5)


def test_head_by_head_refuses_shared_projections(tiny_config):
    layer = BertSelfAttention(tiny_config.replace(qkv_sharing="kv"))
    with pytest.raises(ValueError, match="separate"):
        attention_math.attention_head_by_head(layer, torch.zeros(1, 3, tiny_config.hidden_size))
