"""Prepared zoo models (variants no config switch expresses): each concatenated table stays
in its block, a run made in a training process is the run made here, bit for bit, and the
preparation enters the model's key, so the prepared model is cached apart from its twin."""

import pytest
import torch

from minibert.training import preparations, recipes, zoo

BLOCKS = (("word_embeddings", 0, 48), ("position_embeddings", 48, 60),
          ("token_type_embeddings", 60, 64))
SHORT = {"steps": 4, "max_length": 16, "num_documents": 40, "warmup_steps": 1}


def same_weights(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_concatenated_runs_stay_in_their_blocks_wherever_they_train(tmp_path, monkeypatch):
    prepared = {**SHORT, "prepare": ["concatenated_tables", *map(list, BLOCKS)]}  # as JSON
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "pool"))
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "2")
    in_processes = zoo.pretrained_corpus_models(seeds=(0, 1), progress=False, **prepared)
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "here"))
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    here = zoo.pretrained_corpus_models(seeds=(0, 1), progress=False, **prepared)
    records = zoo.training_records(seeds=(0, 1), **prepared)
    for a, b, record in zip(in_processes, here, records):
        assert same_weights(a, b)
        assert record["recipe"]["prepare"][0] == "concatenated_tables"
        for name, start, end in BLOCKS:
            table = getattr(a.bert.embeddings, name).weight.detach()  # (rows, 64)
            outside = torch.ones(table.shape[1], dtype=torch.bool)
            outside[start:end] = False
            assert table[:, outside].abs().max() == 0 and table[:, start:end].abs().max() > 0
    assert not same_weights(*here)  # two seeds


def test_the_preparation_is_in_the_key_and_the_twin_keeps_its_own():
    twin = zoo.model_key("tiny", *recipes.split_changes("tiny", SHORT))
    scaled = recipes.split_changes("tiny", {**SHORT, "prepare": ("scaled_positions", 0.02)})
    assert zoo.model_key("tiny", *scaled) != twin
    assert "prepare" not in recipes.recipe_settings(recipes.split_changes("tiny", SHORT)[1])
    model = recipes.initial_model(*scaled)
    before = model.bert.embeddings.position_embeddings.weight.clone()
    preparations.apply(model, scaled[1].prepare)
    assert torch.allclose(model.bert.embeddings.position_embeddings.weight, 0.02 * before)


def test_an_unknown_preparation_is_named():
    with pytest.raises(ValueError, match="prepare names one of .* got 'shuffled_rows'"):
        recipes.split_changes("tiny", {"prepare": ("shuffled_rows",)})
