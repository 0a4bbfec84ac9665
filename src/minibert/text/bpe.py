"""Byte-pair encoding (BPE), trained by merging the most frequent pair, and the same merge
loop scored as WordPiece's papers describe it.

Training starts from the alphabet: a word is its characters, those after the first
marked "##" as in WordPiece ("fox" -> f ##o ##x), so that both vocabularies list the same
kind of entries. Then, until the vocabulary is full, it counts adjacent pairs of units
over the training words and merges the best pair everywhere; the merged unit is a new
entry. The score of a pair (a, b) is all that differs:
- BPE: its count c(ab), the raw frequency (Sennrich et al.);
- WordPiece: c(ab) / (c(a) c(b)), the likelihood score as Hugging Face writes it (Google
  never released its trainer), which favours pairs whose parts seldom appear apart.
BPE encodes a new word by replaying its merges in the order they were learned; a
WordPiece vocabulary is read greedily, longest match first (`tokenizer.WordPiece`).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

from .language import check_count
from .tokenizer import CONTINUATION, SPECIAL_TOKENS, UNK, Vocabulary, basic_tokenize

SCORES = ("count", "likelihood")

Pair = tuple[str, str]


def units(word: str) -> list[str]:
    """A word as the alphabet's units: "fox" -> ["f", "##o", "##x"]."""
    return [word[0], *(CONTINUATION + char for char in word[1:])]


def merged(pair: Pair) -> str:
    """The entry a merge makes: ("f", "##o") -> "fo", ("##o", "##x") -> "##ox"."""
    return pair[0] + pair[1].removeprefix(CONTINUATION)


def apply_merge(word_units: list[str], pair: Pair) -> list[str]:
    """The units with every occurrence of the pair, left to right, merged into one."""
    result, i = [], 0
    while i < len(word_units):
        if i + 1 < len(word_units) and (word_units[i], word_units[i + 1]) == pair:
            result.append(merged(pair))
            i += 2
        else:
            result.append(word_units[i])
            i += 1
    return result


def word_counts(texts: Iterable[str], lowercase: bool = True) -> Counter[str]:
    """How often each word occurs, the words split as BERT's basic tokenizer splits them."""
    return Counter(word for text in texts for word in basic_tokenize(text, lowercase))


def learn_merges(counts: Counter[str], vocab_size: int, score: str = "count",
                 min_frequency: int = 2) -> tuple[list[str], list[Pair]]:
    """Learn merges from word counts until the vocabulary (the special tokens, the alphabet
    and one entry a merge) holds `vocab_size` entries, or no pair is seen `min_frequency`
    times. Ties go to the pair that sorts first. Returns the vocabulary and the merges."""
    if score not in SCORES:
        raise ValueError(f"score must be one of {SCORES}, got {score!r}")
    check_count("vocab_size", vocab_size)
    check_count("min_frequency", min_frequency)
    if not counts or "" in counts:
        raise ValueError("learn_merges needs the counts of one or more non-empty words")
    split = {word: units(word) for word in counts}
    alphabet = sorted({unit for word_units in split.values() for unit in word_units})
    vocab = [*SPECIAL_TOKENS, *alphabet]
    if vocab_size < len(vocab):
        raise ValueError(f"vocab_size must be at least {len(vocab)} (the special tokens and "
                         f"the alphabet of the text), got {vocab_size}")
    pair_count: Counter[Pair] = Counter()
    unit_count: Counter[str] = Counter()
    words_with: defaultdict[Pair, set[str]] = defaultdict(set)  # pair -> words holding it
    for word, word_units in split.items():
        _add(word_units, counts[word], word, pair_count, unit_count, words_with)
    merges: list[Pair] = []
    while len(vocab) < vocab_size:
        best = _best_pair(pair_count, unit_count, score, min_frequency)
        if best is None:
            break
        merges.append(best)
        vocab.append(merged(best))
        for word in words_with.pop(best):  # only the words holding the pair change
            _add(split[word], -counts[word], word, pair_count, unit_count, words_with)
            split[word] = apply_merge(split[word], best)
            _add(split[word], counts[word], word, pair_count, unit_count, words_with)
    return vocab, merges


def _best_pair(pair_count: Counter[Pair], unit_count: Counter[str], score: str,
               min_frequency: int) -> Pair | None:
    """The best-scoring pair seen at least `min_frequency` times (ties: the first sorted)."""
    scores = {pair: count for pair, count in pair_count.items() if count >= min_frequency}
    if not scores:
        return None
    if score == "likelihood":  # c(ab) / (c(a) c(b)); equal fractions give equal floats
        scores = {(a, b): count / (unit_count[a] * unit_count[b])
                  for (a, b), count in scores.items()}
    top = max(scores.values())
    return min(pair for pair, value in scores.items() if value == top)


def _add(word_units: list[str], count: int, word: str, pair_count: Counter[Pair],
         unit_count: Counter[str], words_with: defaultdict[Pair, set[str]]) -> None:
    """Add (or, with a negative count, remove) one word's units and pairs to the counts."""
    for unit in word_units:
        unit_count[unit] += count
    for pair in zip(word_units, word_units[1:]):
        pair_count[pair] += count
        if pair_count[pair] == 0:
            del pair_count[pair]  # no word holds the pair any more
        elif count > 0:
            words_with[pair].add(word)


class BPE(Vocabulary):
    """A BPE vocabulary and its merges, in the order learned; encodes by replaying them."""

    def __init__(self, vocab: Sequence[str], merges: Sequence[Pair], lowercase: bool = True):
        super().__init__(vocab, lowercase)
        self.merges = list(merges)
        self.rank = {pair: i for i, pair in enumerate(self.merges)}  # learned earlier: lower

    def split_word(self, word: str) -> list[str]:
        """Start from the word's units and merge the pair learned earliest, again and again,
        until no learned pair is left. A character outside the alphabet makes it [UNK]."""
        if word not in self._pieces_of_word:
            pieces = units(word)
            if any(piece not in self.token_to_id for piece in pieces):
                pieces = [UNK]
            while len(pieces) > 1:
                pairs = [pair for pair in zip(pieces, pieces[1:]) if pair in self.rank]
                if not pairs:
                    break
                pieces = apply_merge(pieces, min(pairs, key=self.rank.__getitem__))
            self._pieces_of_word[word] = pieces
        return self._pieces_of_word[word]


def train_bpe(texts: Iterable[str], vocab_size: int, min_frequency: int = 2,
              lowercase: bool = True) -> BPE:
    """Learn a BPE vocabulary of at most `vocab_size` entries from texts."""
    counts = word_counts(texts, lowercase)
    if not counts:
        raise ValueError("train_bpe needs at least one non-empty text")
    return BPE(*learn_merges(counts, vocab_size, "count", min_frequency), lowercase=lowercase)
