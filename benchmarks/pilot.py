"""Run a chapter's pilot: the whole chapter on seeds from 1000 on (MINIBERT_SEED_OFFSET, which
no chapter's own seeds reach), its claims recorded rather than asserted; then, for each claim
named, save its pilot seeds, its gaps and the paired seeds a fresh run needs to support it
with chance 0.99 (`comparison.seeds_needed`) in src/minibert/pilots/CHAPTER.json, where
the chapter's headline claim reads it (`Experiment(chapter=...)`). Run it, and commit its
file, before the chapter's own seeds are looked at.

    python benchmarks/pilot.py 03_k_equals_v kv_cost [--offset 1000] [--seeds 8]

Every seed list of the chapter is lengthened to at least --seeds seeds (8 unless told).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from book_time import execute

from minibert.experiment import PILOT_LEAST, PILOT_OUT, PILOTS
from minibert.measure.comparison import Claim, seeds_needed
from minibert.runtime import PILOT_COUNT, PILOT_SEEDS

ROOT = Path(__file__).resolve().parent.parent


def pilot_entry(record: dict) -> dict:
    """What a headline carries of its pilot: seeds, gaps, and the seeds needed."""
    claim = Claim.from_record(record)
    return {"seeds": record["seeds"], "gaps": record["gaps"],
            "seeds_needed": seeds_needed(claim, record["gaps"])}


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("chapter")
    parser.add_argument("claims", nargs="+")
    parser.add_argument("--offset", type=int, default=PILOT_SEEDS.start)
    parser.add_argument("--seeds", type=int, default=PILOT_LEAST,
                        help=f"paired seeds, at least {PILOT_LEAST}")
    args = parser.parse_args(argv)
    if args.offset not in PILOT_SEEDS:
        parser.error(f"pilots run on seeds {PILOT_SEEDS.start}-{PILOT_SEEDS.stop - 1}")
    if args.seeds < PILOT_LEAST:
        parser.error(f"a pilot runs at least {PILOT_LEAST} paired seeds")
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "records.json"
        execute(ROOT / "notebooks" / f"{args.chapter}.ipynb",
                {"MINIBERT_SEED_OFFSET": str(args.offset), PILOT_OUT: str(out),
                 PILOT_COUNT: str(args.seeds)})
        records = {r["name"]: r for r in json.loads(out.read_text())}
    missing = [name for name in args.claims if name not in records]
    if missing:
        sys.exit(f"{args.chapter} declares no claim {missing}")
    path = PILOTS / f"{args.chapter}.json"
    pilots = json.loads(path.read_text()) if path.is_file() else {}
    pilots.update({name: pilot_entry(records[name]) for name in args.claims})
    PILOTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(pilots, indent=1) + "\n")
    for name in args.claims:
        print(f"{name}: gaps {records[name]['gaps']}, seeds needed "
              f"{pilots[name]['seeds_needed']}")
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main(sys.argv[1:])
