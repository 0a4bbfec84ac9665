"""Train several models of one architecture together, in one batched run.

K members that share a BertConfig but differ in seed (and, for free, in data-side
settings: corpus, mask rate, NSP negatives) train as one model: their weights are stacked
along a new first dimension (torch.func.stack_module_state), one forward and backward
pass runs every member (torch.func.vmap over functional_call, so each matmul becomes one
batched matmul), and one AdamW steps them all (AdamW is elementwise, so one optimiser
over stacked weights is K optimisers side by side; so are RAdam and Google's BERT
optimiser, the other choices of `optimizer`). What makes a run its own stays per
member: its data stream and masking (its own generator, seeded as `train` seeds it), its
dropout, its gradient clipping and its History. From the same initial weights, data and
seed, a member's losses and weights match a solo `train` run to float rounding, except
for dropout, whose masks vmap draws differently (the zoo trains without dropout).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterable, Sequence

import torch
from torch.func import functional_call, stack_module_state, vmap

from ..model import BertForMaskedLM, BertForPreTraining, BertModel
from ..model.layers import batched_members
from ..runtime import get_device, one_thread
from ..text.datasets import Dataset
from ..text.masking import IGNORE_INDEX, Masker
from .optimizers import build_optimizer
from .schedules import SCHEDULES
from .trainer import History, batch_stream, check_train_settings, progress_bar

Data = Dataset | Callable[[], Iterable[dict[str, torch.Tensor]]]
LOSSES = ("loss", "mlm_loss", "nsp_loss")  # what a History records per step


def check_stackable(models: Sequence[torch.nn.Module]) -> None:
    """Raise a ValueError naming what keeps `models` from training as one batched model:
    a different class, config field, parameter or buffer (name, shape, dtype, trainable)."""
    if len(models) == 0:
        raise ValueError("train_together needs at least one model")
    if len({id(model) for model in models}) < len(models):
        raise ValueError("a model appears twice among the members: each needs its own weights")
    first = models[0]
    for k, model in enumerate(models[1:], start=1):
        where = f"(member 0 vs member {k})"
        if type(model) is not type(first):
            raise ValueError(f"members differ in class: {type(first).__name__} vs "
                             f"{type(model).__name__} {where}")
        config, other = getattr(first, "config", None), getattr(model, "config", None)
        if dataclasses.is_dataclass(config) and dataclasses.is_dataclass(other):
            for field in dataclasses.fields(config):
                a, b = getattr(config, field.name), getattr(other, field.name)
                if field.name != "extra" and a != b:  # `extra` holds unused config.json keys
                    raise ValueError(f"members differ in {field.name}: {a!r} vs {b!r} {where}")
        for kind, mine, theirs in (("parameter", first.named_parameters(), model.named_parameters()),
                                   ("buffer", first.named_buffers(), model.named_buffers())):
            mine, theirs = dict(mine), dict(theirs)
            if mine.keys() != theirs.keys():
                name = sorted(mine.keys() ^ theirs.keys())[0]
                owner = 0 if name in mine else k
                raise ValueError(f"members differ in their {kind}s: only member {owner} has {name!r}")
            for name, a in mine.items():
                b = theirs[name]
                for attribute in ("shape", "dtype", "requires_grad"):
                    if getattr(a, attribute) != getattr(b, attribute):
                        raise ValueError(f"members differ in the {attribute} of {kind} {name!r}: "
                                         f"{getattr(a, attribute)} vs {getattr(b, attribute)} {where}")


def _per_member(value, count: int, name: str, single: type | tuple[type, ...]) -> list:
    """`value` repeated for every member, or a sequence of one value per member."""
    if value is None or isinstance(value, single):
        return [value] * count
    values = list(value)
    if len(values) != count:
        raise ValueError(f"{name} has {len(values)} entries for {count} members")
    return values


def _check_batch(bert: BertModel | None, batch: dict[str, torch.Tensor]) -> None:
    """BertModel.check_inputs on one member's batch, outside vmap (which cannot run it).
    Tensors with extra leading dimensions (multiple choice: (B, C, T)) are checked as the
    (B*C, T) rows the encoder reads."""
    if bert is None:
        return
    ids = batch["input_ids"]
    last_lead = ids.dim() - 2  # the dimensions before T, flattened into rows (none for 2-D)

    def rows(x):
        return None if x is None else x.flatten(0, last_lead)

    types = batch.get("token_type_ids", torch.zeros_like(ids))
    bert.check_inputs(rows(ids), rows(batch.get("attention_mask")), rows(types))


def _stack_batches(member_batches: list[dict[str, torch.Tensor]], positions: bool
                   ) -> dict[str, torch.Tensor]:
    """One batch dict with a leading member dimension: (K, B, T) and (K, B) tensors.

    positions=True (BertForPreTraining): labels (B, T) become the fixed-size form vmap
    needs, `mlm_positions` (K, P) and `labels` (K, P), P the most positions any member
    predicts; shorter lists are padded with position 0 and label -100 (no loss)."""
    first = member_batches[0]
    for k, batch in enumerate(member_batches[1:], start=1):
        if batch.keys() != first.keys():
            raise ValueError(f"member {k}'s batch has fields {sorted(batch)}, member 0's "
                             f"{sorted(first)}: members must get the same fields")
        for name, tensor in batch.items():
            if tensor.shape != first[name].shape:
                raise ValueError(f"member {k}'s {name} has shape {tuple(tensor.shape)}, member "
                                 f"0's {tuple(first[name].shape)}: members must share batch shapes "
                                 "(batch_size, and max_length of their data)")
    stacked = {name: torch.stack([b[name] for b in member_batches]) for name in first}
    if positions and "labels" in stacked:
        labels = stacked["labels"].flatten(1)  # (K, B*T)
        chosen = [row.nonzero().squeeze(1) for row in labels != IGNORE_INDEX]  # K x (P_k,)
        size = max(len(c) for c in chosen)
        index = torch.zeros(len(chosen), size, dtype=torch.long)  # (K, P)
        targets = torch.full((len(chosen), size), IGNORE_INDEX, dtype=torch.long)  # (K, P)
        for k, c in enumerate(chosen):
            index[k, :len(c)] = c
            targets[k, :len(c)] = labels[k, c]
        stacked.update(mlm_positions=index, labels=targets)
    return stacked


def clip_per_member(grads: list[torch.Tensor], max_norm: float) -> torch.Tensor:
    """clip_grad_norm_ for each member apart: the global norm of member k's gradient is
    taken over slice k of every stacked gradient, and only that slice is scaled.
    Returns the K norms before clipping."""
    norms = torch.stack([torch.linalg.vector_norm(g.flatten(1), dim=1) for g in grads])  # (n, K)
    total = torch.linalg.vector_norm(norms, dim=0)  # (K,)
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)  # as clip_grad_norm_
    for g in grads:
        g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))
    return total


@torch.no_grad()
def _write_back(models, params: dict[str, torch.Tensor], buffers: dict[str, torch.Tensor]) -> None:
    """Copy each member's slice of the stacked weights into its own model."""
    for k, model in enumerate(models):
        for name, tensor in params.items():
            model.get_parameter(name).copy_(tensor[k])
        for name, tensor in buffers.items():
            model.get_buffer(name).copy_(tensor[k])


def train_together(
    models: Sequence[torch.nn.Module],
    data: Data | Sequence[Data],
    steps: int,
    lr: float = 1e-3,
    batch_size: int = 32,
    schedule: str = "linear",
    warmup_steps: int = 0,
    weight_decay: float = 0.01,
    betas: tuple[float, float] = (0.9, 0.999),
    grad_clip: float | None = 1.0,
    mask_rate: float | Sequence[float] = 0.15,
    masker: Masker | Sequence[Masker | None] | None = None,
    eval_fn: Callable[[torch.nn.Module], dict[str, float]] | None = None,
    eval_every: int | None = None,
    seeds: Sequence[int] | None = None,
    progress: bool = True,
    device: torch.device | str | None = None,
    optimizer: str = "adamw",
) -> list[History]:
    """Train K models of one architecture together for `steps` optimiser steps; return
    one History per member and leave each member's trained weights in its model.

    The arguments are those of `trainer.train`, with the same meaning for every member;
    `data`, `mask_rate` and `masker` take one value for all members or a sequence of one
    per member, and `seeds` one seed per member (default 0, 1, ..., K-1): member k's data
    are shuffled and masked by a generator seeded with seeds[k], as `train` would with
    seed=seeds[k]. Members must share their class and config (a ValueError names the
    field that differs) and their batch shapes (batch_size, and the max_length of their
    data). eval_fn(model) runs on each member at the steps where `train` would run it.
    A History's wall_time is the time of the whole batched run, so its tokens_per_second
    is the member's share of the ensemble's throughput. Dropout draws from the global
    generator, seeded with seeds[0], different masks for every member."""
    check_train_settings(steps, lr, schedule, warmup_steps, weight_decay, betas, grad_clip,
                          batch_size, eval_every, optimizer)
    check_stackable(models)
    count = len(models)
    datas = _per_member(data, count, "data", (Dataset, Callable))
    rates = _per_member(mask_rate, count, "mask_rate", (int, float))
    maskers = _per_member(masker, count, "masker", Masker)
    seeds = list(range(count)) if seeds is None else _per_member(seeds, count, "seeds", int)
    device = torch.device(device) if device is not None else get_device()
    template = models[0]  # runs every member's forward, on that member's slice of the weights
    is_mlm = isinstance(template, (BertForPreTraining, BertForMaskedLM))
    for k in range(count):
        if is_mlm and maskers[k] is None and isinstance(datas[k], Dataset):
            maskers[k] = Masker.for_tokenizer(datas[k].tokenizer, rate=rates[k])
    bert = next((m for m in template.modules() if isinstance(m, BertModel)), None)

    torch.manual_seed(seeds[0])  # dropout
    generators = [torch.Generator().manual_seed(seed) for seed in seeds]  # shuffling, masking
    streams = [batch_stream(d, batch_size, g) for d, g in zip(datas, generators)]
    for model in models:
        model.to(device).train()
    params, buffers = stack_module_state(models)  # name -> (K, *shape), new leaf tensors
    shapes = dict(template.named_parameters())  # decay the member's matrices (stacked dim >= 3)
    trainable = [name for name, p in params.items() if p.requires_grad]
    groups = [{"params": [params[n] for n in trainable if shapes[n].dim() >= 2],
               "weight_decay": weight_decay},
              {"params": [params[n] for n in trainable if shapes[n].dim() < 2],
               "weight_decay": 0.0}]
    optimizer = build_optimizer(optimizer, groups, lr=lr, betas=betas,
                                fused=device.type in ("cpu", "cuda"))  # AdamW: one kernel a tensor

    def member_losses(member_params, member_buffers, batch):
        output = functional_call(template, (member_params, member_buffers), (), batch)
        return {name: getattr(output, name) for name in LOSSES
                if getattr(output, name, None) is not None}

    batched_losses = vmap(member_losses, randomness="different")  # each member its own dropout
    multiplier = SCHEDULES[schedule]
    histories = [History() for _ in models]
    bar = progress_bar(steps, progress, description=f"train {count} together")
    for step in range(steps):
        member_batches = [next(stream) for stream in streams]
        started = time.perf_counter()
        for k, batch in enumerate(member_batches):
            if is_mlm and "labels" not in batch:
                if maskers[k] is None:
                    raise ValueError(f"member {k}: a masked-LM model needs a masker (or a Dataset "
                                     "with a tokenizer) when the batches carry no labels")
                member_batches[k] = batch = maskers[k](batch, generators[k])
            _check_batch(bert, batch)
        batch = _stack_batches(member_batches, positions=isinstance(template, BertForPreTraining))
        batch = {name: tensor.to(device) for name, tensor in batch.items()}
        rate = lr * multiplier(step, warmup_steps, steps)
        for group in optimizer.param_groups:
            group["lr"] = rate
        with batched_members():
            losses = batched_losses(params, buffers, batch)  # name -> (K,)
        optimizer.zero_grad(set_to_none=True)
        losses["loss"].sum().backward()  # members are independent: each gets its own gradient
        if grad_clip is not None:
            clip_per_member([params[n].grad for n in trainable if params[n].grad is not None],
                            grad_clip)
        optimizer.step()
        recorded = dict(zip(losses, torch.stack(list(losses.values())).tolist()))  # one sync
        elapsed = time.perf_counter() - started
        for k, (history, member_batch) in enumerate(zip(histories, member_batches)):
            history.steps.append(step)
            for name in LOSSES:
                getattr(history, name).append(recorded[name][k] if name in recorded else float("nan"))
            history.lr.append(rate)
            history.wall_time += elapsed
            mask = member_batch.get("attention_mask")
            history.tokens += int(mask.sum()) if mask is not None else member_batch["input_ids"].numel()
        bar.update(1)
        bar.set_postfix(loss=f"{sum(recorded['loss']) / count:.3f}", refresh=False)
        last = step == steps - 1
        if eval_fn is not None and (last or (eval_every and (step + 1) % eval_every == 0)):
            _write_back(models, params, buffers)
            for model, history in zip(models, histories):
                model.eval()
                history.eval_steps.append(step)
                history.eval_metrics.append(dict(eval_fn(model)))
                model.train()
    bar.close()
    _write_back(models, params, buffers)
    for model in models:
        model.eval()
    return histories


def train_group(models: Sequence[torch.nn.Module], data: Data | Sequence[Data],
                on_step: Callable[[int], None] | None = None, **settings
                ) -> tuple[list[torch.nn.Module], list[History]]:
    """`train_together(models, data, **settings)` on one thread, as one run of
    `processes.run_all`, so that groups train in separate processes, each as it would alone.
    Returns the trained members and their Histories (a training process sends back copies,
    not the models it was given). on_step(steps) is called once, when the run is done;
    eval_fn, if given, must be importable there (a module's function, or a partial of one)."""
    with one_thread():
        histories = train_together(models, data, progress=False, **settings)
    if on_step is not None:
        on_step(settings["steps"])
    return list(models), histories
