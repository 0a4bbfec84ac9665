"""The shared pre-trained model: trained once, cached, reloaded without training again.
(Its training time is a benchmark, not a test: see benchmarks/README.md.)"""

import dataclasses

import pytest
import torch

from minibert.text.language import generate_corpus
from minibert.training import zoo
from minibert.training.trainer import evaluate_mlm


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

    rows = zoo.held_out_rows(zoo.Recipe(**record["recipe"]))  # what the record was scored on
    assert evaluate_mlm(model, rows) == pytest.approx(record["metrics"])


def test_held_out_documents_are_never_trained_on():
    recipe = zoo.Recipe(num_documents=200, seed=4)
    trained = {d.text for d in generate_corpus(recipe.num_documents, seed=recipe.seed)}
    held_out = zoo.held_out_documents(recipe)
    assert len(held_out) == 20 and not trained & {d.text for d in held_out}
    contiguous = zoo.held_out_rows(dataclasses.replace(recipe, negatives=None))
    assert "next_sentence_label" not in contiguous.tensors
    assert "next_sentence_label" in zoo.held_out_rows(recipe).tensors


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
    with pytest.raises(ValueError, match="nsp_loss=False"):
        zoo.split_changes("tiny", {"nsp_loss": False, "negatives": None})
    with pytest.raises(ValueError, match="split"):
        zoo.split_changes("tiny", {"mask_split": (0.5, 0.1, 0.1)})


SMALL = {"steps": 6, "num_documents": 60, "max_length": 32, "batch_size": 16, "warmup_steps": 2}


def test_seeds_train_together_and_each_member_is_found_alone(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    models = zoo.pretrained_corpus_models("tiny", seeds=(0, 1, 2), progress=False, **SMALL)
    assert len(models) == 3 and len(list(tmp_path.iterdir())) == 3
    records = zoo.training_records("tiny", seeds=(0, 1, 2), **SMALL)
    assert [r["recipe"]["seed"] for r in records] == [0, 1, 2]
    assert all(r["trained_with"]["seeds"] == [0, 1, 2] for r in records)
    assert all(len(r["history"]["loss"]) == SMALL["steps"] for r in records)

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(zoo, "train_corpus_model", no_training)
    monkeypatch.setattr(zoo, "train_corpus_models", no_training)
    alone = zoo.pretrained_corpus_model("tiny", progress=False, seed=1, **SMALL)
    assert all(torch.equal(a, b) for a, b in zip(alone.state_dict().values(),
                                                 models[1].state_dict().values()))
    assert zoo.training_record("tiny", seed=2, **SMALL)["trained_with"]["seeds"] == [0, 1, 2]
    again = zoo.pretrained_corpus_models("tiny", seeds=(0, 1, 2), progress=False, **SMALL)
    assert all(torch.equal(a, b) for m, n in zip(again, models)
               for a, b in zip(m.state_dict().values(), n.state_dict().values()))


def test_the_same_call_gives_the_same_bits_whatever_the_cache_held(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "fresh"))
    fresh = zoo.pretrained_corpus_models("tiny", seeds=(0, 1), progress=False, **SMALL)
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "used"))
    solo = zoo.pretrained_corpus_model("tiny", progress=False, seed=0, **SMALL)  # cached first
    after = zoo.pretrained_corpus_models("tiny", seeds=(0, 1), progress=False, **SMALL)
    for a, b in zip(fresh, after):
        assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
    # The solo model is a different run (float rounding apart), kept under its own name.
    differences = [(x - y).abs().max() for x, y in zip(solo.state_dict().values(),
                                                       after[0].state_dict().values())]
    assert 0 < max(differences) < 1e-4


def test_bad_groups_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        zoo.corpus_model_directories("tiny", seeds=(1, 1))
    with pytest.raises(ValueError, match="seeds="):
        zoo.corpus_model_directories("tiny", seeds=(0, 1), seed=3)
    with pytest.raises(ValueError, match="must share steps"):
        config, recipe = zoo.split_changes("tiny", {})
        zoo.train_corpus_models(config, [recipe, zoo.Recipe(steps=10, seed=1)])
    with pytest.raises(ValueError, match="must share negatives"):  # rows of another kind
        zoo.train_corpus_models(config, [recipe, zoo.Recipe(negatives=None, seed=1)])


def test_no_nsp_loss_keeps_the_pair_rows_and_the_split_reaches_the_masker(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    with_nsp = zoo.training_record("tiny", **SMALL)
    pairs_only = zoo.training_record("tiny", nsp_loss=False, **SMALL)
    # The same pair rows (the same held-out NSP labels to score), no NSP term in the loss.
    assert all(loss == loss for loss in with_nsp["history"]["nsp_loss"])
    assert all(loss != loss for loss in pairs_only["history"]["nsp_loss"])  # NaN: not computed
    assert abs(pairs_only["metrics"]["nsp_accuracy"] - 0.5) < 0.2  # an untrained NSP head
    config, recipe = zoo.split_changes("tiny", {"mask_split": [1.0, 0.0, 0.0]})
    assert zoo._masker(recipe, zoo.corpus_tokenizer()).split == (1.0, 0.0, 0.0)
