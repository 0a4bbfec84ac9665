"""Fill-in-the-blank tests: blanks in the middle of rows, hiding the right context."""

import pytest
import torch

import minibert
from minibert.measure import blanks as fill
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus


@pytest.fixture(scope="module")
def rows():
    return pretraining_pairs(generate_corpus(12, seed=3), corpus_tokenizer(), max_length=32)


def model_for(direction):
    torch.manual_seed(0)
    config = minibert.preset("tiny", vocab_size=corpus_tokenizer().vocab_size,
                             attention_direction=direction)
    return minibert.BertForPreTraining(config).eval()


def test_one_blank_per_row_in_the_middle(rows):
    blanks = fill.middle_blanks(rows, low=0.25, high=0.75)
    tokenizer = rows.tokenizer
    assert 0 < len(blanks) <= len(rows)
    assert ((blanks.input_ids == tokenizer.mask_id).sum(dim=1) == 1).all()
    at_blank = blanks.input_ids[torch.arange(len(blanks)), blanks.position]
    assert (at_blank == tokenizer.mask_id).all()
    assert not torch.isin(blanks.answer, torch.tensor(tokenizer.special_ids)).any()
    lengths = blanks.attention_mask.sum(dim=1)
    place = (blanks.position - 1) / (lengths - 3)
    assert ((place >= 0.25) & (place < 0.75)).all()
    with pytest.raises(ValueError, match="low < high"):
        fill.middle_blanks(rows, low=0.8, high=0.2)


def test_hiding_the_right_changes_only_the_bidirectional_model(rows):
    blanks = fill.middle_blanks(rows)
    causal, bidirectional = model_for("causal"), model_for("bidirectional")
    assert torch.equal(fill.blank_logits(causal, blanks),
                       fill.blank_logits(causal, blanks, hide_right=True))
    assert not torch.allclose(fill.blank_logits(bidirectional, blanks),
                              fill.blank_logits(bidirectional, blanks, hide_right=True))
    assert 0.0 <= fill.blank_accuracy(bidirectional, blanks) <= 1.0


def test_accuracy_by_position_counts_every_masked_token(rows):
    accuracy, total = fill.accuracy_by_position(model_for("bidirectional"), rows, repeats=2)
    assert accuracy.shape == total.shape == (rows["input_ids"].shape[1],)
    assert total[0] == 0 and torch.isnan(accuracy[0])  # [CLS] is never masked
    assert total.sum() > 0
    scored = total > 0
    assert ((accuracy[scored] >= 0) & (accuracy[scored] <= 1)).all()
