"""The associative-recall task and its two models: the data are what they claim, the
mixing layers have the symmetries the chapter asserts, and a short run learns."""

import pytest
import torch

from minibert.measure import recall
from minibert.model.recall import AttentionMixing, DenseTokenMixing, RecallModel, build_pair
from minibert.text.recall import RecallTask
from minibert.training.recall import recall_run, train_recall


def sample(task, n=64, seed=0):
    return task.sample(n, torch.Generator().manual_seed(seed))


def test_examples_hold_a_table_with_distinct_keys_and_the_answer_under_the_query():
    task = RecallTask(num_keys=10, num_values=5, num_pairs=6)
    keys, values, answers = sample(task, n=200)
    assert keys.shape == values.shape == (200, task.seq_len)
    assert (values[:, -1] == task.query_value).all()
    assert (values[:, :-1] < task.num_values).all()
    for k, v, a in zip(keys, values, answers):
        table = dict(zip(k[:-1].tolist(), v[:-1].tolist()))
        assert len(table) == task.num_pairs  # distinct keys
        assert table[k[-1].item()] == a.item()


def test_sampling_follows_the_generator():
    task = RecallTask()
    first, again = sample(task, seed=3), sample(task, seed=3)
    assert all(torch.equal(a, b) for a, b in zip(first, again))
    assert not torch.equal(first[0], sample(task, seed=4)[0])


@pytest.mark.parametrize("changes", [{"num_pairs": 0}, {"num_pairs": 17}, {"num_values": 1}])
def test_bad_tasks_are_refused(changes):
    with pytest.raises(ValueError):
        RecallTask(**changes)


def test_bag_of_values_accuracy_lies_between_chance_and_one():
    one_pair = RecallTask(num_pairs=1)
    assert recall.bag_of_values_accuracy(one_pair, num_examples=500) == 1.0
    task = RecallTask()
    level = recall.bag_of_values_accuracy(task, num_examples=5000)
    assert 1 / task.num_values < level < 0.5


def test_attention_mixing_is_permutation_equivariant_and_dense_mixing_is_not():
    torch.manual_seed(0)
    T, d = 7, 32
    attention = AttentionMixing(d, num_heads=4).double().eval()
    dense = DenseTokenMixing(T, d).double().eval()
    x = torch.randn(2, T, d, dtype=torch.float64)
    order = torch.randperm(T)
    with torch.no_grad():
        assert torch.allclose(attention(x[:, order]), attention(x)[:, order], atol=1e-10)
        assert not torch.allclose(dense(x[:, order]), dense(x)[:, order], atol=1e-3)


def test_attention_mixing_rows_are_input_dependent_averages_and_dense_rows_are_fixed():
    torch.manual_seed(0)
    attention = AttentionMixing(16, num_heads=2).eval()
    dense = DenseTokenMixing(5, 16).eval()
    x, y = torch.randn(1, 5, 16), torch.randn(1, 5, 16)
    with torch.no_grad():
        weights = attention.mixing_matrix(torch.cat([x, y]))  # (2, 5, 5)
        fixed = dense.mixing_matrix(torch.cat([x, y]))
    assert torch.allclose(weights.sum(-1), torch.ones(2, 5))
    assert (weights >= 0).all()
    assert not torch.allclose(weights[0], weights[1])
    assert torch.equal(fixed[0], fixed[1])
    assert torch.equal(fixed[0], dense.mixing.detach())


def test_build_pair_matches_the_parameter_counts():
    task = RecallTask()
    attention, dense = build_pair(task, width=32, mlp_width=64)
    assert attention.mixing_kind == "attention" and dense.mixing_kind == "dense"
    difference = abs(attention.num_parameters() - dense.num_parameters())
    assert difference <= 2 * 32 + 1  # within one feed-forward unit


def test_unknown_mixing_is_refused():
    with pytest.raises(ValueError, match="mixing"):
        RecallModel(RecallTask(), "convolution")


def test_models_give_one_score_per_value_at_the_query():
    task = RecallTask(num_values=7)
    keys, values, _ = sample(task, n=5)
    for model in build_pair(task, width=16, mlp_width=32):
        assert model(keys, values).shape == (5, 7)


def test_a_short_run_teaches_attention_the_task_and_records_the_probe():
    torch.manual_seed(0)
    task = RecallTask(num_keys=8, num_values=8, num_pairs=4)
    attention, _ = build_pair(task, width=32, mlp_width=64)
    probe = sample(task, n=2, seed=9)[:2]
    history = train_recall(attention, steps=60, eval_every=30, eval_size=300,
                                  probe=probe)
    assert history.steps == [0, 30, 60]
    assert history.accuracy[-1] > 0.9 > history.accuracy[0]
    assert len(history.query_weights) == 3
    assert history.query_weights[0].shape == (2, task.seq_len)
    assert not torch.equal(history.query_weights[0], history.query_weights[-1])


def test_a_recall_run_is_the_seeded_model_trained_here():
    """recall_run, the run `processes.run_all` sends to a training process, draws its
    weights from the seed and then trains exactly as train_recall does."""
    task = RecallTask(num_keys=8, num_values=8, num_pairs=4)
    torch.manual_seed(3)
    model = RecallModel(task, "attention", width=32, num_heads=2)
    expected = train_recall(model, steps=20, seed=3, eval_every=10, eval_size=200)
    steps_reported = []
    history = recall_run(task, "attention", seed=3, steps=20, eval_every=10, eval_size=200,
                         on_step=steps_reported.append, width=32, num_heads=2)
    assert history.accuracy == expected.accuracy and history.steps == expected.steps
    assert steps_reported == [20]
