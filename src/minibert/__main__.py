"""Command line: `python -m minibert pretrain --preset tiny --steps 600 --out DIR`.

Pre-trains a BERT on the synthetic corpus (or on a text file of your own, with a
WordPiece vocabulary trained on it) and writes a Hugging Face-format directory:
config.json, model.safetensors, vocab.txt, and training.json with the metrics.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .model import preset
from .text.datasets import NEGATIVES
from .text.language import corpus_tokenizer, load_text_corpus
from .training.zoo import ZOO_CONFIG, Recipe, train_corpus_model

DEFAULTS = Recipe()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m minibert", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    pretrain = commands.add_parser("pretrain", help="pre-train with MLM (+ NSP) and save")
    pretrain.add_argument("--preset", default="tiny", help="tiny, small, base or large")
    pretrain.add_argument("--out", type=Path, required=True, help="directory to write")
    pretrain.add_argument("--steps", type=int, default=DEFAULTS.steps)
    pretrain.add_argument("--batch-size", type=int, default=DEFAULTS.batch_size)
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
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    recipe = Recipe(
        num_documents=args.documents, max_length=args.max_length,
        negatives=None if args.negatives == "none" else args.negatives, steps=args.steps,
        batch_size=args.batch_size, lr=args.lr, schedule=args.schedule,
        warmup_steps=args.warmup_steps, mask_rate=args.mask_rate, seed=args.seed,
    )
    if args.text is not None:
        documents, tokenizer = load_text_corpus(args.text, args.vocab_size)
    else:
        documents, tokenizer = None, corpus_tokenizer()
    config = preset(args.preset, vocab_size=tokenizer.vocab_size, **ZOO_CONFIG)
    model, record = train_corpus_model(config, recipe, documents, tokenizer)
    model.save_pretrained(args.out)
    tokenizer.save(args.out)
    (args.out / "training.json").write_text(json.dumps(record, indent=1) + "\n")
    metrics = ", ".join(f"{k} {v:.3f}" for k, v in record["metrics"].items())
    print(f"wrote {args.out}: {metrics}; {record['tokens_per_second']:.0f} tokens/s")


if __name__ == "__main__":
    main()
