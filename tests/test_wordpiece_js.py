"""The page's WordPiece (book/_static/minibert-wordpiece.js, run here by node) gives the
same tokens, ids and segment ids as the Python `tokenizers` library with MiniLM's
tokenizer.json: cased text, accents, punctuation, Chinese characters, long and unknown
words, odd whitespace and control characters, sentence pairs."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from minibert.model.minilm import minilm_directory, minilm_tokenizer

ROOT = Path(__file__).parent.parent
SCRIPT = ROOT / "book" / "_static" / "minibert-wordpiece.js"

TEXTS = [
    "The cat sat on the mat because it was warm.",
    "HELLO World, MiXeD CaSe",
    "Café naïve résumé, Ångström and São Paulo",
    "Hello, world! (yes) — 'single' \"double\" [brackets] {braces} a-b a_b 50% $5 #1 @me",
    "我爱自然语言处理",
    "BERT模型在2018年发布。",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 101 + " and " + "b" * 100,
    "emoji 🙂 and symbols ™ © ∑ ∞",
    "tabs\tand\nnewlines\r\nand  many   spaces\u00a0and a no-break space",
    "control\u0000chars\u200band a zero-width space\ufffd",
    "3.14159 is π; e ≈ 2.718",
    "don't won't it's o'clock",
    "Привет, мир! Γειά σου κόσμε. こんにちは世界 안녕하세요",
    "",
]
PAIRS = [("A man is playing a guitar.", "Someone strums an instrument."),
         ("Where is the café?", "Le café est fermé.")]


@pytest.mark.skipif(not shutil.which("node"), reason="needs node")
def test_the_page_tokenizes_as_python_does():
    inputs = [[text, None] for text in TEXTS] + [list(pair) for pair in PAIRS]
    program = f"""
const WordPiece = require({json.dumps(str(SCRIPT))});
const fs = require("fs");
const tokenizer = new WordPiece(fs.readFileSync({json.dumps(str(minilm_directory() / "vocab.txt"))}, "utf8"));
const inputs = JSON.parse(fs.readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(inputs.map(([a, b]) => tokenizer.encode(a, b))));
"""
    result = subprocess.run(["node", "-e", program], input=json.dumps(inputs),
                            capture_output=True, text=True, check=True)
    in_page = json.loads(result.stdout)
    python = minilm_tokenizer()
    for (a, b), page in zip(inputs, in_page):
        expected = python.encode(a) if b is None else python.encode(a, b)
        assert page["tokens"] == expected.tokens, (a, b)
        assert page["ids"] == expected.ids and page["segments"] == expected.type_ids, (a, b)
    # The list covers what it claims: unknown words, pieces, Chinese characters one by one.
    every_token = [token for page in in_page for token in page["tokens"]]
    assert "[UNK]" in every_token and any(t.startswith("##") for t in every_token)
    chinese = in_page[TEXTS.index("我爱自然语言处理")]["tokens"]
    assert len(chinese) == 8 + 2 and "我" in chinese  # a token per character (most [UNK])
