"""Learning-rate schedules: each gives the multiplier of the peak learning rate at a step
(counted from 0), and `lr_schedule` lists a whole run's rates for plotting."""

from __future__ import annotations

import math


def constant_schedule(step: int, warmup_steps: int, total_steps: int) -> float:
    """Linear warm-up to the peak, then flat."""
    return min(1.0, (step + 1) / warmup_steps) if warmup_steps else 1.0


def linear_schedule(step: int, warmup_steps: int, total_steps: int) -> float:
    """BERT's: linear warm-up to the peak, then linear decay to zero at the last step."""
    if step < warmup_steps:
        return (step + 1) / warmup_steps
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def noam_schedule(step: int, warmup_steps: int, total_steps: int) -> float:
    """Vaswani et al.'s: linear warm-up, then decay as 1/sqrt(step); scaled so that the
    peak, at the end of warm-up, is 1 (their d_model**-0.5 factor is folded into lr)."""
    step, warmup = step + 1, max(1, warmup_steps)
    return min(step / warmup, math.sqrt(warmup / step))


SCHEDULES = {"constant": constant_schedule, "linear": linear_schedule, "noam": noam_schedule}


def lr_schedule(name: str, lr: float, steps: int, warmup_steps: int = 0) -> list[float]:
    """The learning rate of every step of a run, for plotting."""
    if name not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {name!r}")
    return [lr * SCHEDULES[name](s, warmup_steps, steps) for s in range(steps)]
