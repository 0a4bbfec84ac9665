"""Frozen-feature probes: right shapes, padding ignored, the regression fits what is there."""

import pytest
import torch

import minibert
from minibert import data, frozen_probe


@pytest.fixture(scope="module")
def model_and_data():
    tokenizer = data.corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size)
    torch.manual_seed(0)
    model = minibert.BertForPreTraining(config).eval()
    sentences = data.sentence_classification("topic", 12, seed=0, max_length=24)
    return model, sentences, data.tagging_dataset(6, seed=0, max_length=24)


@pytest.mark.parametrize("pool", frozen_probe.POOLINGS)
def test_sentence_features_shape_and_frozen(model_and_data, pool):
    model, sentences, _ = model_and_data
    before = [p.clone() for p in model.parameters()]
    features = frozen_probe.sentence_features(model, sentences, pool=pool, batch_size=5)
    assert features.shape == (len(sentences), model.config.hidden_size)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_mean_pooling_ignores_padding(model_and_data):
    model, sentences, _ = model_and_data
    one_row = sentences.select([0])
    length = int(one_row["attention_mask"].sum())
    trimmed = data.Dataset({k: v[:, :length] if v.dim() == 2 else v
                            for k, v in one_row.tensors.items()},
                           one_row.examples, one_row.tokenizer)
    padded = frozen_probe.sentence_features(model, one_row)
    unpadded = frozen_probe.sentence_features(model, trimmed)
    assert torch.allclose(padded, unpadded, atol=1e-5)


def test_layer_zero_is_the_embedding_output(model_and_data):
    model, sentences, _ = model_and_data
    embedded = model.bert.embeddings(sentences["input_ids"], sentences["token_type_ids"])
    assert torch.allclose(frozen_probe.sentence_features(model, sentences, pool="cls", layer=0),
                          embedded[:, 0].detach(), atol=1e-6)


def test_token_features_keep_labelled_tokens_only(model_and_data):
    model, _, tags = model_and_data
    features, labels = frozen_probe.token_features(model, tags)
    assert len(features) == len(labels) == int((tags["labels"] != -100).sum())
    assert (labels >= 0).all()


def test_linear_probe_separates_what_is_separable_and_not_noise():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(400, 8, generator=g)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
    assert frozen_probe.linear_probe(x[:300], y[:300], x[300:], y[300:]) > 0.95
    noise = torch.randint(0, 2, (400,), generator=g)
    assert abs(frozen_probe.linear_probe(x[:300], noise[:300], x[300:], noise[300:]) - 0.5) < 0.15


def test_bad_arguments_are_refused(model_and_data):
    model, sentences, _ = model_and_data
    with pytest.raises(ValueError, match="pool"):
        frozen_probe.sentence_features(model, sentences, pool="max")
    with pytest.raises(ValueError, match="pooler"):
        frozen_probe.sentence_features(model.bert, sentences, pool="pooler", layer=1)
    with pytest.raises(ValueError, match="same number"):
        frozen_probe.linear_probe(torch.zeros(3, 2), torch.zeros(2).long(), torch.zeros(1, 2),
                             torch.zeros(1).long())
