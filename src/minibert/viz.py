"""Figures for the book: attention heatmaps, and a slider that works in three places.

`slider(render, values, label)` pre-renders one figure per value. In Jupyter or Colab it
shows a live ipywidgets slider; in the static book (no kernel, no network) the same output
carries a small self-contained HTML+JS slider that swaps the pre-rendered images.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import torch


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
        bundle = {"text/html": self.static_html(),
                  "text/plain": f"<slider over {self.label}: {len(self.frames)} frames>"}
        try:
            view = self.widget()._repr_mimebundle_()  # ipywidgets 8
        except Exception:  # ipywidgets 7 has no _repr_mimebundle_, or no kernel to talk to
            view = None
        if view and "application/vnd.jupyter.widget-view+json" in view:
            bundle["application/vnd.jupyter.widget-view+json"] = view[
                "application/vnd.jupyter.widget-view+json"]
        return bundle


def slider(render: Callable[[object], plt.Figure], values: Sequence, label: str,
           start=None, fmt: Callable[[object], str] = str) -> Slider:
    """One figure per value from `render(value)`, behind a slider labelled `label`."""
    values = list(values)
    start_index = values.index(start) if start is not None else 0
    frames = [figure_png(render(v)) for v in values]
    return Slider(frames, [fmt(v) for v in values], label, start_index)


def attention_heatmap(ax, weights: torch.Tensor, tokens: Sequence[str], title: str = "",
                      vmax: float | None = None) -> None:
    """Draw one (T, T) attention map: row = the token that attends, column = attended to."""
    ax.imshow(weights.detach().cpu().numpy(), cmap="viridis", vmin=0, vmax=vmax)
    ax.set_xticks(range(len(tokens)), tokens, rotation=90, fontsize=8)
    ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
    ax.set_xlabel("attended-to token (key)")
    ax.set_ylabel("attending token (query)")
    ax.set_title(title)
