"""Compare the claims of two runs of the chapters: every claim of the first run is in the
second, with the same outcome and its gaps within 1e-9 (and no claim is new), read from
the executed notebooks (their "What the tiny models showed" records).

    python benchmarks/compare_claims.py BEFORE_FOLDER AFTER_FOLDER [NOTEBOOK ...]
"""

from __future__ import annotations

import html
import json
import re
import sys
from pathlib import Path

from minibert.viz.claims import records_in_notebook

RECORD = re.compile(r'data-claim="([^"]*)"')


def claims_of(notebook: Path) -> dict[str, dict]:
    """Every claim record in an executed notebook's outputs, by claim name: the glued
    records, or, in a run from before they were glued, the records in the block's HTML."""
    executed = json.loads(notebook.read_text())
    glued = records_in_notebook(executed)
    if glued:
        return {record["name"]: record for record in glued}
    found = {}
    for cell in executed["cells"]:
        for output in cell.get("outputs", []):
            for text in output.get("data", {}).values():
                text = "".join(text) if isinstance(text, list) else str(text)
                for match in RECORD.finditer(text):
                    record = json.loads(html.unescape(match.group(1)))
                    found[record["name"]] = record
    return found


def compare(before: dict[str, dict], after: dict[str, dict], tolerance: float = 1e-9) -> list[str]:
    """The differences, one line each; empty when the runs agree."""
    problems = [f"{name}: missing after" for name in before if name not in after]
    problems += [f"{name}: new after" for name in after if name not in before]
    for name in before.keys() & after.keys():
        old, new = before[name], after[name]
        if old["outcome"] != new["outcome"]:
            problems.append(f"{name}: outcome {old['outcome']} -> {new['outcome']}")
        if old["seeds"] != new["seeds"] or len(old["gaps"]) != len(new["gaps"]) or any(
                abs(x - y) > tolerance for x, y in zip(old["gaps"], new["gaps"])):
            problems.append(f"{name}: gaps {old['gaps']} -> {new['gaps']}")
        for key in ("kind", "finding", "margin", "minimum_effect", "higher_is_better"):
            if old.get(key) != new.get(key):
                problems.append(f"{name}: {key} {old.get(key)!r} -> {new.get(key)!r}")
    return problems


def main(argv: list[str]) -> int:
    before, after, *names = argv
    names = names or sorted(p.name for p in Path(before).glob("*.ipynb"))
    failed, total = 0, 0
    for name in names:
        name = Path(name).name
        old, new = claims_of(Path(before) / name), claims_of(Path(after) / name)
        total += len(old)
        problems = compare(old, new)
        failed += bool(problems)
        status = "agree" if not problems else "DIFFER"
        print(f"{name}: {len(old)} claims before, {len(new)} after: {status}")
        for line in problems:
            print("   ", line)
    print(f"{total} claims in {len(names)} notebooks; {failed} notebooks differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
