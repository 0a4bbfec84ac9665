"""Dropout: where BERT applies it, and how its train mode relates to its eval mode.

BERT drops at four kinds of site (Hugging Face's names): the embeddings' output after
their LayerNorm (`hidden_dropout_prob`), the attention probabilities
(`attention_probs_dropout_prob`), each sublayer's output before the residual sum
(`hidden_dropout_prob`) and, in a fine-tuning head, the pooled vector before the
classifier (`classifier_dropout`, else `hidden_dropout_prob`). `sites` lists them with
their rates; `set_rate` sets them all at once. Inverted dropout keeps a unit with
probability 1 - p and scales it by 1 / (1 - p), so one dropout layer's train-mode output
has the eval output as its mean; `monte_carlo_mean` estimates that mean over fresh masks
and `mean_gap` measures, for a whole network, how far it is from the eval output.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import torch
from torch import nn

from ..model.layers import BertSelfAttention

WHAT = {  # the site's last name -> what it drops, and the config field of its rate
    "embeddings.dropout": ("embeddings' output, after their LayerNorm",
                           "hidden_dropout_prob"),
    "attention.self": ("attention probabilities, before they weight v",
                       "attention_probs_dropout_prob"),
    "attention.output.dropout": ("attention sublayer's output, before the residual sum",
                                 "hidden_dropout_prob"),
    "output.dropout": ("feed-forward sublayer's output, before the residual sum",
                       "hidden_dropout_prob"),
    "dropout": ("pooled [CLS] vector, before the classifier",
                "classifier_dropout (else hidden_dropout_prob)"),
}


def _rate_holders(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """Every module that drops: nn.Dropout layers and the self-attentions (whose rate is
    their `dropout_p`), with their names, in the model's order."""
    return [(name, m) for name, m in model.named_modules()
            if isinstance(m, nn.Dropout | BertSelfAttention)]


def sites(model: nn.Module, layer: int = 0) -> pd.DataFrame:
    """The dropout sites of the model's embeddings, of one encoder layer and of its head,
    in the order a token meets them: module name, what it drops, the config field of its
    rate and the rate."""
    rows = []
    for name, module in _rate_holders(model):
        if ".layer." in name and f".layer.{layer}." not in name:
            continue
        kind = next(k for k in WHAT if name == k or name.endswith("." + k))
        what, field = WHAT[kind]
        rate = module.dropout_p if isinstance(module, BertSelfAttention) else module.p
        rows.append({"module": name, "drops": what, "rate from": field, "rate": rate})
    return pd.DataFrame(rows)


def set_rate(model: nn.Module, p: float) -> nn.Module:
    """Set every dropout site of the model to rate p, in place; returns the model."""
    if not 0.0 <= p < 1.0:
        raise ValueError(f"a dropout rate is in [0, 1), got {p!r}")
    for _, module in _rate_holders(model):
        if isinstance(module, BertSelfAttention):
            module.dropout_p = p
        else:
            module.p = p
    return model


@torch.no_grad()
def monte_carlo_mean(forward: Callable[[], torch.Tensor], samples: int) -> torch.Tensor:
    """The mean of `forward()` over `samples` calls, each with fresh dropout masks (call it
    with the model in train mode; the masks come from torch's global generator)."""
    if samples < 1:
        raise ValueError(f"need at least one sample, got {samples!r}")
    total = forward().double()
    for _ in range(samples - 1):
        total += forward()
    return (total / samples).float()


def one_layer_bound(eval_output: torch.Tensor, p: float, samples: int,
                    sigmas: float = 6.0) -> torch.Tensor:
    """Per element, how far the Monte-Carlo mean of one inverted-dropout layer may stray
    from its eval output y: the layer outputs y / (1 - p) with probability 1 - p and 0
    otherwise, so each sample has mean y and variance y² p / (1 - p), and the mean of
    `samples` of them a standard deviation of |y| sqrt(p / ((1 - p) samples)); the bound
    is `sigmas` of those, plus float rounding."""
    spread = eval_output.abs() * (p / ((1 - p) * samples)) ** 0.5
    return sigmas * spread + 1e-5 * (1 + eval_output.abs())


@torch.no_grad()
def mean_gap(forward: Callable[[], torch.Tensor], model: nn.Module, p: float,
             samples: int, tensors: bool = False) -> dict:
    """How far the train-mode mean of `forward()` (every site of `model` at rate p, over
    `samples` masks) is from its eval output, relative to the eval output's size: the
    root-mean-square difference over the root-mean-square eval value ("gap"). Also the
    same for half of the samples against the other half ("noise"), the part of the gap
    that is the Monte-Carlo noise of `samples` draws (scaled to the full count). With
    `tensors`, the eval output and the mean over masks too ("eval", "mean")."""
    set_rate(model, p)
    model.eval()
    reference = forward()
    model.train()
    half = samples // 2
    first, second = monte_carlo_mean(forward, half), monte_carlo_mean(forward, half)
    model.eval()
    size = reference.pow(2).mean().sqrt()
    mean = (first + second) / 2
    gaps = {"gap": ((mean - reference).pow(2).mean().sqrt() / size).item(),
            "noise": ((first - second).pow(2).mean().sqrt() / 2 / size).item()}
    return {**gaps, "eval": reference, "mean": mean} if tensors else gaps
