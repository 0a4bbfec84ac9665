"""Chapter 13's headline design, compared on its pilot seeds before the declaration: the
paired gaps on positions 32-63 (pre-trained at 64 minus pre-trained at 32), scored on 64-token
rows from 300 held-out documents, from 1,200, and from 300 with six masking passes instead of
two; for each, the paired seeds a fresh run needs (`comparison.seeds_needed`). Reads the
pilot seeds' models from the cache (MINIBERT_CACHE), training those missing.

    MINIBERT_CACHE=/path/to/cache python benchmarks/held_out_size.py
"""

from __future__ import annotations

import numpy as np
import torch

from minibert.experiment import Experiment
from minibert.measure import positions
from minibert.measure.comparison import Claim, seeds_needed
from minibert.runtime import PILOT_SEEDS
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.training import zoo

DESIGNS = [(300, 2), (1200, 2), (300, 6)]  # (held-out documents, masking passes)


def main() -> None:
    torch.set_num_threads(1)
    seeds = list(PILOT_SEEDS[:8])
    exp = Experiment(seeds=seeds, recipe=dict(zoo.QUICK), arms={
        "learned": {"position_embedding_type": "absolute"}, "trained at 64": {"max_length": 64}})
    at_32, at_64 = exp.models("learned"), exp.models("trained at 64")
    words = corpus_tokenizer()
    claim = Claim("beyond", "superiority", "pre-trained at 64", "pre-trained at 32",
                  "MLM accuracy, positions 32-63", True)
    for documents, passes in DESIGNS:
        rows = pretraining_pairs(generate_corpus(documents, seed=seeds[0] + zoo.HELD_OUT_SEED),
                                 words, max_length=64, seed=seeds[0] + 1)
        gaps = [positions.mlm_accuracy_by_span(long, rows, 32, repeats=passes)[1]
                - positions.mlm_accuracy_by_span(short, rows, 32, repeats=passes)[1]
                for short, long in zip(at_32, at_64)]
        print(f"{documents} documents ({len(rows)} rows), {passes} passes: mean gap "
              f"{np.mean(gaps):.4f}, sd {np.std(gaps, ddof=1):.4f}, seeds needed "
              f"{seeds_needed(claim, gaps)}", flush=True)


if __name__ == "__main__":
    main()
