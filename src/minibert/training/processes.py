"""Several training runs at once on a CPU: one process per core, one thread each.

A tiny model's step keeps one core busy on one thread (a second thread adds little), so on
a machine with c cores, c runs in c processes train about c times as fast as one after
another, and each run is exactly the run it would be alone. `training_processes()` says
how many processes a call may start: $MINIBERT_TRAIN_PROCESSES, or one per core. The test
run sets it to 1, because its workers already fill the cores.

The processes form one pool per Python process (a notebook's kernel), started on first use
and reused by every later call, so the interpreters import torch once, not once per group.
`submit` hands it a run and returns at once; `wait_for` waits for some runs, with one
progress bar over every run the pool still has to finish. `run_all` is the one rule for a
list of independent runs: to the pool where `in_pool()` (a CPU with cores to spare), else
here, one after another.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass

import torch

from ..runtime import get_device

SLOTS = 1024  # progress slots in the shared array; a run takes the next, cyclically

_steps_done = None  # in a worker process: the shared array of steps done, one slot per run
_pool: ProcessPoolExecutor | None = None  # in the kernel: the one pool, once started
_pool_size = 0
_pool_steps = None  # in the kernel: the pool's shared array of steps done
_next_slot = 0
_outstanding: list[Job] = []  # runs submitted and not yet collected, for the progress bar


@dataclass
class Job:
    """One run submitted to the pool: its future, its progress slot and its length."""

    future: Future
    slot: int
    steps: int

    def steps_done(self) -> int:
        return self.steps if self.future.done() else min(self.steps, _pool_steps[self.slot])

    def result(self):
        try:
            return self.future.result()
        except BrokenProcessPool as error:
            _forget_pool()
            raise RuntimeError(
                "a training process died before it finished. In a script, make the call "
                "under `if __name__ == \"__main__\":` (each training process imports the "
                "script again), or set MINIBERT_TRAIN_PROCESSES=1 to train in this "
                "process") from error


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


def in_pool() -> bool:
    """Whether independent training runs go to the pool: on a CPU where more than one
    training process may start. With one allowed (the test run) they stay in this process;
    on a GPU they share the device from this process (the zoo batches its groups there)."""
    return get_device().type == "cpu" and training_processes() > 1


def _start_worker(steps_done) -> None:
    """Set up a training process: one thread, its progress slots, and deaf to Ctrl-C, which
    a notebook sends its kernel's whole process group (the kernel stops waiting; the
    process finishes its run, whose model is cached, and exits with the kernel)."""
    global _steps_done
    _steps_done = steps_done
    torch.set_num_threads(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run(function: Callable, slot: int, arguments: dict):
    def report(steps: int) -> None:
        _steps_done[slot] = steps

    return function(**arguments, on_step=report)


def _forget_pool() -> None:
    """Drop a broken pool, so that the next call starts a fresh one."""
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
    _pool = None
    _outstanding.clear()


def shared_pool(processes: int) -> ProcessPoolExecutor:
    """This process's pool of `processes` one-thread training processes: started on first
    use, then reused (a different size replaces it once its runs are done)."""
    global _pool, _pool_size, _pool_steps
    if _pool is not None and _pool_size != processes:
        _pool.shutdown(wait=True)
        _pool = None
    if _pool is None:
        context = multiprocessing.get_context("spawn")  # a fresh interpreter: safe in Jupyter
        _pool_steps = context.Array("i", SLOTS)
        _pool = ProcessPoolExecutor(processes, mp_context=context, initializer=_start_worker,
                                    initargs=(_pool_steps,))
        _pool_size = processes
    return _pool


def submit(function: Callable, arguments: dict, steps: int, processes: int) -> Job:
    """Start `function(**arguments, on_step=...)` in the shared pool and return at once.
    `function` must be importable (a module's top-level function) and report its steps
    done through on_step."""
    global _next_slot
    pool = shared_pool(processes)
    slot = _next_slot % SLOTS
    _next_slot += 1
    _pool_steps[slot] = 0
    job = Job(pool.submit(_run, function, slot, arguments), slot, steps)
    _outstanding.append(job)
    return job


def wait_for(jobs: Sequence[Job], bar=None) -> list:
    """The results of `jobs`, in their order, once they are done. `bar`, a tqdm bar, follows
    these and every other run the pool had not finished when the wait began."""
    waited = {id(job) for job in jobs}
    _outstanding[:] = [job for job in _outstanding  # runs done before: no longer followed
                       if id(job) in waited or not job.future.done()]
    pending = {job.future for job in jobs}
    while pending:
        _, pending = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
        if bar is not None:
            bar.total = sum(job.steps for job in _outstanding)
            bar.n = sum(job.steps_done() for job in _outstanding)
            bar.refresh()
    results = [job.result() for job in jobs]
    _outstanding[:] = [job for job in _outstanding if id(job) not in waited]
    return results


def run_in_processes(function: Callable, calls: Sequence[dict], steps: Sequence[int],
                     processes: int, bar=None) -> list:
    """`function(**call, on_step=...)` for every call, in the shared pool of `processes`
    one-thread processes, longest first; the results in the order of `calls`."""
    longest_first = sorted(range(len(calls)), key=lambda k: -steps[k])
    jobs = {k: submit(function, calls[k], steps[k], processes) for k in longest_first}
    results = wait_for([jobs[k] for k in longest_first], bar)
    by_call = dict(zip(longest_first, results))
    return [by_call[k] for k in range(len(calls))]


def run_all(function: Callable, calls: Sequence[dict], steps: Sequence[int], bar=None) -> list:
    """`function(**call)` for every call, the results in the order of `calls`: across the
    shared pool, longest first, where `in_pool()`; else here, one after another."""
    if not in_pool():
        return [function(**call) for call in calls]
    return run_in_processes(function, calls, steps, training_processes(), bar)
