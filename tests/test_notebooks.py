"""Every chapter notebook keeps the book's shape: stored without outputs, a title, the python3
kernel, a Colab install guard and a claim check. (nbval executes them separately.)"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_shape(path):
    notebook = json.loads(path.read_text())
    cells = notebook["cells"]
    code = ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and not c.get("execution_count")
               for c in cells if c["cell_type"] == "code"), "stored with outputs: strip them"
    assert notebook["metadata"]["kernelspec"]["name"] == "python3"
    assert "".join(cells[0]["source"]).startswith("# "), "the first cell must be the # Title"
    assert any("google.colab" in c for c in code), "no Colab install guard"
    assert any(re.search(r"^\s*assert\b", c, re.M) for c in code), "no claim check cell"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_fits_the_page(path):
    """The book's content column shows about 88 characters of code; longer lines scroll."""
    notebook = json.loads(path.read_text())
    long_lines = [line for c in notebook["cells"] if c["cell_type"] == "code"
                  for line in "".join(c["source"]).splitlines() if len(line) > 88]
    assert not long_lines, long_lines


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_code_cells_are_short(path):
    """A code cell fits one screen (30 lines); longer work belongs in minibert or in two
    cells."""
    notebook = json.loads(path.read_text())
    long_cells = [(index, len("".join(c["source"]).splitlines()))
                  for index, c in enumerate(notebook["cells"])
                  if c["cell_type"] == "code" and len("".join(c["source"]).splitlines()) > 30]
    assert not long_cells, f"cells (index, lines) over 30 lines: {long_cells}"
