"""The runtime helpers: a chapter's seed set moves as a whole with $MINIBERT_SEED_OFFSET."""

import pytest

from minibert import chapter_seeds


def test_chapter_seeds_are_the_defaults_without_an_offset(monkeypatch):
    monkeypatch.delenv("MINIBERT_SEED_OFFSET", raising=False)
    assert chapter_seeds([0, 1, 2]) == [0, 1, 2]
    assert chapter_seeds([7]) == [7]


def test_chapter_seeds_shift_by_the_offset(monkeypatch):
    monkeypatch.setenv("MINIBERT_SEED_OFFSET", "3")
    assert chapter_seeds([0, 1, 2]) == [3, 4, 5]


def test_chapter_seeds_reject_a_bad_offset_or_no_seeds(monkeypatch):
    monkeypatch.setenv("MINIBERT_SEED_OFFSET", "three")
    with pytest.raises(ValueError, match="MINIBERT_SEED_OFFSET"):
        chapter_seeds([0])
    monkeypatch.delenv("MINIBERT_SEED_OFFSET")
    with pytest.raises(ValueError, match="at least one"):
        chapter_seeds([])
