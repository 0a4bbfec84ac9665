"""WordPiece, as BERT uses it: a short readable encoder, and training with `tokenizers`.

Encoding text takes two stages, as in Google's BERT code:
1. basic tokenization: clean the text, put spaces around CJK characters, lower-case and
   strip accents (the "uncased" models), split on whitespace and punctuation;
2. WordPiece: split each word greedily into the longest pieces found in the vocabulary,
   pieces after the first carrying a "##" prefix; a word that cannot be split is [UNK].
The `tokenizers` library does the same in Rust; the tests check that both agree.
What does not depend on how words are split (ids, special tokens, encoding a text or a
pair, decoding) is in `Vocabulary`, which BPE (`bpe.py`) and Unigram (`subwords.py`) share.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, normalizers, pre_tokenizers, processors, trainers

PAD, UNK, CLS, SEP, MASK = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"
SPECIAL_TOKENS = (PAD, UNK, CLS, SEP, MASK)  # the order a freshly trained vocabulary gets
CONTINUATION = "##"  # marks a piece that continues the word before it
MAX_WORD_CHARS = 100  # longer words become [UNK], as in BERT

# Code point ranges of the CJK ideographs that BERT splits into one token each.
_CJK_RANGES = (
    (0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F),
)


def _is_cjk(char: str) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_punctuation(char: str) -> bool:
    """BERT's punctuation: every non-alphanumeric ASCII symbol (so "$" and "^" count too)
    and every Unicode character in a P* category."""
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_whitespace(char: str) -> bool:
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def _is_control(char: str) -> bool:
    if char in "\t\n\r":
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def _strip_accents(word: str) -> str:
    """Decompose (é -> e + combining acute) and drop the combining marks."""
    return "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")


# Plain ASCII text needs no accent, CJK or control-character handling: a regular expression
# gives the same split as the character loop below, many times faster.
_ASCII_WORD_OR_PUNCTUATION = re.compile(r"[A-Za-z0-9]+|[!-/:-@\[-`{-~]")
_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def basic_tokenize(text: str, lowercase: bool = True) -> list[str]:
    """Split text into words and punctuation marks, the way BERT does before WordPiece."""
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return _ASCII_WORD_OR_PUNCTUATION.findall(text.lower() if lowercase else text)
    return _basic_tokenize_unicode(text, lowercase)


def _basic_tokenize_unicode(text: str, lowercase: bool = True) -> list[str]:
    """basic_tokenize for any text, one character at a time."""
    spaced = []
    for char in text:
        if char in ("\0", "\ufffd") or _is_control(char):
            continue  # invalid or invisible characters are dropped
        if _is_whitespace(char):
            spaced.append(" ")
        elif _is_cjk(char):
            spaced.append(f" {char} ")  # each ideograph is a word of its own
        else:
            spaced.append(char)
    words = []
    for word in "".join(spaced).split():
        if lowercase:
            word = _strip_accents(word.lower())
        current = ""
        for char in word:  # each punctuation mark becomes a word of its own
            if _is_punctuation(char):
                words.extend([current, char] if current else [char])
                current = ""
            else:
                current += char
        if current:
            words.append(current)
    return words


@dataclass
class Encoding:
    """One encoded text or text pair: ids with [CLS] and [SEP], and the segment of each."""

    ids: list[int]
    token_type_ids: list[int]
    tokens: list[str]


class Vocabulary:
    """What every subword tokenizer of the book shares (WordPiece here; BPE in `bpe.py`,
    Unigram in `subwords.py`): a vocabulary that holds the special tokens, ids both ways,
    and a text split by the basic tokenizer, then word by word with `split_word`."""

    def __init__(self, vocab: Sequence[str], lowercase: bool = True):
        if len(set(vocab)) != len(vocab):
            raise ValueError("the vocabulary holds the same token twice")
        missing = [t for t in SPECIAL_TOKENS if t not in vocab]
        if missing:
            raise ValueError(f"the vocabulary lacks the special tokens {missing}")
        self.vocab = list(vocab)  # id -> token
        self.token_to_id = {token: i for i, token in enumerate(self.vocab)}
        self.lowercase = lowercase
        self._pieces_of_word: dict[str, list[str]] = {}  # cache: text repeats its words

    def __len__(self) -> int:
        return len(self.vocab)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def pad_id(self) -> int:
        return self.token_to_id[PAD]

    @property
    def unk_id(self) -> int:
        return self.token_to_id[UNK]

    @property
    def cls_id(self) -> int:
        return self.token_to_id[CLS]

    @property
    def sep_id(self) -> int:
        return self.token_to_id[SEP]

    @property
    def mask_id(self) -> int:
        return self.token_to_id[MASK]

    @property
    def special_ids(self) -> list[int]:
        return [self.token_to_id[t] for t in SPECIAL_TOKENS]

    def split_word(self, word: str) -> list[str]:
        """One word -> its pieces, each an entry of the vocabulary."""
        raise NotImplementedError

    def tokenize(self, text: str) -> list[str]:
        """Text -> pieces, without [CLS]/[SEP]."""
        return [piece for word in basic_tokenize(text, self.lowercase)
                for piece in self.split_word(word)]

    def convert_tokens_to_ids(self, tokens: Iterable[str]) -> list[int]:
        return [self.token_to_id.get(t, self.unk_id) for t in tokens]

    def encode(self, text: str, max_length: int | None = None) -> Encoding:
        """[CLS] text [SEP], cut to max_length tokens if given."""
        tokens = self.tokenize(text)
        if max_length is not None:
            tokens = tokens[: max(0, max_length - 2)]
        tokens = [CLS, *tokens, SEP]
        return Encoding(self.convert_tokens_to_ids(tokens), [0] * len(tokens), tokens)

    def encode_pair(self, text_a: str, text_b: str, max_length: int | None = None) -> Encoding:
        """[CLS] a [SEP] b [SEP] with segment ids 0 for a and 1 for b. Over max_length, the
        longer text loses its last token until the pair fits ("longest first")."""
        a, b = self.tokenize(text_a), self.tokenize(text_b)
        if max_length is not None:
            while len(a) + len(b) > max_length - 3 and (a or b):
                (a if len(a) > len(b) else b).pop()
        tokens = [CLS, *a, SEP, *b, SEP]
        token_type_ids = [0] * (len(a) + 2) + [1] * (len(b) + 1)
        return Encoding(self.convert_tokens_to_ids(tokens), token_type_ids, tokens)

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = True) -> str:
        """Ids -> text: ## pieces glued to the piece before them (original casing and
        spacing around punctuation are not recovered)."""
        specials = set(SPECIAL_TOKENS)
        words: list[str] = []
        for i in ids:
            token = self.vocab[int(i)]
            if skip_special_tokens and token in specials:
                continue
            if token.startswith(CONTINUATION) and words:
                words[-1] += token[len(CONTINUATION):]
            else:
                words.append(token)
        return " ".join(words)


class WordPiece(Vocabulary):
    """A WordPiece vocabulary and the greedy longest-match-first encoder that uses it."""

    @classmethod
    def from_file(cls, path: str | Path, lowercase: bool = True) -> WordPiece:
        """Read a vocab.txt: one token a line, the line number is its id. Lines end at "\n"
        only, as in Google's reader: a token may hold another line-break character
        (Chinese BERT's vocabulary has two), which str.splitlines would split."""
        lines = Path(path).read_text(encoding="utf-8").split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # the newline after the last token
        return cls([line.rstrip("\r") for line in lines], lowercase=lowercase)

    def save(self, path: str | Path) -> None:
        """Write vocab.txt (to a directory, or to the file named)."""
        path = Path(path)
        if path.is_dir():
            path = path / "vocab.txt"
        path.write_text("\n".join(self.vocab) + "\n", encoding="utf-8")

    def split_word(self, word: str) -> list[str]:
        """Greedy longest match first: take the longest vocabulary entry that starts the
        word, then repeat on the rest with the ## prefix. No split possible -> [UNK]."""
        if word in self._pieces_of_word:
            return self._pieces_of_word[word]
        pieces, start = [], 0
        if len(word) > MAX_WORD_CHARS:
            pieces = [UNK]
        while start < len(word) and pieces != [UNK]:
            end = len(word)
            while end > start:
                candidate = word[start:end] if start == 0 else CONTINUATION + word[start:end]
                if candidate in self.token_to_id:
                    break
                end -= 1
            if end == start:  # not even one character matched: the whole word is unknown
                pieces = [UNK]
            else:
                pieces.append(candidate)
                start = end
        self._pieces_of_word[word] = pieces
        return pieces

    def to_fast(self) -> tokenizers.Tokenizer:
        """The same vocabulary as a `tokenizers.Tokenizer`, for speed on large text."""
        model = models.WordPiece(self.token_to_id, unk_token=UNK,
                                 max_input_chars_per_word=MAX_WORD_CHARS)
        return _add_template(_bert_tokenizer(model, lowercase=self.lowercase))


CHINESE_VOCAB = Path(__file__).parent / "vocab" / "bert_base_chinese_vocab.txt"


def chinese_vocabulary(lowercase: bool = False) -> WordPiece:
    """The real vocabulary of Google's Chinese BERT-base ("bert-base-chinese"): 21,128
    entries, thousands of them single CJK characters (bare and with "##"). It ships with
    the package (vocab/bert_base_chinese_vocab.txt; source and Apache-2.0 licence in
    vocab/NOTICE), without the model's weights. By default case is kept, as Hugging
    Face's configuration of that checkpoint does (do_lower_case=False); the vocabulary
    holds no upper-case Latin letters, so English reads better with lowercase=True."""
    return WordPiece.from_file(CHINESE_VOCAB, lowercase=lowercase)


def _bert_tokenizer(model, lowercase: bool = True) -> tokenizers.Tokenizer:
    """A `tokenizers.Tokenizer` with BERT's normaliser, pre-tokeniser and [CLS]/[SEP] template."""
    tokenizer = tokenizers.Tokenizer(model)
    tokenizer.normalizer = normalizers.BertNormalizer(
        clean_text=True, handle_chinese_chars=True, strip_accents=lowercase, lowercase=lowercase
    )
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece(prefix=CONTINUATION)
    return tokenizer


def _add_template(tokenizer: tokenizers.Tokenizer) -> tokenizers.Tokenizer:
    """Wrap encodings as [CLS] A [SEP] (B [SEP]), segment 1 for B, as BERT expects."""
    cls_id, sep_id = tokenizer.token_to_id(CLS), tokenizer.token_to_id(SEP)
    tokenizer.post_processor = processors.TemplateProcessing(
        single=f"{CLS} $A {SEP}",
        pair=f"{CLS} $A {SEP} $B:1 {SEP}:1",
        special_tokens=[(CLS, cls_id), (SEP, sep_id)],
    )
    return tokenizer


def train_wordpiece(
    texts: Iterable[str], vocab_size: int, min_frequency: int = 2, lowercase: bool = True
) -> tuple[WordPiece, tokenizers.Tokenizer]:
    """Learn a WordPiece vocabulary of at most `vocab_size` tokens from texts with the
    `tokenizers` library. Returns it both as the readable encoder and as a fast Tokenizer."""
    if not isinstance(vocab_size, int) or vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(
            f"vocab_size must be an integer above {len(SPECIAL_TOKENS)} (the special tokens), "
            f"got {vocab_size!r}"
        )
    if not isinstance(min_frequency, int) or min_frequency < 1:
        raise ValueError(f"min_frequency must be a positive integer, got {min_frequency!r}")
    fast = _bert_tokenizer(models.WordPiece(unk_token=UNK, max_input_chars_per_word=MAX_WORD_CHARS),
                           lowercase=lowercase)
    trainer = trainers.WordPieceTrainer(
        vocab_size=vocab_size, min_frequency=min_frequency, special_tokens=list(SPECIAL_TOKENS),
        continuing_subword_prefix=CONTINUATION, show_progress=False,
    )
    texts = list(texts)
    if not any(t.strip() for t in texts):
        raise ValueError("train_wordpiece needs at least one non-empty text")
    fast.train_from_iterator(texts, trainer=trainer)
    _add_template(fast)
    vocab = sorted(fast.get_vocab(), key=fast.token_to_id)
    return WordPiece(vocab, lowercase=lowercase), fast
