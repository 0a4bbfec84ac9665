"""Sentence vectors and how well they tell pairs apart (chapter 41): [CLS] against mean
pooling, scored on template-generated pairs by rank (AUC) and by a scale-free separation.

Cosines of different poolings live on different scales (one pooling may put every pair
near 0.5), so the scores here compare ranks, or distances in units of the spread of
unrelated pairs, rather than raw cosines.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from ..model.minilm import encode_sentences
from ..text.similarity_pairs import SentencePair

SENTENCE_POOLINGS = ("[CLS]", "mean pooling")


def text_vectors(model, tokenizer, texts: list[str]) -> dict[str, torch.Tensor]:
    """The last layer's [CLS] vector and the mean of the real tokens' vectors, (B, H)
    each, on the CPU. (Not the pooler output: MiniLM's sentence training never used it.)"""
    device = next(model.parameters()).device
    encoded, _ = encode_sentences(tokenizer, texts)
    encoded = {name: t.to(device) for name, t in encoded.items()}
    with torch.no_grad():
        hidden = model(**encoded).last_hidden_state  # (B, T, H)
    mask = encoded["attention_mask"][..., None].float()  # (B, T, 1)
    mean = (hidden * mask).sum(dim=1) / mask.sum(dim=1)
    return {"[CLS]": hidden[:, 0].cpu(), "mean pooling": mean.cpu()}


def pair_cosines(model, tokenizer, pairs: list[SentencePair]) -> dict[str, np.ndarray]:
    """For each pooling, the (P, P) cosines of every pair's first sentence (rows) with
    every pair's second sentence (columns): the diagonal holds the pairs themselves."""
    first = text_vectors(model, tokenizer, [p.first for p in pairs])
    second = text_vectors(model, tokenizer, [p.second for p in pairs])
    return {name: F.cosine_similarity(first[name][:, None], second[name][None, :],
                                      dim=-1).numpy() for name in SENTENCE_POOLINGS}


def unrelated_mask(pairs: list[SentencePair]) -> np.ndarray:
    """(P, P) True where row i's first sentence and column j's second come from two
    paraphrase pairs of different templates: unrelated sentences."""
    kinds = np.array([p.kind for p in pairs])
    templates = np.array([p.template for p in pairs])
    paraphrase = kinds == "paraphrase"
    return (paraphrase[:, None] & paraphrase[None, :]
            & (templates[:, None] != templates[None, :]))


def auc(positives: np.ndarray, negatives: np.ndarray) -> float:
    """The chance that a positive scores above a negative (ties count half)."""
    above = positives[:, None] > negatives[None, :]
    equal = positives[:, None] == negatives[None, :]
    return float(above.mean() + equal.mean() / 2)


def pair_scores(cosines: np.ndarray, pairs: list[SentencePair]) -> dict[str, float]:
    """How one pooling's cosines (P, P) rank the pairs:
    - "separation": (mean paraphrase cosine - mean unrelated cosine) / sd of unrelated;
    - "AUC vs unrelated" and "AUC vs same words": paraphrases ranked above those pairs;
    - "unrelated mean": the mean cosine of unrelated sentences (0 if they look unrelated);
    - "fooled": the share of "same words" pairs above the median paraphrase."""
    kinds = np.array([p.kind for p in pairs])
    diagonal = np.diag(cosines)
    paraphrase, same_words = diagonal[kinds == "paraphrase"], diagonal[kinds != "paraphrase"]
    unrelated = cosines[unrelated_mask(pairs)]
    return {"separation": float((paraphrase.mean() - unrelated.mean()) / unrelated.std()),
            "AUC vs unrelated": auc(paraphrase, unrelated),
            "AUC vs same words": auc(paraphrase, same_words),
            "unrelated mean": float(unrelated.mean()),
            "fooled": float((same_words > np.median(paraphrase)).mean())}
