"""The head view's HTML: self-contained and carrying the weights; the paired-seeds
figure, the claims block, and the moving average the notebooks share."""

import json
import math
import re

import matplotlib.pyplot as plt
import numpy as np
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


def test_paired_seeds_joins_each_seed_and_names_the_outcome():
    from minibert.measure import comparison

    win = comparison.superiority("win", "with", "without", metric="m", finding=True)
    tie = comparison.equivalence("tie", "A", "B", metric="m", margin=0.05, finding=False)
    results = [win.test([0.9, 0.8, 0.85], [0.6, 0.62, 0.58], seeds=(3, 4, 5)),
               tie.test([0.5, 0.6, 0.4], [0.5, 0.5, 0.5], seeds=(3, 4, 5))]
    fig, ax = plt.subplots()
    viz.paired_seeds(ax, results, ylabel="accuracy")
    texts = [t.get_text() for t in ax.texts]
    assert texts.count("seed 4") == 2 and "supported" in texts and "inconclusive" in texts
    assert len(ax.lines) == 2 * (3 + 1)  # a line per seed and the means, per comparison
    plt.close(fig)


def test_the_tiny_models_block_leads_with_the_headline_and_collapses_the_rest():
    from minibert.measure import comparison

    says = {"supported": "A helps, by {mean}.", "contradicted": "A hurts.",
            "inconclusive": "Too close to call."}
    pilot = {"seeds": [1000, 1001, 1002, 1003], "gaps": [0.2, 0.3, 0.25, 0.28],
             "seeds_needed": 3}
    headline = comparison.superiority("gain", "with", "without", metric="accuracy",
                                      finding=True, headline=True, pilot=pilot, says=says)
    side = comparison.superiority("side", "A", "B", metric="loss", finding=False,
                                  higher_is_better=False)
    block = viz.what_the_tiny_models_showed(
        [headline.test([0.9, 0.8, 0.85], [0.6, 0.62, 0.58], seeds=(0, 1, 2)),
         side.test([1.0, 1.2, 1.1], [1.1, 1.3, 1.15], seeds=(0, 1, 2))])
    shown = block._repr_html_()
    assert shown.index('id="claim-gain"') < shown.index("<details>") < shown.index(
        '<tr id="claim-side">'), "the headline first, the other claims collapsed"
    assert "with scored 0.25 higher than without" in shown and "A helps, by 0.25." in shown
    assert "data:image/png" in shown and "Pilot, on seeds 1000-1003" in shown
    assert repr(block).splitlines()[1].startswith(
        "observation (superiority): A better than B, on loss: supported, A lower than B by 0.0833")


def test_the_headline_figure_draws_the_margin_in_the_metrics_units():
    from minibert.measure import comparison

    claim = comparison.non_inferiority("kv", "K = V", "separate", metric="accuracy",
                                       margin=0.03, finding=False)
    result = claim.test([0.5, 0.49, 0.52, 0.5], [0.51, 0.5, 0.51, 0.52], seeds=(0, 1, 2, 3))
    fig = viz.headline_figure(result)
    gap_axes = fig.axes[1]
    assert [line.get_ydata()[0] for line in gap_axes.lines if line.get_linestyle() == "--"
            ] == [-0.03]
    plt.close(fig)


def test_long_text_figures_draw_a_bar_per_span_seed_and_window():
    fig, ax = plt.subplots()
    kept = {"head": [(0, 30)], "windows": [(0, 30), (24, 54), (48, 60)]}
    viz.strategy_spans(ax, kept, (40, 46), 60)
    assert len(ax.patches) == 1 + 3 + 1  # a bar per span, the evidence's band
    assert [t.get_text() for t in ax.get_yticklabels()] == ["head", "windows"]
    plt.close(fig)

    fig, ax = plt.subplots()
    accuracy = {"head": np.full((3, 2), 0.9), "tail": np.full((3, 2), 0.5)}
    viz.position_accuracy_bars(ax, accuracy, ["beginning", "end"], chance=0.5)
    assert len(ax.patches) == 2 * 2  # a bar per strategy and position
    assert len(ax.collections) == 2 * 3  # a row of dots per strategy and seed
    assert ax.patches[0].get_height() == pytest.approx(0.9)
    plt.close(fig)

    fig = viz.window_votes([1.0, -0.5, 2.0], [False, False, True],
                           {"mean": 0.83, "max": 2.0}, title="one document")
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["w0", "w1", "w2", "mean",
                                                            "max"]
    outlined = [p.get_edgecolor()[:3] == (1.0, 0.0, 0.0) for p in ax.patches]
    assert outlined == [False, False, True, False, False]  # the evidence window only
    plt.close(fig)
