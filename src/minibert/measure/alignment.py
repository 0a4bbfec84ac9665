"""How closely cross-attention follows a known word alignment: the attention mass each
target token puts on the source tokens of its aligned word, how often its strongest
source token is one of them, and what uniform attention would score.

A cross-attention row is the step that predicts a target token: row t reads the target
up to t - 1 and scores the token at t (the labels' token). So the alignment that a row is
judged against is that of the token it predicts. Tokens are subword pieces: a target piece
is aligned with every piece of its word's source word. Shapes: B = batch, nh = heads,
L = layers, T = target length, S = source length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch


def token_alignment(row_word_ids: Sequence[int | None], source_word_ids: Sequence[int | None],
                    word_pairs: Sequence[tuple[int, int]]) -> torch.Tensor:
    """The token-level alignment (T, S) of one pair: True where the target word that row t
    predicts (row_word_ids[t]) is aligned with the source word of source token s
    (source_word_ids[s]); None or -1 marks a token of no word (special tokens, padding).
    word_pairs holds (source word, target word) pairs, e.g. [(i, j) for j, i in
    enumerate(alignment)] for a one-to-one alignment[j] = the source word of target word j;
    a row whose word has no pair stays False (`alignment_scores` leaves it out)."""
    aligned = torch.zeros(len(row_word_ids), len(source_word_ids), dtype=torch.bool)
    for source_word, target_word in word_pairs:
        rows = [t for t, word in enumerate(row_word_ids) if word == target_word]
        columns = [s for s, word in enumerate(source_word_ids) if word == source_word]
        aligned[torch.tensor(rows, dtype=torch.long)[:, None],
                torch.tensor(columns, dtype=torch.long)[None, :]] = True
    return aligned


@dataclass
class AlignmentScores:
    mass: torch.Tensor  # (L, nh): mean attention on the aligned source tokens
    argmax_accuracy: torch.Tensor  # (L, nh): share of rows whose strongest token is aligned
    uniform_mass: float  # the mass of uniform attention over each row's real source tokens


def alignment_scores(cross_attentions: Sequence[torch.Tensor], alignment: torch.Tensor,
                     source_mask: torch.Tensor) -> AlignmentScores:
    """Score every layer and head of cross-attention against the alignment, over the rows
    that have an aligned source token. cross_attentions: L tensors (B, nh, T, S);
    alignment (B, T, S) bool (see `token_alignment`); source_mask (B, S), 1 = token."""
    first = cross_attentions[0]
    if alignment.shape != (first.shape[0], *first.shape[2:]):
        raise ValueError(f"the alignment has shape {tuple(alignment.shape)}, the attention "
                         f"rows and columns (B, T, S) are {(first.shape[0], *first.shape[2:])}")
    if ((alignment & ~source_mask.bool()[:, None, :]).any()):
        raise ValueError("the alignment marks a padded source position")
    scored = alignment.any(dim=-1)  # (B, T): rows that predict an aligned token
    if not scored.any():
        raise ValueError("no row of the alignment has an aligned source token")
    on_aligned = alignment[:, None].to(first.dtype)  # (B, 1, T, S)
    rows = scored[:, None].to(first.dtype)  # (B, 1, T)
    mass, accuracy = [], []
    for weights in cross_attentions:  # (B, nh, T, S)
        row_mass = (weights * on_aligned).sum(dim=-1)  # (B, nh, T)
        mass.append((row_mass * rows).sum(dim=(0, 2)) / rows.sum())  # (nh,)
        strongest = weights.argmax(dim=-1, keepdim=True)  # (B, nh, T, 1)
        hit = on_aligned.expand_as(weights).gather(-1, strongest).squeeze(-1)  # (B, nh, T)
        accuracy.append((hit * rows).sum(dim=(0, 2)) / rows.sum())
    real = source_mask.sum(dim=-1, keepdim=True).to(first.dtype)  # (B, 1)
    uniform = alignment.sum(dim=-1).to(first.dtype) / real  # (B, T)
    return AlignmentScores(torch.stack(mass), torch.stack(accuracy),
                           float(uniform[scored].mean()))
