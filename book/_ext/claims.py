"""The Claims page: every declared claim of the book, collected from the executed chapters
at build time, so that it cannot drift from what the chapters measured.

A chapter's experiment glues its claim records as JSON (`minibert.viz.claims.CLAIMS_KEY`),
and the build writes every notebook's glued values beside its executed copy, as
`jupyter_execute/DOCNAME.glue.json`. While reading each page this extension takes the
records from that file; each links to its row in the chapter's block (`claims.anchor`). On
book/claims.md, the `claims-summary` directive becomes a row per chapter for its headline
claim (outcome, interval, pilot), the counts of outcomes and the book's expected number of
failing findings on fresh seeds; the
`claims-table` directive becomes, for each chapter, its title and a table with a row for
every claim (declaration beside outcome), each linking to its row in the chapter's block.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

COLUMNS = ("claim", "role", "kind, m or δ", "n", "mean gap (95% interval)", "outcome",
           "replicates")


class claims_table(nodes.General, nodes.Element):
    """Where the table goes; filled in once every page has been read."""


class claims_summary(nodes.General, nodes.Element):
    """Where the headlines and counts go; filled in once every page has been read."""


class ClaimsTable(SphinxDirective):
    def run(self):
        return [claims_table()]


class ClaimsSummary(SphinxDirective):
    def run(self):
        return [claims_summary()]


def chapter_anchor(docname: str) -> str:
    """The Claims page's anchor of a chapter's rows: claims-02_no_qkv_projections."""
    return "claims-" + docname.rsplit("/", 1)[-1]


def collect_claims(app, doctree):
    """Note every claim of the page just read, from the records its notebook glued."""
    from minibert.viz.claims import CLAIMS_KEY, JSON, anchor

    docname = app.env.docname
    glued = Path(app.env.mystnb_config.output_folder) / f"{docname}.glue.json"
    records = []
    if glued.is_file():
        data = json.loads(glued.read_text()).get(CLAIMS_KEY)
        records = data["data"][JSON]["claims"] if data else []
    claims = getattr(app.env, "minibert_claims", {})
    claims[docname] = [{"record": r, "anchor": anchor(r["name"])} for r in records]
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


def _declared(record: dict) -> str:
    """The declaration in a few words: "non-inferiority, m = 0.03"."""
    if record.get("controls"):
        return f"control of {record['controls']}, m = {record['control_margin']:g}"
    if record["kind"] == "superiority":
        return "superiority" + (f", δ = {record['minimum_effect']:g}"
                                if record["minimum_effect"] else "")
    return f"{record['kind']}, m = {record['margin']:g}"


def _table(app, fromdocname: str, docname: str, found: list[dict]) -> nodes.table:
    """One chapter's claims: a row each, the claim linking to its row in the chapter."""
    table = nodes.table(classes=["minibert-claims"])
    group = nodes.tgroup(cols=len(COLUMNS))
    table += group
    group.extend(nodes.colspec(colwidth=width) for width in (5, 2, 2, 1, 3, 2, 1))
    head = nodes.thead()
    head += nodes.row("", *[_cell(name) for name in COLUMNS])
    body = nodes.tbody()
    for claim in found:
        record = claim["record"]
        body += nodes.row("", *[
            _cell(_link(app, fromdocname, docname, claim["anchor"], record["title"])),
            _cell(record["role"]),
            _cell(_declared(record)),
            _cell(record["n"]),
            _cell(f"{_number(record['mean_gap'])} ({_number(record['low'])} to "
                  f"{_number(record['high'])})"),
            _cell(record["outcome"]),
            _cell(f"{record['replication']:.3f}"),
        ])
    group += head
    group += body
    return table


HEADLINE_COLUMNS = ("chapter", "headline", "outcome", "mean gap (95% interval)", "pilot")


def _headlines(app, fromdocname: str, claims: dict) -> nodes.table:
    """One row per chapter that compares arms: its headline claim (or that it has none),
    its outcome, its interval in the metric's units, and its pilot."""
    from minibert.viz.claims import pilot_text

    table = nodes.table(classes=["minibert-headlines"])
    group = nodes.tgroup(cols=len(HEADLINE_COLUMNS))
    table += group
    group.extend(nodes.colspec(colwidth=width) for width in (2, 4, 1, 2, 4))
    head = nodes.thead()
    head += nodes.row("", *[_cell(name) for name in HEADLINE_COLUMNS])
    body = nodes.tbody()
    for docname in sorted(claims):
        title = app.env.titles[docname].astext() if docname in app.env.titles else docname
        chapter = _link(app, fromdocname, docname, "", title)
        headlines = [c for c in claims[docname] if c["record"].get("headline")]
        if not headlines:
            body += nodes.row("", _cell(chapter), _cell("no headline claim yet"),
                              *[_cell("") for _ in range(3)])
        for claim in headlines:
            record = claim["record"]
            body += nodes.row("", *[
                _cell(chapter),
                _cell(_link(app, fromdocname, docname, claim["anchor"],
                            f"{record['title']} ({record['metric']}; {record['role']})")),
                _cell(record["outcome"]),
                _cell(f"{_number(record['mean_gap'])} ({_number(record['low'])} to "
                      f"{_number(record['high'])}), n = {record['n']}"),
                _cell(pilot_text(record)),
            ])
    group += head
    group += body
    return table


def _summary(app, fromdocname: str, claims: dict) -> list[nodes.Node]:
    """The headline of every chapter, then the counts and the expected failing findings."""
    from minibert.measure.comparison import OUTCOMES, expected_failures

    records = [c["record"] for d in sorted(claims) for c in claims[d]]
    findings = [r for r in records if r["finding"]]
    counts = ", ".join(f"{sum(r['outcome'] == o for r in records)} {o}" for o in OUTCOMES)
    failing = [r for r in findings if r["outcome"] != "supported"]
    expected = expected_failures(records)
    text = (f"{len(records)} claims declared: {counts}. {len(findings)} of them are findings "
            f"(asserted), {len(records) - len(findings)} observations (shown, never "
            f"asserted); in this build {len(findings) - len(failing)} of the findings are "
            f"supported. Expected number of findings that fail on a fresh set of seeds (the "
            f"sum of one minus each finding's replication estimate): {expected:.3f}. A reader "
            f"who reruns the whole book at other seeds should see a failing claim check about "
            f"{expected:.2g} times per run, that is once in about "
            f"{(1 / expected) if expected else float('inf'):.0f} runs.")
    return [_headlines(app, fromdocname, claims), nodes.paragraph(text=text)]


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
    for placeholder in doctree.findall(claims_summary):
        placeholder.replace_self(_summary(app, fromdocname, {
            d: c for d, c in claims.items() if c}) if any(
            claims.values()) else [nodes.paragraph(text="No chapter records a claim.")])


def setup(app):
    app.add_node(claims_table)
    app.add_directive("claims-table", ClaimsTable)
    app.add_node(claims_summary)
    app.add_directive("claims-summary", ClaimsSummary)
    app.connect("doctree-read", collect_claims)
    app.connect("env-purge-doc", purge_claims)
    app.connect("env-merge-info", merge_claims)
    app.connect("doctree-resolved", fill_tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
