"""Part III's figures (chapters 20-25): masked rows, NSP pairs, visible context, probes."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt

# ------------------------------------------------------------- chapter 20: the mask rate

def masked_row_answers(seen: Sequence[str], answers: Sequence[str], chosen: Sequence[bool],
                       right: Sequence[bool], title: str, per_line: int = 12) -> plt.Figure:
    """A masked row as a model reads it (chosen tokens in blue) and under each token the
    model's answer where it was chosen, on green if right and red if wrong (the original
    token, in plain text, elsewhere): what a masked-LM model gets from a row, at a glance."""
    fig, ax = plt.subplots(figsize=(10, 2.2))
    ax.axis("off")
    for t, (read, answer, asked, ok) in enumerate(zip(seen, answers, chosen, right)):
        x, line = (t % per_line) / per_line, 2 * (t // per_line)
        ax.text(x, -line, read, fontsize=8, va="center", color="tab:blue" if asked else "0.4")
        style = {"color": "white", "bbox": {"facecolor": "tab:green" if ok else "tab:red",
                                            "pad": 1.5, "edgecolor": "none"}} if asked else {}
        ax.text(x, -line - 0.8, answer, fontsize=9, va="center", **style)
    ax.set_ylim(-2 * (len(seen) // per_line) - 1.4, 0.6)
    ax.set_title(title, fontsize=9)
    return fig


def seeds_across_settings(ax, xs: Sequence[float], values: Sequence[Sequence[float]],
                          seeds: Sequence[int], ylabel: str = "", title: str = ""):
    """A sweep whose settings share their seeds (same weights and batches at every setting):
    one grey line per seed across the settings, labelled at its end, so the pairing shows,
    and the seeds' mean in colour. values[i][j]: the value at setting xs[i] for seeds[j]."""
    for j, seed in enumerate(seeds):
        column = [row[j] for row in values]  # this seed at every setting
        ax.plot(xs, column, "o-", color="0.6", markersize=3, linewidth=1)
        ax.annotate(f"seed {seed}", (xs[-1], column[-1]), xytext=(4, 0),
                    textcoords="offset points", fontsize=7, va="center", color="0.4")
    ax.plot(xs, [sum(row) / len(row) for row in values], "s-", color="C3", markersize=5,
            linewidth=2, label="mean of the seeds")
    ax.set(ylabel=ylabel, title=title)
    return ax


# -------------------------------------------------- chapter 21: next sentence prediction

def nsp_pair_card(text_a: str, text_b: str, truth: str, p_is_next: float) -> plt.Figure:
    """Chapter 21's slider frame: one pair's segments beside the NSP head's P(IsNext), the
    bar green where the head's verdict (P > 0.5 means IsNext) matches `truth`, else red."""
    import textwrap

    fig, (text_ax, bar_ax) = plt.subplots(1, 2, figsize=(9, 2.8),
                                          gridspec_kw={"width_ratios": [4, 1]})
    text_ax.axis("off")
    wrapped = textwrap.fill("A: " + text_a, 80) + "\n\n" + textwrap.fill("B: " + text_b, 80)
    text_ax.text(0, 1, wrapped, va="top", fontsize=8, family="monospace")
    text_ax.set_title(f"truth: {truth}", fontsize=10, loc="left")
    right = (p_is_next > 0.5) == (truth == "IsNext")
    bar_ax.bar([0], [p_is_next], color="tab:green" if right else "tab:red")
    bar_ax.axhline(0.5, color="gray", linestyle="--")
    bar_ax.set(ylim=(0, 1), xticks=[], ylabel="P(IsNext) from the NSP head")
    return fig


# ------------------------------------------------------------- chapter 25: bidirectional

def visible_context_card(tokens: Sequence[str], position: int, guesses: dict) -> plt.Figure:
    """One row with a blank at `position`, once per model in `guesses` ({direction: text of
    its guesses}): the blank in red, the tokens a model may attend to in blue (a "causal"
    model sees only the left), the rest grey; under each row, that model's guesses."""
    widths = [max(len(t), 6) + 2 for t in tokens]  # room per token, in characters
    starts = [sum(widths[:p]) for p in range(len(tokens))]
    fig, ax = plt.subplots(figsize=(11, 1.15 * len(guesses) + 0.5))
    ax.set_xlim(0, sum(widths))
    ax.set_ylim(-0.3, 1.8 * len(guesses))
    ax.axis("off")
    for k, (direction, text) in enumerate(guesses.items()):
        line = 1.8 * (len(guesses) - k) - 1.0
        for p, token in enumerate(tokens):
            visible = direction != "causal" or p < position
            color = "salmon" if p == position else ("lightblue" if visible else "0.92")
            ax.text(starts[p] + widths[p] / 2, line, "[MASK]" if p == position else token,
                    ha="center", va="center", fontsize=8,
                    bbox={"facecolor": color, "edgecolor": "none"})
        ax.text(0, line - 0.55, f"{direction} model's guesses: {text}", fontsize=8)
    ax.set_title(f"blank at position {position}: the answer is '{tokens[position]}' "
                 "(blue = visible to the model)", fontsize=9)
    return fig


def probe_curves(axes, checkpoints: Sequence[int], curves: dict, measures: Sequence[str]):
    """Probe accuracy at each pre-training checkpoint, one line per seed and a colour per
    objective, one panel per measure. curves: {objective: {measure: (seeds, checkpoints)}}."""
    for ax, measure in zip(axes, measures):
        for k, (name, by_measure) in enumerate(curves.items()):
            for i, row in enumerate(by_measure[measure]):
                ax.plot(checkpoints, row, "o-", color=f"C{3 * k}", alpha=0.7,
                        label=name if i == 0 else None)
        ax.set(xlabel="pre-training step", ylabel=f"{measure} probe accuracy",
               title=f"{measure} probe on frozen features, one line per seed")
        ax.legend()
    return axes
