"""Where to run and how to make a run repeatable: the device helper, seeding and the
chapters' seed sets."""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator

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


def chapter_seeds(defaults: list[int]) -> list[int]:
    """The seeds a chapter runs: its list of defaults, each shifted by $MINIBERT_SEED_OFFSET
    (0 if unset), so `MINIBERT_SEED_OFFSET=3` reruns a [0, 1, 2] chapter on seeds [3, 4, 5]."""
    defaults = list(defaults)
    if not defaults:
        raise ValueError("chapter_seeds needs at least one default seed")
    text = os.environ.get("MINIBERT_SEED_OFFSET", "0").strip() or "0"
    try:
        offset = int(text)
    except ValueError:
        raise ValueError(f"MINIBERT_SEED_OFFSET must be a whole number, got {text!r}") from None
    return [seed + offset for seed in defaults]


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch's CPU kernels on the calling thread only, for the duration of the block."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
