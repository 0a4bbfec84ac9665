"""Part II's figures (chapters 12-14): ids through the sum, position tables, [CLS] readouts."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch

# ------------------------------------------------------- chapter 12: ids through the sum

def token_recovery(hidden: int, margins: dict, model_point: tuple[int, float, str]
                   ) -> plt.Figure:
    """Left, the distance advantage of the true token at one width (`margins[hidden]`,
    per sample; right of 0: recovered); right, the recovery rate against the width, with
    a real model's (H, rate, label) as a star. All widths share the histogram's bins."""
    import numpy as np

    widths = sorted(margins)
    recovery = {h: (margins[h] > 0).float().mean().item() for h in widths}
    every_margin = torch.cat([margins[h] for h in widths])
    edges = np.linspace(every_margin.min().item(), every_margin.max().item(), 61)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.1))
    left.hist(margins[hidden].numpy(), bins=edges, color="#6fa8dc")
    left.axvline(0, color="black", linestyle="--", linewidth=1)
    left.set_xlim(edges[0], edges[-1])
    left.set(xlabel="distance advantage of the true token (right of 0: recovered)",
             ylabel="samples", title=f"H={hidden}: {recovery[hidden]:.0%} of tokens recovered")
    model_width, model_rate, model_label = model_point
    right.plot(widths, list(recovery.values()), "o-", color="#6fa8dc", label="random tables")
    right.plot([model_width], [model_rate], "*", color="#e06666", markersize=12,
               label=model_label)
    right.plot([hidden], [recovery[hidden]], "o", color="black")
    ticks = widths[::2] + [model_width]
    right.set_xscale("log", base=2)
    right.set_xticks(ticks, [str(h) for h in ticks])
    right.minorticks_off()
    right.set_ylim(0, 1.05)
    right.set(xlabel="hidden size H", ylabel="token recovery rate",
              title="reading the token back from token + position")
    right.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------- chapter 13: position tables

def position_similarities(similarity: dict, trained_length: int) -> plt.Figure:
    """Side-by-side cosine matrices of position tables (name -> (P, P)), with lines where the
    training rows end: shows where a table has structure and where it is noise."""
    fig, axes = plt.subplots(1, len(similarity), figsize=(5 * len(similarity), 4.4),
                             layout="constrained")
    for ax, (name, matrix) in zip(axes, similarity.items()):
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.axvline(trained_length - 0.5, color="black", linewidth=0.8)
        ax.axhline(trained_length - 0.5, color="black", linewidth=0.8)
        ax.set(xlabel="position", ylabel="position", title=f"{name} table: cosine between rows")
    fig.colorbar(image, ax=axes, shrink=0.8)
    return fig


def row_movement(ax, moved, decay_line, trained_length: int) -> None:
    """How far each learned position row moved in training (log scale), beside what weight
    decay alone predicts, with a line where the training rows end."""
    rows = range(len(moved))
    ax.semilogy(rows, moved, ".", label="distance from initialisation")
    ax.semilogy(rows, decay_line, "-", color="gray", linewidth=1,
                label="weight decay alone: (1 − factor) · |initial row|")
    ax.axvline(trained_length - 0.5, color="black", linestyle="--", linewidth=1)
    ax.text(trained_length + 1, max(moved), "training rows end here", va="top")
    ax.set(xlabel="position (row of the table)", ylabel="|trained row − initial row|",
           title=f"Learned position table after pre-training on {trained_length}-token rows")
    ax.legend(loc="center right")


# ----------------------------------------------------------- chapter 14: the [CLS] token

def readout_by_layer(ax, results: dict, readout: str, chance: float, title: str = ""):
    """Accuracy by layer for each sentence vector: a thin line per seed and a thick line for
    their mean, so every seed shows. results: {seed: {readout: {vector: (L + 1,) accuracy}}}."""
    seeds = list(results)
    names = list(results[seeds[0]][readout])
    for k, name in enumerate(names):
        runs = [results[seed][readout][name] for seed in seeds]  # seeds x (L + 1,)
        layers = range(len(runs[0]))
        for run in runs:
            ax.plot(layers, run, color=f"C{k}", linewidth=0.8, alpha=0.5)
        ax.plot(layers, [sum(v) / len(v) for v in zip(*runs)], marker="o", color=f"C{k}",
                linewidth=2, label=name)
    ax.axhline(chance, color="gray", linestyle="--", label="chance")
    ax.set_xticks(list(layers))
    ax.set(ylim=(0, 1.05), title=title, xlabel="layer (0 = embeddings)")
    return ax
