"""Execute every chapter notebook once, one after another, and print seconds per notebook.

Fails (exit 1) if a notebook raises, takes longer than the per-notebook budget, or if all
together exceed the book's budget (design notes: 12 minutes in all, 150 s each, on a
2-core CPU). Run it on a quiet machine; the first notebook that needs a shared pre-trained
model pays for training it (use a fresh MINIBERT_CACHE to measure a cold start).

    python benchmarks/book_time.py [--total 720] [--each 150] [notebooks/05_*.ipynb ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent


def execute(path: Path) -> float:
    """Run the notebook in a fresh kernel from the notebooks folder; return wall seconds."""
    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path)
    parser.add_argument("--total", type=float, default=720.0, help="budget for all, seconds")
    parser.add_argument("--each", type=float, default=150.0, help="budget for one, seconds")
    args = parser.parse_args()
    paths = args.notebooks or sorted((ROOT / "notebooks").glob("*.ipynb"))
    seconds = {}
    for path in paths:
        seconds[path.name] = execute(path)
        print(f"{path.name:45s} {seconds[path.name]:7.1f} s", flush=True)
    total = sum(seconds.values())
    print(f"{'total':45s} {total:7.1f} s   (budget {args.total:.0f} s, {args.each:.0f} s each)")
    over = [name for name, s in seconds.items() if s > args.each]
    if over or total > args.total:
        print("over budget:", ", ".join(over) or "the total", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
