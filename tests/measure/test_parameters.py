"""The parameter anatomy: formula and module counts agree, and add up to BERT's published sizes."""

import pytest

import minibert
from minibert.measure import parameters

VARIANTS = [
    {}, dict(use_qkv_projections=False), dict(identity_projections="qk"),
    dict(identity_projections="v"), dict(qkv_sharing="kv"), dict(qkv_sharing="qk"),
    dict(layer_norm_position="pre"), dict(tie_word_embeddings=False),
    dict(position_embedding_type="sinusoidal"), dict(normalization="rmsnorm"),
    dict(normalization="batchnorm"), dict(normalization="none"),
    dict(normalization="rmsnorm", layer_norm_position="pre"),
    dict(normalization="none", layer_norm_position="pre"), dict(residual=False),
    dict(intermediate_size=0), dict(intermediate_size=0, layer_norm_position="pre"),
    dict(attention_score="additive"),
]


@pytest.mark.parametrize("changes", VARIANTS)
def test_formula_matches_module(tiny_config, changes):
    config = tiny_config.replace(**changes)
    model = minibert.BertModel(config)
    assert parameters.count_by_formula(config) == parameters.count_by_module(model)
    assert sum(parameters.count_by_module(model).values()) == model.num_parameters()


@pytest.mark.parametrize("changes", VARIANTS)
def test_formula_matches_pretraining_model(tiny_config, changes):
    config = tiny_config.replace(**changes)
    model = minibert.BertForPreTraining(config)
    by_module = parameters.count_by_module(model)
    assert parameters.count_by_formula(config, pretraining_heads=True) == by_module
    assert ("MLM decoder" in by_module) == (not config.tie_word_embeddings)


def test_no_feed_forward_has_no_feed_forward_component(tiny_config):
    counts = parameters.count_by_formula(tiny_config.replace(intermediate_size=0))
    assert not any(c.startswith("feed-forward") for c in counts)
    H, I = tiny_config.hidden_size, tiny_config.intermediate_size
    L = tiny_config.num_hidden_layers
    full = sum(parameters.count_by_formula(tiny_config).values())
    assert full - sum(counts.values()) == L * (2 * H * I + I + H + 2 * H)


def test_model_without_pooler(tiny_config):
    model = minibert.BertModel(tiny_config, add_pooling_layer=False)
    assert parameters.count_by_formula(tiny_config, pooler=False) == parameters.count_by_module(model)


def test_published_sizes():
    base, large = minibert.preset("base"), minibert.preset("large")
    assert sum(parameters.count_by_formula(base).values()) == 109_482_240
    assert sum(parameters.count_by_formula(large).values()) == 335_141_888
    assert sum(parameters.count_by_formula(base, pretraining_heads=True).values()) == 110_106_428
    totals = parameters.group_totals(parameters.count_by_formula(base))
    assert totals == {"embeddings": 23_837_184, "layers": 12 * 7_087_872, "pooler": 590_592,
                      "heads": 0}


def test_meta_build_counts_without_allocating():
    config = minibert.preset("large")
    model = parameters.build_on_meta(minibert.BertModel, config)
    assert next(model.parameters()).is_meta
    assert parameters.count_by_module(model) == parameters.count_by_formula(config)


def test_embedding_share_falls_with_size():
    tiny = minibert.preset("tiny", vocab_size=30522)
    assert parameters.embedding_share(tiny) > 0.5 > 0.25 > parameters.embedding_share(
        minibert.preset("base"))


def test_unknown_parameter_is_named():
    with pytest.raises(KeyError, match="mystery.weight"):
        parameters.component_of("mystery.weight")
    assert parameters.component_of("bert.encoder.layer.11.output.dense.bias") == "feed-forward out"
    assert parameters.component_of("encoder.layer.3.attention.output.dense.weight") == "attention output"


def test_architecture_diagram_shows_the_counts():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    config = minibert.preset("base")
    fig, ax = plt.subplots()
    parameters.draw_architecture(ax, config)
    texts = " ".join(t.get_text() for t in ax.texts)
    plt.close(fig)
    assert "23,837,184" in texts and "4,722,432 parameters per layer" in texts
    assert "× L = 12" in texts


def test_rmsnorm_has_no_bias(tiny_config):
    """RMSNorm holds a gain per feature and no bias: H fewer parameters per norm."""
    H, L = tiny_config.hidden_size, tiny_config.num_hidden_layers
    count = lambda **c: sum(parameters.count_by_formula(tiny_config.replace(**c)).values())  # noqa: E731
    assert count() - count(normalization="rmsnorm") == 2 * L * H
    assert count() - count(normalization="none") == 2 * L * 2 * H
    assert count(normalization="batchnorm") == count()
