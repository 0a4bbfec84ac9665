"""The book's execution time, both ways, from a cold model cache.

- `alone`: every chapter notebook executed once, one after another, each in a fresh
  kernel with nothing else running, as a reader runs a chapter (the zoo trains in one
  process per core). Seconds per notebook, and the zoo's share of them (seconds the
  kernel spent training or waiting for zoo models), and in all; exits 1 over the budget
  (240 s each, 30 minutes in all, on a 2-core CPU). `--cache each` gives every chapter a
  fresh cache of its own (a reader who opens only that chapter); `--cache shared`, one
  for the whole run. `--against REV` runs each notebook of git revision REV first, then
  this tree's, side by side in the same run. `--cores 1,2` runs each notebook on one
  core, then on two (the budget is checked on the last variant).
- `ci`: the notebooks as the test run executes them (`pytest -n 2` under nbval, one
  thread per worker): the wall time, and each notebook's seconds under it. `--record`
  writes those seconds to benchmarks/notebook_seconds.json, by which the test run starts
  the longest notebooks first. `--report FILE` reads the seconds from the JUnit report of
  a whole test run instead (`PYTEST_ADDOPTS=--junitxml=FILE .ci/run`), so the run that
  CI times also orders the next.

Run on a quiet machine:

    python benchmarks/book_time.py alone [notebooks/05_*.ipynb ...]
    python benchmarks/book_time.py alone --cache each --against HEAD~1 notebooks/22_*.ipynb
    python benchmarks/book_time.py ci [--record] [--report FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SECONDS = ROOT / "benchmarks" / "notebook_seconds.json"


ZOO_PROBE = ("from minibert.training import zoo\n"
             "print('zoo seconds', getattr(zoo, 'seconds_in_zoo', lambda: float('nan'))())")


def execute(path: Path, environment: dict[str, str]) -> tuple[float, float]:
    """Run the notebook in a fresh kernel from its folder, with these environment variables
    set; return its wall seconds and the seconds its kernel spent in zoo calls."""
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(ZOO_PROBE))
    saved = {name: os.environ.get(name) for name in environment}
    os.environ.update(environment)  # the kernel inherits this process's environment
    try:
        started = time.perf_counter()
        NotebookClient(notebook, timeout=1200, kernel_name="python3",
                       resources={"metadata": {"path": str(path.parent)}}).execute()
        wall = time.perf_counter() - started
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    printed = "".join(output.get("text", "") for output in notebook.cells[-1].outputs)
    slowest = sorted(enumerate(cell_seconds(notebook)), key=lambda pair: -pair[1])[:3]
    print(f"  {path.parent.parent.name}/{path.name}: slowest code cells "
          + ", ".join(f"{k}: {seconds:.0f} s" for k, seconds in slowest), flush=True)
    return wall, float(printed.split()[-1])


def cell_seconds(notebook) -> list[float]:
    """Each code cell's execution seconds (k-th code cell, as nbval counts), from the
    timing the client records in the cell's metadata."""
    seconds = []
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        timing = cell.metadata.get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        seconds.append((datetime.fromisoformat(end.replace("Z", "+00:00"))
                        - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
                       if start and end else 0.0)
    return seconds


def checkout(revision: str) -> Path:
    """A clean copy of the repository at `revision`, in a temporary folder."""
    folder = Path(tempfile.mkdtemp(prefix="minibert-rev-"))
    subprocess.run(["git", "worktree", "add", "--detach", str(folder), revision], cwd=ROOT,
                   check=True, capture_output=True)
    return folder


def alone(paths: list[Path], cache: str, against: str | None,
          cores: list[int] | None) -> dict[str, dict]:
    """Seconds of each notebook (and of its zoo calls): this tree's and `against`'s, on
    all the cores or on each number of `cores`, one variant after the other."""
    trees = {"this tree": ROOT}
    if against:
        trees = {against: checkout(against), **trees}
    every_core = sorted(os.sched_getaffinity(0))
    variants = {(f"{tree}, {n} cores" if len(trees) > 1 else f"{n} cores") if n else tree:
                (root, every_core[:n] if n else every_core)
                for tree, root in trees.items() for n in (cores or [None])}
    shared = {label: tempfile.mkdtemp(prefix="minibert-cold-") for label in variants}
    seconds = defaultdict(dict)
    try:
        for path in paths:
            for label, (root, allowed) in variants.items():
                folder = (tempfile.mkdtemp(prefix="minibert-cold-") if cache == "each"
                          else shared[label])
                environment = {"MINIBERT_CACHE": folder, "PYTHONPATH": str(root / "src")}
                os.sched_setaffinity(0, allowed)  # the kernel and its pool inherit it
                try:
                    wall, zoo_seconds = execute(root / "notebooks" / path.name, environment)
                finally:
                    os.sched_setaffinity(0, every_core)
                seconds[path.name][label] = (wall, zoo_seconds)
                print(f"{path.name:40s} {label:20s} {wall:7.1f} s   zoo {zoo_seconds:6.1f} s",
                      flush=True)
    finally:
        if against:
            subprocess.run(["git", "worktree", "remove", "--force", str(trees[against])],
                           cwd=ROOT, check=False)
    return seconds


def notebook_seconds(report: Path) -> dict[str, float]:
    """Each notebook's seconds in a JUnit report: the sum of its cells' test times."""
    seconds = defaultdict(float)
    for case in ElementTree.parse(report).iter("testcase"):
        notebook = case.get("classname")  # notebooks.01_x.ipynb for a notebook's cell
        if notebook.startswith("notebooks.") and notebook.endswith(".ipynb"):
            seconds[notebook.removeprefix("notebooks.")] += float(case.get("time"))
    return dict(sorted(seconds.items()))


def as_ci() -> tuple[float, dict[str, float]]:
    """The wall time of `pytest -n 2` over the notebooks, and each one's seconds under it."""
    report = Path(tempfile.mkdtemp()) / "notebooks.xml"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "notebooks", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={report}"], cwd=ROOT, check=True)
    return time.perf_counter() - started, notebook_seconds(report)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("way", choices=["alone", "ci"])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--total", type=float, default=1800.0, help="budget for all, seconds")
    parser.add_argument("--each", type=float, default=240.0, help="budget for one, seconds")
    parser.add_argument("--cache", choices=["shared", "each"], default="shared",
                        help="alone: one cold cache for the run, or one per chapter")
    parser.add_argument("--against", help="alone: a git revision to time side by side")
    parser.add_argument("--cores", help="alone: comma-separated numbers of cores to run "
                        "on, each in turn (for example 1,2)")
    parser.add_argument("--record", action="store_true",
                        help="ci: write the seconds to notebook_seconds.json")
    parser.add_argument("--report", type=Path,
                        help="ci: the JUnit report of a test run already made, not a new run")
    args = parser.parse_intermixed_args()
    os.environ["MINIBERT_CACHE"] = tempfile.mkdtemp(prefix="minibert-cold-")
    if args.way == "ci":
        wall, seconds = (None, notebook_seconds(args.report)) if args.report else as_ci()
        if args.record:
            SECONDS.write_text(json.dumps({k: round(v, 1) for k, v in seconds.items()},
                                          indent=1) + "\n")
        for name, value in seconds.items():
            print(f"{name:45s} {value:7.1f} s")
        wall = "" if wall is None else f"{wall:7.1f} s   "  # a report has no wall time
        print(f"{'wall time, pytest -n 2':45s} {wall}(notebook-seconds "
              f"{sum(seconds.values()):.0f})")
        return 0
    cores = [int(n) for n in args.cores.split(",")] if args.cores else None
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    seconds = alone(paths, args.cache, args.against, cores)
    labels = list(seconds[paths[0].name])
    print(f"\n| notebook | {' | '.join(f'{label} (s) | zoo (s)' for label in labels)} |")
    print("|---|" + "---:|" * (2 * len(labels)))
    for name, by_tree in seconds.items():
        cells = " | ".join(f"{wall:.0f} | {zoo:.0f}" for wall, zoo in by_tree.values())
        print(f"| {name} | {cells} |")
    ours = {name: list(by_variant.values())[-1][0] for name, by_variant in seconds.items()}
    total = sum(ours.values())
    print(f"{'total, the last variant':45s} {total:7.1f} s   (budget {args.total:.0f} s, "
          f"{args.each:.0f} s each)")
    over = [name for name, s in ours.items() if s > args.each]
    if over or total > args.total:
        print("over budget:", ", ".join(over) or "the total", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
