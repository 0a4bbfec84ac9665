"""The building blocks of BERT: embeddings, multi-head self-attention, the feed-forward
sublayer, the encoder layer and stack, the pooler, and BERT's weight initialisation.

Module and parameter names mirror Hugging Face's `BertModel` state_dict keys
(`encoder.layer.0.attention.self.query.weight`, ...), so weights move between the two
without a renaming table. The book's variants are switches in `BertConfig`, not
subclasses. Shapes: B = batch, T = sequence length, H = hidden size,
nh = number of heads, hs = head size (H = nh * hs), V = vocabulary size.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch.nn.functional as F
from torch import nn

from .config import TABLE_POSITIONS, BertConfig

_batched = False  # True inside `batched_members()`


@contextmanager
def batched_members() -> Iterator[None]:
    """For models run under torch.func.vmap, one member per slice of stacked weights (see
    minibert.training.ensemble). Inside the block `BertModel.check_inputs` is skipped: its
    checks read the input values (min, max), which vmap cannot trace, so the caller checks
    each member's batch first. And attention is computed with explicit matmuls, which vmap
    turns into batched ones, rather than by scaled_dot_product_attention, whose CPU kernel
    has no vmap batching rule (vmap would call it once per member)."""
    global _batched
    previous, _batched = _batched, True
    try:
        yield
    finally:
        _batched = previous


def is_batched() -> bool:
    """Whether the model is running inside `batched_members()`."""
    return _batched


def activation_fn(name: str):
    """The function for a canonical activation name (see config.ACTIVATIONS)."""
    return {
        "gelu": F.gelu,
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "relu": F.relu,
        "tanh": torch.tanh,
        "identity": lambda x: x,
    }[name]


def sinusoidal_table(num_positions: int, width: int) -> torch.Tensor:
    """Vaswani et al.'s fixed position code: sin on even dims, cos on odd dims. (P, H)"""
    position = torch.arange(num_positions, dtype=torch.float32)[:, None]  # (P, 1)
    frequency = torch.exp(torch.arange(0, width, 2) * (-math.log(10000.0) / width))  # (H/2,)
    table = torch.zeros(num_positions, width)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: width // 2])
    return table


def rotary_angles(positions: torch.Tensor, head_size: int,
                  base: float = 10000.0) -> torch.Tensor:
    """RoPE's angles (Su et al.): position p turns feature pair i (features 2i, 2i+1) by
    p * base^(-2i/head_size), the frequencies of the sinusoidal code. positions (..., T)
    -> (..., T, head_size / 2)."""
    frequency = base ** (-torch.arange(0, head_size, 2, device=positions.device,
                                       dtype=torch.float32) / head_size)  # (hs/2,)
    return positions.to(torch.float32)[..., None] * frequency


def rotate_pairs(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Turn each pair of features (2i, 2i+1) of x (..., T, hs) by its angle (..., T, hs/2):
    the complex product (x_2i + i x_2i+1) e^(i angle), written in real arithmetic."""
    even, odd = x[..., 0::2], x[..., 1::2]  # (..., T, hs/2) each
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    return torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1).flatten(-2)


def alibi_slopes(num_heads: int) -> torch.Tensor:
    """ALiBi's head slopes (Press et al.): m_h = 2^(-8h/nh) for h = 1..nh, a geometric
    sequence from 2^(-8/nh) down to 2^-8. (nh,)"""
    return 2.0 ** (-8.0 * torch.arange(1, num_heads + 1, dtype=torch.float32) / num_heads)


def alibi_bias(positions: torch.Tensor, slopes: torch.Tensor) -> torch.Tensor:
    """The symmetric ALiBi bias of a bidirectional encoder, -m_h |p_i - p_j|, added to the
    scores of head h. positions (T,) or (B, T), slopes (nh,) -> (nh, T, T) or (B, nh, T, T)."""
    distance = (positions[..., :, None] - positions[..., None, :]).abs()  # (..., T, T)
    return -slopes.to(distance.device)[:, None, None] * distance[..., None, :, :].float()


class BertEmbeddings(nn.Module):
    """Token + position + segment embeddings, summed, then LayerNorm and dropout. With
    rotary or ALiBi positions there is no position table: positions act in attention.
    With `scale_word_embeddings` the word vectors are multiplied by sqrt(hidden_size)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        H = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, H, padding_idx=config.pad_token_id)
        if config.position_embedding_type in TABLE_POSITIONS:
            self.position_embeddings = nn.Embedding(config.max_position_embeddings, H)
        else:
            self.position_embeddings = None
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, H)
        self.LayerNorm = nn.LayerNorm(H, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.word_scale = math.sqrt(H) if config.scale_word_embeddings else 1.0
        if config.position_embedding_type == "sinusoidal":
            self.position_embeddings.weight.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                position_ids: torch.Tensor | None = None) -> torch.Tensor:
        """position_ids (B, T), when given, replace the positions 0..T-1 (left padding)."""
        T = input_ids.shape[1]
        words = self.word_embeddings(input_ids)  # (B, T, H)
        if self.word_scale != 1.0:
            words = words * self.word_scale
        summed = words + self.token_type_embeddings(token_type_ids)  # (B, T, H)
        if self.position_embeddings is not None:  # rotary, ALiBi: positions act in attention
            summed = summed + (self.position_embeddings.weight[:T] if position_ids is None
                               else self.position_embeddings(position_ids))  # (T or B, T, H)
        return self.dropout(self.LayerNorm(summed))


def qkv_sharing(config: BertConfig) -> str:
    """How a layer of `config` makes q, k and v: "none" (three projections), "kv" (v is k),
    "qk" (k is q), "identity" (all three are the input), "identity qk" (q and k are the
    input), "identity v" (v is the input). Decided here alone."""
    if not config.use_qkv_projections:
        return "identity"
    if config.identity_projections != "none":
        return "identity " + config.identity_projections
    return config.qkv_sharing


PROJECTIONS = {  # the linear maps each sharing holds
    "none": ("query", "key", "value"), "kv": ("query", "key"), "qk": ("query", "value"),
    "identity": (), "identity qk": ("value",), "identity v": ("query", "key"),
}


def attention_projections(config: BertConfig) -> tuple[str, ...]:
    """The projections ("query", "key", "value") a self-attention layer of `config` holds."""
    return PROJECTIONS[qkv_sharing(config)]


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product attention, with the book's switches.

    use_qkv_projections=False uses the input itself as q, k and v; identity_projections="qk"
    uses it as q and k only, "v" as v only; qkv_sharing="kv" computes v with the key matrix,
    "qk" computes k with the query matrix. The scores are computed in `score` alone: the
    forward pass and every measure of attention (minibert.measure.attention) call it.
    Positions reach attention here alone: "rotary" turns q and k by their positions in
    `heads`, "alibi" adds -m_h |i - j| to the scores in `score` (`positions` (T,) or (B, T),
    each token's position; 0..T-1 when not given).
    attention_score="additive" scores with Bahdanau et al.'s v·tanh(W q + U k) instead,
    each head with its own W, U (hs x hs) and v (hs), held as `additive_query`,
    `additive_key` and `additive_vector` with a leading head axis.
    Given a `memory` (B, S, H), the layer is cross-attention: queries from its input, keys and
    values from the memory (an encoder's output), with the same `score`.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        H = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_size = config.head_size
        self.scale = 1.0 / math.sqrt(self.head_size) if config.scale_attention_scores else 1.0
        self.dropout_p = config.attention_probs_dropout_prob
        self.sharing = qkv_sharing(config)
        self.position_kind = config.position_embedding_type
        for name in attention_projections(config):
            setattr(self, name, nn.Linear(H, H))
        self.additive = config.attention_score == "additive"
        if self.additive:  # Bahdanau's scorer, one per head; initialised by init_module
            nh, hs = self.num_heads, self.head_size
            self.additive_query = nn.Parameter(torch.empty(nh, hs, hs))  # W, (nh, hs, hs)
            self.additive_key = nn.Parameter(torch.empty(nh, hs, hs))  # U, (nh, hs, hs)
            self.additive_vector = nn.Parameter(torch.empty(nh, hs))  # v, (nh, hs)

    def project(self, x: torch.Tensor, memory: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v of the input, before the split into heads. Each (B, T, H); with a memory
        (B, S, H), k and v are the memory's, (B, S, H), and q the input's."""
        if memory is not None:
            if self.sharing != "none":
                raise ValueError("cross-attention (a memory) needs three projections: "
                                 f"qkv sharing {self.sharing!r} is for self-attention")
            return self.query(x), self.key(memory), self.value(memory)
        if self.sharing == "identity":
            return x, x, x
        if self.sharing == "identity qk":
            return x, x, self.value(x)
        q = self.query(x)
        if self.sharing == "qk":
            return q, q, self.value(x)
        k = self.key(x)
        if self.sharing == "identity v":
            return q, k, x
        return q, k, (k if self.sharing == "kv" else self.value(x))

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_size).transpose(1, 2)  # (B, nh, T, hs)

    @staticmethod
    def positions_of(length: int, positions: torch.Tensor | None, device) -> torch.Tensor:
        """Each token's position: `positions` (T,) or (B, T) if given, else 0..T-1."""
        return torch.arange(length, device=device) if positions is None else positions

    def heads(self, x: torch.Tensor, positions: torch.Tensor | None = None,
              memory: torch.Tensor | None = None
              ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v of the input x (B, T, H), split into heads: each (B, nh, T, hs), k and v
        (B, nh, S, hs) when they come from a memory (B, S, H). With rotary positions q and k
        come out turned by their positions' angles."""
        if memory is not None and self.position_kind not in TABLE_POSITIONS:
            raise ValueError(f"cross-attention (a memory) works with position tables only, "
                             f"not {self.position_kind!r} positions inside attention")
        q, k, v = self.project(x, memory)
        q, k, v = self.split_heads(q), self.split_heads(k), self.split_heads(v)
        if self.position_kind == "rotary":
            where = self.positions_of(x.shape[1], positions, x.device)  # (T,) or (B, T)
            angles = rotary_angles(where, self.head_size)  # (T, hs/2) or (B, T, hs/2)
            angles = angles[:, None] if angles.dim() == 3 else angles  # over the heads
            q, k = rotate_pairs(q, angles), rotate_pairs(k, angles)
        return q, k, v

    def position_bias(self, length: int, positions: torch.Tensor | None,
                      device) -> torch.Tensor | None:
        """What the positions add to the scores: ALiBi's -m_h |i - j|, (nh, T, T) or
        (B, nh, T, T); None for the other kinds."""
        if self.position_kind != "alibi":
            return None
        # the slopes are made here, not kept in a buffer: a model loaded with
        # to_empty (minibert.model.weights) would leave a non-persistent buffer unset
        return alibi_bias(self.positions_of(length, positions, device),
                          alibi_slopes(self.num_heads))

    def score(self, q: torch.Tensor, k: torch.Tensor,
              positions: torch.Tensor | None = None) -> torch.Tensor:
        """The scores the softmax receives before any mask: q·k times the scale
        (1/sqrt(d_k), or 1 without scaling), plus ALiBi's bias when positions are "alibi"
        (self-attention: q and k of the same tokens). q (..., Tq, hs), k (..., Tk, hs)
        -> (..., Tq, Tk). Additive: v_h·tanh(W_h q_i + U_h k_j) for every pair (no scale),
        which needs the heads' axis at -3 and holds a (..., nh, Tq, Tk, hs) tensor on the way."""
        bias = self.position_bias(q.shape[-2], positions, q.device)
        scores = self.additive_score(q, k) if self.additive else (
            q @ k.transpose(-2, -1)) * self.scale
        return scores if bias is None else scores + bias

    def additive_score(self, q: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
        """Bahdanau's v_h·tanh(W_h q_i + U_h k_j): q (..., nh, Tq, hs), k (..., nh, Tk, hs)
        -> (..., nh, Tq, Tk)."""
        if q.dim() < 3 or q.shape[-3] != self.num_heads:
            raise ValueError(f"additive scores need q and k as (..., {self.num_heads}, T, "
                             f"{self.head_size}), got {tuple(q.shape)}")
        wq = torch.einsum("...htd,hed->...hte", q, self.additive_query)  # (..., nh, Tq, hs)
        uk = torch.einsum("...htd,hed->...hte", k, self.additive_key)  # (..., nh, Tk, hs)
        hidden = torch.tanh(wq.unsqueeze(-2) + uk.unsqueeze(-3))  # (..., nh, Tq, Tk, hs)
        return torch.einsum("...hijd,hd->...hij", hidden, self.additive_vector)

    def scores(self, x: torch.Tensor, positions: torch.Tensor | None = None) -> torch.Tensor:
        """`score` of the layer's own q and k for the input x (B, T, H): (B, nh, T, T)."""
        q, k, _ = self.heads(x, positions)
        return self.score(q, k, positions)

    def forward(
        self, x: torch.Tensor, additive_mask: torch.Tensor | None, need_weights: bool,
        positions: torch.Tensor | None = None, memory: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x (B, T, H) and a mask broadcastable to (B, nh, T, T) holding 0 or a large negative
        number. Returns the context (B, T, H) and, if asked, the attention weights (see
        `attend`). With a memory (B, S, H) the keys are its S tokens: the mask broadcasts to
        (B, nh, T, S), and so do the weights."""
        q, k, v = self.heads(x, positions, memory)  # (B, nh, T, hs); k, v (B, nh, S, hs)
        return self.attend(q, k, v, additive_mask, need_weights, positions)

    def attend(
        self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
        additive_mask: torch.Tensor | None, need_weights: bool,
        positions: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The context (B, T, H) of the queries q (B, nh, T, hs) over the keys and values
        k, v (B, nh, S, hs), and, if asked, the weights (B, nh, T, S). Without weights to
        return, torch's fused kernel computes the same `score` (ALiBi's bias joins the mask
        it receives)."""
        B, _, T, _ = q.shape
        dropout_p = self.dropout_p if self.training else 0.0
        if need_weights or _batched or self.additive:  # the fused kernel does q·k only
            scores = self.score(q, k, positions)  # (B, nh, T, S)
            if additive_mask is not None:
                scores = scores + additive_mask
            weights = scores.softmax(dim=-1)
            context = F.dropout(weights, dropout_p, self.training) @ v  # (B, nh, T, hs)
        else:
            weights = None
            bias = self.position_bias(T, positions, q.device)
            if bias is not None:
                additive_mask = bias if additive_mask is None else additive_mask + bias
            context = F.scaled_dot_product_attention(
                q, k, v, attn_mask=additive_mask, dropout_p=dropout_p, scale=self.scale
            )
        return context.transpose(1, 2).reshape(B, T, self.num_heads * self.head_size), weights


class TokenBatchNorm(nn.BatchNorm1d):
    """BatchNorm over the hidden features of (B, T, H) states: each feature's mean and
    variance are taken over every position of every sentence in the batch, padding
    included (it sees no attention mask), in train mode; eval mode uses the running
    averages, so a sentence's output no longer depends on its batch."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x.reshape(-1, x.shape[-1])).view(x.shape)


def norm_layer(config: BertConfig) -> nn.Module:
    """The normalisation `config.normalization` names, over the hidden size: "layernorm"
    (BERT's: each token's features to mean 0 and variance 1, then a gain and a bias),
    "rmsnorm" (Zhang & Sennrich: x / sqrt(mean(x²) + eps) times a gain, no mean, no bias),
    "batchnorm" (`TokenBatchNorm`) or "none" (the identity). Built here alone, for the two
    sublayers' norms and pre-LN's final norm; the embeddings' LayerNorm and the MLM head's
    transform stay LayerNorm whatever the switch."""
    H, eps = config.hidden_size, config.layer_norm_eps
    if config.normalization == "layernorm":
        return nn.LayerNorm(H, eps=eps)
    if config.normalization == "rmsnorm":
        return nn.RMSNorm(H, eps=eps)
    if config.normalization == "batchnorm":
        return TokenBatchNorm(H, eps=eps)
    return nn.Identity()


def normalises_input(config: BertConfig) -> bool:
    """Whether the LayerNorm of a sublayer sits at its input (pre-LN) rather than after the
    residual sum (post-LN, BERT's). Read here alone."""
    return config.layer_norm_position == "pre"


class BertSublayerOutput(nn.Module):
    """The dense projection that closes a sublayer, then dropout, residual and LayerNorm.
    It owns the LayerNorm's placement: post-LN normalises the residual sum here, pre-LN
    normalises the sublayer's input (`sublayer_input`). The norm is `norm_layer`'s (kept
    under Hugging Face's name `LayerNorm` whatever it is); with `config.residual` False
    the sublayer's output replaces its input instead of being added to it."""

    def __init__(self, config: BertConfig, in_features: int):
        super().__init__()
        self.dense = nn.Linear(in_features, config.hidden_size)
        self.LayerNorm = norm_layer(config)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.pre_ln = normalises_input(config)
        self.adds_residual = config.residual

    def sublayer_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the sublayer reads from the residual stream x (B, T, H)."""
        return self.LayerNorm(x) if self.pre_ln else x

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        out = self.dropout(self.dense(h))
        if self.adds_residual:
            out = residual + out
        return out if self.pre_ln else self.LayerNorm(out)


class BertAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSublayerOutput(config, config.hidden_size)


class BertIntermediate(nn.Module):
    """The feed-forward block's widening layer and its nonlinearity: (B, T, H) -> (B, T, 4H)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.act = activation_fn(config.activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.dense(x))


class BertLayer(nn.Module):
    """One encoder layer: self-attention, then the feed-forward block, each with a residual.
    With `config.intermediate_size` 0 the layer has no feed-forward sublayer at all: no
    widening and closing maps, and no residual sum or norm of its own either (the layer is
    its attention sublayer alone, `intermediate` and `output` are None), so a post-LN layer
    ends on the attention sublayer's norm and a pre-LN stack on its final norm."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertAttention(config)
        self.has_feed_forward = config.intermediate_size > 0
        self.intermediate = BertIntermediate(config) if self.has_feed_forward else None
        self.output = (BertSublayerOutput(config, config.intermediate_size)
                       if self.has_feed_forward else None)

    def attention_input(self, x: torch.Tensor) -> torch.Tensor:
        """What self-attention reads from the layer's input x (B, T, H)."""
        return self.attention.output.sublayer_input(x)

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        """The feed-forward sublayer with its residual and norm, (B, T, H) -> (B, T, H); the
        identity when the layer has none."""
        if not self.has_feed_forward:
            return x
        return self.output(self.intermediate(self.output.sublayer_input(x)), residual=x)

    def forward(self, x, additive_mask, need_weights, positions=None):
        context, weights = self.attention.self(self.attention_input(x), additive_mask,
                                               need_weights, positions)
        x = self.attention.output(context, residual=x)
        return self.feed_forward(x), weights

    def cached_self_attention(self, x: torch.Tensor, cache: dict,
                              additive_mask: torch.Tensor | None) -> torch.Tensor:
        """The self-attention sublayer for new tokens x (B, n, H) during generation: they
        attend to the t earlier tokens through the keys and values kept in `cache` (a KV
        cache; their own are added to it), so earlier tokens are not computed again. The
        mask broadcasts to (B, nh, n, t + n). Position tables only: rotary and ALiBi
        positions would need each token's position inside attention."""
        attention = self.attention.self
        if attention.position_kind not in TABLE_POSITIONS:
            raise ValueError(f"generation with a cache needs a position table, not "
                             f"{attention.position_kind!r} positions")
        q, k, v = attention.heads(self.attention_input(x))  # (B, nh, n, hs) each
        if cache:
            k = torch.cat([cache["keys"], k], dim=2)  # (B, nh, t + n, hs)
            v = torch.cat([cache["values"], v], dim=2)
        cache["keys"], cache["values"] = k, v
        context, _ = attention.attend(q, k, v, additive_mask, need_weights=False)
        return self.attention.output(context, residual=x)

    def step(self, x: torch.Tensor, cache: dict,
             additive_mask: torch.Tensor | None) -> torch.Tensor:
        """The layer's output (B, n, H) for new tokens x (B, n, H) in generation: what
        `forward` gives them, the earlier tokens read from `cache`."""
        return self.feed_forward(self.cached_self_attention(x, cache, additive_mask))


class BertEncoder(nn.Module):
    """The stack of layers, then the final LayerNorm that pre-LN needs (its residual stream
    is never normalised inside the layers); post-LN ends on a normalised sum already."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))
        self.LayerNorm = norm_layer(config) if normalises_input(config) else nn.Identity()

    def forward(self, x: torch.Tensor, additive_mask: torch.Tensor | None,
                need_weights: bool = False, positions: torch.Tensor | None = None):
        """The embeddings x (B, T, H) through every layer (`positions` (B, T), each token's
        position, for rotary and ALiBi attention; 0..T-1 when None). Returns the final states
        (B, T, H), every layer's input and the last layer's output (L + 1 tensors (B, T, H)),
        and each layer's attention weights (L tensors (B, nh, T, T), or None each)."""
        hidden_states, attentions = [x], []
        for layer in self.layer:
            x, weights = layer(x, additive_mask, need_weights, positions)
            hidden_states.append(x)
            attentions.append(weights)
        return self.LayerNorm(x), hidden_states, attentions


class BertPooler(nn.Module):
    """tanh(W h_[CLS] + b): the sentence vector the NSP and classification heads read."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))  # (B, H)



def init_module(module: nn.Module, config: BertConfig) -> None:
    """BERT's initialisation: truncated normal(0, 0.02) weights, zero biases, unit LayerNorm,
    and the fixed table when positions are sinusoidal. Touches `module`'s own parameters only."""
    std = config.initializer_range
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.trunc_normal_(module.weight, std=std, a=-2 * std, b=2 * std)
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()
        if getattr(module, "bias", None) is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, (nn.LayerNorm, nn.RMSNorm, nn.BatchNorm1d)):  # see norm_layer
        nn.init.ones_(module.weight)
        if getattr(module, "bias", None) is not None:  # RMSNorm has none
            nn.init.zeros_(module.bias)
    elif isinstance(module, BertSelfAttention) and module.additive:
        # Bahdanau's scorer: W, U and v of spread 1/sqrt(hs), so that W q keeps q's scale
        for weight in (module.additive_query, module.additive_key, module.additive_vector):
            nn.init.normal_(weight, std=module.head_size ** -0.5)
    elif isinstance(module, BertEmbeddings) and config.position_embedding_type == "sinusoidal":
        table = sinusoidal_table(*module.position_embeddings.weight.shape)
        module.position_embeddings.weight.data.copy_(table)
    elif isinstance(getattr(module, "bias", None), nn.Parameter):  # e.g. the MLM output bias
        nn.init.zeros_(module.bias)
