"""Masked-LM accuracy per word: the same words hidden for every tokeniser, every piece of a
hidden word masked, and a word right only when all its pieces are."""

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from minibert.measure.whole_words import mask_whole_words, whole_word_accuracy, words_right
from minibert.model.heads import IGNORE_INDEX
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import generate_corpus
from minibert.text.masking import Masker
from minibert.text.subwords import KINDS, train_subwords
from minibert.text.tokenizer import basic_tokenize
from minibert.training.trainer import MaskedLMScores


@pytest.fixture(scope="module")
def sentences_and_tokenizers():
    documents = generate_corpus(200, seed=0)
    tokenizers = {kind: train_subwords(kind, [d.text for d in documents], 70) for kind in KINDS}
    sentences = [s.text for d in generate_corpus(10, seed=10_000) for s in d.sentences]
    return sentences, tokenizers


def hidden_words(tokenizer, sentences, batch, word_ids):
    """(row, word index, the word its hidden pieces spell) for every hidden word."""
    found = set()
    for row, sentence in enumerate(sentences):
        words = basic_tokenize(sentence)
        for index in word_ids[row][word_ids[row] >= 0].unique().tolist():
            at = word_ids[row] == index
            assert (batch["input_ids"][row][at] == tokenizer.mask_id).all()
            pieces = [tokenizer.vocab[i] for i in batch["labels"][row][at].tolist()]
            assert pieces == tokenizer.split_word(words[index])  # every piece, in order
            found.add((row, index))
    return found


def test_every_tokeniser_is_asked_the_same_whole_words(sentences_and_tokenizers):
    sentences, tokenizers = sentences_and_tokenizers
    asked = {}
    for kind, tokenizer in tokenizers.items():
        batch, word_ids = mask_whole_words(tokenizer, sentences, rate=0.3, seed=3)
        asked[kind] = hidden_words(tokenizer, sentences, batch, word_ids)
        assert ((batch["labels"] != IGNORE_INDEX) == (word_ids >= 0)).all()  # nothing else
        assert (batch["attention_mask"].sum(1) == (batch["input_ids"] != tokenizer.pad_id).sum(1)).all()
    assert asked["bpe"] == asked["wordpiece"] == asked["unigram"]
    for row, sentence in enumerate(sentences):  # round(rate * words), punctuation excluded
        words = [w for w in basic_tokenize(sentence) if w.isalpha()]
        assert sum(r == row for r, _ in asked["bpe"]) == max(1, round(0.3 * len(words)))


def test_a_word_is_right_only_when_all_its_pieces_are():
    word_ids = torch.tensor([[-1, 0, 0, -1, 2, -1], [-1, 1, -1, 3, 3, 3]])
    right = torch.tensor([[False, True, False, False, True, False],
                          [False, True, False, True, True, True]])
    scores = MaskedLMScores(word_ids >= 0, right & (word_ids >= 0), torch.zeros(2, 6), None)
    assert words_right(scores, word_ids) == (3, 4)  # row 0's word 0 has a wrong piece


class Oracle(nn.Module):
    """Predicts the true id at every position (rows given in order), except where `wrong`."""

    def __init__(self, truth, wrong):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(1))  # masked_lm_scores reads its device
        self.truth, self.wrong, self.next_row = truth, wrong, 0

    def forward(self, input_ids, attention_mask=None, token_type_ids=None):
        rows = slice(self.next_row, self.next_row + len(input_ids))
        self.next_row += len(input_ids)
        predicted = torch.where(self.wrong[rows], self.truth[rows] + 1, self.truth[rows])
        return SimpleNamespace(logits=nn.functional.one_hot(predicted, 1000).float())  # (B, T, V)


def test_whole_word_accuracy_of_an_oracle_and_of_one_right_on_first_pieces_only(
        sentences_and_tokenizers):
    sentences, tokenizers = sentences_and_tokenizers
    tokenizer = tokenizers["wordpiece"]
    batch, word_ids = mask_whole_words(tokenizer, sentences, rate=0.3, seed=1)
    truth = torch.where(batch["labels"] == IGNORE_INDEX, batch["input_ids"], batch["labels"])
    nowhere = torch.zeros_like(truth, dtype=torch.bool)
    perfect = whole_word_accuracy(Oracle(truth, nowhere), tokenizer, sentences, rate=0.3,
                                  seed=1, batch_size=7)
    assert perfect == {"word accuracy": 1.0, "piece accuracy": 1.0}
    later_pieces = nowhere.clone()
    later_pieces[:, 1:] = (word_ids[:, 1:] >= 0) & (word_ids[:, 1:] == word_ids[:, :-1])
    first_only = whole_word_accuracy(Oracle(truth, later_pieces), tokenizer, sentences,
                                     rate=0.3, seed=1, batch_size=7)
    # hidden words of one piece are right, longer ones wrong
    sizes = [int((word_ids[r] == w).sum()) for r in range(len(sentences))
             for w in word_ids[r][word_ids[r] >= 0].unique()]
    assert first_only["word accuracy"] == sum(n == 1 for n in sizes) / len(sizes) < 1
    assert first_only["piece accuracy"] == len(sizes) / sum(sizes)


def test_any_of_the_three_tokenisers_builds_pretraining_rows(sentences_and_tokenizers):
    _, tokenizers = sentences_and_tokenizers
    documents = generate_corpus(6, seed=2)
    for tokenizer in tokenizers.values():
        rows = pretraining_pairs(documents, tokenizer, max_length=32)
        masked = Masker.for_tokenizer(tokenizer, rate=0.15)(rows.tensors,
                                                             torch.Generator().manual_seed(0))
        assert masked["input_ids"].max() < tokenizer.vocab_size
        assert (masked["labels"] != IGNORE_INDEX).any()


@pytest.mark.parametrize("call, message", [
    (lambda t: mask_whole_words(t, ["the fox runs ."], rate=0), "rate"),
    (lambda t: mask_whole_words(t, []), "at least one sentence"),
    (lambda t: mask_whole_words(t, [". ,"]), "no word to hide"),
    (lambda t: mask_whole_words(t, ["the fox runs ."], max_length=3), "max_length"),
    (lambda t: whole_word_accuracy(None, t, ["the fox runs ."], batch_size=0), "batch_size"),
])
def test_bad_arguments_are_named(call, message, sentences_and_tokenizers):
    with pytest.raises(ValueError, match=message):
        call(sentences_and_tokenizers[1]["bpe"])
