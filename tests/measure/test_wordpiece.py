"""The traced WordPiece search gives the encoder's pieces; the fewest-pieces split is
never longer than the greedy one; the corpus helpers and statistics are sound."""

import pytest
import tokenizers

import minibert
from minibert.measure.wordpiece import (
    docstring_corpus,
    fewest_pieces,
    segmentation_stats,
    split_sentences,
    trace,
)
from minibert.text.tokenizer import UNK, WordPiece, basic_tokenize, train_wordpiece

TOY = WordPiece(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "un", "una", "##aff", "##able",
                 "##ble", "##ffa", "a", "b", "##a", "##b", "ab", "##ab", "abab"])


def test_trace_shows_every_lookup_longest_first():
    result = trace(TOY, "unaffable")
    assert result.pieces == ("una", "##ffa", "##ble")  # greedy takes "una", not "un"
    first = result.steps[0]
    assert first.start == 0 and first.piece == "una"
    assert first.tried == ("unaffable", "unaffabl", "unaffab", "unaffa", "unaff", "unaf", "una")
    assert [s.start for s in result.steps] == [0, 3, 6]
    assert result.lookups == sum(len(s.tried) for s in result.steps)
    assert "una ✓" in str(result) and "unaf ✗" in str(result)


def test_trace_gives_unk_when_a_character_is_missing():
    result = trace(TOY, "abc")
    assert result.pieces == (UNK,)
    assert result.steps[-1].piece is None and result.steps[-1].tried[-1] == "##c"
    assert "no match" in str(result)
    assert trace(TOY, "a" * 101).pieces == (UNK,)  # BERT's limit on word length


@pytest.fixture(scope="module")
def bert_vocab():
    return WordPiece.from_file(minibert.minilm_directory() / "vocab.txt")


def test_trace_matches_the_encoder_on_real_words(bert_vocab):
    sentences = split_sentences(docstring_corpus(["json", "textwrap", "heapq"]))
    words = [w for s in sentences for w in basic_tokenize(s)]
    words += ["unaffable", "tokenization", "1234567", "zürich", "你好", "x" * 120]
    for word in words:
        assert list(trace(bert_vocab, word).pieces) == bert_vocab.split_word(word), word


def test_fewest_pieces_is_never_longer_than_greedy(bert_vocab):
    assert fewest_pieces(TOY, "abab") == ["abab"]
    assert fewest_pieces(TOY, "abc") is None
    for word in ["predefined", "pprint", "unaffable", "rawtexthelpformatter", "hello"]:
        greedy, fewest = bert_vocab.split_word(word), fewest_pieces(bert_vocab, word)
        assert "".join(p.removeprefix("##") for p in fewest) == word
        assert len(fewest) <= len(greedy)
    assert len(fewest_pieces(bert_vocab, "pprint")) < len(bert_vocab.split_word("pprint"))


def test_docstring_corpus_and_sentences():
    texts = docstring_corpus(["json"])
    assert texts and all(isinstance(t, str) and t for t in texts)
    sentences = split_sentences(["One two three four. Five six. Seven eight nine ten!",
                                 "One two three four."])
    assert sentences == ["One two three four.", "Seven eight nine ten!"]


def test_segmentation_stats_count_words_tokens_and_unknowns():
    _, fast = train_wordpiece(["the cat sat on the mat . the cat ran ."] * 5, vocab_size=40)
    stats = segmentation_stats(fast, ["the cat sat", "the mat 猫"])
    assert stats["words"] == 6
    assert stats["tokens"] >= stats["words"]
    assert stats["unk_word_rate"] == pytest.approx(1 / 6)  # 猫 was never seen
    fast.enable_padding(pad_id=0, pad_token="[PAD]")  # padding must not count as tokens
    assert segmentation_stats(fast, ["the cat sat", "the mat 猫"])["tokens"] == stats["tokens"]
    assert isinstance(fast, tokenizers.Tokenizer)
