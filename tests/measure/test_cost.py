"""The cost helpers: FLOP formulas against torch's own count, and the measuring tools."""

import math

import pytest
import torch

import minibert
from minibert.measure import cost
from minibert.model.layers import BertAttention, BertSelfAttention


def self_attention(d, heads):
    return BertSelfAttention(minibert.BertConfig(hidden_size=d, num_attention_heads=heads)).eval()


@pytest.mark.parametrize("n, d, heads", [(7, 16, 1), (33, 64, 4), (64, 32, 8)])
def test_attention_formula_matches_the_flop_counter(n, d, heads):
    layer = self_attention(d, heads)
    x = torch.randn(2, n, d)
    counted = cost.count_flops(lambda: layer(x, None, need_weights=True))
    parts = cost.attention_flops(n, d, batch=2)
    assert counted == sum(parts.values()) - parts["output projection"]


def test_the_sublayer_with_its_output_projection_counts_all_four_parts():
    config = minibert.BertConfig(hidden_size=32, num_attention_heads=4)
    sublayer = BertAttention(config).eval()
    x = torch.randn(1, 10, 32)
    counted = cost.count_flops(
        lambda: sublayer.output(sublayer.self(x, None, need_weights=True)[0], x))
    assert counted == sum(cost.attention_flops(10, 32).values())


def test_heads_do_not_change_the_count():
    counts = {heads: cost.attention_flops(50, 64) for heads in (1, 2, 8)}
    assert len({tuple(c.values()) for c in counts.values()}) == 1


@pytest.mark.parametrize("kind, gates", [(torch.nn.RNN, 1), (torch.nn.GRU, 3)])
def test_recurrent_formula_matches_the_flop_counter(kind, gates):
    layer = kind(24, 24, batch_first=True)
    x = torch.randn(3, 11, 24)
    assert cost.count_flops(lambda: layer(x)) == cost.recurrent_flops(11, 24, batch=3,
                                                                      gates=gates)


def test_feed_forward_formula():
    ffn = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.GELU(), torch.nn.Linear(64, 16))
    x = torch.randn(2, 9, 16)
    assert cost.count_flops(lambda: ffn(x)) == cost.feed_forward_flops(9, 16, 64, batch=2)


def test_score_bytes_is_the_weights_tensor():
    layer = self_attention(32, 4)
    _, weights = layer(torch.randn(2, 13, 32), None, need_weights=True)
    assert cost.score_bytes(13, 4, batch=2) == weights.nelement() * weights.element_size()
    assert cost.score_bytes(13, 4, dtype=torch.float16) * 2 == cost.score_bytes(13, 4)


def test_crossovers_of_the_formulas():
    lengths = range(1, 2000)
    d = 96
    core = lambda n: cost.attention_flops(n, d)["scores Q K^T"] * 2  # noqa: E731
    assert cost.crossover(lengths, core, lambda n: cost.recurrent_flops(n, d)) == d
    assert cost.crossover(lengths, lambda n: 1.0, lambda n: 2.0) is None


def test_fit_exponent_recovers_a_power_law():
    xs = [2, 4, 8, 16, 32]
    assert cost.fit_exponent(xs, [3 * x**2 for x in xs]) == pytest.approx(2.0)
    assert cost.fit_exponent(xs, [0.5 * x**-1 for x in xs]) == pytest.approx(-1.0)


def test_crossing_point():
    xs = [1, 2, 4, 8]
    rising = [1, 2, 4, 8]
    flat = [3, 3, 3, 3]
    point = cost.crossing_point(xs, rising, flat)
    assert point == pytest.approx(3.0)
    assert cost.crossing_point(xs, flat, rising) is None  # ends below
    assert cost.crossing_point(xs, [9, 9, 9, 9], flat) is None  # never below


def test_time_calls_returns_positive_times_and_restores_threads():
    threads = torch.get_num_threads()
    big, small = torch.randn(200, 200), torch.randn(20, 20)
    times = cost.time_calls({"big": lambda: big @ big, "small": lambda: small @ small},
                            repeats=3)
    assert set(times) == {"big", "small"}
    assert all(t > 0 and math.isfinite(t) for t in times.values())
    assert times["big"] > times["small"]
    assert torch.get_num_threads() == threads
    wall = cost.time_calls({"big": lambda: big @ big}, repeats=2, one_thread=False)
    assert wall["big"] > 0


def test_peak_memory_sees_a_temporary_tensor():
    n = 256 * 1024  # one float32 vector of 1 MiB
    peak = cost.peak_memory(lambda: torch.ones(n).sum())
    assert 4 * n <= peak < 3 * 4 * n


def test_peak_memory_of_attention_paths():
    layer = self_attention(64, 2)
    x = torch.randn(1, 256, 64)
    explicit = cost.peak_memory(lambda: layer(x, None, need_weights=True))
    fused = cost.peak_memory(lambda: layer(x, None, need_weights=False))
    assert explicit >= 2 * cost.score_bytes(256, 2)  # scores and weights held at once
    assert fused < cost.score_bytes(256, 2)


def test_additive_scores_flops_and_memory():
    config = minibert.BertConfig(hidden_size=64, num_attention_heads=2,
                                 attention_score="additive")
    layer = BertSelfAttention(config).eval()
    torch.nn.init.normal_(layer.additive_vector)  # built without init_module
    torch.nn.init.normal_(layer.additive_query)
    torch.nn.init.normal_(layer.additive_key)
    q, k = torch.randn(2, 2, 48, 32), torch.randn(2, 2, 48, 32)  # (B, nh, T, hs)
    counted = cost.count_flops(lambda: layer.score(q, k))
    assert counted == sum(cost.additive_score_flops(48, 64, 2, batch=2).values())
    peak = cost.peak_memory(lambda: layer.score(q, k))
    assert peak >= cost.additive_hidden_bytes(48, 64, batch=2) == 32 * cost.score_bytes(48, 2, 2)
