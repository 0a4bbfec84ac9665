"""The LSTM encoder-decoder with attention, the translation model the Transformer replaced:
a bidirectional LSTM reads the source, an LSTM writes the target, and at each target step
attention over the encoder's states brings in the source.

It follows Bahdanau et al. (2015) and Luong et al. (2015). The attention is Luong et al.'s
"global attention" placed as they place it: after the decoder's LSTM step, its state h_t is
the query over the encoder's states, and the attentional state tanh(W_c [h_t; c_t]) scores
the next token (no input feeding, so the teacher-forced pass runs the decoder LSTM over the
whole target at once). Its scores are BertSelfAttention's scaled dot product of projected
queries and keys (Luong's "general" score, split into heads), or with
attention_score="additive" Bahdanau et al.'s v·tanh(W q + U k), so every model of the book
scores attention in one place. It reads the Transformers' batch (`minibert.model.seq2seq`).
Every weight keeps PyTorch's initialisation (the LSTMs uniform in ±1/sqrt(width), the tables
N(0, 1)): Luong et al.'s uniform ±0.1 suits their 1000-wide LSTMs, but starves a tiny one.
Shapes: B = batch, S = source length, T = target length, H = hidden size, V = target
vocabulary size, nh = attention heads, L = LSTM layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from .bert import additive_mask
from .config import BertConfig, bert_config_for, check_positive_integers
from .heads import masked_lm_loss
from .layers import BertSelfAttention, init_module
from .seq2seq import Generation, Seq2SeqConfig, Seq2SeqOutput, check_batch, greedy_generate


@dataclass
class LstmSeq2SeqConfig(Seq2SeqConfig):
    """The sizes of the LSTM encoder-decoder: the common fields (`Seq2SeqConfig`), the LSTMs'
    depth and the attention's heads."""

    num_layers: int = 1  # of the encoder and of the decoder LSTM each
    num_attention_heads: int = 1  # Luong's attention has one
    attention_score: str = "dot"  # or "additive", Bahdanau's (see config.ATTENTION_SCORES)

    def __post_init__(self) -> None:
        check_positive_integers(self, ("num_layers", "num_attention_heads"))
        super().__post_init__()
        if self.hidden_size % 2:
            raise ValueError(f"LstmSeq2SeqConfig.hidden_size ({self.hidden_size}) must be even: "
                             "each direction of the encoder holds half of it")
        self.attention_config()  # checks the heads against the width

    def attention_config(self) -> BertConfig:
        """The attention's BertConfig: width, heads, score and dropout."""
        return bert_config_for(self, vocab_size=1, hidden_size=self.hidden_size,
                               num_attention_heads=self.num_attention_heads,
                               attention_score=self.attention_score,
                               attention_probs_dropout_prob=self.hidden_dropout_prob)


class LstmEncoderDecoder(nn.Module):
    """Source ids in, the target's next-token scores out. The output layer is the target's
    embedding table (tied), plus a bias; with `share_embeddings` the source, the target and
    the output use one table."""

    def __init__(self, config: LstmSeq2SeqConfig):
        super().__init__()
        self.config = config
        H, L, p = config.hidden_size, config.num_layers, config.hidden_dropout_prob
        self.source_embeddings = nn.Embedding(config.source_vocab_size, H)
        self.target_embeddings = (self.source_embeddings if config.share_embeddings
                                  else nn.Embedding(config.target_vocab_size, H))
        self.encoder = nn.LSTM(H, H // 2, L, batch_first=True, bidirectional=True,
                               dropout=p if L > 1 else 0.0)
        self.bridge = nn.Linear(H, H)  # the encoder's last states -> the decoder's first
        self.decoder = nn.LSTM(H, H, L, batch_first=True, dropout=p if L > 1 else 0.0)
        self.attention_config = config.attention_config()
        self.attention = BertSelfAttention(self.attention_config)
        self.combine = nn.Linear(2 * H, H)  # Luong's W_c: [h_t; c_t] -> attentional state
        self.output_bias = nn.Parameter(torch.zeros(config.target_vocab_size))  # (V,)
        self.dropout = nn.Dropout(p)
        init_module(self.attention, self.attention_config)  # the additive scorer's W, U, v

    def encode(self, source_ids: torch.Tensor, source_mask: torch.Tensor):
        """The encoder's states (B, S, H), zero at padding (the LSTMs read each row's tokens
        only), and the decoder's first state ((L, B, H), (L, B, H)) made from the encoder's
        last: tanh(W [forward's last; backward's first]), and a zero cell."""
        S = source_ids.shape[1]
        lengths = source_mask.long().sum(dim=1).cpu()  # (B,)
        packed = pack_padded_sequence(self.dropout(self.source_embeddings(source_ids)), lengths,
                                      batch_first=True, enforce_sorted=False)
        states, (last, _) = self.encoder(packed)  # last: (2L, B, H/2)
        states, _ = pad_packed_sequence(states, batch_first=True, total_length=S)  # (B, S, H)
        L, B = self.config.num_layers, source_ids.shape[0]
        last = last.view(L, 2, B, -1).transpose(1, 2).reshape(L, B, -1)  # (L, B, H)
        first = torch.tanh(self.bridge(last))  # (L, B, H)
        return states, (first, torch.zeros_like(first))

    def decode(self, states: torch.Tensor, state, source_mask: torch.Tensor,
               target_in_ids: torch.Tensor, output_attentions: bool = False):
        """The target's scores (B, T, V) given the encoder's states (B, S, H), the decoder
        starting from `state` ((L, B, H), (L, B, H)); and the decoder's state after the
        target's last token, from which a next step would go on."""
        memory_mask = additive_mask(self.attention_config, source_mask, states.shape[1],
                                    states.dtype, states.device)  # (B, 1, 1, S)
        hidden, state = self.decoder(self.dropout(self.target_embeddings(target_in_ids)),
                                     state)  # (B, T, H)
        context, weights = self.attention(hidden, memory_mask, output_attentions,
                                          memory=states)  # (B, T, H), (B, nh, T, S)
        attentional = torch.tanh(self.combine(torch.cat([hidden, context], dim=-1)))  # (B, T, H)
        logits = F.linear(self.dropout(attentional), self.target_embeddings.weight,
                          self.output_bias)  # (B, T, V)
        out = Seq2SeqOutput(logits, cross_attentions=(weights,) if output_attentions else None)
        return out, state

    def forward(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                target_in_ids: torch.Tensor, labels: torch.Tensor | None = None,
                output_attentions: bool = False) -> Seq2SeqOutput:
        """Teacher forcing, as the Transformers' (see `minibert.model.seq2seq`). With
        output_attentions, the one attention's weights (B, nh, T, S) as cross_attentions."""
        check_batch(self.config, source_ids, source_mask, target_in_ids, labels)
        states, first_state = self.encode(source_ids, source_mask)
        out, _ = self.decode(states, first_state, source_mask, target_in_ids, output_attentions)
        if labels is not None:
            out.loss = masked_lm_loss(out.logits, labels)
        return out

    def generate_greedy(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                        max_length: int, bos_id: int, eos_id: int | None,
                        use_cache: bool = True) -> Generation:
        """Encode once, then one token a step (see `greedy_generate`). With the cache the
        decoder LSTM carries its state from step to step, reading the newest token alone;
        without it, it reads the whole prefix again from its first state. Both give the
        same scores."""
        check_batch(self.config, source_ids, source_mask, source_ids[:, :0])
        with torch.no_grad():
            states, first_state = self.encode(source_ids, source_mask)
        state = first_state

        def next_logits(prefix: torch.Tensor) -> torch.Tensor:  # (B, t) -> (B, 1 or t, V)
            nonlocal state
            if not use_cache:
                return self.decode(states, first_state, source_mask, prefix)[0].logits
            out, state = self.decode(states, state, source_mask, prefix[:, -1:])
            return out.logits

        return greedy_generate(next_logits, self.config, source_ids.shape[0], max_length,
                               bos_id, eos_id, source_ids.device)

    def num_parameters(self) -> int:
        """Number of distinct parameters (a shared table counts once)."""
        return sum(p.numel() for p in self.parameters())
