"""Text longer than the model's window: sliding windows and pooled predictions.

A document of L text tokens is cut into windows of `room = max_length - 2` tokens (each
gets its own [CLS] and [SEP]) that start every `stride` tokens, the last one reaching the
end of the text: 1 + ceil(max(0, L - room) / stride) windows. Overlapping windows (stride
< room) make sure a sentence shorter than the overlap lies whole inside some window.
Each window is classified on its own (in training, a window inherits its document's
label); a document's prediction pools its windows' logits (mean or max). Truncation
(keeping the head, the tail or both) is `minibert.text.datasets.truncate`.
"""

from __future__ import annotations

import math

import torch

from .datasets import Dataset, padded_rows

WINDOW_POOLINGS = ("mean", "max")


def window_starts(length: int, room: int, stride: int) -> list[int]:
    """Where the windows of a text of `length` tokens start: 0, stride, 2 * stride, ...,
    until one window reaches the end (that last one may be shorter than `room`)."""
    if not (isinstance(room, int) and isinstance(stride, int) and 0 < stride <= room):
        raise ValueError(f"need 0 < stride <= room, got stride={stride!r}, room={room!r}")
    if length < 0:
        raise ValueError(f"length must not be negative, got {length!r}")
    count = 1 + math.ceil(max(0, length - room) / stride)
    return [k * stride for k in range(count)]


def window_cost(length: int, max_length: int, stride: int) -> int:
    """Tokens the model reads for one document of `length` text tokens: every window's
    text plus its [CLS] and [SEP]."""
    room = max_length - 2
    return sum(min(room, length - start) + 2 for start in window_starts(length, room, stride))


def sliding_windows(dataset: Dataset, max_length: int, stride: int) -> tuple[Dataset, torch.Tensor]:
    """Every single-segment row ([CLS] text [SEP]) of `dataset` cut into windows of at most
    max_length tokens. Returns the windows, one row each (labels copied from their
    document; evidence_start moved, -1 where the window does not hold the evidence's first
    token), and document_index: the row of `dataset` each window comes from."""
    if not isinstance(max_length, int) or max_length < 3:
        raise ValueError(f"max_length must be an integer of at least 3, got {max_length!r}")
    room = max_length - 2
    tokenizer = dataset.tokenizer
    ids, document_index, evidence, examples = [], [], [], []
    for r, length in enumerate(dataset["attention_mask"].sum(dim=1).tolist()):
        text = dataset["input_ids"][r, 1:length - 1].tolist()  # between [CLS] and [SEP]
        for start in window_starts(len(text), room, stride):
            ids.append([tokenizer.cls_id, *text[start:start + room], tokenizer.sep_id])
            document_index.append(r)
            examples.append(dataset.examples[r])
            if "evidence_start" in dataset.tensors:
                old = int(dataset["evidence_start"][r]) - 1  # in text coordinates
                inside = start <= old < start + room
                evidence.append(old - start + 1 if inside else -1)
    index = torch.tensor(document_index, dtype=torch.long)
    tensors = padded_rows(ids, [[0] * len(row) for row in ids], tokenizer, max_length)
    for name, tensor in dataset.tensors.items():
        if name not in tensors and name != "evidence_start":
            tensors[name] = tensor[index]  # labels and other per-document columns
    if evidence:
        tensors["evidence_start"] = torch.tensor(evidence, dtype=torch.long)
    return Dataset(tensors, examples, tokenizer, dataset.label_names), index


def pool_logits(window_logits: torch.Tensor, document_index: torch.Tensor, num_documents: int,
                how: str = "mean") -> torch.Tensor:
    """One row of logits per document from its windows' logits: their mean, or the
    maximum of each class's logit over the windows. (W, C) -> (num_documents, C)"""
    if how not in WINDOW_POOLINGS:
        raise ValueError(f"how must be one of {WINDOW_POOLINGS}, got {how!r}")
    W, C = window_logits.shape
    if document_index.shape != (W,):
        raise ValueError("document_index needs one entry per row of window_logits")
    if (torch.bincount(document_index.cpu(), minlength=num_documents) == 0).any():
        raise ValueError("every document needs at least one window")
    index = document_index.to(window_logits.device)[:, None].expand(W, C)
    empty = window_logits.new_zeros(num_documents, C)
    reduce = "mean" if how == "mean" else "amax"
    return empty.scatter_reduce(0, index, window_logits, reduce=reduce, include_self=False)


MODEL_COLUMNS = ("input_ids", "token_type_ids", "attention_mask", "labels")


def model_columns(dataset: Dataset) -> Dataset:
    """The dataset without its bookkeeping columns (evidence_start), so that its batches
    can go straight to a classifier's forward() (and to `minibert.training.trainer.train`)."""
    tensors = {name: t for name, t in dataset.tensors.items() if name in MODEL_COLUMNS}
    return Dataset(tensors, dataset.examples, dataset.tokenizer, dataset.label_names)

