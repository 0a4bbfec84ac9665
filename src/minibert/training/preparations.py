"""Changes made to a zoo model between its initial weights and its training: the variants
that no config switch expresses, registered by name so that a recipe can ask for one.

A recipe's `prepare` is (name, *arguments) with plain values, so that the model's cache
key and record say exactly what was done, and the model is cached like any other. Seed s
of a prepared arm starts from seed s's initial weights, changed, and trains on the same
rows, masks and batches as every other arm of that seed.
"""

from __future__ import annotations

import functools

import torch


def concatenated_tables(model, *blocks) -> None:
    """Zero each embedding table outside its block of coordinates and mask its gradient,
    so that word + position + segment is [word | position | segment]. Each block is
    (table name in model.bert.embeddings, first coordinate, end), e.g.
    ("word_embeddings", 0, 48)."""
    for name, start, end in blocks:
        table = getattr(model.bert.embeddings, name).weight  # (rows, H)
        keep = torch.zeros(table.shape[1])
        keep[start:end] = 1.0  # (H,)
        with torch.no_grad():
            table.mul_(keep)
        table.register_hook(functools.partial(_masked, keep=keep))


def _masked(grad: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    return grad * keep.to(grad.device)  # (rows, H): nothing flows outside the block


def scaled_positions(model, scale: float) -> None:
    """Multiply the position table by `scale` (for the fixed sinusoidal table, which no
    training changes, this sets how much of the embedding sum is position)."""
    with torch.no_grad():
        model.bert.embeddings.position_embeddings.weight.mul_(scale)  # (P, H)


PREPARATIONS = {"concatenated_tables": concatenated_tables, "scaled_positions": scaled_positions}


def _frozen(value):
    """Lists as tuples, all the way down (a recipe is hashable; JSON gives lists)."""
    return tuple(_frozen(v) for v in value) if isinstance(value, list | tuple) else value


def checked(prepare) -> tuple:
    """A recipe's `prepare` as a tuple, (name, *arguments), with a known name; () for none."""
    prepare = _frozen(prepare or ())
    if prepare and prepare[0] not in PREPARATIONS:
        raise ValueError(f"prepare names one of {sorted(PREPARATIONS)}, got {prepare[0]!r}")
    return prepare


def apply(model, prepare: tuple) -> None:
    """Make the recipe's preparation, if it has one, to the freshly initialised model."""
    if prepare:
        name, *arguments = prepare
        PREPARATIONS[name](model, *arguments)
