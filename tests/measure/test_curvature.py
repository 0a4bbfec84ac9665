"""The bend of a map, and the inputs each part of a layer really receives (chapter 23)."""

import pytest
import torch

import minibert
from helpers import padded_batch
from minibert.measure import curvature


def tiny_model(**changes):
    torch.manual_seed(0)
    config = minibert.preset("tiny", vocab_size=50, **changes)
    return minibert.BertForPreTraining(config).eval()


def test_an_affine_map_does_not_bend_and_a_curved_one_does():
    g = torch.Generator().manual_seed(0)
    x, d = torch.randn(4, 5, 8, generator=g), torch.randn(4, 5, 8, generator=g)
    affine = torch.nn.Linear(8, 8)
    assert curvature.bend(affine, x, d) < 1e-5
    assert curvature.bend(torch.tanh, x, d) > 1e-2


def test_a_smooth_bend_grows_with_the_step_and_ignores_a_constant_factor():
    g = torch.Generator().manual_seed(1)
    x, d = torch.randn(4, 5, 8, generator=g), torch.randn(4, 5, 8, generator=g)
    small, large = (curvature.bend(torch.tanh, x, d, step) for step in (0.001, 0.01))
    assert large / small == pytest.approx(10, rel=0.05)
    assert curvature.bend(lambda v: 3 * torch.tanh(v), x, d) == pytest.approx(
        curvature.bend(torch.tanh, x, d), rel=1e-4)


def test_layer_norm_without_gamma_beta_bends_as_the_sphere():
    g = torch.Generator().manual_seed(2)
    x, d = torch.randn(4, 5, 8, generator=g) + 3, torch.randn(4, 5, 8, generator=g)
    assert curvature.bend(curvature.plain_layer_norm, x, d) == pytest.approx(
        curvature.bend(curvature.sphere, x, d), rel=1e-4)


def test_the_hooks_catch_what_each_part_really_receives():
    model = tiny_model()
    batch = padded_batch(model.config, batch=4, seq_len=9)
    caught = curvature.part_inputs(model, **batch)
    block = model.bert.encoder.layer[0]
    with torch.no_grad():  # replay the post-LN layer by hand
        embedded = model.bert.embeddings(batch["input_ids"], batch["token_type_ids"])
        mask = caught["self-attention"][1]
        context = block.attention.self(embedded, mask, False)[0]
        summed = embedded + block.attention.output.dense(context)  # residual sum
        after_attention = block.attention.output.LayerNorm(summed)
    torch.testing.assert_close(caught["self-attention"][0], embedded)
    torch.testing.assert_close(caught["LayerNorm after attention"][0], summed)
    torch.testing.assert_close(caught["feed-forward block"][0], after_attention)
    torch.testing.assert_close(caught["whole encoder"][0], embedded)


def test_part_bends_names_every_part_and_the_affine_block_is_flat():
    model = tiny_model(hidden_act="identity")
    batch = padded_batch(model.config, batch=8, seq_len=9)
    measured = curvature.part_bends(model, batch)
    assert set(measured) == set(curvature.part_functions(model))
    assert measured["feed-forward block"] < 1e-5
    assert measured["self-attention"] > 1e-4
