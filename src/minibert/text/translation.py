"""A synthetic translation task: the corpus language's sentences, and their translations
into a target language that differs from it by known rules.

The target language keeps the source's words and meaning and changes two things:

- **Word order** (verb-final, articles after their noun), applied in this order:
  1. in a relative clause "that V the N" the verb follows its object: "that the N V";
  2. the sentence's main verb moves to the end, before the full stop. The main verb is the
     first finite verb (`VERBS`) outside the relative clause; the corpus grammar makes this
     well defined: every sentence has one, and no slot value before it is a verb form;
  3. an article ("the", "a") follows its noun, which in the corpus is always one word.
  "the fox lives in the forest ." becomes "fox the in forest the lives .".
- **Spelling**: a word is either kept as it is, or rewritten by a fixed letter
  substitution (ROT13: each letter moves 13 places, so every letter changes) and the
  suffix "en": "fox" -> "sbken". `overlap` is the share of the vocabulary that keeps its
  spelling, drawn with a seed: near 1 the two sides share most subwords (like English and
  German), near 0 almost none (like Chinese and English). Punctuation never changes.

Each pair carries its word alignment: target word j translates source word
`alignment[j]`, a permutation. `translation_tokenizers` trains WordPiece on the pairs;
`seq2seq_tensors` turns them into tensors for an encoder-decoder, `prefix_lm_tensors` for
a decoder alone that reads the source as a prefix.
"""

from __future__ import annotations

import codecs
import random
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from ..model.heads import IGNORE_INDEX
from .datasets import _pad
from .language import INTRANSITIVE, TRANSITIVE, check_count, corpus_words, generate_corpus
from .tokenizer import WordPiece, train_wordpiece

ARTICLES = ("the", "a")
RELATIVE = "that"  # "the dogs that chase the cat run .": the clause is "that V the N"
# Every finite verb form of the corpus: the agreement verbs and those of the templates.
VERBS = frozenset(
    [form for verbs in [*INTRANSITIVE.values(), TRANSITIVE] for pair in verbs for form in pair]
    + ["lives", "sleeps", "leaves", "eats", "looks", "likes", "is", "walk", "love", "works",
       "tastes", "says", "adds", "cooks", "serves", "comes", "eat", "shines", "goes",
       "belongs", "uses", "was", "has", "walks"]
)
SUFFIX = "en"
SPELLING_SEED = 30_000  # the words that keep their spelling come from seed + SPELLING_SEED
MIN_SENTENCES_PER_DOCUMENT = 8  # the shortest document of generate_corpus


def rewrite(word: str) -> str:
    """The target spelling of a word that does not keep its own: ROT13 and the suffix."""
    return codecs.encode(word, "rot13") + SUFFIX


def target_order(words: Sequence[str]) -> list[int]:
    """The source positions in target order (the module docstring's three rules)."""
    if not words or words[-1] != ".":
        raise ValueError(f"a source sentence ends with a full stop, got {' '.join(words)!r}")
    order = list(range(len(words)))
    relative_clause: set[int] = set()
    if RELATIVE in words:
        start = words.index(RELATIVE)
        if len(words) < start + 4 or words[start + 1] not in VERBS:
            raise ValueError(f"a relative clause is 'that V the N', got {' '.join(words)!r}")
        verb, article, noun = start + 1, start + 2, start + 3
        order[verb:noun + 1] = [article, noun, verb]  # rule 1: the verb follows its object
        relative_clause = {verb, article, noun}
    main_verbs = [i for i, w in enumerate(words) if w in VERBS and i not in relative_clause]
    if not main_verbs:
        raise ValueError(f"no verb found in {' '.join(words)!r}")
    order.remove(main_verbs[0])
    order.insert(len(order) - 1, main_verbs[0])  # rule 2: before the full stop
    j = 0
    while j < len(order) - 1:  # rule 3: each article swaps with the noun after it
        if words[order[j]] in ARTICLES:
            order[j], order[j + 1] = order[j + 1], order[j]
            j += 1
        j += 1
    return order


@dataclass(frozen=True)
class TranslationPair:
    """A source sentence, its translation, and where each target word comes from."""

    source: tuple[str, ...]
    target: tuple[str, ...]
    alignment: tuple[int, ...]  # target word j translates source word alignment[j]

    @property
    def source_text(self) -> str:
        return " ".join(self.source)

    @property
    def target_text(self) -> str:
        return " ".join(self.target)


class TargetLanguage:
    """The target language at one `overlap`: which words keep their spelling (a seeded
    draw of round(overlap * vocabulary) words; at one seed, a higher overlap keeps a
    superset of a lower one's words), and the translation of a sentence."""

    def __init__(self, overlap: float, seed: int = 0):
        if isinstance(overlap, bool) or not isinstance(overlap, (int, float)) \
                or not 0 <= overlap <= 1:
            raise ValueError(f"overlap must be a number in [0, 1], got {overlap!r}")
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"seed must be an integer, got {seed!r}")
        self.overlap = overlap
        vocabulary = [w for w in corpus_words() if w.isalpha()]  # punctuation never changes
        random.Random(seed + SPELLING_SEED).shuffle(vocabulary)
        self.kept = frozenset(vocabulary[:round(overlap * len(vocabulary))])

    def spell(self, word: str) -> str:
        """The target spelling of one source word."""
        return word if word in self.kept or not word.isalpha() else rewrite(word)

    def translate(self, words: Sequence[str]) -> TranslationPair:
        """One source sentence (its words) -> the pair with its alignment."""
        order = target_order(words)
        return TranslationPair(tuple(words), tuple(self.spell(words[i]) for i in order),
                               tuple(order))


def translation_pairs(num_pairs: int, seed: int = 0, overlap: float = 0.5
                      ) -> list[TranslationPair]:
    """The first `num_pairs` sentences of `generate_corpus(..., seed)`, translated at
    `overlap`. Pairs for a seed are a prefix of those for the same seed and more pairs."""
    check_count("num_pairs", num_pairs)
    language = TargetLanguage(overlap, seed)
    num_documents = -(-num_pairs // MIN_SENTENCES_PER_DOCUMENT)  # rounded up
    sentences = [s for d in generate_corpus(num_documents, seed) for s in d.sentences]
    return [language.translate(s.words) for s in sentences[:num_pairs]]


def translation_tokenizers(pairs: Sequence[TranslationPair], vocab_size: int,
                           shared: bool = True) -> tuple[WordPiece, WordPiece]:
    """WordPiece vocabularies of at most `vocab_size` entries trained on the pairs: one
    for both sides (`shared`; returned twice, the same object) or one per side."""
    if not pairs:
        raise ValueError("translation_tokenizers needs at least one pair")
    sources = [p.source_text for p in pairs]
    targets = [p.target_text for p in pairs]
    if shared:
        tokenizer, _ = train_wordpiece(sources + targets, vocab_size)
        return tokenizer, tokenizer
    return train_wordpiece(sources, vocab_size)[0], train_wordpiece(targets, vocab_size)[0]


@dataclass
class TranslationData:
    """Pairs as padded tensors named as the model's forward() arguments (`seq2seq_tensors`
    and `prefix_lm_tensors` say which), and where each piece comes from: `source_words`,
    the source word at each position of input_ids, and `target_words`, the target word of
    each label (-1 for special tokens and padding), for reading attention against each
    pair's `alignment`."""

    tensors: dict[str, torch.Tensor]
    source_words: torch.Tensor  # (N, S), S the length of input_ids
    target_words: torch.Tensor  # (N, T), T the length of labels
    pairs: list[TranslationPair]
    source_tokenizer: WordPiece
    target_tokenizer: WordPiece

    def __len__(self) -> int:
        return len(self.pairs)


def _pieces(tokenizer: WordPiece, words: Sequence[str]) -> tuple[list[int], list[int]]:
    """The ids of the words' pieces, and the word index of each piece."""
    ids, word_of_piece = [], []
    for index, word in enumerate(words):
        pieces = tokenizer.split_word(word)
        ids += tokenizer.convert_tokens_to_ids(pieces)
        word_of_piece += [index] * len(pieces)
    return ids, word_of_piece


def seq2seq_tensors(pairs: Sequence[TranslationPair], source_tokenizer: WordPiece,
                    target_tokenizer: WordPiece) -> TranslationData:
    """Encode pairs for an encoder-decoder trained with teacher forcing, the tensors named
    as Hugging Face's encoder-decoders name them: input_ids and attention_mask (the
    source, [CLS] ... [SEP]); decoder_input_ids and decoder_attention_mask (the target
    after [CLS], the start token); labels (the target, then [SEP] as the end token;
    IGNORE_INDEX where the row only pads)."""
    if not pairs:
        raise ValueError("seq2seq_tensors needs at least one pair")
    source_ids, source_words, decoder_ids, labels, target_words = [], [], [], [], []
    for pair in pairs:
        ids, words = _pieces(source_tokenizer, pair.source)
        source_ids.append([source_tokenizer.cls_id, *ids, source_tokenizer.sep_id])
        source_words.append([-1, *words, -1])
        ids, words = _pieces(target_tokenizer, pair.target)
        decoder_ids.append([target_tokenizer.cls_id, *ids])  # the labels, shifted right
        labels.append([*ids, target_tokenizer.sep_id])
        target_words.append([*words, -1])
    input_ids = _pad(source_ids, source_tokenizer.pad_id)  # (N, S)
    decoder_input_ids = _pad(decoder_ids, target_tokenizer.pad_id)  # (N, T)
    tensors = {
        "input_ids": input_ids,
        "attention_mask": (input_ids != source_tokenizer.pad_id).long(),
        "decoder_input_ids": decoder_input_ids,
        "decoder_attention_mask": (decoder_input_ids != target_tokenizer.pad_id).long(),
        "labels": _pad(labels, IGNORE_INDEX),  # (N, T)
    }
    return TranslationData(tensors, _pad(source_words, -1), _pad(target_words, -1), list(pairs),
                           source_tokenizer, target_tokenizer)


def prefix_lm_tensors(pairs: Sequence[TranslationPair], tokenizer: WordPiece) -> TranslationData:
    """Encode pairs for a decoder alone, given the source as a prefix (one vocabulary for
    both sides): input_ids [CLS] source [SEP] target and its attention_mask; labels ask, at
    the [SEP] and at each target piece, for the next token (the target, then [SEP] as the
    end token), as `masking.next_token_labels` does; the source is never predicted."""
    if not pairs:
        raise ValueError("prefix_lm_tensors needs at least one pair")
    rows, labels, source_words, target_words = [], [], [], []
    for pair in pairs:
        source_ids, source_of_piece = _pieces(tokenizer, pair.source)
        target_ids, target_of_piece = _pieces(tokenizer, pair.target)
        prefix = 1 + len(source_ids)  # [CLS] and the source: nothing to predict there
        rows.append([tokenizer.cls_id, *source_ids, tokenizer.sep_id, *target_ids])
        labels.append([IGNORE_INDEX] * prefix + [*target_ids, tokenizer.sep_id])
        source_words.append([-1, *source_of_piece, -1] + [-1] * len(target_ids))
        target_words.append([-1] * prefix + [*target_of_piece, -1])
    input_ids = _pad(rows, tokenizer.pad_id)  # (N, S + T)
    tensors = {"input_ids": input_ids,
               "attention_mask": (input_ids != tokenizer.pad_id).long(),
               "labels": _pad(labels, IGNORE_INDEX)}  # (N, S + T)
    return TranslationData(tensors, _pad(source_words, -1), _pad(target_words, -1), list(pairs),
                           tokenizer, tokenizer)


def shared_piece_share(pairs: Sequence[TranslationPair], tokenizer: WordPiece) -> float:
    """The share of the target side's pieces (counted with repeats) that occur on the
    source side too: how many subwords the two languages share in one vocabulary."""
    source_pieces = {p for pair in pairs for word in pair.source
                     for p in tokenizer.split_word(word)}
    target_pieces = [p for pair in pairs for word in pair.target
                     for p in tokenizer.split_word(word)]
    if not target_pieces:
        raise ValueError("shared_piece_share needs at least one pair")
    return sum(p in source_pieces for p in target_pieces) / len(target_pieces)
