"""The shared pre-trained model: trained once, cached, reloaded without training again.
(Its training time is a benchmark, not a test: see benchmarks/README.md.)"""

import pytest
import torch

from minibert.training import zoo


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINIBERT_CACHE", str(directory))
        yield directory


def test_beats_the_unigram_baseline_and_reloads_from_the_cache(cache):
    model = zoo.pretrained_corpus_model("tiny", progress=False)
    record = zoo.training_record("tiny")
    accuracy = record["metrics"]["mlm_accuracy"]
    baseline = record["unigram_baseline"]["most_frequent"]
    assert accuracy > baseline + 0.15, (accuracy, baseline)
    assert record["metrics"]["nsp_accuracy"] > 0.75
    directories = [p for p in cache.iterdir()]
    assert len(directories) == 1 and not directories[0].name.startswith(".")  # no temp dir left

    trained_at = (directories[0] / "model.safetensors").stat().st_mtime_ns
    again = zoo.pretrained_corpus_model("tiny")
    assert (directories[0] / "model.safetensors").stat().st_mtime_ns == trained_at
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                 again.state_dict().values()))


def test_variants_are_keyed_apart_and_bad_settings_refused():
    base = zoo.model_key("tiny", *zoo.split_changes("tiny", {}))
    no_nsp = zoo.model_key("tiny", *zoo.split_changes("tiny", {"negatives": None}))
    pre_ln = zoo.model_key("tiny", *zoo.split_changes("tiny", {"layer_norm_position": "pre"}))
    assert len({base, no_nsp, pre_ln}) == 3
    assert base == zoo.model_key("tiny", *zoo.split_changes("tiny", {}))
    with pytest.raises(ValueError, match="unknown zoo settings"):
        zoo.split_changes("tiny", {"learning_rate": 1e-3})
    with pytest.raises(ValueError, match="max_length"):
        zoo.split_changes("tiny", {"max_length": 1024})
