"""Part IV's figures (chapters 30-33): fine-tuning curves, pooled vectors, answers, spans,
and the long-text strategies (what each reads, accuracy by evidence position, window votes)."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np
import torch

# ------------------------------------------------------------ chapter 30: classification

def accuracy_curves(ax, curves: dict, steps: Sequence[int], seeds: Sequence[int],
                    variants: Sequence[str], chance: float, title: str = ""):
    """Held-out accuracy during fine-tuning: a thin line per seed and a bold mean per variant,
    so every seed shows. curves: {(variant, seed): accuracies at `steps`}."""
    for k, variant in enumerate(variants):
        runs = [curves[variant, s] for s in seeds]  # seeds x (evals,)
        for run in runs:
            ax.plot(steps, run, color=f"C{k}", alpha=0.3, linewidth=0.9)
        ax.plot(steps, [sum(v) / len(v) for v in zip(*runs)], color=f"C{k}", marker="o",
                label=variant)
    ax.axhline(chance, color="gray", linestyle="--", label="chance")
    ax.set(xlabel="fine-tuning step (batch of 32 rows)", ylabel="held-out accuracy",
           ylim=(0, 1.02), title=title or f"{len(seeds)} seeds, mean in bold")
    ax.legend(fontsize=8)
    return ax


def pooled_vectors_frame(snapshots: dict, labels: torch.Tensor, label_names: Sequence[str],
                         accuracies: dict, steps: Sequence[int], index: int) -> plt.Figure:
    """One frame of chapter 30's slider: for each variant, the held-out pooled [CLS]
    vectors after steps[index] fine-tuning steps, projected on the two leading principal
    directions of that variant's final vectors, coloured by true class.
    snapshots: {variant: [(N, H) per evaluation]}; accuracies: {variant: [per evaluation]}."""
    fig, axes = plt.subplots(1, len(snapshots), figsize=(5 * len(snapshots), 4), squeeze=False)
    for ax, (variant, vectors) in zip(axes[0], snapshots.items()):
        final = vectors[-1]  # (N, H): the basis is fixed by the final vectors
        mean = final.mean(0)
        _, _, directions = torch.linalg.svd(final - mean, full_matrices=False)
        points = ((vectors[index] - mean) @ directions[:2].T).cpu().numpy()  # (N, 2)
        for c, name in enumerate(label_names):
            chosen = (labels == c).cpu().numpy()
            ax.scatter(points[chosen, 0], points[chosen, 1], s=6, label=name)
        ax.set_title(f"{variant}: accuracy {accuracies[variant][index]:.2f}")
        ax.set(xlabel="first principal direction", ylabel="second principal direction")
    axes[0, 0].legend(fontsize=8, markerscale=2)
    fig.suptitle(f"pooled [CLS] vectors of held-out sentences after {steps[index]} steps")
    fig.tight_layout()
    return fig


@torch.no_grad()
def classifier_answers(models: dict, row: dict, words: Sequence[str],
                       label_names: Sequence[str], layer: int) -> plt.Figure:
    """Several sequence classifiers on one input row, as paired bars: each model's class
    probabilities (left) and where [CLS] looks in `layer`, averaged over the heads (right).
    models: {name: BertForSequenceClassification}; row: a batch of one (`sentence_batch`)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4), width_ratios=(1, 2))
    width = 0.8 / len(models)
    answers = []
    for k, (name, model) in enumerate(models.items()):
        model.eval()
        offset = (k - (len(models) - 1) / 2) * width
        device = next(model.parameters()).device
        out = model.bert(**{key: t.to(device) for key, t in row.items()},
                         output_attentions=True)
        probabilities = model.classifier(out.pooler_output).softmax(-1)[0].cpu()  # (K,)
        from_cls = out.attentions[layer][0, :, 0].mean(0).cpu()  # (T,): heads' mean
        left.barh([c + offset for c in range(len(label_names))], probabilities,
                  height=width, label=name)
        right.bar([t + offset for t in range(len(words))], from_cls, width=width, label=name)
        answers.append(f"{name.split(',')[0]}: {label_names[int(probabilities.argmax())]}")
    left.set_yticks(range(len(label_names)), label_names)
    left.invert_yaxis()
    left.set(xlim=(0, 1), xlabel="probability")
    left.set_title(", ".join(answers), fontsize=10)
    left.legend(fontsize=8)
    right.set_xticks(range(len(words)), words, rotation=45, fontsize=8)
    right.set(ylim=(0, 1), ylabel="attention weight from [CLS]")
    right.set_title(f"where [CLS] looks in layer {layer} (mean over heads)", fontsize=10)
    return fig


# -------------------------------------------------------- chapter 31: question answering

def span_scores_card(words: Sequence[str], start_scores, end_scores, truth: tuple[int, int],
                     chosen: tuple[int, int], attention, title: str) -> plt.Figure:
    """One question as a span head reads it: each token's start and end scores (the
    question, up to its [SEP], shaded grey; the true answer in green; the chosen span
    outlined in red), and under them the chosen span's first token's attention over the
    question's tokens (`attention`: one weight per token between [CLS] and [SEP])."""
    question_end = list(words).index("[SEP]")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 5.2),
                                      gridspec_kw={"height_ratios": [2, 1]})
    x = range(len(words))
    top.bar([i - 0.2 for i in x], start_scores, width=0.4, label="start score s_i")
    top.bar([i + 0.2 for i in x], end_scores, width=0.4, label="end score e_i")
    top.axvspan(-0.5, question_end + 0.5, color="gray", alpha=0.15)
    top.axvspan(truth[0] - 0.5, truth[1] + 0.5, color="green", alpha=0.25, label="true answer")
    top.axvspan(chosen[0] - 0.5, chosen[1] + 0.5, fill=False, edgecolor="red", linewidth=2,
                label="chosen span")
    top.set_xticks(x, words, rotation=90, fontsize=7)
    top.set_ylabel("score")
    top.legend(fontsize=7, ncol=4, loc="lower left")
    top.set_title(title)
    bottom.bar(range(1, question_end), attention)
    bottom.set_xticks(range(1, question_end), words[1:question_end], fontsize=8)
    bottom.set_ylabel("attention")
    bottom.set_title(f"last layer: from '{words[chosen[0]]}' to the question", fontsize=9)
    fig.tight_layout()
    return fig


# ------------------------------------------------------------- chapter 33: long text

def strategy_spans(ax, kept: dict, evidence: tuple[int, int], length: int):
    """What each long-text strategy reads of one document: a row of bars per strategy
    over token positions, the evidence shaded. kept: {strategy: [(start, end), ...]} in
    text coordinates; a strategy named "windows" has its bars staggered so overlaps show."""
    for y, (name, spans) in enumerate(kept.items()):
        for k, (a, b) in enumerate(spans):
            offset = 0.12 * (k % 2) if name == "windows" else 0  # stagger the windows
            ax.barh(y + offset, b - a, left=a, height=0.35, color=f"C{y}", alpha=0.7)
    ax.axvspan(*evidence, color="black", alpha=0.25, label="evidence")
    ax.set_yticks(range(len(kept)), list(kept))
    ax.set_xlabel("token position in the document")
    ax.set_title(f"What each strategy reads of one {length}-token document")
    ax.legend(loc="lower right")
    return ax


def position_accuracy_bars(ax, accuracy: dict, positions: Sequence[str], chance: float = 0.5,
                         title: str = ""):
    """Test accuracy per evidence position: a bar per strategy (the mean over seeds) and a
    dot per seed on it. accuracy: {strategy: (seeds, positions) array}."""
    width = 0.8 / len(accuracy)
    for k, (name, table) in enumerate(accuracy.items()):
        table = np.asarray(table)  # (seeds, positions)
        x = np.arange(len(positions)) + (k - (len(accuracy) - 1) / 2) * width
        ax.bar(x, table.mean(0), width=width, color=f"C{k}", alpha=0.6,
               label=f"{name} (mean)")
        for row in table:  # one dot per seed
            ax.scatter(x, row, color=f"C{k}", edgecolor="black", s=14, zorder=3)
    ax.axhline(chance, color="gray", linestyle="--", label="chance")
    ax.set_xticks(range(len(positions)), [f"evidence at the {w}" for w in positions])
    ax.set(ylabel="test accuracy (dots: seeds)", ylim=(0, 1.3), title=title)
    ax.legend(ncol=3, fontsize=8, loc="upper center")
    return ax


def window_votes(votes: Sequence[float], holds_evidence: Sequence[bool], pooled: dict,
                 title: str) -> plt.Figure:
    """One document's windows as a pooling sees them: a bar per window, its vote (the
    logit of the positive class minus the negative one), outlined in red where the window
    holds the evidence, then one bar per pooled vote. pooled: {pooling: vote}."""
    fig, ax = plt.subplots(figsize=(7, 3))
    votes, names = list(votes), list(pooled)
    colors = ["C0"] * len(votes) + [f"C{2 + k}" for k in range(len(names))]
    edges = ["red" if e else "none" for e in holds_evidence] + ["none"] * len(names)
    ax.bar(range(len(votes) + len(names)), votes + [pooled[n] for n in names],
           color=colors, edgecolor=edges, linewidth=2.5)
    ax.set_xticks(range(len(votes) + len(names)),
                  [f"w{k}" for k in range(len(votes))] + names)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("logit(positive) - logit(negative)")
    ax.set_title(title)
    return fig
