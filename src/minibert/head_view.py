"""What attention heads do: a score per head for the patterns Clark et al. (2019) found in
BERT, and a head view that works in the static book.

`pattern_scores` measures, for every layer and head, how much attention goes to the
previous token, the next token, [CLS] and [SEP], and how broad the attention is;
`value_norms` and `norm_weighted` ask whether that attention carries anything.
`head_view_html` returns a self-contained HTML+JS widget (no CDN, no network): pick a
sentence, a layer and a head, and see the attention as links between two token columns
and as a map. Shapes: L = layers, B = batch, nh = heads, T = padded sequence length.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import torch

PATTERNS = ("previous token", "next token", "[CLS]", "[SEP]", "broad")
CLS_ID, SEP_ID = 101, 102  # in BERT's uncased vocabulary (and MiniLM's)


def _mean_over(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean of values (B, nh, T') over the positions where valid (B, T') is true -> (nh,)."""
    valid = valid[:, None, :].to(values.dtype)  # (B, 1, T')
    return (values * valid).sum(dim=(0, 2)) / valid.sum()


def layer_pattern_scores(weights: torch.Tensor, attention_mask: torch.Tensor,
                         is_cls: torch.Tensor, is_sep: torch.Tensor) -> dict[str, torch.Tensor]:
    """The five pattern scores of one layer's heads, averaged over the real query tokens.

    weights (B, nh, T, T), row = attending token; attention_mask, is_cls, is_sep (B, T)
    booleans. Returns {pattern: (nh,)}. "previous token" is the mean weight a token puts on
    the token just before it (over tokens that have one), "next token" likewise; "[CLS]" and
    "[SEP]" are the mean weight on those tokens; "broad" is the attention's entropy divided
    by log(number of real tokens): 1 for uniform attention, 0 for attention on one token."""
    real = attention_mask.bool()  # (B, T)
    weights = weights.float()
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (B, nh, T-1): a[i+1, i]
    following = weights.diagonal(offset=1, dim1=-2, dim2=-1)  # (B, nh, T-1): a[i, i+1]
    has_neighbour = real[:, 1:]  # both tokens of the pair are real (right padding)
    on_cls = (weights * is_cls[:, None, None, :]).sum(-1)  # (B, nh, T)
    on_sep = (weights * is_sep[:, None, None, :]).sum(-1)  # (B, nh, T)
    entropy = -(weights * weights.clamp_min(1e-12).log()).sum(-1)  # (B, nh, T)
    n_real = real.sum(dim=1).clamp_min(2).to(weights.dtype)  # (B,)
    broadness = entropy / n_real.log()[:, None, None]  # (B, nh, T)
    return {
        "previous token": _mean_over(previous, has_neighbour),
        "next token": _mean_over(following, has_neighbour),
        "[CLS]": _mean_over(on_cls, real),
        "[SEP]": _mean_over(on_sep, real),
        "broad": _mean_over(broadness, real),
    }


def pattern_scores(attentions: Sequence[torch.Tensor], input_ids: torch.Tensor,
                   attention_mask: torch.Tensor, cls_id: int = CLS_ID,
                   sep_id: int = SEP_ID) -> dict[str, torch.Tensor]:
    """Each pattern's score for every head of every layer: {pattern: (L, nh)}.

    attentions: the model's output_attentions, one (B, nh, T, T) tensor per layer, for a
    right-padded batch; input_ids and attention_mask (B, T) locate [CLS], [SEP] and padding."""
    real = attention_mask.bool()
    is_cls = (input_ids == cls_id) & real
    is_sep = (input_ids == sep_id) & real
    per_layer = [layer_pattern_scores(w.detach().cpu(), real.cpu(), is_cls.cpu(), is_sep.cpu())
                 for w in attentions]
    return {name: torch.stack([scores[name] for scores in per_layer]) for name in PATTERNS}


def best_heads(scores: dict[str, torch.Tensor]) -> dict[str, tuple[int, int, float]]:
    """For each pattern, the (layer, head, score) of the head that scores highest."""
    best = {}
    for name, grid in scores.items():  # grid (L, nh)
        flat = int(grid.argmax())
        layer, head = divmod(flat, grid.shape[1])
        best[name] = (layer, head, float(grid[layer, head]))
    return best


@torch.no_grad()
def value_norms(model, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """How much each token can contribute through each head: the length of
    W_O^h v_j^h, the head's value vector of token j after the output projection.
    One (B, nh, T) tensor per layer. A token with a short vector adds little to the output
    however much attention it receives (Kobayashi et al., 2020)."""
    out = model(**batch, output_hidden_states=True)
    norms = []
    for layer, x in zip(model.encoder.layer, out.hidden_states[:-1]):  # each layer's input
        attention = layer.attention
        attention_in = attention.output.LayerNorm(x) if layer.pre_ln else x
        _, _, v = attention.self.project(attention_in)  # (B, T, H)
        v = attention.self.split_heads(v)  # (B, nh, T, hs)
        nh, hs = v.shape[1], v.shape[3]
        w_out = attention.output.dense.weight.view(-1, nh, hs)  # (H, nh, hs)
        projected = torch.einsum("bnts,hns->bnth", v, w_out)  # (B, nh, T, H)
        norms.append(projected.norm(dim=-1))
    return norms


def norm_weighted(attentions: Sequence[torch.Tensor],
                  norms: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Attention weights times the attended token's value norm, rescaled so that each row
    sums to 1: the share of a head's output that comes from each token. Same shapes as
    `attentions`; pass the result to `pattern_scores` to measure shares of the output."""
    weighted = [a * n[:, :, None, :] for a, n in zip(attentions, norms)]  # (B, nh, T, T)
    return [w / w.sum(dim=-1, keepdim=True).clamp_min(1e-12) for w in weighted]


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
