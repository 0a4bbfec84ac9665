"""Figures for the book: attention heatmaps, a slider and a head view that work in three
places.

`slider(render, values, label)` pre-renders one figure per value. In Jupyter or Colab it
shows a live ipywidgets slider; in the static book (no kernel, no network) the same output
carries a small self-contained HTML+JS slider that swaps the pre-rendered images.
`head_view_html` returns a self-contained HTML+JS head view (no CDN, no network): pick a
sentence, a layer and a head, and see the attention as links between two token columns
and as a map. `paired_seeds` draws a paired comparison so that the pairing shows. At the
end, the figures of chapter 7 (what attention and recurrence cost).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import torch

from minibert.measure.comparison import record_html, results


def figure_png(fig, dpi: int = 80) -> bytes:
    """The figure as PNG bytes; the figure is closed so it is not displayed twice."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


class Slider:
    """A pre-rendered figure per slider value, shown live (ipywidgets) or static (HTML+JS)."""

    def __init__(self, frames: list[bytes], labels: list[str], label: str, start: int):
        self.frames, self.labels, self.label, self.start = frames, labels, label, start

    def static_html(self) -> str:
        """A slider needing no kernel and no CDN. It finds its own elements through
        document.currentScript, so several sliders can live on one page."""
        sources = ["data:image/png;base64," + base64.b64encode(f).decode() for f in self.frames]
        return f"""<div class="minibert-slider" style="margin:0.5em 0">
<label style="font-family:sans-serif">{html.escape(self.label)}:
<input type="range" min="0" max="{len(sources) - 1}" step="1" value="{self.start}"
 style="width:320px;vertical-align:middle">
<output style="font-weight:bold">{html.escape(self.labels[self.start])}</output></label><br>
<img alt="{html.escape(self.label)}" style="max-width:100%" src="{sources[self.start]}">
<script>(function () {{
  var root = document.currentScript.parentElement;
  var sources = {json.dumps(sources)}, labels = {json.dumps(self.labels)};
  var input = root.querySelector("input"), image = root.querySelector("img"),
      shown = root.querySelector("output");
  input.addEventListener("input", function () {{
    image.src = sources[input.value]; shown.textContent = labels[input.value];
  }});
}})();</script>
</div>"""

    def widget(self):
        """The live view: a selection slider and an image widget showing the chosen frame."""
        import ipywidgets as widgets

        options = [(text, i) for i, text in enumerate(self.labels)]
        chooser = widgets.SelectionSlider(options=options, value=self.start,
                                          description=self.label,
                                          style={"description_width": "initial"},
                                          layout=widgets.Layout(width="480px"))
        image = widgets.Image(value=self.frames[self.start], format="png")
        chooser.observe(lambda change: setattr(image, "value", self.frames[change["new"]]),
                        names="value")
        return widgets.VBox([chooser, image])

    def _repr_mimebundle_(self, include=None, exclude=None):
        return live_and_static_bundle(
            self.static_html(), f"<slider over {self.label}: {len(self.frames)} frames>",
            self.widget)


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def live_and_static_bundle(static_html: str, plain: str, make_widget: Callable) -> dict:
    """What a notebook output carries: the static HTML (for the book), a plain-text line,
    and, where a kernel runs ipywidgets (8, or 7 as in Colab), the live widget's view."""
    bundle = {"text/html": static_html, "text/plain": plain}
    try:
        widget = make_widget()
    except Exception:  # no kernel for the widget to talk to: the static view alone
        return bundle
    if hasattr(widget, "_repr_mimebundle_"):  # ipywidgets 8
        view = (widget._repr_mimebundle_() or {}).get(WIDGET_VIEW)
    else:  # ipywidgets 7 displays through _ipython_display_, with this same view
        model_id = getattr(widget, "model_id", None)
        view = model_id and {"version_major": 2, "version_minor": 0, "model_id": model_id}
    if view:
        bundle[WIDGET_VIEW] = view
    return bundle


def slider(render: Callable[[object], plt.Figure], values: Sequence, label: str,
           start=None, fmt: Callable[[object], str] = str) -> Slider:
    """One figure per value from `render(value)`, behind a slider labelled `label`."""
    values = list(values)
    start_index = values.index(start) if start is not None else 0
    frames = [figure_png(render(v)) for v in values]
    return Slider(frames, [fmt(v) for v in values], label, start_index)


def paired_seeds(ax, comparisons: Sequence, ylabel: str = "", title: str = ""):
    """Paired comparisons side by side on one axes: for each, every seed's A and B joined by
    a line labelled with its seed (the pairing is what the outcome reads), and the outcome
    under its two columns.
    `comparisons` are `minibert.measure.comparison.Result`s."""
    for k, result in enumerate(comparisons):
        a, b = result.values
        x = (2.5 * k, 2.5 * k + 1)
        for seed, va, vb in zip(result.seeds, a, b):
            ax.plot(x, (va, vb), "o-", color="0.55", markersize=4, linewidth=1)
            ax.annotate(f"seed {seed}", (x[1], vb), xytext=(4, 0), textcoords="offset points",
                        fontsize=7, va="center", color="0.4")
        ax.plot(x, (sum(a) / len(a), sum(b) / len(b)), "s-", color="C3", markersize=7,
                linewidth=2, label="mean of the seeds" if k == 0 else None)
        ax.text(2.5 * k + 0.5, -0.16, result.outcome, transform=ax.get_xaxis_transform(),
                ha="center", va="top", fontsize=8)
    ax.set_xticks([x for k in range(len(comparisons)) for x in (2.5 * k, 2.5 * k + 1)],
                  [name for r in comparisons for name in (r.a, r.b)], fontsize=8)
    ax.set_xlim(-0.5, 2.5 * len(comparisons) - 1)
    ax.set(ylabel=ylabel, title=title or f"each line one seed ({len(comparisons[0].seeds)} seeds)")
    ax.legend(fontsize=8)
    return ax


OUTCOME_COLORS = {"supported": "C2", "inconclusive": "0.55", "contradicted": "C3"}


def _forest_scale(record: dict) -> tuple[float, str]:
    """The unit a claim's interval is drawn in: its margin, its minimum effect, or (for a
    plain superiority claim) its own half-width, so that rows of different metrics share
    one axis."""
    for key in ("margin", "control_margin", "minimum_effect"):
        if record.get(key):
            return record[key], {"minimum_effect": "δ"}.get(key, "m")
    return (record["half_width"] or 1.0), "half-width"


def forest_plot(records: Sequence[dict], title: str = "") -> plt.Figure:
    """One row per claim: the interval of A's advantage (higher is better), in units of its
    margin m, minimum effect δ or half-width, against 0 and its threshold; filled for a
    finding, hollow for an observation, coloured by outcome."""
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.32 * len(records)))
    for row, record in enumerate(records):
        y = len(records) - 1 - row
        scale, unit = _forest_scale(record)
        sign = 1 if record["higher_is_better"] else -1
        low, high = sorted((sign * record["low"] / scale, sign * record["high"] / scale))
        color = OUTCOME_COLORS[record["outcome"]]
        ax.plot((low, high), (y, y), color=color, linewidth=2.5)
        ax.plot(sign * record["mean_gap"] / scale, y, "o", color=color, markersize=6,
                markerfacecolor=color if record["finding"] else "white")
        thresholds = {"superiority": [1] if record["minimum_effect"] else [],
                      "non-inferiority": [-1], "equivalence": [-1, 1]}[record["kind"]]
        for x in thresholds:
            ax.plot((x, x), (y - 0.35, y + 0.35), color="k", linewidth=1)
        ax.text(1.01, y, f"{record['outcome']} (÷{unit})", transform=ax.get_yaxis_transform(),
                va="center", fontsize=7, color=color)
    ax.axvline(0, color="k", linewidth=0.8, linestyle=":")
    ax.set_yticks(range(len(records)),
                  [_shorten(r["title"]) for r in reversed(records)], fontsize=7)
    ax.set_ylim(-0.7, len(records) - 0.3)
    ax.set_xlabel("A's advantage over B, 95% interval, in units of the claim's margin m, "
                  "minimum effect δ or half-width (ticks: the thresholds)", fontsize=8)
    ax.set_title(title or "Each claim's interval (filled: finding, hollow: observation)",
                 fontsize=9)
    return fig


def _shorten(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"


class _Words(str):
    """Text that glue shows as it is (a str's repr would add quotes)."""

    def __repr__(self) -> str:
        return str(self)


class TinyModelsShowed:
    """A chapter's "What the tiny models showed" block: its forest plot, one line per claim,
    and the records the Claims page collects."""

    def __init__(self, results: Sequence):
        self.results = list(results)

    def __repr__(self) -> str:
        return "\n".join(f"{r.claim.role} ({r.claim.kind}): {r.sentence()}"
                         for r in self.results)

    def _repr_html_(self) -> str:
        records = [r.record() for r in self.results]
        if not records:
            return "<p>This chapter declares no comparison.</p>"
        png = base64.b64encode(figure_png(forest_plot(records), dpi=90)).decode()
        rows = "".join(
            f"<tr><td>{record_html(rec)}{'Finding' if rec['finding'] else 'Observation'}, "
            f"{rec['kind']}</td><td>{html.escape(rec['title'])}</td>"
            f"<td><b>{rec['outcome']}</b></td><td>{rec['mean_gap']:.3g} "
            f"({rec['low']:.3g} to {rec['high']:.3g}), n = {rec['n']}"
            f"{_margin_text(rec)}</td><td>{rec['replication']:.3f}</td>"
            f"<td>{html.escape(_notes(rec))}</td></tr>" for rec in records)
        return (f'<div class="minibert-showed"><img alt="forest plot of the claims" '
                f'style="max-width:100%" src="data:image/png;base64,{png}">'
                f'<table class="minibert-showed-table"><tr><th>kind</th><th>claim</th>'
                f"<th>outcome</th><th>mean gap (95% interval)</th><th>replicates</th>"
                f"<th>notes</th></tr>{rows}</table></div>")


def _margin_text(record: dict) -> str:
    margin = record.get("margin") or record.get("control_margin")
    return f"; half-width {record['half_width']:.3g} vs m = {margin:g}" if margin else ""


def _notes(record: dict) -> str:
    return "; ".join(n for n in (record.get("also"), record.get("rules_out")) if n)


def what_the_tiny_models_showed() -> TinyModelsShowed:
    """The block for this kernel's declared claims, and their outcomes and intervals glued
    for the prose (in the book: {glue:text}`NAME_outcome`, {glue:text}`NAME_interval`).
    The block itself is glued too, as `tiny_models_showed`, for a chapter's opening."""
    found = results()
    block = TinyModelsShowed(found)
    try:
        from myst_nb import glue
    except ImportError:  # Colab or a plain Jupyter: the prose shows the roles unrendered
        glue = None
    if glue is not None:
        for result in found:
            name = result.claim.name
            glue(f"{name}_outcome", _Words(result.outcome), display=False)
            glue(f"{name}_interval", _Words(f"{result.low:.3g} to {result.high:.3g}"),
                 display=False)
            glue(f"{name}_mean", _Words(f"{result.mean_gap:.3g}"), display=False)
        glue("tiny_models_showed", block, display=False)
    return block


def attention_heatmap(ax, weights: torch.Tensor, tokens: Sequence[str], title: str = "",
                      vmax: float | None = None) -> None:
    """Draw one (T, T) attention map: row = the token that attends, column = attended to."""
    ax.imshow(weights.detach().cpu().numpy(), cmap="viridis", vmin=0, vmax=vmax)
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=8)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
    ax.set_xlabel("attended-to token (key)")
    ax.set_ylabel("attending token (query)")
    ax.set_title(title)


def padded_attention_map(weights: torch.Tensor, tokens: Sequence[str], title: str = "",
                         columns: int | None = None) -> plt.Figure:
    """An (n, n + extra) map of real tokens' attention over the keys, the padding columns
    labelled [PAD]; `columns` fixes the x range so that maps with more padding line up."""
    n, width = weights.shape
    fig, ax = plt.subplots(figsize=(9, 0.9 + 0.22 * n))
    ax.imshow(weights.cpu().numpy(), vmin=0, vmax=0.4, aspect="auto")
    ax.set_xlim(-0.5, (columns or width) - 0.5)
    ax.set_xticks(range(width), list(tokens) + ["[PAD]"] * (width - n), rotation=90,
                  fontsize=6)
    ax.set_yticks(range(n), tokens, fontsize=7)
    ax.set(xlabel="key (attended to)", ylabel="query")
    ax.set_title(title, fontsize=9)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- head view


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


# ------------------------------------------------------------- chapter 7: what layers cost

def _plain_tick(value, _position) -> str:
    """A log axis's tick label as plain text (10,000; 0.01): LaTeX-style 10^k labels take
    most of a redraw's time."""
    return f"{value:,g}"


def _power_of_ten_tick(value, _position) -> str:
    return f"1e{math.log10(value):.0f}"


def attention_against_recurrence(width: int, crossovers: dict, lengths: Sequence[int],
                                 measured: dict) -> plt.Figure:
    """Left, the FLOP formulas of attention and recurrence at width d, with two crossovers
    marked; right, measured times (`measured[kind]`, seconds at each of `lengths`, kinds
    "attention" and "RNN") with the point where attention's time overtakes the RNN's.
    `crossovers[(attention, recurrence, width)]` is the first n where attention costs as
    much, as chapter 7 computes it."""
    from .measure import cost

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    ns = [16 * (4096 / 16) ** (i / 59) for i in range(60)]  # 16 .. 4096, log-spaced
    curves = [("attention core $4n^2d$", cost.attention_core_flops, "C0", "--"),
              ("attention with Q, K, V $6nd^2+4n^2d$", cost.self_attention_flops, "C0", "-"),
              ("RNN $4nd^2$", cost.recurrent_flops, "C3", "-"),
              ("LSTM $16nd^2$", lambda n, d: cost.recurrent_flops(n, d, gates=4), "C3", "--")]
    for label, formula, colour, style in curves:
        left.loglog(ns, [formula(n, width) for n in ns], style, color=colour, label=label)
    marks = [("core", "RNN", cost.attention_core_flops, "n = d"),
             ("with Q,K,V", "LSTM", cost.self_attention_flops, "n = 2.5d")]
    for attention, recurrence, formula, text in marks:
        n_cross = crossovers[attention, recurrence, width]
        y_cross = formula(n_cross, width)
        left.plot(n_cross, y_cross, "ko")
        left.annotate(f"{text} = {n_cross}", (n_cross, y_cross), fontsize=8,
                      xytext=(6, -6), textcoords="offset points", va="top")
    left.set(xlabel="sequence length n", ylabel="FLOPs", title=f"Counted, d = {width}")
    left.legend(fontsize=8)
    for kind, colour, label in [("attention", "C0", "attention (fused)"), ("RNN", "C3", "RNN")]:
        right.loglog(lengths, [seconds * 1e3 for seconds in measured[kind]], "o-",
                     color=colour, label=label)
    right.axvline(width, color="grey", lw=0.8, ls=":")
    where = cost.crossing_point(lengths, measured["attention"], measured["RNN"])
    if where:
        right.axvline(where, color="grey", lw=0.8)
        right.annotate(f" times cross\n near n = {where:.0f}", (where, right.get_ylim()[1]),
                       fontsize=8, color="grey", va="top")
    right.set(xlabel="sequence length n", ylabel="time (ms, one CPU thread)",
              title=f"Measured, d = {width} (dotted: n = d)")
    right.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def layer_cost(n: int, d: int) -> plt.Figure:
    """FLOPs (left) and memory (right) of a layer of width d against the length, with the
    chosen length n marked: chapter 7's explorer. Heads of width 64, as in BERT."""
    from matplotlib.ticker import FuncFormatter

    from .measure import cost

    lengths = sorted({int(16 * 1024 ** (i / 39)) for i in range(40)})  # 16 .. 16384
    curves = {  # name -> (FLOPs at length m, colour, style)
        "attention sublayer": (cost.attention_sublayer_flops, "C0", "-"),
        "scores + weighted sum": (cost.attention_core_flops, "C0", "--"),
        "feed-forward (4d)": (lambda m, d: cost.feed_forward_flops(m, d, 4 * d), "C2", "-"),
        "RNN": (cost.recurrent_flops, "C3", "-"),
        "LSTM": (lambda m, d: cost.recurrent_flops(m, d, gates=4), "C3", "--")}
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    for name, (flops, colour, style) in curves.items():
        left.loglog(lengths, [flops(m, d) for m in lengths], style, color=colour, label=name)
        left.plot(n, flops(n, d), "o", color=colour)
    left.set(xlabel="sequence length n", ylabel="FLOPs", title=f"FLOPs, d = {d}")
    left.legend(fontsize=7)
    heads = max(1, d // 64)
    megabytes = {f"score tensor, {heads} heads": lambda m: cost.score_bytes(m, heads) / 1e6,
                 "one (n, d) activation": lambda m: 4 * m * d / 1e6}  # float32
    for (label, size), colour in zip(megabytes.items(), ("C0", "C2")):
        right.loglog(lengths, [size(m) for m in lengths], color=colour, label=label)
        right.plot(n, size(n), "ko")
    right.set(xlabel="sequence length n", ylabel="MB (float32)", title="memory per layer")
    right.legend(fontsize=7)
    share = cost.attention_core_flops(n, d) / cost.attention_sublayer_flops(n, d)
    fig.suptitle(f"n = {n}, d = {d}: the n² terms are {share:.0%} of the attention "
                 "sublayer's FLOPs", fontsize=10)
    for ax, y_ticks in ((left, _power_of_ten_tick), (right, _plain_tick)):
        ax.axvline(n, color="grey", lw=0.8)
        ax.minorticks_off()
        ax.xaxis.set_major_formatter(FuncFormatter(_plain_tick))
        ax.yaxis.set_major_formatter(FuncFormatter(y_ticks))
    fig.tight_layout()
    return fig


# ---------------------------------------------------- chapter 12: ids through the sum

def token_recovery(hidden: int, margins: dict, model_point: tuple[int, float, str]
                   ) -> plt.Figure:
    """Left, the distance advantage of the true token at one width (`margins[hidden]`,
    per sample; right of 0: recovered); right, the recovery rate against the width, with
    a real model's (H, rate, label) as a star. All widths share the histogram's bins."""
    import numpy as np

    widths = sorted(margins)
    recovery = {h: (margins[h] > 0).float().mean().item() for h in widths}
    every_margin = torch.cat([margins[h] for h in widths])
    edges = np.linspace(every_margin.min().item(), every_margin.max().item(), 61)
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 3.1))
    left.hist(margins[hidden].numpy(), bins=edges, color="#6fa8dc")
    left.axvline(0, color="black", linestyle="--", linewidth=1)
    left.set_xlim(edges[0], edges[-1])
    left.set(xlabel="distance advantage of the true token (right of 0: recovered)",
             ylabel="samples", title=f"H={hidden}: {recovery[hidden]:.0%} of tokens recovered")
    model_width, model_rate, model_label = model_point
    right.plot(widths, list(recovery.values()), "o-", color="#6fa8dc", label="random tables")
    right.plot([model_width], [model_rate], "*", color="#e06666", markersize=12,
               label=model_label)
    right.plot([hidden], [recovery[hidden]], "o", color="black")
    ticks = widths[::2] + [model_width]
    right.set_xscale("log", base=2)
    right.set_xticks(ticks, [str(h) for h in ticks])
    right.minorticks_off()
    right.set_ylim(0, 1.05)
    right.set(xlabel="hidden size H", ylabel="token recovery rate",
              title="reading the token back from token + position")
    right.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig


def position_similarities(similarity: dict, trained_length: int) -> plt.Figure:
    """Side-by-side cosine matrices of position tables (name -> (P, P)), with lines where the
    training rows end: shows where a table has structure and where it is noise."""
    fig, axes = plt.subplots(1, len(similarity), figsize=(5 * len(similarity), 4.4),
                             layout="constrained")
    for ax, (name, matrix) in zip(axes, similarity.items()):
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
        ax.axvline(trained_length - 0.5, color="black", linewidth=0.8)
        ax.axhline(trained_length - 0.5, color="black", linewidth=0.8)
        ax.set(xlabel="position", ylabel="position", title=f"{name} table: cosine between rows")
    fig.colorbar(image, ax=axes, shrink=0.8)
    return fig


def row_movement(ax, moved, decay_line, trained_length: int) -> None:
    """How far each learned position row moved in training (log scale), beside what weight
    decay alone predicts, with a line where the training rows end."""
    rows = range(len(moved))
    ax.semilogy(rows, moved, ".", label="distance from initialisation")
    ax.semilogy(rows, decay_line, "-", color="gray", linewidth=1,
                label="weight decay alone: (1 − factor) · |initial row|")
    ax.axvline(trained_length - 0.5, color="black", linestyle="--", linewidth=1)
    ax.text(trained_length + 1, max(moved), "training rows end here", va="top")
    ax.set(xlabel="position (row of the table)", ylabel="|trained row − initial row|",
           title=f"Learned position table after pre-training on {trained_length}-token rows")
    ax.legend(loc="center right")


# ------------------------------------------------------- chapter 41: a real model's heads

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


# ---------------------------------------------------- chapter 8: attention against dense

def recall_training_frame(histories: dict, seeds: Sequence[int], step: int, probe,
                          levels: dict) -> plt.Figure:
    """Chapter 8's slider frame: left, every seed's held-out accuracy up to `step` for each
    mixing kind, with `levels` ({label: accuracy}) as dashed lines; middle and right, the
    first seed's query-row mixing weights on the probe table at `step`, the pair holding
    the query's key in green. `histories[kind]` holds one RecallHistory per seed; probe
    is (keys, values, answers) of one table, each (1, T) or (1,)."""
    import numpy as np

    colors = {"attention": "tab:blue", "dense": "tab:orange"}
    steps = np.array(histories["attention"][0].steps)
    shown = steps <= step
    index = int(shown.sum()) - 1
    keys, values = probe[0][0], probe[1][0]  # (T,) each
    match = int((keys[:-1] == keys[-1]).nonzero())  # the slot holding the query's key
    labels = [f"{k}->{v}" for k, v in zip(keys[:-1].tolist(), values[:-1].tolist())]
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.3), layout="constrained")
    for kind, runs in histories.items():
        for seed, run in zip(seeds, runs):
            axes[0].plot(steps[shown], np.array(run.accuracy)[shown], "-o", markersize=3,
                         color=colors[kind], label=kind if seed == seeds[0] else None)
    for (label, level), style in zip(levels.items(), ("--", ":", "-.")):
        axes[0].axhline(level, color="gray", linestyle=style, label=label)
    axes[0].set(xlim=(-5, steps[-1] + 5), ylim=(0, 1.05), xlabel="training step",
                ylabel="held-out accuracy",
                title=f"accuracy, {len(seeds)} seeds (step {step})")
    axes[0].legend(fontsize=8, loc="center right")
    for ax, kind in zip(axes[1:], ("attention", "dense")):
        weights = histories[kind][0].query_weights[index][0].cpu().numpy()  # (T,)
        positions = range(len(weights))
        ax.bar(positions, weights,
               color=[colors[kind] if j != match else "tab:green" for j in positions])
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(positions, labels + ["query"], rotation=45, fontsize=8)
        ax.set(xlabel=f"position (key->value); query key {keys[-1].item()}",
               ylabel="weight from the query position",
               title=f"{kind}: query row of the mixing matrix")
    return fig


def mixing_matrices(mixing: dict, keys: torch.Tensor) -> plt.Figure:
    """Chapter 8's mixing matrices: one row of panels per kind (`mixing[kind]`, (N, T, T)
    on N tables), one column per table, each axis labelled by the table's keys (N, T)."""
    tables = keys.shape[0]
    fig, axes = plt.subplots(len(mixing), tables, figsize=(4.5 * tables, 4 * len(mixing)),
                             layout="constrained", squeeze=False)
    for row, (kind, weights) in enumerate(mixing.items()):
        scale = weights.abs().max().item()
        for column in range(tables):
            ax = axes[row, column]
            image = ax.imshow(weights[column].cpu().numpy(), cmap="RdBu_r",
                              vmin=-scale, vmax=scale)
            labels = [str(k) for k in keys[column].tolist()]
            ax.set_xticks(range(len(labels)), labels)
            ax.set_yticks(range(len(labels)), labels)
            ax.set(xlabel="sending position (its key)", ylabel="receiving position",
                   title=f"{kind}, table {column + 1}")
        fig.colorbar(image, ax=axes[row], shrink=0.8, label="mixing weight")
    fig.suptitle("Mixing matrices on two inputs: computed (attention) vs fixed (dense)")
    return fig


def nsp_pair_card(text_a: str, text_b: str, truth: str, p_is_next: float) -> plt.Figure:
    """Chapter 21's slider frame: one pair's segments beside the NSP head's P(IsNext), the
    bar green where the head's verdict (P > 0.5 means IsNext) matches `truth`, else red."""
    import textwrap

    fig, (text_ax, bar_ax) = plt.subplots(1, 2, figsize=(9, 2.8),
                                          gridspec_kw={"width_ratios": [4, 1]})
    text_ax.axis("off")
    wrapped = textwrap.fill("A: " + text_a, 80) + "\n\n" + textwrap.fill("B: " + text_b, 80)
    text_ax.text(0, 1, wrapped, va="top", fontsize=8, family="monospace")
    text_ax.set_title(f"truth: {truth}", fontsize=10, loc="left")
    right = (p_is_next > 0.5) == (truth == "IsNext")
    bar_ax.bar([0], [p_is_next], color="tab:green" if right else "tab:red")
    bar_ax.axhline(0.5, color="gray", linestyle="--")
    bar_ax.set(ylim=(0, 1), xticks=[], ylabel="P(IsNext) from the NSP head")
    return fig


def readout_by_layer(ax, results: dict, readout: str, chance: float, title: str = ""):
    """Accuracy by layer for each sentence vector: a thin line per seed and a thick line for
    their mean, so every seed shows. results: {seed: {readout: {vector: (L + 1,) accuracy}}}."""
    seeds = list(results)
    names = list(results[seeds[0]][readout])
    for k, name in enumerate(names):
        runs = [results[seed][readout][name] for seed in seeds]  # seeds x (L + 1,)
        layers = range(len(runs[0]))
        for run in runs:
            ax.plot(layers, run, color=f"C{k}", linewidth=0.8, alpha=0.5)
        ax.plot(layers, [sum(v) / len(v) for v in zip(*runs)], marker="o", color=f"C{k}",
                linewidth=2, label=name)
    ax.axhline(chance, color="gray", linestyle="--", label="chance")
    ax.set_xticks(list(layers))
    ax.set(ylim=(0, 1.05), title=title, xlabel="layer (0 = embeddings)")
    return ax


# ---------------------------------------------------------------- chapter 30: classification


def accuracy_curves(ax, curves: dict, steps: Sequence[int], seeds: Sequence[int],
                    variants: Sequence[str], chance: float, title: str = ""):
    """Held-out accuracy during fine-tuning: a thin line per seed and a bold mean per variant,
    so every seed shows. curves: {(variant, seed): accuracies at `steps`}."""
    for k, variant in enumerate(variants):
        runs = [curves[variant, s] for s in seeds]  # seeds x (evals,)
        for run in runs:
            ax.plot(steps, run, color=f"C{k}", alpha=0.3, linewidth=0.9)
        ax.plot(steps, [sum(v) / len(v) for v in zip(*runs)], color=f"C{k}", marker="o",
                label=variant)
    ax.axhline(chance, color="gray", linestyle="--", label="chance")
    ax.set(xlabel="fine-tuning step (batch of 32 rows)", ylabel="held-out accuracy",
           ylim=(0, 1.02), title=title or f"{len(seeds)} seeds, mean in bold")
    ax.legend(fontsize=8)
    return ax


def pooled_vectors_frame(snapshots: dict, labels: torch.Tensor, label_names: Sequence[str],
                         accuracies: dict, steps: Sequence[int], index: int) -> plt.Figure:
    """One frame of chapter 30's slider: for each variant, the held-out pooled [CLS]
    vectors after steps[index] fine-tuning steps, projected on the two leading principal
    directions of that variant's final vectors, coloured by true class.
    snapshots: {variant: [(N, H) per evaluation]}; accuracies: {variant: [per evaluation]}."""
    fig, axes = plt.subplots(1, len(snapshots), figsize=(5 * len(snapshots), 4), squeeze=False)
    for ax, (variant, vectors) in zip(axes[0], snapshots.items()):
        final = vectors[-1]  # (N, H): the basis is fixed by the final vectors
        mean = final.mean(0)
        _, _, directions = torch.linalg.svd(final - mean, full_matrices=False)
        points = ((vectors[index] - mean) @ directions[:2].T).cpu().numpy()  # (N, 2)
        for c, name in enumerate(label_names):
            chosen = (labels == c).cpu().numpy()
            ax.scatter(points[chosen, 0], points[chosen, 1], s=6, label=name)
        ax.set_title(f"{variant}: accuracy {accuracies[variant][index]:.2f}")
        ax.set(xlabel="first principal direction", ylabel="second principal direction")
    axes[0, 0].legend(fontsize=8, markerscale=2)
    fig.suptitle(f"pooled [CLS] vectors of held-out sentences after {steps[index]} steps")
    fig.tight_layout()
    return fig


@torch.no_grad()
def classifier_answers(models: dict, row: dict, words: Sequence[str],
                       label_names: Sequence[str], layer: int) -> plt.Figure:
    """Several sequence classifiers on one input row, as paired bars: each model's class
    probabilities (left) and where [CLS] looks in `layer`, averaged over the heads (right).
    models: {name: BertForSequenceClassification}; row: a batch of one (`sentence_batch`)."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.4), width_ratios=(1, 2))
    width = 0.8 / len(models)
    answers = []
    for k, (name, model) in enumerate(models.items()):
        model.eval()
        offset = (k - (len(models) - 1) / 2) * width
        device = next(model.parameters()).device
        out = model.bert(**{key: t.to(device) for key, t in row.items()},
                         output_attentions=True)
        probabilities = model.classifier(out.pooler_output).softmax(-1)[0].cpu()  # (K,)
        from_cls = out.attentions[layer][0, :, 0].mean(0).cpu()  # (T,): heads' mean
        left.barh([c + offset for c in range(len(label_names))], probabilities,
                  height=width, label=name)
        right.bar([t + offset for t in range(len(words))], from_cls, width=width, label=name)
        answers.append(f"{name.split(',')[0]}: {label_names[int(probabilities.argmax())]}")
    left.set_yticks(range(len(label_names)), label_names)
    left.invert_yaxis()
    left.set(xlim=(0, 1), xlabel="probability")
    left.set_title(", ".join(answers), fontsize=10)
    left.legend(fontsize=8)
    right.set_xticks(range(len(words)), words, rotation=45, fontsize=8)
    right.set(ylim=(0, 1), ylabel="attention weight from [CLS]")
    right.set_title(f"where [CLS] looks in layer {layer} (mean over heads)", fontsize=10)
    return fig


def seeds_across_settings(ax, xs: Sequence[float], values: Sequence[Sequence[float]],
                          seeds: Sequence[int], ylabel: str = "", title: str = ""):
    """A sweep whose settings share their seeds (same weights and batches at every setting):
    one grey line per seed across the settings, labelled at its end, so the pairing shows,
    and the seeds' mean in colour. values[i][j]: the value at setting xs[i] for seeds[j]."""
    for j, seed in enumerate(seeds):
        column = [row[j] for row in values]  # this seed at every setting
        ax.plot(xs, column, "o-", color="0.6", markersize=3, linewidth=1)
        ax.annotate(f"seed {seed}", (xs[-1], column[-1]), xytext=(4, 0),
                    textcoords="offset points", fontsize=7, va="center", color="0.4")
    ax.plot(xs, [sum(row) / len(row) for row in values], "s-", color="C3", markersize=5,
            linewidth=2, label="mean of the seeds")
    ax.set(ylabel=ylabel, title=title)
    return ax


def masked_row_answers(seen: Sequence[str], answers: Sequence[str], chosen: Sequence[bool],
                       right: Sequence[bool], title: str, per_line: int = 12) -> plt.Figure:
    """A masked row as a model reads it (chosen tokens in blue) and under each token the
    model's answer where it was chosen, on green if right and red if wrong (the original
    token, in plain text, elsewhere): what a masked-LM model gets from a row, at a glance."""
    fig, ax = plt.subplots(figsize=(10, 2.2))
    ax.axis("off")
    for t, (read, answer, asked, ok) in enumerate(zip(seen, answers, chosen, right)):
        x, line = (t % per_line) / per_line, 2 * (t // per_line)
        ax.text(x, -line, read, fontsize=8, va="center", color="tab:blue" if asked else "0.4")
        style = {"color": "white", "bbox": {"facecolor": "tab:green" if ok else "tab:red",
                                            "pad": 1.5, "edgecolor": "none"}} if asked else {}
        ax.text(x, -line - 0.8, answer, fontsize=9, va="center", **style)
    ax.set_ylim(-2 * (len(seen) // per_line) - 1.4, 0.6)
    ax.set_title(title, fontsize=9)
    return fig


def span_scores_card(words: Sequence[str], start_scores, end_scores, truth: tuple[int, int],
                     chosen: tuple[int, int], attention, title: str) -> plt.Figure:
    """One question as a span head reads it: each token's start and end scores (the
    question, up to its [SEP], shaded grey; the true answer in green; the chosen span
    outlined in red), and under them the chosen span's first token's attention over the
    question's tokens (`attention`: one weight per token between [CLS] and [SEP])."""
    question_end = list(words).index("[SEP]")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 5.2),
                                      gridspec_kw={"height_ratios": [2, 1]})
    x = range(len(words))
    top.bar([i - 0.2 for i in x], start_scores, width=0.4, label="start score s_i")
    top.bar([i + 0.2 for i in x], end_scores, width=0.4, label="end score e_i")
    top.axvspan(-0.5, question_end + 0.5, color="gray", alpha=0.15)
    top.axvspan(truth[0] - 0.5, truth[1] + 0.5, color="green", alpha=0.25, label="true answer")
    top.axvspan(chosen[0] - 0.5, chosen[1] + 0.5, fill=False, edgecolor="red", linewidth=2,
                label="chosen span")
    top.set_xticks(x, words, rotation=90, fontsize=7)
    top.set_ylabel("score")
    top.legend(fontsize=7, ncol=4, loc="lower left")
    top.set_title(title)
    bottom.bar(range(1, question_end), attention)
    bottom.set_xticks(range(1, question_end), words[1:question_end], fontsize=8)
    bottom.set_ylabel("attention")
    bottom.set_title(f"last layer: from '{words[chosen[0]]}' to the question", fontsize=9)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- chapter 25: bidirectional


def visible_context_card(tokens: Sequence[str], position: int, guesses: dict) -> plt.Figure:
    """One row with a blank at `position`, once per model in `guesses` ({direction: text of
    its guesses}): the blank in red, the tokens a model may attend to in blue (a "causal"
    model sees only the left), the rest grey; under each row, that model's guesses."""
    widths = [max(len(t), 6) + 2 for t in tokens]  # room per token, in characters
    starts = [sum(widths[:p]) for p in range(len(tokens))]
    fig, ax = plt.subplots(figsize=(11, 1.15 * len(guesses) + 0.5))
    ax.set_xlim(0, sum(widths))
    ax.set_ylim(-0.3, 1.8 * len(guesses))
    ax.axis("off")
    for k, (direction, text) in enumerate(guesses.items()):
        line = 1.8 * (len(guesses) - k) - 1.0
        for p, token in enumerate(tokens):
            visible = direction != "causal" or p < position
            color = "salmon" if p == position else ("lightblue" if visible else "0.92")
            ax.text(starts[p] + widths[p] / 2, line, "[MASK]" if p == position else token,
                    ha="center", va="center", fontsize=8,
                    bbox={"facecolor": color, "edgecolor": "none"})
        ax.text(0, line - 0.55, f"{direction} model's guesses: {text}", fontsize=8)
    ax.set_title(f"blank at position {position}: the answer is '{tokens[position]}' "
                 "(blue = visible to the model)", fontsize=9)
    return fig


def probe_curves(axes, checkpoints: Sequence[int], curves: dict, measures: Sequence[str]):
    """Probe accuracy at each pre-training checkpoint, one line per seed and a colour per
    objective, one panel per measure. curves: {objective: {measure: (seeds, checkpoints)}}."""
    for ax, measure in zip(axes, measures):
        for k, (name, by_measure) in enumerate(curves.items()):
            for i, row in enumerate(by_measure[measure]):
                ax.plot(checkpoints, row, "o-", color=f"C{3 * k}", alpha=0.7,
                        label=name if i == 0 else None)
        ax.set(xlabel="pre-training step", ylabel=f"{measure} probe accuracy",
               title=f"{measure} probe on frozen features, one line per seed")
        ax.legend()
    return axes
