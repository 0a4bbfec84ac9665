"""What the book's three sequence-to-sequence models share: their configs' common fields,
the batch they read and its checks, their output, and greedy generation step by step.

The models (`encoder_decoder.py`, `decoder_only.py`, `lstm_seq2seq.py`) read the same batch:
source_ids (B, S) with source_mask (B, S) (1 = token, 0 = padding, at the end of a row);
target_in_ids (B, T), the target shifted right behind a BOS token (teacher forcing: the whole
target in one pass); labels (B, T), the target itself, with -100 where nothing is predicted.
Shapes: B = batch, S = source length, T = target length, H = hidden size, V = target
vocabulary size, nh = heads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .config import (
    ACTIVATIONS,
    LAYER_NORM_POSITIONS,
    BertConfig,
    bert_config_for,
    check_positive_integers,
)
from .heads import IGNORE_INDEX


@dataclass
class Seq2SeqConfig:
    """The fields every sequence-to-sequence config holds: two vocabularies, whether they are
    one table, the width, the longest source and target, dropout and the padding id."""

    source_vocab_size: int = 1000
    target_vocab_size: int = 1000
    share_embeddings: bool = False  # one table for source, target and output: one vocabulary
    hidden_size: int = 64
    max_source_positions: int = 64
    max_target_positions: int = 64
    hidden_dropout_prob: float = 0.1
    pad_token_id: int = 0

    def __post_init__(self) -> None:
        name = type(self).__name__
        check_positive_integers(self, ("source_vocab_size", "target_vocab_size", "hidden_size",
                                       "max_source_positions", "max_target_positions"))
        if not isinstance(self.share_embeddings, bool):
            raise ValueError(f"{name}.share_embeddings must be True or False, got "
                             f"{self.share_embeddings!r}")
        if self.share_embeddings and self.source_vocab_size != self.target_vocab_size:
            raise ValueError(
                f"{name}.share_embeddings needs one vocabulary, but source_vocab_size "
                f"({self.source_vocab_size}) differs from target_vocab_size "
                f"({self.target_vocab_size})")
        if not 0.0 <= self.hidden_dropout_prob < 1.0:
            raise ValueError(f"{name}.hidden_dropout_prob must lie in [0, 1), got "
                             f"{self.hidden_dropout_prob!r}")
        smaller = min(self.source_vocab_size, self.target_vocab_size)
        if not 0 <= self.pad_token_id < smaller:
            raise ValueError(f"{name}.pad_token_id ({self.pad_token_id}) must lie in both "
                             f"vocabularies, [0, {smaller})")

    def replace(self, **changes):
        """A copy with some fields changed (and validated again)."""
        return dataclasses.replace(self, **changes)


@dataclass
class TransformerSeq2SeqConfig(Seq2SeqConfig):
    """The Transformer's fields beside the common ones, with BertConfig's names; BertConfig
    itself checks them (`bert_config`), its messages naming this config."""

    num_attention_heads: int = 2
    intermediate_size: int = 256
    hidden_act: str = "gelu"
    attention_probs_dropout_prob: float = 0.1
    layer_norm_position: str = "post"  # "post" as BERT and Vaswani et al., or "pre"
    initializer_range: float = 0.02
    layer_norm_eps: float = 1e-12

    def bert_config(self, **fields) -> BertConfig:
        """A BertConfig with this config's shared fields and the given ones (the vocabulary,
        layers and positions of one stack)."""
        shared = dict(hidden_size=self.hidden_size, num_attention_heads=self.num_attention_heads,
                      intermediate_size=self.intermediate_size, hidden_act=self.hidden_act,
                      hidden_dropout_prob=self.hidden_dropout_prob,
                      attention_probs_dropout_prob=self.attention_probs_dropout_prob,
                      layer_norm_position=self.layer_norm_position,
                      initializer_range=self.initializer_range,
                      layer_norm_eps=self.layer_norm_eps, pad_token_id=self.pad_token_id)
        return bert_config_for(self, **shared, **fields)

    def __post_init__(self) -> None:
        super().__post_init__()
        name = type(self).__name__
        if self.hidden_act not in ACTIVATIONS:  # BertConfig would check it too; said first
            raise ValueError(f"{name}.hidden_act {self.hidden_act!r} is unknown; choose one of "
                             f"{sorted(ACTIVATIONS)}")
        if self.layer_norm_position not in LAYER_NORM_POSITIONS:
            raise ValueError(f"{name}.layer_norm_position must be one of "
                             f"{LAYER_NORM_POSITIONS}, got {self.layer_norm_position!r}")
        self.bert_config(vocab_size=self.source_vocab_size)  # checks the shared fields


@dataclass
class Seq2SeqOutput:
    logits: torch.Tensor  # (B, T, V): the next target token's scores at every position
    loss: torch.Tensor | None = None  # mean cross-entropy over labels != -100
    cross_attentions: tuple[torch.Tensor, ...] | None = None  # per layer (B, nh, T, S)
    attentions: tuple[torch.Tensor, ...] | None = None  # self-attention, per layer


@dataclass
class Generation:
    tokens: torch.Tensor  # (B, n) the generated ids, BOS left out, padding after a row's EOS
    step_logits: torch.Tensor  # (B, n, V) the scores each step chose its token from
    num_steps: int  # sequential decoder steps: one per generated position


def check_batch(config: Seq2SeqConfig, source_ids: torch.Tensor, source_mask: torch.Tensor,
                target_in_ids: torch.Tensor, labels: torch.Tensor | None = None) -> None:
    """Name what is wrong with a batch, rather than fail deep inside an embedding."""
    if source_ids.dim() != 2 or target_in_ids.dim() != 2:
        raise ValueError(f"source_ids and target_in_ids must be (batch, length), got shapes "
                         f"{tuple(source_ids.shape)} and {tuple(target_in_ids.shape)}")
    if source_mask is None or source_mask.shape != source_ids.shape:
        raise ValueError(f"source_mask must have the shape of source_ids "
                         f"{tuple(source_ids.shape)}, got "
                         f"{None if source_mask is None else tuple(source_mask.shape)}")
    if target_in_ids.shape[0] != source_ids.shape[0]:
        raise ValueError(f"{source_ids.shape[0]} sources but {target_in_ids.shape[0]} targets")
    for what, ids, size, longest in (
            ("source", source_ids, config.source_vocab_size, config.max_source_positions),
            ("target", target_in_ids, config.target_vocab_size, config.max_target_positions)):
        if ids.shape[1] > longest:
            raise ValueError(f"{what} length {ids.shape[1]} exceeds the config's "
                             f"max_{what}_positions ({longest})")
        if ids.numel() and (ids.min() < 0 or ids.max() >= size):
            raise ValueError(f"{what} ids must lie in [0, {what}_vocab_size={size}), got values "
                             f"in [{int(ids.min())}, {int(ids.max())}]")
    mask = source_mask.long()
    if ((mask != 0) & (mask != 1)).any() or (mask[:, 1:] > mask[:, :-1]).any() or (
            mask.shape[1] and (mask[:, 0] == 0).any()):
        raise ValueError("source_mask must hold 1 for tokens then 0 for padding, at least one "
                         "token a row, with the padding at the end of the row")
    if labels is not None and labels.shape != target_in_ids.shape:
        raise ValueError(f"labels have shape {tuple(labels.shape)}, target_in_ids "
                         f"{tuple(target_in_ids.shape)}")
    if labels is not None and ((labels != IGNORE_INDEX) & (
            (labels < 0) | (labels >= config.target_vocab_size))).any():
        raise ValueError(f"labels must lie in [0, {config.target_vocab_size}) or be "
                         f"{IGNORE_INDEX} (no loss)")


def greedy_generate(next_logits: Callable[[torch.Tensor], torch.Tensor], config: Seq2SeqConfig,
                    batch_size: int, max_length: int, bos_id: int, eos_id: int | None,
                    device) -> Generation:
    """Generate step by step: start from BOS, feed the decoder the prefix so far, append the
    highest-scoring token, stop when every row has said EOS or after `max_length` tokens
    (eos_id None: always `max_length`, e.g. to time generation against the length).
    `next_logits(prefix (B, t)) -> (B, t or 1, V)` is the model's pass over the prefix, its
    last position scoring the next token: the teacher-forced pass over the whole prefix, or a
    step that computes the newest token alone. A row that is done is fed padding.
    Run it in eval mode: dropout would make each step's choice noisy."""
    token_ids = {"bos_id": bos_id} if eos_id is None else {"bos_id": bos_id, "eos_id": eos_id}
    for name, value in token_ids.items():
        if not isinstance(value, int) or not 0 <= value < config.target_vocab_size:
            raise ValueError(f"{name} must be a target id in [0, {config.target_vocab_size}), "
                             f"got {value!r}")
    if not isinstance(max_length, int) or not 1 <= max_length <= config.max_target_positions:
        raise ValueError(f"max_length must lie in [1, max_target_positions="
                         f"{config.max_target_positions}], got {max_length!r}")
    prefix = torch.full((batch_size, 1), bos_id, dtype=torch.long, device=device)  # (B, 1)
    done = torch.zeros(batch_size, dtype=torch.bool, device=device)  # (B,)
    step_logits = []
    with torch.no_grad():
        for _ in range(max_length):
            logits = next_logits(prefix)[:, -1]  # (B, V)
            token = logits.argmax(dim=-1).masked_fill(done, config.pad_token_id)  # (B,)
            step_logits.append(logits)
            prefix = torch.cat([prefix, token[:, None]], dim=1)  # (B, t + 1)
            if eos_id is not None:
                done = done | (token == eos_id)
            if done.all():
                break
    return Generation(prefix[:, 1:], torch.stack(step_logits, dim=1), len(step_logits))
