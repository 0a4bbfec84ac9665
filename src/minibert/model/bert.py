"""BertModel, the encoder every chapter uses: token ids in, one vector per token (and a
pooled sentence vector) out; plus what every minibert model shares (initialisation,
loading and saving Hugging Face-format weights, counting parameters).

Shapes: B = batch, T = sequence length, H = hidden size, nh = heads, L = layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from . import weights
from .config import BertConfig
from .layers import BertEmbeddings, BertEncoder, BertPooler, init_module, is_batched


@dataclass
class BertModelOutput:
    last_hidden_state: torch.Tensor  # (B, T, H)
    pooler_output: torch.Tensor | None = None  # (B, H): tanh(W h_[CLS] + b)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L+1 tensors (B, T, H)
    attentions: tuple[torch.Tensor, ...] | None = None  # L tensors (B, nh, T, T)


INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")  # what BertModel.forward reads


def encoder_of(model: nn.Module) -> BertModel:
    """The BertModel inside a task or pre-training model (or the model itself)."""
    return getattr(model, "bert", model)


def model_inputs(batch: dict[str, torch.Tensor], device) -> dict[str, torch.Tensor]:
    """The encoder's inputs from a batch (labels and other columns left out), on `device`."""
    return {name: batch[name].to(device) for name in INPUT_NAMES if name in batch}


class BertPreTrainedModel(nn.Module):
    """What every minibert model shares: initialisation, loading, saving, counting."""

    def init_weights(self) -> None:
        """BERT's initialisation (see `init_module`) of every module but the encoder inside
        a task model, which initialised itself when it was built."""
        done = set(self.bert.modules()) if isinstance(getattr(self, "bert", None), BertModel) else set()
        for module in reversed(list(self.modules())):  # children first: a parent may override
            if module not in done:
                init_module(module, self.config)

    def tie_weights(self) -> None:
        """Make the MLM decoder use the input embedding table, when the config ties them."""
        if self.config.tie_word_embeddings and hasattr(self, "cls"):
            self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def num_parameters(self) -> int:
        """Number of distinct parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters())

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @classmethod
    def from_pretrained(cls, directory, config: BertConfig | None = None, **config_changes):
        """Load a Hugging Face-format directory (config.json + model.safetensors)."""
        return weights.load_pretrained(cls, directory, config=config, **config_changes)

    def save_pretrained(self, directory) -> None:
        """Write config.json + model.safetensors that `transformers` can load."""
        weights.save_pretrained(self, directory)


class BertModel(BertPreTrainedModel):
    """The encoder: token ids in, one vector per token (and a pooled sentence vector) out."""

    def __init__(self, config: BertConfig, add_pooling_layer: bool = True):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.init_weights()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
        position_ids: torch.Tensor | None = None,
    ) -> BertModelOutput:
        """input_ids (B, T); attention_mask (B, T) with 1 = real token and 0 = padding (or a
        full (B, T, T) matrix, 1 = may attend); token_type_ids (B, T) segment ids;
        position_ids (B, T) each token's position, 0..T-1 when not given."""
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        if not (is_batched() or torch.compiler.is_exporting()):
            # vmap and torch.export cannot trace data-dependent checks: the caller runs them
            self.check_inputs(input_ids, attention_mask, token_type_ids, position_ids)
        x = self.embeddings(input_ids, token_type_ids, position_ids)  # (B, T, H)
        additive_mask = self.additive_mask(attention_mask, input_ids.shape[1], x.dtype, x.device)
        x, hidden_states, attentions = self.encoder(x, additive_mask, output_attentions,
                                                    position_ids)
        return BertModelOutput(
            last_hidden_state=x,
            pooler_output=self.pooler(x) if self.pooler is not None else None,
            hidden_states=tuple(hidden_states) if output_hidden_states else None,
            attentions=tuple(attentions) if output_attentions else None,
        )

    def check_inputs(self, input_ids, attention_mask, token_type_ids, position_ids=None) -> None:
        """Name what is wrong with the inputs, rather than fail deep inside an embedding."""
        config = self.config
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, seq_len), got shape {tuple(input_ids.shape)}")
        B, T = input_ids.shape
        if T > config.max_position_embeddings:
            raise ValueError(
                f"sequence length {T} exceeds max_position_embeddings "
                f"({config.max_position_embeddings}): truncate or split the input"
            )
        if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= config.vocab_size):
            raise ValueError(
                f"input_ids must lie in [0, vocab_size={config.vocab_size}), got values in "
                f"[{int(input_ids.min())}, {int(input_ids.max())}]"
            )
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids has shape {tuple(token_type_ids.shape)}, "
                f"input_ids has {tuple(input_ids.shape)}"
            )
        if token_type_ids.numel() and (
            token_type_ids.min() < 0 or token_type_ids.max() >= config.type_vocab_size
        ):
            raise ValueError(
                f"segment id {int(token_type_ids.max())} is beyond type_vocab_size "
                f"({config.type_vocab_size}): token_type_ids must lie in "
                f"[0, {config.type_vocab_size})"
            )
        if position_ids is not None and (
            position_ids.shape != input_ids.shape or (position_ids.numel() and (
                position_ids.min() < 0
                or position_ids.max() >= config.max_position_embeddings))):
            raise ValueError(
                f"position_ids must have the shape of input_ids {tuple(input_ids.shape)} and "
                f"lie in [0, max_position_embeddings={config.max_position_embeddings}); got "
                f"shape {tuple(position_ids.shape)}")
        if attention_mask is not None and tuple(attention_mask.shape) not in ((B, T), (B, T, T)):
            raise ValueError(
                f"attention_mask has shape {tuple(attention_mask.shape)}; expected "
                f"(batch, seq_len) = {(B, T)} or (batch, seq_len, seq_len) = {(B, T, T)}"
            )

    def additive_mask(self, attention_mask, T, dtype, device) -> torch.Tensor | None:
        """The mask the layers add to their scores (see `additive_mask`)."""
        return additive_mask(self.config, attention_mask, T, dtype, device)


def additive_mask(config: BertConfig, attention_mask: torch.Tensor | None, T: int, dtype,
                  device) -> torch.Tensor | None:
    """0 where attention is allowed, the dtype's most negative number where it is not, from a
    padding mask (B, T) or a full (B, T, T) matrix (1 = may attend), the config's direction
    and its self-mask switch. Shape (B, 1, 1, T), (B, 1, T, T) or (T, T), broadcast over
    heads (and queries); None when everything is allowed. Made here alone."""
    allowed = None  # boolean, broadcastable to (B, 1, T, T)
    if attention_mask is not None:
        allowed = attention_mask.bool()
        allowed = allowed[:, None, None, :] if allowed.dim() == 2 else allowed[:, None]
    if config.attention_direction == "causal":
        causal = torch.ones(T, T, dtype=torch.bool, device=device).tril()
        allowed = causal if allowed is None else allowed & causal
    if config.mask_self_attention:
        not_self = ~torch.eye(T, dtype=torch.bool, device=device)
        allowed = not_self if allowed is None else allowed & not_self
    if allowed is None:
        return None
    return (~allowed).to(dtype) * torch.finfo(dtype).min
