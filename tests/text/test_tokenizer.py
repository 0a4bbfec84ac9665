"""The readable WordPiece agrees with the `tokenizers` library, token for token."""

import importlib
import re

import pytest
import tokenizers

import minibert
from helpers import python_license_path
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.text.tokenizer import SPECIAL_TOKENS, WordPiece, basic_tokenize, train_wordpiece

STDLIB_MODULES = ["json", "textwrap", "collections", "argparse", "pathlib", "re", "string",
                  "functools", "itertools", "os", "random", "statistics", "unittest", "csv",
                  "datetime", "decimal", "fractions", "heapq", "inspect", "logging", "shutil",
                  "subprocess", "tarfile", "threading", "zipfile", "email", "calendar"]
WRITTEN_INLINE = [
    "今天天气很好，我们去公园散步吧。",
    "自然语言处理是人工智能的一个重要方向。",
    "BERT 模型使用 WordPiece 分词，中文按字切分。",
    "Café déjà vu: the naïve façade of the Zürich hôtel, São Paulo & Ångström.",
    "Crème brûlée, piñata, jalapeño, résumé; coöperate with ÉCOLE and Ærøskøbing.",
    "Ünïcödé „quotes“ — dashes… and «guillemets» ¿qué? ¡sí!",
    "A word longer than a hundred characters: " + "x" * 120 + " ends here.",
    "Tabs\tand\nnewlines\r\nand zero\u200bwidth and control\x07chars.",
]


def real_sentences(limit=400):
    """English sentences from the docstrings of stdlib modules and their members."""
    sentences = []
    for name in STDLIB_MODULES:
        module = importlib.import_module(name)
        docs = [module.__doc__] + [getattr(v, "__doc__", None) for v in vars(module).values()]
        for doc in filter(lambda d: isinstance(d, str), docs):
            for sentence in re.split(r"(?<=[.!?])\s+", " ".join(doc.split())):
                if len(sentence.split()) >= 4:
                    sentences.append(sentence)
    unique = list(dict.fromkeys(sentences))
    return unique[:limit]


@pytest.fixture(scope="module")
def bert_vocab():
    directory = minibert.minilm_directory()
    fast = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    fast.no_padding()
    fast.no_truncation()
    return WordPiece.from_file(directory / "vocab.txt"), fast


def test_readable_matches_tokenizers_on_real_bert_vocabulary(bert_vocab):
    readable, fast = bert_vocab
    texts = real_sentences() + WRITTEN_INLINE
    assert len(texts) >= 300
    for text in texts:
        expected = fast.encode(text)
        ours = readable.encode(text)
        assert ours.tokens == expected.tokens, text
        assert ours.ids == expected.ids, text


def test_pair_encoding_matches_tokenizers(bert_vocab):
    readable, fast = bert_vocab
    a, b = "How are you today?", "Très bien, merci — 谢谢!"
    expected = fast.encode(a, b)
    ours = readable.encode_pair(a, b)
    assert ours.ids == expected.ids
    assert ours.token_type_ids == expected.type_ids


def test_basic_tokenization_rules():
    assert basic_tokenize("Héllo, WORLD!") == ["hello", ",", "world", "!"]
    assert basic_tokenize("中文abc") == ["中", "文", "abc"]
    assert basic_tokenize("$5^2") == ["$", "5", "^", "2"]
    assert basic_tokenize("Keep Case", lowercase=False) == ["Keep", "Case"]


def test_greedy_longest_match_first_and_unknowns():
    tokenizer = WordPiece([*SPECIAL_TOKENS, "un", "unaff", "##able", "##a", "##ff", "a"])
    assert tokenizer.tokenize("unaffable") == ["unaff", "##able"]
    assert tokenizer.tokenize("zzz") == ["[UNK]"]
    assert tokenizer.tokenize("a" * 101) == ["[UNK]"]
    assert tokenizer.decode(tokenizer.encode("unaffable a").ids) == "unaffable a"


def test_pair_truncation_cuts_the_longer_text_first():
    tokenizer = WordPiece([*SPECIAL_TOKENS, "a", "b"])
    encoding = tokenizer.encode_pair("a a a a a a", "b b", max_length=8)
    assert encoding.tokens == ["[CLS]", "a", "a", "a", "[SEP]", "b", "b", "[SEP]"]
    assert encoding.token_type_ids == [0] * 5 + [1] * 3


def test_vocab_file_round_trip(tmp_path):
    tokenizer = corpus_tokenizer()
    tokenizer.save(tmp_path)
    again = WordPiece.from_file(tmp_path / "vocab.txt")
    assert again.vocab == tokenizer.vocab


def test_bad_vocabularies_are_refused():
    with pytest.raises(ValueError, match="special tokens"):
        WordPiece(["a", "b"])
    with pytest.raises(ValueError, match="twice"):
        WordPiece([*SPECIAL_TOKENS, "a", "a"])
    with pytest.raises(ValueError, match="vocab_size"):
        train_wordpiece(["some text"], vocab_size=3)
    with pytest.raises(ValueError, match="non-empty"):
        train_wordpiece(["", "  "], vocab_size=100)


def test_trained_wordpiece_agrees_with_its_fast_twin():
    text = python_license_path().read_text()
    readable, fast = train_wordpiece(text.splitlines(), vocab_size=600)
    assert readable.vocab[:5] == list(SPECIAL_TOKENS)
    assert len(readable) <= 600
    assert any(t.startswith("##") for t in readable.vocab)
    for line in text.splitlines()[:200]:
        assert readable.encode(line).ids == fast.encode(line).ids, line
    twin = readable.to_fast()
    assert twin.encode("Python Software Foundation").ids == \
        readable.encode("Python Software Foundation").ids


def test_corpus_tokenizer_is_stable_and_covers_the_language():
    tokenizer = corpus_tokenizer()
    assert tokenizer.vocab == corpus_tokenizer().vocab
    assert tokenizer.vocab[:5] == list(SPECIAL_TOKENS) and tokenizer.pad_id == 0
    assert tokenizer.vocab[5:] == sorted(tokenizer.vocab[5:])
    assert 150 < len(tokenizer) < 500
    for document in generate_corpus(100, seed=3):
        for sentence in document.sentences:
            assert tokenizer.tokenize(sentence.text) == list(sentence.words)


def test_ascii_fast_path_splits_as_the_character_loop():
    import random
    import string

    from minibert.text.tokenizer import _basic_tokenize_unicode, basic_tokenize

    rng = random.Random(0)
    alphabet = string.ascii_letters + string.digits + string.punctuation + " \t\n"
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        assert basic_tokenize(text) == _basic_tokenize_unicode(text), text
        assert basic_tokenize(text, lowercase=False) == _basic_tokenize_unicode(text, False)
