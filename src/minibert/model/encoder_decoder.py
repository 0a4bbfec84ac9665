"""The encoder-decoder Transformer of "Attention Is All You Need", built from BERT's layers:
the encoder is a BertModel, each decoder layer a BertLayer with causal self-attention and a
cross-attention sublayer between it and the feed-forward block.

Cross-attention is a BertSelfAttention given a memory: queries from the decoder, keys and
values from the encoder's output, the source's padding masked; so the three attentions
(the encoder's self, the decoder's causal self, the cross) score in one place. Post-LN like
BERT and Vaswani et al. unless the config says "pre". Parameter names follow Hugging Face's
encoder-decoder (`encoder.encoder.layer.0...`, `...crossattention...`).
Shapes: B = batch, S = source length, T = target length, H = hidden size, V = target
vocabulary size, nh = heads, L = decoder layers.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .bert import BertModel, additive_mask
from .config import BertConfig, check_positive_integers
from .heads import masked_lm_loss
from .layers import (
    BertAttention,
    BertEmbeddings,
    BertLayer,
    init_module,
    norm_layer,
    normalises_input,
)
from .seq2seq import (
    Generation,
    Seq2SeqOutput,
    TransformerSeq2SeqConfig,
    check_batch,
    greedy_generate,
)


@dataclass
class EncoderDecoderConfig(TransformerSeq2SeqConfig):
    """The sizes of an encoder-decoder: the common fields (`Seq2SeqConfig`,
    `TransformerSeq2SeqConfig`) and the depth of each half."""

    num_encoder_layers: int = 2
    num_decoder_layers: int = 2

    def __post_init__(self) -> None:
        check_positive_integers(self, ("num_encoder_layers", "num_decoder_layers"))
        super().__post_init__()

    def encoder_config(self) -> BertConfig:
        """The encoder's BertConfig: the source vocabulary, bidirectional, one segment."""
        return self.bert_config(vocab_size=self.source_vocab_size, type_vocab_size=1,
                                num_hidden_layers=self.num_encoder_layers,
                                max_position_embeddings=self.max_source_positions)

    def decoder_config(self) -> BertConfig:
        """The decoder's BertConfig: the target vocabulary, causal self-attention."""
        return self.bert_config(vocab_size=self.target_vocab_size, type_vocab_size=1,
                                num_hidden_layers=self.num_decoder_layers,
                                max_position_embeddings=self.max_target_positions,
                                attention_direction="causal")


class BertDecoderLayer(BertLayer):
    """A decoder layer: causal self-attention, cross-attention to the encoder's output, then
    the feed-forward block, each sublayer with its residual sum and norm."""

    def __init__(self, config: BertConfig):
        super().__init__(config)
        self.crossattention = BertAttention(config)

    def cross_attention(self, x: torch.Tensor, memory: torch.Tensor, memory_mask: torch.Tensor,
                        need_weights: bool = False):
        """The cross-attention sublayer: x (B, T, H) queries the memory (B, S, H), the
        source's padding masked by memory_mask (B, 1, 1, S). Returns its output (B, T, H)
        and, if asked, the weights (B, nh, T, S)."""
        context, weights = self.crossattention.self(
            self.crossattention.output.sublayer_input(x), memory_mask, need_weights,
            memory=memory)
        return self.crossattention.output(context, residual=x), weights

    def forward(self, x: torch.Tensor, causal_mask: torch.Tensor, memory: torch.Tensor,
                memory_mask: torch.Tensor, need_weights: bool):
        """x (B, T, H), the encoder's output memory (B, S, H) and the additive masks, (T, T)
        for the decoder's tokens and (B, 1, 1, S) for the source's padding. Returns the layer's
        output (B, T, H) and, if asked, the self- (B, nh, T, T) and cross-attention
        (B, nh, T, S) weights."""
        context, self_weights = self.attention.self(self.attention_input(x), causal_mask,
                                                    need_weights)
        x = self.attention.output(context, residual=x)
        x, cross_weights = self.cross_attention(x, memory, memory_mask, need_weights)
        return self.feed_forward(x), self_weights, cross_weights

    def step(self, x: torch.Tensor, cache: dict, memory: torch.Tensor,
             memory_mask: torch.Tensor) -> torch.Tensor:
        """The newest token x (B, 1, H) in generation: its self-attention reads the earlier
        tokens' keys and values from `cache`; cross-attention projects the memory again
        (a cost that does not grow with the target)."""
        x = self.cached_self_attention(x, cache, None)  # the newest token sees every earlier
        return self.feed_forward(self.cross_attention(x, memory, memory_mask)[0])


class TransformerDecoder(nn.Module):
    """The target's embeddings, the decoder layers, and pre-LN's final norm."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layer = nn.ModuleList(BertDecoderLayer(config)
                                   for _ in range(config.num_hidden_layers))
        self.LayerNorm = norm_layer(config) if normalises_input(config) else nn.Identity()

    def forward(self, target_in_ids: torch.Tensor, memory: torch.Tensor,
                memory_mask: torch.Tensor, need_weights: bool = False):
        """Target ids (B, T) over the memory (B, S, H): the final states (B, T, H), and each
        layer's self- and cross-attention weights (L tensors each, or None each)."""
        x = self.embeddings(target_in_ids, torch.zeros_like(target_in_ids))  # (B, T, H)
        causal_mask = additive_mask(self.config, None, target_in_ids.shape[1], x.dtype,
                                    x.device)  # (T, T)
        attentions, cross_attentions = [], []
        for layer in self.layer:
            x, self_weights, cross_weights = layer(x, causal_mask, memory, memory_mask,
                                                   need_weights)
            attentions.append(self_weights)
            cross_attentions.append(cross_weights)
        return self.LayerNorm(x), attentions, cross_attentions

    def step(self, token: torch.Tensor, position: int, memory: torch.Tensor,
             memory_mask: torch.Tensor, caches: list[dict]) -> torch.Tensor:
        """The final state (B, 1, H) of the newest target token (B,) at `position`, each
        layer reading the earlier tokens from its cache (one dict a layer, empty at first)."""
        ids = token[:, None]  # (B, 1)
        x = self.embeddings(ids, torch.zeros_like(ids), torch.full_like(ids, position))
        for layer, cache in zip(self.layer, caches, strict=True):
            x = layer.step(x, cache, memory, memory_mask)
        return self.LayerNorm(x)


class EncoderDecoderModel(nn.Module):
    """Source ids in, the target's next-token scores out: encode the source once, decode the
    target through causal self-attention and cross-attention. The output layer is the
    target's embedding table (tied), plus a bias; with `share_embeddings` the source, the
    target and the output use one table."""

    def __init__(self, config: EncoderDecoderConfig):
        super().__init__()
        self.config = config
        self.encoder = BertModel(config.encoder_config(), add_pooling_layer=False)
        self.decoder = TransformerDecoder(config.decoder_config())
        self.output_bias = nn.Parameter(torch.zeros(config.target_vocab_size))  # (V,)
        for module in self.decoder.modules():
            init_module(module, self.decoder.config)
        if config.share_embeddings:
            self.decoder.embeddings.word_embeddings = self.encoder.embeddings.word_embeddings

    def output_scores(self, hidden: torch.Tensor) -> torch.Tensor:
        """The next token's scores (..., V) from the decoder's states (..., H): the target's
        table (tied) and a bias."""
        return F.linear(hidden, self.decoder.embeddings.word_embeddings.weight, self.output_bias)

    def memory_mask(self, source_mask: torch.Tensor, dtype) -> torch.Tensor:
        """Cross-attention's additive mask (B, 1, 1, S): the source's padding blocked."""
        return additive_mask(self.encoder.config, source_mask, source_mask.shape[1], dtype,
                             source_mask.device)

    def encode(self, source_ids: torch.Tensor, source_mask: torch.Tensor) -> torch.Tensor:
        """The encoder's output, the memory the decoder attends to: (B, S, H)."""
        return self.encoder(source_ids, source_mask).last_hidden_state

    def decode(self, memory: torch.Tensor, source_mask: torch.Tensor,
               target_in_ids: torch.Tensor, output_attentions: bool = False) -> Seq2SeqOutput:
        """The target's scores (B, T, V) given the memory (B, S, H) of the source."""
        memory_mask = self.memory_mask(source_mask, memory.dtype)  # (B, 1, 1, S)
        hidden, attentions, cross_attentions = self.decoder(target_in_ids, memory, memory_mask,
                                                            output_attentions)
        logits = self.output_scores(hidden)  # (B, T, V)
        if not output_attentions:
            return Seq2SeqOutput(logits)
        return Seq2SeqOutput(logits, cross_attentions=tuple(cross_attentions),
                             attentions=tuple(attentions))

    def forward(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                target_in_ids: torch.Tensor, labels: torch.Tensor | None = None,
                output_attentions: bool = False) -> Seq2SeqOutput:
        """Teacher forcing: the whole target in one pass (see `minibert.model.seq2seq` for
        the batch). The loss is the mean cross-entropy over labels != -100. With
        output_attentions, each decoder layer's weights: cross (B, nh, T, S), self
        (B, nh, T, T)."""
        check_batch(self.config, source_ids, source_mask, target_in_ids, labels)
        out = self.decode(self.encode(source_ids, source_mask), source_mask, target_in_ids,
                          output_attentions)
        if labels is not None:
            out.loss = masked_lm_loss(out.logits, labels)
        return out

    def generate_greedy(self, source_ids: torch.Tensor, source_mask: torch.Tensor,
                        max_length: int, bos_id: int, eos_id: int | None,
                        use_cache: bool = True) -> Generation:
        """Encode once, then decode one token a step (see `greedy_generate`). With the cache
        each step computes the newest token alone, its self-attention reading the earlier
        tokens' keys and values; without it, each step runs the decoder over the whole
        prefix again. Both give the same scores."""
        check_batch(self.config, source_ids, source_mask, source_ids[:, :0])
        with torch.no_grad():
            memory = self.encode(source_ids, source_mask)  # (B, S, H)
        memory_mask = self.memory_mask(source_mask, memory.dtype)  # (B, 1, 1, S)
        caches = [{} for _ in self.decoder.layer]

        def next_logits(prefix: torch.Tensor) -> torch.Tensor:  # (B, t) -> (B, 1 or t, V)
            if not use_cache:
                return self.decode(memory, source_mask, prefix).logits
            return self.output_scores(self.decoder.step(prefix[:, -1], prefix.shape[1] - 1,
                                                        memory, memory_mask, caches))

        return greedy_generate(next_logits, self.config, source_ids.shape[0], max_length,
                               bos_id, eos_id, source_ids.device)

    def num_parameters(self) -> int:
        """Number of distinct parameters (a shared table counts once)."""
        return sum(p.numel() for p in self.parameters())
