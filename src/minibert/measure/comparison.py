"""One rule of evidence for the whole book: comparing two variants over paired seeds.

Seed s gives both variants, A and B, the same initial weights and the same batches, so the
book compares the per-seed gaps g_s = A_s - B_s, not each variant's own spread. From the
n gaps: their mean, their standard deviation (ddof 1), and the 95% confidence interval of
the mean gap by Student's t with n - 1 degrees of freedom,

    mean ± t(0.975, n - 1) · sd / √n.

The verdict, on a metric where higher is better (or lower, if the chapter says so):

- **A better** (or **B better**): the interval excludes 0 and lies beyond the minimum
  effect, where the chapter states one.
- **equivalent within ±m**: the interval lies inside ±m, where m is the smallest gap that
  would matter, stated and justified before measuring, never fitted to the result. (Two
  one-sided tests at 2.5% each.) A tie claim also needs power: the same test must tell a
  positive control of about m's size apart, and the chapter checks that it does.
- **undecided**: anything else. The chapter says so, and does not call it a tie.

At least three seeds. `compare` returns a `Comparison`, which a notebook shows as one
sentence with its numbers; the book's Claims page collects those from the executed
chapters.
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass

import numpy as np
from scipy import stats

LEVEL = 0.95  # the confidence level of every interval in the book
MIN_SEEDS = 3
VERDICTS = ("A better", "B better", "equivalent", "undecided")
RECORD_CLASS = "minibert-claim"  # the HTML class the Claims page collects


@dataclass(frozen=True)
class Comparison:
    """A paired comparison and its verdict; `gaps` are A - B in the metric's units."""

    claim: str
    metric: str
    a: str
    b: str
    seeds: tuple[int, ...]
    gaps: tuple[float, ...]
    mean_gap: float
    low: float
    high: float
    margin: float | None
    minimum_effect: float
    higher_is_better: bool
    verdict: str
    values: tuple[tuple[float, ...], tuple[float, ...]] = ((), ())  # A's and B's, per seed
    better: str = "better"  # the word for a win: "higher" where the metric is descriptive

    @property
    def n(self) -> int:
        return len(self.gaps)

    @property
    def winner(self) -> str | None:
        return {"A better": self.a, "B better": self.b}.get(self.verdict)

    def short_verdict(self) -> str:
        """The verdict in a few words: "with better", "equivalent within ±0.02", "undecided"."""
        if self.winner is not None:
            return f"{self.winner} {self.better}"
        if self.verdict == "equivalent":
            return f"equivalent within ±{self.margin:g}"
        return "undecided"

    def sentence(self) -> str:
        """The verdict as one sentence with its numbers."""
        head = self.short_verdict()
        if self.verdict == "equivalent":
            head = f"{self.a} and {self.b} {head}"
        elif self.verdict == "undecided":
            head = f"{self.a} against {self.b}: undecided"
        numbers = (f"{self.metric}, {self.a} minus {self.b}: mean gap {self.mean_gap:.3g}, "
                   f"{LEVEL:.0%} interval {self.low:.3g} to {self.high:.3g}, "
                   f"{self.n} paired seeds (gaps {', '.join(f'{g:.3g}' for g in self.gaps)})")
        if self.margin is not None and self.verdict != "equivalent":
            numbers += f"; margin ±{self.margin:g}"
        if self.minimum_effect:
            numbers += f"; minimum effect {self.minimum_effect:g}"
        return f"{head} ({numbers})."

    def record(self) -> dict:
        """What the Claims page lists: every field, and the sentence."""
        return {**asdict(self), "n": self.n, "sentence": self.sentence()}

    def __repr__(self) -> str:
        return self.sentence()

    def _repr_html_(self) -> str:
        data = html.escape(json.dumps(self.record()), quote=True)
        return (f'<div class="{RECORD_CLASS}" data-claim="{data}"><b>{html.escape(self.claim)}'
                f"</b>: {html.escape(self.sentence())}</div>")


def mean_gap_interval(gaps: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """The mean of the paired gaps and its Student-t confidence interval: (mean, low, high)."""
    gaps = np.asarray(gaps, dtype=float)
    n = len(gaps)
    mean = float(gaps.mean())
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * gaps.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def compare(a: Sequence[float], b: Sequence[float], *, claim: str, metric: str, seeds,
            names: tuple[str, str] = ("A", "B"), margin: float | None = None,
            minimum_effect: float = 0.0, higher_is_better: bool = True,
            better: str = "better") -> Comparison:
    """Compare variants A and B measured on the same seeds (a[i] and b[i] from seeds[i]).
    margin: the equivalence margin m of a tie claim; minimum_effect: how far beyond 0 the
    interval must lie for a win (in the better direction); better: the word the sentence
    uses for a win ("higher", "closer") where the metric describes rather than grades."""
    a, b, seeds = np.asarray(a, dtype=float), np.asarray(b, dtype=float), tuple(seeds)
    if a.shape != b.shape or a.ndim != 1 or len(seeds) != len(a):
        raise ValueError(f"need one value of A and of B per seed: got {a.shape}, {b.shape} "
                         f"for {len(seeds)} seeds")
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"the seeds must be distinct, got {seeds}")
    if len(a) < MIN_SEEDS:
        raise ValueError(f"a comparison needs at least {MIN_SEEDS} paired seeds, got {len(a)}")
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("a metric is NaN or infinite")
    if margin is not None and not margin > 0:
        raise ValueError(f"the margin must be positive, got {margin}")
    if minimum_effect < 0:
        raise ValueError(f"the minimum effect must be at least 0, got {minimum_effect}")
    gaps = a - b
    mean, low, high = mean_gap_interval(gaps)
    # The interval of A's advantage: the gap itself, or its negative where lower is better.
    worst, best = (low, high) if higher_is_better else (-high, -low)
    if margin is not None and -margin < low and high < margin:
        verdict = "equivalent"
    elif worst > minimum_effect:
        verdict = "A better"
    elif best < -minimum_effect:
        verdict = "B better"
    else:
        verdict = "undecided"
    return Comparison(claim=claim, metric=metric, a=names[0], b=names[1], seeds=seeds,
                      gaps=tuple(float(g) for g in gaps), mean_gap=mean, low=low, high=high,
                      margin=margin, minimum_effect=float(minimum_effect),
                      higher_is_better=higher_is_better, verdict=verdict,
                      values=(tuple(map(float, a)), tuple(map(float, b))), better=better)


class Verdicts(list):
    """Several comparisons shown together: one sentence each (in the book, each recorded
    for the Claims page)."""

    def __repr__(self) -> str:
        return "\n".join(c.sentence() for c in self)

    def _repr_html_(self) -> str:
        return "\n".join(c._repr_html_() for c in self)
