"""Span decoding for QA, SQuAD's answer metrics, BIO entities and the entity scorer."""

import pytest
import torch

from minibert.measure.spans import (
    IGNORE_INDEX,
    Entity,
    best_span,
    best_spans,
    bio_entities,
    context_mask,
    entity_scores,
    exact_match,
    f1_score,
    first_piece_labels,
    naive_spans,
    normalize_answer,
    span_scores,
    word_predictions,
)


def test_best_span_is_the_best_valid_pair():
    start = torch.tensor([9.0, 0.0, 3.0, 1.0, 0.0])
    end = torch.tensor([0.0, 8.0, 0.0, 2.0, 0.0])
    allowed = torch.tensor([False, True, True, True, True])  # token 0 is the question
    # The argmaxes alone (start 0, end 1) start in the question; the best valid span is
    # (2, 3): 3 + 2, since an end at 1 would come before any allowed start but 1 itself.
    assert naive_spans(start[None], end[None]) == [(0, 1)]
    span = best_span(start, end, allowed)
    assert (span.start, span.end, span.score) == (1, 1, 8.0)
    # Forbid the one-token span at 1 by moving its start score down: now (2, 3) wins.
    start[1] = -10.0
    assert (best_span(start, end, allowed).start, best_span(start, end, allowed).end) == (2, 3)


def test_end_never_before_start_and_length_bound():
    start = torch.tensor([0.0, 0.0, 0.0, 5.0])
    end = torch.tensor([5.0, 0.0, 0.0, 0.0])
    allowed = torch.ones(4, dtype=torch.bool)
    scores = span_scores(start, end, allowed, max_answer_length=2)
    assert torch.isinf(scores[3, 0])  # end before start
    assert torch.isinf(scores[0, 2]) and torch.isfinite(scores[0, 1])  # 3 tokens > 2
    span = best_span(start, end, allowed, max_answer_length=2)
    assert span.start <= span.end <= span.start + 1


def test_best_spans_batch_and_errors():
    start, end = torch.randn(3, 6), torch.randn(3, 6)
    allowed = torch.ones(3, 6, dtype=torch.bool)
    spans = best_spans(start, end, allowed, max_answer_length=3)
    assert len(spans) == 3 and all(0 <= s.end - s.start < 3 for s in spans)
    with pytest.raises(ValueError, match="no valid span"):
        best_span(start[0], end[0], torch.zeros(6, dtype=torch.bool))
    with pytest.raises(ValueError, match="max_answer_length"):
        span_scores(start[0], end[0], allowed[0], max_answer_length=0)
    with pytest.raises(ValueError, match="1-D"):
        span_scores(start, end, allowed)


def test_context_mask_keeps_segment_b_without_sep():
    sep = 3
    input_ids = torch.tensor([[2, 7, 3, 8, 9, 3, 0]])
    token_type_ids = torch.tensor([[0, 0, 0, 1, 1, 1, 0]])
    attention_mask = torch.tensor([[1, 1, 1, 1, 1, 1, 0]])
    mask = context_mask(input_ids, token_type_ids, attention_mask, sep)
    assert mask.tolist() == [[False, False, False, True, True, False, False]]


def test_squad_metrics():
    assert normalize_answer("The  Drawer!") == "drawer"
    assert exact_match("the drawer", "drawer") == 1.0
    assert exact_match("emma", "emma brook") == 0.0
    assert f1_score("emma", "emma brook") == pytest.approx(2 / 3)
    assert f1_score("anna berg", "emma brook") == 0.0
    assert f1_score("", "") == 1.0 and f1_score("x", "") == 0.0


def test_bio_entities_conlleval_reading():
    tags = ["B-PERSON", "I-PERSON", "O", "I-CITY", "I-CITY", "B-CITY", "I-PERSON"]
    assert bio_entities(tags) == [Entity("PERSON", 0, 1), Entity("CITY", 3, 4),
                                  Entity("CITY", 5, 5), Entity("PERSON", 6, 6)]
    assert bio_entities(["O", "O"]) == []
    with pytest.raises(ValueError, match="BIO"):
        bio_entities(["X-CITY"])


def test_entity_scores_count_whole_entities():
    truth = [["B-PERSON", "I-PERSON", "O", "B-CITY"], ["O", "B-ANIMAL"]]
    # The person loses its second word: one entity wrong, though 5 of 6 tags are right.
    predicted = [["B-PERSON", "O", "O", "B-CITY"], ["O", "B-ANIMAL"]]
    scores = entity_scores(truth, predicted)
    assert (scores["correct"], scores["true"], scores["predicted"]) == (2, 3, 3)
    assert scores["precision"] == pytest.approx(2 / 3) == scores["recall"] == scores["f1"]
    assert entity_scores(truth, truth)["f1"] == 1.0
    assert entity_scores([["O"]], [["O"]])["f1"] == 0.0
    with pytest.raises(ValueError):
        entity_scores(truth, predicted[:1])
    with pytest.raises(ValueError):
        entity_scores([["O", "O"]], [["O"]])


def test_first_piece_labels():
    # [CLS] play ##ing foot ##ball [SEP]: words 0 and 1, each split in two pieces.
    word_ids = [None, 0, 0, 1, 1, None]
    labels = first_piece_labels(word_ids, [5, 7])
    assert labels == [IGNORE_INDEX, 5, IGNORE_INDEX, 7, IGNORE_INDEX, IGNORE_INDEX]
    assert word_predictions([0, 1, 2, 3, 4, 5], labels) == [1, 3]
