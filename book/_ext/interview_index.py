"""The interview index, built from the chapters, so that it cannot drift from them.

A chapter answers each question it serves in a markdown cell tagged "interview-answer",
in English and Chinese; the cell's metadata "interview" holds the question's id, its
wording for the index and the other chapters to link ("also": [label, chapter] pairs).
On book/interview_index.md a line `% answer CHAPTER ID [NUMBER]` (a MyST comment) marks
where that answer goes: while the page is read it becomes the question's heading, the
chapter's answer, and an `interview-links` directive. Once every page has been read, that
directive becomes the links: to the chapter, to its rows on the Claims page when the
chapter's executed records hold any claim (the Claims extension's `minibert_claims`), and
to the other chapters named."""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.errors import ExtensionError
from sphinx.util.docutils import SphinxDirective

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
    for _, other in answer["also"]:
        if not (notebooks / f"{other}.ipynb").exists():
            raise ExtensionError(f"interview index: {chapter} links to no chapter {other!r}")
    also = "".join(f"{label} | {other}\n" for label, other in answer["also"])
    return (f"{heading}\n\n{answer['body']}\n\n"
            f"```{{interview-links}} {chapter}\n{also}```\n")


def links(chapter: str, also: list[tuple[str, str]], has_claims: bool
          ) -> list[tuple[str, str, str]]:
    """An entry's links as (text, docname, anchor): the chapter, its rows on the Claims
    page if it has claims, then the other chapters named."""
    found = [("Chapter", f"notebooks/{chapter}", "")]
    if has_claims:
        found.append(("what the tiny models showed", "book/claims", f"claims-{chapter}"))
    return found + [(label, f"notebooks/{other}", "") for label, other in also]


class interview_links(nodes.General, nodes.Element):
    """Where an entry's links go; filled in once every page has been read."""


class InterviewLinks(SphinxDirective):
    required_arguments = 1
    has_content = True

    def run(self):
        also = [tuple(part.strip() for part in line.split("|", 1)) for line in self.content
                if line.strip()]
        return [interview_links(chapter=self.arguments[0], also=also)]


def fill_links(app, doctree, fromdocname):
    """Each entry's links, the Claims page's only where the chapter recorded claims."""
    claims = getattr(app.env, "minibert_claims", {})
    for placeholder in doctree.findall(interview_links):
        chapter = placeholder["chapter"]
        paragraph = nodes.paragraph(text="→ ")
        for k, (text, docname, anchor) in enumerate(
                links(chapter, placeholder["also"], bool(claims.get(f"notebooks/{chapter}")))):
            uri = app.builder.get_relative_uri(fromdocname, docname)
            paragraph += nodes.Text(", " if k else "")
            paragraph += nodes.reference("", text, internal=True,
                                         refuri=uri + (f"#{anchor}" if anchor else ""))
        placeholder.replace_self(paragraph)


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
    app.add_node(interview_links)
    app.add_directive("interview-links", InterviewLinks)
    app.connect("doctree-resolved", fill_links)
    app.connect("source-read", fill_index)
    app.connect("env-get-outdated", reread_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
