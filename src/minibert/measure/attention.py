"""Attention, measured: the arithmetic of one layer, the maps and scores a model computes,
what those maps show (self-attention, the patterns of Clark et al., 2019, spread, where a
token's weight goes: other words, itself, special tokens, its own segment), and the
masked-LM accuracy when the attention of [MASK] positions is rewired.

The attention itself is computed in `minibert.model.layers.BertSelfAttention`; this module
only reads and measures it. Attention masks given here as full (B, T, T) matrices
(1 = may attend) are accepted by every minibert model as `attention_mask`, so the rewiring
experiments change no weight and no code. Shapes: L = layers, B = batch, T = sequence
length, H = hidden size, nh = heads, hs = head size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from ..model import BertForPreTraining, BertModel, BertSelfAttention
from ..model.bert import INPUT_NAMES, encoder_of, model_inputs
from ..model.heads import IGNORE_INDEX
from ..text.datasets import pretraining_pairs
from ..text.language import corpus_tokenizer, generate_corpus
from ..text.masking import Masker
from ..training.trainer import masked_lm_scores

PATTERNS = ("previous token", "next token", "[CLS]", "[SEP]", "broad")
CLS_ID, SEP_ID = 101, 102  # in BERT's uncased vocabulary (and MiniLM's)
PROBE_DOCUMENT_SEED = 20_000  # masked_corpus_batch's documents: no zoo model trains on them


# ---------------------------------------------------------------- one layer's arithmetic


def dot_product_variance(d_k: int, num_pairs: int = 20_000,
                         generator: torch.Generator | None = None) -> float:
    """Sample variance of q·k for independent q, k with unit-variance normal components.
    Theory (Vaswani et al., footnote 4): exactly d_k. Drawn 1,000 pairs at a time, so a
    wide d_k needs little memory."""
    products = []
    for start in range(0, num_pairs, 1000):
        rows = min(1000, num_pairs - start)
        q = torch.randn(rows, d_k, generator=generator)
        k = torch.randn(rows, d_k, generator=generator)
        products.append((q * k).sum(dim=1))  # (rows,)
    return float(torch.cat(products).double().var())


def initial_score_spread(config, num_tokens: int = 512, num_keys: int = 32,
                         seed: int = 0) -> dict[str, float]:
    """How large one head's unscaled scores q·k start: the first layer of a freshly
    initialised model of `config`, on unit-variance inputs (what a LayerNorm hands it).
    Returns the measured standard deviation ("measured"), the formula's
    sqrt(d_k) * H * sigma**2 with sigma the built W_Q's own spread ("formula"), and how
    saturated the softmax of those scores is over rows of `num_keys` keys, unscaled and
    scaled: the mean largest weight ("max_weight") and the mean Frobenius norm of the
    row's softmax Jacobian ("jacobian"), each {"unscaled": ..., "scaled": ...}."""
    config = config.replace(num_hidden_layers=1, vocab_size=8,  # only layer 0 is read
                            scale_attention_scores=False)  # its scores unscaled
    with torch.random.fork_rng(devices=[]):  # leave the caller's random state alone
        torch.manual_seed(seed)
        layer = BertModel(config, add_pooling_layer=False).encoder.layer[0].attention.self
    d_k = config.hidden_size // config.num_attention_heads
    x = torch.randn(num_tokens, config.hidden_size,
                    generator=torch.Generator().manual_seed(seed))  # (N, H)
    with torch.no_grad():
        scores = layer.scores(x[None])[0, 0]  # (N, N), the first head's
        sigma = float(layer.query.weight.std())
    rows = {"unscaled": scores[:, :num_keys], "scaled": scores[:, :num_keys] / d_k ** 0.5}
    return {"measured": float(scores.std()), "d_k": d_k,
            "formula": math.sqrt(d_k) * config.hidden_size * sigma ** 2,
            "max_weight": {name: float(r.softmax(-1).max(-1).values.mean())
                           for name, r in rows.items()},  # (N, T) rows
            "jacobian": {name: float(softmax_jacobian(r).flatten(-2).norm(dim=-1).mean())
                         for name, r in rows.items()}}


def softmax_jacobian(scores: torch.Tensor) -> torch.Tensor:
    """d softmax(s) / d s for each row of scores (..., T): diag(p) - p p^T, shape (..., T, T)."""
    p = scores.softmax(dim=-1)
    return torch.diag_embed(p) - p[..., :, None] * p[..., None, :]


def softmax_saturation(d_k: int, num_keys: int = 32, num_queries: int = 500,
                       scaled: bool = True, generator: torch.Generator | None = None
                       ) -> dict[str, float]:
    """Attention of random queries over random keys (unit-variance components), scores
    q·k, divided by sqrt(d_k) if `scaled`. Returns the mean largest weight of a row
    ("max_prob": 1/num_keys is uniform, 1 is one-hot) and the mean Frobenius norm of the
    row's softmax Jacobian ("gradient_norm": how much the weights move per unit of score)."""
    q = torch.randn(num_queries, 1, d_k, generator=generator)  # (N, 1, d_k)
    k = torch.randn(num_queries, num_keys, d_k, generator=generator)  # (N, T, d_k)
    scores = (q * k).sum(dim=-1)  # (N, T)
    if scaled:
        scores = scores / math.sqrt(d_k)
    weights = scores.softmax(dim=-1)
    jacobian_norm = softmax_jacobian(scores).flatten(-2).norm(dim=-1)  # (N,)
    return {"max_prob": float(weights.max(dim=-1).values.mean()),
            "gradient_norm": float(jacobian_norm.mean()),
            "score_std": float(scores.std())}


def attention_head_by_head(layer: BertSelfAttention, x: torch.Tensor,
                           additive_mask: torch.Tensor | None = None) -> torch.Tensor:
    """What `layer` computes, written the slow way: for each head its own small W_Q, W_K,
    W_V (a block of rows of the layer's matrices), its own attention, and the heads' outputs
    concatenated. x (B, T, H) -> (B, T, H). Only for separate Q/K/V projections."""
    if layer.sharing != "none":
        raise ValueError("attention_head_by_head needs separate Q, K and V projections")
    def project(linear: torch.nn.Linear, rows: slice) -> torch.Tensor:
        """x through one head's block of rows of a projection: (B, T, H) -> (B, T, hs)."""
        return x @ linear.weight[rows].T + linear.bias[rows]

    outputs = []
    for head in range(layer.num_heads):
        rows = slice(head * layer.head_size, (head + 1) * layer.head_size)
        q, k, v = (project(linear, rows) for linear in (layer.query, layer.key, layer.value))
        scores = layer.score(q, k)  # (B, T, T)
        if additive_mask is not None:
            scores = scores + additive_mask[:, 0]  # the mask is shared by the heads
        outputs.append(scores.softmax(dim=-1) @ v)  # (B, T, hs)
    return torch.cat(outputs, dim=-1)  # (B, T, H)

# ---------------------------------------------------------------- reading attention out of a model


@torch.no_grad()
def attention_maps(model, batch: dict[str, torch.Tensor],
                   attention_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
    """The attention weights of every layer, one (B, nh, T, T) tensor each, on the CPU.
    attention_mask, if given, replaces the batch's (e.g. a (B, T, T) matrix)."""
    encoder = encoder_of(model).eval()
    inputs = model_inputs(batch, encoder.device)
    if attention_mask is not None:
        inputs["attention_mask"] = attention_mask.to(encoder.device)
    out = encoder(**inputs, output_attentions=True)
    return [weights.cpu() for weights in out.attentions]


@torch.no_grad()
def attention_logits(model, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """The scores that each layer's softmax receives, q·k times the layer's scale (1/sqrt(d_k),
    or 1 without scaling), before any mask is added: one (B, nh, T, T) tensor a layer."""
    encoder = encoder_of(model).eval()
    out = encoder(**model_inputs(batch, encoder.device), output_hidden_states=True)
    logits = []
    for layer, x in zip(encoder.encoder.layer, out.hidden_states[:-1]):  # each layer's input
        logits.append(layer.attention.self.scores(layer.attention_input(x)).cpu())
    return logits


class AttentionWithAndWithoutProjections(torch.nn.Module):
    """A model's attention maps beside the maps each layer would give on the same input with
    q = k = v = that input (scores divided by `temperature`), both (L, B, nh, T, T), and the
    hidden states (L + 1, B, T, H). A module, so that it also exports (minibert.export)."""

    def __init__(self, model: BertModel, temperature: float = 1.0):
        super().__init__()
        self.model = model
        bare_config = model.config.replace(use_qkv_projections=False)
        self.bare = BertSelfAttention(bare_config).to(model.device).eval()
        self.bare.scale /= temperature

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor | None = None,
                attention_mask: torch.Tensor | None = None):
        out = self.model(input_ids, attention_mask, token_type_ids, output_attentions=True,
                         output_hidden_states=True)
        mask = self.model.additive_mask(attention_mask, input_ids.shape[1], torch.float32,
                                        input_ids.device)
        bare = [self.bare(layer.attention_input(h), mask, need_weights=True)[1]
                for layer, h in zip(self.model.encoder.layer, out.hidden_states[:-1])]
        return torch.stack(out.attentions), torch.stack(bare), torch.stack(out.hidden_states)


@torch.no_grad()
def attention_with_and_without_projections(
    model: BertModel, batch: dict[str, torch.Tensor], temperature: float = 1.0
) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    """For every layer: the model's own attention maps, and the maps that layer would give
    on the same input if q = k = v were the input itself (scores divided by temperature).
    Each list holds one (B, nh, T, T) tensor per layer."""
    with_projections, without, _ = AttentionWithAndWithoutProjections(model, temperature)(**batch)
    return list(with_projections), list(without)

# ---------------------------------------------------------------- what the maps show


def diagonal_mass(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Mean attention a real token pays to itself, per head.
    weights (B, nh, T, T), attention_mask (B, T) -> (nh,)"""
    diagonal = weights.diagonal(dim1=-2, dim2=-1)  # (B, nh, T)
    real = attention_mask[:, None, :].to(diagonal.dtype)  # (B, 1, T)
    return (diagonal * real).sum(dim=(0, 2)) / real.sum()


def self_is_argmax(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """Fraction of real tokens, per head, whose largest attention weight is on themselves.
    weights (B, nh, T, T), attention_mask (B, T) -> (nh,)"""
    T = weights.shape[-1]
    is_self = weights.argmax(dim=-1) == torch.arange(T, device=weights.device)  # (B, nh, T)
    real = attention_mask[:, None, :].to(weights.dtype)
    return (is_self.to(weights.dtype) * real).sum(dim=(0, 2)) / real.sum()


def attention_entropy(weights: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
    """How spread out each token's attention is: the entropy of its row divided by the
    entropy of uniform attention over the sentence's n real tokens, log n. 1 = uniform,
    0 = all weight on one token. weights (B, nh, T, T), attention_mask (B, T) ->
    (B, nh, T), NaN at padding positions."""
    p = weights.clamp_min(1e-12)
    entropy = -(weights * p.log()).sum(dim=-1)  # (B, nh, T)
    n = attention_mask.sum(dim=1).to(weights.dtype)  # (B,)
    normalised = entropy / torch.log(n).clamp_min(math.log(2))[:, None, None]
    return normalised.masked_fill(attention_mask[:, None, :] == 0, float("nan"))


def _mean_over(values: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """Mean of values (B, nh, T') over the positions where valid (B, T') is true -> (nh,)."""
    valid = valid[:, None, :].to(values.dtype)  # (B, 1, T')
    return (values * valid).sum(dim=(0, 2)) / valid.sum()


def layer_pattern_scores(weights: torch.Tensor, attention_mask: torch.Tensor,
                         is_cls: torch.Tensor, is_sep: torch.Tensor) -> dict[str, torch.Tensor]:
    """The five pattern scores of one layer's heads, averaged over the real query tokens.

    weights (B, nh, T, T), row = attending token; attention_mask, is_cls, is_sep (B, T)
    booleans. Returns {pattern: (nh,)}. "previous token" is the mean weight a token puts on
    the token just before it (over tokens that have one), "next token" likewise; "[CLS]" and
    "[SEP]" are the mean weight on those tokens; "broad" is the attention's entropy divided
    by log(number of real tokens): 1 for uniform attention, 0 for attention on one token."""
    real = attention_mask.bool()  # (B, T)
    weights = weights.float()
    previous = weights.diagonal(offset=-1, dim1=-2, dim2=-1)  # (B, nh, T-1): a[i+1, i]
    following = weights.diagonal(offset=1, dim1=-2, dim2=-1)  # (B, nh, T-1): a[i, i+1]
    has_neighbour = real[:, 1:]  # both tokens of the pair are real (right padding)
    on_cls = (weights * is_cls[:, None, None, :]).sum(-1)  # (B, nh, T)
    on_sep = (weights * is_sep[:, None, None, :]).sum(-1)  # (B, nh, T)
    entropy = -(weights * weights.clamp_min(1e-12).log()).sum(-1)  # (B, nh, T)
    n_real = real.sum(dim=1).clamp_min(2).to(weights.dtype)  # (B,)
    broadness = entropy / n_real.log()[:, None, None]  # (B, nh, T)
    return {
        "previous token": _mean_over(previous, has_neighbour),
        "next token": _mean_over(following, has_neighbour),
        "[CLS]": _mean_over(on_cls, real),
        "[SEP]": _mean_over(on_sep, real),
        "broad": _mean_over(broadness, real),
    }


def pattern_scores(attentions: Sequence[torch.Tensor], input_ids: torch.Tensor,
                   attention_mask: torch.Tensor, cls_id: int = CLS_ID,
                   sep_id: int = SEP_ID) -> dict[str, torch.Tensor]:
    """Each pattern's score for every head of every layer: {pattern: (L, nh)}.

    attentions: the model's output_attentions, one (B, nh, T, T) tensor per layer, for a
    right-padded batch; input_ids and attention_mask (B, T) locate [CLS], [SEP] and padding."""
    real = attention_mask.bool()
    is_cls = (input_ids == cls_id) & real
    is_sep = (input_ids == sep_id) & real
    per_layer = [layer_pattern_scores(w.detach().cpu(), real.cpu(), is_cls.cpu(), is_sep.cpu())
                 for w in attentions]
    return {name: torch.stack([scores[name] for scores in per_layer]) for name in PATTERNS}


def best_heads(scores: dict[str, torch.Tensor]) -> dict[str, tuple[int, int, float]]:
    """For each pattern, the (layer, head, score) of the head that scores highest."""
    best = {}
    for name, grid in scores.items():  # grid (L, nh)
        flat = int(grid.argmax())
        layer, head = divmod(flat, grid.shape[1])
        best[name] = (layer, head, float(grid[layer, head]))
    return best


def attention_share_split(attentions: Sequence[torch.Tensor], input_ids: torch.Tensor,
                          attention_mask: torch.Tensor, cls_id: int = CLS_ID,
                          sep_id: int = SEP_ID) -> dict[str, list[float]]:
    """Where each token's attention goes, per layer: the mean share of a real token's
    weight on the other words (real tokens but [CLS], [SEP] and itself), on itself, and on
    [CLS] and [SEP]. "Attention mixes in the other words" is tested here: a layer whose
    weight sits on itself and the special tokens mixes in little of them. A special
    token's weight on itself counts both as "itself" and as "[CLS] and [SEP]".

    attentions: one (B, nh, T, T) tensor per layer for a right-padded batch; input_ids and
    attention_mask (B, T). Returns {kind: [share per layer]}, averaged over heads and real
    query tokens."""
    real = attention_mask.bool()  # (B, T)
    special = (input_ids == cls_id) | (input_ids == sep_id)  # (B, T)
    T = input_ids.shape[1]
    diagonal = torch.eye(T, dtype=torch.bool, device=input_ids.device)  # (T, T)
    words_mask = (real & ~special)[:, None, None, :] & ~diagonal  # (B, 1, T, T)
    rows = real[:, None, :].expand(-1, attentions[0].shape[1], -1)  # (B, nh, T) real rows
    share = {"other words": [], "itself": [], "[CLS] and [SEP]": []}
    for weights in attentions:  # (B, nh, T, T)
        share["other words"].append((weights * words_mask).sum(-1)[rows].mean().item())
        share["itself"].append(weights.diagonal(dim1=-2, dim2=-1)[rows].mean().item())
        special_weight = (weights * special[:, None, None, :]).sum(-1)  # (B, nh, T)
        share["[CLS] and [SEP]"].append(special_weight[rows].mean().item())
    return share


def _own_segment(batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """Which keys lie in each query's own segment, (B, T, T) true for real keys of the
    query's segment, and which tokens are real, (B, T); both on the CPU."""
    segments = batch["token_type_ids"].cpu()  # (B, T)
    real = batch["attention_mask"].cpu().bool()  # (B, T)
    return (segments[:, :, None] == segments[:, None, :]) & real[:, None, :], real


def own_segment_shares(model, batch: dict[str, torch.Tensor]) -> dict[tuple[int, int], float]:
    """How much a token keeps its attention inside its own segment (its own sentence of a
    pair): the mean weight that a real token puts on the real tokens of its segment, for
    every head. Set it against `even_segment_share`, what spreading the weight evenly
    would give. Returns {(layer, head): share}."""
    own, real = _own_segment(batch)  # (B, T, T), (B, T)
    shares = {}
    for layer, weights in enumerate(attention_maps(model, batch)):  # (B, nh, T, T)
        for head in range(weights.shape[1]):
            on_own = (weights[:, head] * own).sum(-1)  # (B, T)
            shares[layer, head] = on_own[real].mean().item()
    return shares


def even_segment_share(batch: dict[str, torch.Tensor]) -> float:
    """The `own_segment_shares` of attention spread evenly over the real tokens: the mean,
    over real tokens, of their segment's share of the row's tokens (0.5 for two segments of
    one length, more where one segment is longer)."""
    own, real = _own_segment(batch)  # (B, T, T), (B, T)
    even = own.sum(-1) / real.sum(-1, keepdim=True)  # (B, T)
    return even[real].mean().item()


@torch.no_grad()
def value_norms(model, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """How much each token can contribute through each head: the length of
    W_O^h v_j^h, the head's value vector of token j after the output projection.
    One (B, nh, T) tensor per layer. A token with a short vector adds little to the output
    however much attention it receives (Kobayashi et al., 2020)."""
    out = model(**batch, output_hidden_states=True)
    norms = []
    for layer, x in zip(model.encoder.layer, out.hidden_states[:-1]):  # each layer's input
        _, _, v = layer.attention.self.heads(layer.attention_input(x))  # (B, nh, T, hs)
        nh, hs = v.shape[1], v.shape[3]
        w_out = layer.attention.output.dense.weight.view(-1, nh, hs)  # (H, nh, hs)
        projected = torch.einsum("bnts,hns->bnth", v, w_out)  # (B, nh, T, H)
        norms.append(projected.norm(dim=-1))
    return norms


def norm_weighted(attentions: Sequence[torch.Tensor],
                  norms: Sequence[torch.Tensor]) -> list[torch.Tensor]:
    """Attention weights times the attended token's value norm, rescaled so that each row
    sums to 1: the share of a head's output that comes from each token. Same shapes as
    `attentions`; pass the result to `pattern_scores` to measure shares of the output."""
    weighted = [a * n[:, :, None, :] for a, n in zip(attentions, norms)]  # (B, nh, T, T)
    return [w / w.sum(dim=-1, keepdim=True).clamp_min(1e-12) for w in weighted]

# ---------------------------------------------------------------- rewiring attention: self only, [MASK] rows


def masked_corpus_batch(num_documents: int = 60, max_length: int = 32, rate: float = 0.15,
                        seed: int = 0) -> dict[str, torch.Tensor]:
    """Held-out corpus rows (as the zoo trains on, [CLS] A [SEP] B [SEP]) with `rate` of
    their tokens replaced by [MASK], every chosen one: labels hold the hidden ids at those
    positions and -100 elsewhere."""
    tokenizer = corpus_tokenizer()
    documents = generate_corpus(num_documents, seed=PROBE_DOCUMENT_SEED + seed)
    rows = pretraining_pairs(documents, tokenizer, max_length, seed=seed)
    masker = Masker.for_tokenizer(tokenizer, rate=rate, split=(1.0, 0.0, 0.0))
    batch = {name: rows[name] for name in INPUT_NAMES}
    return masker(batch, torch.Generator().manual_seed(seed))


def predicted_positions(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """(B, T) 1 where a token is to be predicted (a [MASK] in `masked_corpus_batch`)."""
    return (batch["labels"] != IGNORE_INDEX).long()


def self_only_mask(attention_mask: torch.Tensor) -> torch.Tensor:
    """A (B, T, T) attention mask (1 = may attend) that lets each token attend to itself
    and nothing else: the control that forbids attention between tokens, under which the
    same token at the same position gets the same output in every sentence.
    attention_mask (B, T) -> (B, T, T), of its dtype and on its device."""
    T = attention_mask.shape[1]
    eye = torch.eye(T, dtype=attention_mask.dtype, device=attention_mask.device)  # (T, T)
    return eye.expand(attention_mask.shape[0], T, T)


def attention_rule_at_masks(batch: dict[str, torch.Tensor], rule: str) -> torch.Tensor:
    """A (B, T, T) attention mask (1 = may attend) that leaves ordinary tokens as they are
    (all real tokens) and changes the rows of the predicted positions:
    "self_only" lets them attend to themselves alone, "no_self" to every real token but
    themselves."""
    if rule not in ("self_only", "no_self"):
        raise ValueError(f"rule must be 'self_only' or 'no_self', got {rule!r}")
    real = batch["attention_mask"].bool()  # (B, T)
    T = real.shape[1]
    allowed = real[:, None, :].expand(-1, T, -1).clone()  # (B, T, T) query row, key column
    rows = predicted_positions(batch).bool()  # (B, T)
    itself = self_only_mask(real)  # (B, T, T)
    if rule == "self_only":
        allowed[rows] = itself[rows]
    else:
        allowed[rows] &= ~itself[rows]
    return allowed.long()


def mlm_accuracy(model: BertForPreTraining, batch: dict[str, torch.Tensor],
                 attention_mask: torch.Tensor | None = None) -> float:
    """Share of the predicted positions whose top-scoring token is the hidden one.
    attention_mask, if given, replaces the batch's (see `attention_rule_at_masks`)."""
    if attention_mask is not None:
        batch = {**batch, "attention_mask": attention_mask}
    scores = masked_lm_scores(model, batch)
    return scores.right.sum().item() / scores.asked.sum().item()


# ---------------------------------------------------------------- padding


@torch.no_grad()
def padded_first_layer_attention(model: BertModel, input_ids: torch.Tensor, extra: int,
                                 masked: bool) -> torch.Tensor:
    """First-layer attention of one sentence's tokens, averaged over the heads, with `extra`
    [PAD] positions (id 0) appended: masked=True hides them, masked=False tells the model
    they are real tokens. input_ids: (1, n). Returns the real tokens' rows, (n, n + extra)."""
    n = input_ids.shape[1]
    padding = torch.zeros(1, extra, dtype=input_ids.dtype, device=input_ids.device)
    ids = torch.cat([input_ids, padding], dim=1)  # (1, n + extra)
    attention_mask = torch.ones_like(ids)
    if masked:
        attention_mask[:, n:] = 0
    weights = model(ids, attention_mask, output_attentions=True).attentions[0]  # (1, nh, T, T)
    return weights[0].mean(0)[:n]  # (n, n + extra)


def share_on_padding(weights: torch.Tensor) -> float:
    """Mean share of the real tokens' attention that lands on padding keys, for an
    (n, n + extra) map whose first n columns are the real tokens."""
    return weights[:, weights.shape[0]:].sum(dim=-1).mean().item()


def real_block_change(weights: torch.Tensor, unpadded: torch.Tensor) -> float:
    """How far the real tokens' attention to each other, the (n, n) block of an
    (n, n + extra) map, moved from the (n, n) map of the sentence without padding."""
    return (weights[:, : unpadded.shape[1]] - unpadded).abs().max().item()
