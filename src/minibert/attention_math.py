"""The arithmetic of one attention layer, checked without any training: how the dot
product q·k grows with the head width d_k, how a softmax saturates and its gradient
vanishes when its inputs grow, and multi-head attention written as a loop over heads.

Shapes: B = batch, T = sequence length, H = hidden size, nh = heads, hs = head size.
"""

from __future__ import annotations

import math

import torch

from .model import BertSelfAttention


def dot_product_variance(d_k: int, num_pairs: int = 20_000,
                         generator: torch.Generator | None = None) -> float:
    """Sample variance of q·k for independent q, k with unit-variance normal components.
    Theory (Vaswani et al., footnote 4): exactly d_k. Drawn 1,000 pairs at a time, so a
    wide d_k needs little memory."""
    products = []
    for start in range(0, num_pairs, 1000):
        rows = min(1000, num_pairs - start)
        q = torch.randn(rows, d_k, generator=generator)
        k = torch.randn(rows, d_k, generator=generator)
        products.append((q * k).sum(dim=1))  # (rows,)
    return float(torch.cat(products).double().var())


def softmax_jacobian(scores: torch.Tensor) -> torch.Tensor:
    """d softmax(s) / d s for each row of scores (..., T): diag(p) - p p^T, shape (..., T, T)."""
    p = scores.softmax(dim=-1)
    return torch.diag_embed(p) - p[..., :, None] * p[..., None, :]


def softmax_saturation(d_k: int, num_keys: int = 32, num_queries: int = 500,
                       scaled: bool = True, generator: torch.Generator | None = None
                       ) -> dict[str, float]:
    """Attention of random queries over random keys (unit-variance components), scores
    q·k, divided by sqrt(d_k) if `scaled`. Returns the mean largest weight of a row
    ("max_prob": 1/num_keys is uniform, 1 is one-hot) and the mean Frobenius norm of the
    row's softmax Jacobian ("gradient_norm": how much the weights move per unit of score)."""
    q = torch.randn(num_queries, 1, d_k, generator=generator)  # (N, 1, d_k)
    k = torch.randn(num_queries, num_keys, d_k, generator=generator)  # (N, T, d_k)
    scores = (q * k).sum(dim=-1)  # (N, T)
    if scaled:
        scores = scores / math.sqrt(d_k)
    weights = scores.softmax(dim=-1)
    jacobian_norm = softmax_jacobian(scores).flatten(-2).norm(dim=-1)  # (N,)
    return {"max_prob": float(weights.max(dim=-1).values.mean()),
            "gradient_norm": float(jacobian_norm.mean()),
            "score_std": float(scores.std())}


def attention_head_by_head(layer: BertSelfAttention, x: torch.Tensor,
                           additive_mask: torch.Tensor | None = None) -> torch.Tensor:
    """What `layer` computes, written the slow way: for each head its own small W_Q, W_K,
    W_V (a block of rows of the layer's matrices), its own attention, and the heads' outputs
    concatenated. x (B, T, H) -> (B, T, H). Only for separate Q/K/V projections."""
    if layer.sharing != "none":
        raise ValueError("attention_head_by_head needs separate Q, K and V projections")
    def project(linear: torch.nn.Linear, rows: slice) -> torch.Tensor:
        """x through one head's block of rows of a projection: (B, T, H) -> (B, T, hs)."""
        return x @ linear.weight[rows].T + linear.bias[rows]

    outputs = []
    for head in range(layer.num_heads):
        rows = slice(head * layer.head_size, (head + 1) * layer.head_size)
        q, k, v = (project(linear, rows) for linear in (layer.query, layer.key, layer.value))
        scores = (q @ k.transpose(-2, -1)) * layer.scale  # (B, T, T)
        if additive_mask is not None:
            scores = scores + additive_mask[:, 0]  # the mask is shared by the heads
        outputs.append(scores.softmax(dim=-1) @ v)  # (B, T, hs)
    return torch.cat(outputs, dim=-1)  # (B, T, H)
