"""Head-pattern scores on hand-made attention maps, value norms against a direct
computation, and the head view's HTML: self-contained and carrying the weights."""

import json
import math
import re

import pytest
import torch

import minibert
from conftest import padded_batch
from minibert import head_view

CLS, SEP, WORD = head_view.CLS_ID, head_view.SEP_ID, 2000


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
    scores = head_view.pattern_scores([weights], ids, mask)
    assert scores["previous token"].item() == pytest.approx(1.0)
    assert scores["next token"].item() == pytest.approx(0.0)
    assert scores["broad"].item() == pytest.approx(0.0, abs=1e-6)
    assert set(scores) == set(head_view.PATTERNS)
    assert scores["[CLS]"].shape == (1, 1)  # (layers, heads)


def test_next_token_and_special_tokens():
    ids, mask = one_sentence()
    T = ids.shape[1]
    nxt = rows_to([1, 2, 3, 4, 4, 0, 0], T)  # [SEP] has no next token: it looks at itself
    to_cls = rows_to([0] * T, T)
    to_sep = rows_to([4] * T, T)
    scores = head_view.pattern_scores([nxt, to_cls, to_sep], ids, mask)
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
    scores = head_view.pattern_scores([weights], ids, mask)
    assert scores["broad"][0].tolist() == pytest.approx([1.0, 1.0])
    assert scores["[CLS]"][0].tolist() == pytest.approx([0.25, 0.25])
    assert scores["previous token"][0].tolist() == pytest.approx([0.25, 0.25])


def test_best_heads_finds_the_argmax():
    grid = torch.zeros(3, 4)
    grid[2, 1] = 0.9
    best = head_view.best_heads({"[SEP]": grid})
    assert best["[SEP]"][:2] == (2, 1) and best["[SEP]"][2] == pytest.approx(0.9)


def test_value_norms_rebuild_the_attention_output(tiny_config):
    """sum_j a_ij W_O^h v_j^h over heads, plus the output bias, is the attention block's
    dense output: the norms are of the right vectors."""
    torch.manual_seed(0)
    model = minibert.BertModel(tiny_config).eval()
    batch = padded_batch(tiny_config)
    norms = head_view.value_norms(model, batch)
    assert len(norms) == tiny_config.num_hidden_layers
    B, T = batch["input_ids"].shape
    assert norms[0].shape == (B, tiny_config.num_attention_heads, T)
    with torch.no_grad():
        out = model(**batch, output_attentions=True, output_hidden_states=True)
        layer = model.encoder.layer[0]
        _, _, v = layer.attention.self.project(out.hidden_states[0])
        v = layer.attention.self.split_heads(v)  # (B, nh, T, hs)
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
    [shares] = head_view.norm_weighted([weights], [norms])
    assert shares[0, 0, 0].tolist() == pytest.approx([0.25, 0.75])
    assert torch.allclose(shares.sum(-1), torch.ones(1, 1, 2))


@pytest.fixture
def html_and_inputs():
    tokens = [["[CLS]", "a", "</script>", "[SEP]"], ["[CLS]", "b", "[SEP]"]]
    T, nh, L = 4, 3, 2
    g = torch.Generator().manual_seed(0)
    attentions = [torch.rand(2, nh, T, T, generator=g).softmax(-1) for _ in range(L)]
    return head_view.head_view_html(tokens, attentions, layer=1, head=2), tokens, attentions


def test_head_view_is_self_contained(html_and_inputs):
    html, _, _ = html_and_inputs
    assert "http" not in html  # no CDN, no external script or style
    assert not re.search(r"<script[^>]*\bsrc=", html)
    assert "document.currentScript" in html
    assert html.count("<script") == html.count("</script>") == 1  # the token was escaped
    assert 'data-layer="1"' in html and 'data-head="2"' in html


def test_head_view_embeds_each_sentence_cut_to_its_tokens(html_and_inputs):
    html, tokens, attentions = html_and_inputs
    data = json.loads(re.search(r"var data = (\[.*?\]);\n", html, re.S).group(1))
    assert [s["tokens"] for s in data] == tokens
    second = data[1]["weights"]  # [layer][head][query][key], 3 real tokens
    assert len(second) == 2 and len(second[0]) == 3 and len(second[0][0]) == 3
    assert second[1][2][0][1] == pytest.approx(attentions[1][1, 2, 0, 1].item(), abs=5e-4)
    assert math.isclose(sum(data[0]["weights"][0][0][0]), 1.0, abs_tol=5e-3)
