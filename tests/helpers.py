"""Helpers the tests share (importable from any test folder: tests/ is on pytest's path)."""

import sysconfig
from pathlib import Path

import pytest
import torch


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


def python_license_path() -> Path:
    """A real English text file that Python installs beside its standard library."""
    path = Path(sysconfig.get_paths()["stdlib"]) / "LICENSE.txt"
    if not path.exists():
        pytest.skip("this Python ships no LICENSE.txt")
    return path
