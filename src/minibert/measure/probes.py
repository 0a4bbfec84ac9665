"""Frozen-feature probes: what a pre-trained encoder's vectors tell a classifier that
cannot change them.

A sentence becomes one vector by pooling a layer's token vectors (B, T, H): "cls" takes
the [CLS] position, "mean" averages the real tokens, "max" takes each dimension's largest
value over the real tokens (mean and max include [CLS] and [SEP], as Sentence-BERT's
pooling does), and "pooler" is BERT's own tanh(W h_CLS + b). Token tasks read the vector
of every labelled token instead. Two read-outs score the vectors: `linear_probe`, a
logistic regression (how *linearly readable* the label is, as in BERT's feature-based
experiments), and `centroid_accuracy`, the nearest class mean by cosine with nothing
trained (how similarity search would use them). Both are deterministic and need no
scikit-learn.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..model.bert import encoder_of, model_inputs
from ..text.datasets import Dataset, batches
from ..text.masking import IGNORE_INDEX

TOKEN_POOLINGS = ("cls", "mean", "max")  # computed from a layer's token vectors
POOLINGS = (*TOKEN_POOLINGS, "pooler")  # "pooler" is the model's own layer on [CLS]


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, how: str) -> torch.Tensor:
    """One vector per sentence from token vectors. hidden (..., B, T, H), attention_mask
    (B, T) with 1 for real tokens -> (..., B, H). Padding never contributes."""
    if how not in TOKEN_POOLINGS:
        raise ValueError(f"pooling must be one of {TOKEN_POOLINGS}, got {how!r}")
    if how == "cls":
        return hidden[..., 0, :]
    real = attention_mask[..., None].to(hidden.dtype)  # (B, T, 1)
    if how == "mean":
        return (hidden * real).sum(dim=-2) / real.sum(dim=-2)
    return hidden.masked_fill(real == 0, float("-inf")).amax(dim=-2)


def _hidden_states(model, dataset: Dataset, layer: int | str, batch_size: int):
    """Yield (layer's output, model output, batch) for every batch of `dataset`, in order,
    with the encoder in eval mode (restored afterwards). The layer's output is (B, T, H),
    or (L + 1, B, T, H) for layer="all"."""
    if not (layer == "all" or isinstance(layer, int)):
        raise ValueError(f"layer must be an int (-1 = last, 0 = embeddings) or 'all', got {layer!r}")
    encoder = encoder_of(model)
    was_training = encoder.training
    encoder.eval()
    try:
        for batch in batches(dataset, batch_size, shuffle=False):
            out = encoder(**model_inputs(batch, encoder.device), output_hidden_states=layer != -1)
            if layer == "all":
                hidden = torch.stack(out.hidden_states)  # (L + 1, B, T, H)
            else:
                hidden = out.last_hidden_state if layer == -1 else out.hidden_states[layer]
            yield hidden, out, batch
    finally:
        encoder.train(was_training)


@torch.no_grad()
def sentence_features(model, dataset: Dataset, pooling: str = "mean", layer: int | str = -1,
                      batch_size: int = 256) -> torch.Tensor:
    """One frozen vector per row, on the CPU: (N, H), or (L + 1, N, H) for layer="all"
    (layer 0 is the embedding output). layer=-1 is the model's last output; "pooler" needs a
    model with a pooler and layer=-1."""
    if pooling not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {pooling!r}")
    if pooling == "pooler" and (layer != -1 or getattr(encoder_of(model), "pooler", None) is None):
        raise ValueError("pooling='pooler' needs a model with a pooler, and layer=-1")
    if pooling != "pooler":
        return pooled_features(model, dataset, (pooling,), layer, batch_size)[pooling]
    rows = [out.pooler_output.cpu()
            for _, out, _ in _hidden_states(model, dataset, layer, batch_size)]
    return torch.cat(rows, dim=-2)


@torch.no_grad()
def pooled_features(model, dataset: Dataset, poolings=TOKEN_POOLINGS, layer: int | str = -1,
                    batch_size: int = 256) -> dict[str, torch.Tensor]:
    """`sentence_features` for several token poolings from one pass of the encoder:
    {pooling: (N, H), or (L + 1, N, H) for layer="all"}."""
    unknown = sorted(set(poolings) - set(TOKEN_POOLINGS))
    if unknown:
        raise ValueError(f"poolings must be among {TOKEN_POOLINGS}, got {unknown}")
    rows = {how: [] for how in poolings}
    for hidden, _, batch in _hidden_states(model, dataset, layer, batch_size):
        mask = batch["attention_mask"].to(hidden.device)
        for how in poolings:
            rows[how].append(pool(hidden, mask, how).cpu())
    return {how: torch.cat(parts, dim=-2) for how, parts in rows.items()}


@torch.no_grad()
def token_features(model, dataset: Dataset, layer: int = -1,
                   batch_size: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """The frozen vector of every token that carries a label (labels != -100), and those
    labels: (P, H) and (P,) on the CPU. For token tagging datasets."""
    features, labels = [], []
    for hidden, _, batch in _hidden_states(model, dataset, layer, batch_size):
        keep = batch["labels"] != IGNORE_INDEX  # (B, T)
        features.append(hidden[keep.to(hidden.device)].cpu())
        labels.append(batch["labels"][keep])
    return torch.cat(features), torch.cat(labels)


def linear_probe(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor,
                 test_y: torch.Tensor, l2: float = 1e-3, max_iter: int = 200) -> float | torch.Tensor:
    """Fit a multinomial logistic regression on the training vectors and return its accuracy
    on the test vectors. train_x (N, H) fits one probe and returns a float; (P, N, H) fits
    P independent probes at once (e.g. one per layer) and returns P accuracies.
    Features are standardised with the training set's statistics, the weights carry an L2
    penalty `l2`, and the fit is full-batch L-BFGS from zero in float64, so it is
    deterministic. The P problems share no parameter: minimising the sum of their losses
    fits each one."""
    if train_x.shape[-2] != len(train_y) or test_x.shape[-2] != len(test_y):
        raise ValueError("features and labels must have the same number of rows")
    if l2 < 0:
        raise ValueError(f"l2 must not be negative, got {l2!r}")
    single = train_x.dim() == 2
    if single:
        train_x, test_x = train_x[None], test_x[None]
    train_x, test_x = train_x.double(), test_x.double()
    mean, spread = train_x.mean(dim=1, keepdim=True), train_x.std(dim=1, keepdim=True).clamp(min=1e-6)
    train_x, test_x = (train_x - mean) / spread, (test_x - mean) / spread  # (P, N, H)
    P, _, H = train_x.shape
    num_classes = int(max(train_y.max(), test_y.max())) + 1
    weight = torch.zeros(P, H, num_classes, dtype=torch.float64, requires_grad=True)
    bias = torch.zeros(P, 1, num_classes, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=max_iter, line_search_fn="strong_wolfe")

    def objective() -> torch.Tensor:
        optimizer.zero_grad()
        logits = train_x @ weight + bias  # (P, N, C)
        loss = F.cross_entropy(logits.flatten(0, 1), train_y.repeat(P)) * P + l2 * weight.square().sum()
        loss.backward()
        return loss

    optimizer.step(objective)
    with torch.no_grad():
        predicted = (test_x @ weight + bias).argmax(dim=-1)  # (P, N_test)
        accuracy = (predicted == test_y).double().mean(dim=1)  # (P,)
    return float(accuracy[0]) if single else accuracy.float()


def centroid_accuracy(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor,
                      test_y: torch.Tensor) -> float | torch.Tensor:
    """The vectors used as they are, with no trained weight: each class is the mean of its
    training vectors (unit length first), and a test vector gets the class whose mean is
    nearest in cosine. Shapes and return as in `linear_probe`."""
    single = train_x.dim() == 2
    if single:
        train_x, test_x = train_x[None], test_x[None]
    train_x, test_x = F.normalize(train_x, dim=-1), F.normalize(test_x, dim=-1)
    classes = torch.unique(train_y)
    centroids = torch.stack([train_x[:, train_y == c].mean(dim=1) for c in classes], dim=1)
    scores = test_x @ F.normalize(centroids, dim=-1).transpose(1, 2)  # (P, N_test, C)
    accuracy = (classes[scores.argmax(dim=-1)] == test_y).float().mean(dim=1)  # (P,)
    return float(accuracy[0]) if single else accuracy
