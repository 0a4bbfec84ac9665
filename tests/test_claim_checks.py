"""Every chapter's claims go through its experiment: a chapter that makes one shows what
the tiny models showed and checks its findings with `exp.check()`, the one place that
asserts an outcome; and no chapter asks the zoo for models behind its experiment's back."""

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).parent.parent / "notebooks").glob("*.ipynb"))
OUTCOME = re.compile(r"\.outcome\b")
BEHIND_THE_EXPERIMENT = re.compile(
    r"zoo\.(prefetch|start|pretrained_corpus_models?|training_records?|corpus_model_director)"
    r"|comparison\.(superiority|non_inferiority|equivalence|sensitivity_control)\(")


def code_of(path: Path) -> str:
    cells = json.loads(path.read_text())["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_a_chapter_with_an_experiment_shows_and_checks_it(path):
    code = code_of(path)
    assert not OUTCOME.search(code), f"{path.name}: outcomes are asserted by exp.check()"
    assert not BEHIND_THE_EXPERIMENT.search(code), (
        f"{path.name}: {BEHIND_THE_EXPERIMENT.search(code).group(0)}: name arms and "
        f"declare claims on the chapter's Experiment")
    if "Experiment(" in code:
        assert code.count("Experiment(") == 1, f"{path.name}: one experiment per chapter"
        assert "exp.check()" in code, f"{path.name} never checks its experiment"
        if re.search(r"exp\.(superiority|non_inferiority|equivalence)\(", code):
            assert "exp.show()" in code, f"{path.name} declares claims but never shows them"
