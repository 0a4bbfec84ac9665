"""Processes and threads for training on a small CPU, side by side in one run.

The zoo's tiny default pre-training step (batch 64 rows x 64 tokens, dropout off) runs in
three layouts, alternating --repeats times so that noise hits all alike: one process with
2 threads, two processes with 1 thread each, and two processes with 2 threads each (the
test run's old setting). Each process times --steps steps after a few warm-up steps; the
table gives the median steps per second of all processes together.

    python benchmarks/threads.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from median_table import print_median_table

LAYOUTS = {"1 process x 2 threads": (1, 2), "2 processes x 1 thread": (2, 1),
           "2 processes x 2 threads": (2, 2)}


def steps_per_second(threads: int, steps: int) -> float:
    """In a worker process: the default recipe's training step rate on `threads` threads."""
    import torch

    torch.set_num_threads(threads)
    from minibert.training import recipes
    from minibert.training.trainer import train

    config, recipe = recipes.split_changes("tiny", {})
    pairs, _ = recipes.corpus_data(recipe, recipes.corpus_tokenizer())
    model = recipes.initial_model(config, recipe)
    masker = recipes.masker_of(recipe, recipes.corpus_tokenizer())
    train(model, pairs, steps=3, batch_size=recipe.batch_size, masker=masker, progress=False,
          device="cpu")  # warm-up: allocations, first calls
    started = time.perf_counter()
    train(model, pairs, steps=steps, batch_size=recipe.batch_size, masker=masker,
          progress=False, device="cpu")
    return steps / (time.perf_counter() - started)


def run_layout(processes: int, threads: int, steps: int) -> float:
    """Steps per second of `processes` workers started at once, added up."""
    command = [sys.executable, __file__, "--worker", str(threads), "--steps", str(steps)]
    workers = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
               for _ in range(processes)]
    return sum(json.loads(w.communicate()[0])["steps_per_second"] for w in workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", type=int, help=argparse.SUPPRESS)  # threads, in a worker
    args = parser.parse_args()
    if args.worker:
        print(json.dumps({"steps_per_second": steps_per_second(args.worker, args.steps)}))
        return
    rates = {name: [] for name in LAYOUTS}
    for _ in range(args.repeats):
        for name, (processes, threads) in LAYOUTS.items():
            rates[name].append(run_layout(processes, threads, args.steps))
    print_median_table("layout", "steps/s, all processes", rates)


if __name__ == "__main__":
    main()
