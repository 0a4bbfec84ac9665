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
    dict(normalization="rmsnorm"), dict(normalization="batchnorm"),
    dict(normalization="none"), dict(normalization="rmsnorm", layer_norm_position="pre"),
    dict(normalization="batchnorm", layer_norm_position="pre"), dict(residual=False),
    dict(residual=False, layer_norm_position="pre"), dict(intermediate_size=0),
    dict(intermediate_size=0, layer_norm_position="pre"),
    dict(position_embedding_type="rotary"), dict(position_embedding_type="alibi"),
    dict(scale_word_embeddings=True),
    dict(attention_score="additive"), dict(attention_score="additive", num_attention_heads=1),
    dict(mask_self_attention=True), dict(mask_self_attention=True, residual=False),
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


def test_rmsnorm_matches_its_formula(tiny_config):
    """RMSNorm: x / sqrt(mean(x²) + eps) * g, no mean subtracted, no bias."""
    config = tiny_config.replace(normalization="rmsnorm")
    norm = minibert.model.layers.norm_layer(config)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)  # a gain that is not all ones
    x = torch.randn(2, 5, config.hidden_size) * 3 + 1  # (B, T, H), mean far from 0
    eps = config.layer_norm_eps
    expected = x / torch.sqrt((x ** 2).mean(-1, keepdim=True) + eps) * norm.weight
    torch.testing.assert_close(norm(x), expected)
    assert sum(p.numel() for p in norm.parameters()) == config.hidden_size


@pytest.mark.parametrize("kind, module", [("layernorm", torch.nn.LayerNorm),
                                          ("rmsnorm", torch.nn.RMSNorm),
                                          ("batchnorm", torch.nn.BatchNorm1d),
                                          ("none", torch.nn.Identity)])
def test_one_switch_sets_every_norm_but_the_embeddings_and_head(tiny_config, kind, module):
    model = minibert.BertForPreTraining(tiny_config.replace(
        normalization=kind, layer_norm_position="pre"))
    encoder = model.bert.encoder
    norms = [encoder.LayerNorm] + [norm for layer in encoder.layer for norm in (
        layer.attention.output.LayerNorm, layer.output.LayerNorm)]
    assert all(isinstance(norm, module) for norm in norms)
    assert isinstance(model.bert.embeddings.LayerNorm, torch.nn.LayerNorm)
    assert isinstance(model.cls.predictions.transform.LayerNorm, torch.nn.LayerNorm)


def _sentence_alone_and_in_company(model, config, pad_to=None):
    """Row 0 of a batch: run alone, then with two batch-mates (and padding to `pad_to`)."""
    batch = padded_batch(config, batch=3, seq_len=11)
    alone = {k: v[:1] for k, v in batch.items()}
    if pad_to is not None:  # the same sentence, padded further: its real positions compared
        company = {k: torch.cat([v[:1], torch.zeros(1, pad_to - v.shape[1], dtype=v.dtype)],
                                dim=1) for k, v in alone.items()}
    else:
        company = batch
    with torch.no_grad():
        a = model(**alone).last_hidden_state[0]
        b = model(**company).last_hidden_state[0, :a.shape[0]]
    return a, b


def test_batchnorm_depends_on_the_batch_only_in_train_mode(tiny_config):
    config = tiny_config.replace(normalization="batchnorm", hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0)  # BatchNorm alone
    model = minibert.BertModel(config).train()
    for pad_to in (None, 20):  # batch-mates; then the same sentence with 9 padding tokens
        a, b = _sentence_alone_and_in_company(model, config, pad_to)
        assert (a - b).abs().max() > 1e-3, pad_to
    model.eval()  # the running statistics: the batch no longer matters
    for pad_to in (None, 20):
        a, b = _sentence_alone_and_in_company(model, config, pad_to)
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def test_layernorm_ignores_the_batch_in_train_mode(tiny_config):
    """The control: LayerNorm normalises each token alone."""
    config = tiny_config.replace(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = minibert.BertModel(config).train()
    for pad_to in (None, 20):
        a, b = _sentence_alone_and_in_company(model, config, pad_to)
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("position", ["post", "pre"])
def test_no_residual_changes_the_output_with_the_same_weights(tiny_config, position):
    config = tiny_config.replace(layer_norm_position=position)
    model = minibert.BertModel(config).eval()
    plain = minibert.BertModel(config.replace(residual=False)).eval()
    plain.load_state_dict(model.state_dict())  # same parameters: only the sum differs
    ids = torch.randint(1, config.vocab_size, (2, 9))
    with torch.no_grad():
        with_skip, without = model(ids).last_hidden_state, plain(ids).last_hidden_state
    assert (with_skip - without).abs().max() > 1e-2


def test_normalization_and_residual_are_checked(tiny_config):
    with pytest.raises(ValueError, match="normalization"):
        tiny_config.replace(normalization="groupnorm")
    with pytest.raises(ValueError, match="residual"):
        tiny_config.replace(residual="yes")


def test_late_switches_at_their_default_stay_out_of_config_json(tiny_config):
    """So a model cached before the switches existed keeps its key (its config.json)."""
    assert "normalization" not in tiny_config.to_dict()
    assert "residual" not in tiny_config.to_dict()
    changed = tiny_config.replace(normalization="rmsnorm", residual=False)
    for config in (changed, tiny_config):
        back = minibert.BertConfig.from_dict(config.to_dict())
        assert (back.normalization, back.residual) == (config.normalization, config.residual)


@pytest.mark.parametrize("position", ["post", "pre"])
def test_no_feed_forward_layer_is_its_attention_sublayer(tiny_config, position):
    """intermediate_size=0: no feed-forward parameters, and each layer's output is exactly
    its attention sublayer's (residual sum and norm included), with the same weights."""
    config = tiny_config.replace(layer_norm_position=position)
    model = minibert.BertModel(config).eval()
    bare = minibert.BertModel(config.replace(intermediate_size=0)).eval()
    missing = set(model.state_dict()) - set(bare.state_dict())
    assert missing and all(".intermediate." in n or
                           (".output." in n and ".attention." not in n) for n in missing)
    assert not set(bare.state_dict()) - set(model.state_dict())
    assert not any(".intermediate." in n for n, _ in bare.named_parameters())
    bare.load_state_dict(model.state_dict(), strict=False)  # the shared weights
    ids = torch.randint(1, config.vocab_size, (2, 9))
    with torch.no_grad():
        x = bare.embeddings(ids, torch.zeros_like(ids))
        for layer in bare.encoder.layer:
            context, _ = layer.attention.self(layer.attention_input(x), None, False)
            x = layer.attention.output(context, residual=x)
        torch.testing.assert_close(bare(ids).last_hidden_state, bare.encoder.LayerNorm(x))
        assert (bare(ids).last_hidden_state - model(ids).last_hidden_state).abs().max() > 1e-2


def test_intermediate_size_is_checked(tiny_config):
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="intermediate_size"):
            tiny_config.replace(intermediate_size=bad)
    assert tiny_config.replace(intermediate_size=0).to_dict()["intermediate_size"] == 0


def test_rotary_matches_complex_multiplication():
    """RoPE: feature pair (2i, 2i+1) at position p is multiplied, as a complex number, by
    e^(i p theta_i), theta_i = 10000^(-2i/d)."""
    layers = minibert.model.layers
    d, T = 8, 6
    x = torch.randn(2, 3, T, d)  # (B, nh, T, hs)
    positions = torch.arange(T)
    theta = 10000.0 ** (-torch.arange(0, d, 2).double() / d)  # (d/2,)
    turn = torch.polar(torch.ones(T, d // 2, dtype=torch.float64),
                       positions.double()[:, None] * theta)  # (T, d/2), e^(i p theta)
    pairs = torch.view_as_complex(x.double().reshape(2, 3, T, d // 2, 2).contiguous())
    expected = torch.view_as_real(pairs * turn).reshape(2, 3, T, d).float()
    got = layers.rotate_pairs(x, layers.rotary_angles(positions, d))
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(got.norm(dim=-1), x.norm(dim=-1))  # a rotation


def test_rotary_scores_depend_only_on_the_offset(tiny_config):
    """Shifting every position by the same amount leaves RoPE's scores unchanged."""
    layer = minibert.model.layers.BertSelfAttention(
        tiny_config.replace(position_embedding_type="rotary"))
    x = torch.randn(2, 7, tiny_config.hidden_size)  # (B, T, H)
    at_zero = layer.scores(x)  # positions 0..6
    shifted = layer.scores(x, torch.arange(7) + 40)  # positions 40..46
    torch.testing.assert_close(shifted, at_zero, atol=1e-4, rtol=1e-4)
    plain = minibert.model.layers.BertSelfAttention(tiny_config)
    plain.load_state_dict(layer.state_dict())
    assert (plain.scores(x) - at_zero).abs().max() > 1e-3  # the rotation did something


def test_alibi_bias_matches_its_formula(tiny_config):
    config = tiny_config.replace(position_embedding_type="alibi", num_attention_heads=4)
    layer = minibert.model.layers.BertSelfAttention(config)
    slopes = torch.tensor([2 ** -2, 2 ** -4, 2 ** -6, 2 ** -8])  # 2^(-8h/H), H = 4
    torch.testing.assert_close(minibert.model.layers.alibi_slopes(4), slopes)
    x = torch.randn(2, 5, config.hidden_size)  # (B, T, H)
    q, k, _ = layer.heads(x)
    i = torch.arange(5)
    bias = -slopes[:, None, None] * (i[:, None] - i[None, :]).abs()  # (nh, T, T)
    torch.testing.assert_close(layer.scores(x), q @ k.transpose(-2, -1) * layer.scale + bias)


def test_rotary_and_alibi_hold_no_position_table(tiny_config):
    """Neither adds a position vector. Symmetric ALiBi sees only |i - j|, so reading a
    sentence backwards gives the same outputs backwards; RoPE tells left from right."""
    ids = torch.randint(1, 100, (1, 6))
    for kind in ("rotary", "alibi"):  # weights large enough for q.k to matter
        model = minibert.BertModel(tiny_config.replace(position_embedding_type=kind,
                                                       initializer_range=0.3)).eval()
        assert model.embeddings.position_embeddings is None
        with torch.no_grad():
            out = model(ids).last_hidden_state  # (1, T, H)
            backwards = model(ids.flip(1)).last_hidden_state.flip(1)
        mirrored = (out - backwards).abs().max()
        assert mirrored < 1e-5 if kind == "alibi" else mirrored > 1e-3


@pytest.mark.parametrize("kind", ["rotary", "alibi"])
def test_rotary_and_alibi_models_load_as_saved(tiny_config, kind, tmp_path):
    model = minibert.BertForPreTraining(
        tiny_config.replace(position_embedding_type=kind)).eval()
    model.save_pretrained(tmp_path)
    loaded = minibert.BertForPreTraining.from_pretrained(tmp_path).eval()
    batch = padded_batch(model.config)
    with torch.no_grad():
        torch.testing.assert_close(loaded(**batch).prediction_logits,
                                   model(**batch).prediction_logits)


def test_scaled_word_embeddings(tiny_config):
    """scale_word_embeddings multiplies the word vectors alone by sqrt(hidden_size)."""
    torch.manual_seed(0)
    scaled = minibert.BertModel(tiny_config.replace(scale_word_embeddings=True)).eval()
    plain = minibert.BertModel(tiny_config).eval()
    plain.load_state_dict(scaled.state_dict())
    ids = torch.randint(1, 100, (2, 5))
    segments = torch.zeros_like(ids)
    embeddings = plain.embeddings
    summed = (embeddings.word_embeddings(ids) * tiny_config.hidden_size ** 0.5
              + embeddings.token_type_embeddings(segments)
              + embeddings.position_embeddings.weight[:5])
    with torch.no_grad():
        torch.testing.assert_close(scaled.embeddings(ids, segments),
                                   embeddings.LayerNorm(summed))
    assert "scale_word_embeddings" not in tiny_config.to_dict()
    assert scaled.config.to_dict()["scale_word_embeddings"] is True
    with pytest.raises(ValueError, match="scale_word_embeddings"):
        tiny_config.replace(scale_word_embeddings=1)


def test_additive_scores_match_bahdanau_formula(tiny_config):
    """score(q_i, k_j) = v_h · tanh(W_h q_i + U_h k_j), written as a plain loop."""
    torch.manual_seed(0)
    layer = minibert.BertModel(tiny_config.replace(attention_score="additive")
                               ).encoder.layer[0].attention.self
    x = torch.randn(3, 4, tiny_config.hidden_size)
    with torch.no_grad():
        q, k, _ = layer.heads(x)  # (B, nh, T, hs)
        scores = layer.score(q, k)  # (B, nh, T, T)
        W, U, v = layer.additive_query, layer.additive_key, layer.additive_vector
        for b in range(3):
            for h in range(layer.num_heads):
                for i in range(4):
                    for j in range(4):
                        ref = v[h] @ torch.tanh(W[h] @ q[b, h, i] + U[h] @ k[b, h, j])
                        torch.testing.assert_close(scores[b, h, i, j], ref)
    with pytest.raises(ValueError, match="additive scores need"):
        layer.score(q[:, 0], k[:, 0])  # no heads' axis


def test_attention_score_is_checked_and_late(tiny_config):
    with pytest.raises(ValueError, match="attention_score"):
        tiny_config.replace(attention_score="multiplicative")
    assert "attention_score" not in tiny_config.to_dict()
    additive = tiny_config.replace(attention_score="additive")
    assert minibert.BertConfig.from_dict(additive.to_dict()).attention_score == "additive"
    H, L, nh = tiny_config.hidden_size, tiny_config.num_hidden_layers, tiny_config.num_attention_heads
    hs = H // nh
    extra = minibert.BertModel(additive).num_parameters() - minibert.BertModel(
        tiny_config).num_parameters()
    assert extra == L * nh * (2 * hs * hs + hs)
