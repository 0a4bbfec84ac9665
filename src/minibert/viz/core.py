"""What every chapter's figures share: PNG frames, a live-or-static slider, a moving average."""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable, Sequence

import matplotlib.pyplot as plt
import numpy as np


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


def moving_average(values, width: int = 25) -> np.ndarray:
    """Moving average over `width` steps (mode='valid'), to see the trend of a noisy per-step
    loss: len(values) - width + 1 points, point i the mean of steps i .. i + width - 1."""
    return np.convolve(values, np.ones(width) / width, mode="valid")
