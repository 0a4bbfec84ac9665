"""The ONNX export of the real MiniLM computes what minibert computes: onnxruntime's
attention maps (with and without W_Q/W_K/W_V) and hidden states equal PyTorch's on
sentences of another length and batch size than the export's example, padding included."""

import numpy as np
import pytest
import torch

from minibert.export import OUTPUT_NAMES, export_attention_onnx
from minibert.measure.attention import AttentionWithAndWithoutProjections
from minibert.model.minilm import encode_sentences, load_minilm

onnxruntime = pytest.importorskip("onnxruntime")

SENTENCES = [
    "The cat sat on the mat because it was warm.",
    ("A man is playing a guitar.", "Someone strums an instrument on the street corner."),
    "Hi!",
]


def test_onnxruntime_matches_pytorch_on_minilm(tmp_path):
    model, tokenizer = load_minilm()
    path = export_attention_onnx(model, tmp_path / "minilm.onnx")
    batch, tokens = encode_sentences(tokenizer, SENTENCES)  # (3, T), T != the example's 8
    session = onnxruntime.InferenceSession(str(path))
    assert [o.name for o in session.get_outputs()] == list(OUTPUT_NAMES)
    exported = session.run(None, {name: t.numpy() for name, t in batch.items()})
    with torch.no_grad():
        expected = AttentionWithAndWithoutProjections(model)(**batch)
    attentions, bare, hidden = exported
    assert attentions.shape == bare.shape == (6, 3, 12, batch["input_ids"].shape[1],
                                              batch["input_ids"].shape[1])
    np.testing.assert_allclose(attentions, expected[0].numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(bare, expected[1].numpy(), atol=1e-4, rtol=0)
    np.testing.assert_allclose(hidden, expected[2].numpy(), atol=1e-3, rtol=1e-4)
    # The padding of the short sentence gets no attention from it, with or without W_Q/W_K/W_V.
    short = len(tokens[2])
    assert np.abs(attentions[:, 2, :, :short, short:]).max() == 0
    assert np.abs(bare[:, 2, :, :short, short:]).max() == 0
    # A control: the same graph on the same ids with the segment ids of the pair flipped
    # changes the output, so the comparison above is not between two constant graphs.
    flipped = {name: t.numpy() for name, t in batch.items()}
    flipped["token_type_ids"] = 1 - flipped["token_type_ids"] * flipped["attention_mask"]
    assert np.abs(session.run(None, flipped)[0] - attentions).max() > 1e-2
