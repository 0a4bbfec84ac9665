"""Measurements on attention maps: how much a token attends to itself, and the attention a
layer would compute on the same input with its Q/K/V projections removed."""

from __future__ import annotations

import torch

from .model import BertModel, BertSelfAttention


def diagonal_mass(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean attention a real token pays to itself, per head.
    weights (B, nh, T, T), attention_mask (B, T) -> (nh,)"""
    diagonal = weights.diagonal(dim1=-2, dim2=-1)  # (B, nh, T)
    real = attention_mask[:, None, :].to(diagonal.dtype)  # (B, 1, T)
    return (diagonal * real).sum(dim=(0, 2)) / real.sum()


def self_is_argmax(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Fraction of real tokens, per head, whose largest attention weight is on themselves.
    weights (B, nh, T, T), attention_mask (B, T) -> (nh,)"""
    T = weights.shape[-1]
    is_self = weights.argmax(dim=-1) == torch.arange(T, device=weights.device)  # (B, nh, T)
    real = attention_mask[:, None, :].to(weights.dtype)
    return (is_self.to(weights.dtype) * real).sum(dim=(0, 2)) / real.sum()


@torch.no_grad()
def attention_with_and_without_projections(
    model: BertModel, batch: dict[str, torch.Tensor], temperature: float = 1.0
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """For every layer: the model's own attention maps, and the maps that layer would give
    on the same input if q = k = v were the input itself (scores divided by temperature).
    Each list holds one (B, nh, T, T) tensor per layer."""
    out = model(**batch, output_attentions=True, output_hidden_states=True)
    bare_config = model.config.replace(use_qkv_projections=False)
    bare = BertSelfAttention(bare_config).to(model.device).eval()
    bare.scale /= temperature
    T = batch["input_ids"].shape[1]
    mask = model.additive_mask(batch.get("attention_mask"), T, torch.float32, model.device)
    without = [bare(h, mask, need_weights=True)[1] for h in out.hidden_states[:-1]]
    return list(out.attentions), without
