"""Every chapter notebook keeps the book's shape: stored without outputs, a title, the python3
kernel, a Colab install guard and a claim check. (nbval executes them separately.)"""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))


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


RE_DERIVED = {  # what a chapter would re-derive, and the one place the package holds it
    r"@\s*\w+\.transpose\(-2,\s*-1\)\)?\s*\*": "attention scores: BertSelfAttention.scores",
    r"layer_norm_position\s*==": "where the LayerNorm sits: BertSublayerOutput.sublayer_input",
    r"masker\(batch[^\n]*\n(?:.*\n)*?.*(?:\.argmax\(|cross_entropy\()":
        "a masked-LM accuracy or loss: training.trainer.masked_lm_scores",
}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_no_chapter_re_derives_what_the_package_computes_in_one_place(path):
    """A chapter calls the package's one attention score, LayerNorm placement and masked-LM
    scoring, rather than a copy that would drift from the model's when a variant changes it."""
    cells = json.loads(path.read_text())["cells"]
    for index, cell in enumerate(cells):
        if cell["cell_type"] != "code":
            continue
        code = "".join(cell["source"])
        for pattern, place in RE_DERIVED.items():
            assert not re.search(pattern, code), f"cell {index} re-derives {place}"
