"""The book's one rule of evidence: paired gaps, a Student-t interval, and the verdicts,
against scipy and against values computed by hand, including the cases that must fail."""

import json
import re

import numpy as np
import pytest
from scipy import stats

from minibert.measure import comparison
from minibert.measure.comparison import compare

SEEDS = (0, 1, 2)


def verdict(gaps, **settings):
    gaps = np.asarray(gaps, dtype=float)
    return compare(gaps + 1.0, np.ones_like(gaps), claim="c", metric="m",
                   seeds=range(len(gaps)), **settings)


def test_the_interval_is_the_paired_t_interval():
    a, b = np.array([0.61, 0.58, 0.66, 0.63]), np.array([0.55, 0.57, 0.60, 0.59])
    result = compare(a, b, claim="c", metric="accuracy", seeds=(3, 4, 5, 6))
    expected = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert result.mean_gap == pytest.approx((a - b).mean())
    assert (result.low, result.high) == pytest.approx((expected.low, expected.high))
    assert result.gaps == pytest.approx(tuple(a - b)) and result.n == 4


def test_by_hand():
    # gaps 1, 2, 3: mean 2, sd 1, t(0.975, 2) = 4.302653: 2 +- 2.484138
    result = verdict([1.0, 2.0, 3.0])
    assert (result.low, result.high) == pytest.approx((2 - 2.484138, 2 + 2.484138), abs=1e-6)
    assert result.verdict == "undecided"  # the interval holds 0
    assert verdict([1.0, 1.1, 0.9]).verdict == "A better"  # 1 +- 0.248
    assert verdict([-1.0, -1.1, -0.9]).verdict == "B better"


def test_the_pairing_is_what_counts():
    """Each arm's own spread hides a gap that every seed shows; the paired test sees it."""
    a = np.array([0.50, 0.70, 0.90])
    result = compare(a + 0.02 + np.array([0.0, 0.001, -0.001]), a, claim="c", metric="m",
                     seeds=SEEDS)
    assert result.verdict == "A better"
    assert stats.ttest_ind(a + 0.02, a).pvalue > 0.5  # unpaired, nothing to see


def test_a_minimum_effect_must_be_cleared():
    assert verdict([1.0, 1.1, 0.9], minimum_effect=0.5).verdict == "A better"
    assert verdict([1.0, 1.1, 0.9], minimum_effect=0.8).verdict == "undecided"  # low 0.75
    assert verdict([-1.0, -1.1, -0.9], minimum_effect=0.8).verdict == "undecided"


def test_equivalence_needs_the_whole_interval_inside_the_margin():
    small = [0.01, -0.01, 0.0]  # 0 +- 0.0248
    assert verdict(small, margin=0.05).verdict == "equivalent"
    assert verdict(small, margin=0.02).verdict == "undecided"  # the interval pokes out
    noisy = [0.04, -0.04, 0.0]  # 0 +- 0.099: no evidence of a difference, and no tie
    assert verdict(noisy, margin=0.05).verdict == "undecided"
    assert verdict([1.0, 1.1, 0.9], margin=0.05).verdict == "A better"  # a positive control


def test_lower_is_better():
    losses_a, losses_b = np.array([2.0, 2.1, 1.9]), np.array([2.5, 2.6, 2.4])
    result = compare(losses_a, losses_b, claim="c", metric="loss", seeds=SEEDS,
                     names=("warm-up", "none"), higher_is_better=False)
    assert result.verdict == "A better" and result.winner == "warm-up"
    assert result.mean_gap == pytest.approx(-0.5)
    again = compare(losses_b, losses_a, claim="c", metric="loss", seeds=SEEDS,
                    higher_is_better=False)
    assert again.verdict == "B better"


def test_the_sentence_and_the_record():
    result = compare([0.9, 0.8, 0.85], [0.6, 0.62, 0.58], claim="Projections help",
                     metric="accuracy", seeds=SEEDS, names=("with", "without"))
    text = result.sentence()
    assert text.startswith("with better (accuracy, with minus without: mean gap 0.25")
    assert "95% interval" in text and "3 paired seeds" in text
    shown = result._repr_html_()
    data = re.search(r'data-claim="([^"]*)"', shown).group(1)
    record = json.loads(data.replace("&quot;", '"').replace("&#x27;", "'").replace("&amp;", "&"))
    assert record["verdict"] == "A better" and record["n"] == 3 and record["sentence"] == text
    assert comparison.RECORD_CLASS in shown


def test_a_descriptive_metric_names_the_direction():
    result = compare([0.9, 0.8, 0.85], [0.6, 0.62, 0.58], claim="Same sense stays closer",
                     metric="cosine", seeds=SEEDS, names=("same sense", "other sense"),
                     better="higher")
    assert result.verdict == "A better"
    assert result.sentence().startswith("same sense higher (cosine")
    assert result.record()["better"] == "higher"


@pytest.mark.parametrize("a, b, seeds, settings, message", [
    ([1, 2], [1, 2], (0, 1), {}, "at least 3"),
    ([1, 2, 3], [1, 2], SEEDS, {}, "one value of A and of B per seed"),
    ([1, 2, 3], [1, 2, 3], (0, 1, 1), {}, "distinct"),
    ([1, 2, float("nan")], [1, 2, 3], SEEDS, {}, "NaN"),
    ([1, 2, 3], [1, 2, 3], SEEDS, {"margin": 0}, "margin must be positive"),
    ([1, 2, 3], [1, 2, 3], SEEDS, {"minimum_effect": -1}, "minimum effect"),
])
def test_bad_input_is_refused_by_name(a, b, seeds, settings, message):
    with pytest.raises(ValueError, match=message):
        compare(a, b, claim="c", metric="m", seeds=seeds, **settings)
