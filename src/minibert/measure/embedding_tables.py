"""Reading embedding tables: how much of a table is additive, where its variation lies,
and whether the ids survive the sum of word, position and segment rows (chapter 12). (The
models trained with the three tables concatenated instead of added are zoo models, with
`prepare=("concatenated_tables", ...)`: `training.preparations`.)

Tables are (rows, H) tensors; a joint table is (words, positions, segments, H).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def additive_fit(joint: torch.Tensor) -> torch.Tensor:
    """The least-squares fit of a (V, P, S, H) table by a[t] + b[p] + c[s]: its main
    effects, broadcast back to the table's shape."""
    grand = joint.mean(dim=(0, 1, 2), keepdim=True)  # (1, 1, 1, H)
    return (joint.mean(dim=(1, 2), keepdim=True) + joint.mean(dim=(0, 2), keepdim=True)
            + joint.mean(dim=(0, 1), keepdim=True) - 2 * grand)


def unexplained_share(joint: torch.Tensor) -> float:
    """The share of a (V, P, S, H) table's variance that no additive table reproduces:
    0 for a table filled by sums, near 1 for a random one."""
    centred = joint - joint.mean(dim=(0, 1, 2), keepdim=True)
    residual = joint - additive_fit(joint)
    return (residual.pow(2).sum() / centred.pow(2).sum()).item()


def principal_directions(table: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The table's centred principal directions, (H, H) as rows, largest variance first,
    and the share of the variance along each (H,): from its (H, H) covariance."""
    centred = table - table.mean(dim=0)
    variance, directions = torch.linalg.eigh(centred.T @ centred)  # ascending order
    variance, directions = variance.flip(0).clamp(min=0), directions.flip(1).T
    return directions, variance / variance.sum()


def directions_for(shares: torch.Tensor, share: float = 0.95) -> int:
    """How many leading principal directions hold `share` of the variance."""
    return int((shares.cumsum(0) < share).sum()) + 1


def energy_inside(vectors: torch.Tensor, directions: torch.Tensor) -> float:
    """The share of the vectors' centred energy that lies in the span of `directions`
    (k, H), orthonormal rows."""
    centred = vectors - vectors.mean(dim=0)
    return ((centred @ directions.T).pow(2).sum() / centred.pow(2).sum()).item()


def nearest_row(vectors: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """For each of the (n, H) vectors, the index of the table row with the largest cosine
    to it: (n,)."""
    return (F.normalize(vectors, dim=-1) @ F.normalize(table, dim=-1).T).argmax(-1)


def random_table_margins(hidden: int, vocab: int = 5000, positions: int = 512,
                         samples: int = 1000) -> torch.Tensor:
    """Decode tokens from token + position sums of random tables of width `hidden`:
    per sample (samples,), the true token's distance advantage over its nearest rival
    (positive: the nearest row is the right token)."""
    token_table = torch.randn(vocab, hidden) / hidden**0.5  # rows of length about 1
    position_rows = torch.randn(positions, hidden) / hidden**0.5
    tokens_drawn = torch.randint(0, vocab, (samples,))
    positions_drawn = torch.randint(0, positions, (samples,))
    sums = token_table[tokens_drawn] + position_rows[positions_drawn]  # (samples, H)
    distances = torch.cdist(sums, token_table)  # (samples, vocab)
    true = distances[torch.arange(samples), tokens_drawn]
    distances[torch.arange(samples), tokens_drawn] = float("inf")
    return distances.min(dim=-1).values - true
