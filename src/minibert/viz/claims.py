"""Every chapter's claims drawn: paired seeds, a headline's figure, "What the tiny models
showed"; and their records, glued as JSON under CLAIMS_KEY, so that the book's build writes them
beside the executed notebook (`NOTEBOOK.glue.json`), where the Claims page, the offsets
table and the tests read them (`records_in_notebook`)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

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


def headline_figure(result) -> plt.Figure:
    """A headline claim drawn in its metric's units: left, each seed's A and B joined by a
    line; right, the mean gap A - B with its 95% interval, against 0 and the declared
    question's boundaries (δ or the margin)."""
    from ..measure.comparison import thresholds

    fig, (pairs, gap) = plt.subplots(1, 2, figsize=(9, 3.6), width_ratios=(3, 2))
    paired_seeds(pairs, [result], ylabel=result.claim.metric)
    color = OUTCOME_COLORS[result.outcome]
    gap.errorbar([0], [result.mean_gap], yerr=[[result.mean_gap - result.low],
                                               [result.high - result.mean_gap]],
                 fmt="o", color=color, capsize=8, markersize=8, linewidth=2.5)
    gap.plot(np.zeros(result.n) + 0.25, result.gaps, "o", color="0.6", markersize=4,
             label="each seed's gap")
    gap.axhline(0, color="k", linewidth=0.8, linestyle=":")
    for k, threshold in enumerate(t for t in thresholds(result.claim) if t):
        gap.axhline(threshold, color="k", linewidth=1.2, linestyle="--",
                    label="the declared boundary" if k == 0 else None)
    gap.set_xlim(-0.6, 0.6)
    gap.set_xticks([0], [f"mean gap: {result.outcome}"], fontsize=10, color=color)
    gap.set_ylabel(f"{result.a} minus {result.b}", fontsize=10)
    gap.legend(fontsize=9, loc="best")
    gap.set_title("the mean gap, 95% interval", fontsize=10)
    fig.tight_layout()
    return fig


class _Words(str):
    """Text that glue shows as it is (a str's repr would add quotes)."""

    def __repr__(self) -> str:
        return str(self)


class TinyModelsShowed:
    """A chapter's "What the tiny models showed" block: each headline claim first (its
    sentence in the metric's units, its figure, the sentence written before the run for
    the outcome that happened, its pilot), then the other claims in a collapsed table; and
    the records the Claims page collects."""

    def __init__(self, results: Sequence):
        self.results = list(results)

    def __repr__(self) -> str:
        return "\n".join(f"{r.claim.role} ({r.claim.kind}): {r.sentence()}"
                          for r in self.results)

    def _repr_html_(self) -> str:
        if not self.results:
            return "<p>This chapter declares no comparison.</p>"
        headlines = [r for r in self.results if r.claim.headline]
        others = [r for r in self.results if not r.claim.headline]
        parts = [_headline_html(r) for r in headlines]
        if others:
            table = _claims_table([r.record() for r in others])
            summary = (f"The chapter's other claims ({len(others)})" if headlines else
                       f"The chapter's claims ({len(others)})")
            parts.append(f"<details{'' if headlines else ' open'}><summary>{summary}"
                         f"</summary>{table}</details>")
        return f'<div class="minibert-showed">{"".join(parts)}</div>'


def _headline_html(result) -> str:
    record = result.record()
    png = base64.b64encode(figure_png(headline_figure(result), dpi=90)).decode()
    said = f"<p>{html.escape(result.says())}</p>" if result.says() else ""
    return (f'<div class="minibert-headline" id="{anchor(record["name"])}">'
            f"<p><b>{'Finding' if record['finding'] else 'Observation'}.</b> "
            f"{html.escape(result.headline_sentence())}</p>"
            f'<img alt="each seed\'s pair, and the mean gap with its interval" '
            f'style="max-width:100%" src="data:image/png;base64,{png}">{said}'
            f"<p><small>{html.escape(pilot_text(record))}</small></p></div>")


def pilot_text(record: dict) -> str:
    """A headline's pilot in one sentence, from its record."""
    pilot = record.get("pilot")
    if not pilot:
        return "This claim has no pilot."
    gaps = np.asarray(pilot["gaps"], float)
    needed = pilot["seeds_needed"]
    need = (f"it takes {needed} paired seeds to support the claim with chance 0.99"
            if needed else "no affordable number of seeds supports the claim with "
            "chance 0.99")
    return (f"Pilot, on seeds {min(pilot['seeds'])}-{max(pilot['seeds'])} that the book "
            f"never uses otherwise: mean gap {gaps.mean():.3g} (sd {gaps.std(ddof=1):.3g}) "
            f"over {len(gaps)} pairs; by its estimate {need}. This run used {record['n']}.")


def _claims_table(records: Sequence[dict]) -> str:
    rows = "".join(
        f"<tr id=\"{anchor(rec['name'])}\"><td>"
        f"{'Finding' if rec['finding'] else 'Observation'}, "
        f"{rec['kind']}</td><td>{html.escape(rec['title'])}</td>"
        f"<td><b>{rec['outcome']}</b></td><td>{rec['mean_gap']:.3g} "
        f"({rec['low']:.3g} to {rec['high']:.3g}), n = {rec['n']}"
        f"{_margin_text(rec)}</td><td>{rec['replication']:.3f}</td>"
        f"<td>{html.escape(_notes(rec))}</td></tr>" for rec in records)
    return (f'<table class="minibert-showed-table"><tr><th>kind</th><th>claim</th>'
            f"<th>outcome</th><th>mean gap (95% interval)</th><th>replicates</th>"
            f"<th>notes</th></tr>{rows}</table>")


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
            if result.claim.headline:
                glue(f"{name}_headline", _Words(result.headline_sentence()), display=False)
        glue("tiny_models_showed", block, display=False)
        glue(CLAIMS_KEY, ClaimRecords(r.record() for r in block.results), display=False)
    return block
