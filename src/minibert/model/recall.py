"""Associative recall, the models: two one-block readers of the same width and parameter
count (minibert.text.recall holds the task). One mixes its positions with self-attention
(weights computed from the input), the other with a fixed matrix learned over positions,
as MLP-Mixer does (weights that ignore the input). Shapes: B = batch, T = positions,
d = width, V = number of values.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch import nn

from .config import BertConfig
from .layers import BertSelfAttention

MIXINGS = ("attention", "dense")


class RecallShape(Protocol):
    """What a reader needs to know of its task (a minibert.text.recall task): its sizes."""

    num_keys: int
    num_value_ids: int  # the values and the query marker(s)
    seq_len: int  # the pairs, then the query
    num_answers: int


class DenseTokenMixing(nn.Module):
    """A fully connected layer across positions: out = W (x W_v) W_o, with one learned
    (T, T) matrix W shared by every input. Position t's output is a fixed blend of all
    positions, whatever they hold."""

    def __init__(self, seq_len: int, width: int):
        super().__init__()
        self.value = nn.Linear(width, width)
        self.mixing = nn.Parameter(torch.randn(seq_len, seq_len) / seq_len**0.5)  # (T, T)
        self.output = nn.Linear(width, width)

    def mixing_matrix(self, x: torch.Tensor) -> torch.Tensor:
        """The (B, T, T) weights that blend the positions: the same matrix for every input
        (a copy, so it does not change when training goes on)."""
        return self.mixing.detach().expand(x.shape[0], -1, -1).clone()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.mixing @ self.value(x))  # (T, T) @ (B, T, d) -> (B, T, d)


class AttentionMixing(nn.Module):
    """minibert's multi-head self-attention (no mask, no positions), then an output projection."""

    def __init__(self, width: int, num_heads: int):
        super().__init__()
        config = BertConfig(vocab_size=1, hidden_size=width, num_attention_heads=num_heads,
                            intermediate_size=width, attention_probs_dropout_prob=0.0)
        self.attention = BertSelfAttention(config)
        self.output = nn.Linear(width, width)

    def mixing_matrix(self, x: torch.Tensor) -> torch.Tensor:
        """The (B, T, T) attention weights, averaged over heads: they depend on x."""
        return self.attention(x, None, need_weights=True)[1].mean(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.attention(x, None, need_weights=False)[0])  # (B, T, d)


class RecallModel(nn.Module):
    """Embed each (key, value) pair, one pre-LN block (token mixing, then a feed-forward
    block, each with a residual), and read the answer at the query position.
    mixing="attention" or "dense"; no position embeddings (the table's order is random)."""

    def __init__(self, task: RecallShape, mixing: str, width: int = 64, num_heads: int = 1,
                 mlp_width: int = 256):
        super().__init__()
        if mixing not in MIXINGS:
            raise ValueError(f"mixing must be one of {MIXINGS}, got {mixing!r}")
        self.task, self.mixing_kind = task, mixing
        self.key_embeddings = nn.Embedding(task.num_keys, width)
        self.value_embeddings = nn.Embedding(task.num_value_ids, width)  # + the query marker
        self.mix_norm = nn.LayerNorm(width)
        self.mixing = (AttentionMixing(width, num_heads) if mixing == "attention"
                       else DenseTokenMixing(task.seq_len, width))
        self.mlp_norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, mlp_width), nn.GELU(),
                                 nn.Linear(mlp_width, width))
        self.out_norm = nn.LayerNorm(width)
        self.readout = nn.Linear(width, task.num_answers)

    def embed(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """One vector per pair: key embedding + value embedding. (B, T, d)"""
        return self.key_embeddings(keys) + self.value_embeddings(values)

    def forward(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Value logits at the query position. (B, V)"""
        x = self.embed(keys, values)
        x = x + self.mixing(self.mix_norm(x))
        x = x + self.mlp(self.mlp_norm(x))
        return self.readout(self.out_norm(x[:, -1]))

    def mixing_matrix(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """How the block blends positions for this input. (B, T, T)"""
        return self.mixing.mixing_matrix(self.mix_norm(self.embed(keys, values)))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_pair(task: RecallShape, width: int = 64, num_heads: int = 1, mlp_width: int = 256
               ) -> tuple[RecallModel, RecallModel]:
    """An attention model and a dense-mixing model of the same width. The dense model's
    feed-forward block is widened by as many units as make up for the parameters its
    mixing layer lacks (attention's W_Q and W_K), so both have about as many parameters."""
    attention = RecallModel(task, "attention", width, num_heads, mlp_width)
    dense = RecallModel(task, "dense", width, num_heads, mlp_width)
    missing = attention.num_parameters() - dense.num_parameters()
    extra_units = max(0, round(missing / (2 * width + 1)))  # each unit: d in, d out, 1 bias
    dense = RecallModel(task, "dense", width, num_heads, mlp_width + extra_units)
    return attention, dense
