"""Pooling, frozen features, the linear probe and the nearest-centroid score."""

import math

import pytest
import torch

import minibert
from minibert.measure import attention, probes
from minibert.text import datasets, language


def test_pool_ignores_padding():
    hidden = torch.randn(2, 5, 3)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
    padded = hidden.clone()
    padded[0, 3:] = 1e6  # garbage in the padding must not leak into any pooling
    for how in probes.TOKEN_POOLINGS:
        assert torch.allclose(probes.pool(hidden, mask, how)[0], probes.pool(padded, mask, how)[0])
    assert torch.equal(probes.pool(hidden, mask, "cls"), hidden[:, 0])
    assert torch.allclose(probes.pool(hidden, mask, "mean")[0], hidden[0, :3].mean(dim=0))
    assert torch.equal(probes.pool(hidden, mask, "max")[1], hidden[1].amax(dim=0))
    with pytest.raises(ValueError, match="pooling"):
        probes.pool(hidden, mask, "median")


def test_every_layer_at_once_shapes_and_frozen_model():
    tokenizer = language.corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size)
    torch.manual_seed(0)
    model = minibert.BertForSequenceClassification(config.replace(num_labels=5)).eval()
    sentences = datasets.sentence_classification("topic", 7, seed=0, max_length=24)
    before = [p.clone() for p in model.parameters()]
    features = {how: probes.sentence_features(model, sentences, how, layer="all", batch_size=3)
                for how in probes.TOKEN_POOLINGS}
    for tensor in features.values():
        assert tensor.shape == (config.num_hidden_layers + 1, 7, config.hidden_size)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))
    with torch.no_grad():  # the last layer's [CLS] row is the encoder's own output
        last = model.bert(sentences["input_ids"], sentences["attention_mask"]).last_hidden_state
    assert torch.allclose(features["cls"][-1], last[:, 0], atol=1e-5)
    together = probes.pooled_features(model, sentences, layer="all", batch_size=3)  # one pass
    assert all(torch.equal(together[how], features[how]) for how in probes.TOKEN_POOLINGS)
    with pytest.raises(ValueError, match="poolings must be among"):
        probes.pooled_features(model, sentences, ("mean", "pooler"))


def test_probe_reads_a_linear_label_and_not_noise():
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(400, 8, generator=generator)
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()  # linearly separable
    noise = torch.randn(400, 8, generator=generator)
    accuracy = probes.linear_probe(x[:300], y[:300], x[300:], y[300:])
    assert accuracy > 0.95
    chance = probes.linear_probe(noise[:300], y[:300], noise[300:], y[300:])
    assert chance < 0.7
    shuffled = torch.randint(0, 2, (400,), generator=generator)  # labels unrelated to x
    assert abs(probes.linear_probe(x[:300], shuffled[:300], x[300:], shuffled[300:]) - 0.5) < 0.15
    stacked = probes.linear_probe(torch.stack([x[:300], noise[:300]]), y[:300],
                                   torch.stack([x[300:], noise[300:]]), y[300:])
    assert stacked.shape == (2,)  # two probes at once give the two separate answers
    assert torch.allclose(stacked, torch.tensor([accuracy, chance]), atol=0.02)


def test_centroid_accuracy_uses_directions_only():
    train_x = torch.tensor([[1.0, 0.1], [2.0, -0.1], [0.1, 1.0], [-0.1, 3.0]])
    train_y = torch.tensor([0, 0, 1, 1])
    test_x = torch.tensor([[5.0, 1.0], [0.2, 0.1], [1.0, 4.0]])  # length does not matter
    test_y = torch.tensor([0, 0, 1])
    assert probes.centroid_accuracy(train_x, train_y, test_x, test_y) == 1.0
    assert probes.centroid_accuracy(train_x, 1 - train_y, test_x, test_y) == 0.0
    stacked = probes.centroid_accuracy(torch.stack([train_x, train_x]), train_y,
                                      torch.stack([test_x, -test_x]), test_y)
    assert stacked.shape == (2,) and stacked[0] == 1.0


def test_attention_entropy_is_normalised():
    mask = torch.tensor([[1, 1, 1, 1, 0]])
    uniform = torch.zeros(1, 1, 5, 5)
    uniform[..., :4] = 0.25
    one_hot = torch.zeros(1, 1, 5, 5)
    one_hot[..., 0] = 1.0
    assert torch.allclose(attention.attention_entropy(uniform, mask)[0, 0, :4], torch.ones(4))
    assert torch.allclose(attention.attention_entropy(one_hot, mask)[0, 0, :4], torch.zeros(4),
                          atol=1e-6)
    assert math.isnan(attention.attention_entropy(uniform, mask)[0, 0, 4])


@pytest.fixture(scope="module")
def model_and_data():
    tokenizer = language.corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size)
    torch.manual_seed(0)
    model = minibert.BertForPreTraining(config).eval()
    sentences = datasets.sentence_classification("topic", 12, seed=0, max_length=24)
    return model, sentences, datasets.tagging_dataset(6, seed=0, max_length=24)


@pytest.mark.parametrize("pooling", probes.PROBE_POOLINGS)
def test_sentence_features_shape_and_frozen(model_and_data, pooling):
    model, sentences, _ = model_and_data
    before = [p.clone() for p in model.parameters()]
    features = probes.sentence_features(model, sentences, pooling=pooling, batch_size=5)
    assert features.shape == (len(sentences), model.config.hidden_size)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters()))


def test_mean_pooling_ignores_padding(model_and_data):
    model, sentences, _ = model_and_data
    one_row = sentences.select([0])
    length = int(one_row["attention_mask"].sum())
    trimmed = datasets.Dataset({k: v[:, :length] if v.dim() == 2 else v
                            for k, v in one_row.tensors.items()},
                           one_row.examples, one_row.tokenizer)
    padded = probes.sentence_features(model, one_row)
    unpadded = probes.sentence_features(model, trimmed)
    assert torch.allclose(padded, unpadded, atol=1e-5)


def test_layer_zero_is_the_embedding_output(model_and_data):
    model, sentences, _ = model_and_data
    embedded = model.bert.embeddings(sentences["input_ids"], sentences["token_type_ids"])
    assert torch.allclose(probes.sentence_features(model, sentences, pooling="cls", layer=0),
                          embedded[:, 0].detach(), atol=1e-6)


def test_token_features_keep_labelled_tokens_only(model_and_data):
    model, _, tags = model_and_data
    features, labels = probes.token_features(model, tags)
    assert len(features) == len(labels) == int((tags["labels"] != -100).sum())
    assert (labels >= 0).all()


def test_bad_arguments_are_refused(model_and_data):
    model, sentences, _ = model_and_data
    with pytest.raises(ValueError, match="pooling"):
        probes.sentence_features(model, sentences, pooling="median")
    with pytest.raises(ValueError, match="layer"):
        probes.sentence_features(model, sentences, layer="last")
    with pytest.raises(ValueError, match="pooler"):
        probes.sentence_features(model.bert, sentences, pooling="pooler", layer=1)
    with pytest.raises(ValueError, match="same number"):
        probes.linear_probe(torch.zeros(3, 2), torch.zeros(2).long(), torch.zeros(1, 2),
                             torch.zeros(1).long())
