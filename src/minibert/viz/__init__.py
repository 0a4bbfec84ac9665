"""Figures for the book: attention heatmaps, a slider and a head view that work in three
places, and the figures of every chapter, one module per concern.

`slider(render, values, label)` draws one figure per value. In Jupyter or Colab it shows a
live ipywidgets slider; in the static book (no kernel, no network) the same output carries
a small self-contained HTML+JS slider that swaps the pre-drawn images. It is an explorer
with one control (`explorer.py`: controls whose callback computes a figure). `core.py`
holds what every figure shares: `figure_png`, and `moving_average`, the trend of a noisy
per-step loss. `paired_seeds` draws a paired comparison so that the pairing
shows, and `what_the_tiny_models_showed` a chapter's claims: each headline with
its figure (`headline_figure`), then a table of the others (`claims.py`).
`head_view_html` returns a self-contained HTML+JS head view (no CDN, no network): pick
a sentence, a layer and a head, and see the attention as links between two token columns
and as a map. It and every other chapter figure live in the module of the
book part whose chapters draw it, `part1.py` to `part5.py`, so that a chapter's figures
are read in one place. Every name is importable from here: `from minibert import viz`,
then `viz.slider(...)`, whichever module holds it.
"""

from . import explorer
from .claims import (
    OUTCOME_COLORS,
    TinyModelsShowed,
    headline_figure,
    paired_seeds,
    what_the_tiny_models_showed,
)
from .core import WIDGET_VIEW, figure_png, live_and_static_bundle, moving_average
from .explorer import slider
from .part1 import (
    attention_against_recurrence,
    attention_heatmap,
    layer_cost,
    mixing_matrices,
    padded_attention_map,
    recall_training_frame,
)
from .part2 import position_similarities, readout_by_layer, row_movement, token_recovery
from .part3 import (
    masked_row_answers,
    nsp_pair_card,
    probe_curves,
    seeds_across_settings,
    visible_context_card,
)
from .part4 import (
    accuracy_curves,
    classifier_answers,
    pooled_vectors_frame,
    position_accuracy_bars,
    span_scores_card,
    strategy_spans,
    window_votes,
)
from .part5 import attention_json, head_view_html, heads_mosaic, pair_cosine_strips, special_token_shares

__all__ = [
    "explorer", "figure_png", "slider", "WIDGET_VIEW", "live_and_static_bundle", "moving_average",
    "paired_seeds", "OUTCOME_COLORS", "headline_figure", "TinyModelsShowed",
    "what_the_tiny_models_showed",
    "attention_heatmap", "padded_attention_map", "attention_against_recurrence", "layer_cost",
    "recall_training_frame", "mixing_matrices",
    "token_recovery", "position_similarities", "row_movement", "readout_by_layer",
    "masked_row_answers", "seeds_across_settings", "nsp_pair_card", "visible_context_card",
    "probe_curves",
    "accuracy_curves", "pooled_vectors_frame", "classifier_answers", "span_scores_card",
    "strategy_spans", "position_accuracy_bars", "window_votes",
    "attention_json", "head_view_html", "special_token_shares", "heads_mosaic",
    "pair_cosine_strips",
]
