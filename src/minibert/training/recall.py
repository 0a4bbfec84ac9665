"""Associative recall, the training loop: AdamW on fresh tables every step, with held-out
accuracy (and, if asked, the query's mixing weights) recorded along the way."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from ..model.recall import RecallModel
from ..runtime import get_device


@dataclass
class RecallHistory:
    """Held-out accuracy during training and, if a probe batch was given, the query
    position's mixing weights on it at each evaluation: one (probe size, T) tensor each."""

    steps: list[int] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    query_weights: list[torch.Tensor] = field(default_factory=list)
    seconds: float = 0.0


@torch.no_grad()
def accuracy(model: RecallModel, keys: torch.Tensor, values: torch.Tensor,
             answers: torch.Tensor) -> float:
    """Share of examples whose most likely value is the stored one."""
    model.eval()
    correct = (model(keys, values).argmax(dim=-1) == answers).float().mean().item()
    model.train()
    return correct


def train_recall(model: RecallModel, steps: int = 200, batch_size: int = 64,
                 lr: float = 3e-3, seed: int = 0, eval_every: int = 25,
                 eval_size: int = 1000,
                 probe: tuple[torch.Tensor, torch.Tensor] | None = None) -> RecallHistory:
    """AdamW on fresh examples every step (nothing to memorise), with a fixed held-out set
    scored every `eval_every` steps. The data follow `seed`; the initial weights are the
    model's own. probe: (keys, values) whose query-row mixing weights are recorded at each
    evaluation. The model stays on its device."""
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    held_out = [t.to(device) for t in model.task.sample(eval_size, generator)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    history = RecallHistory()
    started = time.perf_counter()
    model.train()
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            history.steps.append(step)
            history.accuracy.append(accuracy(model, *held_out))
            if probe is not None:
                with torch.no_grad():
                    weights = model.mixing_matrix(*(t.to(device) for t in probe))
                history.query_weights.append(weights[:, -1].cpu().clone())  # (probe, T)
        if step == steps:
            break
        keys, values, answers = (t.to(device) for t in model.task.sample(batch_size, generator))
        loss = F.cross_entropy(model(keys, values), answers)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    history.seconds = time.perf_counter() - started
    return history


def recall_run(task, mixing: str, seed: int, steps: int = 200, eval_every: int = 25,
               eval_size: int = 1000, on_step=None, **model_settings) -> RecallHistory:
    """One recall model trained from scratch, as one run of `processes.run_all` (so that
    many train across the cores): seed draws the initial weights, then the data, as
    `train_recall` does. model_settings go to RecallModel (width, num_heads, ...)."""
    torch.manual_seed(seed)  # the initial weights
    model = RecallModel(task, mixing, **model_settings).to(get_device())
    history = train_recall(model, steps=steps, seed=seed, eval_every=eval_every,
                           eval_size=eval_size)
    if on_step is not None:
        on_step(steps)
    return history
