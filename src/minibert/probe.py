"""Sentence vectors from a frozen BERT, and the linear probe that scores them.

Three ways to turn a layer's token vectors (B, T, H) into one vector per sentence:
"cls" takes the [CLS] position, "mean" averages the real tokens, "max" takes each
dimension's largest value over the real tokens. Mean and max include [CLS] and [SEP],
as Sentence-BERT's pooling does. A probe is a logistic regression trained on such
vectors with the encoder frozen: how well it does says how *linearly readable* the
label is from that sentence vector. `centroid_accuracy` uses the vectors as they are,
as similarity search does: nearest class mean by cosine, nothing trained.
`attention_entropy` measures how spread out each token's attention is, to compare [CLS]
with ordinary tokens.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from .data import Dataset, batches

POOLINGS = ("cls", "mean", "max")
MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def pool(hidden: torch.Tensor, attention_mask: torch.Tensor, how: str) -> torch.Tensor:
    """One vector per sentence from token vectors. hidden (B, T, H), attention_mask (B, T)
    with 1 for real tokens -> (B, H). Padding never contributes."""
    if how not in POOLINGS:
        raise ValueError(f"pooling must be one of {POOLINGS}, got {how!r}")
    if how == "cls":
        return hidden[:, 0]
    real = attention_mask[..., None].to(hidden.dtype)  # (B, T, 1)
    if how == "mean":
        return (hidden * real).sum(dim=1) / real.sum(dim=1)
    return hidden.masked_fill(real == 0, float("-inf")).amax(dim=1)


def _encoder(model):
    """The BertModel inside a task or pre-training model (or the model itself)."""
    return model.bert if hasattr(model, "bert") else model


@torch.no_grad()
def layer_features(model, dataset: Dataset, batch_size: int = 256) -> dict[str, torch.Tensor]:
    """Every pooling of every layer's output for every row of `dataset`, on the CPU:
    {pooling: (L + 1, N, H)}, where layer 0 is the embedding output and layer L the last."""
    encoder = _encoder(model).eval()
    device = encoder.device
    pooled: dict[str, list[torch.Tensor]] = {how: [] for how in POOLINGS}
    for batch in batches(dataset, batch_size, shuffle=False):
        inputs = {k: batch[k].to(device) for k in MODEL_INPUTS if k in batch}
        hidden = torch.stack(encoder(**inputs, output_hidden_states=True).hidden_states)
        for how in POOLINGS:  # pool all layers at once: (L+1, B, T, H) -> (L+1, B, H)
            flat = hidden.flatten(0, 1)  # ((L+1) * B, T, H)
            mask = inputs["attention_mask"].repeat(hidden.shape[0], 1)
            pooled[how].append(pool(flat, mask, how).view(*hidden.shape[:2], -1).cpu())
    return {how: torch.cat(parts, dim=1) for how, parts in pooled.items()}


def probe_accuracy(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor,
                   test_y: torch.Tensor, weight_decay: float = 1e-3,
                   max_iter: int = 100) -> torch.Tensor:
    """Fit logistic regressions on (train_x, train_y) and return their accuracy on the test
    set. train_x (N, H) fits one probe; (P, N, H) fits P independent probes at once (e.g.
    one per layer) and returns P accuracies. Features are standardised with the training
    set's statistics; the fit is full-batch L-BFGS from zero weights, so it is
    deterministic. The P problems share no parameter, so minimising the sum of their
    losses fits each one."""
    single = train_x.dim() == 2
    if single:
        train_x, test_x = train_x[None], test_x[None]
    mean, std = train_x.mean(dim=1, keepdim=True), train_x.std(dim=1, keepdim=True) + 1e-6
    train_x, test_x = (train_x - mean) / std, (test_x - mean) / std  # (P, N, H)
    num_classes = int(max(train_y.max(), test_y.max())) + 1
    P, _, H = train_x.shape
    weight = torch.zeros(P, H, num_classes, requires_grad=True)
    bias = torch.zeros(P, 1, num_classes, requires_grad=True)
    optimizer = torch.optim.LBFGS([weight, bias], max_iter=max_iter,
                                  line_search_fn="strong_wolfe")

    def closure():
        optimizer.zero_grad()
        logits = train_x @ weight + bias  # (P, N, C)
        loss = F.cross_entropy(logits.flatten(0, 1), train_y.repeat(P)) * P
        loss = loss + weight_decay * weight.pow(2).sum()
        loss.backward()
        return loss

    optimizer.step(closure)
    with torch.no_grad():
        predicted = (test_x @ weight + bias).argmax(dim=-1)  # (P, N_test)
        accuracy = (predicted == test_y).float().mean(dim=1)  # (P,)
    return accuracy[0] if single else accuracy


def centroid_accuracy(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor,
                      test_y: torch.Tensor) -> torch.Tensor:
    """The vectors used as they are, with no trained weight: each class is the mean of
    its training vectors (unit length first), and a test vector gets the class whose
    mean is nearest in cosine. Shapes as in `probe_accuracy`: (N, H) or (P, N, H)."""
    single = train_x.dim() == 2
    if single:
        train_x, test_x = train_x[None], test_x[None]
    train_x, test_x = F.normalize(train_x, dim=-1), F.normalize(test_x, dim=-1)
    classes = torch.unique(train_y)
    centroids = torch.stack([train_x[:, train_y == c].mean(dim=1) for c in classes], dim=1)
    scores = test_x @ F.normalize(centroids, dim=-1).transpose(1, 2)  # (P, N_test, C)
    accuracy = (classes[scores.argmax(dim=-1)] == test_y).float().mean(dim=1)  # (P,)
    return accuracy[0] if single else accuracy


def attention_entropy(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """How spread out each token's attention is: the entropy of its row divided by the
    entropy of uniform attention over the sentence's n real tokens, log n. 1 = uniform,
    0 = all weight on one token. weights (B, nh, T, T), attention_mask (B, T) ->
    (B, nh, T), NaN at padding positions."""
    p = weights.clamp_min(1e-12)
    entropy = -(weights * p.log()).sum(dim=-1)  # (B, nh, T)
    n = attention_mask.sum(dim=1).to(weights.dtype)  # (B,)
    normalised = entropy / torch.log(n).clamp_min(math.log(2))[:, None, None]
    return normalised.masked_fill(attention_mask[:, None, :] == 0, float("nan"))
