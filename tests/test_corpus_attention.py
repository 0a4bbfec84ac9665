"""Probes of a model on corpus text: the masked batch, the attention rules at [MASK], the
raw scores agree with the attention maps."""

import pytest
import torch

import minibert
from minibert import corpus_attention, data


@pytest.fixture(scope="module")
def model_and_batch():
    tokenizer = data.corpus_tokenizer()
    torch.manual_seed(0)
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, num_attention_heads=4)
    model = minibert.BertForPreTraining(config).eval()
    return model, corpus_attention.masked_corpus_batch(num_documents=8, seed=1)


def test_masked_batch_hides_exactly_the_labelled_tokens(model_and_batch):
    _, batch = model_and_batch
    mask_id = data.corpus_tokenizer().mask_id
    predicted = corpus_attention.predicted_positions(batch).bool()
    assert (batch["input_ids"][predicted] == mask_id).all()
    assert (batch["input_ids"][~predicted] != mask_id).all()
    share = predicted.sum() / (batch["attention_mask"].sum() - 3 * len(predicted))
    assert 0.1 < share < 0.25


def test_attention_rules_change_only_the_mask_rows(model_and_batch):
    model, batch = model_and_batch
    predicted = corpus_attention.predicted_positions(batch).bool()
    normal = corpus_attention.attention_maps(model, batch)[0]
    for rule in ("self_only", "no_self"):
        mask = corpus_attention.attention_rule_at_masks(batch, rule)
        ruled = corpus_attention.attention_maps(model, batch, mask)[0]  # (B, nh, T, T)
        diagonal = ruled.diagonal(dim1=-2, dim2=-1).transpose(1, 2)[predicted]  # (P, nh)
        expected = torch.ones_like(diagonal) if rule == "self_only" else torch.zeros_like(diagonal)
        torch.testing.assert_close(diagonal, expected)
        other_rows = ~predicted & batch["attention_mask"].bool()
        torch.testing.assert_close(ruled.transpose(1, 2)[other_rows],
                                   normal.transpose(1, 2)[other_rows])
    with pytest.raises(ValueError, match="rule"):
        corpus_attention.attention_rule_at_masks(batch, "others")


@pytest.mark.parametrize("scale", [True, False])
def test_logits_are_what_the_softmax_receives(model_and_batch, scale):
    model, batch = model_and_batch
    model = minibert.BertForPreTraining(model.config.replace(scale_attention_scores=scale))
    padding = (1 - batch["attention_mask"][:, None, None, :].float()) * -1e9
    logits = corpus_attention.attention_logits(model, batch)
    maps = corpus_attention.attention_maps(model, batch)
    for scores, weights in zip(logits, maps):
        torch.testing.assert_close((scores + padding).softmax(-1), weights, atol=1e-5, rtol=0)


def test_mlm_accuracy_counts_the_hidden_tokens(model_and_batch):
    model, batch = model_and_batch
    accuracy = corpus_attention.mlm_accuracy(model, batch)
    labels = batch["labels"]
    with torch.no_grad():
        logits = model(**{k: batch[k] for k in corpus_attention.MODEL_INPUTS}).prediction_logits
    expected = (logits.argmax(-1)[labels != -100] == labels[labels != -100]).float().mean()
    assert accuracy == pytest.approx(float(expected))
