"""The benchmarks' Markdown table of repeated measurements: the median and every run."""

from __future__ import annotations

import statistics


def print_median_table(first_column: str, unit: str, runs: dict[str, list[float]]) -> None:
    """One row per setting: its name, the median of its runs (in `unit`) and every run."""
    repeats = len(next(iter(runs.values())))
    print(f"| {first_column} | {unit} (median of {repeats}) | runs |")
    print("|---|---:|---|")
    for name, values in runs.items():
        shown = ", ".join(f"{v:.1f}" for v in values)
        print(f"| {name} | {statistics.median(values):.1f} | {shown} |")
