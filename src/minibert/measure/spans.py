"""Spans of tokens: the answer span a question-answering head picks, the entity spans a
tagger predicts, and how both are scored.

Question answering (SQuAD-style): the head gives every token a start score s_i and an end
score e_j; a span (i, j) scores s_i + e_j, and the answer is the best *valid* span: end
not before start, at most `max_answer_length` tokens, inside the context. Answers are
compared as text with SQuAD's exact match and token F1.

Tagging (CoNLL-style): BIO tags per word become entities (kind, first word, last word);
precision, recall and F1 count whole entities, so a name with one wrong word is a miss.
Labels live on each word's first WordPiece piece; the other pieces get -100 (ignored).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..model.heads import IGNORE_INDEX

# ---------------------------------------------------------------- answer spans


@dataclass(frozen=True)
class Span:
    """Tokens start..end (both included) and the span's score s_start + e_end."""

    start: int
    end: int
    score: float


def context_mask(input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                 attention_mask: torch.Tensor, sep_id: int) -> torch.Tensor:
    """Where an answer may lie in [CLS] question [SEP] context [SEP] rows: the real tokens
    of segment 1, minus [SEP]. Same shape as input_ids, bool."""
    return (token_type_ids == 1) & (attention_mask == 1) & (input_ids != sep_id)


def span_scores(start_logits: torch.Tensor, end_logits: torch.Tensor, allowed: torch.Tensor,
                max_answer_length: int = 10) -> torch.Tensor:
    """The score s_i + e_j of every span (i, j) of one row, -inf where the span is invalid:
    j < i, longer than max_answer_length tokens, or an end outside `allowed`. (T,) -> (T, T)"""
    if max_answer_length < 1:
        raise ValueError(f"max_answer_length must be at least 1, got {max_answer_length!r}")
    if not start_logits.shape == end_logits.shape == allowed.shape or start_logits.dim() != 1:
        raise ValueError("start_logits, end_logits and allowed must be 1-D and of one length")
    T = start_logits.shape[0]
    scores = start_logits[:, None] + end_logits[None, :]  # (T, T): row = start, column = end
    i = torch.arange(T, device=allowed.device)
    length = i[None, :] - i[:, None] + 1  # (T, T): j - i + 1
    valid = (length >= 1) & (length <= max_answer_length) & allowed[:, None] & allowed[None, :]
    return scores.float().masked_fill(~valid, float("-inf"))


def best_span(start_logits: torch.Tensor, end_logits: torch.Tensor, allowed: torch.Tensor,
              max_answer_length: int = 10) -> Span:
    """The valid span of one row with the highest s_i + e_j (see span_scores)."""
    scores = span_scores(start_logits, end_logits, allowed, max_answer_length)
    flat = int(scores.argmax())
    if scores.view(-1)[flat] == float("-inf"):
        raise ValueError("no valid span: `allowed` marks no token")
    T = scores.shape[1]
    return Span(flat // T, flat % T, float(scores.view(-1)[flat]))


def best_spans(start_logits: torch.Tensor, end_logits: torch.Tensor, allowed: torch.Tensor,
               max_answer_length: int = 10) -> list[Span]:
    """best_span for each row of a batch: (B, T) tensors -> B spans."""
    return [best_span(s, e, a, max_answer_length)
            for s, e, a in zip(start_logits.detach().cpu(), end_logits.detach().cpu(),
                               allowed.detach().cpu())]


def naive_spans(start_logits: torch.Tensor, end_logits: torch.Tensor) -> list[tuple[int, int]]:
    """The two argmaxes taken apart, with no check: (start, end) per row. The end may come
    before the start, or either may fall in the question."""
    return list(zip(start_logits.argmax(-1).tolist(), end_logits.argmax(-1).tolist()))


def normalize_answer(text: str) -> str:
    """SQuAD's normalisation: lower case, no punctuation, no articles, single spaces."""
    text = "".join(ch for ch in text.lower() if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def exact_match(prediction: str, truth: str) -> float:
    """1.0 if the normalised texts are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(truth))


def f1_score(prediction: str, truth: str) -> float:
    """SQuAD's token F1: the harmonic mean of precision and recall of the words shared by
    the normalised prediction and truth (counted with multiplicity)."""
    predicted, true = normalize_answer(prediction).split(), normalize_answer(truth).split()
    if not predicted or not true:
        return float(predicted == true)
    common = sum((Counter(predicted) & Counter(true)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(true)
    return 2 * precision * recall / (precision + recall)


# ---------------------------------------------------------------- entity spans


@dataclass(frozen=True)
class Entity:
    """An entity of `kind` over words start..end (both included)."""

    kind: str
    start: int
    end: int


def bio_entities(tags: Sequence[str]) -> list[Entity]:
    """The entities of a BIO tag sequence, read as conlleval does: B-X starts an entity,
    I-X continues one of kind X, and an I-X with nothing of kind X to continue starts one."""
    entities: list[Entity] = []
    kind, start = None, 0
    for i, tag in enumerate([*tags, "O"]):  # the final O closes the last entity
        prefix, _, tag_kind = tag.partition("-")
        if prefix not in ("B", "I", "O") or (prefix != "O" and not tag_kind):
            raise ValueError(f"not a BIO tag: {tag!r}")
        continues = prefix == "I" and tag_kind == kind
        if kind is not None and not continues:
            entities.append(Entity(kind, start, i - 1))
            kind = None
        if prefix == "B" or (prefix == "I" and not continues):
            kind, start = tag_kind, i
    return entities


def entity_scores(true_tags: Sequence[Sequence[str]], predicted_tags: Sequence[Sequence[str]]
                  ) -> dict[str, float]:
    """Entity-level precision, recall and F1 over sentences: a predicted entity counts only
    if its kind and both boundaries match a true one exactly."""
    if len(true_tags) != len(predicted_tags):
        raise ValueError("true_tags and predicted_tags must hold the same number of sentences")
    correct = true_count = predicted_count = 0
    for truth, prediction in zip(true_tags, predicted_tags):
        if len(truth) != len(prediction):
            raise ValueError("each predicted sentence needs as many tags as the true one")
        true_entities, predicted = set(bio_entities(truth)), set(bio_entities(prediction))
        correct += len(true_entities & predicted)
        true_count += len(true_entities)
        predicted_count += len(predicted)
    precision = correct / predicted_count if predicted_count else 0.0
    recall = correct / true_count if true_count else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1, "correct": correct,
            "true": true_count, "predicted": predicted_count}


def first_piece_labels(word_ids: Sequence[int | None], word_labels: Sequence[int]) -> list[int]:
    """Word labels moved onto tokens: each word's label on its first piece, -100 on its
    other pieces and on special tokens (word id None), so the loss scores each word once.
    word_ids is what a fast tokenizer's Encoding.word_ids gives."""
    labels, previous = [], None
    for word in word_ids:
        labels.append(IGNORE_INDEX if word is None or word == previous else word_labels[word])
        previous = word
    return labels


def word_predictions(token_predictions: Sequence[int], labels: Sequence[int]) -> list[int]:
    """The predictions at the scored tokens (label != -100), one per word, in order."""
    return [p for p, y in zip(token_predictions, labels) if y != IGNORE_INDEX]


def shifted_labels(labels: torch.Tensor) -> torch.Tensor:
    """The alignment bug, to measure what it costs: each row's word labels (its scored
    tokens, in order) laid one a token from the token after [CLS] on, as if every word
    were one token, so every label after a split word sits on the wrong token.
    (N, T) -> (N, T); reading predictions back with `word_predictions` on the result makes
    the same mistake at inference."""
    shifted = torch.full_like(labels, IGNORE_INDEX)  # (N, T)
    for row, out in zip(labels, shifted):
        words = row[row != IGNORE_INDEX]  # (n_words,)
        out[1:1 + len(words)] = words
    return shifted


def question_attention_shares(attentions: Sequence[torch.Tensor], question: torch.Tensor,
                              context: torch.Tensor, answer_start: torch.Tensor
                              ) -> list[tuple[float, float]]:
    """Per layer, how much of their attention (averaged over heads and rows) the context
    tokens, and the answer's first token, give to the question's tokens: (context, answer
    start). attentions: (N, nh, T, T) per layer; question, context: (N, T) masks;
    answer_start: (N,) token indices. Pass norm-weighted maps to weigh by value norms."""
    shares = []
    for weights in attentions:
        averaged = weights.mean(1).cpu()  # (N, T, T), over the heads
        to_question = (averaged * question[:, None, :]).sum(-1)  # (N, T)
        context = context.to(to_question.dtype)
        from_context = ((to_question * context).sum(1) / context.sum(1)).mean().item()
        rows = torch.arange(len(answer_start))
        from_answer = to_question[rows, answer_start].mean().item()  # over the rows
        shares.append((from_context, from_answer))
    return shares
