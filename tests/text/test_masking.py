"""Masked-LM corruption: realised rates match the requested ones; specials are never touched."""

import pytest
import torch

from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.text.masking import IGNORE_INDEX, Masker, mask_tokens, next_token_labels


@pytest.fixture(scope="module")
def batch():
    tokenizer = corpus_tokenizer()
    pairs = pretraining_pairs(generate_corpus(600, seed=0), tokenizer, max_length=64)
    return pairs["input_ids"], tokenizer


def corrupt(batch, seed=0, **settings):
    ids, tokenizer = batch
    generator = torch.Generator().manual_seed(seed)
    return mask_tokens(ids, tokenizer.special_ids, tokenizer.vocab_size, tokenizer.mask_id,
                       generator=generator, **settings)


def within(realised, expected, n, sigmas=4.0):
    """|realised - expected| within `sigmas` binomial standard errors of n draws."""
    error = (expected * (1 - expected) / n) ** 0.5
    return abs(realised - expected) <= sigmas * error + 1e-12


@pytest.mark.parametrize("rate,split", [(0.15, (0.8, 0.1, 0.1)), (0.4, (0.5, 0.3, 0.2)),
                                        (0.05, (1.0, 0.0, 0.0))])
def test_realised_rates_match_the_requested_ones(batch, rate, split):
    ids, tokenizer = batch
    corrupted, labels = corrupt(batch, rate=rate, split=split)
    eligible = ~torch.isin(ids, torch.tensor(tokenizer.special_ids))
    chosen = labels != -100
    n_eligible, n_chosen = int(eligible.sum()), int(chosen.sum())
    assert within(n_chosen / n_eligible, rate, n_eligible)
    masked = corrupted[chosen] == tokenizer.mask_id
    unchanged = corrupted[chosen] == ids[chosen]
    replaced = ~masked & ~unchanged
    ordinary = tokenizer.vocab_size - len(tokenizer.special_ids)
    # A random draw can give back the original token: 1 time in `ordinary`.
    expected = (split[0], split[1] * (1 - 1 / ordinary), split[2] + split[1] / ordinary)
    for share, want in zip((masked, replaced, unchanged), expected):
        assert within(share.float().mean().item(), want, n_chosen), (share.float().mean(), want)


def test_labels_hold_the_originals_and_specials_are_never_chosen(batch):
    ids, tokenizer = batch
    corrupted, labels = corrupt(batch, rate=0.5, split=(0.0, 1.0, 0.0))
    chosen = labels != -100
    assert torch.equal(labels[chosen], ids[chosen])
    assert torch.equal(corrupted[~chosen], ids[~chosen])  # padding, [CLS], [SEP] untouched
    assert not torch.isin(ids[chosen], torch.tensor(tokenizer.special_ids)).any()
    # RANDOM replacements are ordinary tokens, never [PAD], [MASK], [CLS]...
    assert not torch.isin(corrupted[chosen], torch.tensor(tokenizer.special_ids)).any()


def test_at_least_one_and_at_most_max_predictions_per_sequence(batch):
    ids, tokenizer = batch
    _, labels = corrupt(batch, rate=0.01)
    assert ((labels != -100).sum(dim=1) >= 1).all()  # even where 1% of a row rounds to 0
    _, labels = corrupt(batch, rate=0.9, max_predictions=5)
    assert ((labels != -100).sum(dim=1) <= 5).all()


def test_same_generator_seed_same_masks(batch):
    assert all(torch.equal(a, b) for a, b in zip(corrupt(batch, seed=3), corrupt(batch, seed=3)))
    assert not torch.equal(corrupt(batch, seed=3)[1], corrupt(batch, seed=4)[1])


@pytest.mark.parametrize("settings,message", [
    (dict(rate=0.0), "rate"), (dict(rate=1.5), "rate"), (dict(rate=-0.1), "rate"),
    (dict(split=(0.8, 0.1, 0.0)), "sum to 1"), (dict(split=(1.2, -0.1, -0.1)), "negative"),
    (dict(split=(0.5, 0.5)), "three"), (dict(max_predictions=0), "max_predictions"),
])
def test_bad_settings_raise_a_named_error(batch, settings, message):
    with pytest.raises(ValueError, match=message):
        corrupt(batch, **settings)
    with pytest.raises(ValueError, match=message):
        Masker.for_tokenizer(batch[1], **settings)


def test_masker_adds_labels_to_a_batch(batch):
    ids, tokenizer = batch
    masked = Masker.for_tokenizer(tokenizer, rate=0.2)({"input_ids": ids[:4]})
    assert set(masked) == {"input_ids", "labels"}
    assert (masked["labels"] != -100).any()


def test_next_token_labels_shift_the_row_by_one_and_skip_padding():
    tokenizer = corpus_tokenizer()
    rows = pretraining_pairs(generate_corpus(20, seed=3), tokenizer, 32, negatives=None)
    labelled = next_token_labels(rows)
    ids, labels = rows["input_ids"], labelled["labels"]  # (N, T) each
    assert labelled["input_ids"].equal(ids)  # nothing is masked
    for row_ids, row_labels in zip(ids.tolist(), labels.tolist()):
        length = sum(token != tokenizer.pad_id for token in row_ids)
        assert row_labels[:length - 1] == row_ids[1:length]  # token t+1 at position t
        assert set(row_labels[length - 1:]) == {IGNORE_INDEX}  # last real token and padding
    assert (ids == tokenizer.pad_id).any()  # the rows did have padding to skip
    with pytest.raises(ValueError, match="already carry labels"):
        next_token_labels(labelled)
