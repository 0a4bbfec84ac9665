"""BertConfig: the sizes and switches of a BERT, with Hugging Face's field names.

The field names are those of `transformers.BertConfig`, so a Hugging Face
`config.json` loads as is. The extra fields below the line are the book's
experiment switches; their defaults give exactly BERT.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

# Activation names we accept, mapped to the one the model implements.
# Hugging Face spells the tanh approximation "gelu_new" or "gelu_pytorch_tanh".
ACTIVATIONS = {
    "gelu": "gelu",
    "gelu_tanh": "gelu_tanh",
    "gelu_new": "gelu_tanh",
    "gelu_pytorch_tanh": "gelu_tanh",
    "relu": "relu",
    "tanh": "tanh",
    "identity": "identity",
    "linear": "identity",
}
POSITION_KINDS = ("absolute", "sinusoidal", "rotary", "alibi")  # "absolute" = learned (HF's name)
TABLE_POSITIONS = ("absolute", "sinusoidal")  # the kinds that add a position vector to the input
QKV_SHARING = ("none", "kv", "qk")
IDENTITY_PROJECTIONS = ("none", "qk", "v")
LAYER_NORM_POSITIONS = ("post", "pre")
ATTENTION_DIRECTIONS = ("bidirectional", "causal")
NORMALIZATIONS = ("layernorm", "rmsnorm", "batchnorm", "none")
ATTENTION_SCORES = ("dot", "additive")  # q·k (BERT's) or Bahdanau's v·tanh(W q + U k)
# Switches added after models were cached: left out of `to_dict` at their default, so that
# a model's config.json, and the zoo's key made from it, stay what they were.
LATE_SWITCHES = {"normalization": "layernorm", "residual": True,
                 "scale_word_embeddings": False, "attention_score": "dot"}


@dataclass
class BertConfig:
    """Everything that fixes a BERT's shape and behaviour."""

    vocab_size: int = 30522
    hidden_size: int = 768
    num_hidden_layers: int = 12
    num_attention_heads: int = 12
    intermediate_size: int = 3072  # 0: no feed-forward sublayer at all (the book's switch)
    hidden_act: str = "gelu"
    hidden_dropout_prob: float = 0.1
    attention_probs_dropout_prob: float = 0.1
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12
    pad_token_id: int = 0
    position_embedding_type: str = "absolute"
    tie_word_embeddings: bool = True
    num_labels: int = 2
    classifier_dropout: float | None = None
    # --- the book's experiment switches (defaults = BERT) ---
    use_qkv_projections: bool = True  # False: q = k = v = the layer input
    qkv_sharing: str = "none"  # "kv": one matrix for K and V; "qk": one for Q and K (Reformer)
    identity_projections: str = "none"  # "qk": q = k = the layer input; "v": v = the input
    mask_self_attention: bool = False  # forbid a token from attending to itself
    scale_attention_scores: bool = True  # divide q.k by sqrt(d_head)
    layer_norm_position: str = "post"  # "post" as BERT, "pre" as GPT-2 and most modern models
    attention_direction: str = "bidirectional"  # "causal": each token sees only its left
    normalization: str = "layernorm"  # the sublayers' and pre-LN's final norm (see NORMALIZATIONS)
    residual: bool = True  # False: no skip connection around either sublayer
    scale_word_embeddings: bool = False  # True: word vectors times sqrt(hidden_size) (Vaswani)
    attention_score: str = "dot"  # "additive": v·tanh(W q + U k) per head (see ATTENTION_SCORES)
    extra: dict = field(default_factory=dict, repr=False)  # unknown config.json keys, kept

    def __post_init__(self) -> None:
        check_positive_integers(self, (
            "vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
            "max_position_embeddings", "type_vocab_size", "num_labels",
        ))
        value = self.intermediate_size  # 0: no feed-forward sublayer (chapter 53)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(
                f"BertConfig.intermediate_size must be a positive integer, or 0 for no "
                f"feed-forward sublayer, got {value!r}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"BertConfig.hidden_size ({self.hidden_size}) must be divisible by "
                f"num_attention_heads ({self.num_attention_heads})"
            )
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not 0.0 <= value < 1.0:
                raise ValueError(f"BertConfig.{name} must lie in [0, 1), got {value!r}")
        if self.hidden_act not in ACTIVATIONS:
            raise ValueError(
                f"BertConfig.hidden_act {self.hidden_act!r} is unknown; choose one of "
                f"{sorted(ACTIVATIONS)}"
            )
        self._check_choice("position_embedding_type", POSITION_KINDS)
        self._check_choice("qkv_sharing", QKV_SHARING)
        self._check_choice("layer_norm_position", LAYER_NORM_POSITIONS)
        self._check_choice("attention_direction", ATTENTION_DIRECTIONS)
        self._check_choice("identity_projections", IDENTITY_PROJECTIONS)
        self._check_choice("normalization", NORMALIZATIONS)
        self._check_choice("attention_score", ATTENTION_SCORES)
        if not isinstance(self.residual, bool):
            raise ValueError(f"BertConfig.residual must be True or False, got {self.residual!r}")
        if not isinstance(self.scale_word_embeddings, bool):
            raise ValueError("BertConfig.scale_word_embeddings must be True or False, got "
                             f"{self.scale_word_embeddings!r}")
        if self.position_embedding_type == "rotary" and self.head_size % 2:
            raise ValueError(f"BertConfig.position_embedding_type 'rotary' rotates pairs of "
                             f"features: the head size ({self.head_size}) must be even")
        if not self.use_qkv_projections and self.qkv_sharing != "none":
            raise ValueError("BertConfig.qkv_sharing needs use_qkv_projections=True")
        if self.identity_projections != "none" and (
                not self.use_qkv_projections or self.qkv_sharing != "none"):
            raise ValueError("BertConfig.identity_projections needs use_qkv_projections=True "
                             "and qkv_sharing='none'")
        if self.initializer_range <= 0 or self.layer_norm_eps <= 0:
            raise ValueError("BertConfig.initializer_range and layer_norm_eps must be positive")
        if not 0 <= self.pad_token_id < self.vocab_size:
            raise ValueError(
                f"BertConfig.pad_token_id ({self.pad_token_id}) must lie in [0, vocab_size)"
            )

    def _check_choice(self, name: str, choices: tuple[str, ...]) -> None:
        value = getattr(self, name)
        if value not in choices:
            raise ValueError(f"BertConfig.{name} must be one of {choices}, got {value!r}")

    @property
    def head_size(self) -> int:
        """Width of one attention head: d_k = hidden_size / num_attention_heads."""
        return self.hidden_size // self.num_attention_heads

    @property
    def activation(self) -> str:
        """The canonical activation name (Hugging Face aliases resolved)."""
        return ACTIVATIONS[self.hidden_act]

    def replace(self, **changes) -> BertConfig:
        """A copy with some fields changed (and validated again)."""
        return dataclasses.replace(self, **changes)

    # --- config.json round trip ---
    @classmethod
    def from_dict(cls, values: dict) -> BertConfig:
        """Build from a Hugging Face config dict; keys we do not use are kept in `extra`."""
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in values.items() if k in names}
        extra = {k: v for k, v in values.items() if k not in names}
        return cls(**known, extra=extra)

    def to_dict(self) -> dict:
        values = {k: v for k, v in dataclasses.asdict(self).items()
                  if k != "extra" and not (k in LATE_SWITCHES and v == LATE_SWITCHES[k])}
        return {**self.extra, **values, "model_type": "bert"}

    @classmethod
    def from_json_file(cls, path: str | Path) -> BertConfig:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def to_json_file(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n")


def check_positive_integers(config, names: tuple[str, ...]) -> None:
    """Raise a ValueError naming the first of the config's fields `names` that does not hold
    a positive integer (a bool is not one), e.g. "BertConfig.hidden_size must be ..."."""
    for name in names:
        value = getattr(config, name)
        if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
            raise ValueError(f"{type(config).__name__}.{name} must be a positive integer, "
                             f"got {value!r}")


def bert_config_for(owner, **fields) -> BertConfig:
    """The BertConfig of a part of another model (an encoder-decoder's halves, ...), checked
    by BertConfig itself: an error names the field as `owner`'s config spells it, e.g.
    "EncoderDecoderConfig.hidden_size (60) must be divisible by num_attention_heads (8)"."""
    try:
        return BertConfig(**fields)
    except ValueError as error:
        raise ValueError(str(error).replace("BertConfig.", f"{type(owner).__name__}.")) from None


def preset(name: str, **changes) -> BertConfig:
    """A named size: "tiny" and "small" for the book's CPU experiments, "base" and "large"
    as published. Keyword arguments override fields, e.g. preset("tiny", vocab_size=500)."""
    sizes = {
        "tiny": dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=256, max_position_embeddings=128),
        "small": dict(hidden_size=128, num_hidden_layers=4, num_attention_heads=4,
                      intermediate_size=512, max_position_embeddings=256),
        "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                     intermediate_size=3072),
        "large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                      intermediate_size=4096),
    }
    if name not in sizes:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(sizes)}")
    return BertConfig(**{**sizes[name], **changes})
