"""Part V's figures (chapter 41): the head view and a real model's heads, tokens and pairs."""

from __future__ import annotations

import json
from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch

# ----------------------------------------------------------------------------- head view

def attention_json(tokens: Sequence[Sequence[str]], attentions: Sequence[torch.Tensor],
                   decimals: int = 3) -> str:
    """The data the head view draws: for each sentence its tokens and its weights as
    nested lists [layer][head][query][key], cut to its real tokens and rounded."""
    sentences = []
    for b, words in enumerate(tokens):
        n = len(words)
        layers = [w[b, :, :n, :n].detach().cpu().float() for w in attentions]  # (nh, n, n)
        weights = [[[[round(x, decimals) for x in row] for row in head.tolist()]
                    for head in layer] for layer in layers]
        sentences.append({"tokens": list(words), "weights": weights})
    # "<" escaped so that no token can close the <script> element the data sits in.
    return json.dumps(sentences, separators=(",", ":")).replace("<", "\\u003c")


_SCRIPT = """
(function () {
  var root = document.currentScript.parentElement;
  var data = __DATA__;
  var pick = function (role) { return root.querySelector("[data-role='" + role + "']"); };
  var sentenceBox = pick("sentence"), layerBox = pick("layer"), headBox = pick("head");
  var links = pick("links"), map = pick("map"), note = pick("note");
  var rowHeight = 18, top = 24, cell = 14, hovered = null;
  function option(box, value, text) {
    var o = document.createElement("option"); o.value = value; o.textContent = text;
    box.appendChild(o);
  }
  data.forEach(function (s, i) {
    option(sentenceBox, i, (i + 1) + ": " + s.tokens.slice(1, 7).join(" ") + " ...");
  });
  for (var l = 0; l < data[0].weights.length; l++) { option(layerBox, l, l); }
  option(headBox, -1, "mean of all heads");
  for (var h = 0; h < data[0].weights[0].length; h++) { option(headBox, h, h); }
  layerBox.value = root.dataset.layer; headBox.value = root.dataset.head;
  function current() {  // the chosen (n, n) map: rows attend, columns are attended to
    var layer = data[+sentenceBox.value].weights[+layerBox.value], h = +headBox.value;
    if (h >= 0) { return layer[h]; }
    return layer[0].map(function (row, i) {
      return row.map(function (_, j) {
        var total = 0;
        layer.forEach(function (head) { total += head[i][j]; });
        return total / layer.length;
      });
    });
  }
  function colour(w) {  // white (0) to dark blue (1)
    var t = Math.min(1, Math.max(0, w));
    return "rgb(" + Math.round(255 - 225 * t) + "," + Math.round(255 - 175 * t) + ","
      + Math.round(255 - 75 * t) + ")";
  }
  function draw() {
    var tokens = data[+sentenceBox.value].tokens, weights = current(), n = tokens.length;
    links.height = top + n * rowHeight + 8;
    var ctx = links.getContext("2d"), left = 120, right = links.width - 120;
    ctx.fillStyle = "#fff"; ctx.fillRect(0, 0, links.width, links.height);
    ctx.font = "12px sans-serif"; ctx.textBaseline = "middle"; ctx.fillStyle = "#555";
    ctx.textAlign = "right"; ctx.fillText("attending", left - 6, 10);
    ctx.textAlign = "left"; ctx.fillText("attended to", right + 6, 10);
    for (var i = 0; i < n; i++) {
      if (hovered !== null && hovered !== i) { continue; }
      for (var j = 0; j < n; j++) {
        ctx.strokeStyle = "rgba(30, 80, 180, " + weights[i][j] + ")";
        ctx.lineWidth = 2; ctx.beginPath();
        ctx.moveTo(left, top + i * rowHeight); ctx.lineTo(right, top + j * rowHeight);
        ctx.stroke();
      }
    }
    for (var k = 0; k < n; k++) {
      ctx.fillStyle = hovered === k ? "#c00" : "#000";
      ctx.textAlign = "right"; ctx.fillText(tokens[k], left - 6, top + k * rowHeight);
      ctx.fillStyle = "#000";
      ctx.textAlign = "left"; ctx.fillText(tokens[k], right + 6, top + k * rowHeight);
    }
    map.width = n * cell + 2; map.height = n * cell + 2;
    var mctx = map.getContext("2d");
    mctx.fillStyle = "#fff"; mctx.fillRect(0, 0, map.width, map.height);
    mctx.strokeStyle = "#999"; mctx.strokeRect(0.5, 0.5, map.width - 1, map.height - 1);
    for (var r = 0; r < n; r++) {
      for (var c = 0; c < n; c++) {
        mctx.fillStyle = colour(weights[r][c]);
        mctx.fillRect(1 + c * cell, 1 + r * cell, cell - 1, cell - 1);
      }
    }
  }
  links.addEventListener("mousemove", function (event) {
    var box = links.getBoundingClientRect();
    var y = (event.clientY - box.top) * links.height / box.height;
    var i = Math.round((y - top) / rowHeight), n = data[+sentenceBox.value].tokens.length;
    var x = (event.clientX - box.left) * links.width / box.width;
    hovered = (i >= 0 && i < n && x < links.width / 2) ? i : null;
    draw();
  });
  links.addEventListener("mouseleave", function () { hovered = null; draw(); });
  map.addEventListener("mousemove", function (event) {
    var box = map.getBoundingClientRect(), tokens = data[+sentenceBox.value].tokens;
    var c = Math.floor((event.clientX - box.left) * map.width / box.width / cell);
    var r = Math.floor((event.clientY - box.top) * map.height / box.height / cell);
    if (r >= 0 && r < tokens.length && c >= 0 && c < tokens.length) {
      note.textContent = tokens[r] + " \\u2192 " + tokens[c] + ": "
        + current()[r][c].toFixed(3);
    }
  });
  [sentenceBox, layerBox, headBox].forEach(function (box) {
    box.addEventListener("change", function () { hovered = null; draw(); });
  });
  draw();
})();
"""


def head_view_html(tokens: Sequence[Sequence[str]], attentions: Sequence[torch.Tensor],
                   layer: int = 0, head: int = 0, decimals: int = 3) -> str:
    """A self-contained head view of the given sentences (no external script, no network).

    tokens: each sentence's real tokens; attentions: one (B, nh, T, T) tensor per layer for
    the same, right-padded, batch. The widget finds its elements through
    document.currentScript, so several head views can share a page."""
    data = attention_json(tokens, attentions, decimals)
    select = "margin-right:1em"
    return f"""<div class="minibert-head-view" data-layer="{int(layer)}" data-head="{int(head)}"
 style="font-family:sans-serif;margin:0.5em 0">
<div style="margin-bottom:0.4em">
<label style="{select}">sentence <select data-role="sentence"></select></label>
<label style="{select}">layer <select data-role="layer"></select></label>
<label style="{select}">head <select data-role="head"></select></label>
</div>
<div style="display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start">
<canvas data-role="links" width="420" height="100" style="max-width:100%"></canvas>
<div><canvas data-role="map" width="100" height="100"></canvas>
<div data-role="note" style="font-size:0.85em;color:#444;max-width:20em">
Point at a token on the left to see only its links; point at the map to read a weight
(row: attending token, column: attended-to token).</div></div>
</div>
<script>{_SCRIPT.replace("__DATA__", data)}</script>
</div>"""


# ------------------------------------------------------ chapter 41: a real model's heads

def special_token_shares(panels: Sequence[tuple[str, dict, float]]) -> plt.Figure:
    """Per layer, the mean attention on special tokens, one panel per input kind: each
    panel is (title, {token: (L,) shares}, the share one token gets under uniform
    attention)."""
    fig, axes = plt.subplots(1, len(panels), figsize=(11, 3.6), sharey=True,
                             layout="constrained", squeeze=False)
    for ax, (title, shares, one_token) in zip(axes[0], panels):
        for token, values in shares.items():
            ax.plot(range(len(values)), [float(v) for v in values], marker="o",
                    label=f"attention to {token}")
        ax.axhline(one_token, color="gray", linestyle="--", label="one token, uniform attention")
        ax.axhline(0.5, color="gray", linestyle=":", label="half of all attention")
        ax.set(xlabel="layer", ylim=(0, 1), title=title)
    axes[0, 0].set_ylabel("mean attention weight (over heads, tokens)")
    axes[0, 0].legend(fontsize=8)
    return fig


def heads_mosaic(maps: torch.Tensor, words: Sequence[str], titles: Sequence[str],
                 layer: int, columns: int = 4) -> plt.Figure:
    """Every head's attention map of one layer, (heads, n, n), drawn as one image (quick
    to redraw live), each under its title; the words label the bottom-left map."""
    import numpy as np

    heads, n = maps.shape[0], len(words)
    cell = n + 2  # each map, and a gap of two
    mosaic = np.full((heads // columns * cell - 2, columns * cell - 2), np.nan)
    fig, ax = plt.subplots(figsize=(12, 9.5))
    for head in range(heads):
        row, column = divmod(head, columns)
        top, left = row * cell, column * cell
        mosaic[top:top + n, left:left + n] = maps[head].numpy()
        ax.text(left + n / 2, top - 0.8, titles[head], ha="center", fontsize=9)
    image = ax.imshow(mosaic, cmap="viridis", vmin=0, vmax=1)
    last_row = (heads // columns - 1) * cell
    ax.set_xticks(range(n), words, rotation=90, fontsize=7)
    ax.set_yticks([last_row + i for i in range(n)], words, fontsize=7)
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)
    ax.set_title(f"layer {layer}, every head (row: attending token; column: attended to)",
                 pad=16)
    fig.colorbar(image, ax=ax, fraction=0.02, label="attention weight")
    return fig


def pair_cosine_strips(axes, cosines: dict, groups: dict) -> None:
    """One panel per pooling: the cosines of each group of sentence pairs as a strip of
    points (`groups[name]` is a (P, P) boolean mask of the cells of `cosines[pooling]`)."""
    import numpy as np

    spread = np.random.default_rng(0)
    for ax, (pooling, matrix) in zip(axes, cosines.items()):
        for position, mask in enumerate(groups.values()):
            values = matrix[mask]
            ax.scatter(position + spread.normal(0, 0.06, len(values)), values, s=8,
                       alpha=0.5)
        ax.set_xticks(range(len(groups)), list(groups))
        ax.set(title=f"pooling: {pooling}", ylim=(-0.4, 1.05))
    axes[0].set_ylabel("cosine similarity of the two sentences")
