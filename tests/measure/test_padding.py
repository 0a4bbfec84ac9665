"""Padding, measured: the first-layer map of a sentence with padding appended, the share of
attention on the padding, and how far the real block moved (chapter 4's explorer claims)."""

import torch

import minibert
from minibert.measure import attention


def test_share_on_padding_and_real_block_change_on_a_hand_made_map():
    weights = torch.tensor([[0.5, 0.3, 0.2, 0.0],
                            [0.1, 0.5, 0.0, 0.4]])  # (n=2, n + 2 padding)
    assert abs(attention.share_on_padding(weights) - 0.3) < 1e-6  # (0.2 + 0.4) / 2
    unpadded = torch.tensor([[0.6, 0.4], [0.2, 0.8]])
    assert abs(attention.real_block_change(weights, unpadded) - 0.3) < 1e-6


def test_masked_padding_gets_no_attention_and_unmasked_padding_does():
    minibert.set_seed(0)
    model = minibert.BertModel(minibert.preset("tiny", vocab_size=50)).eval()
    ids = torch.tensor([[5, 6, 7]])  # (1, n)
    alone = attention.padded_first_layer_attention(model, ids, 0, masked=True)
    masked = attention.padded_first_layer_attention(model, ids, 4, masked=True)
    unmasked = attention.padded_first_layer_attention(model, ids, 4, masked=False)
    assert alone.shape == (3, 3) and masked.shape == unmasked.shape == (3, 7)
    assert attention.share_on_padding(masked) == 0.0
    assert attention.real_block_change(masked, alone) < 1e-6
    assert attention.share_on_padding(unmasked) > 0.1
