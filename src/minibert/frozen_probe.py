"""Frozen-feature probes: what a pre-trained encoder's features tell a linear classifier.

A probe leaves the encoder untouched: it reads the hidden states (of a sentence, pooled,
or of every labelled token) and fits a multinomial logistic regression on them. High
probe accuracy means the information is there and linearly readable without any
fine-tuning, as in BERT's "feature-based" experiments. The regression is fitted with
L-BFGS in torch, so the package needs no scikit-learn and a run is deterministic.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .data import Dataset, batches

POOLINGS = ("mean", "cls", "pooler")


def _encoder(model: torch.nn.Module) -> torch.nn.Module:
    """The BertModel inside a task or pre-training model (or the model itself)."""
    return getattr(model, "bert", model)


@torch.no_grad()
def sentence_features(model: torch.nn.Module, dataset: Dataset, pool: str = "mean",
                      layer: int = -1, batch_size: int = 256) -> torch.Tensor:
    """One frozen vector per row, (N, H) on the CPU: the hidden states of `layer` (-1 = the
    last; 0 = the embeddings) averaged over the real tokens ("mean"), the [CLS] state
    ("cls"), or the pooler's tanh(W h_CLS) ("pooler", last layer only)."""
    if pool not in POOLINGS:
        raise ValueError(f"pool must be one of {POOLINGS}, got {pool!r}")
    encoder = _encoder(model)
    if pool == "pooler" and (layer != -1 or getattr(encoder, "pooler", None) is None):
        raise ValueError("pool='pooler' needs a model with a pooler, and layer=-1")
    was_training = encoder.training
    encoder.eval()
    device = next(encoder.parameters()).device
    rows = []
    for batch in batches(dataset, batch_size, shuffle=False):
        mask = batch["attention_mask"].to(device)  # (B, T)
        out = encoder(batch["input_ids"].to(device), mask, batch["token_type_ids"].to(device),
                      output_hidden_states=layer != -1)
        hidden = out.last_hidden_state if layer == -1 else out.hidden_states[layer]  # (B, T, H)
        if pool == "mean":
            weights = mask[..., None].to(hidden.dtype)  # (B, T, 1)
            rows.append((hidden * weights).sum(1) / weights.sum(1))
        elif pool == "cls":
            rows.append(hidden[:, 0])
        else:
            rows.append(out.pooler_output)
    encoder.train(was_training)
    return torch.cat(rows).cpu()


@torch.no_grad()
def token_features(model: torch.nn.Module, dataset: Dataset, layer: int = -1,
                   batch_size: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """The frozen hidden state of every token that carries a label (labels != -100), and
    those labels: (P, H) and (P,) on the CPU. For token tagging datasets."""
    encoder = _encoder(model)
    was_training = encoder.training
    encoder.eval()
    device = next(encoder.parameters()).device
    features, labels = [], []
    for batch in batches(dataset, batch_size, shuffle=False):
        out = encoder(batch["input_ids"].to(device), batch["attention_mask"].to(device),
                      batch["token_type_ids"].to(device), output_hidden_states=layer != -1)
        hidden = out.last_hidden_state if layer == -1 else out.hidden_states[layer]  # (B, T, H)
        keep = batch["labels"] != -100  # (B, T)
        features.append(hidden[keep.to(device)].cpu())
        labels.append(batch["labels"][keep])
    encoder.train(was_training)
    return torch.cat(features), torch.cat(labels)


def linear_probe(train_features: torch.Tensor, train_labels: torch.Tensor,
                 test_features: torch.Tensor, test_labels: torch.Tensor,
                 l2: float = 1e-3, max_iter: int = 200) -> float:
    """Fit a multinomial logistic regression on (N, H) features, standardised with the
    training set's mean and spread, with an L2 penalty `l2` on the weights; return its
    accuracy on the test features."""
    if len(train_features) != len(train_labels) or len(test_features) != len(test_labels):
        raise ValueError("features and labels must have the same number of rows")
    if l2 < 0:
        raise ValueError(f"l2 must not be negative, got {l2!r}")
    x = train_features.double()
    mean, spread = x.mean(0), x.std(0).clamp(min=1e-6)
    x = (x - mean) / spread
    x_test = (test_features.double() - mean) / spread
    num_classes = int(max(train_labels.max(), test_labels.max())) + 1
    weight = torch.zeros(x.shape[1], num_classes, dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(num_classes, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=max_iter,
                                  line_search_fn="strong_wolfe")

    def objective() -> torch.Tensor:
        optimizer.zero_grad()
        loss = F.cross_entropy(x @ weight + bias, train_labels) + l2 * weight.square().sum()
        loss.backward()
        return loss

    optimizer.step(objective)
    with torch.no_grad():
        predictions = (x_test @ weight + bias).argmax(1)
    return float((predictions == test_labels).double().mean())
