"""The head view's HTML: self-contained and carrying the weights."""

import json
import math
import re

import matplotlib.pyplot as plt
import pytest
import torch

from minibert import viz


@pytest.fixture
def html_and_inputs():
    tokens = [["[CLS]", "a", "</script>", "[SEP]"], ["[CLS]", "b", "[SEP]"]]
    T, nh, L = 4, 3, 2
    g = torch.Generator().manual_seed(0)
    attentions = [torch.rand(2, nh, T, T, generator=g).softmax(-1) for _ in range(L)]
    return viz.head_view_html(tokens, attentions, layer=1, head=2), tokens, attentions


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


def test_paired_seeds_joins_each_seed_and_names_the_verdict():
    from minibert.measure.comparison import compare

    results = [compare([0.9, 0.8, 0.85], [0.6, 0.62, 0.58], claim="c", metric="m",
                       seeds=(3, 4, 5), names=("with", "without")),
               compare([0.5, 0.52, 0.5], [0.5, 0.5, 0.51], claim="c", metric="m",
                       seeds=(3, 4, 5), margin=0.05)]
    fig, ax = plt.subplots()
    viz.paired_seeds(ax, results, ylabel="accuracy")
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("seed 4") == 2 and "with better" in texts
    assert "equivalent within ±0.05" in texts
    assert len(ax.lines) == 2 * (3 + 1)  # a line per seed and the means, per comparison
    plt.close(fig)
