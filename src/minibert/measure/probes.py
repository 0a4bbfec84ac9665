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
PROBE_POOLINGS = (*TOKEN_POOLINGS, "pooler")  # "pooler" is the model's own layer on [CLS]


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
    if pooling not in PROBE_POOLINGS:
        raise ValueError(f"pooling must be one of {PROBE_POOLINGS}, got {pooling!r}")
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


# --------------------------------------------------------------- [CLS] against a word

SENTENCE_VECTORS = ("cls", "first word", *TOKEN_POOLINGS[1:])  # "first word" = position 1


@torch.no_grad()
def sentence_vectors(model, dataset: Dataset, layer: int | str = "all",
                     batch_size: int = 256) -> dict[str, torch.Tensor]:
    """`pooled_features` plus the first ordinary token's vector (position 1, just after
    [CLS]), to test [CLS] against a word: {name: (N, H), or (L + 1, N, H) for "all"}."""
    rows = {name: [] for name in SENTENCE_VECTORS}
    for hidden, _, batch in _hidden_states(model, dataset, layer, batch_size):
        mask = batch["attention_mask"].to(hidden.device)
        for name in SENTENCE_VECTORS:
            vector = hidden[..., 1, :] if name == "first word" else pool(hidden, mask, name)
            rows[name].append(vector.cpu())  # (..., B, H)
    return {name: torch.cat(parts, dim=-2) for name, parts in rows.items()}


def few_shot_readouts(model, train_sets, test_set: Dataset, readouts: dict) -> dict:
    """Frozen `sentence_vectors` of every layer read out by each readout (e.g.
    `linear_probe`), trained on each small set of `train_sets` and scored on `test_set`;
    averaged over the training sets to damp the luck of a few-example draw:
    {readout: {vector: (L + 1,) accuracy}}."""
    test = sentence_vectors(model, test_set)  # {vector: (L + 1, N_test, H)}
    scores = {name: {how: [] for how in SENTENCE_VECTORS} for name in readouts}
    for train_set in train_sets:
        train = sentence_vectors(model, train_set)  # {vector: (L + 1, N_train, H)}
        for name, readout in readouts.items():
            for how in SENTENCE_VECTORS:
                accuracy = readout(train[how], train_set["labels"], test[how],
                                   test_set["labels"])  # (L + 1,)
                scores[name][how].append(torch.as_tensor(accuracy, dtype=torch.float64))
    return {name: {how: torch.stack(runs).mean(dim=0).numpy() for how, runs in by.items()}
            for name, by in scores.items()}


@torch.no_grad()
def cls_and_ordinary_entropy(encoder, batch: dict) -> tuple[list[float], list[float], tuple]:
    """Per layer, how evenly [CLS] attends against the other real tokens: the mean
    normalised attention entropy (`attention.attention_entropy`, over heads and sentences)
    of [CLS]'s row and of every other real token's row; and the attention weights."""
    from .attention import attention_entropy

    attentions = encoder(**batch, output_attentions=True).attentions  # L x (B, nh, T, T)
    mask = batch["attention_mask"]  # (B, T)
    ordinary = mask.clone()
    ordinary[:, 0] = 0  # every real token but [CLS]
    cls_entropy, ordinary_entropy = [], []
    for weights in attentions:
        entropy = attention_entropy(weights, mask)  # (B, nh, T), NaN at padding
        cls_entropy.append(entropy[:, :, 0].mean().item())
        chosen = ordinary[:, None, :].expand_as(entropy).bool()  # (B, nh, T)
        ordinary_entropy.append(entropy[chosen].mean().item())
    return cls_entropy, ordinary_entropy, attentions


@torch.no_grad()
def is_next_probabilities(model, dataset: Dataset, batch_size: int = 256) -> torch.Tensor:
    """P(IsNext) from a pre-training model's NSP head for every row: (N,) on the CPU, to
    read the head's confidence pair by pair (its accuracy is `evaluate_mlm`'s)."""
    was_training = model.training
    model.eval()
    try:
        scores = [model(**model_inputs(batch, model.device)).seq_relationship_logits
                  .softmax(dim=-1)[:, 0].cpu()  # (B,): column 0 is IsNext
                  for batch in batches(dataset, batch_size, shuffle=False)]
    finally:
        model.train(was_training)
    return torch.cat(scores)


def between_class_share(vectors: torch.Tensor, labels: torch.Tensor) -> float:
    """Share of the vectors' variance that lies between the class means (0 to 1): how
    much of a representation's spread the classes account for. vectors (N, H), labels (N,)."""
    centred = vectors - vectors.mean(0)  # (N, H)
    classes = labels.unique()
    means = torch.stack([centred[labels == c].mean(0) for c in classes])  # (C, H)
    counts = torch.stack([(labels == c).sum() for c in classes])  # (C,)
    between = (counts[:, None] * means ** 2).sum()
    return float(between / (centred ** 2).sum())


def sentence_probe(model, train: Dataset, test: Dataset, pooling: str = "mean") -> float:
    """`linear_probe` accuracy on the frozen pooled last-layer vectors of two sentence
    classification sets: how plainly the model's features expose the sentence's label."""
    return linear_probe(sentence_features(model, train, pooling), train["labels"],
                        sentence_features(model, test, pooling), test["labels"])


def sentence_probe_scores(model, sets: dict[str, tuple[Dataset, Dataset]]) -> dict[str, float]:
    """`sentence_probe` on each named (train, test) pair: an eval_fn for training, read at
    its checkpoints. Bound with functools.partial, it travels to a training process."""
    return {name: sentence_probe(model, train, test) for name, (train, test) in sets.items()}


def token_probe(model, train: Dataset, test: Dataset) -> float:
    """`linear_probe` accuracy on the frozen last-layer vector of every labelled token of
    two tagging sets: how plainly the model's features expose each token's tag."""
    return linear_probe(*token_features(model, train), *token_features(model, test))
