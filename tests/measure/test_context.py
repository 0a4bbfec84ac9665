"""Contextual vectors, measured: cosines sorted into kinds of sentence pairs on hand-made
vectors, and the context's share of the distance between two words on a tiny model."""

import numpy as np
import pytest
import torch

import minibert
from minibert.measure import attention, context

E1, E2 = torch.tensor([1.0, 0.0]), torch.tensor([0.0, 1.0])


def states(*vectors, position=1, T=3, seed=0):
    """One (B, T, 2) layer whose rows hold `vectors` at `position` and noise elsewhere."""
    h = torch.randn(len(vectors), T, 2, generator=torch.Generator().manual_seed(seed))
    h[:, position] = torch.stack(vectors)
    return h


def test_cosines_sort_pairs_into_kinds_and_ignore_length():
    words, senses = np.array(["w", "w", "w", "v"]), np.array(["a", "a", "b", "c"])
    layers = [states(E1, E1, E1, E1), states(E1, 3 * E1, E2, -E1)]
    cos = context.cosines_per_layer(layers, 1, words, senses)
    assert list(cos) == ["same word, same sense", "same word, other sense",
                         "same word, all pairs", "different words"]
    expected = {"same word, same sense": [1, 1], "same word, other sense": [1, 0],
                "same word, all pairs": [1, 1 / 3], "different words": [1, -2 / 3]}
    for kind, values in expected.items():
        np.testing.assert_allclose(cos[kind], values, atol=1e-6)
    assert set(context.cosines_per_layer(layers, 1, words)) == {
        "same word, all pairs", "different words"}  # no senses, no sense kinds


def test_templates_take_shared_template_pairs_out_of_the_sense_kinds():
    words = np.array(["w"] * 4)
    senses, templates = np.array(["a", "a", "a", "b"]), np.array(["t", "t", "u", "u"])
    layers = [states(E1, 3 * E1, E2, -E1)]
    cos = context.cosines_per_layer(layers, 1, words, senses, templates)
    assert "different words" not in cos  # a kind without a pair is left out
    np.testing.assert_allclose(cos["same word, same template"], [1], atol=1e-6)
    np.testing.assert_allclose(cos["same word, same sense"], [0], atol=1e-6)
    # (2, 3) share template u: left out, so only the two pairs at -1 remain
    np.testing.assert_allclose(cos["same word, other sense"], [-1], atol=1e-6)
    np.testing.assert_allclose(cos["same word, all pairs"], [-1 / 6], atol=1e-6)
    with pytest.raises(ValueError, match="senses"):
        context.cosines_per_layer(layers, 1, words, templates=templates)


def test_moved_share_is_zero_alone_and_grows_with_what_attention_adds(tiny_config):
    """Seeing only itself, a word's vector is the same in every sentence (share 0); with
    attention it moves, and further when the attention output weighs more in the sum."""
    torch.manual_seed(0)
    model = minibert.BertModel(tiny_config).eval()
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(5, tiny_config.vocab_size, (8, 6), generator=g)  # (B, T)
    input_ids[:, 2] = torch.tensor([10] * 4 + [11] * 4)  # two words, at token 2
    words = np.array(["ten"] * 4 + ["eleven"] * 4)
    inputs = {"input_ids": input_ids, "attention_mask": torch.ones_like(input_ids)}
    alone = {**inputs, "attention_mask": attention.self_only_mask(inputs["attention_mask"])}
    assert context.moved_share(model, alone, 2, words) == pytest.approx(0, abs=1e-6)
    moved = context.moved_share(model, inputs, 2, words)
    assert moved > 1e-6
    with torch.no_grad():
        for layer in model.encoder.layer:
            layer.attention.output.dense.weight.mul_(20)
    assert context.moved_share(model, inputs, 2, words) > 10 * moved
