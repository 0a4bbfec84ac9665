"""The chapters' claim checks test rather than pass: the only assert on an outcome is
`== "supported"`, no chapter uses the old verdicts, and every chapter that declares a
claim shows its generated "What the tiny models showed" block."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
DECLARES = re.compile(r"comparison\.(superiority|non_inferiority|equivalence|sensitivity_control)\(")
OUTCOME_TEST = re.compile(r"\.outcome\s*(==|!=|\bnot\s+in\b|\bin\b|is\b)\s*([^\s,)\]]+)")


def code_of(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    return ["".join(c["source"]) for c in cells if c["cell_type"] == "code"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_the_only_assert_on_an_outcome_is_supported(path):
    for code in code_of(path):
        for match in OUTCOME_TEST.finditer(code):
            assert match.group(1) == "==" and match.group(2) == '"supported"', (
                f"{path.name}: {match.group(0)!r}: assert a finding is supported, nothing else")
        assert ".verdict" not in code and "comparison.compare(" not in code, (
            f"{path.name}: the old verdicts: declare the claim and test its outcome")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_chapter_that_declares_claims_shows_what_the_tiny_models_showed(path):
    code = "\n".join(code_of(path))
    if DECLARES.search(code):
        assert "viz.what_the_tiny_models_showed()" in code, (
            f"{path.name} declares claims but shows no generated block")


def test_the_scan_catches_what_it_must():
    bad = ['assert kv.outcome != "supported"', 'assert kv.outcome == "inconclusive"',
           'assert kv.outcome in ("supported", "inconclusive")']
    assert all(OUTCOME_TEST.search(line).group(0) for line in bad)
    assert all(not (OUTCOME_TEST.search(line).group(1) == "=="
                    and OUTCOME_TEST.search(line).group(2) == '"supported"') for line in bad)
    good = OUTCOME_TEST.search('assert kv.outcome == "supported"')
    assert good.group(1) == "==" and good.group(2) == '"supported"'
