"""Rare words of a batch: coverage, the rare set, and the loss on chosen words."""

import pytest
import torch

import minibert
from minibert.measure import rare_words
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus, zipfian_corpus, zipfian_tokenizer
from minibert.training.trainer import evaluate_mlm


def rows(spellings: int):
    if spellings == 1:
        return pretraining_pairs(generate_corpus(200, seed=1), corpus_tokenizer(), 32, None)
    documents = zipfian_corpus(200, seed=1, spellings=spellings)
    return pretraining_pairs(documents, zipfian_tokenizer(spellings), 32, None)


def test_a_zipfian_vocabulary_is_mostly_absent_from_a_batch():
    plain, zipf = rows(1), rows(16)
    assert rare_words.batch_coverage(plain, 64) > 0.6
    assert rare_words.batch_coverage(zipf, 64) < 0.25
    rare = rare_words.rare_words(zipf, 64)
    assert rare.float().mean() > 0.5 and not rare[list(zipf.tokenizer.special_ids)].any()
    assert rare_words.rare_words(plain, 64).float().mean() < rare.float().mean()


def test_the_loss_on_every_word_is_the_fill_in_the_blank_loss():
    data = rows(4)
    torch.manual_seed(0)
    config = minibert.preset("tiny", vocab_size=data.tokenizer.vocab_size)
    model = minibert.BertForPreTraining(config)
    every = rare_words.ordinary_words(data)
    assert rare_words.loss_on_words(model, data, every) == pytest.approx(
        evaluate_mlm(model, data)["mlm_loss"], rel=1e-5)
    with pytest.raises(ValueError, match="no masked position"):
        rare_words.loss_on_words(model, data, torch.zeros_like(every))
