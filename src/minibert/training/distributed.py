"""Pre-training across processes with PyTorch's own engine: DistributedDataParallel.

Started by `torchrun --nproc_per_node=N -m minibert pretrain ...`, every process builds the
same model (same seed) and walks the same stream of global batches, masked by the same
seeded generator; each process then reads only its own shard, rows
[rank * b, (rank + 1) * b) of a global batch of N * b rows, and DDP averages the gradients
(gloo on the CPU, NCCL on GPUs). The masked-LM loss of a shard is its summed cross-entropy
divided by the number of masked tokens in the *global* batch (times N, which DDP's averaging
undoes), so N processes compute exactly the loss and gradient of one process holding the
whole batch: the histories agree to float rounding. Without torchrun the same loop runs in
one process.

Only rank 0 writes: a checkpoint every `save_every` steps (weights, optimiser state and the
step, all as safetensors, no pickle) and the final Hugging Face-format directory. A run
started again with the same arguments resumes from the checkpoint: the data stream is
replayed to the saved step, so the resumed run is the run that was interrupted.
"""

from __future__ import annotations

import json
import os
import time
from contextlib import nullcontext
from pathlib import Path

import torch
import torch.distributed as dist
import torch.nn.functional as F
from safetensors.torch import load_file, save_file
from torch.nn.parallel import DistributedDataParallel

from ..model import BertConfig, BertForPreTraining
from ..text.datasets import Dataset
from ..text.masking import IGNORE_INDEX, Masker
from .schedules import SCHEDULES
from .trainer import History, batch_stream, parameter_groups, progress_bar

CHECKPOINT = "checkpoint"  # the sub-directory of --out that holds the resumable state


def process_group() -> tuple[int, int, torch.device]:
    """Join torchrun's process group if there is one: (rank, world size, device). gloo on
    the CPU, NCCL when every process has a GPU of its own."""
    if "RANK" not in os.environ:
        return 0, 1, torch.device("cuda" if torch.cuda.is_available() else "cpu")
    use_cuda = torch.cuda.is_available()
    if not dist.is_initialized():
        dist.init_process_group("nccl" if use_cuda else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    if use_cuda:
        local = int(os.environ.get("LOCAL_RANK", 0))
        torch.cuda.set_device(local)
        return rank, world, torch.device("cuda", local)
    return rank, world, torch.device("cpu")


def _save_checkpoint(directory: Path, model, optimizer, step: int) -> None:
    """Weights, AdamW's moments and step counts, and the next step, as safetensors."""
    temporary = directory.with_name(directory.name + ".tmp")
    temporary.mkdir(parents=True, exist_ok=True)
    weights = {k: v.detach().contiguous().cpu() for k, v in model.state_dict().items()}
    if model.config.tie_word_embeddings:  # stored once, as the embedding table
        weights.pop("cls.predictions.decoder.weight", None)
    save_file(weights, temporary / "model.safetensors")
    moments = {}
    for index, state in optimizer.state_dict()["state"].items():
        for name, value in state.items():
            moments[f"{index}.{name}"] = torch.as_tensor(value).detach().contiguous().cpu()
    save_file(moments, temporary / "optimizer.safetensors")
    (temporary / "progress.json").write_text(json.dumps({"next_step": step}) + "\n")
    if directory.exists():
        for old in directory.iterdir():
            old.unlink()
        directory.rmdir()
    temporary.rename(directory)


def _load_checkpoint(directory: Path, model, optimizer, device) -> int:
    """Restore a checkpoint written by `_save_checkpoint`; return the step to continue from."""
    model.load_state_dict(load_file(directory / "model.safetensors", device=str(device)), strict=False)
    model.tie_weights()
    moments = load_file(directory / "optimizer.safetensors", device=str(device))
    state = optimizer.state_dict()
    for key, value in moments.items():
        index, name = key.split(".", 1)
        state["state"].setdefault(int(index), {})[name] = value
    optimizer.load_state_dict(state)
    return json.loads((directory / "progress.json").read_text())["next_step"]


def shard_loss(model, shard: dict[str, torch.Tensor], global_masked: int, world: int):
    """This process's share of the global loss: N * (summed MLM cross-entropy of the shard /
    masked tokens of the global batch) + the shard's mean NSP loss. DDP averages the N
    gradients, which gives the gradient of the global batch's mean loss."""
    inputs = {k: v for k, v in shard.items() if k not in ("labels", "next_sentence_label")}
    out = model(**inputs)
    labels = shard["labels"]
    chosen = labels != IGNORE_INDEX  # (b, T)
    mlm_sum = F.cross_entropy(out.prediction_logits[chosen], labels[chosen], reduction="sum")
    mlm = mlm_sum / global_masked
    nsp = None
    if "next_sentence_label" in shard:
        nsp = F.cross_entropy(out.seq_relationship_logits, shard["next_sentence_label"])
    loss = world * mlm + (nsp if nsp is not None else 0.0)
    return loss, mlm.detach(), (nsp.detach() if nsp is not None else None)


def pretrain(config: BertConfig, pairs: Dataset, steps: int, batch_size: int, lr: float,
             schedule: str = "linear", warmup_steps: int = 0, mask_rate: float = 0.15,
             weight_decay: float = 0.01, grad_clip: float = 1.0, seed: int = 0,
             out: Path | None = None, save_every: int = 0, bf16: bool = False,
             progress: bool = True) -> tuple[BertForPreTraining, History]:
    """Pre-train a BertForPreTraining with MLM (+ NSP when the pairs carry labels for it) on
    `pairs`, in every process of the group (or alone). batch_size is the global batch: it must
    divide evenly among the processes. Returns the model (the same on every rank) and the
    History of the global losses."""
    rank, world, device = process_group()
    if batch_size % world:
        raise ValueError(f"batch size {batch_size} does not divide among {world} processes")
    shard_rows = batch_size // world
    torch.manual_seed(seed)  # the same initial weights in every process
    model = BertForPreTraining(config).to(device).train()
    optimizer = torch.optim.AdamW(parameter_groups(model, weight_decay), lr=lr)
    start = 0
    checkpoint = out / CHECKPOINT if out is not None else None
    if checkpoint is not None and checkpoint.is_dir():
        start = _load_checkpoint(checkpoint, model, optimizer, device)
    no_nsp = "next_sentence_label" not in pairs.tensors  # the pooler and NSP head then get no gradient
    wrapped = DistributedDataParallel(model, find_unused_parameters=no_nsp) if world > 1 else model
    generator = torch.Generator().manual_seed(seed)  # shuffling and masking, the same everywhere
    stream = batch_stream(pairs, batch_size, generator)
    masker = Masker.for_tokenizer(pairs.tokenizer, rate=mask_rate)
    multiplier = SCHEDULES[schedule]
    autocast = torch.autocast(device.type, dtype=torch.bfloat16) if bf16 else nullcontext()
    history = History()
    bar = progress_bar(steps - start, progress and rank == 0, description=f"pretrain x{world}")
    for step in range(steps):
        batch = masker(next(stream), generator)  # the global batch, identical in every process
        if step < start:
            continue  # replaying the stream up to the checkpoint
        started = time.perf_counter()
        global_masked = int((batch["labels"] != IGNORE_INDEX).sum())
        shard = {k: v[rank * shard_rows:(rank + 1) * shard_rows].to(device) for k, v in batch.items()}
        rate = lr * multiplier(step, warmup_steps, steps)
        for group in optimizer.param_groups:
            group["lr"] = rate
        with autocast:
            loss, mlm, nsp = shard_loss(wrapped, shard, global_masked, world)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        parts = torch.stack([mlm.float(), (nsp if nsp is not None else torch.zeros(())).float() / world])
        if world > 1:
            dist.all_reduce(parts)  # the global batch's MLM and NSP losses
        mlm_value, nsp_value = parts.tolist()
        history.steps.append(step)
        history.mlm_loss.append(mlm_value)
        history.nsp_loss.append(nsp_value if nsp is not None else float("nan"))
        history.loss.append(mlm_value + (nsp_value if nsp is not None else 0.0))
        history.lr.append(rate)
        history.wall_time += time.perf_counter() - started
        history.tokens += int(batch["attention_mask"].sum())
        bar.update(1)
        bar.set_postfix(loss=f"{history.loss[-1]:.3f}", refresh=False)
        if checkpoint is not None and save_every and (step + 1) % save_every == 0 and rank == 0:
            _save_checkpoint(checkpoint, model, optimizer, step + 1)
    bar.close()
    return model.eval(), history
