"""One rule of evidence for the whole book: claims declared before they are measured, judged
on paired seeds.

Seed s gives both arms, A and B, the same initial weights and the same batches, so the book
reads the per-seed gaps g_s = A_s - B_s, not each arm's own spread. From the n gaps: their
mean and the 95% confidence interval of the mean by Student's t with n - 1 degrees of
freedom, mean ± t(0.975, n - 1) · sd / √n.

A claim is declared first, in code, before the cell that measures it: its kind, its arms,
its metric and its numbers, and whether it is a *finding* (the claim check asserts that it
is supported) or an *observation* (shown and listed, never asserted). Its outcome, from the
interval [low, high] of A's advantage (the gap, or its negative where lower is better),
follows the CONSORT extension for non-inferiority and equivalence trials (Piaggio et al.,
JAMA 2012):

    kind                     supported            contradicted              otherwise
    superiority by δ ≥ 0     low > δ              high < δ                  inconclusive
    non-inferiority by m     low > -m             high < -m                 inconclusive
    equivalence within ±m    -m < low, high < m   high < -m or low > m      inconclusive

A claim answers only the question it declared. A *sensitivity control* is a superiority
claim that gives a non-inferiority or equivalence claim its power: a real change of about
the margin's size, which the same test must detect. It is supported only if its interval
lies above 0 and its mean gap is at most 1.5 m (a larger change proves nothing about m).

Every result carries a replication estimate: the chance that a fresh set of as many seeds
supports the claim again, by the posterior predictive under the reference (Jeffreys) prior
on the gaps' mean and spread, simulated with a fixed seed. An inconclusive result says
what it rules out and about how many seeds its spread would need to settle it.

A chapter's claims live on its experiment (`minibert.experiment.Experiment`), in a
`ClaimBook`: declared once under one name, judged by name, kept in declaration order for
the chapter's "What the tiny models showed" block and the book's Claims page. A claim may
be its chapter's *headline* (the comparison that answers the chapter's question), carry
the *pilot* that sized its seeds (`seeds_needed`), and carry one sentence per outcome,
written before the run (`says`), of which the result renders the one that happened. At
least three seeds, and gaps with some spread: identical gaps on every seed are a sign of a
comparison that holds by construction, and are refused.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields

import numpy as np
from scipy import stats

LEVEL = 0.95  # the confidence level of every interval in the book
MIN_SEEDS = 3
KINDS = ("superiority", "non-inferiority", "equivalence")
OUTCOMES = ("supported", "contradicted", "inconclusive")
CONTROL_SIZE = 1.5  # a sensitivity control's mean gap is at most this many margins
REPLICATION_DRAWS = 20_000  # simulated fresh seed sets per replication estimate
MOST_SEEDS = 10_000  # beyond this, "settling it" is reported as out of reach
ZERO_SPREAD = 1e-9  # gaps whose sd is at most this times max(1, |mean gap|) are refused
REPLICATION_TARGET = 0.99  # a headline's pilot sizes its seeds to replicate this often


OPPOSITES = {"better": "worse", "higher": "lower", "lower": "higher", "closer": "further",
             "larger": "smaller", "smaller": "larger"}


def opposite(word: str) -> str:
    """The word for a loss where `word` names a win: "higher" -> "lower", "bends more" ->
    "bends less". A word without a known opposite is refused, so no title guesses one."""
    if word in OPPOSITES:
        return OPPOSITES[word]
    for more, less in ((" more", " less"), (" less", " more")):
        if word.endswith(more):
            return word[: -len(more)] + less
    raise ValueError(f"better={word!r}: use one of {sorted(OPPOSITES)} or a phrase ending in "
                     f"'more' or 'less', so that the claim's title can say the opposite")


@dataclass(frozen=True)
class Claim:
    """A hypothesis about arms A and B on one metric, declared before it is measured."""

    name: str  # a short identifier, unique in the chapter: glue keys and anchors
    kind: str  # one of KINDS
    a: str
    b: str
    metric: str
    finding: bool  # True: asserted by the claim check; False: an observation
    margin: float | None = None  # m, for non-inferiority and equivalence
    minimum_effect: float = 0.0  # δ, for superiority
    higher_is_better: bool = True
    better: str = "better"  # the word for a win ("higher" where the metric only describes)
    controls: str | None = None  # a sensitivity control: the name of the claim it powers
    control_margin: float | None = None  # and that claim's margin
    headline: bool = False  # the comparison that answers the chapter's question
    pilot: dict | None = None  # the pilot that sized its seeds: seeds, gaps, seeds_needed
    says: dict | None = None  # outcome -> the sentence written for it before the run

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"a claim's kind is one of {KINDS}, got {self.kind!r}")
        if not self.name.isidentifier():
            raise ValueError(f"a claim's name is a Python identifier, got {self.name!r}")
        if self.kind == "superiority":
            if self.margin is not None:
                raise ValueError("a superiority claim has a minimum effect, not a margin")
            if not self.minimum_effect >= 0:
                raise ValueError(f"the minimum effect must be at least 0, got "
                                 f"{self.minimum_effect}")
        elif self.margin is None or not self.margin > 0:
            raise ValueError(f"a {self.kind} claim needs a positive margin, got {self.margin}")
        opposite(self.better)  # a word whose opposite is known, for the title
        if self.says is not None and set(self.says) != set(OUTCOMES):
            raise ValueError(f"{self.name}: `says` needs one sentence for each outcome "
                             f"{OUTCOMES}, got {sorted(self.says)}")

    @classmethod
    def from_record(cls, record: dict) -> Claim:
        """The declaration inside a result's record (`Result.record()`)."""
        return cls(**{f.name: record[f.name] for f in fields(cls)})

    @property
    def role(self) -> str:
        return "finding" if self.finding else "observation"

    def __repr__(self) -> str:
        return f"declared {self.name} ({self.role}, {self.kind}): {self.title}"

    @property
    def title(self) -> str:
        """What the claim says, made from its declaration, so it cannot state an outcome."""
        worse = opposite(self.better)
        if self.kind == "superiority":
            title = f"{self.a} {self.better} than {self.b}"
            if self.minimum_effect:
                title += f" by more than {self.minimum_effect:g}"
        elif self.kind == "non-inferiority":
            title = f"{self.a} not {worse} than {self.b} by more than {self.margin:g}"
        else:
            title = f"{self.a} within ±{self.margin:g} of {self.b}"
        title = f"{title}, on {self.metric}"
        if self.controls:
            title += f" (sensitivity control of {self.controls})"
        return title

    def test(self, a: Sequence[float], b: Sequence[float], *, seeds) -> Result:
        """Judge the claim on A's and B's values, a[i] and b[i] measured on seeds[i]."""
        a, b, seeds = np.asarray(a, dtype=float), np.asarray(b, dtype=float), tuple(seeds)
        if a.shape != b.shape or a.ndim != 1 or len(seeds) != len(a):
            raise ValueError(f"need one value of A and of B per seed: got {a.shape}, "
                             f"{b.shape} for {len(seeds)} seeds")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"the seeds must be distinct, got {seeds}")
        if len(a) < MIN_SEEDS:
            raise ValueError(f"a comparison needs at least {MIN_SEEDS} paired seeds, "
                             f"got {len(a)}")
        if not (np.isfinite(a).all() and np.isfinite(b).all()):
            raise ValueError(f"{self.name}: a metric is NaN or infinite")
        gaps = a - b
        if gaps.std(ddof=1) <= ZERO_SPREAD * max(1.0, abs(float(gaps.mean()))):
            raise ValueError(f"{self.name}: the gaps {gaps.tolist()} have no spread across "
                             f"seeds, so the seeds do not test anything: a comparison that "
                             f"holds by construction is a sanity check, not a claim")
        mean, low, high = mean_gap_interval(gaps)
        return Result(claim=self, seeds=seeds, gaps=tuple(map(float, gaps)), mean_gap=mean,
                      low=low, high=high, outcome=outcome(self, mean, low, high),
                      replication=replication(self, gaps),
                      values=(tuple(map(float, a)), tuple(map(float, b))))


def superiority(name: str, a: str, b: str, *, metric: str, finding: bool,
                minimum_effect: float = 0.0, higher_is_better: bool = True,
                better: str = "better", **more) -> Claim:
    """A is better than B by more than `minimum_effect` (in the metric's units). `more`:
    headline, pilot, says."""
    return Claim(name, "superiority", a, b, metric, finding,
                 minimum_effect=float(minimum_effect), higher_is_better=higher_is_better,
                 better=better, **more)


def non_inferiority(name: str, a: str, b: str, *, metric: str, margin: float, finding: bool,
                    higher_is_better: bool = True, better: str = "better", **more) -> Claim:
    """A is not worse than B by more than `margin`. A finding of this kind needs a
    `sensitivity_control`."""
    return Claim(name, "non-inferiority", a, b, metric, finding, margin=float(margin),
                 higher_is_better=higher_is_better, better=better, **more)


def equivalence(name: str, a: str, b: str, *, metric: str, margin: float, finding: bool,
                higher_is_better: bool = True, better: str = "better", **more) -> Claim:
    """A lies within ±`margin` of B. A finding of this kind needs a `sensitivity_control`."""
    return Claim(name, "equivalence", a, b, metric, finding, margin=float(margin),
                 higher_is_better=higher_is_better, better=better, **more)


def sensitivity_control(name: str, of: Claim, a: str, b: str, *, finding: bool) -> Claim:
    """The control that gives `of` (a non-inferiority or equivalence claim) its power: A, a
    known change of about `of.margin`'s size, measured the same way, is detected against
    B. Supported only if detected and its mean gap is at most 1.5 margins."""
    if of.kind == "superiority":
        raise ValueError(f"{of.name} is a superiority claim: it needs no sensitivity control")
    return Claim(name, "superiority", a, b, of.metric, finding,
                 higher_is_better=of.higher_is_better, better=of.better,
                 controls=of.name, control_margin=of.margin)


def mean_gap_interval(gaps: Sequence[float], level: float = LEVEL) -> tuple[float, float, float]:
    """The mean of the paired gaps and its Student-t confidence interval: (mean, low, high)."""
    gaps = np.asarray(gaps, dtype=float)
    n = len(gaps)
    mean = float(gaps.mean())
    half = float(stats.t.ppf(0.5 + level / 2, n - 1) * gaps.std(ddof=1) / math.sqrt(n))
    return mean, mean - half, mean + half


def advantage(claim: Claim, mean, low, high):
    """A's advantage over B, in the direction where higher is better: (mean, low, high)."""
    return (mean, low, high) if claim.higher_is_better else (-mean, -high, -low)


def thresholds(claim: Claim) -> list[float]:
    """The declared question's boundaries on the gap A - B, in the metric's units: the
    minimum effect δ, the margin -m, or ±m (mirrored where lower is better)."""
    sign = 1 if claim.higher_is_better else -1
    if claim.kind == "superiority":
        return [sign * claim.minimum_effect]
    if claim.kind == "non-inferiority":
        return [-sign * claim.margin]
    return [-claim.margin, claim.margin]


def _rule(claim: Claim, mean, low, high):
    """(supported, contradicted) for one interval or arrays of them (the table above)."""
    mean, low, high = advantage(claim, mean, low, high)
    if claim.kind == "superiority":
        supported, contradicted = low > claim.minimum_effect, high < claim.minimum_effect
        if claim.controls is not None:  # a control larger than 1.5 m proves nothing about m
            supported = supported & (np.abs(mean) <= CONTROL_SIZE * claim.control_margin)
    elif claim.kind == "non-inferiority":
        supported, contradicted = low > -claim.margin, high < -claim.margin
    else:
        supported = (-claim.margin < low) & (high < claim.margin)
        contradicted = (high < -claim.margin) | (low > claim.margin)
    return supported, contradicted


def outcome(claim: Claim, mean: float, low: float, high: float) -> str:
    """The declared question's answer from the interval of the mean gap."""
    supported, contradicted = _rule(claim, mean, low, high)
    return "supported" if supported else "contradicted" if contradicted else "inconclusive"


def replication(claim: Claim, gaps: Sequence[float], n_seeds: int | None = None,
                draws: int = REPLICATION_DRAWS) -> float:
    """The chance that a fresh set of `n_seeds` paired seeds (default: as many as the gaps)
    supports the claim: the posterior predictive under the Jeffreys prior p(μ, σ) ∝ 1/σ,
    σ² ~ (n-1)s²/χ²(n-1), μ ~ N(mean, σ²/n), fresh gaps ~ N(μ, σ²), with a fixed seed."""
    gaps = np.asarray(gaps, dtype=float)
    n, fresh = len(gaps), n_seeds or len(gaps)
    rng = np.random.default_rng(0)
    spread = gaps.std(ddof=1)
    sigma = spread * np.sqrt((n - 1) / rng.chisquare(n - 1, size=draws))  # (draws,)
    mu = gaps.mean() + sigma / math.sqrt(n) * rng.standard_normal(draws)  # (draws,)
    new_gaps = mu[:, None] + sigma[:, None] * rng.standard_normal((draws, fresh))
    mean = new_gaps.mean(axis=1)  # (draws,)
    spreads = new_gaps.std(axis=1, ddof=1)  # (draws,)
    half = stats.t.ppf(0.5 + LEVEL / 2, fresh - 1) * spreads / math.sqrt(fresh)
    supported, _ = _rule(claim, mean, mean - half, mean + half)
    return float(np.mean(supported))


def seeds_needed(claim: Claim, gaps: Sequence[float], target: float = REPLICATION_TARGET,
                 most: int = 64) -> int | None:
    """The fewest paired seeds (from MIN_SEEDS up to `most`) with which a fresh run
    supports the claim with chance at least `target`, by the replication estimate from
    these (pilot) gaps; None if `most` seeds are not enough."""
    for n in range(MIN_SEEDS, most + 1):
        if replication(claim, gaps, n) >= target:
            return n
    return None


def seeds_to_settle(claim: Claim, mean: float, spread: float) -> int | None:
    """About how many paired seeds, at this mean gap and spread, would put the interval
    clear of the nearest boundary of the declared question; None if none would."""
    mean = mean if claim.higher_is_better else -mean
    if claim.kind == "superiority":
        distance = abs(mean - claim.minimum_effect)
    elif claim.kind == "non-inferiority":
        distance = abs(mean + claim.margin)
    else:
        distance = abs(claim.margin - abs(mean))
    if distance == 0 or spread == 0:
        return None
    for n in range(MIN_SEEDS, MOST_SEEDS + 1):
        if stats.t.ppf(0.5 + LEVEL / 2, n - 1) * spread / math.sqrt(n) < distance:
            return n
    return None


@dataclass(frozen=True)
class Result:
    """A declared claim measured on paired seeds; `gaps` are A - B in the metric's units."""

    claim: Claim
    seeds: tuple[int, ...]
    gaps: tuple[float, ...]
    mean_gap: float
    low: float
    high: float
    outcome: str
    replication: float
    values: tuple[tuple[float, ...], tuple[float, ...]] = field(default=((), ()))

    @property
    def n(self) -> int:
        return len(self.gaps)

    @property
    def a(self) -> str:
        return self.claim.a

    @property
    def b(self) -> str:
        return self.claim.b

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2

    def interval_text(self) -> str:
        return (f"mean gap {self.mean_gap:.3g}, {LEVEL:.0%} interval {self.low:.3g} to "
                f"{self.high:.3g}")

    def also(self) -> str | None:
        """What the interval says beyond the declared question (reported, never asserted)."""
        mean, low, high = advantage(self.claim, self.mean_gap, self.low, self.high)
        if self.claim.kind != "superiority" and (low > 0 or high < 0):
            ahead = self.a if low > 0 else self.b
            return f"the interval also lies wholly on {ahead}'s side of 0"
        if self.claim.controls is not None and low > 0 and \
                abs(mean) > CONTROL_SIZE * self.claim.control_margin:
            return (f"detected, but its mean gap is over {CONTROL_SIZE:g} times the margin "
                    f"{self.claim.control_margin:g}: too large a change to show the margin's power")
        return None

    def rules_out(self) -> str | None:
        """For an inconclusive result: the largest gaps it still allows, and the seeds that
        would settle it at the spread seen."""
        if self.outcome != "inconclusive":
            return None
        mean, low, high = advantage(self.claim, self.mean_gap, self.low, self.high)
        needed = seeds_to_settle(self.claim, self.mean_gap, float(np.std(self.gaps, ddof=1)))
        settle = (f"about {needed} paired seeds would settle it at this spread"
                  if needed else "no number of seeds settles it if the true gap is the one seen")
        return (f"it rules out {self.a} ahead by more than {max(high, 0):.3g} and {self.b} "
                f"ahead by more than {max(-low, 0):.3g}; {settle}")

    def direction(self) -> str:
        """Which way the mean gap points, in the metric's units: "K = V lower than
        separate Q, K, V by 0.016 on average"."""
        if self.mean_gap == 0:
            return f"{self.a} and {self.b} equal on average"
        return f"{self.a} {self._way} than {self.b} by {abs(self.mean_gap):.3g} on average"

    @property
    def _way(self) -> str:
        return "higher" if self.mean_gap > 0 else "lower"

    def headline_sentence(self) -> str:
        """The headline as a reader hears it: which way, how much in the metric's units, the
        interval, the seeds, and the outcome of the declared question."""
        return (f"On {self.claim.metric}, {self.a} scored {abs(self.mean_gap):.3g} {self._way} "
                f"than {self.b} (A minus B, {LEVEL:.0%} interval {self.low:.3g} to "
                f"{self.high:.3g}, {self.n} paired seeds), so the declared claim, "
                f"\u201c{self.claim.title}\u201d, is {self.outcome}.")

    def says(self) -> str | None:
        """The sentence written before the run for the outcome that happened, its
        {mean}, {low}, {high} and {n} filled in; None if the claim has none."""
        if self.claim.says is None:
            return None
        return self.claim.says[self.outcome].format(
            mean=f"{self.mean_gap:.3g}", low=f"{self.low:.3g}", high=f"{self.high:.3g}",
            n=self.n)

    def sentence(self) -> str:
        """The outcome as one sentence with its numbers."""
        claim = self.claim
        numbers = [f"{claim.metric}, {self.a} minus {self.b}: {self.interval_text()}",
                   f"{self.n} paired seeds (gaps {', '.join(f'{g:.3g}' for g in self.gaps)})"]
        if claim.margin is not None:
            numbers.append(f"half-width {self.half_width:.3g} against margin {claim.margin:g}")
        if claim.controls is not None:
            numbers.append(f"half-width {self.half_width:.3g} against margin "
                           f"{claim.control_margin:g}")
        numbers.append(f"replicates with chance {self.replication:.3f}")
        text = f"{claim.title}: {self.outcome}, {self.direction()} ({'; '.join(numbers)})."
        extra = [line for line in (self.also(), self.rules_out()) if line]
        return text + "".join(f" {line[0].upper()}{line[1:]}." for line in extra)

    def record(self) -> dict:
        """What the Claims page lists: the declaration, the measurement and the sentence."""
        return {**asdict(self.claim), "title": self.claim.title, "role": self.claim.role,
                **{k: v for k, v in asdict(self).items() if k != "claim"},
                "n": self.n, "half_width": self.half_width, "also": self.also(),
                "rules_out": self.rules_out(), "sentence": self.sentence(),
                "said": self.says()}

    def __repr__(self) -> str:
        return self.sentence()

    def _repr_html_(self) -> str:
        role = "Finding" if self.claim.finding else "Observation"
        return (f"<div><b>{role}, {self.claim.kind}</b>: {html.escape(self.sentence())}"
                f"</div>")


class ClaimBook:
    """One chapter's claims, each declared once under its name, and their results, in
    declaration order."""

    MOST_HEADLINES = 2  # one per interview question a chapter answers

    def __init__(self):
        self.claims: dict[str, Claim] = {}
        self.results: dict[str, Result] = {}

    def declare(self, claim: Claim) -> Claim:
        if claim.name in self.claims:
            raise ValueError(f"the claim {claim.name!r} is declared twice: a claim is "
                             f"declared once, under one name")
        if claim.headline and sum(c.headline for c in self.claims.values()) >= \
                self.MOST_HEADLINES:
            raise ValueError(f"{claim.name}: at most {self.MOST_HEADLINES} headline claims "
                             f"a chapter, one per question it answers")
        self.claims[claim.name] = claim
        return claim

    def claim(self, name: str) -> Claim:
        if name not in self.claims:
            raise KeyError(f"no claim named {name!r}; declared: {', '.join(self.claims)}")
        return self.claims[name]

    def judge(self, name: str, a, b, seeds) -> Result:
        """Test the claim `name` on A's and B's values per seed, and keep the result."""
        if name in self.results:
            raise ValueError(f"the claim {name!r} is judged twice")
        self.results[name] = self.claim(name).test(a, b, seeds=seeds)
        return self.results[name]

    def in_order(self) -> list[Result]:
        """The results in declaration order; a claim declared and never judged, or a
        non-inferiority or equivalence finding without a control, is an error."""
        missing = [name for name in self.claims if name not in self.results]
        if missing:
            raise ValueError(f"declared but never measured: {', '.join(missing)}")
        controlled = {c.controls for c in self.claims.values() if c.controls and c.finding}
        powerless = [c.name for c in self.claims.values()
                     if c.finding and c.kind != "superiority" and c.name not in controlled]
        if powerless:
            raise ValueError(f"a non-inferiority or equivalence finding needs a sensitivity "
                             f"control that is a finding too: none for {', '.join(powerless)}")
        return [self.results[name] for name in self.claims]


def expected_failures(records: Sequence[dict]) -> float:
    """The number of findings expected to fail on a fresh set of seeds: the sum over the
    findings of one minus their replication estimates."""
    return float(sum(1 - r["replication"] for r in records if r["finding"]))


class Verdicts(list):
    """Several results shown together: one sentence each."""

    def __repr__(self) -> str:
        return "\n".join(r.sentence() for r in self)

    def _repr_html_(self) -> str:
        return "\n".join(r._repr_html_() for r in self)
