"""Part I's figures (chapters 1-8): attention maps, what layers cost, attention vs dense."""

from __future__ import annotations

import math
from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch

# ---------------------------------------------------------- chapters 1-4: attention maps

def attention_heatmap(ax, weights: torch.Tensor, tokens: Sequence[str], title: str = "",
                      vmax: float | None = None) -> None:
    """Draw one (T, T) attention map: row = the token that attends, column = attended to."""
    ax.imshow(weights.detach().cpu().numpy(), cmap="viridis", vmin=0, vmax=vmax)
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=8)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
    ax.set_xlabel("attended-to token (key)")
    ax.set_ylabel("attending token (query)")
    ax.set_title(title)


def padded_attention_map(weights: torch.Tensor, tokens: Sequence[str], title: str = "",
                         columns: int | None = None) -> plt.Figure:
    """An (n, n + extra) map of real tokens' attention over the keys, the padding columns
    labelled [PAD]; `columns` fixes the x range so that maps with more padding line up."""
    n, width = weights.shape
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.22 * n))
    ax.imshow(weights.cpu().numpy(), vmin=0, vmax=0.4, aspect="auto")
    ax.set_xlim(-0.5, (columns or width) - 0.5)
    ax.set_xticks(range(width), list(tokens) + ["[PAD]"] * (width - n), rotation=90,
                  fontsize=6)
    ax.set_yticks(range(n), tokens, fontsize=7)
    ax.set(xlabel="key (attended to)", ylabel="query")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------- chapter 7: what layers cost

def _plain_tick(value, _position) -> str:
    """A log axis's tick label as plain text (10,000; 0.01): LaTeX-style 10^k labels take
    most of a redraw's time."""
    return f"{value:,g}"


def _power_of_ten_tick(value, _position) -> str:
    return f"1e{math.log10(value):.0f}"


def attention_against_recurrence(width: int, crossovers: dict, lengths: Sequence[int],
                                 measured: dict) -> plt.Figure:
    """Left, the FLOP formulas of attention and recurrence at width d, with two crossovers
    marked; right, measured times (`measured[kind]`, seconds at each of `lengths`, kinds
    "attention" and "RNN") with the point where attention's time overtakes the RNN's.
    `crossovers[(attention, recurrence, width)]` is the first n where attention costs as
    much, as chapter 7 computes it."""
    from ..measure import cost

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    ns = [16 * (4096 / 16) ** (i / 59) for i in range(60)]  # 16 .. 4096, log-spaced
    curves = [("attention core $4n^2d$", cost.attention_core_flops, "C0", "--"),
              ("attention with Q, K, V $6nd^2+4n^2d$", cost.self_attention_flops, "C0", "-"),
              ("RNN $4nd^2$", cost.recurrent_flops, "C3", "-"),
              ("LSTM $16nd^2$", lambda n, d: cost.recurrent_flops(n, d, gates=4), "C3", "--")]
    for label, formula, colour, style in curves:
        left.loglog(ns, [formula(n, width) for n in ns], style, color=colour, label=label)
    marks = [("core", "RNN", cost.attention_core_flops, "n = d"),
             ("with Q,K,V", "LSTM", cost.self_attention_flops, "n = 2.5d")]
    for attention, recurrence, formula, text in marks:
        n_cross = crossovers[attention, recurrence, width]
        y_cross = formula(n_cross, width)
        left.plot(n_cross, y_cross, "ko")
        left.annotate(f"{text} = {n_cross}", (n_cross, y_cross), fontsize=8,
                      xytext=(6, -6), textcoords="offset points", va="top")
    left.set(xlabel="sequence length n", ylabel="FLOPs", title=f"Counted, d = {width}")
    left.legend(fontsize=8)
    for kind, colour, label in [("attention", "C0", "attention (fused)"), ("RNN", "C3", "RNN")]:
        right.loglog(lengths, [seconds * 1e3 for seconds in measured[kind]], "o-",
                     color=colour, label=label)
    right.axvline(width, color="grey", lw=0.8, ls=":")
    where = cost.crossing_point(lengths, measured["attention"], measured["RNN"])
    if where:
        right.axvline(where, color="grey", lw=0.8)
        right.annotate(f" times cross\n near n = {where:.0f}", (where, right.get_ylim()[1]),
                       fontsize=8, color="grey", va="top")
    right.set(xlabel="sequence length n", ylabel="time (ms, one CPU thread)",
              title=f"Measured, d = {width} (dotted: n = d)")
    right.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def layer_cost(n: int, d: int) -> plt.Figure:
    """FLOPs (left) and memory (right) of a layer of width d against the length, with the
    chosen length n marked: chapter 7's explorer. Heads of width 64, as in BERT."""
    from matplotlib.ticker import FuncFormatter

    from ..measure import cost

    lengths = sorted({int(16 * 1024 ** (i / 39)) for i in range(40)})  # 16 .. 16384
    curves = {  # name -> (FLOPs at length m, colour, style)
        "attention sublayer": (cost.attention_sublayer_flops, "C0", "-"),
        "scores + weighted sum": (cost.attention_core_flops, "C0", "--"),
        "feed-forward (4d)": (lambda m, d: cost.feed_forward_flops(m, d, 4 * d), "C2", "-"),
        "RNN": (cost.recurrent_flops, "C3", "-"),
        "LSTM": (lambda m, d: cost.recurrent_flops(m, d, gates=4), "C3", "--")}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for name, (flops, colour, style) in curves.items():
        left.loglog(lengths, [flops(m, d) for m in lengths], style, color=colour, label=name)
        left.plot(n, flops(n, d), "o", color=colour)
    left.set(xlabel="sequence length n", ylabel="FLOPs", title=f"FLOPs, d = {d}")
    left.legend(fontsize=7)
    heads = max(1, d // 64)
    megabytes = {f"score tensor, {heads} heads": lambda m: cost.score_bytes(m, heads) / 1e6,
                 "one (n, d) activation": lambda m: 4 * m * d / 1e6}  # float32
    for (label, size), colour in zip(megabytes.items(), ("C0", "C2")):
        right.loglog(lengths, [size(m) for m in lengths], color=colour, label=label)
        right.plot(n, size(n), "ko")
    right.set(xlabel="sequence length n", ylabel="MB (float32)", title="memory per layer")
    right.legend(fontsize=7)
    share = cost.attention_core_flops(n, d) / cost.attention_sublayer_flops(n, d)
    fig.suptitle(f"n = {n}, d = {d}: the n² terms are {share:.0%} of the attention "
                 "sublayer's FLOPs", fontsize=10)
    for ax, y_ticks in ((left, _power_of_ten_tick), (right, _plain_tick)):
        ax.axvline(n, color="grey", lw=0.8)
        ax.minorticks_off()
        ax.xaxis.set_major_formatter(FuncFormatter(_plain_tick))
        ax.yaxis.set_major_formatter(FuncFormatter(y_ticks))
    fig.tight_layout()
    return fig


# ---------------------------------------------------- chapter 8: attention against dense

def recall_training_frame(histories: dict, seeds: Sequence[int], step: int, probe,
                          levels: dict) -> plt.Figure:
    """Chapter 8's slider frame: left, every seed's held-out accuracy up to `step` for each
    mixing kind, with `levels` ({label: accuracy}) as dashed lines; middle and right, the
    first seed's query-row mixing weights on the probe table at `step`, the pair holding
    the query's key in green. `histories[kind]` holds one RecallHistory per seed; probe
    is (keys, values, answers) of one table, each (1, T) or (1,)."""
    import numpy as np

    colors = {"attention": "tab:blue", "dense": "tab:orange"}
    steps = np.array(histories["attention"][0].steps)
    shown = steps <= step
    index = int(shown.sum()) - 1
    keys, values = probe[0][0], probe[1][0]  # (T,) each
    match = int((keys[:-1] == keys[-1]).nonzero())  # the slot holding the query's key
    labels = [f"{k}->{v}" for k, v in zip(keys[:-1].tolist(), values[:-1].tolist())]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.3), layout="constrained")
    for kind, runs in histories.items():
        for seed, run in zip(seeds, runs):
            axes[0].plot(steps[shown], np.array(run.accuracy)[shown], "-o", markersize=3,
                         color=colors[kind], label=kind if seed == seeds[0] else None)
    for (label, level), style in zip(levels.items(), ("--", ":", "-.")):
        axes[0].axhline(level, color="gray", linestyle=style, label=label)
    axes[0].set(xlim=(-5, steps[-1] + 5), ylim=(0, 1.05), xlabel="training step",
                ylabel="held-out accuracy",
                title=f"accuracy, {len(seeds)} seeds (step {step})")
    axes[0].legend(fontsize=8, loc="center right")
    for ax, kind in zip(axes[1:], ("attention", "dense")):
        weights = histories[kind][0].query_weights[index][0].cpu().numpy()  # (T,)
        positions = range(len(weights))
        ax.bar(positions, weights,
               color=[colors[kind] if j != match else "tab:green" for j in positions])
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(positions, labels + ["query"], rotation=45, fontsize=8)
        ax.set(xlabel=f"position (key->value); query key {keys[-1].item()}",
               ylabel="weight from the query position",
               title=f"{kind}: query row of the mixing matrix")
    return fig


def mixing_matrices(mixing: dict, keys: torch.Tensor) -> plt.Figure:
    """Chapter 8's mixing matrices: one row of panels per kind (`mixing[kind]`, (N, T, T)
    on N tables), one column per table, each axis labelled by the table's keys (N, T)."""
    tables = keys.shape[0]
    fig, axes = plt.subplots(len(mixing), tables, figsize=(4.5 * tables, 4 * len(mixing)),
                             layout="constrained", squeeze=False)
    for row, (kind, weights) in enumerate(mixing.items()):
        scale = weights.abs().max().item()
        for column in range(tables):
            ax = axes[row, column]
            image = ax.imshow(weights[column].cpu().numpy(), cmap="RdBu_r",
                              vmin=-scale, vmax=scale)
            labels = [str(k) for k in keys[column].tolist()]
            ax.set_xticks(range(len(labels)), labels)
            ax.set_yticks(range(len(labels)), labels)
            ax.set(xlabel="sending position (its key)", ylabel="receiving position",
                   title=f"{kind}, table {column + 1}")
        fig.colorbar(image, ax=axes[row], shrink=0.8, label="mixing weight")
    fig.suptitle("Mixing matrices on two inputs: computed (attention) vs fixed (dense)")
    return fig
