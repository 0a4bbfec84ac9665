"""A three-seed group of zoo models trained both ways, side by side in one run: together
as one batched model (vmap, `recipes.train_corpus_models`: the GPU path) and one process per
core with one thread each (`pretrained_corpus_models` on a CPU), alternating --repeats
times, each from a fresh cache. Wall seconds, training and start-up included.

    python benchmarks/seed_group.py            # the zoo's default recipe, seeds 0, 1, 2
    python benchmarks/seed_group.py --quick    # the quick recipe
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

from median_table import print_median_table

from minibert.training import recipes, zoo


def with_vmap(changes: dict, seeds) -> float:
    started = time.perf_counter()
    settings = [zoo.split_changes("tiny", {**changes, "seed": s}) for s in seeds]
    recipes.train_corpus_models(settings[0][0], [recipe for _, recipe in settings], progress=False)
    return time.perf_counter() - started


def with_processes(changes: dict, seeds) -> float:
    os.environ["MINIBERT_CACHE"] = tempfile.mkdtemp()
    started = time.perf_counter()
    zoo.corpus_model_directories("tiny", seeds, progress=False, **changes)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    changes = zoo.QUICK if args.quick else {}
    seeds = (0, 1, 2)
    os.environ.pop("MINIBERT_TRAIN_PROCESSES", None)  # one process per core
    times = {"together (vmap), one process": [], "one process per core, 1 thread each": []}
    for _ in range(args.repeats):
        times["together (vmap), one process"].append(with_vmap(changes, seeds))
        times["one process per core, 1 thread each"].append(with_processes(changes, seeds))
    recipe = "quick" if args.quick else "default"
    print_median_table(f"three seeds, {recipe} recipe", "wall seconds", times)


if __name__ == "__main__":
    main()
