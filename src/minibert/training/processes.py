"""Several training runs at once on a CPU: one process per core, one thread each.

A tiny model's step keeps one core busy on one thread (a second thread adds little), so on
a machine with c cores, c runs in c processes train about c times as fast as one after
another, and each run is exactly the run it would be alone. `training_processes()` says
how many processes a call may start: $MINIBERT_TRAIN_PROCESSES, or one per core. The test
run sets it to 1, because its workers already fill the cores.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool

import torch

_steps_done = None  # in a worker process: the shared array of steps done, one slot per run


def training_processes() -> int:
    """How many training processes a call may start: $MINIBERT_TRAIN_PROCESSES, else one
    per core this process may use."""
    text = os.environ.get("MINIBERT_TRAIN_PROCESSES", "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"MINIBERT_TRAIN_PROCESSES must be a whole number of at least 1, "
                             f"got {text!r}")
        return int(text)
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else range(os.cpu_count() or 1)
    return max(1, len(cores))


def _start_worker(steps_done) -> None:
    global _steps_done
    _steps_done = steps_done
    torch.set_num_threads(1)


def _run(function: Callable, slot: int, arguments: dict):
    def report(steps: int) -> None:
        _steps_done[slot] = steps

    return function(**arguments, on_step=report)


def run_in_processes(function: Callable, calls: Sequence[dict], steps: Sequence[int],
                     processes: int, bar=None) -> list:
    """`function(**call, on_step=...)` for every call, in at most `processes` spawned
    processes with one thread each; the results in the order of `calls`. `function` must be
    importable (a module's top-level function) and reports its steps done through on_step;
    `bar`, a tqdm bar over sum(steps), shows them all."""
    context = multiprocessing.get_context("spawn")  # a fresh interpreter: safe under Jupyter
    steps_done = context.Array("i", len(calls))
    with ProcessPoolExecutor(min(processes, len(calls)), mp_context=context,
                             initializer=_start_worker, initargs=(steps_done,)) as pool:
        futures = [pool.submit(_run, function, slot, call) for slot, call in enumerate(calls)]
        pending = set(futures)
        while pending:
            _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            if bar is not None:
                bar.n = sum(steps_done[:])
                bar.refresh()
        try:
            return [future.result() for future in futures]
        except BrokenProcessPool as error:
            raise RuntimeError(
                "a training process died before it finished. In a script, make the call "
                "under `if __name__ == \"__main__\":` (each training process imports the "
                "script again), or set MINIBERT_TRAIN_PROCESSES=1 to train in this "
                "process") from error
