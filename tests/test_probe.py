"""Pooling ignores padding, layer features have the right shapes and leave the model
unchanged, the probe fits what is linearly there, and attention entropy is normalised."""

import math

import pytest
import torch

import minibert
from minibert import data, probe


def test_pool_ignores_padding():
    hidden = torch.randn(2, 5, 3)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    padded = hidden.clone()
    padded[0, 3:] = 1e6  # garbage in the padding must not leak into any pooling
    for how in probe.POOLINGS:
        assert torch.allclose(probe.pool(hidden, mask, how)[0], probe.pool(padded, mask, how)[0])
    assert torch.equal(probe.pool(hidden, mask, "cls"), hidden[:, 0])
    assert torch.allclose(probe.pool(hidden, mask, "mean")[0], hidden[0, :3].mean(dim=0))
    assert torch.equal(probe.pool(hidden, mask, "max")[1], hidden[1].amax(dim=0))
    with pytest.raises(ValueError, match="pooling"):
        probe.pool(hidden, mask, "median")


def test_layer_features_shapes_and_frozen_model():
    tokenizer = data.corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size)
    torch.manual_seed(0)
    model = minibert.BertForSequenceClassification(config.replace(num_labels=5)).eval()
    sentences = data.sentence_classification("topic", 7, seed=0, max_length=24)
    before = [p.clone() for p in model.parameters()]
    features = probe.layer_features(model, sentences, batch_size=3)
    assert set(features) == set(probe.POOLINGS)
    for tensor in features.values():
        assert tensor.shape == (config.num_hidden_layers + 1, 7, config.hidden_size)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    with torch.no_grad():  # the last layer's [CLS] row is the encoder's own output
        last = model.bert(sentences["input_ids"], sentences["attention_mask"]).last_hidden_state
    assert torch.allclose(features["cls"][-1], last[:, 0], atol=1e-5)


def test_probe_reads_a_linear_label_and_not_noise():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(400, 8, generator=generator)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()  # linearly separable
    noise = torch.randn(400, 8, generator=generator)
    accuracy = probe.probe_accuracy(x[:300], y[:300], x[300:], y[300:])
    assert accuracy > 0.95
    chance = probe.probe_accuracy(noise[:300], y[:300], noise[300:], y[300:])
    assert chance < 0.7
    stacked = probe.probe_accuracy(torch.stack([x[:300], noise[:300]]), y[:300],
                                   torch.stack([x[300:], noise[300:]]), y[300:])
    assert stacked.shape == (2,)  # two probes at once give the two separate answers
    assert torch.allclose(stacked, torch.stack([accuracy, chance]), atol=0.02)


def test_centroid_accuracy_uses_directions_only():
    train_x = torch.tensor([[1.0, 0.1], [2.0, -0.1], [0.1, 1.0], [-0.1, 3.0]])
    train_y = torch.tensor([0, 0, 1, 1])
    test_x = torch.tensor([[5.0, 1.0], [0.2, 0.1], [1.0, 4.0]])  # length does not matter
    test_y = torch.tensor([0, 0, 1])
    assert probe.centroid_accuracy(train_x, train_y, test_x, test_y) == 1.0
    assert probe.centroid_accuracy(train_x, 1 - train_y, test_x, test_y) == 0.0
    stacked = probe.centroid_accuracy(torch.stack([train_x, train_x]), train_y,
                                      torch.stack([test_x, -test_x]), test_y)
    assert stacked.shape == (2,) and stacked[0] == 1.0


def test_attention_entropy_is_normalised():
    mask = torch.tensor([[1, 1, 1, 1, 0]])
    uniform = torch.zeros(1, 1, 5, 5)
    uniform[..., :4] = 0.25
    one_hot = torch.zeros(1, 1, 5, 5)
    one_hot[..., 0] = 1.0
    assert torch.allclose(probe.attention_entropy(uniform, mask)[0, 0, :4], torch.ones(4))
    assert torch.allclose(probe.attention_entropy(one_hot, mask)[0, 0, :4], torch.zeros(4),
                          atol=1e-6)
    assert math.isnan(probe.attention_entropy(uniform, mask)[0, 0, 4])
