"""Every chapter's claims drawn: paired seeds, a forest plot, "What the tiny models showed";
and their records, glued as JSON under CLAIMS_KEY, so that the book's build writes them
beside the executed notebook (`NOTEBOOK.glue.json`), where the Claims page, the offsets
table and the tests read them (`records_in_notebook`)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

import matplotlib.pyplot as plt

from .core import figure_png


def paired_seeds(ax, comparisons: Sequence, ylabel: str = "", title: str = ""):
    """Paired comparisons side by side on one axes: for each, every seed's A and B joined by
    a line labelled with its seed (the pairing is what the outcome reads), and the outcome
    under its two columns.
    `comparisons` are `minibert.measure.comparison.Result`s."""
    for k, result in enumerate(comparisons):
        a, b = result.values
        x = (2.5 * k, 2.5 * k + 1)
        for seed, va, vb in zip(result.seeds, a, b):
            ax.plot(x, (va, vb), "o-", color="0.55", markersize=4, linewidth=1)
            ax.annotate(f"seed {seed}", (x[1], vb), xytext=(4, 0), textcoords="offset points",
                        fontsize=7, va="center", color="0.4")
        ax.plot(x, (sum(a) / len(a), sum(b) / len(b)), "s-", color="C3", markersize=7,
                linewidth=2, label="mean of the seeds" if k == 0 else None)
        ax.text(2.5 * k + 0.5, -0.16, result.outcome, transform=ax.get_xaxis_transform(),
                ha="center", va="top", fontsize=8)
    ax.set_xticks([x for k in range(len(comparisons)) for x in (2.5 * k, 2.5 * k + 1)],
                  [name for r in comparisons for name in (r.a, r.b)], fontsize=8)
    ax.set_xlim(-0.5, 2.5 * len(comparisons) - 1)
    ax.set(ylabel=ylabel, title=title or f"each line one seed ({len(comparisons[0].seeds)} seeds)")
    ax.legend(fontsize=8)
    return ax


OUTCOME_COLORS = {"supported": "C2", "inconclusive": "0.55", "contradicted": "C3"}


def _forest_scale(record: dict) -> tuple[float, str]:
    """The unit a claim's interval is drawn in: its margin, its minimum effect, or (for a
    plain superiority claim) its own half-width, so that rows of different metrics share
    one axis."""
    for key in ("margin", "control_margin", "minimum_effect"):
        if record.get(key):
            return record[key], {"minimum_effect": "δ"}.get(key, "m")
    return (record["half_width"] or 1.0), "half-width"


def forest_plot(records: Sequence[dict], title: str = "") -> plt.Figure:
    """One row per claim: the interval of A's advantage (higher is better), in units of its
    margin m, minimum effect δ or half-width, against 0 and its threshold; filled for a
    finding, hollow for an observation, coloured by outcome."""
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.32 * len(records)))
    for row, record in enumerate(records):
        y = len(records) - 1 - row
        scale, unit = _forest_scale(record)
        sign = 1 if record["higher_is_better"] else -1
        low, high = sorted((sign * record["low"] / scale, sign * record["high"] / scale))
        color = OUTCOME_COLORS[record["outcome"]]
        ax.plot((low, high), (y, y), color=color, linewidth=2.5)
        ax.plot(sign * record["mean_gap"] / scale, y, "o", color=color, markersize=6,
                markerfacecolor=color if record["finding"] else "white")
        thresholds = {"superiority": [1] if record["minimum_effect"] else [],
                      "non-inferiority": [-1], "equivalence": [-1, 1]}[record["kind"]]
        for x in thresholds:
            ax.plot((x, x), (y - 0.35, y + 0.35), color="k", linewidth=1)
        ax.text(1.01, y, f"{record['outcome']} (÷{unit})", transform=ax.get_yaxis_transform(),
                va="center", fontsize=7, color=color)
    ax.axvline(0, color="k", linewidth=0.8, linestyle=":")
    ax.set_yticks(range(len(records)),
                  [_shorten(r["title"]) for r in reversed(records)], fontsize=7)
    ax.set_ylim(-0.7, len(records) - 0.3)
    ax.set_xlabel("A's advantage over B, 95% interval, in units of the claim's margin m, "
                  "minimum effect δ or half-width (ticks: the thresholds)", fontsize=8)
    ax.set_title(title or "Each claim's interval (filled: finding, hollow: observation)",
                 fontsize=9)
    return fig


def _shorten(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class _Words(str):
    """Text that glue shows as it is (a str's repr would add quotes)."""

    def __repr__(self) -> str:
        return str(self)


class TinyModelsShowed:
    """A chapter's "What the tiny models showed" block: its forest plot, one line per claim,
    and the records the Claims page collects."""

    def __init__(self, results: Sequence):
        self.results = list(results)

    def __repr__(self) -> str:
        return "\n".join(f"{r.claim.role} ({r.claim.kind}): {r.sentence()}"
                         for r in self.results)

    def _repr_html_(self) -> str:
        records = [r.record() for r in self.results]
        if not records:
            return "<p>This chapter declares no comparison.</p>"
        png = base64.b64encode(figure_png(forest_plot(records), dpi=90)).decode()
        rows = "".join(
            f"<tr id=\"{anchor(rec['name'])}\"><td>"
            f"{'Finding' if rec['finding'] else 'Observation'}, "
            f"{rec['kind']}</td><td>{html.escape(rec['title'])}</td>"
            f"<td><b>{rec['outcome']}</b></td><td>{rec['mean_gap']:.3g} "
            f"({rec['low']:.3g} to {rec['high']:.3g}), n = {rec['n']}"
            f"{_margin_text(rec)}</td><td>{rec['replication']:.3f}</td>"
            f"<td>{html.escape(_notes(rec))}</td></tr>" for rec in records)
        return (f'<div class="minibert-showed"><img alt="forest plot of the claims" '
                f'style="max-width:100%" src="data:image/png;base64,{png}">'
                f'<table class="minibert-showed-table"><tr><th>kind</th><th>claim</th>'
                f"<th>outcome</th><th>mean gap (95% interval)</th><th>replicates</th>"
                f"<th>notes</th></tr>{rows}</table></div>")


CLAIMS_KEY = "minibert_claims"  # the glue key of a chapter's claim records
JSON = "application/vnd.minibert.claims+json"  # a JSON mimetype nbformat stores as JSON


def anchor(name: str) -> str:
    """The id of a claim's row in its chapter's block, which the Claims page links to."""
    return f"claim-{name}"


class ClaimRecords(list):
    """A chapter's claim records, shown to Jupyter as JSON (and glued as such)."""

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {JSON: {"claims": list(self)}, "text/plain": f"{len(self)} claim records"}


def records_in_notebook(notebook: dict) -> list[dict]:
    """The claim records glued in an executed notebook (as read with json or nbformat)."""
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            glued = output.get("metadata", {}).get("scrapbook", {})
            if glued.get("name") == CLAIMS_KEY:
                prefix = glued.get("mime_prefix", "")
                return output["data"][prefix + JSON]["claims"]
    return []


def _margin_text(record: dict) -> str:
    margin = record.get("margin") or record.get("control_margin")
    return f"; half-width {record['half_width']:.3g} vs m = {margin:g}" if margin else ""


def _notes(record: dict) -> str:
    return "; ".join(n for n in (record.get("also"), record.get("rules_out")) if n)


def what_the_tiny_models_showed(results: Sequence) -> TinyModelsShowed:
    """The block for a chapter's results (`Experiment.show()` passes its own), with each
    outcome, interval, mean gap and prewritten sentence glued for the prose (in the book:
    {glue:text}`NAME_outcome`, `NAME_interval`, `NAME_mean`, `NAME_says`). The block itself
    is glued too, as `tiny_models_showed`, for a chapter's opening."""
    block = TinyModelsShowed(results)
    try:
        from myst_nb import glue
    except ImportError:  # Colab or a plain Jupyter: the prose shows the roles unrendered
        glue = None
    if glue is not None:
        for result in block.results:
            name = result.claim.name
            glue(f"{name}_outcome", _Words(result.outcome), display=False)
            glue(f"{name}_interval", _Words(f"{result.low:.3g} to {result.high:.3g}"),
                 display=False)
            glue(f"{name}_mean", _Words(f"{result.mean_gap:.3g}"), display=False)
            if result.says() is not None:
                glue(f"{name}_says", _Words(result.says()), display=False)
        glue("tiny_models_showed", block, display=False)
        glue(CLAIMS_KEY, ClaimRecords(r.record() for r in block.results), display=False)
    return block
