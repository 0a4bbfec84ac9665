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


def test_chapter_pilot_and_held_out_seeds_never_meet(monkeypatch):
    from minibert.measure import attention
    from minibert.runtime import PILOT_SEEDS
    from minibert.training import recipes

    monkeypatch.setenv("MINIBERT_SEED_OFFSET", "995")
    with pytest.raises(ValueError, match="a chapter's seeds lie in 0-999"):
        chapter_seeds(list(range(8)))  # 995-1002 would reach the pilots' seeds
    monkeypatch.setenv("MINIBERT_SEED_OFFSET", "1995")
    with pytest.raises(ValueError, match="a pilot's seeds lie in 1000-1999"):
        chapter_seeds(list(range(8)))
    # held-out documents are drawn at seed + an offset beyond every chapter and pilot seed
    assert PILOT_SEEDS.stop <= recipes.HELD_OUT_SEED and PILOT_SEEDS.stop <= attention.PROBE_DOCUMENT_SEED


def test_a_pilot_lengthens_every_seed_list(monkeypatch):
    monkeypatch.setenv("MINIBERT_SEED_OFFSET", "1000")
    monkeypatch.setenv("MINIBERT_PILOT_SEEDS", "8")
    assert chapter_seeds([0, 1, 2, 3, 4]) == list(range(1000, 1008))
    assert chapter_seeds(list(range(10))) == list(range(1000, 1010))
    monkeypatch.setenv("MINIBERT_SEED_OFFSET", "3")
    assert chapter_seeds([0, 1, 2]) == [3, 4, 5], "outside a pilot the count does nothing"
