"""Hugging Face weights in and out: config.json + model.safetensors (+ vocab.txt) directories,
with every mismatch between a checkpoint and a model named.

Checkpoints are read with safetensors, never with pickle; a legacy pytorch_model.bin is
read only through `torch.load(weights_only=True)`, which refuses arbitrary objects.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from .config import BertConfig
from .layers import init_module

# Keys a checkpoint may hold that carry no learned weights.
_BUFFER_SUFFIXES = ("position_ids",)
# Task heads: a base checkpoint lacks them (they start fresh), and a model without the
# head ignores them, as transformers does.
_HEAD_PREFIXES = ("cls.", "classifier.", "qa_outputs.")


def read_state_dict(directory: Path) -> dict[str, torch.Tensor]:
    """The tensors of a checkpoint directory, safetensors first."""
    if (directory / "model.safetensors").exists():
        return load_file(directory / "model.safetensors")
    if (directory / "pytorch_model.bin").exists():
        return torch.load(directory / "pytorch_model.bin", map_location="cpu", weights_only=True)
    raise FileNotFoundError(f"{directory} holds neither model.safetensors nor pytorch_model.bin")


def _normalise_keys(state: dict, model_keys: set[str]) -> dict:
    """Rename checkpoint keys to the model's: old gamma/beta LayerNorm names, and the
    "bert." prefix that a task model has and a bare BertModel lacks (or the reverse)."""
    renamed = {}
    for key, tensor in state.items():
        if key.endswith(_BUFFER_SUFFIXES):
            continue
        key = key.replace("LayerNorm.gamma", "LayerNorm.weight").replace("LayerNorm.beta", "LayerNorm.bias")
        if key not in model_keys and "bert." + key in model_keys:
            key = "bert." + key
        elif key not in model_keys and key.startswith("bert.") and key[5:] in model_keys:
            key = key[5:]
        renamed[key] = tensor
    return renamed


def load_state_dict_checked(model: torch.nn.Module, state: dict[str, torch.Tensor]) -> list[str]:
    """Copy `state` into `model`, raising a ValueError that names every key whose shape
    does not match and every encoder key the checkpoint lacks. Returns the head keys that
    were missing and keep their fresh initialisation."""
    own = model.state_dict()
    state = _normalise_keys(state, set(own))
    tied = model.config.tie_word_embeddings and "cls.predictions.decoder.weight" in own
    mismatched = [
        f"{key}: checkpoint {tuple(t.shape)} vs model {tuple(own[key].shape)}"
        for key, t in state.items() if key in own and t.shape != own[key].shape
    ]
    missing = [k for k in own if k not in state
               and not (tied and k == "cls.predictions.decoder.weight")
               and k != "cls.predictions.decoder.bias"]  # tied to cls.predictions.bias
    missing_body = [k for k in missing if not k.startswith(_HEAD_PREFIXES)]
    unexpected = [k for k in state if k not in own and not k.startswith(_HEAD_PREFIXES)
                  and "pooler." not in k]  # a model without a pooler ignores it, as transformers does
    problems = []
    if mismatched:
        problems.append("shapes do not match:\n  " + "\n  ".join(mismatched))
    if missing_body:
        problems.append("missing from the checkpoint:\n  " + "\n  ".join(missing_body))
    if unexpected:
        problems.append("in the checkpoint but not in the model:\n  " + "\n  ".join(unexpected))
    if problems:
        raise ValueError(f"cannot load checkpoint into {type(model).__name__}; " + "\n".join(problems))
    with torch.no_grad():
        for key, tensor in state.items():
            if key in own:
                own[key].copy_(tensor)
    return [k for k in missing if k.startswith(_HEAD_PREFIXES)]


def load_pretrained(model_class, directory, config: BertConfig | None = None, **config_changes):
    """Build `model_class` from a directory's config.json and fill it with its weights."""
    directory = Path(directory)
    if config is None:
        config = BertConfig.from_json_file(directory / "config.json")
    if config_changes:
        config = config.replace(**config_changes)
    with torch.device("meta"):  # no time spent initialising weights about to be overwritten
        model = model_class(config)
    model = model.to_empty(device="cpu")
    model.tie_weights()  # to_empty gives each use of a shared parameter its own tensor
    model.fresh_head_keys = load_state_dict_checked(model, read_state_dict(directory))
    for owner in {key.rsplit(".", 1)[0] for key in model.fresh_head_keys}:
        init_module(model.get_submodule(owner), config)  # a new task head starts as BERT's do
    return model.eval()


def save_pretrained(model, directory) -> None:
    """Write config.json and model.safetensors in the layout transformers reads.
    A tied decoder matrix is stored once, as the embedding table, as transformers does."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    config_dict = model.config.to_dict()
    config_dict["architectures"] = [type(model).__name__]
    (directory / "config.json").write_text(json.dumps(config_dict, indent=2, sort_keys=True) + "\n")
    state = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    if model.config.tie_word_embeddings:
        state.pop("cls.predictions.decoder.weight", None)
    save_file(state, directory / "model.safetensors", metadata={"format": "pt"})
