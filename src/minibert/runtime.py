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


PILOT_SEEDS = range(1000, 2000)  # where pilots run (benchmarks/pilot.py); nothing else does
PILOT_COUNT = "MINIBERT_PILOT_SEEDS"  # a pilot's number of paired seeds, set by pilot.py


def _whole_number(name: str, default: str) -> int:
    text = os.environ.get(name, default).strip() or default
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name} must be a whole number, got {text!r}") from None


def chapter_seeds(defaults: list[int]) -> list[int]:
    """The seeds a chapter runs: its list of defaults, each shifted by $MINIBERT_SEED_OFFSET
    (0 if unset), so `MINIBERT_SEED_OFFSET=3` reruns a [0, 1, 2] chapter on seeds [3, 4, 5].
    A chapter's seeds, shifted or not, stay below the pilots' (1000 and up); a pilot's
    offset puts them inside PILOT_SEEDS, and $MINIBERT_PILOT_SEEDS lengthens every list
    to at least that many seeds, continuing after its last."""
    defaults = list(defaults)
    if not defaults:
        raise ValueError("chapter_seeds needs at least one default seed")
    offset = _whole_number("MINIBERT_SEED_OFFSET", "0")
    seeds = [seed + offset for seed in defaults]
    if offset in PILOT_SEEDS:
        count = _whole_number(PILOT_COUNT, "0")
        seeds += range(seeds[-1] + 1, seeds[-1] + 1 + count - len(seeds))
        where, allowed = "a pilot's", PILOT_SEEDS
    else:
        where, allowed = "a chapter's", range(PILOT_SEEDS.start)
    if not all(seed in allowed for seed in seeds):
        raise ValueError(f"{where} seeds lie in {allowed.start}-{allowed.stop - 1}, so that "
                         f"the chapters, their pilots and the held-out data never share a "
                         f"seed; offset {offset} gives {seeds}")
    return seeds


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run torch's CPU kernels on the calling thread only, for the duration of the block."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
