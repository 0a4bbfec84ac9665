"""Rare words and the rows that learn them: how much of a vocabulary one batch holds, which
words a batch holds less than once on average, and a model's fill-in-the-blank loss on
those words alone (chapter 22, where weight tying's argument needs rare rows)."""

from __future__ import annotations

import torch

from ..text.datasets import Dataset
from ..training.trainer import masked_batches, masked_lm_scores


def ordinary_words(dataset: Dataset) -> torch.Tensor:
    """(V,) bool: the vocabulary's entries that are not special tokens."""
    ordinary = torch.ones(dataset.tokenizer.vocab_size, dtype=torch.bool)
    ordinary[list(dataset.tokenizer.special_ids)] = False
    return ordinary


def batch_coverage(dataset: Dataset, batch_size: int, batches_drawn: int = 20,
                   seed: int = 0) -> float:
    """Mean share of the ordinary words present in a batch of `batch_size` rows: the share
    of an untied input table that one step updates."""
    ordinary = ordinary_words(dataset)
    generator = torch.Generator().manual_seed(seed)
    shares = []
    for _ in range(batches_drawn):
        rows = torch.randperm(len(dataset), generator=generator)[:batch_size]
        ids = dataset.tensors["input_ids"][rows].flatten()  # (batch_size * T,)
        present = torch.zeros_like(ordinary)
        present[ids] = True
        shares.append(float((present & ordinary).sum() / ordinary.sum()))
    return sum(shares) / len(shares)


def rare_words(dataset: Dataset, batch_size: int) -> torch.Tensor:
    """(V,) bool: the ordinary words that a batch of `batch_size` of these rows holds less
    than once on average, so an untied input row of theirs misses most steps."""
    counts = torch.bincount(dataset.tensors["input_ids"].flatten(),
                            minlength=dataset.tokenizer.vocab_size)  # (V,)
    per_batch = counts * batch_size / len(dataset)  # (V,) mean occurrences in a batch
    return (per_batch < 1) & ordinary_words(dataset)


@torch.no_grad()
def loss_on_words(model: torch.nn.Module, dataset: Dataset, words: torch.Tensor,
                  rate: float = 0.15, seed: int = 0, batch_size: int = 256) -> float:
    """Fill-in-the-blank loss (chosen tokens all become [MASK], the same masks for every
    model given the seed) on the positions whose target is one of `words` ((V,) bool)."""
    total, count = 0.0, 0
    for batch in masked_batches(dataset, rate, seed=seed, batch_size=batch_size):
        scores = masked_lm_scores(model, batch)
        targets = batch["labels"].clamp(min=0)  # (B, T): IGNORE_INDEX read as id 0
        keep = scores.asked & words[targets]  # (B, T): asked for one of `words`
        total += float(scores.loss[keep].sum())
        count += int(keep.sum())
    if count == 0:
        raise ValueError("loss_on_words: no masked position asks for one of the words")
    return total / count
