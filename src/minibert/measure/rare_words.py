"""Rare words and the rows that learn them: how much of a vocabulary one batch holds, which
words a batch holds less than once on average, and a model's fill-in-the-blank loss on
those words alone (chapter 22, where weight tying's argument needs rare rows)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..model.heads import IGNORE_INDEX
from ..text.datasets import Dataset, batches
from ..text.masking import Masker


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
    masker = Masker.for_tokenizer(dataset.tokenizer, rate=rate, split=(1.0, 0.0, 0.0))
    generator = torch.Generator().manual_seed(seed)
    was_training = model.training
    model.eval()
    total, count = 0.0, 0
    for batch in batches(dataset, batch_size, shuffle=False):
        batch = masker(batch, generator)
        labels = batch["labels"]  # (B, T): the target id, -100 where nothing is asked
        chosen = labels != IGNORE_INDEX
        targets = labels[chosen]  # (P,)
        keep = words[targets]  # (P,) bool: the positions asking for one of `words`
        inputs = {k: batch[k].to(model.device) for k in ("input_ids", "attention_mask",
                                                          "token_type_ids")}
        scores = model(**inputs).prediction_logits[chosen.to(model.device)]  # (P, V)
        losses = F.cross_entropy(scores, targets.to(model.device), reduction="none")
        total += float(losses[keep.to(model.device)].sum())
        count += int(keep.sum())
    model.train(was_training)
    if count == 0:
        raise ValueError("loss_on_words: no masked position asks for one of the words")
    return total / count
