"""The test run executes every notebook once, under nbval, and the book is built from
those executions.

- Each notebook's executed copy (its cells with nbval's outputs) is written to the folder
  named by $MINIBERT_EXECUTED_NOTEBOOKS, one per test run; a notebook with a failing cell
  also leaves a `.failed` file there, and then no book is built.
- The notebooks are scheduled first, longest first (by the seconds each took in the last
  measured test run: benchmarks/notebook_seconds.json, written by `book_time.py ci
  --record`; pyproject's `--no-loadscope-reorder` keeps xdist to this order), so that the
  two workers finish together; the book's tests come last, and their build waits for
  every notebook (`executed_notebooks`).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
SECONDS = ROOT / "benchmarks" / "notebook_seconds.json"
BOOK_TESTS = "tests/test_book.py"
COLLECTED = pytest.StashKey[list]()  # the notebooks this session runs


def executed_folder() -> Path:
    return Path(os.environ["MINIBERT_EXECUTED_NOTEBOOKS"])


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller: xdist's workers inherit this
        os.environ.setdefault("MINIBERT_EXECUTED_NOTEBOOKS",
                              tempfile.mkdtemp(prefix="minibert-executed-"))


def pytest_sessionfinish(session, exitstatus):
    """A run that passed leaves nothing behind; a failed one keeps its notebooks to read."""
    if hasattr(session.config, "workerinput"):
        return
    folder = executed_folder()
    if exitstatus == 0 and folder.name.startswith("minibert-executed-"):
        shutil.rmtree(folder, ignore_errors=True)
    elif folder.is_dir() and any(folder.iterdir()):
        print(f"\nthe notebooks as executed: {folder}")


def _is_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell"


@pytest.hookimpl(trylast=True)  # after -k and -m have deselected what they deselect
def pytest_collection_modifyitems(session, config, items):
    seconds = json.loads(SECONDS.read_text()) if SECONDS.exists() else {}

    def order(item):
        if _is_cell(item):
            return (0, -seconds.get(item.path.name, 0.0), item.path.name)
        return (2 if item.nodeid.startswith(BOOK_TESTS) else 1, 0, "")

    items.sort(key=order)  # stable: cells keep their order within a notebook
    config.stash[COLLECTED] = sorted({item.path.name for item in items if _is_cell(item)})


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if _is_cell(item) and report.failed:
        item.parent.minibert_failed = True
    return report


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After a notebook's last cell: write it with the outputs nbval collected."""
    if not _is_cell(item):
        return
    item.cell.outputs = item.test_outputs or []
    item.cell.execution_count = item.cell_num + 1
    if nextitem is not None and nextitem.parent is item.parent:
        return
    name = item.path.name
    folder = executed_folder()
    if getattr(item.parent, "minibert_failed", False):  # kept to read, never rendered
        (folder / f"{name}.failed").write_text("a cell failed under nbval\n")
    folder.mkdir(parents=True, exist_ok=True)
    temporary = folder / f".{name}.partial"
    nbformat.write(item.parent.nb, temporary)
    temporary.rename(folder / name)  # the book build never reads half a notebook


def executed_notebooks(config, timeout: float = 3600) -> Path | None:
    """The folder of this run's executed notebooks once every one is there, or None when
    this session runs no notebook (then the book build executes them itself). Fails the
    calling test if a notebook failed."""
    names = config.stash.get(COLLECTED, [])
    if not names:
        return None
    folder = executed_folder()
    deadline = time.monotonic() + timeout
    while True:
        failed = [n for n in names if (folder / f"{n}.failed").exists()]
        if failed:
            pytest.fail(f"notebooks failed under nbval, so no book is built: {failed}")
        if all((folder / n).exists() for n in names):
            return folder
        if time.monotonic() > deadline:
            missing = [n for n in names if not (folder / n).exists()]
            pytest.fail(f"waited {timeout:.0f} s for the notebooks {missing}")
        time.sleep(2)
