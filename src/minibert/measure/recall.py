"""Associative recall, measured: the best accuracy without knowing which key holds which
value, how evenly and where its query row mixes, and the
accuracy of a hinted reader (a positive control). The task lives in minibert.text.recall,
the models in minibert.model.recall, their training in minibert.training.recall.
Shapes: B = batch, T = positions (pairs + the query), V = number of values.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..model.recall import RecallModel
from ..text.recall import RecallTask


def bag_of_values_accuracy(task: RecallTask, num_examples: int = 20_000, seed: int = 0) -> float:
    """The best accuracy for a reader who sees which values the table holds, and how
    often, but not which key holds which: guess the most frequent value. This is what a
    fixed blend of the positions can keep of the table (see DenseTokenMixing)."""
    generator = torch.Generator().manual_seed(seed)
    _, values, _ = task.sample(num_examples, generator)
    counts = F.one_hot(values[:, :-1], task.num_values).sum(dim=1)  # (N, V)
    return (counts.max(dim=1).values.float() / task.num_pairs).mean().item()


def query_row_spread(row: torch.Tensor) -> float:
    """How uneven a row of mixing weights is: standard deviation over mean size (0: one
    common weight for every position)."""
    return (row.std() / row.abs().mean()).item()


@torch.no_grad()
def weight_on_match(model: RecallModel, keys: torch.Tensor, values: torch.Tensor) -> float:
    """The mean mixing weight that the query position puts on the pair holding its key:
    near 1 for a model that fetches by content."""
    query_row = model.mixing_matrix(keys, values)[:, -1, :-1]  # (B, T-1) over the pairs
    is_match = keys[:, :-1] == keys[:, -1:]  # (B, T-1): one True per row
    return query_row[is_match].mean().item()


@torch.no_grad()
def hinted_accuracy(model: RecallModel, keys: torch.Tensor, values: torch.Tensor,
                    answers: torch.Tensor, share: float, seed: int = 0) -> float:
    """Accuracy when the model is handed the stored value on a random `share` of the
    tables: a reader known to do better by about share x (1 - its accuracy), to check
    that a comparison can see a gain of that size (a positive control)."""
    model.eval()
    guesses = model(keys, values).argmax(dim=-1)  # (B,)
    model.train()
    generator = torch.Generator().manual_seed(seed)
    hinted = (torch.rand(len(answers), generator=generator) < share).to(answers.device)
    guesses = torch.where(hinted, answers, guesses)  # (B,) the answer where hinted
    return (guesses == answers).float().mean().item()
