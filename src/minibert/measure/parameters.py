"""Where a BERT's parameters live: a count for each component, by formula and from a module.

`count_by_formula(config)` writes each count from the config's sizes (V·H for the word
table, H²+H for a linear map, ...); `count_by_module(model)` walks a built model's
parameters and sorts them into the same components by their Hugging Face names. The two
must agree, which is what the book's anatomy chapter checks. `build_on_meta` builds a model
without allocating its weights, so BERT-large can be counted in a fraction of a second.
`seq2seq_count_by_formula` counts the sequence-to-sequence models the same way, and
`sized_to_budget` picks the width that gives one of them a parameter budget.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from ..model import BertConfig
from ..model.config import TABLE_POSITIONS
from ..model.decoder_only import DecoderOnlyConfig
from ..model.encoder_decoder import EncoderDecoderConfig
from ..model.layers import attention_projections
from ..model.lstm_seq2seq import LstmSeq2SeqConfig
from ..model.seq2seq import Seq2SeqConfig

# Parameters per hidden feature of each `BertConfig.normalization`: LayerNorm and BatchNorm
# a gain and a bias, RMSNorm a gain only (its running statistics are buffers, not counted).
NORM_PARAMETERS = {"layernorm": 2, "batchnorm": 2, "rmsnorm": 1, "none": 0}

# Every component, in reading order, with the group it belongs to.
COMPONENTS: dict[str, str] = {
    "word embeddings": "embeddings",
    "position embeddings": "embeddings",
    "segment embeddings": "embeddings",
    "embedding LayerNorm": "embeddings",
    "attention query": "layers",
    "attention key": "layers",
    "attention value": "layers",
    "attention additive scorer": "layers",  # attention_score="additive" only
    "attention output": "layers",
    "attention LayerNorm": "layers",
    "feed-forward in": "layers",
    "feed-forward out": "layers",
    "feed-forward LayerNorm": "layers",
    "final LayerNorm": "layers",  # pre-LN models only
    "pooler": "pooler",
    "MLM transform": "heads",
    "MLM transform LayerNorm": "heads",
    "MLM decoder": "heads",  # absent when tied to the word embeddings
    "MLM bias": "heads",
    "NSP classifier": "heads",
    "task classifier": "heads",
}
GROUPS = ("embeddings", "layers", "pooler", "heads")

# Parameter name (Hugging Face spelling, any "bert." prefix removed) -> component.
_NAME_RULES: list[tuple[str, str]] = [
    (r"embeddings\.word_embeddings\.", "word embeddings"),
    (r"embeddings\.position_embeddings\.", "position embeddings"),
    (r"embeddings\.token_type_embeddings\.", "segment embeddings"),
    (r"embeddings\.LayerNorm\.", "embedding LayerNorm"),
    (r"encoder\.layer\.\d+\.attention\.self\.query\.", "attention query"),
    (r"encoder\.layer\.\d+\.attention\.self\.key\.", "attention key"),
    (r"encoder\.layer\.\d+\.attention\.self\.value\.", "attention value"),
    (r"encoder\.layer\.\d+\.attention\.self\.additive_", "attention additive scorer"),
    (r"encoder\.layer\.\d+\.attention\.output\.dense\.", "attention output"),
    (r"encoder\.layer\.\d+\.attention\.output\.LayerNorm\.", "attention LayerNorm"),
    (r"encoder\.layer\.\d+\.intermediate\.dense\.", "feed-forward in"),
    (r"encoder\.layer\.\d+\.output\.dense\.", "feed-forward out"),
    (r"encoder\.layer\.\d+\.output\.LayerNorm\.", "feed-forward LayerNorm"),
    (r"encoder\.LayerNorm\.", "final LayerNorm"),
    (r"pooler\.dense\.", "pooler"),
    (r"cls\.predictions\.transform\.dense\.", "MLM transform"),
    (r"cls\.predictions\.transform\.LayerNorm\.", "MLM transform LayerNorm"),
    (r"cls\.predictions\.decoder\.", "MLM decoder"),
    (r"cls\.predictions\.bias$", "MLM bias"),
    (r"cls\.seq_relationship\.", "NSP classifier"),
    (r"(classifier|qa_outputs)\.", "task classifier"),
]


def component_of(parameter_name: str) -> str:
    """The component a parameter belongs to, from its state_dict name."""
    name = parameter_name.removeprefix("bert.")
    for pattern, component in _NAME_RULES:
        if re.match(pattern, name):
            return component
    raise KeyError(f"no component matches the parameter {parameter_name!r}")


def count_by_module(model: nn.Module) -> dict[str, int]:
    """Parameters per component, counted from the model itself (a tied matrix counts once,
    under the word embeddings). Components the model lacks are left out."""
    counts: dict[str, int] = {}
    for name, parameter in model.named_parameters():  # tied tensors are listed once
        component = component_of(name)
        counts[component] = counts.get(component, 0) + parameter.numel()
    return {c: counts[c] for c in COMPONENTS if c in counts}


def count_by_formula(config: BertConfig, pooler: bool = True,
                     pretraining_heads: bool = False) -> dict[str, int]:
    """Parameters per component, written from the sizes: V words, P positions, S segments,
    hidden size H, feed-forward width I, L layers. A linear map from a to b holds a·b + b.
    Matches BertModel (pooler=True), BertModel(add_pooling_layer=False) (pooler=False)
    and BertForPreTraining (pretraining_heads=True)."""
    V, P, S = config.vocab_size, config.max_position_embeddings, config.type_vocab_size
    H, I, L = config.hidden_size, config.intermediate_size, config.num_hidden_layers

    def linear(n_in: int, n_out: int) -> int:
        return n_in * n_out + n_out

    layer_norm = 2 * H  # a gain and a bias per feature
    norm = NORM_PARAMETERS[config.normalization] * H  # the sublayers' and final norm
    counts = {
        "word embeddings": V * H,
        "position embeddings": P * H if config.position_embedding_type in TABLE_POSITIONS
        else 0,  # rotary and ALiBi positions hold no table
        "segment embeddings": S * H,
        "embedding LayerNorm": layer_norm,
    }
    for name in attention_projections(config):  # the query, key and value maps it holds
        counts[f"attention {name}"] = L * linear(H, H)
    if config.attention_score == "additive":  # per head W, U (hs x hs) and v (hs)
        hs = config.head_size
        counts["attention additive scorer"] = L * config.num_attention_heads * (2 * hs * hs + hs)
    counts.update({
        "attention output": L * linear(H, H),
        "attention LayerNorm": L * norm,
        "feed-forward in": L * linear(H, I),  # I = 0: no feed-forward sublayer, none
        "feed-forward out": L * linear(I, H) if I else 0,
        "feed-forward LayerNorm": L * norm if I else 0,
    })
    if config.layer_norm_position == "pre":
        counts["final LayerNorm"] = norm
    counts = {c: n for c, n in counts.items() if n}  # no norm: no component
    if pooler or pretraining_heads:
        counts["pooler"] = linear(H, H)
    if pretraining_heads:
        counts["MLM transform"] = linear(H, H)
        counts["MLM transform LayerNorm"] = layer_norm
        if not config.tie_word_embeddings:
            counts["MLM decoder"] = V * H
        counts["MLM bias"] = V
        counts["NSP classifier"] = linear(H, 2)
    return {c: counts[c] for c in COMPONENTS if c in counts}


def group_totals(counts: dict[str, int]) -> dict[str, int]:
    """Sum the components into the four groups: embeddings, layers, pooler, heads."""
    totals = dict.fromkeys(GROUPS, 0)
    for component, count in counts.items():
        totals[COMPONENTS[component]] += count
    return totals


def embedding_share(config: BertConfig) -> float:
    """The fraction of a BertModel's parameters that sit in the embedding tables."""
    totals = group_totals(count_by_formula(config))
    return totals["embeddings"] / sum(totals.values())


def build_on_meta(model_class: type[nn.Module], config: BertConfig) -> nn.Module:
    """Build a model on PyTorch's meta device: every tensor has a shape and no storage,
    so counting BERT-large's parameters allocates nothing and takes a moment."""
    with torch.device("meta"):
        return model_class(config)


# How each component's count is written, for tables (L = number of layers).
FORMULAS: dict[str, str] = {
    "word embeddings": "V·H",
    "position embeddings": "P·H",
    "segment embeddings": "S·H",
    "embedding LayerNorm": "2H",
    "attention query": "L·(H²+H)",
    "attention key": "L·(H²+H)",
    "attention value": "L·(H²+H)",
    "attention output": "L·(H²+H)",
    "attention LayerNorm": "L·2H",
    "feed-forward in": "L·(H·I+I)",
    "feed-forward out": "L·(I·H+H)",
    "feed-forward LayerNorm": "L·2H",
    "final LayerNorm": "2H",
    "pooler": "H²+H",
    "MLM transform": "H²+H",
    "MLM transform LayerNorm": "2H",
    "MLM decoder": "V·H",
    "MLM bias": "V",
    "NSP classifier": "2H+2",
    "task classifier": "H·labels+labels",
}


def draw_architecture(ax, config: BertConfig) -> None:
    """Draw BertModel as a block diagram, bottom to top: inputs, embeddings, one encoder
    layer (repeated L times) with its residual paths, pooler; each block labelled with its
    parameter count (per layer inside the repeated frame)."""
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    counts = count_by_formula(config)
    L = config.num_hidden_layers

    def per_layer(*names: str) -> int:
        return sum(counts.get(n, 0) for n in names) // L

    embeddings = group_totals(counts)["embeddings"]
    attention = per_layer("attention query", "attention key", "attention value",
                          "attention output")
    ffn = per_layer("feed-forward in", "feed-forward out")
    norm = per_layer("attention LayerNorm")
    in_layer = " parameters per layer"
    blocks = [  # (y centre, title, parameter note, face colour)
        (1.0, "token ids · segment ids · positions", "", "white"),
        (2.6, "Embeddings: word + position + segment, LayerNorm",
         f"{embeddings:,} parameters", "#cfe2f3"),
        (4.5, "Multi-head self-attention (Q, K, V, output)", f"{attention:,}{in_layer}",
         "#fce5cd"),
        (6.0, "Add & LayerNorm", f"{norm:,}{in_layer}", "#eeeeee"),
        (7.5, f"Feed-forward H→{config.intermediate_size}→H, {config.hidden_act.upper()}",
         f"{ffn:,}{in_layer}", "#d9ead3"),
        (9.0, "Add & LayerNorm", f"{norm:,}{in_layer}", "#eeeeee"),
        (11.0, "Pooler: tanh(W·h[CLS] + b)", f"{counts.get('pooler', 0):,} parameters",
         "#ead1dc"),
    ]
    width, height, left = 6.0, 0.9, 1.6
    centre, right = left + width / 2, left + width
    for y, title, note, colour in blocks:
        ax.add_patch(FancyBboxPatch((left, y - height / 2), width, height,
                                    boxstyle="round,pad=0.05", facecolor=colour,
                                    edgecolor="black", linewidth=1))
        ax.text(centre, y + (0.15 if note else 0), title, ha="center", va="center", fontsize=9)
        if note:
            ax.text(centre, y - 0.22, note, ha="center", va="center", fontsize=8,
                    color="#444444")
    for (y0, *_), (y1, *_) in zip(blocks, blocks[1:]):  # the main path, bottom to top
        ax.add_patch(FancyArrowPatch((centre, y0 + height / 2 + 0.05),
                                     (centre, y1 - height / 2 - 0.05),
                                     arrowstyle="-|>", mutation_scale=12))
    for start, end in ((3.75, 6.0), (6.75, 9.0)):  # residual paths: around each sublayer
        ax.plot([centre, right + 0.5, right + 0.5], [start, start, end], color="#777777",
                linewidth=1)
        ax.add_patch(FancyArrowPatch((right + 0.5, end), (right + 0.08, end),
                                     arrowstyle="-|>", mutation_scale=12, color="#777777"))
    ax.text(right + 0.6, 4.9, "residual", rotation=90, va="center", fontsize=8,
            color="#777777")
    ax.add_patch(FancyBboxPatch((left - 0.3, 3.6), width + 1.3, 6.15, boxstyle="round,pad=0.1",
                                fill=False, linestyle="--", edgecolor="#555555"))
    ax.text(left - 0.5, 6.7, f"× L = {L}", ha="right", va="center", fontsize=11,
            fontweight="bold")
    ax.add_patch(FancyArrowPatch((right + 0.2, 9.9), (right + 1.0, 10.6), arrowstyle="-|>",
                                 mutation_scale=12))
    ax.text(right + 1.05, 10.75, "sequence output:\none vector per token", ha="left",
            va="center", fontsize=8)
    ax.set_xlim(0, 10.5)
    ax.set_ylim(0.3, 11.8)
    ax.axis("off")


def seq2seq_count_by_formula(config: Seq2SeqConfig) -> dict[str, int]:
    """Parameters per part of a sequence-to-sequence model (`EncoderDecoderModel`,
    `DecoderOnlyModel`, `LstmEncoderDecoder`), written from its config's sizes; a shared
    table counts once, under the source. The Transformers' stacks are counted by
    `count_by_formula`; a decoder layer adds cross-attention (three maps, an output map, a
    norm) to a BERT layer; an LSTM layer of width h reading n features holds 4(n·h + h² + 2h)."""
    H, V_src, V_tgt = config.hidden_size, config.source_vocab_size, config.target_vocab_size
    shared_table = V_tgt * H if config.share_embeddings else 0  # counted with the source

    def stack(bert_config: BertConfig) -> dict[str, int]:
        return group_totals(count_by_formula(bert_config, pooler=False))

    if isinstance(config, EncoderDecoderConfig):
        encoder, decoder = stack(config.encoder_config()), stack(config.decoder_config())
        norm = NORM_PARAMETERS[config.decoder_config().normalization] * H
        counts = {
            "encoder embeddings": encoder["embeddings"],
            "encoder layers": encoder["layers"],
            "decoder embeddings": decoder["embeddings"] - shared_table,
            "decoder layers": decoder["layers"],
            "cross-attention": config.num_decoder_layers * (4 * (H * H + H) + norm),
        }
    elif isinstance(config, DecoderOnlyConfig):
        joined = stack(config.stack_config())  # the table holds both vocabularies
        counts = {"embeddings": joined["embeddings"], "layers": joined["layers"]}
    elif isinstance(config, LstmSeq2SeqConfig):
        h, L = H // 2, config.num_layers
        hs = H // config.num_attention_heads  # the additive scorer's W, U (hs x hs), v (hs)

        def lstm(inputs: int, width: int) -> int:
            return 4 * (inputs * width + width * width + 2 * width)

        counts = {
            "source embeddings": V_src * H,
            "target embeddings": V_tgt * H - shared_table,
            "encoder LSTM": L * 2 * lstm(H, h),  # two directions; a layer reads 2h = H features
            "bridge": H * H + H,
            "decoder LSTM": L * lstm(H, H),
            "attention": 3 * (H * H + H),  # query, key and value maps
            "additive scorer": (config.num_attention_heads * (2 * hs * hs + hs)
                                if config.attention_score == "additive" else 0),
            "attentional state": 2 * H * H + H,
        }
    else:
        raise TypeError(f"no formula for {type(config).__name__}")
    return {**counts, "output bias": V_tgt}


def sized_to_budget(config: Seq2SeqConfig, budget: int, multiple_of: int | None = None,
                    intermediate_ratio: int | None = None) -> Seq2SeqConfig:
    """The config with the hidden size whose parameter count (by formula) lies closest to
    `budget`: sizes are multiples of `multiple_of` (by default twice the heads, so that the
    heads divide it and the LSTM encoder's two directions halve it); with
    `intermediate_ratio` the feed-forward width follows as ratio × hidden size. So that a
    chapter compares models at matched parameters."""
    if not isinstance(budget, int) or budget <= 0:
        raise ValueError(f"budget must be a positive number of parameters, got {budget!r}")

    def sized(width: int) -> Seq2SeqConfig:
        changes = {"hidden_size": width}
        if intermediate_ratio is not None:
            changes["intermediate_size"] = intermediate_ratio * width
        return config.replace(**changes)

    def total(width: int) -> int:
        return sum(seq2seq_count_by_formula(sized(width)).values())

    step = multiple_of or 2 * config.num_attention_heads
    width, best = step, step
    while total(width) <= budget:  # counts grow with the width: stop past the budget
        width += step
        if abs(total(width) - budget) < abs(total(best) - budget):
            best = width
    return sized(best)
