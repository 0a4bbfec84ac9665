"""The experiment switches: each builds, runs, and does what its name says."""

import pytest
import torch

import minibert
from helpers import padded_batch

VARIANTS = [
    {}, dict(use_qkv_projections=False), dict(identity_projections="qk"),
    dict(identity_projections="v"), dict(qkv_sharing="kv"), dict(qkv_sharing="qk"),
    dict(qkv_sharing="qk", mask_self_attention=True), dict(scale_attention_scores=False),
    dict(hidden_act="identity"), dict(hidden_act="relu"), dict(hidden_act="gelu_tanh"),
    dict(position_embedding_type="sinusoidal"), dict(layer_norm_position="pre"),
    dict(attention_direction="causal"), dict(tie_word_embeddings=False),
]


@pytest.mark.parametrize("changes", VARIANTS)
def test_fast_path_equals_explicit_path(tiny_config, changes):
    model = minibert.BertForPreTraining(tiny_config.replace(**changes)).eval()
    batch = padded_batch(model.config)
    with torch.no_grad():
        fast = model(**batch)
        explicit = model(**batch, output_attentions=True)
    assert (fast.prediction_logits - explicit.prediction_logits).abs().max() < 1e-5
    for weights in explicit.attentions:
        torch.testing.assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)))


@pytest.mark.parametrize("changes", VARIANTS)
def test_variant_learns(tiny_config, changes):
    """Twenty Adam steps on one batch: every variant's loss falls by a third or more."""
    torch.manual_seed(0)
    model = minibert.BertForPreTraining(tiny_config.replace(**changes))
    batch = padded_batch(model.config)
    labels = batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        loss = model(**batch, labels=labels, next_sentence_label=torch.tensor([0, 1, 0])).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 2 / 3 * losses[0], losses


def test_projection_switches_change_parameter_count(tiny_config):
    count = lambda **c: minibert.BertModel(tiny_config.replace(**c)).num_parameters()  # noqa: E731
    H, L = tiny_config.hidden_size, tiny_config.num_hidden_layers
    full = count()
    assert full - count(qkv_sharing="kv") == L * (H * H + H)
    assert full - count(qkv_sharing="qk") == L * (H * H + H)
    assert full - count(use_qkv_projections=False) == 3 * L * (H * H + H)
    assert full - count(identity_projections="qk") == 2 * L * (H * H + H)
    assert full - count(identity_projections="v") == L * (H * H + H)


@pytest.mark.parametrize("which", ["qk", "v"])
def test_identity_projections_pass_the_input_through(tiny_config, which):
    layer = minibert.model.layers.BertSelfAttention(
        tiny_config.replace(identity_projections=which))
    x = torch.randn(2, 5, tiny_config.hidden_size)  # (B, T, H)
    q, k, v = layer.project(x)
    passed_through = (q, k) if which == "qk" else (v,)
    projected = (v,) if which == "qk" else (q, k)
    assert all(t is x for t in passed_through)
    assert all(not torch.equal(t, x) for t in projected)


def test_tied_decoder_shares_the_embedding_matrix(tiny_config):
    tied = minibert.BertForPreTraining(tiny_config)
    untied = minibert.BertForPreTraining(tiny_config.replace(tie_word_embeddings=False))
    assert tied.cls.predictions.decoder.weight is tied.bert.embeddings.word_embeddings.weight
    V, H = tiny_config.vocab_size, tiny_config.hidden_size
    assert untied.num_parameters() - tied.num_parameters() == V * H


def test_causal_attention_sees_only_the_left(tiny_config):
    model = minibert.BertModel(tiny_config.replace(attention_direction="causal")).eval()
    ids = torch.randint(1, tiny_config.vocab_size, (1, 10))
    changed = ids.clone()
    changed[0, 7] = (ids[0, 7] % (tiny_config.vocab_size - 1)) + 1
    with torch.no_grad():
        a, b = model(ids).last_hidden_state, model(changed).last_hidden_state
    assert torch.allclose(a[0, :7], b[0, :7], atol=1e-6)
    assert not torch.allclose(a[0, 7:], b[0, 7:], atol=1e-6)


def test_padding_does_not_leak_into_real_positions(tiny_config):
    model = minibert.BertModel(tiny_config).eval()
    batch = padded_batch(tiny_config, batch=1, seq_len=12)
    batch["attention_mask"][0, 8:] = 0
    other = {k: v.clone() for k, v in batch.items()}
    other["input_ids"][0, 8:] = 5  # different junk in the padding
    with torch.no_grad():
        a = model(**batch).last_hidden_state[0, :8]
        b = model(**other).last_hidden_state[0, :8]
    assert torch.allclose(a, b, atol=1e-6)


def test_self_mask_zeroes_the_diagonal(tiny_config):
    model = minibert.BertModel(tiny_config.replace(mask_self_attention=True)).eval()
    with torch.no_grad():
        out = model(torch.randint(1, 100, (2, 9)), output_attentions=True)
    for weights in out.attentions:
        assert weights.diagonal(dim1=-2, dim2=-1).abs().max() < 1e-6


def test_sinusoidal_positions_are_fixed(tiny_config):
    model = minibert.BertModel(tiny_config.replace(position_embedding_type="sinusoidal"))
    table = model.embeddings.position_embeddings.weight
    assert not table.requires_grad
    assert torch.allclose(table[0, 1::2], torch.ones(tiny_config.hidden_size // 2))  # cos(0) = 1
