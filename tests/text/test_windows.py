"""Sliding windows over long rows: their arithmetic, their contents and pooling."""

import math

import pytest
import torch

from minibert.text import datasets
from minibert.text.windows import model_columns, pool_logits, sliding_windows, window_cost, window_starts


def test_window_starts_cover_the_text():
    for length in [0, 1, 10, 62, 63, 100, 250]:
        for room, stride in [(62, 62), (62, 31), (10, 3)]:
            starts = window_starts(length, room, stride)
            assert len(starts) == 1 + math.ceil(max(0, length - room) / stride)
            assert starts[0] == 0 and starts[-1] + room >= length
            assert all(b - a == stride for a, b in zip(starts, starts[1:]))
    with pytest.raises(ValueError):
        window_starts(10, 5, 6)
    with pytest.raises(ValueError):
        window_starts(10, 5, 0)


def test_sliding_windows_rows_and_cost():
    documents = datasets.long_documents(6, seed=4, min_tokens=60, max_tokens=100)
    windows, index = sliding_windows(documents, max_length=32, stride=20)
    lengths = documents["attention_mask"].sum(1) - 2
    assert windows["input_ids"].shape[1] == 32
    assert int(windows["attention_mask"].sum()) == sum(window_cost(int(n), 32, 20) for n in lengths)
    assert torch.equal(windows["labels"], documents["labels"][index])
    tokenizer = documents.tokenizer
    for r in range(len(documents)):
        rows = windows["input_ids"][index == r]
        assert (rows[:, 0] == tokenizer.cls_id).all()
        # The evidence's first token sits in at least one window, at the right place.
        evidence = windows["evidence_start"][index == r]
        assert (evidence >= 0).any()
        old = int(documents["evidence_start"][r])
        for row, at in zip(rows, evidence.tolist()):
            if at >= 0:
                assert row[at] == documents["input_ids"][r, old]
    # The windows' text, minus the overlaps, is the document's text.
    text = documents["input_ids"][0, 1:int(lengths[0]) + 1].tolist()
    rebuilt: list[int] = []
    for start, row in zip(window_starts(len(text), 30, 20), windows["input_ids"][index == 0]):
        body = row[1:int((row != 0).sum()) - 1].tolist()
        rebuilt = rebuilt[:start] + body
    assert rebuilt == text


def test_pool_logits():
    logits = torch.tensor([[1.0, 0.0], [3.0, -2.0], [0.0, 5.0]])
    index = torch.tensor([0, 0, 1])
    assert pool_logits(logits, index, 2, "mean").tolist() == [[2.0, -1.0], [0.0, 5.0]]
    assert pool_logits(logits, index, 2, "max").tolist() == [[3.0, 0.0], [0.0, 5.0]]
    with pytest.raises(ValueError, match="how"):
        pool_logits(logits, index, 2, "median")
    with pytest.raises(ValueError, match="at least one window"):
        pool_logits(logits, index, 3)
    with pytest.raises(ValueError, match="one entry"):
        pool_logits(logits, index[:2], 2)


def test_model_columns_drop_bookkeeping():
    documents = datasets.long_documents(3, seed=4, min_tokens=60, max_tokens=100)
    kept = model_columns(datasets.truncate(documents, 32, "head"))
    assert set(kept.tensors) == {"input_ids", "token_type_ids", "attention_mask", "labels"}
    assert len(kept) == 3
