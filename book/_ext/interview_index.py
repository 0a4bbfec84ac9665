"""The interview index, built from the chapters, so that it cannot drift from them.

A chapter answers each question it serves in a markdown cell tagged "interview-answer",
in English and Chinese; the cell's metadata "interview" holds the question's id, its
wording for the index and the other chapters to link ("also": [label, chapter] pairs).
On book/interview_index.md a line `% answer CHAPTER ID [NUMBER]` (a MyST comment) marks
where that answer goes: while the page is read it becomes the question's heading, the
chapter's answer, and links to the chapter and to its rows on the Claims page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from sphinx.errors import ExtensionError

INDEX = "book/interview_index"
TAG = "interview-answer"
PLACEHOLDER = re.compile(r"^% answer (?P<chapter>\S+) (?P<answer_id>\S+)(?: (?P<number>\d+))?$",
                         re.M)


def chapter_answers(notebook: Path, text: str | None = None) -> dict[str, dict]:
    """The answers a chapter declares, by id: the metadata, and the cell's text without
    its heading line. `text` is the notebook's file, when the caller has read it."""
    answers = {}
    for cell in json.loads(text or notebook.read_text())["cells"]:
        if TAG not in cell.get("metadata", {}).get("tags", []):
            continue
        source = "".join(cell["source"]).strip()
        body = source.split("\n", 1)[1].strip() if source.startswith("#") else source
        meta = cell["metadata"]["interview"]
        answers[meta["id"]] = {**meta, "body": body}
    return answers


def entry(notebooks: Path, chapter: str, answer_id: str, number: str | None) -> str:
    """One question's entry on the index page, in MyST."""
    notebook = notebooks / f"{chapter}.ipynb"
    if not notebook.exists():
        raise ExtensionError(f"interview index: no chapter {chapter!r} in {notebooks}")
    text = notebook.read_text()
    answer = chapter_answers(notebook, text).get(answer_id)
    if answer is None:
        raise ExtensionError(f"interview index: {chapter} has no cell tagged {TAG!r} "
                             f"with id {answer_id!r}")
    heading = f"### {number}. {answer['question']}" if number else f"### {answer['question']}"
    links = [f"[Chapter](../notebooks/{chapter}.ipynb)"]
    if "exp.show()" in text:  # the chapter shows its claims
        links.append(f'<a href="claims.html#claims-{chapter}">what the tiny models showed</a>')
    links += [f"[{label}](../notebooks/{other}.ipynb)" for label, other in answer["also"]]
    return f"{heading}\n\n{answer['body']}\n\n→ " + ",\n".join(links) + "\n"


def expand(text: str, notebooks: Path) -> str:
    """The index page's text with every `% answer` line replaced by its entry."""
    return PLACEHOLDER.sub(lambda match: entry(notebooks, **match.groupdict()), text)


def fill_index(app, docname, source):
    if docname == INDEX:
        source[0] = expand(source[0], Path(app.srcdir) / "notebooks")


def reread_index(app, env, added, changed, removed):
    """The index is read again whenever anything is: its text lives in the chapters."""
    return [INDEX]


def setup(app):
    app.connect("source-read", fill_index)
    app.connect("env-get-outdated", reread_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
