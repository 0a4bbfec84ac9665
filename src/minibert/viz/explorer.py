"""Explorers: controls whose callback computes a figure, live in Jupyter and Colab, and the
same controls over a pre-computed grid in the static book. The book's one control class:
`slider(render, values, label)` is an explorer with one number control.

`Explorer(compute, padding=number(range(33), static=[0, 8, 32]), masked=toggle("mask"))`
calls `compute(padding=..., masked=...)` for a matplotlib figure. With a kernel
(ipywidgets 7 or 8), every change of a control recomputes it, and an input the callback
refuses (a ValueError or KeyError: an empty sentence, a word the vocabulary lacks) shows
its message instead of a figure, never a traceback. Without one (the rendered book, no
network), the page holds one figure per combination of the controls' static values and a
few lines of JavaScript that swap them; its native inputs work from the keyboard.
"""

from __future__ import annotations

import base64
import html
import itertools
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .core import figure_png, live_and_static_bundle

REFUSED = (ValueError, KeyError)  # what a callback raises for input it cannot take


@dataclass(frozen=True)
class Control:
    """One input of an explorer: its kind, the values it takes live, the values the static
    page offers (a subset, one figure each), its first value, and its label."""

    kind: str  # "number", "choice", "toggle" or "text"
    live: tuple
    static: tuple
    start: object
    label: str
    fmt: Callable[[object], str] = str  # how a value is written beside the control

    def __post_init__(self):
        if not self.static:
            raise ValueError(f"control {self.label!r} needs at least one static value")
        if self.start not in self.static:
            raise ValueError(f"control {self.label!r}: the first value {self.start!r} must be "
                             f"one of its static values {list(self.static)}")


def number(values: Sequence, static: Sequence | None = None, start=None, label: str = "",
           fmt: Callable[[object], str] = str) -> Control:
    """A slider over `values` (live), and over `static` (default: the same) in the page,
    each value written as fmt(value)."""
    static = tuple(values if static is None else static)
    return Control("number", tuple(values), static, static[0] if start is None else start,
                   label, fmt)


def choice(options: Sequence, static: Sequence | None = None, start=None, label: str = ""
           ) -> Control:
    """A drop-down list of options live, and of `static` (default: the same) in the page."""
    static = tuple(options if static is None else static)
    return Control("choice", tuple(options), static, static[0] if start is None else start,
                   label)


def toggle(label: str, start: bool = True) -> Control:
    """A check box: True or False."""
    return Control("toggle", (True, False), (True, False), start, label)


def text(examples: Sequence[str], start=None, label: str = "") -> Control:
    """A text box live (computed when the reader presses Enter or leaves the box, so typing
    is not recomputed letter by letter); in the page, a list of the example texts."""
    examples = tuple(examples)
    return Control("text", examples, examples, examples[0] if start is None else start, label)


class Explorer:
    """A figure computed from the values of named controls; see the module docstring."""

    def __init__(self, compute: Callable[..., object], **controls: Control):
        if not controls:
            raise ValueError("an explorer needs at least one control")
        self.compute, self.controls = compute, controls
        self.timings: list[float] = []  # seconds per live callback, for the book's budget

    def render(self, **values) -> bytes:
        """The PNG of compute(**values), timed."""
        started = time.perf_counter()
        png = figure_png(self.compute(**values))
        self.timings.append(time.perf_counter() - started)
        return png

    def frames(self) -> dict[str, bytes]:
        """One PNG per combination of static values, keyed "i,j,..." by their indices."""
        names = list(self.controls)
        ranges = [range(len(self.controls[n].static)) for n in names]
        return {",".join(map(str, index)): self.render(**{
                    n: self.controls[n].static[i] for n, i in zip(names, index)})
                for index in itertools.product(*ranges)}

    def static_html(self) -> str:
        """Self-contained HTML and JavaScript (no kernel, no CDN) over the static grid."""
        sources = {key: "data:image/png;base64," + base64.b64encode(png).decode()
                   for key, png in self.frames().items()}
        inputs = "\n".join(f"<div>{_static_input(name, c)}</div>"
                           for name, c in self.controls.items())
        first = ",".join(str(c.static.index(c.start)) for c in self.controls.values())
        return f"""<div class="minibert-explorer" style="margin:0.5em 0;font-family:sans-serif">
{inputs}
<img alt="explorer figure" style="max-width:100%" src="{sources[first]}">
<script>(function () {{
  var root = document.currentScript.parentElement, sources = {json.dumps(sources)};
  var inputs = root.querySelectorAll("[data-control]"), image = root.querySelector("img");
  function update() {{
    var key = Array.prototype.map.call(inputs, function (input) {{
      var shown = input.parentElement.querySelector("output");
      if (input.type === "checkbox") return input.checked ? 0 : 1;
      if (shown) shown.textContent = JSON.parse(input.dataset.labels)[input.value];
      return input.value;
    }}).join(",");
    image.src = sources[key];
  }}
  inputs.forEach(function (input) {{
    input.addEventListener("input", update); input.addEventListener("change", update);
  }});
}})();</script>
</div>"""

    def widget(self):
        """The live view: one ipywidget per control and the computed figure below them."""
        import ipywidgets as widgets

        inputs = {name: _live_input(c) for name, c in self.controls.items()}
        image = widgets.Image(format="png")
        message = widgets.HTML()

        def update(_=None):
            values = {name: w.value for name, w in inputs.items()}
            try:
                image.value = self.render(**values)
            except REFUSED as error:  # the reader's input, not a bug: say what is wrong
                message.value = f"<b style='color:#b00'>{html.escape(str(error))}</b>"
                image.layout.display = "none"
            else:
                message.value = ""
                image.layout.display = None

        for w in inputs.values():
            w.observe(update, names="value")
        update()
        return widgets.VBox([*inputs.values(), message, image])

    def _repr_mimebundle_(self, include=None, exclude=None):
        return live_and_static_bundle(
            self.static_html(), f"<explorer over {', '.join(self.controls)}>", self.widget)


def _static_input(name: str, control: Control) -> str:
    """The page's input for one control: a range, a select or a check box."""
    label = html.escape(control.label or name)
    start = control.static.index(control.start)
    if control.kind == "toggle":
        checked = " checked" if control.start else ""
        return (f'<label><input type="checkbox" data-control="{name}"{checked}> '
                f"{label}</label>")
    shown = [control.fmt(v) for v in control.static]
    if len(shown) == 1:  # nothing to choose in the page: say so, keep its place in the key
        return (f'<input type="hidden" data-control="{name}" value="0">{label}: '
                f"{html.escape(shown[0])} (other values in Jupyter or Colab)")
    if control.kind == "number":
        return (f'<label>{label}: <input type="range" data-control="{name}" min="0" '
                f'max="{len(shown) - 1}" step="1" value="{start}" style="width:240px;'
                f"vertical-align:middle\" data-labels='{html.escape(json.dumps(shown))}'> "
                f"<output>{html.escape(shown[start])}</output></label>")
    options = "".join(f'<option value="{i}"{" selected" if i == start else ""}>'
                      f"{html.escape(v)}</option>" for i, v in enumerate(shown))
    return (f'<label>{label}: <select data-control="{name}" style="max-width:100%">'
            f"{options}</select></label>")


def _live_input(control: Control):
    """The ipywidget for one control."""
    import ipywidgets as widgets

    style = {"description_width": "initial"}
    if control.kind == "toggle":
        return widgets.Checkbox(value=control.start, description=control.label, style=style)
    if control.kind == "text":
        return widgets.Text(value=control.start, description=control.label, style=style,
                            continuous_update=False, layout=widgets.Layout(width="480px"))
    if control.kind == "number":
        return widgets.SelectionSlider(options=[(control.fmt(v), v) for v in control.live],
                                       value=control.start,
                                       description=control.label, style=style,
                                       continuous_update=False,
                                       layout=widgets.Layout(width="480px"))
    return widgets.Dropdown(options=list(control.live), value=control.start,
                            description=control.label, style=style)


def slider(render: Callable[[object], object], values: Sequence, label: str,
           start=None, fmt: Callable[[object], str] = str) -> Explorer:
    """A figure per value from `render(value)`, behind a slider labelled `label`: an explorer
    with one number control, drawn for every value in the page and live in Jupyter."""
    return Explorer(lambda value: render(value),
                    value=number(values, start=start, label=label, fmt=fmt))
