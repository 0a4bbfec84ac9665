"""The decoder-only model given the source as a prefix, as GPT translates: one causal stack
(a BertModel with causal attention) over `[source] [BOS] [target]`, the loss on the target.

It reads the encoder-decoder's batch (`minibert.model.seq2seq`) and joins it into one
sequence: the source's tokens, then the target's input, whose BOS separates the two (it
plays [SEP]'s part); segment 0 marks the source and 1 the target, and the positions skip
the source's padding, which no token attends to. With two vocabularies the table holds the
source's rows, then the target's (target ids shifted by the source vocabulary's size), and
the output layer is the target's rows (tied); with `share_embeddings` one vocabulary and
one table. prefix_attention="bidirectional" makes it a prefix LM (Raffel et al.'s T5
study): the source's tokens see each other both ways, the target stays causal.
Shapes: B = batch, S = source length, T = target length, N = S + T, V = target vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .bert import BertModel, additive_mask
from .config import BertConfig, check_positive_integers
from .heads import masked_lm_loss
from .seq2seq import (
    Generation,
    Seq2SeqOutput,
    TransformerSeq2SeqConfig,
    check_batch,
    greedy_generate,
)

PREFIX_ATTENTIONS = ("causal", "bidirectional")


@dataclass
class DecoderOnlyConfig(TransformerSeq2SeqConfig):
    """The sizes of a decoder-only model: the common fields (`Seq2SeqConfig`,
    `TransformerSeq2SeqConfig`), its depth, and how the source's tokens attend."""

    num_hidden_layers: int = 4
    prefix_attention: str = "causal"  # "bidirectional": a prefix LM (see PREFIX_ATTENTIONS)

    def __post_init__(self) -> None:
        check_positive_integers(self, ("num_hidden_layers",))
        if self.prefix_attention not in PREFIX_ATTENTIONS:
            raise ValueError(f"DecoderOnlyConfig.prefix_attention must be one of "
                             f"{PREFIX_ATTENTIONS}, got {self.prefix_attention!r}")
        super().__post_init__()

    @property
    def target_offset(self) -> int:
        """Where the target's rows start in the one table: 0 when the vocabulary is shared."""
        return 0 if self.share_embeddings else self.source_vocab_size

    def stack_config(self) -> BertConfig:
        """The BertConfig of the one stack: both vocabularies, room for source and target."""
        return self.bert_config(
            vocab_size=self.target_offset + self.target_vocab_size, type_vocab_size=2,
            num_hidden_layers=self.num_hidden_layers,
            max_position_embeddings=self.max_source_positions + self.max_target_positions,
            attention_direction="causal" if self.prefix_attention == "causal"
            else "bidirectional")


def prefix_attention_mask(source_mask: torch.Tensor, target_length: int,
                          bidirectional_prefix: bool) -> torch.Tensor:
    """Which of the N = S + T joined tokens each token may attend to (B, N, N), True =
    allowed: the tokens at or before it, never the source's padding; with a bidirectional
    prefix, every source token as well when the query is a source token."""
    B, S = source_mask.shape
    N = S + target_length
    real = torch.cat([source_mask.bool(), source_mask.new_ones(B, target_length, dtype=torch.bool)],
                     dim=1)  # (B, N)
    allowed = torch.ones(N, N, dtype=torch.bool, device=source_mask.device).tril()  # (N, N)
    if bidirectional_prefix:
        allowed[:S, :S] = True
    return allowed & real[:, None, :]  # (B, N, N)


class DecoderOnlyModel(nn.Module):
    """One causal stack over the source and the target; scores for the target's positions."""

    def __init__(self, config: DecoderOnlyConfig):
        super().__init__()
        self.config = config
        self.bert = BertModel(config.stack_config(), add_pooling_layer=False)
        self.output_bias = nn.Parameter(torch.zeros(config.target_vocab_size))  # (V,)

    def output_scores(self, hidden: torch.Tensor) -> torch.Tensor:
        """The next target token's scores (..., V) from the stack's states (..., H): the
        table's target rows (tied) and a bias."""
        table = self.bert.embeddings.word_embeddings.weight  # (offset + V, H)
        return F.linear(hidden, table[self.config.target_offset:], self.output_bias)

    def joined(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
               target_in_ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """The stack's inputs for `[source] [BOS] [target]`: ids, segments and positions
        (B, N) and the attention mask (B, N, N)."""
        T = target_in_ids.shape[1]
        target_mask = torch.ones_like(target_in_ids)  # (B, T)
        real = torch.cat([source_mask.long(), target_mask], dim=1)  # (B, N)
        return dict(
            input_ids=torch.cat([source_ids, target_in_ids + self.config.target_offset], dim=1),
            token_type_ids=torch.cat([torch.zeros_like(source_ids), target_mask], dim=1),
            position_ids=(real.cumsum(dim=1) - 1).clamp(min=0),  # padding takes no position
            attention_mask=prefix_attention_mask(
                source_mask, T, self.config.prefix_attention == "bidirectional"))

    def target_logits(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                      target_in_ids: torch.Tensor, output_attentions: bool = False):
        """The target positions' scores (B, T, V), and the stack's output."""
        out = self.bert(**self.joined(source_ids, source_mask, target_in_ids),
                        output_attentions=output_attentions)
        hidden = out.last_hidden_state[:, source_ids.shape[1]:]  # (B, T, H)
        return self.output_scores(hidden), out  # (B, T, V)

    def forward(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                target_in_ids: torch.Tensor, labels: torch.Tensor | None = None,
                output_attentions: bool = False) -> Seq2SeqOutput:
        """Teacher forcing, as the encoder-decoder's (see `minibert.model.seq2seq`); the loss
        covers the target only. With output_attentions, each layer's weights over the joined
        sequence (B, nh, N, N); the target's rows over the source's columns,
        [..., S:, :S], are its counterpart of cross-attention."""
        check_batch(self.config, source_ids, source_mask, target_in_ids, labels)
        logits, out = self.target_logits(source_ids, source_mask, target_in_ids,
                                         output_attentions)
        loss = masked_lm_loss(logits, labels) if labels is not None else None
        return Seq2SeqOutput(logits, loss, attentions=out.attentions)

    def generate_greedy(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                        max_length: int, bos_id: int, eos_id: int | None,
                        use_cache: bool = True) -> Generation:
        """One token a step (see `greedy_generate`). With the cache, the first step reads the
        source and BOS in one pass and keeps every layer's keys and values; each later step
        computes the newest token alone. Without it, each step reads the source and the
        whole prefix again. Both give the same scores."""
        check_batch(self.config, source_ids, source_mask, source_ids[:, :0])
        if not use_cache:
            return greedy_generate(
                lambda prefix: self.target_logits(source_ids, source_mask, prefix)[0],
                self.config, source_ids.shape[0], max_length, bos_id, eos_id,
                source_ids.device)
        bert, offset = self.bert, self.config.target_offset
        dtype = bert.embeddings.word_embeddings.weight.dtype
        padding_only = bert.config.replace(attention_direction="bidirectional")  # newest token
        caches = [{} for _ in bert.encoder.layer]
        readable = source_mask.bool()  # (B, t): the keys the newest token may read
        next_position = source_mask.long().sum(dim=1, keepdim=True)  # (B, 1): BOS's position

        def next_logits(prefix: torch.Tensor) -> torch.Tensor:  # (B, t) -> (B, 1, V)
            nonlocal readable, next_position
            readable = torch.cat([readable, torch.ones_like(readable[:, :1])], dim=1)
            if not caches[0]:  # the source and BOS together, as the teacher-forced pass
                inputs = self.joined(source_ids, source_mask, prefix)
                mask = additive_mask(bert.config, inputs["attention_mask"],
                                     inputs["input_ids"].shape[1], dtype,
                                     source_ids.device)  # (B, 1, N, N)
                x = bert.embeddings(inputs["input_ids"], inputs["token_type_ids"],
                                    inputs["position_ids"])  # (B, N, H)
            else:
                token = prefix[:, -1:]  # (B, 1)
                x = bert.embeddings(token + offset, torch.ones_like(token), next_position)
                mask = additive_mask(padding_only, readable, readable.shape[1], dtype,
                                     source_ids.device)  # (B, 1, 1, t): no padding read
            next_position = next_position + 1
            for layer, cache in zip(bert.encoder.layer, caches, strict=True):
                x = layer.step(x, cache, mask)
            return self.output_scores(bert.encoder.LayerNorm(x[:, -1:]))  # (B, 1, V)

        return greedy_generate(next_logits, self.config, source_ids.shape[0], max_length,
                               bos_id, eos_id, source_ids.device)

    def num_parameters(self) -> int:
        """Number of distinct parameters (the output layer is the table's target rows)."""
        return sum(p.numel() for p in self.parameters())
