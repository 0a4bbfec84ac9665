"""The Claims page is built from what the chapters' executed cells show: a two-chapter
book whose notebooks show their "What the tiny models showed" blocks gets one table row per
claim, each linking to it, and a summary with the counts and the expected failures."""

import shutil
import subprocess
from pathlib import Path

import nbformat
import yaml

from minibert import viz
from minibert.measure import comparison
from minibert.viz.claims import CLAIMS_KEY, JSON, records_in_notebook

ROOT = Path(__file__).parent.parent
GLUE_PREFIX = "application/papermill.record/"  # how myst-nb's glue stores a value
JUPYTER_BOOK = shutil.which("jupyter-book") or str(ROOT / ".venv/bin/jupyter-book")


def chapter_showing(block):
    """An executed notebook whose one code cell displayed this block and glued its records,
    as `exp.show()` does."""
    cell = nbformat.v4.new_code_cell("exp.show()", execution_count=1)
    records = {"claims": [r.record() for r in block.results]}
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={
            "text/plain": repr(block), "text/html": block._repr_html_()}),
        nbformat.v4.new_output("display_data", data={GLUE_PREFIX + JSON: records},
                               metadata={"scrapbook": {"name": CLAIMS_KEY,
                                                       "mime_prefix": GLUE_PREFIX}})]
    notebook = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# A chapter\n\n## The experiment"), cell])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    return notebook


def test_every_verdict_gets_a_row_that_links_to_it(tmp_path):
    pilot = {"seeds": [1000, 1001, 1002], "gaps": [0.3, 0.2, 0.25], "seeds_needed": 3}
    win = comparison.superiority("win", "with <projections>", "without", metric="accuracy",
                                 finding=True, headline=True, pilot=pilot)
    first = viz.what_the_tiny_models_showed(
        [win.test([0.9, 0.8, 0.85], [0.6, 0.62, 0.58], seeds=(0, 1, 2))])
    tie = comparison.equivalence("tie", "K = V", "separate", metric="accuracy", margin=0.05,
                                 finding=False)
    second = viz.what_the_tiny_models_showed(
        [tie.test([0.5, 0.51, 0.5], [0.5, 0.5, 0.51], seeds=(3, 4, 5))])
    config = {"title": "t", "execute": {"execute_notebooks": "off"},
              "sphinx": {"local_extensions": {"claims": str(ROOT / "book" / "_ext")}}}
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n- file: a\n- file: b\n- file: claims\n")
    (tmp_path / "intro.md").write_text("# Intro\n")
    nbformat.write(chapter_showing(first), tmp_path / "a.ipynb")
    nbformat.write(chapter_showing(second), tmp_path / "b.ipynb")
    (tmp_path / "claims.md").write_text(
        "# Claims\n\n```{claims-summary}\n```\n\n```{claims-table}\n```\n")
    result = subprocess.run([JUPYTER_BOOK, "build", str(tmp_path), "-W"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    html = tmp_path / "_build" / "html"
    page = (html / "claims.html").read_text()
    # the headlines (a header, a row per chapter), then a table per chapter: its header and
    # one row per verdict
    assert page.count("<tr") == 3 + 4
    assert "no headline claim yet" in page and "Pilot, on seeds 1000-1002" in page
    assert 'href="a.html#claim-win"' in page and 'href="b.html#claim-tie"' in page
    assert "with &lt;projections&gt; better than without, on accuracy" in page
    assert "K = V within ±0.05 of separate, on accuracy" in page and 'id="claims-a"' in page
    assert "equivalence, m = 0.05" in page and "observation" in page
    assert "2 claims declared: 2 supported, 0 contradicted, 0 inconclusive" in page
    assert "1 of them are findings" in page
    chapter = (html / "a.html").read_text()
    assert 'id="claim-win"' in chapter and "scored 0.25 higher than without" in chapter
    assert [r["name"] for r in records_in_notebook(chapter_showing(first))] == ["win"]
