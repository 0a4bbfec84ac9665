"""What self-attention costs: exact FLOP formulas, and small tools to measure time and memory.

FLOPs count the multiply-adds of the matrix products only, each as 2 operations (one
multiply, one add), as `torch.utils.flop_counter` does. Biases, the 1/sqrt(d_k) scale,
the softmax and the tanh are left out: they are O(n d) or O(h n^2) elementwise work,
small beside the products. n = sequence length, d = model width (hidden size).
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence

import torch

from ..runtime import one_thread as calling_thread_only


def attention_flops(n: int, d: int, batch: int = 1) -> dict[str, int]:
    """FLOPs of one BERT self-attention sublayer, by part. The number of heads does not
    appear: h heads of width d/h do h * n^2 * d/h = n^2 * d work, as one head of width d."""
    return {
        "Q, K, V projections": batch * 3 * 2 * n * d * d,  # three (n, d) @ (d, d)
        "scores Q K^T": batch * 2 * n * n * d,  # (n, d) @ (d, n)
        "weighted sum A V": batch * 2 * n * n * d,  # (n, n) @ (n, d)
        "output projection": batch * 2 * n * d * d,  # (n, d) @ (d, d)
    }


def attention_core_flops(n: int, d: int) -> int:
    """The scores and the weighted sum alone: Vaswani's O(n^2 d), the "attention" of the
    usual rule of thumb."""
    parts = attention_flops(n, d)
    return parts["scores Q K^T"] + parts["weighted sum A V"]


def self_attention_flops(n: int, d: int) -> int:
    """What minibert's BertSelfAttention computes: the core plus the Q, K, V projections
    (the output projection belongs to the next module)."""
    return attention_core_flops(n, d) + attention_flops(n, d)["Q, K, V projections"]


def attention_sublayer_flops(n: int, d: int) -> int:
    """The whole attention sublayer, output projection included."""
    return sum(attention_flops(n, d).values())


def bert_layer_flops(n: int, d: int) -> tuple[int, int]:
    """(quadratic part, linear part) of one BERT layer's FLOPs, feed-forward width 4d:
    the n^2 terms of attention against everything that grows like n."""
    parts = attention_flops(n, d)
    linear = parts["Q, K, V projections"] + parts["output projection"]
    return attention_core_flops(n, d), linear + feed_forward_flops(n, d, 4 * d)


def recurrent_flops(n: int, d: int, batch: int = 1, gates: int = 1) -> int:
    """FLOPs of a recurrent layer with input and state of width d over n steps: each step
    multiplies the input and the previous state by a (d, d) matrix per gate.
    gates = 1 for a plain (Elman) RNN, 3 for a GRU, 4 for an LSTM."""
    return batch * gates * 2 * (2 * n * d * d)


def feed_forward_flops(n: int, d: int, intermediate: int, batch: int = 1) -> int:
    """FLOPs of the position-wise feed-forward block: (n, d) @ (d, d_ff), then back."""
    return batch * 2 * 2 * n * d * intermediate


def score_bytes(n: int, heads: int, batch: int = 1, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of one (batch, heads, n, n) score or weight tensor. Independent of d."""
    return batch * heads * n * n * torch.finfo(dtype).bits // 8


def additive_score_flops(n: int, d: int, heads: int, batch: int = 1) -> dict[str, int]:
    """FLOPs of Bahdanau's additive scores (`attention_score="additive"`) for h heads of
    width d_k = d/h, by part: each head's W q and U k, (n, d_k) @ (d_k, d_k) twice, and
    v·tanh(...) for each of the n^2 pairs, a d_k-long dot product. The sum W q_i + U k_j and
    the tanh are n^2 d more elementwise operations each, not counted (see the module's
    note); q·k itself would be 2 n^2 d."""
    hs = d // heads
    return {"W q and U k": batch * heads * 2 * 2 * n * hs * hs,
            "v · tanh(...)": batch * 2 * n * n * d}


def additive_hidden_bytes(n: int, d: int, batch: int = 1,
                          dtype: torch.dtype = torch.float32) -> int:
    """Bytes of the additive scorer's tanh(W q_i + U k_j) for every pair: one (n, n, d_k)
    tensor per head, (batch, h, n, n, d/h) in all, d/h times `score_bytes`' size."""
    return batch * n * n * d * torch.finfo(dtype).bits // 8


def crossover(lengths: Sequence[int], cost_a: Callable[[int], float],
              cost_b: Callable[[int], float]) -> int | None:
    """The first length at which cost_a is no longer below cost_b (None if it stays below)."""
    return next((n for n in lengths if cost_a(n) >= cost_b(n)), None)


def fit_exponent(xs: Sequence[float], ys: Sequence[float]) -> float:
    """The slope k of a least-squares line through (log x, log y): y grows like x^k."""
    log_x = [math.log(x) for x in xs]
    log_y = [math.log(y) for y in ys]
    mean_x, mean_y = sum(log_x) / len(log_x), sum(log_y) / len(log_y)
    covariance = sum((a - mean_x) * (b - mean_y) for a, b in zip(log_x, log_y))
    return covariance / sum((a - mean_x) ** 2 for a in log_x)


def crossing_point(xs: Sequence[float], ys_a: Sequence[float],
                   ys_b: Sequence[float]) -> float | None:
    """Where measured curve a rises above curve b for good: the last upward crossing,
    interpolated on log-log axes between the two points around it (at small sizes, where
    fixed overheads dominate, measured curves may cross back and forth). None if a ends
    below b or never crosses it from below."""
    ratios = [math.log(a / b) for a, b in zip(ys_a, ys_b)]  # > 0 where a is above b
    for i in range(len(xs) - 1, 0, -1):
        if ratios[i] < 0:
            return None
        if ratios[i - 1] < 0:
            share = -ratios[i - 1] / (ratios[i] - ratios[i - 1])
            return math.exp(math.log(xs[i - 1]) + share * math.log(xs[i] / xs[i - 1]))
    return None


def count_flops(fn: Callable[[], object]) -> int:
    """Matrix-product FLOPs that torch's FlopCounterMode sees while fn() runs."""
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops()


def _synchronize(device: torch.device | None) -> None:
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)


def time_calls(calls: dict[str, Callable[[], object]], repeats: int = 5,
               device: torch.device | None = None, one_thread: bool = True) -> dict[str, float]:
    """Seconds per call: the fastest of `repeats` runs (the minimum also drops the first,
    cold run, which pays for allocations and one-time setup).

    On the CPU with one_thread=True (the default), torch runs on the calling thread only
    and the clock is that thread's CPU time: other programs on a shared machine then
    cannot add their time to ours, as they do to wall time whenever we wait for a core.
    Otherwise (several threads, or CUDA, synchronised) the clock is wall time.
    The calls take turns (a, b, c, a, b, c, ...), so a slow spell hits all of them alike."""
    on_cuda = device is not None and device.type == "cuda"
    cpu_clock = one_thread and not on_cuda
    clock = time.thread_time if cpu_clock else time.perf_counter
    times: dict[str, list[float]] = {name: [] for name in calls}
    with torch.no_grad(), (calling_thread_only() if cpu_clock else contextlib.nullcontext()):
        for _ in range(repeats):
            for name, fn in calls.items():
                _synchronize(device)
                start = clock()
                fn()
                _synchronize(device)
                times[name].append(clock() - start)
    return {name: min(values) for name, values in times.items()}


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Silence C-level writes to stderr (the profiler logs its start and stop there)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(os.devnull, "w") as devnull:
        os.dup2(devnull.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def peak_memory(fn: Callable[[], object], device: torch.device | None = None) -> int:
    """Peak bytes that fn() holds allocated beyond what existed before it ran.

    On CUDA from the allocator's own statistics; on the CPU from torch's profiler, which
    records every allocation and free: their running sum, in time order, peaks here."""
    if device is not None and device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)
        before = torch.cuda.memory_allocated(device)
        with torch.no_grad():
            fn()
        torch.cuda.synchronize(device)
        return torch.cuda.max_memory_allocated(device) - before
    from torch.profiler import ProfilerActivity, profile

    with _quiet_stderr(), torch.no_grad():
        with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as profiler:
            fn()
    changes = sorted((event.time_range.start, event.self_cpu_memory_usage)
                     for event in profiler.events() if event.self_cpu_memory_usage)
    held, peak = 0, 0
    for _, change in changes:
        held += change
        peak = max(peak, held)
    return peak


def decoding_times(model, source_ids: torch.Tensor, source_mask: torch.Tensor,
                   lengths: Sequence[int], bos_id: int, repeats: int = 3,
                   use_cache: bool = True) -> dict[str, list]:
    """Teacher forcing against greedy generation as the target grows, for a
    sequence-to-sequence model (minibert.model.seq2seq): for each length n, the seconds of
    one teacher-forced pass over n target tokens and of generating n tokens (no EOS stops
    it), timed by `time_calls`, and the sequential decoder steps of each: 1 and n."""
    table: dict[str, list] = {"length": [], "teacher forcing s": [], "generation s": [],
                              "teacher forcing steps": [], "generation steps": []}
    model.eval()
    for n in lengths:
        target_in_ids = torch.full((source_ids.shape[0], n), bos_id, device=source_ids.device)

        def teacher_forcing(target_in_ids=target_in_ids):
            return model(source_ids, source_mask, target_in_ids)

        def generation(n=n):
            return model.generate_greedy(source_ids, source_mask, n, bos_id, None, use_cache)

        seconds = time_calls({"teacher forcing": teacher_forcing, "generation": generation},
                             repeats, device=source_ids.device)
        table["length"].append(n)
        table["teacher forcing s"].append(seconds["teacher forcing"])
        table["generation s"].append(seconds["generation"])
        table["teacher forcing steps"].append(1)
        table["generation steps"].append(generation().num_steps)
    return table
