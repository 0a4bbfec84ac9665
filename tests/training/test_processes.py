"""Where independent training runs go: the pool on a multi-core CPU, else this process."""

import pytest

from minibert.training import processes


@pytest.mark.parametrize("device, allowed, expected", [
    ("cpu", "2", True),  # a reader's two cores
    ("cpu", "1", False),  # the test run: its workers already fill the cores
    ("cuda", "2", False),  # a GPU: the runs share the device from this process
])
def test_runs_go_to_the_pool_only_on_a_cpu_with_processes_to_spare(monkeypatch, device,
                                                                   allowed, expected):
    monkeypatch.setenv("MINIBERT_DEVICE", device)
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", allowed)
    assert processes.in_pool() is expected


def test_runs_that_stay_here_keep_their_order(monkeypatch):
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    calls = [{"a": 3, "b": 4}, {"a": 1, "b": 7}]  # the longer run last
    assert processes.run_all(lambda a, b: a - b, calls, steps=[1, 5]) == [-1, -6]


def test_a_bad_number_of_processes_is_named(monkeypatch):
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "two")
    with pytest.raises(ValueError, match="MINIBERT_TRAIN_PROCESSES"):
        processes.training_processes()
