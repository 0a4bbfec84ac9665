"""Watching WordPiece at work: the greedy longest-match-first search step by step, the
fewest-pieces split that greed can miss, and real English text to measure it on.

`trace` repeats `WordPiece.split_word` but records every vocabulary lookup, so a reader
can see why a word came out as "una ##ffa ##ble". `fewest_pieces` finds, by dynamic
programming, a split with as few pieces as the vocabulary allows, to compare with the
greedy one. `docstring_corpus` gathers the docstrings of Python's standard library: real
English prose that ships with every Python, so nothing has to be downloaded.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

import tokenizers

from ..text.tokenizer import CONTINUATION, MAX_WORD_CHARS, UNK, WordPiece


@dataclass(frozen=True)
class Step:
    """One position of the search: the candidates looked up there, longest first, and the
    piece taken (the last candidate tried), or None when not even one character matched."""

    start: int
    tried: tuple[str, ...]
    piece: str | None


@dataclass(frozen=True)
class Trace:
    """The whole search for one word, and the pieces it produced."""

    word: str
    steps: tuple[Step, ...]
    pieces: tuple[str, ...]

    @property
    def lookups(self) -> int:
        """How many vocabulary lookups the search made."""
        return sum(len(step.tried) for step in self.steps)

    def __str__(self) -> str:
        """One line per position: failed candidates crossed out, the match ticked."""
        lines = [f"{self.word!r}"]
        for step in self.steps:
            misses = [f"{c} ✗" for c in step.tried[:-1]]
            last = step.tried[-1] if step.tried else ""
            verdict = f"{last} ✓" if step.piece is not None else f"{last} ✗  -> no match: {UNK}"
            lines.append(f"  at {step.start:2d}: " + "  ".join([*misses, verdict]))
        lines.append(f"  pieces: {list(self.pieces)}")
        return "\n".join(lines)


def _lookup(vocab: WordPiece | Container[str]) -> Container[str]:
    return vocab.token_to_id if isinstance(vocab, WordPiece) else vocab


def trace(vocab: WordPiece | Container[str], word: str) -> Trace:
    """Split one (already basic-tokenized) word as WordPiece does, recording each lookup:
    from the current position, try the longest rest of the word, then shorter ones, until
    one is in the vocabulary (with the ## prefix after the first piece)."""
    known = _lookup(vocab)
    if len(word) > MAX_WORD_CHARS:
        return Trace(word, (), (UNK,))
    steps, start = [], 0
    while start < len(word):
        tried = []
        for end in range(len(word), start, -1):
            candidate = word[start:end] if start == 0 else CONTINUATION + word[start:end]
            tried.append(candidate)
            if candidate in known:
                steps.append(Step(start, tuple(tried), candidate))
                start = end
                break
        else:  # no candidate matched: BERT gives up on the whole word
            steps.append(Step(start, tuple(tried), None))
            return Trace(word, tuple(steps), (UNK,))
    return Trace(word, tuple(steps), tuple(step.piece for step in steps))


def fewest_pieces(vocab: WordPiece | Container[str], word: str) -> list[str] | None:
    """A split of `word` into as few vocabulary pieces as possible (None if there is none).
    best[i] holds a shortest split of word[:i]; a piece word[j:i] extends best[j]."""
    known = _lookup(vocab)
    best: list[list[str] | None] = [[]] + [None] * len(word)
    for i in range(1, len(word) + 1):
        for j in range(i):
            if best[j] is None:
                continue
            piece = word[:i] if j == 0 else CONTINUATION + word[j:i]
            if piece in known and (best[i] is None or len(best[j]) + 1 < len(best[i])):
                best[i] = [*best[j], piece]
    return best[len(word)]


def docstring_corpus(module_names: Iterable[str]) -> list[str]:
    """The docstrings of standard-library modules, of the classes and functions they
    define, and of those classes' public methods, in definition order."""
    texts = []
    for name in module_names:
        module = importlib.import_module(name)
        texts.append(inspect.getdoc(module))
        for attribute, value in vars(module).items():
            if attribute.startswith("_") or getattr(value, "__module__", None) != module.__name__:
                continue
            texts.append(inspect.getdoc(value))
            if inspect.isclass(value):
                texts += [inspect.getdoc(method) for key, method in vars(value).items()
                          if not key.startswith("_") and callable(method)]
    return [t for t in texts if t]


def split_sentences(texts: Iterable[str], min_words: int = 4) -> list[str]:
    """Sentences of at least `min_words` words, each once, in order of first appearance.
    A sentence ends after . ! or ? followed by whitespace; line breaks become spaces."""
    sentences = []
    for text in texts:
        sentences += re.split(r"(?<=[.!?])\s+", " ".join(text.split()))
    return list(dict.fromkeys(s for s in sentences if len(s.split()) >= min_words))


def segmentation_stats(tokenizer: tokenizers.Tokenizer, texts: Sequence[str]) -> dict[str, float]:
    """How a tokenizer cuts `texts` into words (BERT's pre-tokenization: whitespace and
    punctuation) and tokens: tokens per word, and the share of words that became [UNK]."""
    encodings = tokenizer.encode_batch(list(texts), add_special_tokens=False)
    unk_id = tokenizer.token_to_id(UNK)
    tokens = sum(sum(e.attention_mask) for e in encodings)  # padding, if on, left out
    words = sum(len({w for w in e.word_ids if w is not None}) for e in encodings)
    unknown = sum(e.ids.count(unk_id) for e in encodings)  # an [UNK] is always a whole word
    return {"words": words, "tokens": tokens, "tokens_per_word": tokens / words,
            "unk_word_rate": unknown / words}
