"""A chapter's experiment: its arms named once, trained in the background, measured as
tables of arm by seed, and its claims declared, judged and checked on it.

    exp = Experiment(seeds=SEEDS, recipe=zoo.QUICK, arms={
        "separate Q, K, V": {},
        "K = V": {"qkv_sharing": "kv"},
    })                                         # the arms' models start training now
    exp.non_inferiority("kv_cost", "K = V", "separate Q, K, V", margin=0.03,
                        metric="held-out MLM accuracy", finding=False)
    accuracy = exp.record_table("metrics", "mlm_accuracy")   # arm x seed
    exp.judge("kv_cost", accuracy)             # rows "K = V" and "separate Q, K, V"
    exp.show()                                 # "What the tiny models showed", glued
    exp.check()                                # asserts every finding, printing each

A chapter that trains nothing (it measures a real model) makes one with no arms, for its
claims. An arm is a dict of zoo settings (config switches and recipe fields, added to `recipe`),
plus optionally its own "seeds" and "preset". Seed s of every arm starts from the same
initial weights and sees the same batches, so the arms' values pair by seed. The models
train in the kernel's pool of training processes on a CPU with cores to spare, as one
batched model on a GPU, or here when asked for (the test run), as the zoo decides.

`check()` fails, naming it, on an arm the chapter never asked for, a claim it never
judged, and a finding that is not supported. A headline claim (the comparison that
answers the chapter's question) carries its pilot, read from `minibert/pilots/CHAPTER.json`
(written by `benchmarks/pilot.py` from a run on seeds 1000 and up, which no chapter uses).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .measure import comparison
from .measure.comparison import Claim, ClaimBook, Result, Verdicts
from .model import BertForPreTraining
from .runtime import PILOT_SEEDS
from .training import recipes, zoo
from .viz.claims import TinyModelsShowed, what_the_tiny_models_showed

PILOTS = Path(__file__).parent / "pilots"  # one JSON file of pilot gaps per chapter
PILOT_LEAST = 8  # the fewest paired seeds a pilot runs
PILOT_OUT = "MINIBERT_PILOT_OUT"  # set by benchmarks/pilot.py: write results, assert nothing


class Experiment:
    """One chapter's arms, their models and records, and its claims."""

    def __init__(self, arms: dict[str, dict] | None = None, seeds: Sequence[int] = (),
                 recipe: dict | None = None,
                 preset: str = "tiny", chapter: str | None = None):
        self.seeds = list(seeds)
        self.chapter = chapter  # names the pilot file of its headline claims
        self.arms: dict[str, dict] = {}
        for name, changes in (arms or {}).items():
            changes = dict(changes)
            arm_seeds = list(changes.pop("seeds", self.seeds))
            arm_preset = changes.pop("preset", preset)
            self.arms[name] = {"preset_name": arm_preset, "seeds": arm_seeds,
                               **(recipe or {}), **changes}
        self.used: set[str] = set()
        self.book = ClaimBook()
        self._started = zoo.start(self.arms.values())  # training starts now, in the background

    # --- the arms' models and records -------------------------------------------------

    def _arm(self, arm: str) -> dict:
        if arm not in self.arms:
            raise KeyError(f"no arm named {arm!r}; the arms: {', '.join(self.arms)}")
        self.used.add(arm)
        return self.arms[arm]

    def seeds_of(self, arm: str) -> list[int]:
        return list(self._arm(arm)["seeds"])

    def settings(self, arm: str) -> dict:
        """The arm's zoo settings (config and recipe changes), without preset and seeds."""
        return {k: v for k, v in self._arm(arm).items() if k not in ("preset_name", "seeds")}

    def directories(self, arm: str) -> list[Path]:
        """The cache directories of the arm's models, one per seed (waiting for training)."""
        request = dict(self._arm(arm))
        return zoo.corpus_model_directories(request.pop("preset_name"), request.pop("seeds"),
                                            progress=False, started=self._started, **request)

    def models(self, arm: str, device=None) -> list[BertForPreTraining]:
        """The arm's pre-trained models, one per seed, in eval mode (on `device` if given)."""
        return [self._load(d, device) for d in self.directories(arm)]

    def model(self, arm: str, seed: int, device=None) -> BertForPreTraining:
        """The arm's model of one seed."""
        seeds = self.seeds_of(arm)
        if seed not in seeds:
            raise KeyError(f"arm {arm!r} has seeds {seeds}, not {seed}")
        return self._load(self.directories(arm)[seeds.index(seed)], device)

    @staticmethod
    def _load(directory: Path, device) -> BertForPreTraining:
        model = BertForPreTraining.from_pretrained(directory)
        return model if device is None else model.to(device)

    def untrained(self, arm: str, seed: int, device=None) -> BertForPreTraining:
        """The arm's model of one seed as it was before training: the weights it started
        from (a baseline that has learned nothing)."""
        model = recipes.initial_model(*recipes.split_changes(
            self._arm(arm)["preset_name"], {**self.settings(arm), "seed": seed}))
        return model.eval() if device is None else model.eval().to(device)

    def records(self, arm: str) -> list[dict]:
        """How each of the arm's models trained (recipe, history, held-out metrics)."""
        return [json.loads((d / "training.json").read_text()) for d in self.directories(arm)]

    def record_table(self, *path: str, arms: Sequence[str] | None = None) -> pd.DataFrame:
        """One number of every model's training record, arm by seed: record_table("metrics",
        "mlm_accuracy"). Seeds an arm does not have are NaN."""
        def pick(record):
            for key in path:
                record = record[key]
            return float(record)
        arms = list(arms or self.arms)
        return self.table({arm: dict(zip(self.seeds_of(arm), map(pick, self.records(arm))))
                           for arm in arms})

    def measure(self, function: Callable, arms: Sequence[str] | None = None, device=None,
                seeds: Sequence[int] | None = None) -> pd.DataFrame | dict[str, pd.DataFrame]:
        """function(model, seed) for every model of the arms (or only those of `seeds`): a
        table arm by seed, or, where it returns a dict of numbers, one table per key."""
        values = {}
        for arm in (arms or self.arms):
            wanted = [s for s in self.seeds_of(arm) if seeds is None or s in seeds]
            directories = dict(zip(self.seeds_of(arm), self.directories(arm)))
            values[arm] = {s: function(self._load(directories[s], device), s) for s in wanted}
        first = next(v for by_seed in values.values() for v in by_seed.values())
        if isinstance(first, dict):
            return {key: self.table({arm: {s: v[key] for s, v in by_seed.items()}
                                     for arm, by_seed in values.items()}) for key in first}
        return self.table(values)

    def table(self, values: dict[str, dict | Sequence]) -> pd.DataFrame:
        """A table arm (or any row name) by seed, from {row: {seed: value}}, {row: Series by
        seed} or {row: values in the order of the experiment's seeds}."""
        rows = {row: (dict(v) if isinstance(v, dict | pd.Series) else dict(zip(self.seeds, v)))
                for row, v in values.items()}
        table = pd.DataFrame.from_dict(rows, orient="index", dtype=float)
        table.columns.name, table.index.name = "seed", "arm"
        return table

    # --- claims -------------------------------------------------------------------------

    def _declare(self, claim: Claim) -> Claim:
        if claim.headline and claim.says is None:
            raise ValueError(f"{claim.name} is a headline claim: write what each outcome "
                             f"would mean before the run (says={{outcome: sentence}})")
        if claim.headline and os.environ.get(PILOT_OUT) is None:
            pilot = read_pilot(self.chapter, claim.name)
            claim = dataclasses.replace(claim, pilot=pilot)
        return self.book.declare(claim)

    def superiority(self, name: str, a: str, b: str, **declaration) -> Claim:
        """Declare: A better than B (see `comparison.superiority`)."""
        return self._declare(comparison.superiority(name, a, b, **declaration))

    def non_inferiority(self, name: str, a: str, b: str, **declaration) -> Claim:
        """Declare: A not worse than B by more than the margin."""
        return self._declare(comparison.non_inferiority(name, a, b, **declaration))

    def equivalence(self, name: str, a: str, b: str, **declaration) -> Claim:
        """Declare: A within ± the margin of B."""
        return self._declare(comparison.equivalence(name, a, b, **declaration))

    def sensitivity_control(self, name: str, of: str, a: str, b: str, *, finding: bool
                            ) -> Claim:
        """Declare the control of claim `of`: a change of about its margin, detected."""
        return self._declare(comparison.sensitivity_control(name, self.book.claim(of), a, b,
                                                            finding=finding))

    def judge(self, name: str | Sequence[str], table: pd.DataFrame | None = None, *, a=None,
              b=None, seeds: Sequence[int] | None = None) -> Result | Verdicts:
        """Judge claim `name` (or several, on one table): on the rows named by its A and B in
        `table` (arm by seed), or on values `a` and `b`, Series by seed or sequences over
        `seeds` (default: the experiment's); beside a Series, the other may be one number or
        values in the Series' order. Only the seeds where both have a value pair."""
        if not isinstance(name, str):
            return Verdicts(self.judge(one, table) for one in name)
        claim = self.book.claim(name)
        if table is not None:
            missing = [row for row in (claim.a, claim.b) if row not in table.index]
            if missing:
                raise KeyError(f"{name}: the table has no row {missing}; rows: "
                               f"{list(table.index)}")
            a, b = table.loc[claim.a], table.loc[claim.b]
        if isinstance(a, pd.Series) != isinstance(b, pd.Series):  # a number or list vs a Series
            index = (a if isinstance(a, pd.Series) else b).index
            a, b = (v if isinstance(v, pd.Series) else
                    pd.Series(np.broadcast_to(np.asarray(v, float), len(index)), index=index)
                    for v in (a, b))
        if isinstance(a, pd.Series):
            both = pd.concat([pd.Series(a, dtype=float), pd.Series(b, dtype=float)],
                             axis=1).dropna()
            return self.book.judge(name, both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy(),
                                   [int(s) for s in both.index])
        return self.book.judge(name, np.asarray(a, float), np.asarray(b, float),
                               list(seeds or self.seeds))

    def __getitem__(self, name: str) -> Result:
        if name not in self.book.results:
            raise KeyError(f"the claim {name!r} has not been judged yet")
        return self.book.results[name]

    def verdicts(self, *names: str) -> Verdicts:
        """Some results, shown one sentence each."""
        return Verdicts(self[name] for name in names)

    def show(self) -> TinyModelsShowed:
        """The chapter's "What the tiny models showed" block, its outcomes glued by name."""
        return what_the_tiny_models_showed(self.book.in_order())

    def check(self) -> None:
        """The claim check: every arm used, every claim judged, every finding supported,
        each finding printed as the evidence it is. With $MINIBERT_PILOT_OUT set (a pilot
        run, `benchmarks/pilot.py`), write every result's record there instead of
        asserting."""
        unused = [arm for arm in self.arms if arm not in self.used]
        if unused:
            raise AssertionError(f"arms trained and never used: {', '.join(unused)}")
        results = self.book.in_order()
        if os.environ.get(PILOT_OUT):
            Path(os.environ[PILOT_OUT]).write_text(json.dumps(
                [r.record() for r in results], indent=1) + "\n")
            print(f"pilot run: {len(results)} results written to {os.environ[PILOT_OUT]}")
            return
        underpowered = [
            f"{r.claim.name} (its pilot asks for {r.claim.pilot['seeds_needed']}, this run "
            f"has {r.n})" for r in results if r.claim.headline and r.claim.finding and (
                r.claim.pilot["seeds_needed"] is None or r.claim.pilot["seeds_needed"] > r.n)]
        if underpowered:
            raise AssertionError(
                f"a headline is a finding only with the seeds its pilot asks for: "
                f"{', '.join(underpowered)}; give it the seeds or declare an observation")
        failing = []
        for result in results:
            if result.claim.finding:
                print(f"finding {result.claim.name}: {result.sentence()}")
                if result.outcome != "supported":
                    failing.append(result.claim.name)
        observed = [r.claim.name for r in results if not r.claim.finding]
        if observed:
            print(f"observations, shown and not asserted: {', '.join(observed)}")
        if failing:
            raise AssertionError(f"findings not supported: {', '.join(failing)}")


def read_pilot(chapter: str | None, name: str, folder: Path | None = None) -> dict:
    """A headline claim's pilot: its seeds (1000 and up), gaps and the seeds it needs."""
    path = (folder or PILOTS) / f"{chapter}.json"
    if chapter is None or not path.is_file():
        raise ValueError(f"{name} is a headline claim: it needs a pilot in {path}, run "
                         f"by benchmarks/pilot.py before the chapter's seeds are seen")
    pilots = json.loads(path.read_text())
    if name not in pilots:
        raise ValueError(f"{path} holds no pilot of the headline claim {name!r}")
    pilot = pilots[name]
    if len(pilot["seeds"]) < PILOT_LEAST:
        raise ValueError(f"{name}'s pilot has {len(pilot['seeds'])} paired seeds: a pilot "
                         f"runs at least {PILOT_LEAST}")
    if not all(s in PILOT_SEEDS for s in pilot["seeds"]):
        raise ValueError(f"{name}'s pilot ran on seeds {pilot['seeds']}: a pilot runs on "
                         f"seeds {PILOT_SEEDS.start}-{PILOT_SEEDS.stop - 1}")
    return pilot
