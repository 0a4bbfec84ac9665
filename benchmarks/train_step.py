"""Training step and inference speed: minibert against transformers, side by side in one run.

For each configuration, the same weights and the same batch go through minibert's
BertForPreTraining and transformers' (eager and sdpa attention). Runs alternate between the
implementations so that machine noise hits all of them alike; the table reports median
milliseconds and the ratio transformers / minibert (above 1 = minibert is faster).
A last table sets the FLOP/s that minibert's training step achieves (FLOPs counted by
torch's FlopCounterMode) against the machine's own ceiling, a large matmul timed in the
same run.

    python benchmarks/train_step.py            # all configurations
    python benchmarks/train_step.py --quick    # fewer repeats
    python benchmarks/train_step.py --device cuda
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode

import minibert

CONFIGS = {
    "tiny (book)": (minibert.preset("tiny", vocab_size=1000), 32, 64),
    "small (book)": (minibert.preset("small", vocab_size=1000), 32, 64),
    "wider (L4 H256 T128)": (minibert.BertConfig(
        vocab_size=8000, hidden_size=256, num_hidden_layers=4, num_attention_heads=4,
        intermediate_size=1024, max_position_embeddings=128), 16, 128),
}


def make_batch(config, batch_size, seq_len, device, seed=0):
    """Random ids with 15% of positions to predict and NSP labels, on `device`."""
    g = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(5, config.vocab_size, (batch_size, seq_len), generator=g)
    predict = torch.rand(batch_size, seq_len, generator=g) < 0.15
    predict[:, 1] = True
    labels = input_ids.masked_fill(~predict, -100)
    batch = dict(input_ids=input_ids, token_type_ids=torch.zeros_like(input_ids),
                 attention_mask=torch.ones_like(input_ids), labels=labels,
                 next_sentence_label=torch.randint(0, 2, (batch_size,), generator=g))
    return {name: tensor.to(device) for name, tensor in batch.items()}


def the_models(config, device):
    """minibert and transformers (eager, sdpa) holding the same weights, on `device`."""
    ours = minibert.BertForPreTraining(config)
    with tempfile.TemporaryDirectory() as directory:
        ours.save_pretrained(directory)
        theirs = {impl: transformers.BertForPreTraining.from_pretrained(
            directory, attn_implementation=impl) for impl in ("eager", "sdpa")}
    models = {"minibert": ours, "transformers eager": theirs["eager"],
              "transformers sdpa": theirs["sdpa"]}
    return {name: model.to(device) for name, model in models.items()}


def train_step_fn(model, batch):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()

    def step():
        optimizer.zero_grad(set_to_none=True)
        model(**batch).loss.backward()
        optimizer.step()
    return step


def inference_fn(model, batch, attentions):
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    model.eval()

    def step():
        with torch.no_grad():
            model(**inputs, output_attentions=attentions)
    return step


def synchronize():
    """Wait for queued GPU work, so that wall time measures it (no-op on the CPU)."""
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def median_ms(steps: dict, repeats: int) -> dict:
    """Alternate the steps `repeats` times; median wall time of each in milliseconds."""
    for step in steps.values():  # warm-up
        step(), step()
    times = {name: [] for name in steps}
    for _ in range(repeats):
        for name, step in steps.items():
            synchronize()
            start = time.perf_counter()
            step()
            synchronize()
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: statistics.median(t) for name, t in times.items()}


def matmul_flops_per_second(device, size: int = 2048, repeats: int = 10) -> float:
    """The machine's ceiling: median FLOP/s of a (size, size) @ (size, size) float32 matmul."""
    a, b = torch.randn(size, size, device=device), torch.randn(size, size, device=device)
    step = lambda: a @ b  # noqa: E731
    seconds = median_ms({"matmul": step}, repeats)["matmul"] / 1000
    return 2 * size**3 / seconds


def step_flops(step) -> int:
    """FLOPs of one call of `step`, counted by torch (matmuls and attention, fwd + bwd)."""
    with FlopCounterMode(display=False) as counter:
        step()
    return counter.get_total_flops()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = parser.parse_args()
    device = torch.device(args.device)
    repeats = 10 if args.quick else 30
    print(f"torch {torch.__version__}, transformers {transformers.__version__}, "
          f"{device}, {torch.get_num_threads()} CPU threads\n")
    print(f"{'config':22s} {'measure':26s} {'minibert':>9s} {'hf eager':>9s} {'hf sdpa':>9s}"
          f" {'eager/mb':>9s} {'sdpa/mb':>8s}")
    achieved = {}
    for name, (config, batch_size, seq_len) in CONFIGS.items():
        models = the_models(config, device)
        batch = make_batch(config, batch_size, seq_len, device)
        measures = {
            "train step (ms)": {k: train_step_fn(m, batch) for k, m in models.items()},
            "inference (ms)": {k: inference_fn(m, batch, False) for k, m in models.items()},
            "inference + attn (ms)": {k: inference_fn(m, batch, True) for k, m in models.items()},
        }
        for measure, steps in measures.items():
            ms = median_ms(steps, repeats)
            mb, eager, sdpa = ms["minibert"], ms["transformers eager"], ms["transformers sdpa"]
            print(f"{name:22s} {measure:26s} {mb:9.2f} {eager:9.2f} {sdpa:9.2f}"
                  f" {eager / mb:9.2f} {sdpa / mb:8.2f}")
            if measure == "train step (ms)":  # FLOP/s from the time just measured
                achieved[name] = step_flops(steps["minibert"]) / (mb / 1000)
    ceiling = matmul_flops_per_second(device)
    print(f"\nmachine ceiling (2048^3 float32 matmul): {ceiling / 1e9:.1f} GFLOP/s")
    for name, flops_per_second in achieved.items():
        print(f"{name:22s} minibert train step {flops_per_second / 1e9:7.1f} GFLOP/s"
              f" = {flops_per_second / ceiling:5.1%} of the ceiling")


if __name__ == "__main__":
    main()
