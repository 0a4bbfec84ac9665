"""Chapter 30's fine-tuning runs: the same bits in a training process as here, and the
model's own head; a wrong variant is named in the error."""

import pytest
import torch

import minibert
from minibert.text import datasets
from minibert.text.language import corpus_tokenizer
from minibert.training import fine_tuning


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A random tiny pre-training model saved as a checkpoint (the runs only need one)."""
    directory = tmp_path_factory.mktemp("checkpoint")
    config = minibert.preset("tiny").replace(vocab_size=corpus_tokenizer().vocab_size)
    torch.manual_seed(0)
    minibert.BertForPreTraining(config).save_pretrained(directory)
    return directory


def runs(checkpoint):
    train_set = datasets.sentence_classification("topic", 40, seed=1, max_length=16)
    test_set = datasets.sentence_classification("topic", 30, seed=2, max_length=16)
    return [dict(variant=variant, checkpoint=checkpoint, train_set=train_set,
                 test_set=test_set, seed=seed, steps=6, eval_every=3)
            for variant in fine_tuning.VARIANTS for seed in (0, 1)]


def test_runs_in_training_processes_are_the_runs_made_here(checkpoint, monkeypatch):
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "2")
    in_processes = fine_tuning.fine_tune_all(runs(checkpoint), progress=False)
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    here = fine_tuning.fine_tune_all(runs(checkpoint), progress=False)
    for a, b in zip(in_processes, here):
        assert a.accuracy == b.accuracy and len(a.accuracy) == 3  # start, step 3, step 6
        assert all(torch.equal(x, y) for x, y in zip(a.pooled, b.pooled))
        assert all(torch.equal(x, y) for x, y in zip(a.model.state_dict().values(),
                                                       b.model.state_dict().values()))
    pre_trained, random_init = here[0].model, here[2].model  # seed 0 of each variant
    assert not torch.equal(pre_trained.bert.embeddings.word_embeddings.weight,
                           random_init.bert.embeddings.word_embeddings.weight)
    assert pre_trained.classifier.out_features == 5  # the five topics


def test_an_unknown_variant_is_named(checkpoint):
    with pytest.raises(ValueError, match="'frozen'"):
        fine_tuning.classifier("frozen", 5, checkpoint)
