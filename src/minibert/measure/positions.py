"""Position and segment tables: how far a model's input reaches, and how to extend it.

`max_position_embeddings` and `type_vocab_size` are the row counts of two lookup tables.
A learned position row is trained only if some training row was that long; the rest keep
their random initialisation (shrunk a little by weight decay, see `decay_factor`). This
module extends the tables of a trained model (new rows drawn fresh, copied from the
trained ones, or interpolated between them), recreates the weights a zoo model started
from, and measures masked-LM accuracy position by position.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
from torch import nn

from ..model import BertConfig, BertEmbeddings, BertForPreTraining
from ..model.layers import init_module, sinusoidal_table
from ..text.datasets import Dataset
from ..training.trainer import masked_batches, masked_lm_scores

METHODS = ("fresh", "copy", "interpolate")


def embeddings_of(model: nn.Module) -> BertEmbeddings:
    """The embedding block of a BertModel or of a task model built around one."""
    inner = getattr(model, "bert", model)
    if not isinstance(getattr(inner, "embeddings", None), BertEmbeddings):
        raise ValueError(f"{type(model).__name__} has no BERT embeddings")
    return inner.embeddings


def extended_rows(table: torch.Tensor, trained_length: int, new_length: int, method: str,
                  std: float = 0.02, generator: torch.Generator | None = None) -> torch.Tensor:
    """A (new_length, H) position table made from the first `trained_length` rows of
    `table` (the rows that training reached). Methods:
    "fresh": keep the trained rows, draw the others as BERT initialises (truncated normal);
    "copy": repeat the trained rows, row p = table[p % trained_length] (Longformer's way);
    "interpolate": stretch the trained rows over the new length, row p = the linear
    interpolation of the trained rows at p * (trained_length - 1) / (new_length - 1)."""
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not 1 <= trained_length <= len(table):
        raise ValueError(f"trained_length must lie in [1, {len(table)}], got {trained_length}")
    if new_length < trained_length:
        raise ValueError(f"new_length ({new_length}) must be at least trained_length "
                         f"({trained_length})")
    trained = table[:trained_length].detach()  # (L, H)
    if method == "copy":
        return trained[torch.arange(new_length) % trained_length].clone()
    if method == "interpolate":
        if trained_length == 1:
            return trained.expand(new_length, -1).clone()
        where = torch.linspace(0, trained_length - 1, new_length, dtype=torch.float64)
        below = where.floor().long().clamp(max=trained_length - 2)  # (new_length,)
        weight = (where - below).to(trained.dtype)[:, None]  # (new_length, 1)
        return (1 - weight) * trained[below] + weight * trained[below + 1]
    fresh = torch.empty(new_length - trained_length, table.shape[1], dtype=table.dtype)
    nn.init.trunc_normal_(fresh, std=std, a=-2 * std, b=2 * std, generator=generator)
    return torch.cat([trained, fresh.to(table.device)])


def _with_config(model: nn.Module, **changes) -> nn.Module:
    """A deep copy of `model` whose config (shared by all its modules) has some fields changed."""
    twin = copy.deepcopy(model)
    config = twin.config.replace(**changes)
    for module in twin.modules():
        if isinstance(getattr(module, "config", None), BertConfig):
            module.config = config
    return twin


def extend_positions(model: nn.Module, new_length: int, trained_length: int | None = None,
                     method: str | None = None, seed: int = 0) -> nn.Module:
    """A copy of `model` whose position rows 0..new_length-1 are rebuilt from its first
    `trained_length` rows (default: all of them) by `method` (see `extended_rows`). The
    table grows to new_length rows if it was shorter, and max_position_embeddings with it.
    A sinusoidal model takes no method: its rows come from the formula at any length."""
    embeddings = embeddings_of(model)
    table = embeddings.position_embeddings.weight  # (P, H)
    size = max(new_length, len(table))
    sinusoidal = model.config.position_embedding_type == "sinusoidal"
    if sinusoidal and method is not None:
        raise ValueError("a sinusoidal table is defined at every position: pass no method")
    if not sinusoidal and method is None:
        raise ValueError(f"a learned table needs a method to fill new rows: one of {METHODS}")
    twin = _with_config(model, max_position_embeddings=size)
    if sinusoidal:
        rows = sinusoidal_table(size, table.shape[1]).to(table)
    else:
        generator = torch.Generator().manual_seed(seed)
        rebuilt = extended_rows(table, trained_length or len(table), new_length, method,
                                model.config.initializer_range, generator)
        rows = torch.cat([rebuilt, table[new_length:].detach()])  # rows past new_length kept
    new_table = nn.Embedding(size, table.shape[1], device=table.device, dtype=table.dtype)
    with torch.no_grad():
        new_table.weight.copy_(rows)
    new_table.weight.requires_grad_(not sinusoidal)
    embeddings_of(twin).position_embeddings = new_table
    return twin


def extend_segments(model: nn.Module, type_vocab_size: int, copy_from: int | None = None,
                    seed: int = 0) -> nn.Module:
    """A copy of `model` with a segment table of `type_vocab_size` rows: the old rows kept,
    the new ones drawn as BERT initialises them, or copies of row `copy_from`."""
    table = embeddings_of(model).token_type_embeddings.weight  # (S, H)
    old, width = table.shape
    if type_vocab_size <= old:
        raise ValueError(f"type_vocab_size must exceed the current {old}, got {type_vocab_size}")
    if copy_from is not None and not 0 <= copy_from < old:
        raise ValueError(f"copy_from must lie in [0, {old}), got {copy_from}")
    new_rows = torch.empty(type_vocab_size - old, width, dtype=table.dtype)
    if copy_from is None:
        std = model.config.initializer_range
        generator = torch.Generator().manual_seed(seed)
        nn.init.trunc_normal_(new_rows, std=std, a=-2 * std, b=2 * std, generator=generator)
    else:
        new_rows.copy_(table[copy_from].detach().cpu().expand_as(new_rows))
    twin = _with_config(model, type_vocab_size=type_vocab_size)
    new_table = nn.Embedding(type_vocab_size, width, device=table.device, dtype=table.dtype)
    with torch.no_grad():
        new_table.weight.copy_(torch.cat([table.detach(), new_rows.to(table.device)]))
    embeddings_of(twin).token_type_embeddings = new_table
    return twin


def initial_model(config: BertConfig, seed: int) -> BertForPreTraining:
    """The weights a zoo model with this config and seed started from: the zoo seeds
    torch with the recipe's seed, then builds the model. The global RNG is left untouched."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return BertForPreTraining(config)


def decay_factor(learning_rates: Sequence[float], weight_decay: float = 0.01) -> float:
    """What AdamW's decoupled weight decay alone does to a weight whose gradient is always
    zero (Adam's own step is then exactly 0): it multiplies it by prod(1 - lr_t * wd)."""
    factor = torch.tensor(1.0, dtype=torch.float64)
    for rate in learning_rates:
        factor = factor * (1 - rate * weight_decay)
    return float(factor)


@torch.no_grad()
def mlm_accuracy_by_position(model: nn.Module, dataset: Dataset, rate: float = 0.15,
                             seed: int = 0, repeats: int = 1, batch_size: int = 256,
                             visible: int | None = None, window: int | None = None
                             ) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked-LM hits and trials at each position, (T,) each: the `masked_lm_scores` of
    `masked_batches` (every chosen token replaced by [MASK]), as `evaluate_mlm` sums them;
    `repeats` passes with fresh masks give more trials per position. Accuracy at a span
    of positions: hits.sum() / trials.sum().
    With `visible`, attention sees only positions 0..visible-1, as if the rows were cut
    there; with `window`, each token sees only the tokens of its own block of `window`
    positions (0..window-1, window..2 window-1, ...), as if the row were cut into pieces
    of that length. The masks drawn are the same as without them."""
    length = dataset["input_ids"].shape[1]
    hits = torch.zeros(length, dtype=torch.long)
    trials = torch.zeros(length, dtype=torch.long)
    for batch in masked_batches(dataset, rate, seed=seed, batch_size=batch_size,
                                repeats=repeats):
        if visible is not None:
            batch = {**batch, "attention_mask": batch["attention_mask"].clone()}
            batch["attention_mask"][:, visible:] = 0  # (B, T): the tail is hidden
        if window is not None:
            block = torch.arange(length) // window  # (T,) each position's block
            same = block[:, None] == block[None, :]  # (T, T)
            batch = {**batch, "attention_mask": batch["attention_mask"][:, None, :].bool()
                     & same}  # (B, T, T): padding hidden, and every other block
        scores = masked_lm_scores(model, batch)
        hits += scores.right.sum(0)
        trials += scores.asked.sum(0)
    return hits, trials


def mlm_accuracy_by_span(model: nn.Module, dataset: Dataset, cut: int, repeats: int = 2,
                         visible: int | None = None, window: int | None = None
                         ) -> tuple[float, float]:
    """Masked-LM accuracy on positions 0..cut-1 and on cut.. of `dataset`'s rows: how a
    model reads the positions it was trained on against those it was not. `visible` and
    `window` as in `mlm_accuracy_by_position`."""
    hits, trials = mlm_accuracy_by_position(model, dataset, repeats=repeats,
                                            visible=visible, window=window)  # (T,) each
    first = (hits[:cut].sum() / trials[:cut].sum()).item()
    second = (hits[cut:].sum() / trials[cut:].sum()).item()
    return first, second


def cosine_matrix(table: torch.Tensor) -> torch.Tensor:
    """(P, P) cosine similarity between every pair of rows of a (P, H) table, on the CPU."""
    unit = nn.functional.normalize(table.detach().float(), dim=-1)  # (P, H), rows of length 1
    return (unit @ unit.T).cpu()  # (P, P)


WORD_STDS = {"Transformer": lambda width: width ** -0.5,  # tied table, N(0, d^-1/2)
             "BERT": lambda width: 0.02}  # BERT's initializer_range


def embedding_parts(width: int, init: str, scaled: bool, length: int = 64,
                    vocab_size: int = 1000, seed: int = 0) -> dict[str, float]:
    """Mean length of the word part and of the position part of the embedding sum, before
    its LayerNorm, for an untrained embedding block of hidden size `width`: "Transformer"
    draws the word table from N(0, width^-1/2) (a table tied to the output layer, as
    Vaswani et al.'s) with sinusoidal positions; "BERT" draws both tables as BERT does
    (truncated N(0, 0.02)). `scaled` multiplies the word vectors by sqrt(width) (the
    switch `scale_word_embeddings`). Also the word part's share of the sum's length."""
    if init not in WORD_STDS:
        raise ValueError(f"init must be one of {sorted(WORD_STDS)}, got {init!r}")
    config = BertConfig(vocab_size=vocab_size, hidden_size=width, num_attention_heads=1,
                        max_position_embeddings=length, scale_word_embeddings=scaled,
                        position_embedding_type="sinusoidal" if init == "Transformer"
                        else "absolute")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        block = BertEmbeddings(config)
        for module in reversed(list(block.modules())):  # children first, as BERT's
            init_module(module, config)
        if init == "Transformer":
            nn.init.normal_(block.word_embeddings.weight, std=WORD_STDS[init](width))
        ids = torch.randint(1, vocab_size, (length,))
    with torch.no_grad():
        words = block.word_embeddings(ids) * block.word_scale  # (T, H), as the block adds it
        where = block.position_embeddings.weight[:length]  # (T, H)
        word, position = words.norm(dim=-1).mean(), where.norm(dim=-1).mean()
        share = (words.norm(dim=-1) / (words + where).norm(dim=-1)).mean()
    return {"word": word.item(), "position": position.item(), "word / position":
            (word / position).item(), "word / sum": share.item()}
