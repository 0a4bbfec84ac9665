"""How a fresh model's weights are spread, against the truncated normal BERT draws them from.

BERT initialises every weight matrix from N(0, sigma^2) cut at +-2 sigma. `weight_spread`
gathers a model's matrix entries and sets their range and standard deviation beside what
that truncated normal gives, so a chapter can check the draw (and that an untruncated draw
of the same size fails the same check).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn


def truncated_normal_std(sigma: float, cut: float = 2.0) -> float:
    """Standard deviation of N(0, sigma^2) truncated to [-cut * sigma, cut * sigma]."""
    if sigma <= 0 or cut <= 0:
        raise ValueError(f"need sigma > 0 and cut > 0, got sigma={sigma!r}, cut={cut!r}")
    density = math.exp(-cut**2 / 2) / math.sqrt(2 * math.pi)  # standard normal pdf at cut
    mass = math.erf(cut / math.sqrt(2))  # P(-cut < Z < cut)
    return sigma * math.sqrt(1 - 2 * cut * density / mass)


def matrix_entries(model: nn.Module) -> torch.Tensor:
    """Every entry of the model's 2-D parameters (its weight matrices and embedding
    tables), flattened into one (P,) tensor."""
    return torch.cat([p.detach().flatten() for p in model.parameters() if p.dim() == 2])


@dataclass(frozen=True)
class Spread:
    """A sample of weights set beside a normal of standard deviation sigma cut at
    +-cut * sigma."""

    largest: float  # max |w|
    bound: float  # cut * sigma
    std: float  # the sample's standard deviation
    expected_std: float  # the truncated normal's

    @property
    def inside_bound(self) -> bool:
        """No weight lies beyond the cut (up to float rounding)."""
        return self.largest <= self.bound + 1e-7

    def std_within(self, tolerance: float) -> bool:
        """The sample's spread is the truncated normal's to within a relative tolerance."""
        return abs(self.std / self.expected_std - 1) < tolerance


def weight_spread(weights: torch.Tensor, sigma: float, cut: float = 2.0) -> Spread:
    """The range and spread of a (P,) sample of weights against N(0, sigma^2) cut at
    +-cut * sigma."""
    if weights.numel() < 2:
        raise ValueError(f"need at least two weights to measure a spread, got {weights.numel()}")
    return Spread(largest=weights.abs().max().item(), bound=cut * sigma,
                  std=weights.std().item(), expected_std=truncated_normal_std(sigma, cut))
