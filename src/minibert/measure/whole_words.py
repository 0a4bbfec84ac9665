"""Masked-LM accuracy per word, so that models trained with different tokenisers compare:
a word counts as right when every one of its pieces is predicted right, the whole word
hidden.

Accuracy per piece does not compare across tokenisers: one that splits "wolves" into
"wol ##ves" is asked two easier questions where another is asked one. Here the words to
hide are drawn from the words themselves, before any tokeniser sees them, so every
tokeniser is asked the same words of the same sentences.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import torch

from ..model.heads import IGNORE_INDEX
from ..text.language import check_count
from ..text.tokenizer import Vocabulary, basic_tokenize
from ..training.trainer import MaskedLMScores, masked_lm_scores


def _is_word(word: str) -> bool:
    """A word worth asking for: it holds a letter or a digit (punctuation marks are not)."""
    return any(char.isalnum() for char in word)


def mask_whole_words(tokenizer: Vocabulary, sentences: Sequence[str], rate: float = 0.15,
                     seed: int = 0, max_length: int = 64
                     ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Rows [CLS] sentence [SEP] with whole words hidden. From each sentence a seeded draw
    picks round(rate * its words) words (at least one; punctuation is never picked) and
    every piece of a picked word becomes [MASK]. Returns the batch (input_ids,
    token_type_ids, attention_mask, labels: the original id where hidden, IGNORE_INDEX
    elsewhere) and (N, T) the index of the hidden word each position belongs to, -1 where
    nothing is hidden."""
    if not 0 < rate <= 1:
        raise ValueError(f"rate must lie in (0, 1], got {rate!r}")
    if not sentences:
        raise ValueError("mask_whole_words needs at least one sentence")
    rng = random.Random(seed)
    rows, labels, word_ids = [], [], []
    for sentence in sentences:
        words = basic_tokenize(sentence, tokenizer.lowercase)
        candidates = [i for i, word in enumerate(words) if _is_word(word)]
        if not candidates:
            raise ValueError(f"no word to hide in {sentence!r}")
        picked = set(rng.sample(candidates, max(1, round(rate * len(candidates)))))
        row, row_labels, row_words = [tokenizer.cls_id], [IGNORE_INDEX], [-1]
        for index, word in enumerate(words):
            ids = tokenizer.convert_tokens_to_ids(tokenizer.split_word(word))
            hidden = index in picked
            row += [tokenizer.mask_id] * len(ids) if hidden else ids
            row_labels += ids if hidden else [IGNORE_INDEX] * len(ids)
            row_words += [index if hidden else -1] * len(ids)
        if len(row) + 1 > max_length:
            raise ValueError(f"{len(row) + 1} tokens with [CLS] and [SEP], more than "
                             f"max_length={max_length}: {sentence!r}")
        rows.append([*row, tokenizer.sep_id])
        labels.append([*row_labels, IGNORE_INDEX])
        word_ids.append([*row_words, -1])
    length = max(len(row) for row in rows)

    def pad(lists: list[list[int]], value: int) -> torch.Tensor:
        return torch.tensor([r + [value] * (length - len(r)) for r in lists], dtype=torch.long)

    input_ids = pad(rows, tokenizer.pad_id)  # (N, T)
    batch = {"input_ids": input_ids, "token_type_ids": torch.zeros_like(input_ids),
             "attention_mask": pad([[1] * len(r) for r in rows], 0),
             "labels": pad(labels, IGNORE_INDEX)}
    return batch, pad(word_ids, -1)


def words_right(scores: MaskedLMScores, word_ids: torch.Tensor) -> tuple[int, int]:
    """(words with every piece right, words asked) in a scored batch; word_ids (B, T) as
    `mask_whole_words` returns them."""
    asked = word_ids >= 0  # (B, T)
    rows = torch.arange(word_ids.shape[0])[:, None].expand_as(word_ids)  # (B, T)
    key = rows * (int(word_ids.max()) + 1) + word_ids  # (B, T): one number per (row, word)
    num_asked = key[asked].unique().numel()
    num_wrong = key[asked & ~scores.right].unique().numel()  # a wrong piece: a wrong word
    return num_asked - num_wrong, num_asked


@torch.no_grad()
def whole_word_accuracy(model: torch.nn.Module, tokenizer: Vocabulary, sentences: Sequence[str],
                        rate: float = 0.15, seed: int = 0, batch_size: int = 256,
                        max_length: int = 64) -> dict[str, float]:
    """A masked-LM model's accuracy on whole hidden words ("word accuracy"), and on their
    pieces one by one ("piece accuracy", for contrast), over `mask_whole_words`."""
    check_count("batch_size", batch_size)
    batch, word_ids = mask_whole_words(tokenizer, sentences, rate, seed, max_length)
    right = asked = pieces_right = pieces_asked = 0
    for start in range(0, len(sentences), batch_size):
        part = {name: tensor[start:start + batch_size] for name, tensor in batch.items()}
        scores = masked_lm_scores(model, part)
        words = words_right(scores, word_ids[start:start + batch_size])
        right, asked = right + words[0], asked + words[1]
        pieces_right += int(scores.right.sum())
        pieces_asked += int(scores.asked.sum())
    return {"word accuracy": right / asked, "piece accuracy": pieces_right / pieces_asked}
