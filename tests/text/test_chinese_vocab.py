"""The shipped vocabulary of Google's Chinese BERT-base, and its loader."""

import hashlib

from minibert.text.tokenizer import CHINESE_VOCAB, chinese_vocabulary


def test_file_is_the_released_vocabulary():
    data = CHINESE_VOCAB.read_bytes()
    assert hashlib.sha256(data).hexdigest() == (
        "45bbac6b341c319adc98a532532882e91a9cefc0329aa57bac9ae761c27b291c")
    assert (CHINESE_VOCAB.parent / "NOTICE").read_text().count("Apache License") == 1


def test_loader_reads_every_entry_even_line_separator_tokens():
    vocab = chinese_vocabulary()
    assert len(vocab) == 21128 and vocab.vocab[:2] == ["[PAD]", "[unused1]"]
    assert "\u2028" in vocab.token_to_id  # a token that str.splitlines would cut
    assert vocab.vocab[vocab.unk_id] == "[UNK]"


def test_chinese_is_one_known_token_per_character():
    vocab = chinese_vocabulary()
    text = "自然语言处理是人工智能的一个重要方向。"
    assert vocab.tokenize(text) == list(text)
    fast = vocab.to_fast()
    fast.no_padding()
    fast.no_truncation()
    assert vocab.encode(text).ids == fast.encode(text).ids


def test_case_is_kept_by_default():
    assert chinese_vocabulary().tokenize("BERT") == ["[UNK]"]
    assert "[UNK]" not in chinese_vocabulary(lowercase=True).tokenize("BERT")
