"""What every chapter's figures share: PNG frames, the notebook output that carries a live
widget beside its static HTML, a moving average."""

from __future__ import annotations

import io
from collections.abc import Callable

import matplotlib.pyplot as plt
import numpy as np


def figure_png(fig, dpi: int = 80) -> bytes:
    """The figure as PNG bytes; the figure is closed so it is not displayed twice."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    return buffer.getvalue()


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


def moving_average(values, width: int = 25) -> np.ndarray:
    """Moving average over `width` steps (mode='valid'), to see the trend of a noisy per-step
    loss: len(values) - width + 1 points, point i the mean of steps i .. i + width - 1."""
    return np.convolve(values, np.ones(width) / width, mode="valid")
