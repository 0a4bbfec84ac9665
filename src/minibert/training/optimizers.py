"""The optimisers the training loops can use, by name.

"adamw" is torch's AdamW, the loop's default. "radam" is RAdam (Liu et al. 2020) with
AdamW's decoupled weight decay: while the variance of Adam's adaptive rate is too large
to trust (its first few steps), it steps by the bias-corrected momentum alone, then
scales the adaptive step by a rectification factor that grows towards 1, a warm-up built
into the optimiser. "adamw_no_bias_correction" is Google's BERT optimiser,
`AdamWeightDecayOptimizer` in BERT's `optimization.py`: Adam with decoupled weight
decay and without Adam's bias correction of the two running means.

Without the correction, step t is (1 - beta1^t) / sqrt(1 - beta2^t) times Adam's
(`bias_correction_ratio`), whatever the gradients (ignoring epsilon): with beta1 = 0.9
and beta2 = 0.999, about 3.2 at the first step, rising to about 6.5 near step ten, and
falling back to 1 only over thousands of steps.
"""

from __future__ import annotations

import numpy as np
import torch

OPTIMIZERS = ("adamw", "radam", "adamw_no_bias_correction")


class AdamWeightDecayNoBiasCorrection(torch.optim.Optimizer):
    """Google's BERT optimiser (`AdamWeightDecayOptimizer`), in PyTorch.

    For every parameter p with gradient g, at each step:
        m <- beta1 m + (1 - beta1) g,   v <- beta2 v + (1 - beta2) g^2   (no correction)
        p <- p - lr * (m / (sqrt(v) + eps) + weight_decay * p)
    The decay is decoupled from the gradient, as in AdamW; BERT's code left LayerNorm
    parameters and biases out of it, as `trainer.parameter_groups` does. eps = 1e-6 is
    BERT's. Elementwise, so it also steps a batched run's stacked weights."""

    def __init__(self, params, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-6, weight_decay: float = 0.0):
        if not lr > 0 or not eps >= 0 or weight_decay < 0:
            raise ValueError(f"need lr > 0, eps >= 0 and weight_decay >= 0, got "
                             f"lr={lr!r}, eps={eps!r}, weight_decay={weight_decay!r}")
        if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {betas!r}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["exp_avg"] = torch.zeros_like(p)  # m, the shape of p
                    state["exp_avg_sq"] = torch.zeros_like(p)  # v, the shape of p
                m, v = state["exp_avg"], state["exp_avg_sq"]
                m.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                update = m / (v.sqrt() + group["eps"])
                if group["weight_decay"]:
                    update.add_(p, alpha=group["weight_decay"])
                p.add_(update, alpha=-group["lr"])
        return loss


def bias_correction_ratio(steps: int, betas: tuple[float, float] = (0.9, 0.999)
                          ) -> np.ndarray:
    """(steps,) the size of the uncorrected step over Adam's corrected one at steps
    1..steps: (1 - beta1^t) / sqrt(1 - beta2^t), the same for every coordinate and every
    gradient sequence (epsilon aside)."""
    beta1, beta2 = betas
    t = np.arange(1, steps + 1)
    return (1 - beta1 ** t) / np.sqrt(1 - beta2 ** t)


def radam_rectification(steps: int, beta2: float = 0.999) -> np.ndarray:
    """(steps,) RAdam's factor on Adam's adaptive step at steps 1..steps (Liu et al. 2020,
    as torch.optim.RAdam computes it): 0 while the length of the approximated simple
    moving average, rho_t, is at most 5 (those steps use the momentum alone), then
    sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t)), which
    grows towards 1 over a few thousand steps at beta2 = 0.999."""
    t = np.arange(1, steps + 1)
    rho_inf = 2 / (1 - beta2) - 1
    rho = rho_inf - 2 * t * beta2 ** t / (1 - beta2 ** t)
    factor = np.zeros(steps)
    on = rho > 5
    factor[on] = np.sqrt((rho[on] - 4) * (rho[on] - 2) * rho_inf
                         / ((rho_inf - 4) * (rho_inf - 2) * rho[on]))
    return factor


def build_optimizer(name: str, groups: list[dict], lr: float,
                    betas: tuple[float, float], fused: bool | None = None
                    ) -> torch.optim.Optimizer:
    """The optimiser `name` (one of OPTIMIZERS) over parameter groups that carry their own
    weight_decay. "adamw" is exactly torch.optim.AdamW(groups, lr=lr, betas=betas), with
    fused=... passed only when given; the others ignore `fused`."""
    if name == "adamw":
        extra = {} if fused is None else {"fused": fused}
        return torch.optim.AdamW(groups, lr=lr, betas=betas, **extra)
    if name == "radam":
        return torch.optim.RAdam(groups, lr=lr, betas=betas, decoupled_weight_decay=True)
    if name == "adamw_no_bias_correction":
        return AdamWeightDecayNoBiasCorrection(groups, lr=lr, betas=betas)
    raise ValueError(f"optimizer must be one of {list(OPTIMIZERS)}, got {name!r}")
