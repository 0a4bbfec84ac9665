"""The book's execution time, both ways, from a cold model cache.

- `alone`: every chapter notebook executed once, one after another, each in a fresh
  kernel with nothing else running, as a reader runs a chapter (groups of seeds train in
  one process per core). Seconds per notebook and in all; exits 1 over the budget (design
  notes: 240 s each, 18 minutes in all, on a 2-core CPU).
- `ci`: the notebooks as the test run executes them (`pytest -n 2` under nbval, one
  thread per worker): the wall time, and each notebook's seconds under it. `--record`
  writes those seconds to benchmarks/notebook_seconds.json, by which the test run starts
  the longest notebooks first.

Each way uses a fresh MINIBERT_CACHE, so the first notebook that needs a shared model pays
for training it. Run on a quiet machine:

    python benchmarks/book_time.py alone [notebooks/05_*.ipynb ...]
    python benchmarks/book_time.py ci [--record]
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
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SECONDS = ROOT / "benchmarks" / "notebook_seconds.json"


def execute(path: Path) -> float:
    """Run the notebook in a fresh kernel from the notebooks folder; return wall seconds."""
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=1200, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - started


def alone(paths: list[Path]) -> dict[str, float]:
    seconds = {}
    for path in paths:
        seconds[path.name] = execute(path)
        print(f"{path.name:45s} {seconds[path.name]:7.1f} s", flush=True)
    return seconds


def as_ci() -> tuple[float, dict[str, float]]:
    """The wall time of `pytest -n 2` over the notebooks, and each one's seconds under it."""
    report = Path(tempfile.mkdtemp()) / "notebooks.xml"
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", "notebooks", "-q", "-p", "no:cacheprovider",
                    f"--junitxml={report}"], cwd=ROOT, check=True)
    wall = time.perf_counter() - started
    seconds = defaultdict(float)
    for case in ElementTree.parse(report).iter("testcase"):
        notebook = case.get("classname").removeprefix("notebooks.")  # notebooks.01_x.ipynb
        seconds[notebook] += float(case.get("time"))
    return wall, dict(sorted(seconds.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("way", choices=["alone", "ci"])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--total", type=float, default=1080.0, help="budget for all, seconds")
    parser.add_argument("--each", type=float, default=240.0, help="budget for one, seconds")
    parser.add_argument("--record", action="store_true",
                        help="ci: write the seconds to notebook_seconds.json")
    args = parser.parse_args()
    os.environ["MINIBERT_CACHE"] = tempfile.mkdtemp(prefix="minibert-cold-")
    if args.way == "ci":
        wall, seconds = as_ci()
        if args.record:
            SECONDS.write_text(json.dumps({k: round(v, 1) for k, v in seconds.items()},
                                          indent=1) + "\n")
        for name, value in seconds.items():
            print(f"{name:45s} {value:7.1f} s")
        print(f"{'wall time, pytest -n 2':45s} {wall:7.1f} s   "
              f"(notebook-seconds {sum(seconds.values()):.0f})")
        return 0
    seconds = alone(args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb")))
    total = sum(seconds.values())
    print(f"{'total':45s} {total:7.1f} s   (budget {args.total:.0f} s, {args.each:.0f} s each)")
    over = [name for name, s in seconds.items() if s > args.each]
    if over or total > args.total:
        print("over budget:", ", ".join(over) or "the total", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
