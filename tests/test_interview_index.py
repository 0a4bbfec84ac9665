"""The interview index is built from the chapters: every question of the syllabus keeps
its entry, every chapter opens with its tagged answer (English and Chinese, no
verdicts), and every tagged answer appears on the index exactly once."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
sys.path.insert(0, str(ROOT / "book" / "_ext"))
from interview_index import PLACEHOLDER, TAG, chapter_answers, expand, links  # noqa: E402

NOTEBOOKS = ROOT / "notebooks"
INDEX = (ROOT / "book" / "interview_index.md").read_text()
CHAPTERS = sorted(NOTEBOOKS.glob("*.ipynb"))
CHINESE = re.compile(r"[\u4e00-\u9fff]")
VERDICT_WORDS = re.compile(r"\b(supported|inconclusive|contradicted|finding|observation)s?\b"
                           r"|\{glue", re.I)


def entries(text: str) -> dict[str, list[str]]:
    """The entries' headings under each of the index's sections of questions."""
    sections, current = {}, None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:]
            sections[current] = []
        elif line.startswith("### ") and current is not None:
            sections[current].append(line[4:])
    return sections


def test_every_question_keeps_its_entry():
    sections = entries(expand(INDEX, NOTEBOOKS))
    numbered = sections["Sixteen questions on Transformer and BERT"]
    assert [h.split(".")[0] for h in numbered] == [str(k) for k in range(1, 17)]
    assert len(sections["Questions from the walk through BERT"]) == 12
    beyond = sections["Beyond the syllabus"]  # Part VI's questions, after the syllabus'
    assert beyond and list(sections).index("Beyond the syllabus") > list(sections).index(
        "More questions the chapters answer")


def test_part_six_answers_only_beyond_the_syllabus():
    """A chapter of Part VI (numbered 50 and up) answers questions the syllabus does not
    ask: its entries sit in the section beyond it, and only there."""
    beyond = INDEX.split("## Beyond the syllabus", 1)[1].split("\n## ", 1)[0]
    part_six = [m["chapter"] for m in PLACEHOLDER.finditer(INDEX) if m["chapter"] >= "50"]
    assert part_six and all(m["chapter"] >= "50" for m in PLACEHOLDER.finditer(beyond))
    assert sorted(m["chapter"] for m in PLACEHOLDER.finditer(beyond)) == sorted(part_six)


def test_every_tagged_answer_is_on_the_index_once():
    placed = [(m["chapter"], m["answer_id"]) for m in PLACEHOLDER.finditer(INDEX)]
    assert len(placed) == len(set(placed))
    declared = [(p.stem, answer_id) for p in sorted(NOTEBOOKS.glob("*.ipynb"))
                for answer_id in chapter_answers(p)]
    assert sorted(placed) == sorted(declared)


def test_an_entry_links_its_chapter_and_its_claims():
    text = expand("% answer 12_embedding_sum input", NOTEBOOKS)
    assert text.startswith("### What is BERT's input?\n")
    assert "```{interview-links} 12_embedding_sum\nWordPiece | 11_wordpiece\n" in text
    assert links("12_embedding_sum", [("WordPiece", "11_wordpiece")], has_claims=True) == [
        ("Chapter", "notebooks/12_embedding_sum", ""),
        ("what the tiny models showed", "book/claims", "claims-12_embedding_sum"),
        ("WordPiece", "notebooks/11_wordpiece", "")]
    assert [text for text, _, _ in links("40_loading_real_weights", [], has_claims=False)
            ] == ["Chapter"], "no Claims link where the chapter recorded no claim"


def test_a_missing_answer_is_named():
    with pytest.raises(Exception, match="no cell tagged 'interview-answer' with id 'nothing'"):
        expand("% answer 12_embedding_sum nothing", NOTEBOOKS)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_a_chapter_opens_with_its_answer(path):
    cells = json.loads(path.read_text())["cells"]
    assert cells[1]["cell_type"] == "code", "the question, then the setup cell"
    assert {"hide-input", "remove-output"} <= set(cells[1]["metadata"].get("tags", [])), \
        "the book collapses the setup cell, so that the answer is on the first screen"
    k = 2
    assert TAG in cells[k]["metadata"].get("tags", []), "the answer comes right after setup"
    while TAG in cells[k]["metadata"].get("tags", []):
        text = "".join(cells[k]["source"])
        paragraphs = text.split("\n\n")[1:]
        assert any(not CHINESE.search(p) for p in paragraphs), "no English answer"
        assert any(CHINESE.search(p) for p in paragraphs), "no Chinese answer"
        assert not VERDICT_WORDS.search(text), f"verdict language in the answer: {text[:60]}"
        k += 1
    if "exp.show()" in path.read_text():
        opening = "".join(cells[k]["source"])
        assert opening.startswith("## What the tiny models showed")
        assert "```{glue} tiny_models_showed" in opening
