"""Three subword tokenisers behind one interface, trained at one vocabulary size so they
compare: BPE, WordPiece and Unigram, with the measures a chapter compares them by.

- **BPE** merges the most frequent pair of units (`bpe.py`, written out to be read).
- **WordPiece** merges the pair with the best likelihood score c(ab) / (c(a) c(b)), the
  same merge loop (`bpe.learn_merges`), and reads words greedily, longest match first
  (`tokenizer.WordPiece`). `tokenizer.train_wordpiece`, the `tokenizers` library's trainer,
  merges by BPE's raw count instead (chapter 11 shows it); its WordPiece fits this
  interface too.
- **Unigram** starts from many candidate pieces and prunes those whose loss hurts the
  text's likelihood least, keeping each piece's probability, and splits a word into its
  most probable pieces (the `tokenizers` library's `UnigramTrainer`). Its pieces carry no
  "##": one entry serves the start and the middle of a word.

All three see the same words: BERT's basic tokenizer splits the text first. Their common
interface is `tokenizer.Vocabulary`, which WordPiece already was: ids, special tokens,
`split_word`, `tokenize`, `encode`; so every dataset of `datasets.py` and the masking
accept any of the three. It sits in `tokenizer.py`, below `bpe.py` and this module, because
WordPiece needs it and must not import them; this module is the one that knows all three:
training by name and the measures that compare them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import tokenizers
from tokenizers import models, pre_tokenizers, trainers

from .bpe import learn_merges, train_bpe, word_counts
from .tokenizer import CONTINUATION, SPECIAL_TOKENS, UNK, Vocabulary, WordPiece, basic_tokenize

KINDS = ("bpe", "wordpiece", "unigram")


class Unigram(Vocabulary):
    """A Unigram vocabulary, trained and applied (Viterbi: the most probable split) by the
    `tokenizers` library, with the words split by BERT's basic tokenizer. Its pieces do not
    mark where a word goes on, so `decode` puts a space between every two pieces."""

    def __init__(self, fast: tokenizers.Tokenizer, lowercase: bool = True):
        super().__init__(sorted(fast.get_vocab(), key=fast.token_to_id), lowercase)
        self.fast = fast

    def split_word(self, word: str) -> list[str]:
        if word not in self._pieces_of_word:
            self._pieces_of_word[word] = self.fast.encode(word, add_special_tokens=False).tokens
        return self._pieces_of_word[word]


def train_unigram(texts: Iterable[str], vocab_size: int, lowercase: bool = True) -> Unigram:
    """Learn a Unigram vocabulary of `vocab_size` entries with the `tokenizers` library."""
    words_of_texts = [" ".join(basic_tokenize(text, lowercase)) for text in texts]
    alphabet = {char for text in words_of_texts for char in text if char != " "}
    _check_size(vocab_size, len(SPECIAL_TOKENS) + len(alphabet))
    fast = tokenizers.Tokenizer(models.Unigram())
    fast.pre_tokenizer = pre_tokenizers.WhitespaceSplit()  # the words are split already
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=list(SPECIAL_TOKENS),
                                      unk_token=UNK, show_progress=False)
    fast.train_from_iterator(words_of_texts, trainer=trainer)
    return Unigram(fast, lowercase)


def train_subwords(kind: str, texts: Sequence[str], vocab_size: int,
                   lowercase: bool = True) -> Vocabulary:
    """Train a tokeniser of `kind` ("bpe", "wordpiece" or "unigram") on texts, with a
    vocabulary of `vocab_size` entries, the special tokens and the alphabet included. On
    small text it can hold fewer: BPE and WordPiece stop once no pair is seen twice, and
    the library's Unigram trainer can end below the size asked for, well before every
    word is an entry (check `len(vocab)` before comparing)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    texts = list(texts)
    if not any(basic_tokenize(text, lowercase) for text in texts):
        raise ValueError("train_subwords needs at least one text with a word in it")
    if kind == "bpe":
        return train_bpe(texts, vocab_size, lowercase=lowercase)
    if kind == "wordpiece":
        vocab, _ = learn_merges(word_counts(texts, lowercase), vocab_size, "likelihood")
        return WordPiece(vocab, lowercase)
    return train_unigram(texts, vocab_size, lowercase)


def _check_size(vocab_size: int, minimum: int) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int) or vocab_size < minimum:
        raise ValueError(f"vocab_size must be an integer of at least {minimum} (the special "
                         f"tokens and the alphabet of the text), got {vocab_size!r}")


def word_of(pieces: Sequence[str]) -> str:
    """The word that pieces spell: "##" (a continuing piece's mark) dropped, pieces joined."""
    return "".join(piece.removeprefix(CONTINUATION) for piece in pieces)


def pieces_per_word(tokenizer: Vocabulary, texts: Iterable[str]) -> float:
    """The mean number of pieces a word of the texts becomes (1.0: every word one entry)."""
    num_words = num_pieces = 0
    for text in texts:
        words = basic_tokenize(text, tokenizer.lowercase)
        num_words += len(words)
        num_pieces += sum(len(tokenizer.split_word(word)) for word in words)
    if not num_words:
        raise ValueError("pieces_per_word needs at least one text with a word in it")
    return num_pieces / num_words


def split_words(tokenizer: Vocabulary, words: Iterable[str]) -> dict[str, list[str]]:
    """Each word and the pieces the tokeniser splits it into."""
    return {word: tokenizer.split_word(word) for word in words}


def rare_words(train_texts: Iterable[str], texts: Iterable[str], max_count: int = 0,
               lowercase: bool = True) -> list[str]:
    """The words of `texts` seen at most `max_count` times in `train_texts`, in the order
    they first appear: the words a tokeniser has to split from pieces it learned elsewhere."""
    if isinstance(max_count, bool) or not isinstance(max_count, int) or max_count < 0:
        raise ValueError(f"max_count must be a non-negative integer, got {max_count!r}")
    seen = word_counts(train_texts, lowercase)
    found = (word for text in texts for word in basic_tokenize(text, lowercase))
    return list(dict.fromkeys(word for word in found if seen[word] <= max_count))

