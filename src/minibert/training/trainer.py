"""One training loop for pre-training and fine-tuning, and the masked-LM / NSP evaluation.

`train` runs AdamW (or another optimiser of `optimizers.OPTIMIZERS`, by name) with
weight decay on the weight matrices only, a learning-rate
schedule, gradient clipping, and (for a masked-LM model) fresh masking of every batch
from a seeded generator. It returns a `History` that the book's plots read. With the
same seed, two runs on the CPU give the same history bit for bit.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import torch
from tqdm.auto import tqdm

from ..model import BertForMaskedLM, BertForPreTraining
from ..model.bert import model_inputs
from ..model.heads import IGNORE_INDEX
from ..runtime import get_device
from ..text.datasets import Dataset, batches
from ..text.masking import Masker
from .optimizers import OPTIMIZERS, build_optimizer
from .schedules import SCHEDULES

# ---------------------------------------------------------------- history


@dataclass
class History:
    """What a run recorded, step by step (lists of equal length), and at each evaluation."""

    steps: list[int] = field(default_factory=list)
    loss: list[float] = field(default_factory=list)
    mlm_loss: list[float] = field(default_factory=list)  # nan where the model has none
    nsp_loss: list[float] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    eval_steps: list[int] = field(default_factory=list)
    eval_metrics: list[dict[str, float]] = field(default_factory=list)
    wall_time: float = 0.0  # seconds spent in training steps (evaluation excluded)
    tokens: int = 0  # non-padding tokens seen

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.wall_time if self.wall_time else 0.0

    def metric(self, name: str) -> list[float]:
        """One evaluation metric over the run, aligned with eval_steps."""
        return [m[name] for m in self.eval_metrics]

    def to_dict(self) -> dict:
        return {"steps": self.steps, "loss": self.loss, "mlm_loss": self.mlm_loss,
                "nsp_loss": self.nsp_loss, "lr": self.lr, "eval_steps": self.eval_steps,
                "eval_metrics": self.eval_metrics, "wall_time": self.wall_time,
                "tokens": self.tokens, "tokens_per_second": self.tokens_per_second}


# ---------------------------------------------------------------- the loop


def _in_notebook() -> bool:
    shell = getattr(sys.modules.get("IPython"), "get_ipython", lambda: None)()
    return type(shell).__name__ == "ZMQInteractiveShell"


def progress_bar(total: int, enabled: bool = True, description: str = "train"):
    """A tqdm bar: a widget in a notebook, text on a terminal, silent in logs and pipes
    (where a bar would print a line per refresh)."""
    interactive = _in_notebook() or sys.stderr.isatty()
    return tqdm(total=total, desc=description, disable=not (enabled and interactive),
                mininterval=0.5, leave=False)


def parameter_groups(model: torch.nn.Module, weight_decay: float) -> list[dict]:
    """Weight decay on weight matrices and embeddings; none on biases and LayerNorm
    parameters (the 1-D ones), as in BERT."""
    decay = [p for p in model.parameters() if p.requires_grad and p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.requires_grad and p.dim() < 2]
    return [{"params": decay, "weight_decay": weight_decay},
            {"params": no_decay, "weight_decay": 0.0}]


def tokens_in(batch: dict[str, torch.Tensor]) -> int:
    """The tokens a batch feeds the model, padding left out: an encoder batch's tokens, or a
    sequence-to-sequence batch's source tokens and predicted target positions (see
    `minibert.model.seq2seq`)."""
    if "source_mask" in batch:
        labels = batch.get("labels")
        target = (int((labels != IGNORE_INDEX).sum()) if labels is not None
                  else batch["target_in_ids"].numel())
        return int(batch["source_mask"].sum()) + target
    mask = batch.get("attention_mask")
    return int(mask.sum()) if mask is not None else batch["input_ids"].numel()


def batch_stream(data, batch_size: int, generator: torch.Generator) -> Iterator[dict]:
    """Endless batches: reshuffled passes over a Dataset, or repeated calls of a function
    that returns an iterable of batches."""
    while True:
        source = (batches(data, batch_size, shuffle=True, generator=generator, drop_last=True)
                  if isinstance(data, Dataset) else data())
        empty = True
        for batch in source:
            empty = False
            yield batch
        if empty:
            raise ValueError("the training data gave no batch (is batch_size above its size?)")


def check_train_settings(steps, lr, schedule, warmup_steps, weight_decay, betas, grad_clip,
                          batch_size, eval_every, optimizer: str = "adamw") -> None:
    """Refuse impossible training settings with a message that names the setting."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {list(OPTIMIZERS)}, got {optimizer!r}")
    for name, value in (("steps", steps), ("batch_size", batch_size)):
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not lr > 0:
        raise ValueError(f"lr must be positive, got {lr!r}")
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {sorted(SCHEDULES)}, got {schedule!r}")
    if not isinstance(warmup_steps, int) or warmup_steps < 0:
        raise ValueError(f"warmup_steps must be a non-negative integer, got {warmup_steps!r}")
    if weight_decay < 0:
        raise ValueError(f"weight_decay must not be negative, got {weight_decay!r}")
    if len(betas) != 2 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"betas must be two numbers in [0, 1), got {betas!r}")
    if grad_clip is not None and not grad_clip > 0:
        raise ValueError(f"grad_clip must be positive or None, got {grad_clip!r}")
    if eval_every is not None and (not isinstance(eval_every, int) or eval_every <= 0):
        raise ValueError(f"eval_every must be a positive integer or None, got {eval_every!r}")


def train(
    model: torch.nn.Module,
    data: Dataset | Callable[[], Iterable[dict[str, torch.Tensor]]],
    steps: int,
    lr: float = 1e-3,
    batch_size: int = 32,
    schedule: str = "linear",
    warmup_steps: int = 0,
    weight_decay: float = 0.01,
    betas: tuple[float, float] = (0.9, 0.999),
    grad_clip: float | None = 1.0,
    mask_rate: float = 0.15,
    masker: Masker | None = None,
    eval_fn: Callable[[torch.nn.Module], dict[str, float]] | None = None,
    eval_every: int | None = None,
    seed: int = 0,
    progress: bool = True,
    device: torch.device | str | None = None,
    on_step: Callable[[int], None] | None = None,
    optimizer: str = "adamw",
) -> History:
    """Train `model` for `steps` optimiser steps and return its History.

    data: a Dataset (reshuffled each pass, batch_size rows a batch) or a function returning
    an iterable of batch dicts (called again when it runs out). Batches go to
    `model(**batch)`, which must return an output with `.loss`.
    For a masked-LM model (BertForPreTraining, BertForMaskedLM) whose batches carry no
    `labels`, each batch is masked afresh by `masker`, by default the tokenizer's at
    `mask_rate` with BERT's 80/10/10 split.
    eval_fn(model) -> {metric: value} runs every `eval_every` steps and after the last.
    on_step(steps_done) is called after each step (the zoo's training processes report
    their progress with it). optimizer: "adamw" (torch's AdamW), "radam" (RAdam with
    decoupled decay) or "adamw_no_bias_correction" (Google's BERT optimiser); see
    `minibert.training.optimizers`."""
    check_train_settings(steps, lr, schedule, warmup_steps, weight_decay, betas, grad_clip,
                          batch_size, eval_every, optimizer)
    device = torch.device(device) if device is not None else get_device()
    torch.manual_seed(seed)  # dropout
    generator = torch.Generator().manual_seed(seed)  # shuffling and masking, on the CPU
    is_mlm = isinstance(model, (BertForPreTraining, BertForMaskedLM))
    if is_mlm and masker is None and isinstance(data, Dataset):
        masker = Masker.for_tokenizer(data.tokenizer, rate=mask_rate)
    model.to(device).train()
    groups = parameter_groups(model, weight_decay)
    optimizer = build_optimizer(optimizer, groups, lr=lr, betas=betas)  # AdamW by default
    multiplier = SCHEDULES[schedule]
    history = History()
    stream = batch_stream(data, batch_size, generator)
    bar = progress_bar(steps, progress)
    for step in range(steps):
        batch = next(stream)
        started = time.perf_counter()
        if is_mlm and "labels" not in batch:
            if masker is None:
                raise ValueError("a masked-LM model needs a masker (or a Dataset with a "
                                 "tokenizer) when the batches carry no labels")
            batch = masker(batch, generator)
        batch = {name: tensor.to(device) for name, tensor in batch.items()}
        rate = lr * multiplier(step, warmup_steps, steps)
        for group in optimizer.param_groups:
            group["lr"] = rate
        output = model(**batch)
        optimizer.zero_grad(set_to_none=True)
        output.loss.backward()
        if grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        history.steps.append(step)
        history.loss.append(output.loss.item())
        history.mlm_loss.append(_value(getattr(output, "mlm_loss", None)))
        history.nsp_loss.append(_value(getattr(output, "nsp_loss", None)))
        history.lr.append(rate)
        history.wall_time += time.perf_counter() - started
        history.tokens += tokens_in(batch)
        bar.update(1)
        bar.set_postfix(loss=f"{history.loss[-1]:.3f}", refresh=False)
        if on_step is not None:
            on_step(step + 1)
        last = step == steps - 1
        if eval_fn is not None and (last or (eval_every and (step + 1) % eval_every == 0)):
            model.eval()
            history.eval_steps.append(step)
            history.eval_metrics.append(dict(eval_fn(model)))
            model.train()
    bar.close()
    model.eval()
    return history


def _value(loss: torch.Tensor | None) -> float:
    return loss.item() if loss is not None else float("nan")


# ---------------------------------------------------------------- evaluation


@dataclass
class MaskedLMScores:
    """One masked batch scored: the positions asked, those the model got right, the loss at
    each (nats, 0 where nothing was asked), and the NSP logits if the model has that head.
    Every masked-LM accuracy and loss in the book is a sum of these."""

    asked: torch.Tensor  # (B, T) bool: labels != IGNORE_INDEX
    right: torch.Tensor  # (B, T) bool: asked, and the top-scoring token is the label
    loss: torch.Tensor  # (B, T) cross-entropy at the asked positions, 0 elsewhere
    nsp_logits: torch.Tensor | None  # (B, 2)


@torch.no_grad()
def vocabulary_logits(model: torch.nn.Module, batch: dict[str, torch.Tensor]):
    """The model's output on the batch's inputs (labels left out), in eval mode, and its
    vocabulary scores (B, T, V) on the model's device: a masked-LM head's prediction_logits,
    else the output's logits. The model's train/eval mode is restored."""
    was_training = model.training
    model.eval()
    device = next(model.parameters()).device
    output = model(**model_inputs(batch, device))
    model.train(was_training)
    logits = getattr(output, "prediction_logits", None)
    return output, (output.logits if logits is None else logits)


@torch.no_grad()
def masked_lm_scores(model: torch.nn.Module, batch: dict[str, torch.Tensor]) -> MaskedLMScores:
    """Score a batch whose labels hold the id to predict where a token was hidden and
    IGNORE_INDEX elsewhere, in eval mode; the batch's attention_mask may be (B, T) or a full
    (B, T, T) matrix. Returned on the CPU."""
    output, logits = vocabulary_logits(model, batch)  # logits: (B, T, V)
    labels = batch["labels"].to(logits.device)  # (B, T)
    asked = labels != IGNORE_INDEX
    loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), labels,
                                             ignore_index=IGNORE_INDEX, reduction="none")
    nsp_logits = getattr(output, "seq_relationship_logits", None)
    return MaskedLMScores(asked.cpu(), ((logits.argmax(-1) == labels) & asked).cpu(),
                          loss.cpu(), None if nsp_logits is None else nsp_logits.cpu())


def masked_batches(dataset: Dataset, rate: float = 0.15,
                   split: tuple[float, float, float] = (1.0, 0.0, 0.0), seed: int = 0,
                   batch_size: int = 256, repeats: int = 1) -> Iterator[dict[str, torch.Tensor]]:
    """The dataset's rows in order, `repeats` times, masked at `rate` (by default every
    chosen token becomes [MASK]: "fill in the blank"): the same masks for every model given
    the same seed."""
    masker = Masker.for_tokenizer(dataset.tokenizer, rate=rate, split=split)
    generator = torch.Generator().manual_seed(seed)
    for _ in range(repeats):
        for batch in batches(dataset, batch_size, shuffle=False):
            yield masker(batch, generator)


def evaluate_mlm(model: torch.nn.Module, dataset: Dataset, rate: float = 0.15,
                 split: tuple[float, float, float] = (1.0, 0.0, 0.0), seed: int = 0,
                 batch_size: int = 256) -> dict[str, float]:
    """Masked-LM accuracy and loss over `masked_batches`; and NSP accuracy when the model
    has the head and the dataset the labels."""
    correct = total = nsp_correct = nsp_total = 0
    loss_sum = 0.0
    for batch in masked_batches(dataset, rate, split, seed, batch_size):
        scores = masked_lm_scores(model, batch)
        correct += int(scores.right.sum())
        total += int(scores.asked.sum())
        loss_sum += float(scores.loss.sum())
        if scores.nsp_logits is not None and "next_sentence_label" in batch:
            nsp_labels = batch["next_sentence_label"]
            nsp_correct += int((scores.nsp_logits.argmax(-1) == nsp_labels).sum())
            nsp_total += len(nsp_labels)
    metrics = {"mlm_accuracy": correct / total, "mlm_loss": loss_sum / total}
    if nsp_total:
        metrics["nsp_accuracy"] = nsp_correct / nsp_total
    return metrics


def unigram_baseline(dataset: Dataset) -> dict[str, float]:
    """What a model that ignores context scores on the tokens that masking may choose:
    always guessing the most frequent token ("most_frequent"), or guessing at random with
    the tokens' frequencies ("frequency_weighted", sum of squared frequencies)."""
    ids = dataset["input_ids"]
    special = torch.tensor(dataset.tokenizer.special_ids)
    eligible = ids[~torch.isin(ids, special)]
    counts = torch.bincount(eligible, minlength=dataset.tokenizer.vocab_size).double()
    frequency = counts / counts.sum()
    return {"most_frequent": float(frequency.max()),
            "frequency_weighted": float((frequency ** 2).sum())}
