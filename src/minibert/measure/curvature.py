"""How far each part of a trained encoder is from affine, measured on the inputs that part
really receives in the forward pass (chapter 23).

The bend of f around x along d is ||f(x+sd) - 2f(x) + f(x-sd)|| / ||f(x+sd) - f(x-sd)||:
0 for every affine map, whatever its scale, and proportional to s for a smooth one.
Each part's inputs are caught by forward pre-hooks on the model's own modules, so the
feed-forward block is measured on the post-attention vectors it is given, a LayerNorm on
the residual sum it normalises, and so on."""

from __future__ import annotations

import functools
from collections.abc import Callable

import torch

Part = Callable[[torch.Tensor], torch.Tensor]


def bend(f: Part, x: torch.Tensor, d: torch.Tensor, step: float = 0.1,
         where: torch.Tensor | None = None) -> float:
    """How far f is from affine around x (N, T, H) along d (N, T, H): 0 for any affine map.
    `where` (N, T) bool keeps only those positions in the norms (real tokens)."""
    with torch.no_grad():
        ahead, here, behind = f(x + step * d), f(x), f(x - step * d)  # (N, T, H) each
    curve, chord = ahead - 2 * here + behind, ahead - behind  # (N, T, H) each
    if where is not None:
        curve, chord = curve[where], chord[where]  # (positions, H)
    return (curve.norm() / chord.norm()).item()


def sphere(h: torch.Tensor) -> torch.Tensor:
    """Each token's vector centred, then divided by its length: a projection onto a
    sphere, the reference bend (LayerNorm without gamma and beta is sqrt(H) times it)."""
    centred = h - h.mean(dim=-1, keepdim=True)  # (..., H)
    return centred / centred.norm(dim=-1, keepdim=True)


def plain_layer_norm(h: torch.Tensor) -> torch.Tensor:
    """LayerNorm without its learned gamma and beta: centre, then divide by the spread."""
    return torch.nn.functional.layer_norm(h, h.shape[-1:])


def part_inputs(model: torch.nn.Module, input_ids: torch.Tensor,
                token_type_ids: torch.Tensor, attention_mask: torch.Tensor,
                layer: int = 0) -> dict[str, tuple]:
    """The arguments each part of encoder layer `layer` receives in one real forward pass.

    Returns {part: args}: "self-attention" (x, additive_mask, need_weights), "LayerNorm
    after attention" and "LayerNorm after feed-forward" (their input, the residual sum in a
    post-LN layer), "feed-forward block" (its input, the post-attention vectors), and
    "whole layer" (the layer's input, the mask, need_weights), and "whole encoder" (the
    first layer's input: the embeddings)."""
    block = model.bert.encoder.layer[layer]
    modules = {"whole encoder": model.bert.encoder.layer[0],
               "self-attention": block.attention.self,
               "LayerNorm after attention": block.attention.output.LayerNorm,
               "feed-forward block": block.intermediate,
               "LayerNorm after feed-forward": block.output.LayerNorm,
               "whole layer": block}
    caught: dict[str, tuple] = {}
    hooks = [module.register_forward_pre_hook(
        lambda _module, args, name=name: caught.setdefault(name, args))
        for name, module in modules.items()]
    try:
        with torch.no_grad():
            model.bert(input_ids=input_ids, token_type_ids=token_type_ids,
                       attention_mask=attention_mask)
    finally:
        for hook in hooks:
            hook.remove()
    return caught


def part_functions(model: torch.nn.Module, layer: int = 0) -> dict[str, Part]:
    """Each part of encoder layer `layer` as a function of its own first input."""
    block = model.bert.encoder.layer[layer]
    return {"self-attention": lambda h, mask: block.attention.self(h, mask, False)[0],
            "LayerNorm after attention": lambda h, _: block.attention.output.LayerNorm(h),
            "feed-forward block": lambda h, _: block.output.dense(block.intermediate(h)),
            "LayerNorm after feed-forward": lambda h, _: block.output.LayerNorm(h),
            "whole layer": lambda h, mask: block(h, mask, False)[0],
            "whole encoder": lambda h, mask: _encoder(model, h, mask),
            "sphere (reference)": lambda h, _: sphere(h),
            "LayerNorm without gamma, beta": lambda h, _: plain_layer_norm(h)}


def _encoder(model: torch.nn.Module, h: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The encoder's layers (and final norm, if any) from the embeddings h (B, T, H)."""
    return model.bert.encoder(h, mask)[0]


def _with(f, extra, h: torch.Tensor) -> torch.Tensor:
    """f(h, extra): a part called with the mask it was given in the forward pass."""
    return f(h, extra)


REFERENCES = {"sphere (reference)": "LayerNorm after attention",
              "LayerNorm without gamma, beta": "LayerNorm after attention"}
"""The reference maps, and the part whose real inputs they are measured on."""


def part_bends(model: torch.nn.Module, rows: dict[str, torch.Tensor], layer: int = 0,
               step: float = 0.1, scale: float = 1.0) -> dict[str, float]:
    """The bend of every part of layer `layer` on its real inputs from `rows` (a batch of
    held-out rows, an even number of them): the first half's inputs, each moved toward
    the second half's at the same position. `scale` multiplies inputs and direction (the
    input scale at which a part is looked at; 1 is the scale it really receives)."""
    model.eval()
    ids, types, mask = rows["input_ids"], rows["token_type_ids"], rows["attention_mask"]
    caught = part_inputs(model, ids, types, mask, layer)
    half = len(ids) // 2
    real = mask[:half].bool() & mask[half:2 * half].bool()  # (N, T): real in both rows
    measured = {}
    for name, f in part_functions(model, layer).items():
        args = caught[REFERENCES.get(name, name)]
        h, extra = args[0], (args[1][:half] if len(args) > 1 and args[1] is not None
                             else None)  # the additive mask, where the part takes one
        x, other = scale * h[:half], scale * h[half:2 * half]  # (N, T, H) each
        measured[name] = bend(functools.partial(_with, f, extra), x, other - x, step,
                              where=real)
    return measured
