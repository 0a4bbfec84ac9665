"""Colab ships ipywidgets 7 (7.7.1), where widgets display through `_ipython_display_`
rather than `_repr_mimebundle_`. Under that version, in a real kernel, an explorer and a
slider carry a live widget view beside their static HTML, a control recomputes the
figure, and a chapter with an explorer runs. ipywidgets 7.7.1 is installed from PyPI into
a folder put first on the kernel's path; everything else is the pinned environment."""

import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from minibert.viz import WIDGET_VIEW

ROOT = Path(__file__).parent.parent


@pytest.fixture(scope="module")
def ipywidgets_7(tmp_path_factory):
    """A folder holding ipywidgets 7.7.1 and the one package it needs that 8 does not."""
    folder = tmp_path_factory.mktemp("ipywidgets7")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target",
                    str(folder), "ipywidgets==7.7.1", "ipython_genutils==0.2.0"], check=True)
    return folder


def run_in_kernel(notebook, folder: Path, cwd: Path):
    """Execute a notebook in a kernel whose imports find `folder` first."""
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(folder), previous]))
    try:
        NotebookClient(notebook, timeout=600, kernel_name="python3",
                       resources={"metadata": {"path": str(cwd)}}).execute()
    finally:
        if previous is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = previous
    return notebook


def outputs(cell) -> list[dict]:
    return [o.get("data", {}) for o in cell.outputs if o.output_type in ("display_data",
                                                                        "execute_result")]


def test_explorer_and_slider_are_live_under_ipywidgets_7(ipywidgets_7, tmp_path):
    cells = [
        "import ipywidgets\nimport matplotlib.pyplot as plt\nfrom minibert import viz\n"
        "from minibert.viz import explorer\n"
        "print(ipywidgets.__version__)\n"
        "def draw(n, masked=False):\n"
        "    fig, ax = plt.subplots()\n"
        "    ax.plot(range(n))\n"
        "    ax.set_title(f'{n} {masked}')\n"
        "    return fig",
        "explorer.Explorer(draw, n=explorer.number([2, 3]), masked=explorer.toggle('mask'))",
        "viz.slider(draw, [2, 3], label='n')",
        "view = explorer.Explorer(draw, n=explorer.number([2, 3])).widget()\n"
        "before = view.children[-1].value\n"
        "view.children[0].value = 3  # move the slider: the figure is recomputed\n"
        "assert view.children[-1].value != before and view.children[1].value == ''",
    ]
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    run_in_kernel(notebook, ipywidgets_7, tmp_path)
    assert notebook.cells[0].outputs[0]["text"].strip() == "7.7.1"
    for cell in notebook.cells[1:3]:  # an explorer, and a slider (an explorer of one control)
        (data,) = outputs(cell)
        assert "minibert-explorer" in data["text/html"]  # the static twin, for a page

        assert data[WIDGET_VIEW]["model_id"]  # the live widget, for Colab


def test_a_chapter_with_an_explorer_runs_under_ipywidgets_7(ipywidgets_7):
    chapter = ROOT / "notebooks" / "07_attention_cost.ipynb"
    notebook = run_in_kernel(nbformat.read(chapter, as_version=4), ipywidgets_7,
                             chapter.parent)
    views = [data for cell in notebook.cells if cell.cell_type == "code"
             for data in outputs(cell) if "minibert-explorer" in data.get("text/html", "")]
    assert views and all(data[WIDGET_VIEW]["model_id"] for data in views)
