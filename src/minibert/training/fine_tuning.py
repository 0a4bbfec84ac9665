"""Fine-tuning a sentence classifier from a zoo checkpoint, and many such runs at once.

Chapter 30 repeats one run (a classifier on a checkpoint, trained on a few labelled rows,
read on held-out ones) over seeds and variants. `fine_tune` is that run; `fine_tune_all`
spreads a list of them over the kernel's training processes (one run a process, one
thread each, as the zoo trains its models), or runs them here on a GPU or where only one
process may train. Every run is on one thread on a CPU, so its bits do not depend on
where it ran.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

import torch

from ..model import BertConfig, BertForSequenceClassification
from ..runtime import get_device, one_thread
from ..text.datasets import Dataset
from .processes import in_pool, run_all
from .trainer import progress_bar, train

PRE_TRAINED, RANDOM_INIT = VARIANTS = ("pre-trained, full", "random init, full")


def dropout_rates(p: float) -> dict[str, float]:
    """The config changes that set every dropout of BERT to rate p: the embeddings', each
    sublayer's output, the attention probabilities' and (by default) the classifier's."""
    return {"hidden_dropout_prob": p, "attention_probs_dropout_prob": p}


NO_DROPOUT = dropout_rates(0.0)  # the fine-tuning runs' config changes, unless asked


def classifier(variant: str, num_labels: int, checkpoint: Path, dropout: float = 0.0
               ) -> BertForSequenceClassification:
    """A fresh classifier of one variant: the checkpoint's encoder under a new head, or
    (random init) only the checkpoint's config, every weight drawn anew; every dropout at
    rate `dropout` (none by default)."""
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}: use one of {VARIANTS}")
    rates = dropout_rates(dropout)
    if variant == RANDOM_INIT:
        config = BertConfig.from_json_file(Path(checkpoint) / "config.json")
        return BertForSequenceClassification(config.replace(num_labels=num_labels, **rates))
    return BertForSequenceClassification.from_pretrained(checkpoint, num_labels=num_labels,
                                                         **rates)


@torch.no_grad()
def predict(model: BertForSequenceClassification, dataset: Dataset
            ) -> tuple[torch.Tensor, torch.Tensor]:
    """Every row's predicted class (N,) and pooled [CLS] vector (N, H), on the CPU."""
    model.eval()
    device = next(model.parameters()).device
    inputs = {k: dataset[k].to(device)
              for k in ("input_ids", "attention_mask", "token_type_ids")}
    out = model.bert(**inputs)
    logits = model.classifier(out.pooler_output)  # (N, K)
    return logits.argmax(-1).cpu(), out.pooler_output.cpu()


@dataclass
class FineTuned:
    """One fine-tuning run: held-out accuracy before the first step and at every
    evaluation, the held-out pooled vectors at the same points, and the model."""

    accuracy: list[float]
    pooled: list[torch.Tensor]  # (N_test, H) each
    model: BertForSequenceClassification


def fine_tune(variant: str, checkpoint: Path, train_set: Dataset, test_set: Dataset,
              seed: int, steps: int, eval_every: int, lr: float = 1e-3,
              on_step=None, dropout: float = 0.0) -> FineTuned:
    """Train one variant's classifier on train_set for `steps` steps (batches of 32, a
    tenth of them warm-up), the head (and a random encoder) drawn from `seed`, every
    dropout at rate `dropout` (the masks drawn from `seed` too)."""
    device = get_device()
    single = one_thread() if device.type == "cpu" else contextlib.nullcontext()
    with single:
        torch.manual_seed(seed)  # the classifier's (and the random encoder's) init
        model = classifier(variant, len(train_set.label_names), checkpoint,
                           dropout).to(device)
        pooled = []

        def evaluate(model):
            predicted, vectors = predict(model, test_set)
            pooled.append(vectors)
            return {"accuracy": (predicted == test_set["labels"]).float().mean().item()}

        start = evaluate(model)  # before any step
        history = train(model, train_set, steps=steps, batch_size=32, seed=seed, lr=lr,
                        warmup_steps=steps // 10, eval_fn=evaluate, eval_every=eval_every,
                        progress=False, device=device, on_step=on_step)
    return FineTuned([start["accuracy"], *history.metric("accuracy")], pooled,
                     model.cpu())


def fine_tune_all(runs: list[dict], progress: bool = True) -> list[FineTuned]:
    """`fine_tune(**run)` for every run, in their order: across the training processes on
    a CPU where more than one may start, else here one after another."""
    bar = progress_bar(1, progress and in_pool(), f"fine-tune {len(runs)} runs")
    results = run_all(fine_tune, runs, [run["steps"] for run in runs], bar)
    bar.close()
    return results
