"""Command line: `python -m minibert pretrain --preset tiny --steps 600 --out DIR`.

Pre-trains a BERT on the synthetic corpus (or on a text file of your own, with a
WordPiece vocabulary trained on it) and writes a Hugging Face-format directory:
config.json, model.safetensors, vocab.txt, and training.json with the metrics.
Across processes: `torchrun --nproc_per_node=N -m minibert pretrain ...` (DistributedDataParallel;
see minibert.training.distributed). Impossible settings stop at once with one line and exit
status 2, before any data is made.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from pathlib import Path

import torch.distributed as dist

from .model import preset
from .text.datasets import NEGATIVES, pretraining_pairs
from .text.language import corpus_tokenizer, generate_corpus, load_text_corpus
from .training import distributed
from .training.recipes import ZOO_CONFIG, Recipe, held_out_documents
from .training.trainer import evaluate_mlm, unigram_baseline

DEFAULTS = Recipe()
PRESETS = ("tiny", "small", "base", "large")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m minibert", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pretrain = commands.add_parser("pretrain", help="pre-train with MLM (+ NSP) and save")
    pretrain.add_argument("--preset", default="tiny", choices=PRESETS)
    pretrain.add_argument("--out", type=Path, required=True, help="directory to write")
    pretrain.add_argument("--steps", type=int, default=DEFAULTS.steps)
    pretrain.add_argument("--batch-size", type=int, default=DEFAULTS.batch_size,
                          help="rows per step, over all processes together")
    pretrain.add_argument("--lr", type=float, default=DEFAULTS.lr)
    pretrain.add_argument("--schedule", default=DEFAULTS.schedule,
                          choices=["constant", "linear", "noam"])
    pretrain.add_argument("--warmup-steps", type=int, default=DEFAULTS.warmup_steps)
    pretrain.add_argument("--max-length", type=int, default=DEFAULTS.max_length,
                          help="tokens per row, [CLS] and [SEP]s included")
    pretrain.add_argument("--mask-rate", type=float, default=DEFAULTS.mask_rate)
    pretrain.add_argument("--negatives", default="random",
                          choices=[str(n).lower() for n in NEGATIVES],
                          help="where NotNext segments come from; none = no NSP")
    pretrain.add_argument("--documents", type=int, default=DEFAULTS.num_documents,
                          help="synthetic documents to generate")
    pretrain.add_argument("--seed", type=int, default=DEFAULTS.seed)
    pretrain.add_argument("--text", type=Path, help="pre-train on this plain text file instead")
    pretrain.add_argument("--vocab-size", type=int, default=2000,
                          help="WordPiece vocabulary size for --text")
    pretrain.add_argument("--save-every", type=int, default=0,
                          help="write a resumable checkpoint every this many steps (0: never)")
    pretrain.add_argument("--bf16", action="store_true", help="bfloat16 autocast (for GPUs)")
    return parser


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Stop with one clear line (argparse's exit status 2) on settings that cannot work."""
    for name in ("steps", "batch_size", "documents", "vocab_size"):
        if getattr(args, name) <= 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    for name in ("warmup_steps", "save_every"):
        if getattr(args, name) < 0:
            parser.error(f"--{name.replace('_', '-')} must not be negative, got {getattr(args, name)}")
    if not args.lr > 0:
        parser.error(f"--lr must be positive, got {args.lr}")
    if not 0 < args.mask_rate <= 1:
        parser.error(f"--mask-rate must lie in (0, 1], got {args.mask_rate}")
    positions = preset(args.preset).max_position_embeddings
    if not 8 <= args.max_length <= positions:
        parser.error(f"--max-length {args.max_length} does not fit the {args.preset} preset, "
                     f"which has {positions} positions: use 8 to {positions}")
    if args.text is not None and not args.text.is_file():
        parser.error(f"--text {args.text}: no such file")
    world = int(os.environ.get("WORLD_SIZE", 1))
    if args.batch_size % world:
        parser.error(f"--batch-size {args.batch_size} does not divide among {world} processes")


def main(argv: list[str] | None = None) -> None:
    parser = build_parser()
    args = parser.parse_args(argv)
    check_arguments(parser, args)
    recipe = Recipe(
        num_documents=args.documents, max_length=args.max_length,
        negatives=None if args.negatives == "none" else args.negatives, steps=args.steps,
        batch_size=args.batch_size, lr=args.lr, schedule=args.schedule,
        warmup_steps=args.warmup_steps, mask_rate=args.mask_rate, seed=args.seed,
    )
    if args.text is not None:
        documents, tokenizer = load_text_corpus(args.text, args.vocab_size)
        cut = max(1, len(documents) - max(2, len(documents) // 10))  # the last tenth is held out
        documents, held_out = documents[:cut], documents[cut:]
    else:
        tokenizer = corpus_tokenizer()
        documents = generate_corpus(recipe.num_documents, seed=recipe.seed)
        held_out = held_out_documents(recipe)
    pairs = pretraining_pairs(documents, tokenizer, recipe.max_length, recipe.negatives, seed=recipe.seed)
    config = preset(args.preset, vocab_size=tokenizer.vocab_size, **ZOO_CONFIG)
    model, history = distributed.pretrain(
        config, pairs, recipe.steps, recipe.batch_size, recipe.lr, recipe.schedule,
        recipe.warmup_steps, recipe.mask_rate, seed=recipe.seed, out=args.out,
        save_every=args.save_every, bf16=args.bf16)
    rank, world = (dist.get_rank(), dist.get_world_size()) if dist.is_initialized() else (0, 1)
    if rank == 0:  # written once
        eval_pairs = pretraining_pairs(held_out, tokenizer, recipe.max_length, recipe.negatives,
                                       seed=recipe.seed + 1)
        model = model.float().cpu()
        record = {"recipe": dataclasses.asdict(recipe), "processes": world,
                  "metrics": evaluate_mlm(model, eval_pairs, rate=0.15),
                  "unigram_baseline": unigram_baseline(eval_pairs),
                  "train_seconds": history.wall_time, "tokens_per_second": history.tokens_per_second,
                  "history": history.to_dict()}
        model.save_pretrained(args.out)
        tokenizer.save(args.out)
        (args.out / "training.json").write_text(json.dumps(record, indent=1) + "\n")
        metrics = ", ".join(f"{k} {v:.3f}" for k, v in record["metrics"].items())
        print(f"wrote {args.out}: {metrics}; {record['tokens_per_second']:.0f} tokens/s")
    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
