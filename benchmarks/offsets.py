"""Every finding's outcome at several seed offsets, and its replication estimates.

Run the notebooks once per offset, each run keeping its executed copies, for example

    MINIBERT_SEED_OFFSET=100 MINIBERT_CACHE=/tmp/cache100 \\
        MINIBERT_EXECUTED_NOTEBOOKS=/tmp/executed/100 .venv/bin/python -m pytest notebooks

then `python benchmarks/offsets.py 0=/tmp/executed/0 100=/tmp/executed/100 ...` prints, per
finding, its outcome at each offset, its replication estimate from each run, and the
estimate from all the offsets' gaps pooled (for a fresh set of as many seeds as one run
has). Observations are not listed. `--markdown` (first) prints the same as a Markdown
table, as it stands in benchmarks/README.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from minibert.measure.comparison import Claim, replication
from minibert.viz.claims import records_in_notebook


def records_of(folder: Path) -> dict[tuple[str, str], dict]:
    """(chapter, claim name) -> record, from a folder of executed notebooks."""
    return {(path.stem[:2], record["name"]): record
            for path in sorted(folder.glob("*.ipynb"))
            for record in records_in_notebook(json.loads(path.read_text()))}


def main(arguments: list[str]) -> None:
    markdown = arguments[:1] == ["--markdown"]
    if markdown:
        arguments = arguments[1:]
    runs = {}
    for argument in arguments:
        offset, folder = argument.split("=", 1)
        runs[offset] = records_of(Path(folder))
    keys = sorted({k for found in runs.values() for k, r in found.items() if r["finding"]})
    offsets = list(runs)
    if markdown:
        print("| chapter | finding | " + " | ".join(f"offset {o}" for o in offsets)
              + " | pooled |")
        print("|---|---|" + "---|" * len(offsets) + "---:|")
    else:
        print("chapter  finding".ljust(40), "  ".join(f"{o:>18s}" for o in offsets),
              "  pooled")
    expected = {o: 0.0 for o in offsets}
    pooled_expected = 0.0
    for key in keys:
        present = {o: runs[o][key] for o in offsets if key in runs[o]}
        cells = []
        for offset in offsets:
            record = present.get(offset)
            if record is None:
                cells.append("missing")
                continue
            expected[offset] += 1 - record["replication"]
            cells.append(f"{record['outcome']} {record['replication']:.3f}")
        first = next(iter(present.values()))
        gaps = np.concatenate([r["gaps"] for r in present.values()])
        pooled = replication(Claim.from_record(first), gaps, n_seeds=first["n"])
        pooled_expected += 1 - pooled
        if markdown:
            print(f"| {key[0]} | `{key[1]}` | " + " | ".join(cells) + f" | {pooled:.3f} |")
        else:
            print(f"{key[0]}  {key[1]}"[:40].ljust(40),
                  "  ".join(f"{c:>18s}" for c in cells), f"  {pooled:.4f}")
    failing = {o: sum(runs[o][k]["outcome"] != "supported" for k in keys if k in runs[o])
               for o in offsets}
    print("\nexpected failing findings per run:",
          ", ".join(f"{o}: {expected[o]:.3f}" for o in offsets),
          f"; pooled: {pooled_expected:.3f}")
    print("findings not supported per run:", ", ".join(f"{o}: {failing[o]}" for o in offsets))


if __name__ == "__main__":
    main(sys.argv[1:])
