"""The Claims page: every comparative claim of the book, collected from the executed
chapters at build time, so that it cannot drift from what the chapters measured.

A chapter's verdict cell shows `minibert.measure.comparison.Comparison` objects; each
renders as an HTML block of class "minibert-claim" holding its record as JSON. While
reading each page this extension finds those blocks and gives each an anchor; the
`claims-table` directive (on book/claims.md) becomes, for each chapter, its title and a
table with a row for every record, each linking to its verdict.
"""

from __future__ import annotations

import html
import json
import re

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

CLAIM = re.compile(r'<div class="minibert-claim" data-claim="([^"]*)"')
COLUMNS = ("claim", "metric", "n", "mean gap (95% interval)", "verdict")


class claims_table(nodes.General, nodes.Element):
    """Where the table goes; filled in once every page has been read."""


class ClaimsTable(SphinxDirective):
    def run(self):
        return [claims_table()]


def chapter_anchor(docname: str) -> str:
    """The Claims page's anchor of a chapter's rows: claims-02_no_qkv_projections."""
    return "claims-" + docname.rsplit("/", 1)[-1]


def collect_claims(app, doctree):
    """Note every claim on the page just read, and anchor its block."""
    docname = app.env.docname
    found = []
    for raw in doctree.findall(nodes.raw):
        if "html" not in raw.get("format", "") or "minibert-claim" not in raw.astext():
            continue
        text = raw.astext()
        for match in CLAIM.finditer(text):
            anchor = f"claim-{docname.rsplit('/', 1)[-1]}-{len(found) + 1}"
            record = json.loads(html.unescape(match.group(1)))
            found.append({"record": record, "anchor": anchor})
            text = text.replace(match.group(0), f'<div id="{anchor}"' + match.group(0)[4:], 1)
        raw.clear()
        raw += nodes.Text(text)
    claims = getattr(app.env, "minibert_claims", {})
    claims[docname] = found
    app.env.minibert_claims = claims


def purge_claims(app, env, docname):
    getattr(env, "minibert_claims", {}).pop(docname, None)


def merge_claims(app, env, docnames, other):
    claims = getattr(env, "minibert_claims", {})
    claims.update({d: c for d, c in getattr(other, "minibert_claims", {}).items()
                   if d in docnames})
    env.minibert_claims = claims


def _cell(content) -> nodes.entry:
    entry = nodes.entry()
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=str(content))
    return entry


def _link(app, fromdocname: str, docname: str, anchor: str, text: str) -> nodes.paragraph:
    uri = app.builder.get_relative_uri(fromdocname, docname) + (f"#{anchor}" if anchor else "")
    paragraph = nodes.paragraph()
    paragraph += nodes.reference("", text, internal=True, refuri=uri)
    return paragraph


def _number(value) -> str:
    return "" if value is None else f"{value:.3g}"


def _verdict(record: dict) -> str:
    """The verdict in words: "with better", "equivalent within ±0.02", "undecided"."""
    if record["verdict"] == "equivalent":
        return f"equivalent within ±{record['margin']:g}"
    if record["verdict"] in ("A better", "B better"):
        winner = record["a"] if record["verdict"] == "A better" else record["b"]
        return f"{winner} {record.get('better', 'better')}"
    margin = f" (margin ±{record['margin']:g})" if record["margin"] else ""
    return "undecided" + margin


def _table(app, fromdocname: str, docname: str, found: list[dict]) -> nodes.table:
    """One chapter's claims: a row each, the claim linking to its verdict."""
    table = nodes.table(classes=["minibert-claims"])
    group = nodes.tgroup(cols=len(COLUMNS))
    table += group
    group.extend(nodes.colspec(colwidth=width) for width in (4, 3, 1, 3, 2))
    head = nodes.thead()
    head += nodes.row("", *[_cell(name) for name in COLUMNS])
    body = nodes.tbody()
    for claim in found:
        record = claim["record"]
        body += nodes.row("", *[
            _cell(_link(app, fromdocname, docname, claim["anchor"], record["claim"])),
            _cell(f"{record['metric']}: {record['a']} minus {record['b']}"),
            _cell(record["n"]),
            _cell(f"{_number(record['mean_gap'])} ({_number(record['low'])} to "
                  f"{_number(record['high'])})"),
            _cell(_verdict(record)),
        ])
    group += head
    group += body
    return table


def fill_tables(app, doctree, fromdocname):
    """Replace the placeholder by a heading and a table for each chapter with claims."""
    claims = getattr(app.env, "minibert_claims", {})
    for placeholder in doctree.findall(claims_table):
        content = []
        for docname in sorted(d for d in claims if claims[d]):
            title = app.env.titles[docname].astext() if docname in app.env.titles else docname
            heading = nodes.rubric(ids=[chapter_anchor(docname)])
            heading += nodes.reference("", title, internal=True,
                                       refuri=app.builder.get_relative_uri(fromdocname, docname))
            content += [heading, _table(app, fromdocname, docname, claims[docname])]
        placeholder.replace_self(content or [nodes.paragraph(text="No chapter records a claim.")])


def setup(app):
    app.add_node(claims_table)
    app.add_directive("claims-table", ClaimsTable)
    app.connect("doctree-read", collect_claims)
    app.connect("env-purge-doc", purge_claims)
    app.connect("env-merge-info", merge_claims)
    app.connect("doctree-resolved", fill_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
