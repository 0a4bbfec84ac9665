"""Looking inside a model pre-trained on the synthetic corpus: its attention maps and raw
scores on held-out text, and its masked-LM accuracy when the attention of the [MASK]
positions is forced onto themselves or kept off them.

Attention masks here are full (B, T, T) matrices, 1 = may attend, which every minibert
model accepts as `attention_mask`; so these probes change no weight and no code.
"""

from __future__ import annotations

import torch

from .data import corpus_tokenizer, generate_corpus, pretraining_pairs
from .masking import Masker
from .model import BertForPreTraining, BertModel

HELD_OUT_SEED = 20_000  # probe documents: a seed range that no zoo model trains on

MODEL_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def masked_corpus_batch(num_documents: int = 60, max_length: int = 32, rate: float = 0.15,
                        seed: int = 0) -> dict[str, torch.Tensor]:
    """Held-out corpus rows (as the zoo trains on, [CLS] A [SEP] B [SEP]) with `rate` of
    their tokens replaced by [MASK], every chosen one: labels hold the hidden ids at those
    positions and -100 elsewhere."""
    tokenizer = corpus_tokenizer()
    documents = generate_corpus(num_documents, seed=HELD_OUT_SEED + seed)
    rows = pretraining_pairs(documents, tokenizer, max_length, seed=seed)
    masker = Masker.for_tokenizer(tokenizer, rate=rate, split=(1.0, 0.0, 0.0))
    batch = {name: rows[name] for name in MODEL_INPUTS}
    return masker(batch, torch.Generator().manual_seed(seed))


def _encoder(model) -> BertModel:
    return model.bert if hasattr(model, "bert") else model


def _inputs(batch: dict[str, torch.Tensor], device) -> dict[str, torch.Tensor]:
    return {name: batch[name].to(device) for name in MODEL_INPUTS if name in batch}


@torch.no_grad()
def attention_maps(model, batch: dict[str, torch.Tensor],
                   attention_mask: torch.Tensor | None = None) -> list[torch.Tensor]:
    """The attention weights of every layer, one (B, nh, T, T) tensor each, on the CPU.
    attention_mask, if given, replaces the batch's (e.g. a (B, T, T) matrix)."""
    encoder = _encoder(model).eval()
    inputs = _inputs(batch, encoder.device)
    if attention_mask is not None:
        inputs["attention_mask"] = attention_mask.to(encoder.device)
    out = encoder(**inputs, output_attentions=True)
    return [weights.cpu() for weights in out.attentions]


@torch.no_grad()
def attention_logits(model, batch: dict[str, torch.Tensor]) -> list[torch.Tensor]:
    """The scores that each layer's softmax receives, q·k times the layer's scale (1/sqrt(d_k),
    or 1 without scaling), before any mask is added: one (B, nh, T, T) tensor a layer."""
    encoder = _encoder(model).eval()
    out = encoder(**_inputs(batch, encoder.device), output_hidden_states=True)
    logits = []
    for layer, x in zip(encoder.encoder.layer, out.hidden_states[:-1]):
        if encoder.config.layer_norm_position == "pre":
            x = layer.attention.output.LayerNorm(x)
        attention = layer.attention.self
        q, k, _ = (attention.split_heads(t) for t in attention.project(x))  # (B, nh, T, hs)
        logits.append(((q @ k.transpose(-2, -1)) * attention.scale).cpu())
    return logits


def predicted_positions(batch: dict[str, torch.Tensor]) -> torch.Tensor:
    """(B, T) 1 where a token is to be predicted (a [MASK] in `masked_corpus_batch`)."""
    return (batch["labels"] != -100).long()


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
    eye = torch.eye(T, dtype=torch.bool)
    if rule == "self_only":
        allowed[rows] = eye[None].expand(len(rows), -1, -1)[rows]
    else:
        allowed[rows] &= ~eye[None].expand(len(rows), -1, -1)[rows]
    return allowed.long()


@torch.no_grad()
def mlm_accuracy(model: BertForPreTraining, batch: dict[str, torch.Tensor],
                 attention_mask: torch.Tensor | None = None) -> float:
    """Share of the predicted positions whose top-scoring token is the hidden one.
    attention_mask, if given, replaces the batch's (see `attention_rule_at_masks`)."""
    model.eval()
    inputs = _inputs(batch, model.device)
    if attention_mask is not None:
        inputs["attention_mask"] = attention_mask.to(model.device)
    labels = batch["labels"].to(model.device)
    logits = model(**inputs, labels=labels).prediction_logits  # (P, V): predicted rows only
    return float((logits.argmax(dim=-1) == labels[labels != -100]).float().mean())
