"""Shared fixtures: small random configs."""

import pytest

import minibert


@pytest.fixture
def tiny_config():
    return minibert.preset("tiny", vocab_size=120, max_position_embeddings=32)
