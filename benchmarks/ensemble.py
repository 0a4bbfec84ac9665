"""Members trained together against the same members one after another, in one run.

K tiny members (the zoo's quick recipe: preset "tiny" without dropout, batches of
64 rows x 32 tokens of the synthetic corpus, the zoo's learning rate and schedule)
train for --steps steps together with `train_together`, and one after another with
`train`, alternating --repeats times so that machine noise hits both alike; the table
reports median tokens per second (of all members together) and their ratio. The FLOPs
of a batched step (matmuls and attention, forward and backward, counted by torch's
FlopCounterMode) over its measured time give its FLOP/s, set against the machine's
ceiling: a 2048 x 2048 float32 matmul timed between the runs (median), and for reference the
batched step's own widest matmul shape. An op that vmap cannot batch (it would loop over
the members, with a warning) stops the run.

    python benchmarks/ensemble.py
    python benchmarks/ensemble.py --steps 10 --repeats 1 --device cuda
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
import warnings

import torch
from torch.utils.flop_counter import FlopCounterMode

import minibert
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.training.ensemble import train_together
from minibert.training.recipes import QUICK, ZOO_CONFIG, Recipe
from minibert.training.trainer import train

RECIPE = Recipe(**QUICK)
MEMBERS = (1, 2, 4, 8)


def the_members(count: int) -> list[minibert.BertForPreTraining]:
    """`count` tiny members as the zoo builds them, initial weights from seeds 0, 1, ..."""
    config = minibert.preset("tiny", vocab_size=corpus_tokenizer().vocab_size, **ZOO_CONFIG)
    members = []
    for seed in range(count):
        torch.manual_seed(seed)
        members.append(minibert.BertForPreTraining(config))
    return members


def run_settings(device) -> dict:
    return dict(lr=RECIPE.lr, batch_size=RECIPE.batch_size, schedule=RECIPE.schedule,
                warmup_steps=RECIPE.warmup_steps, progress=False, device=device)


def together(members, data, steps: int, device) -> tuple[float, float]:
    """Tokens per second and seconds per step of one batched run of all members."""
    histories = train_together(members, data, steps, seeds=list(range(len(members))),
                               **run_settings(device))
    seconds = histories[0].wall_time  # the run's time, the same in every member's History
    return sum(h.tokens for h in histories) / seconds, seconds / steps


def one_after_another(members, data, steps: int, device) -> float:
    """Tokens per second of solo `train` runs of the members, one after another."""
    histories = [train(member, data, steps, seed=seed, **run_settings(device))
                 for seed, member in enumerate(members)]
    return sum(h.tokens for h in histories) / sum(h.wall_time for h in histories)


def batched_step_flops(members, data, device) -> int:
    """FLOPs of one batched training step (FlopCounterMode sees the batched matmuls)."""
    with FlopCounterMode(display=False) as counter:
        train_together(copy.deepcopy(members), data, 1, **run_settings(device))
    return counter.get_total_flops()


def matmul_flops_per_second(device, shape_a, shape_b, repeats: int = 20) -> float:
    """Median FLOP/s of a float32 (batched) matmul: the machine's ceiling at that shape."""
    a, b = torch.randn(shape_a, device=device), torch.randn(shape_b, device=device)
    times = []
    for _ in range(repeats + 3):
        if device.type == "cuda":
            torch.cuda.synchronize()
        started = time.perf_counter()
        torch.matmul(a, b)
        if device.type == "cuda":
            torch.cuda.synchronize()
        times.append(time.perf_counter() - started)
    flops = 2 * a[..., 0].numel() * a.shape[-1] * b.shape[-1]
    return flops / statistics.median(times[3:])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30, help="measured steps per run")
    parser.add_argument("--warmup", type=int, default=3, help="steps of an unmeasured first run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    args = parser.parse_args()
    device = torch.device(args.device)
    warnings.filterwarnings("error", message=".*batching rule")  # vmap looping over members
    print(f"torch {torch.__version__}, {device}, {torch.get_num_threads()} CPU threads; "
          f"{args.steps} steps, median of {args.repeats}\n")
    data = pretraining_pairs(generate_corpus(RECIPE.num_documents, seed=0), corpus_tokenizer(),
                             RECIPE.max_length, RECIPE.negatives, seed=0)
    rows, ceilings = [], []
    for count in MEMBERS:
        ceilings.append(matmul_flops_per_second(device, (2048, 2048), (2048, 2048)))  # among the runs
        members = the_members(count)
        together(copy.deepcopy(members), data, args.warmup, device)  # warm-up
        one_after_another(copy.deepcopy(members), data, args.warmup, device)
        runs = {"together": [], "sequential": [], "step": []}
        for _ in range(args.repeats):
            tokens_per_second, step_seconds = together(copy.deepcopy(members), data, args.steps, device)
            runs["together"].append(tokens_per_second)
            runs["step"].append(step_seconds)
            runs["sequential"].append(one_after_another(copy.deepcopy(members), data, args.steps, device))
        flops = batched_step_flops(members, data, device)
        rows.append((count, statistics.median(runs["together"]), statistics.median(runs["sequential"]),
                     flops / statistics.median(runs["step"])))
        print(f"K={count}: done", flush=True)
    ceiling = statistics.median(ceilings)
    hidden, wide = the_members(1)[0].config.hidden_size, the_members(1)[0].config.intermediate_size
    tokens = RECIPE.batch_size * RECIPE.max_length
    widest = max(MEMBERS)
    step_shape = matmul_flops_per_second(device, (widest, tokens, hidden), (widest, hidden, wide))
    print(f"\nceiling: 2048 x 2048 float32 matmul {ceiling / 1e9:.1f} GFLOP/s (median of "
          f"{', '.join(f'{c / 1e9:.0f}' for c in ceilings)}); the step's widest "
          f"matmul, ({widest}, {tokens}, {hidden}) @ ({widest}, {hidden}, {wide}), "
          f"{step_shape / 1e9:.1f} GFLOP/s ({step_shape / ceiling:.0%})\n")
    print("| members | together (tokens/s) | one after another (tokens/s) | together / one after "
          "another | batched step GFLOP/s | share of the ceiling |")
    print("|---:|---:|---:|---:|---:|---:|")
    for count, joint, solo, flops_per_second in rows:
        print(f"| {count} | {joint:,.0f} | {solo:,.0f} | {joint / solo:.2f} | "
              f"{flops_per_second / 1e9:.1f} | {flops_per_second / ceiling:.0%} |")


if __name__ == "__main__":
    main()
