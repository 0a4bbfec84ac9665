"""How a word reaches its own prediction (chapter 56): a model asked to predict every token
of its rows, with the attention pattern as the only guard, and the paths that let it
read the answer.

`EVERY_TOKEN` holds the recipe settings that train a model to predict every ordinary token
of its rows as it is (masking at rate 1, every chosen token kept: no [MASK], no random
token), and `every_token_accuracy` scores a model on that task on held-out rows.
`value_paths` says, from an attention pattern alone, which input positions reach which
outputs after some layers through attention's values and the residual sum. `row_guesses`
reads a model's guess for each token of one row, the row as it is or each token replaced
by [MASK] in turn (what context alone gives).
"""

from __future__ import annotations

import torch

from ..text.datasets import Dataset
from ..training.trainer import evaluate_mlm, vocabulary_logits

# Recipe fields (minibert.training.zoo) for "predict every ordinary token, unchanged".
EVERY_TOKEN = {"mask_rate": 1.0, "mask_split": (0.0, 0.0, 1.0)}


def every_token_accuracy(model: torch.nn.Module, rows: Dataset) -> float:
    """Share of the ordinary tokens of `rows` (not [CLS], [SEP], [PAD]) that the model
    predicts right when it reads the rows unchanged: what a model trained with
    `EVERY_TOKEN` is asked to do."""
    rate, split = EVERY_TOKEN["mask_rate"], EVERY_TOKEN["mask_split"]
    return evaluate_mlm(model, rows, rate=rate, split=split)["mlm_accuracy"]


def value_paths(allowed: torch.Tensor, layers: int, residual: bool) -> torch.Tensor:
    """reach (T, T), boolean: reach[i, j] is True when input position j reaches output
    position i after `layers` layers through attention's values (allowed[i, j]: query i may
    attend to key j) and, with `residual`, the skip connection (each position keeps its own
    input). The query is left out: in every layer position i's own state also sets the
    weights of its attention (its query), a path no attention mask closes."""
    if allowed.dim() != 2 or allowed.shape[0] != allowed.shape[1]:
        raise ValueError(f"allowed must be a square (T, T) matrix, got {tuple(allowed.shape)}")
    if not isinstance(layers, int) or layers < 0:
        raise ValueError(f"layers must be a whole number >= 0, got {layers!r}")
    eye = torch.eye(len(allowed), dtype=torch.bool)
    step = (allowed.bool() | eye) if residual else allowed.bool()  # one layer: (T, T)
    reach = eye
    for _ in range(layers):
        reach = (step.int() @ reach.int()) > 0  # i <- k in this layer, k <- j before it
    return reach


@torch.no_grad()
def row_guesses(model: torch.nn.Module, row: dict[str, torch.Tensor], mask_id: int,
                each_masked: bool) -> torch.Tensor:
    """The model's top guess for every position of one row (a batch of one: tensors (1, T)),
    (T,): with the row as it is, or (each_masked=True) for each position with that position
    alone replaced by [MASK] (T copies of the row, one forward pass)."""
    ids = row["input_ids"]
    if ids.dim() != 2 or len(ids) != 1:
        raise ValueError(f"row must be a batch of one row, got input_ids {tuple(ids.shape)}")
    T = ids.shape[1]
    batch = {k: v for k, v in row.items() if k != "labels"}
    if each_masked:
        batch = {k: v.expand(T, -1).clone() for k, v in batch.items()}  # (T, T) each
        batch["input_ids"][torch.arange(T), torch.arange(T)] = mask_id
    guesses = vocabulary_logits(model, batch)[1].argmax(-1).cpu()  # (B, T)
    return guesses[torch.arange(T), torch.arange(T)] if each_masked else guesses[0]
