"""The masked-LM corruption: choose tokens to predict, then hide them.

BERT picks 15% of a sequence's tokens to predict and replaces 80% of those with [MASK],
10% with a random token and leaves 10% unchanged (so the model cannot assume that every
unmasked token is right). The rate and the split are parameters here, so a chapter can
vary them. As in Google's create_pretraining_data, a sequence gets a fixed number of
predictions (its eligible tokens times the rate, rounded up or down at random so that the
average is exact), at least one, and at most `max_predictions` if given.
For comparison, `next_token_labels` labels the same rows for the left-to-right objective.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import torch

from ..model.heads import IGNORE_INDEX  # the label of a position that is not predicted
from .datasets import Dataset


def check_masking(rate: float, split: tuple[float, float, float],
                  max_predictions: int | None = None) -> None:
    """Raise a ValueError naming what is wrong with a masking rate, split or cap."""
    if not isinstance(rate, (int, float)) or not 0.0 < rate <= 1.0:
        raise ValueError(f"mask rate must lie in (0, 1], got {rate!r}")
    if len(split) != 3:
        raise ValueError(f"split must hold three shares (MASK, RANDOM, KEEP), got {split!r}")
    if any(part < 0 for part in split):
        raise ValueError(f"split shares (MASK, RANDOM, KEEP) must not be negative, got {split!r}")
    if not math.isclose(sum(split), 1.0, abs_tol=1e-6):
        raise ValueError(f"split shares (MASK, RANDOM, KEEP) must sum to 1, got {split!r} "
                         f"(sum {sum(split):.6g})")
    if max_predictions is not None and (not isinstance(max_predictions, int)
                                        or max_predictions < 1):
        raise ValueError(f"max_predictions must be a positive integer or None, got "
                         f"{max_predictions!r}")


def mask_tokens(
    input_ids: torch.Tensor,
    special_ids: Iterable[int],
    vocab_size: int,
    mask_token_id: int,
    rate: float = 0.15,
    split: tuple[float, float, float] = (0.8, 0.1, 0.1),
    max_predictions: int | None = None,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Corrupt a batch for masked-LM training.

    input_ids (B, T); special_ids: ids never chosen and never drawn as random replacements
    ([PAD], [CLS], [SEP], [MASK], [UNK]...); split: shares of the chosen tokens replaced by
    [MASK], by a random ordinary token, and kept. Returns the corrupted ids (B, T) and the
    labels (B, T): the original id where a token is to be predicted, -100 elsewhere."""
    check_masking(rate, split, max_predictions)
    if input_ids.dim() != 2 or input_ids.dtype != torch.long:
        raise ValueError(f"input_ids must be a (batch, seq_len) tensor of int64, got shape "
                         f"{tuple(input_ids.shape)} and dtype {input_ids.dtype}")
    if not 0 <= mask_token_id < vocab_size:
        raise ValueError(f"mask_token_id {mask_token_id} must lie in [0, vocab_size={vocab_size})")
    device = input_ids.device
    special = torch.tensor(sorted(set(special_ids)), dtype=torch.long, device=device)
    ordinary = torch.ones(vocab_size, dtype=torch.bool, device=device)
    ordinary[special] = False
    ordinary_ids = ordinary.nonzero().squeeze(1)  # (V',) the random replacements
    if len(ordinary_ids) == 0:
        raise ValueError("every id of the vocabulary is special: nothing to predict")

    # 1. How many tokens each sequence predicts.
    eligible = ~torch.isin(input_ids, special)  # (B, T)
    wanted = eligible.sum(dim=1) * rate  # (B,)
    rand = torch.rand(wanted.shape, generator=generator, device=device)
    count = wanted.floor() + (rand < wanted - wanted.floor())  # random rounding: mean is exact
    count = count.clamp(min=1).long()
    if max_predictions is not None:
        count = count.clamp(max=max_predictions)

    # 2. Which ones: the `count` eligible tokens with the smallest random scores.
    scores = torch.rand(input_ids.shape, generator=generator, device=device)
    scores = scores.masked_fill(~eligible, 2.0)  # ineligible tokens rank last
    rank = scores.argsort(dim=1).argsort(dim=1)  # (B, T) rank of each token's score
    chosen = (rank < count[:, None]) & eligible  # (B, T)

    # 3. How each chosen token is hidden.
    mask_share, random_share, _ = split
    draw = torch.rand(input_ids.shape, generator=generator, device=device)
    to_mask = chosen & (draw < mask_share)
    to_random = chosen & (draw >= mask_share) & (draw < mask_share + random_share)
    random_ids = ordinary_ids[torch.randint(len(ordinary_ids), input_ids.shape,
                                            generator=generator, device=device)]
    corrupted = input_ids.masked_fill(to_mask, mask_token_id)
    corrupted = torch.where(to_random, random_ids, corrupted)
    labels = input_ids.masked_fill(~chosen, IGNORE_INDEX)
    return corrupted, labels


@dataclass
class Masker:
    """The masking settings in one object, applied to a batch dict: adds `labels` and
    corrupts `input_ids`. Build one for a tokenizer with `Masker.for_tokenizer`."""

    special_ids: tuple[int, ...]
    vocab_size: int
    mask_token_id: int
    rate: float = 0.15
    split: tuple[float, float, float] = (0.8, 0.1, 0.1)
    max_predictions: int | None = None

    def __post_init__(self) -> None:
        check_masking(self.rate, self.split, self.max_predictions)

    @classmethod
    def for_tokenizer(cls, tokenizer, **settings) -> Masker:
        """Special ids, vocabulary size and [MASK] id taken from a WordPiece tokenizer."""
        return cls(tuple(tokenizer.special_ids), tokenizer.vocab_size, tokenizer.mask_id,
                   **settings)

    def __call__(self, batch: dict[str, torch.Tensor],
                 generator: torch.Generator | None = None) -> dict[str, torch.Tensor]:
        corrupted, labels = mask_tokens(
            batch["input_ids"], self.special_ids, self.vocab_size, self.mask_token_id,
            self.rate, self.split, self.max_predictions, generator,
        )
        return {**batch, "input_ids": corrupted, "labels": labels}


def next_token_labels(rows: Dataset) -> Dataset:
    """The same rows labelled for the left-to-right objective (GPT's) instead of masked-LM:
    position t's label is token t+1, nothing is masked, and the last real token and the
    padding predict nothing. A model with causal attention trained on them predicts each
    next token from the tokens before it; rows that carry labels already are refused."""
    if "labels" in rows.tensors:
        raise ValueError("these rows already carry labels; next_token_labels needs unlabelled "
                         "rows such as pretraining_pairs(..., negatives=None)")
    ids = rows["input_ids"]  # (N, T)
    real = ids != rows.tokenizer.pad_id  # (N, T)
    labels = torch.full_like(ids, IGNORE_INDEX)
    labels[:, :-1] = torch.where(real[:, 1:], ids[:, 1:], IGNORE_INDEX)  # (N, T-1): the next token
    tensors = {name: t for name, t in rows.tensors.items() if name != "next_sentence_label"}
    return Dataset({**tensors, "labels": labels}, rows.examples, rows.tokenizer, rows.label_names)
