"""Shared fixtures: small random configs and padded batches."""

import pytest
import torch

import minibert


def padded_batch(config, batch=3, seq_len=11, seed=0):
    """Random ids with [CLS]-like first token, two segments, and ragged padding."""
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(1, config.vocab_size, (batch, seq_len), generator=g)
    lengths = torch.linspace(seq_len, max(2, seq_len // 3), batch).long()  # first row unpadded
    positions = torch.arange(seq_len)[None, :]
    attention_mask = (positions < lengths[:, None]).long()  # (B, T)
    input_ids = input_ids * attention_mask  # padding id 0
    token_type_ids = ((positions >= (lengths[:, None] // 2)) & attention_mask.bool()).long()
    return dict(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)


@pytest.fixture
def tiny_config():
    return minibert.preset("tiny", vocab_size=120, max_position_embeddings=32)
