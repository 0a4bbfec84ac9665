"""Dropout: where BERT applies it, and the properties of inverted dropout."""

import pytest
import torch

import minibert
from helpers import padded_batch
from minibert.measure import dropout


def _model(tiny_config, p=0.1):
    torch.manual_seed(0)
    return minibert.BertModel(tiny_config.replace(hidden_dropout_prob=p,
                                                  attention_probs_dropout_prob=p))


def test_eval_mode_is_deterministic_and_train_mode_draws_masks(tiny_config):
    model = _model(tiny_config)
    batch = padded_batch(model.config)
    with torch.no_grad():
        model.eval()
        first, second = (model(**batch).last_hidden_state for _ in range(2))
        model.train()
        torch.manual_seed(1)
        a = model(**batch).last_hidden_state
        b = model(**batch).last_hidden_state  # the generator moved on: new masks
        torch.manual_seed(1)
        again = model(**batch).last_hidden_state  # the same seed: the same masks
    assert torch.equal(first, second)
    assert (a - b).abs().max() > 1e-3
    assert torch.equal(a, again)


def _embeddings_in_train_mode(tiny_config, p):
    """A model's embeddings of one batch as a call (the model left in train mode, so each
    call draws new masks) and their eval-mode output."""
    model = _model(tiny_config, p)
    batch = padded_batch(model.config)

    def embed():
        return model.embeddings(batch["input_ids"], batch["token_type_ids"])

    with torch.no_grad():
        model.eval()
        y = embed()
    model.train()
    return embed, y


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_kept_units_are_scaled_by_one_over_keep(tiny_config, p):
    """The embeddings' dropout is their last step: each unit is 0 or its eval value / (1-p)."""
    embed, y = _embeddings_in_train_mode(tiny_config, p)
    with torch.no_grad():
        dropped = embed()
    kept = dropped != 0
    torch.testing.assert_close(dropped[kept], y[kept] / (1 - p))
    share = kept.float().mean().item()  # about 1 - p of the units survive
    n = kept.numel()
    assert abs(share - (1 - p)) < 6 * (p * (1 - p) / n) ** 0.5


def test_one_layer_train_mode_mean_is_the_eval_output(tiny_config):
    p, samples = 0.3, 4000
    embed, y = _embeddings_in_train_mode(tiny_config, p)
    with torch.no_grad():
        torch.manual_seed(0)
        mean = dropout.monte_carlo_mean(embed, samples)
    assert ((mean - y).abs() <= dropout.one_layer_bound(y, p, samples)).all()
    # and the spread is the one derived: about a third of the units stray beyond 1 sd
    beyond = (mean - y).abs() > dropout.one_layer_bound(y, p, samples, sigmas=1.0)
    assert 0.2 < beyond.float().mean() < 0.45


def test_attention_probability_dropout_keeps_the_context_mean(tiny_config):
    """The context is linear in the dropped probabilities, so its mean is the eval context."""
    p, samples = 0.5, 3000
    model = _model(tiny_config, p)
    attention = model.encoder.layer[0].attention.self
    x = torch.randn(2, 7, tiny_config.hidden_size)
    with torch.no_grad():
        attention.eval()
        reference, weights = attention(x, None, need_weights=True)
        attention.train()
        torch.manual_seed(0)
        mean = dropout.monte_carlo_mean(lambda: attention(x, None, False)[0], samples)
    # variance of one sample: p/(1-p) * sum_j w_j^2 v_j^2, per head and feature
    _, _, v = attention.heads(x)  # (B, nh, T, hs)
    var = p / (1 - p) * (weights.pow(2) @ v.pow(2))  # (B, nh, T, hs)
    sd = var.transpose(1, 2).reshape(reference.shape).sqrt() / samples**0.5
    assert ((mean - reference).abs() <= 6 * sd + 1e-5).all()


def test_sites_and_set_rate(tiny_config):
    model = minibert.BertForSequenceClassification(tiny_config.replace(num_labels=3))
    table = dropout.sites(model)
    assert len(table) == 5  # embeddings, attention probs, two sublayer outputs, head
    assert set(table["rate"]) == {tiny_config.hidden_dropout_prob}
    dropout.set_rate(model, 0.25)
    assert set(dropout.sites(model)["rate"]) == {0.25}
    every = sum(1 for m in model.modules() if isinstance(m, torch.nn.Dropout))
    layers = tiny_config.num_hidden_layers
    assert every == 1 + 2 * layers + 1
    with pytest.raises(ValueError, match="rate"):
        dropout.set_rate(model, 1.0)


def test_mean_gap_is_small_for_one_layer_and_grows_with_p_through_the_network(
        tiny_config):
    model = _model(tiny_config, 0.0).eval()
    batch = padded_batch(model.config)
    forward = lambda: model(**batch).last_hidden_state  # noqa: E731
    torch.manual_seed(0)
    low, high = (dropout.mean_gap(forward, model, p, 200) for p in (0.05, 0.5))
    assert high["gap"] > low["gap"]
    assert not model.training
