"""Watching Adam's first steps: how far each update moves the weights.

Adam divides every coordinate of the gradient by the square root of a running mean of its
squares. After one step that mean holds a single gradient, so the first update is
lr * sign(g) for every coordinate that has a gradient, however small or noisy that gradient
is. Only after many steps does the denominator settle (Liu et al. 2020 call this the large
variance of the adaptive learning rate early in training). `record_updates` watches any
torch optimiser, including the one inside `minibert.training.trainer.train`, and logs step by step
how large its update was. `step_ratios` sets two optimisers side by side on the same
gradients (Google's BERT optimiser, which skipped the bias correction, against Adam).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch
from torch.optim.optimizer import (
    register_optimizer_step_post_hook,
    register_optimizer_step_pre_hook,
)


@dataclass
class UpdateLog:
    """One entry per optimiser step (lists of equal length)."""

    lr: list[float] = field(default_factory=list)  # the step's learning rate
    # RMS of (change of a weight) / lr over the coordinates that had a nonzero gradient:
    # 1.0 means every such weight moved by the full learning rate.
    unit_rms: list[float] = field(default_factory=list)
    # ||change|| / ||weights|| over the weight matrices and embeddings (2-D parameters).
    relative_change: list[float] = field(default_factory=list)


@contextmanager
def record_updates() -> Iterator[UpdateLog]:
    """Log the size of every optimiser step taken inside the `with` block.

    Uses torch's global optimiser hooks: a copy of each parameter is taken before the step
    and compared with the parameter after it. Parameters without a gradient are skipped."""
    log = UpdateLog()
    before: dict[torch.Tensor, tuple[torch.Tensor, torch.Tensor]] = {}
    lr_of_step: list[float] = []

    def snapshot(optimizer, args, kwargs) -> None:
        before.clear()
        lr_of_step[:] = [optimizer.param_groups[0]["lr"]]
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    before[p] = (p.detach().clone(), p.grad != 0)

    def measure(optimizer, args, kwargs) -> None:
        lr = lr_of_step[0]
        unit_sq = count = change_sq = weight_sq = 0.0
        for p, (old, has_grad) in before.items():
            change = p.detach() - old
            unit_sq += float((change[has_grad] / lr).pow(2).sum())
            count += int(has_grad.sum())
            if p.dim() >= 2:
                change_sq += float(change.pow(2).sum())
                weight_sq += float(old.pow(2).sum())
        log.lr.append(lr)
        log.unit_rms.append(math.sqrt(unit_sq / max(count, 1)))
        log.relative_change.append(math.sqrt(change_sq / weight_sq) if weight_sq else 0.0)

    handles = [register_optimizer_step_pre_hook(snapshot),
               register_optimizer_step_post_hook(measure)]
    try:
        yield log
    finally:
        for handle in handles:
            handle.remove()


def step_ratios(first: Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer],
                second: Callable[[list[torch.nn.Parameter]], torch.optim.Optimizer],
                gradients: torch.Tensor) -> np.ndarray:
    """(steps,) the RMS of the second optimiser's update over the first's, step by step,
    when each steps its own copy of one weight vector (starting at zero) on the same
    gradients, (steps, n). `first` and `second` build an optimiser over a parameter list;
    for Google's BERT optimiser against Adam this is the bias-correction ratio
    (1 - beta1^t) / sqrt(1 - beta2^t), whatever the gradients."""
    changes = []
    for make in (first, second):
        weight = torch.nn.Parameter(torch.zeros(gradients.shape[1], dtype=gradients.dtype))
        optimizer = make([weight])
        steps = []
        for gradient in gradients:  # (n,)
            before = weight.detach().clone()
            weight.grad = gradient.clone()
            optimizer.step()
            steps.append(weight.detach() - before)
        changes.append(torch.stack(steps))  # (steps, n)
    rms = [change.pow(2).mean(1).sqrt() for change in changes]  # 2 x (steps,)
    return (rms[1] / rms[0]).numpy()
