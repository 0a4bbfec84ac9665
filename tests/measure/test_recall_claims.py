"""The measures behind chapter 8's claims: the spread of a mixing row, the weight on the
matching pair, and the hinted reader of the power check."""

import math

import pytest
import torch

from minibert.measure import recall
from minibert.model.recall import RecallModel
from minibert.text.recall import RecallTask
from minibert.training.recall import accuracy


def test_query_row_spread_is_zero_for_one_common_weight_and_sd_over_mean_size_otherwise():
    assert recall.query_row_spread(torch.full((8,), -0.4)) == pytest.approx(0.0, abs=1e-6)
    assert recall.query_row_spread(torch.tensor([1.0, -1.0])) == pytest.approx(math.sqrt(2))


class FixedMixing:
    """A stand-in model whose query row puts `weight` on the matching pair."""

    def __init__(self, weight: float):
        self.weight = weight

    def mixing_matrix(self, keys, values):
        B, T = keys.shape
        weights = torch.full((B, T, T), (1 - self.weight) / (T - 1))
        is_match = keys[:, :-1] == keys[:, -1:]  # (B, T-1)
        weights[:, -1, :-1][is_match] = self.weight
        return weights


def test_weight_on_match_reads_the_query_rows_weight_on_the_matching_pair():
    task = RecallTask()
    keys, values, _ = task.sample(50, torch.Generator().manual_seed(0))
    assert recall.weight_on_match(FixedMixing(0.7), keys, values) == pytest.approx(0.7)


def test_hinted_accuracy_runs_from_the_models_own_accuracy_to_one():
    task = RecallTask()
    torch.manual_seed(0)
    model = RecallModel(task, "dense")
    keys, values, answers = task.sample(2000, torch.Generator().manual_seed(1))
    own = accuracy(model, keys, values, answers)
    assert recall.hinted_accuracy(model, keys, values, answers, share=0.0) == own
    assert recall.hinted_accuracy(model, keys, values, answers, share=1.0) == 1.0
    half = recall.hinted_accuracy(model, keys, values, answers, share=0.5)
    assert half == pytest.approx(own + 0.5 * (1 - own), abs=0.04)
