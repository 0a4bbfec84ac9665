"""The book's one rule of evidence: declared claims, paired gaps, a Student-t interval, and
the outcome of every kind at its boundaries, against scipy and values computed by hand."""

import numpy as np
import pytest
from scipy import stats

from minibert.measure import comparison

T2 = stats.t.ppf(0.975, 2)  # three seeds: the interval's half-width is T2 * sd / sqrt(3)


def gaps_with_interval(low, high):
    """Three gaps whose 95% interval is exactly [low, high]."""
    mean, half = (low + high) / 2, (high - low) / 2
    sd = half * np.sqrt(3) / T2
    return np.array([mean - sd, mean, mean + sd])  # sd of (-1, 0, 1) * sd is sd


def judge(claim, low, high):
    gaps = gaps_with_interval(low, high)
    return claim.test(gaps, np.zeros(3), seeds=(0, 1, 2))


def test_the_interval_is_the_paired_t_interval():
    a, b = np.array([0.61, 0.58, 0.66, 0.63]), np.array([0.55, 0.57, 0.60, 0.59])
    claim = comparison.superiority("c", "A", "B", metric="accuracy", finding=True)
    result = claim.test(a, b, seeds=(3, 4, 5, 6))
    expected = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert result.mean_gap == pytest.approx((a - b).mean())
    assert (result.low, result.high) == pytest.approx((expected.low, expected.high))
    assert result.gaps == pytest.approx(tuple(a - b)) and result.n == 4


EPS = 1e-6


@pytest.mark.parametrize("low, high, expected", [
    (0.1 + EPS, 0.5, "supported"),  # low just above δ = 0.1
    (0.1 - EPS, 0.5, "inconclusive"),  # low just below it
    (-0.3, 0.1 + EPS, "inconclusive"),
    (-0.3, 0.1 - EPS, "contradicted"),  # high just below δ
])
def test_superiority_at_its_boundaries(low, high, expected):
    claim = comparison.superiority("c", "A", "B", metric="m", finding=True, minimum_effect=0.1)
    assert judge(claim, low, high).outcome == expected


@pytest.mark.parametrize("low, high, expected", [
    (-0.05 + EPS, 0.2, "supported"),
    (-0.05 - EPS, 0.2, "inconclusive"),
    (-0.3, -0.05 + EPS, "inconclusive"),
    (-0.3, -0.05 - EPS, "contradicted"),
])
def test_non_inferiority_at_its_boundaries(low, high, expected):
    claim = comparison.non_inferiority("c", "A", "B", metric="m", margin=0.05, finding=True)
    assert judge(claim, low, high).outcome == expected


@pytest.mark.parametrize("low, high, expected", [
    (-0.05 + EPS, 0.05 - EPS, "supported"),
    (-0.05 - EPS, 0.0, "inconclusive"),
    (0.0, 0.05 + EPS, "inconclusive"),
    (-0.3, -0.05 - EPS, "contradicted"),
    (0.05 + EPS, 0.3, "contradicted"),
    (-0.3, 0.3, "inconclusive"),
])
def test_equivalence_at_its_boundaries(low, high, expected):
    claim = comparison.equivalence("c", "A", "B", metric="m", margin=0.05, finding=True)
    assert judge(claim, low, high).outcome == expected


def test_lower_is_better_turns_the_interval_round():
    loss = comparison.superiority("c", "A", "B", metric="loss", finding=True,
                                  higher_is_better=False)
    assert judge(loss, -0.5, -0.1).outcome == "supported"  # A's loss is lower
    assert judge(loss, 0.1, 0.5).outcome == "contradicted"
    no_worse = comparison.non_inferiority("d", "A", "B", metric="loss", margin=0.05,
                                          finding=True, higher_is_better=False)
    assert judge(no_worse, -0.2, 0.05 - EPS).outcome == "supported"
    assert judge(no_worse, 0.05 + EPS, 0.3).outcome == "contradicted"


def test_a_claim_answers_only_its_question_and_reports_the_rest():
    claim = comparison.equivalence("c", "A", "B", metric="m", margin=0.05, finding=True)
    result = judge(claim, 0.001, 0.008)  # inside ±m and wholly above 0
    assert result.outcome == "supported"
    assert "wholly on A's side of 0" in result.also()


def test_a_sensitivity_control_must_be_detected_and_of_the_margins_size():
    tie = comparison.non_inferiority("tie", "A", "B", metric="m", margin=0.1, finding=True)
    control = comparison.sensitivity_control("control", tie, "B", "B damaged", finding=True)
    assert "sensitivity control of tie" in control.title
    assert judge(control, 0.05, 0.15).outcome == "supported"  # mean 0.1 = m: detected
    assert judge(control, -0.05, 0.25).outcome == "inconclusive"  # not detected
    assert judge(control, 0.1, 0.3).outcome == "inconclusive"  # mean 0.2 > 1.5 m
    with pytest.raises(ValueError, match="needs no sensitivity control"):
        comparison.sensitivity_control("x", control, "B", "C", finding=True)


def test_an_inconclusive_result_says_what_it_rules_out():
    claim = comparison.superiority("c", "with", "without", metric="m", finding=False)
    result = judge(claim, -0.1, 0.3)
    line = result.rules_out()
    assert "with ahead by more than 0.3" in line and "without ahead by more than 0.1" in line
    sd = np.std(result.gaps, ddof=1)
    needed = comparison.seeds_to_settle(claim, result.mean_gap, sd)
    assert stats.t.ppf(0.975, needed - 1) * sd / np.sqrt(needed) < 0.1
    assert stats.t.ppf(0.975, needed - 2) * sd / np.sqrt(needed - 1) >= 0.1
    assert f"about {needed} paired seeds" in line
    assert judge(claim, 0.1, 0.3).rules_out() is None  # supported: nothing to rule out


def test_titles_come_from_the_declaration():
    assert comparison.superiority("a", "K = V", "separate", metric="accuracy", finding=True,
                                  minimum_effect=0.02).title == (
        "K = V better than separate by more than 0.02, on accuracy")
    assert comparison.non_inferiority("b", "K = V", "separate", metric="loss", margin=0.03,
                                      finding=True).title == (
        "K = V not worse than separate by more than 0.03, on loss")
    assert comparison.equivalence("c", "ReLU", "GELU", metric="loss", margin=0.02,
                                  finding=False).title == "ReLU within ±0.02 of GELU, on loss"
    assert comparison.superiority("d", "same", "other", metric="cosine", finding=False,
                                  better="higher").title == "same higher than other, on cosine"


@pytest.mark.parametrize("word, loss", [("lower", "higher"), ("smaller", "larger"),
                                        ("bends more", "bends less")])
def test_a_non_inferiority_title_says_the_opposite_of_a_win(word, loss):
    claim = comparison.non_inferiority("e", "A", "B", metric="m", margin=0.1, finding=False,
                                       better=word)
    assert claim.title == f"A not {loss} than B by more than 0.1, on m"


def test_a_win_word_without_a_known_opposite_is_refused():
    with pytest.raises(ValueError, match="opposite"):
        comparison.superiority("f", "A", "B", metric="m", finding=False, better="ahead")


def test_replication_follows_the_strength_of_the_evidence():
    claim = comparison.superiority("c", "A", "B", metric="m", finding=True)
    weak = comparison.replication(claim, [0.1, 0.3, -0.05])
    strong = comparison.replication(claim, [1.0, 1.1, 0.9, 1.05, 0.95])
    assert 0 < weak < 0.5 < strong <= 1
    assert comparison.replication(claim, [1.0, 1.1, 0.9]) == comparison.replication(
        claim, [1.0, 1.1, 0.9])  # a fixed seed: the same estimate every time
    more = comparison.replication(claim, [1.0, 1.1, 0.9, 1.05, 0.95], n_seeds=10)
    assert more >= strong


def test_replication_matches_a_direct_simulation():
    """The posterior predictive by hand: σ² ~ (n-1)s²/χ²(n-1), μ ~ N(ḡ, σ²/n)."""
    gaps = np.array([0.3, 0.5, 0.2, 0.45, 0.35])
    claim = comparison.superiority("c", "A", "B", metric="m", finding=True)
    rng = np.random.default_rng(1)
    draws, n = 20_000, len(gaps)
    sigma = gaps.std(ddof=1) * np.sqrt((n - 1) / rng.chisquare(n - 1, draws))
    mu = gaps.mean() + sigma / np.sqrt(n) * rng.standard_normal(draws)
    fresh = mu[:, None] + sigma[:, None] * rng.standard_normal((draws, n))
    t = fresh.mean(1) / (fresh.std(1, ddof=1) / np.sqrt(n))
    assert comparison.replication(claim, gaps) == pytest.approx(
        (t > stats.t.ppf(0.975, n - 1)).mean(), abs=0.015)


def test_a_claim_book_keeps_results_in_declaration_order():
    book = comparison.ClaimBook()
    book.declare(comparison.superiority("first", "A", "B", metric="m", finding=True))
    book.declare(comparison.superiority("second", "A", "B", metric="m", finding=False))
    with pytest.raises(ValueError, match="never measured: first, second"):
        book.in_order()
    for name in ("second", "first"):
        book.judge(name, gaps_with_interval(0.1, 0.2), np.zeros(3), (0, 1, 2))
    assert [r.claim.name for r in book.in_order()] == ["first", "second"]
    records = [r.record() for r in book.in_order()]
    assert records[0]["role"] == "finding" and records[1]["role"] == "observation"
    assert comparison.expected_failures(records) == pytest.approx(1 - records[0]["replication"])


def test_the_sentence_and_the_record():
    claim = comparison.non_inferiority("kv", "K = V", "separate", metric="accuracy",
                                       margin=0.05, finding=True)
    result = claim.test([0.9, 0.8, 0.85], [0.88, 0.81, 0.84], seeds=(0, 1, 2))
    text = result.sentence()
    assert text.startswith("K = V not worse than separate by more than 0.05, on accuracy: ")
    assert "95% interval" in text and "3 paired seeds" in text and "against margin 0.05" in text
    record = result.record()
    assert record["kind"] == "non-inferiority" and record["n"] == 3
    assert record["sentence"] == text and record["title"] == claim.title


@pytest.mark.parametrize("declare, message", [
    (lambda: comparison.non_inferiority("c", "A", "B", metric="m", margin=0, finding=True),
     "positive margin"),
    (lambda: comparison.superiority("c", "A", "B", metric="m", finding=True,
                                    minimum_effect=-1), "at least 0"),
    (lambda: comparison.superiority("not a name", "A", "B", metric="m", finding=True),
     "identifier"),
    (lambda: comparison.Claim("c", "better", "A", "B", "m", True), "kind is one of"),
])
def test_a_bad_declaration_says_what_is_wrong(declare, message):
    with pytest.raises(ValueError, match=message):
        declare()


@pytest.mark.parametrize("a, b, seeds, message", [
    ([1, 2], [1, 2], (0, 1), "at least 3"),
    ([1, 2, 3], [1, 2], (0, 1, 2), "one value of A and of B per seed"),
    ([1, 2, 3], [1, 2, 3], (0, 0, 1), "distinct"),
    ([1, 2, float("nan")], [1, 2, 3], (0, 1, 2), "NaN"),
])
def test_bad_measurements_say_what_is_wrong(a, b, seeds, message):
    claim = comparison.superiority("c", "A", "B", metric="m", finding=True)
    with pytest.raises(ValueError, match=message):
        claim.test(a, b, seeds=seeds)


def test_a_claim_is_declared_once_and_judged_once():
    book = comparison.ClaimBook()
    book.declare(comparison.superiority("gain", "A", "B", metric="m", finding=True))
    with pytest.raises(ValueError, match="'gain' is declared twice"):
        book.declare(comparison.superiority("gain", "A", "B", metric="m", finding=False))
    book.judge("gain", [0.9, 0.8, 0.85], [0.6, 0.62, 0.58], (0, 1, 2))
    with pytest.raises(ValueError, match="'gain' is judged twice"):
        book.judge("gain", [0.9, 0.8, 0.85], [0.6, 0.62, 0.58], (0, 1, 2))
    with pytest.raises(KeyError, match="no claim named 'loss'"):
        book.claim("loss")


def test_gaps_without_spread_are_refused_with_the_claims_name():
    claim = comparison.superiority("by_construction", "A", "B", metric="m", finding=True)
    with pytest.raises(ValueError, match="by_construction: the gaps .* no spread"):
        claim.test([1.0, 2.0, 3.0], [0.5, 1.5, 2.5], seeds=(0, 1, 2))
    big = [1e6 + 1e-6 * k for k in range(3)]  # sd 1e-6 is under 1e-9 of a mean gap of 1e6
    with pytest.raises(ValueError, match="no spread"):
        claim.test(big, [0.0, 0.0, 0.0], seeds=(0, 1, 2))
    assert claim.test([1.0, 2.0, 3.01], [0.5, 1.5, 2.5], seeds=(0, 1, 2)).n == 3


def test_at_most_two_headlines_and_each_outcome_has_its_sentence():
    says = {"supported": "A wins by {mean} ({low} to {high}, {n} seeds).",
            "contradicted": "A loses.", "inconclusive": "Too close to call."}
    book = comparison.ClaimBook()
    for name in ("one", "two"):
        book.declare(comparison.superiority(name, "A", "B", metric="m", finding=True,
                                            headline=True, says=says))
    with pytest.raises(ValueError, match="at most 2 headline claims"):
        book.declare(comparison.superiority("three", "A", "B", metric="m", finding=True,
                                            headline=True))
    result = book.judge("one", [0.9, 0.8, 0.85], [0.6, 0.62, 0.58], (0, 1, 2))
    assert result.says() == f"A wins by {result.mean_gap:.3g} ({result.low:.3g} to " \
                            f"{result.high:.3g}, 3 seeds)."
    assert result.record()["headline"] is True and result.record()["said"] == result.says()
    with pytest.raises(ValueError, match="one sentence for each outcome"):
        comparison.superiority("half", "A", "B", metric="m", finding=True,
                               says={"supported": "A wins."})


def test_seeds_needed_grows_as_the_pilot_gap_shrinks_against_its_spread():
    claim = comparison.superiority("gain", "A", "B", metric="m", finding=True)
    spread = np.array([-1.0, 0.0, 1.0, -0.5, 0.5]) * 0.01
    clear, close = comparison.seeds_needed(claim, 0.05 + spread), \
        comparison.seeds_needed(claim, 0.03 + spread)
    assert clear is not None and close is not None and clear < close
    assert comparison.replication(claim, 0.03 + spread, close) >= 0.99
    assert comparison.replication(claim, 0.03 + spread, close - 1) < 0.99
    assert comparison.seeds_needed(claim, -0.05 + spread) is None


@pytest.mark.parametrize("effect", [2.0, 3.0])
def test_seeds_sized_on_a_simulated_pilot_replicate_at_the_true_effect(effect):
    """Pilots of 8 seeds drawn from a known effect (gap ~ N(effect, 1)): the seeds each
    pilot asks for give fresh runs from that same effect that support the claim at about
    the promised rate (a little less: the pilot's own noise), and a claim whose true effect
    is zero no more often than the test's one-sided 2.5%."""
    rng = np.random.default_rng(0)
    claim = comparison.superiority("gain", "A", "B", metric="m", finding=True)
    rates, nulls = [], []
    for _ in range(10):
        needed = comparison.seeds_needed(claim, rng.normal(effect, 1.0, 8))
        if needed is None:  # a pilot too unsure of the sign to promise 0.99
            continue
        fresh = rng.normal(effect, 1.0, (400, needed))  # 400 fresh runs of `needed` seeds
        null = rng.normal(0.0, 1.0, (400, needed))
        for runs, kept in ((fresh, rates), (null, nulls)):
            half = stats.t.ppf(0.975, needed - 1) * runs.std(1, ddof=1) / np.sqrt(needed)
            kept.append(np.mean(runs.mean(1) - half > 0))
    assert len(rates) >= 8, "most pilots of a clear effect size a run"
    assert np.mean(rates) > 0.95
    assert np.mean(nulls) < 0.04
