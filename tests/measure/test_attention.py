"""Attention, measured: the arithmetic of one layer against theory and autograd, the maps and
scores read from a model, head-pattern scores on hand-made maps, and rewired [MASK] attention."""

import math

import pytest
import torch

import minibert
from helpers import padded_batch
from minibert.measure import attention
from minibert.model import bert
from minibert.model.layers import BertSelfAttention
from minibert.text import language


def test_dot_product_variance_is_d_k():
    g = torch.Generator().manual_seed(0)
    for d_k in (4, 64):
        assert attention.dot_product_variance(d_k, generator=g) == pytest.approx(d_k, rel=0.05)


def test_softmax_jacobian_matches_autograd():
    scores = torch.randn(5, dtype=torch.float64)
    expected = torch.autograd.functional.jacobian(lambda s: s.softmax(-1), scores)
    torch.testing.assert_close(attention.softmax_jacobian(scores), expected)


def test_scaling_keeps_the_softmax_alive_and_no_scaling_saturates_it():
    g = torch.Generator().manual_seed(0)
    unscaled = [attention.softmax_saturation(d, scaled=False, generator=g) for d in (4, 256)]
    scaled = [attention.softmax_saturation(d, scaled=True, generator=g) for d in (4, 256)]
    assert unscaled[1]["max_prob"] > 0.8 > unscaled[0]["max_prob"]
    assert unscaled[1]["gradient_norm"] < unscaled[0]["gradient_norm"] / 2
    assert scaled[1]["max_prob"] == pytest.approx(scaled[0]["max_prob"], rel=0.2)
    assert scaled[1]["score_std"] == pytest.approx(1.0, rel=0.1)
    assert unscaled[1]["score_std"] == pytest.approx(math.sqrt(256), rel=0.1)


def test_head_by_head_refuses_shared_projections(tiny_config):
    layer = BertSelfAttention(tiny_config.replace(qkv_sharing="kv"))
    with pytest.raises(ValueError, match="separate"):
        attention.attention_head_by_head(layer, torch.zeros(1, 3, tiny_config.hidden_size))


@pytest.fixture(scope="module")
def model_and_batch():
    tokenizer = language.corpus_tokenizer()
    torch.manual_seed(0)
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, num_attention_heads=4)
    model = minibert.BertForPreTraining(config).eval()
    return model, attention.masked_corpus_batch(num_documents=8, seed=1)


def test_masked_batch_hides_exactly_the_labelled_tokens(model_and_batch):
    _, batch = model_and_batch
    mask_id = language.corpus_tokenizer().mask_id
    predicted = attention.predicted_positions(batch).bool()
    assert (batch["input_ids"][predicted] == mask_id).all()
    assert (batch["input_ids"][~predicted] != mask_id).all()
    share = predicted.sum() / (batch["attention_mask"].sum() - 3 * len(predicted))
    assert 0.1 < share < 0.25


def test_attention_rules_change_only_the_mask_rows(model_and_batch):
    model, batch = model_and_batch
    predicted = attention.predicted_positions(batch).bool()
    normal = attention.attention_maps(model, batch)[0]
    for rule in ("self_only", "no_self"):
        mask = attention.attention_rule_at_masks(batch, rule)
        ruled = attention.attention_maps(model, batch, mask)[0]  # (B, nh, T, T)
        diagonal = ruled.diagonal(dim1=-2, dim2=-1).transpose(1, 2)[predicted]  # (P, nh)
        expected = torch.ones_like(diagonal) if rule == "self_only" else torch.zeros_like(diagonal)
        torch.testing.assert_close(diagonal, expected)
        other_rows = ~predicted & batch["attention_mask"].bool()
        torch.testing.assert_close(ruled.transpose(1, 2)[other_rows],
                                   normal.transpose(1, 2)[other_rows])
    with pytest.raises(ValueError, match="rule"):
        attention.attention_rule_at_masks(batch, "others")


ATTENTION_VARIANTS = [
    {}, dict(use_qkv_projections=False), dict(identity_projections="qk"),
    dict(identity_projections="v"), dict(qkv_sharing="kv"), dict(qkv_sharing="qk"),
    dict(mask_self_attention=True), dict(scale_attention_scores=False),
    dict(attention_direction="causal"), dict(layer_norm_position="pre"),
    dict(layer_norm_position="pre", attention_direction="causal", qkv_sharing="kv"),
]


def _variant(tiny_config, changes, **more):
    """A freshly initialised encoder of the variant, with a padded batch and its mask."""
    torch.manual_seed(0)
    model = minibert.BertModel(tiny_config.replace(**changes, **more)).eval()
    with torch.no_grad():  # LayerNorms that are not the identity, so that skipping one shows
        for norm in (m for m in model.modules() if isinstance(m, torch.nn.LayerNorm)):
            norm.weight.uniform_(0.5, 1.5)
            norm.bias.normal_(0.0, 0.2)
    batch = padded_batch(model.config)
    mask = model.additive_mask(batch["attention_mask"], batch["input_ids"].shape[1],
                               torch.float32, torch.device("cpu"))  # (B, 1, 1|T, T)
    return model, batch, mask


@pytest.mark.parametrize("changes", ATTENTION_VARIANTS)
def test_scores_and_maps_are_the_models_own(tiny_config, changes):
    """The scores `attention_logits` reads, masked and put through the softmax, are the
    maps the model returns, layer by layer, for every way of computing attention."""
    model, batch, mask = _variant(tiny_config, changes)
    with torch.no_grad():
        own = model(**batch, output_attentions=True).attentions
    logits = attention.attention_logits(model, batch)
    maps = attention.attention_maps(model, batch)
    assert len(logits) == len(maps) == model.config.num_hidden_layers
    for scores, weights, expected in zip(logits, maps, own):
        torch.testing.assert_close(weights, expected)
        torch.testing.assert_close((scores + mask).softmax(-1), expected, atol=1e-5, rtol=0)


@pytest.mark.parametrize("changes", [c for c in ATTENTION_VARIANTS
                                     if "mask_self_attention" not in c])
def test_value_norms_are_what_one_token_adds(tiny_config, changes):
    """With one head and each token attending to itself alone, the first attention block's
    dense output at token i, less its bias, is W_O v_i: its length is `value_norms`'s.
    (A model that masks the diagonal cannot attend to itself alone: left out.)"""
    model, batch, _ = _variant(tiny_config, changes, num_attention_heads=1)
    dense = model.encoder.layer[0].attention.output.dense
    caught = []
    hook = dense.register_forward_hook(lambda _m, _args, out: caught.append(out))
    self_only = attention.self_only_mask(batch["attention_mask"])  # (B, T, T)
    with torch.no_grad():
        model(**{**batch, "attention_mask": self_only})
    hook.remove()
    expected = (caught[0] - dense.bias).norm(dim=-1)  # (B, T)
    norms = attention.value_norms(model, batch)[0][:, 0]  # (B, T): layer 0, its one head
    real = batch["attention_mask"].bool()
    torch.testing.assert_close(norms[real], expected[real], atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("changes", [c for c in ATTENTION_VARIANTS if not any(
    key in c for key in ("use_qkv_projections", "identity_projections", "qkv_sharing"))])
def test_head_by_head_loop_is_each_layer(tiny_config, changes):
    """The slow loop over heads gives each layer's attention output in the model itself."""
    model, batch, mask = _variant(tiny_config, changes, num_attention_heads=4)
    with torch.no_grad():
        hidden = model(**batch, output_hidden_states=True).hidden_states
        for layer, x in zip(model.encoder.layer, hidden[:-1]):  # each layer's input
            x = layer.attention_input(x)
            fast, _ = layer.attention.self(x, mask, need_weights=False)
            looped = attention.attention_head_by_head(layer.attention.self, x, mask)
            torch.testing.assert_close(looped, fast, atol=1e-6, rtol=1e-5)


def test_mlm_accuracy_counts_the_hidden_tokens(model_and_batch):
    model, batch = model_and_batch
    accuracy = attention.mlm_accuracy(model, batch)
    labels = batch["labels"]
    with torch.no_grad():
        logits = model(**{k: batch[k] for k in bert.INPUT_NAMES}).prediction_logits
    expected = (logits.argmax(-1)[labels != -100] == labels[labels != -100]).float().mean()
    assert accuracy == pytest.approx(float(expected))


CLS, SEP, WORD = attention.CLS_ID, attention.SEP_ID, 2000


def one_sentence(n_real=5, n_pad=2):
    """ids [CLS] w w w [SEP] [PAD] [PAD] and its mask, as a batch of one: (1, T) each."""
    ids = [CLS] + [WORD] * (n_real - 2) + [SEP] + [0] * n_pad
    mask = [1] * n_real + [0] * n_pad
    return torch.tensor([ids]), torch.tensor([mask])


def rows_to(targets, T, nh=1):
    """A (1, nh, T, T) map where query i puts all its weight on key targets[i]."""
    weights = torch.zeros(1, nh, T, T)
    for i, j in enumerate(targets):
        weights[0, :, i, j] = 1.0
    return weights


def test_previous_token_head_scores_one():
    ids, mask = one_sentence()
    T = ids.shape[1]
    weights = rows_to([0, 0, 1, 2, 3, 0, 0], T)  # each real token looks one step back
    scores = attention.pattern_scores([weights], ids, mask)
    assert scores["previous token"].item() == pytest.approx(1.0)
    assert scores["next token"].item() == pytest.approx(0.0)
    assert scores["broad"].item() == pytest.approx(0.0, abs=1e-6)
    assert set(scores) == set(attention.PATTERNS)
    assert scores["[CLS]"].shape == (1, 1)  # (layers, heads)


def test_next_token_and_special_tokens():
    ids, mask = one_sentence()
    T = ids.shape[1]
    nxt = rows_to([1, 2, 3, 4, 4, 0, 0], T)  # [SEP] has no next token: it looks at itself
    to_cls = rows_to([0] * T, T)
    to_sep = rows_to([4] * T, T)
    scores = attention.pattern_scores([nxt, to_cls, to_sep], ids, mask)
    assert scores["next token"][0].item() == pytest.approx(1.0)  # 4 of 4 pairs
    assert scores["[CLS]"][:, 0].tolist() == pytest.approx([0.0, 1.0, 0.0])
    assert scores["[SEP]"][:, 0].tolist() == pytest.approx([0.4, 0.0, 1.0])  # 2 of 5 rows


def test_uniform_attention_is_fully_broad_and_padding_is_ignored():
    ids, mask = one_sentence(n_real=4, n_pad=3)
    T = ids.shape[1]
    weights = torch.zeros(1, 2, T, T)
    weights[..., :4] = 0.25  # uniform over the 4 real tokens
    weights[..., 4:, :] = 0.0
    weights[0, :, 4:, 4:] = 1 / 3  # padded queries: garbage that must not count
    scores = attention.pattern_scores([weights], ids, mask)
    assert scores["broad"][0].tolist() == pytest.approx([1.0, 1.0])
    assert scores["[CLS]"][0].tolist() == pytest.approx([0.25, 0.25])
    assert scores["previous token"][0].tolist() == pytest.approx([0.25, 0.25])


def test_best_heads_finds_the_argmax():
    grid = torch.zeros(3, 4)
    grid[2, 1] = 0.9
    best = attention.best_heads({"[SEP]": grid})
    assert best["[SEP]"][:2] == (2, 1) and best["[SEP]"][2] == pytest.approx(0.9)


def test_value_norms_rebuild_the_attention_output(tiny_config):
    """sum_j a_ij W_O^h v_j^h over heads, plus the output bias, is the attention block's
    dense output: the norms are of the right vectors."""
    torch.manual_seed(0)
    model = minibert.BertModel(tiny_config).eval()
    batch = padded_batch(tiny_config)
    norms = attention.value_norms(model, batch)
    assert len(norms) == tiny_config.num_hidden_layers
    B, T = batch["input_ids"].shape
    assert norms[0].shape == (B, tiny_config.num_attention_heads, T)
    with torch.no_grad():
        out = model(**batch, output_attentions=True, output_hidden_states=True)
        layer = model.encoder.layer[0]
        _, _, v = layer.attention.self.heads(out.hidden_states[0])  # (B, nh, T, hs)
        context = (out.attentions[0] @ v).transpose(1, 2).reshape(B, T, -1)
        expected = layer.attention.output.dense(context)  # (B, T, H)
        nh, hs = v.shape[1], v.shape[3]
        w_out = layer.attention.output.dense.weight.view(-1, nh, hs)
        pieces = torch.einsum("bnts,hns->bnth", v, w_out)  # (B, nh, T, H)
        rebuilt = torch.einsum("bnij,bnjh->bih", out.attentions[0], pieces)
        rebuilt = rebuilt + layer.attention.output.dense.bias
    assert torch.allclose(rebuilt, expected, atol=1e-5)
    assert torch.allclose(pieces.norm(dim=-1), norms[0], atol=1e-5)


def test_norm_weighted_rows_sum_to_one_and_favour_long_vectors():
    weights = torch.full((1, 1, 2, 2), 0.5)
    norms = torch.tensor([[[1.0, 3.0]]])  # (B, nh, T)
    [shares] = attention.norm_weighted([weights], [norms])
    assert shares[0, 0, 0].tolist() == pytest.approx([0.25, 0.75])
    assert torch.allclose(shares.sum(-1), torch.ones(1, 1, 2))


def test_initial_score_spread_follows_the_formula_and_the_width():
    tiny = attention.initial_score_spread(minibert.preset("tiny"))
    base = attention.initial_score_spread(minibert.preset("base"))
    for spread in (tiny, base):
        assert abs(spread["measured"] / spread["formula"] - 1) < 0.1
    assert tiny["measured"] < 0.5 < 1 < base["measured"]


def test_initial_saturation_is_the_softmax_of_the_measured_scores():
    """The tiny model's near-zero scores give nearly uniform rows (1/32 over 32 keys);
    dividing scores by sqrt(d_k) raises the softmax's temperature, so the largest weight
    can only fall; a uniform row of T keys has a Jacobian of norm sqrt(1/T - 1/T^2)."""
    tiny = attention.initial_score_spread(minibert.preset("tiny", num_attention_heads=1))
    assert tiny["max_weight"]["unscaled"] < 2 / 32
    assert tiny["jacobian"]["scaled"] == pytest.approx((1 / 32 - 1 / 32 ** 2) ** 0.5, rel=0.05)
    for spread in (tiny, attention.initial_score_spread(minibert.preset("base"))):
        assert spread["max_weight"]["scaled"] < spread["max_weight"]["unscaled"]


def test_initial_score_spread_leaves_the_random_state_alone():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    attention.initial_score_spread(minibert.preset("tiny"))
    assert torch.equal(torch.rand(3), expected)


def test_self_only_mask_cuts_a_token_off_from_the_others(tiny_config):
    """Under the mask every row of every map is one-hot on the diagonal, and changing one
    token changes no other token's vector in any layer."""
    torch.manual_seed(0)
    model = minibert.BertModel(tiny_config).eval()
    batch = padded_batch(tiny_config)
    mask = attention.self_only_mask(batch["attention_mask"])
    B, T = batch["input_ids"].shape
    assert mask.shape == (B, T, T) and mask.dtype == batch["attention_mask"].dtype
    for weights in attention.attention_maps(model, batch, mask):  # (B, nh, T, T)
        torch.testing.assert_close(weights.diagonal(dim1=-2, dim2=-1),
                                   torch.ones(B, weights.shape[1], T))
    changed = {**batch, "input_ids": batch["input_ids"].clone()}
    changed["input_ids"][:, 3] = (changed["input_ids"][:, 3] + 1) % tiny_config.vocab_size
    others = torch.arange(T) != 3
    with torch.no_grad():
        before, after = (model(**{**b, "attention_mask": mask},
                               output_hidden_states=True).hidden_states
                         for b in (batch, changed))
    for h, h_changed in zip(before, after):  # (B, T, H)
        torch.testing.assert_close(h[:, others], h_changed[:, others])
        assert not torch.allclose(h[:, 3], h_changed[:, 3])


def test_attention_share_split_on_hand_made_maps():
    ids, mask = one_sentence()  # [CLS] w w w [SEP] [PAD] [PAD]
    T = ids.shape[1]
    itself = rows_to(range(T), T, nh=2)
    uniform = torch.zeros(1, 2, T, T)
    uniform[..., :5] = 0.2  # even over the 5 real tokens
    share = attention.attention_share_split([itself, uniform], ids, mask)
    assert share["itself"] == pytest.approx([1.0, 0.2])
    assert share["other words"] == pytest.approx([0.0, (3 * 2 / 5 + 2 * 3 / 5) / 5])
    # [CLS] and [SEP] looking at themselves count as special: 2 of 5 rows
    assert share["[CLS] and [SEP]"] == pytest.approx([0.4, 0.4])


def test_even_segment_share_counts_only_real_tokens_of_the_segment():
    batch = {"token_type_ids": torch.tensor([[0, 0, 0, 1, 1, 1, 1, 1, 0, 0]]),
             "attention_mask": torch.tensor([[1] * 8 + [0] * 2])}  # 3 + 5 real, 2 padding
    assert attention.even_segment_share(batch) == pytest.approx((3 * 3 / 8 + 5 * 5 / 8) / 8)


def test_uniform_attention_keeps_the_even_share_of_its_segment(tiny_config):
    """With W_Q = 0 every score is 0 and each row spreads evenly over the real tokens:
    every head's own-segment share is then exactly the even share."""
    torch.manual_seed(0)
    model = minibert.BertModel(tiny_config).eval()
    batch = padded_batch(tiny_config)
    trained_like = attention.own_segment_shares(model, batch)
    for layer in model.encoder.layer:
        torch.nn.init.zeros_(layer.attention.self.query.weight)
        torch.nn.init.zeros_(layer.attention.self.query.bias)
    shares = attention.own_segment_shares(model, batch)
    assert set(shares) == {(layer, head) for layer in range(tiny_config.num_hidden_layers)
                           for head in range(tiny_config.num_attention_heads)}
    even = attention.even_segment_share(batch)
    assert shares == pytest.approx(dict.fromkeys(shares, even), abs=1e-6)
    assert trained_like != pytest.approx(shares, abs=1e-3)  # the random model's differ
