"""Export for the browser: a BertModel (the real MiniLM, say) as one ONNX graph whose outputs
are what the attention explorers draw, so that onnxruntime runs it without torch, in Python
or in a web page (onnxruntime-web)."""

from __future__ import annotations

from pathlib import Path

import torch

from .measure.attention import AttentionWithAndWithoutProjections
from .model.bert import BertModel

INPUT_NAMES = ("input_ids", "token_type_ids", "attention_mask")  # each (B, T), int64
OUTPUT_NAMES = ("attentions", "bare_attentions", "hidden_states")


def export_attention_onnx(model: BertModel, path: str | Path) -> Path:
    """Write `AttentionWithAndWithoutProjections(model)` to `path` as ONNX. Batch size and
    length are free (the length up to the model's positions). Outputs: attentions and
    bare_attentions (L, B, nh, T, T), hidden_states (L + 1, B, T, H). The graph does not
    check its inputs: the caller keeps ids, segments and length in range."""
    graph = AttentionWithAndWithoutProjections(model.eval()).eval()
    ids = torch.ones(2, 8, dtype=torch.long)  # an example batch: its values do not matter
    example = (ids, torch.zeros_like(ids), torch.ones_like(ids))
    batch = torch.export.Dim("batch")
    tokens = torch.export.Dim("tokens", max=model.config.max_position_embeddings)
    program = torch.onnx.export(
        graph, example, input_names=list(INPUT_NAMES), output_names=list(OUTPUT_NAMES),
        dynamic_shapes={name: {0: batch, 1: tokens} for name in INPUT_NAMES},
        dynamo=True, verbose=False)
    path = Path(path)
    program.save(str(path))
    return path
