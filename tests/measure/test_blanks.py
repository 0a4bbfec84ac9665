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


def test_value_blanks_hide_a_fact_and_shares_count_the_right_kind():
    tokenizer = corpus_tokenizer()
    documents = generate_corpus(20, seed=4)
    found = fill.value_blanks(documents)
    assert found and all(b.words[b.position] == b.answer and b.answer in b.values
                         for b in found)
    model = model_for("bidirectional")
    probabilities = fill.value_blank_probabilities(model, found, tokenizer)
    assert probabilities.shape == (len(found), tokenizer.vocab_size)
    torch.testing.assert_close(probabilities.sum(-1), torch.ones(len(found)))
    shares = fill.value_blank_shares(model, found, tokenizer)
    assert set(shares) == {"true word on top", "right kind in top 5", "right kind among values"}
    assert all(0 <= share <= 1 for share in shares.values())

    class Oracle(torch.nn.Module):  # puts all its weight on each blank's true word
        def __init__(self):
            super().__init__()
            self.anchor = torch.nn.Parameter(torch.zeros(1))

        def forward(self, ids, attention_mask):
            logits = torch.zeros(*ids.shape, tokenizer.vocab_size)
            for row, blank in enumerate(found):
                logits[row, blank.position + 1, tokenizer.token_to_id[blank.answer]] = 50.0
            return type("Out", (), {"prediction_logits": logits})

    assert all(share == 1.0 for share in fill.value_blank_shares(Oracle(), found,
                                                                  tokenizer).values())
