"""Count the lines of a chapter's code that do claim and arm bookkeeping: the statements
(counted to their end) that declare, test, judge, unpack, glue or check claims, or name
and fetch arms from the zoo. Issue 49's measure of how much of a chapter is bookkeeping.

    python benchmarks/claim_lines.py [NOTEBOOK ...]      (default: every chapter)
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOKKEEPING = re.compile(
    r"comparison\.|\.test\(|Verdicts|_result\b|\.outcome|zoo\.(prefetch|pretrained_corpus_model|"
    r"training_record|corpus_model_director|unused_prefetches|unnamed_requests)|"
    r"\bexp\.(superiority|non_inferiority|equivalence|sensitivity_control|judge|check|show|"
    r"verdicts)|Experiment\(|what_the_tiny_models_showed")


def code_lines(source: str) -> list[str]:
    """The source of each top-level statement (IPython magics dropped)."""
    source = "\n".join(line[:len(line) - len(line.lstrip())] + "pass"  # a magic: a no-op
                       if line.lstrip().startswith(("%", "!")) else line
                       for line in source.splitlines())
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source.splitlines()
    lines = source.splitlines()
    return ["\n".join(lines[node.lineno - 1:node.end_lineno]) for node in tree.body]


def count(notebook: Path) -> tuple[int, int]:
    """(bookkeeping lines, all code lines) of one notebook."""
    bookkeeping = total = 0
    for cell in json.loads(notebook.read_text())["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "".join(cell["source"])
        total += sum(1 for line in source.splitlines() if line.strip())
        for statement in code_lines(source):
            if BOOKKEEPING.search(statement):
                bookkeeping += sum(1 for line in statement.splitlines() if line.strip())
    return bookkeeping, total


def main(argv: list[str]) -> None:
    notebooks = [Path(a) for a in argv] or sorted((ROOT / "notebooks").glob("*.ipynb"))
    book = [0, 0]
    for notebook in notebooks:
        bookkeeping, total = count(notebook)
        book[0] += bookkeeping
        book[1] += total
        print(f"{notebook.name:40s} {bookkeeping:4d} of {total:4d} code lines")
    print(f"{'the book':40s} {book[0]:4d} of {book[1]:4d} code lines")


if __name__ == "__main__":
    main(sys.argv[1:])
