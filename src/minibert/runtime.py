"""Where to run and how to make a run repeatable: the device helper and seeding."""

from __future__ import annotations

import os
import random

import numpy as np
import torch


def get_device() -> torch.device:
    """The best device present: CUDA, then Apple's MPS, then the CPU.
    Set MINIBERT_DEVICE (e.g. "cpu") to choose one by hand."""
    if os.environ.get("MINIBERT_DEVICE"):
        return torch.device(os.environ["MINIBERT_DEVICE"])
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def set_seed(seed: int) -> None:
    """Seed Python, NumPy and torch (every device) in one call."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
