"""Small BERTs pre-trained on the synthetic corpus, shared by the chapters: where their
runs train, and the one way to ask for them.

A model is trained from code and a seed on first use (well under a minute on two CPU
cores) and cached on disk (`model_cache`); later calls load it in a fraction of a second.
What a model is and how it trains is in `recipes`; this module re-exports the recipe
names the chapters use (`QUICK`, `Recipe`, `held_out_rows`, ...).

`pretrained_corpus_models(seeds=(0, 1, 2))` gives several seeds of one recipe. On a CPU
they train in one process per core, one thread each (the kernel's one pool, `processes`),
and every model trains on one thread wherever it trains, so each member is exactly its
solo run, whatever the cache held. On a GPU they train together as one batched model
(`ensemble.train_together`), equal to solo runs to float rounding; the record says how a
model was trained.

`start([...])` starts, at a chapter's start, every group the chapter will ask for: the
missing models train at once in the pool, longest first, while the chapter goes on. It
returns the runs it started; a later call given them (`started=`) waits only for its own
models. A chapter names its groups once, as the arms of its
`minibert.experiment.Experiment`, which does both.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import time
from pathlib import Path

from ..model import BertConfig, BertForPreTraining
from ..runtime import get_device
from .model_cache import (
    cache_directory,
    model_key,
    model_lock,
    save_atomically,
    train_and_save,
    train_unless_cached,
)
from .processes import Job, in_pool, submit, training_processes, wait_for
from .recipes import (
    HELD_OUT_SEED,
    QUICK,
    ZOO_CONFIG,
    Recipe,
    held_out_rows,
    recipe_tokenizer,
    split_changes,
    train_corpus_models,
    training_rows,
)
from .trainer import progress_bar

__all__ = ["HELD_OUT_SEED", "QUICK", "ZOO_CONFIG", "Recipe", "held_out_rows", "recipe_tokenizer",
           "split_changes", "training_rows", "cache_directory", "model_key", "start",
           "corpus_model_directories", "pretrained_corpus_models", "training_records",
           "seconds_in_zoo"]


_zoo_clock = {"seconds": 0.0, "depth": 0}


def _timed(function):
    """Count the time spent in `function` toward `seconds_in_zoo` (once when nested)."""
    @functools.wraps(function)
    def timed(*args, **kwargs):
        _zoo_clock["depth"] += 1
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            _zoo_clock["depth"] -= 1
            if _zoo_clock["depth"] == 0:
                _zoo_clock["seconds"] += time.perf_counter() - started
    return timed


def seconds_in_zoo() -> float:
    """Seconds this process has spent asking the zoo for models: training them, waiting for
    them (not loading their weights): the zoo's share of a chapter's time, for the
    benchmarks."""
    return _zoo_clock["seconds"]


@_timed
def _directory(preset_name: str, progress: bool, on_step, **changes) -> Path:
    """The cache directory of a zoo model, training it first if it is not there yet (or
    waiting for the process that is training it)."""
    config, recipe = split_changes(preset_name, changes)
    final = cache_directory() / model_key(preset_name, config, recipe)
    if not final.is_dir():
        train_unless_cached(config, recipe, final, progress, on_step)
    return final


def _train_member(preset_name: str, changes: dict, cache: str, on_step) -> str:
    """One member of a group, in a training process (see `processes.submit`). The process
    outlives the call, so it is told the asking kernel's cache rather than reading its own
    environment, which dates from its start."""
    os.environ["MINIBERT_CACHE"] = cache
    return str(_directory(preset_name, False, on_step, **changes))


def _train_together(preset_name: str, changes: dict, seeds: list[int], progress: bool) -> None:
    """Train the members not cached yet as one batched model (the GPU path), holding every
    member's lock, in a fixed order so that two groups never wait on each other."""
    settings = {seed: split_changes(preset_name, {**changes, "seed": seed}) for seed in seeds}
    finals = {seed: cache_directory() / model_key(preset_name, *settings[seed]) for seed in seeds}
    with contextlib.ExitStack() as locks:
        for seed in sorted(seeds, key=lambda s: finals[s].name):
            locks.enter_context(model_lock(finals[seed]))
        missing = [seed for seed in seeds if not finals[seed].is_dir()]
        if not missing:
            return
        started = time.perf_counter()
        config = settings[missing[0]][0]
        trained = train_corpus_models(config, [settings[seed][1] for seed in missing], progress)
        for seed, (model, record) in zip(missing, trained):
            record["total_seconds"] = time.perf_counter() - started
            save_atomically(finals[seed], model, record, recipe_tokenizer(settings[seed][1]))


def _submit_member(preset_name: str, changes: dict, processes: int) -> Job:
    """Start training one zoo model in the kernel's pool of training processes."""
    steps = split_changes(preset_name, changes)[1].steps
    return submit(_train_member, {"preset_name": preset_name, "changes": changes,
                                  "cache": str(cache_directory())}, steps, processes)


def start(requests) -> dict[str, Job]:
    """Start training every model of `requests` not cached yet, in the background, longest
    first, and return the runs started, by model directory name. Each request is a dict of
    the keywords of a later `pretrained_corpus_models` call (preset_name and seeds
    included; by default "tiny" and (0, 1, 2)). On a CPU with one training process, or on a
    GPU (where a group trains as one batched model), it starts nothing: the models train
    when asked for."""
    if not in_pool():
        return {}
    started: dict[str, Job] = {}
    members = []  # (cost, preset_name, changes, directory name)
    for request in requests:
        request = dict(request)
        preset_name = request.pop("preset_name", "tiny")
        seeds = request.pop("seeds", (0, 1, 2))
        for seed in seeds:
            config, recipe = split_changes(preset_name, {**request, "seed": seed})
            final = cache_directory() / model_key(preset_name, config, recipe)
            if not final.is_dir():
                cost = recipe.steps * recipe.batch_size * recipe.max_length * config.num_hidden_layers
                members.append((cost, preset_name, {**request, "seed": seed}, final.name))
    for _, preset_name, changes, name in sorted(members, key=lambda m: -m[0]):
        if name not in started:  # the same model asked for twice
            started[name] = _submit_member(preset_name, changes, training_processes())
    return started


@_timed
def corpus_model_directories(preset_name: str = "tiny", seeds=(0, 1, 2), progress: bool = True,
                             started: dict[str, Job] | None = None, **changes) -> list[Path]:
    """The cache directories of one zoo model per seed, training those not cached yet (or
    waiting for their runs among `started`, from `start`); see `pretrained_corpus_models`."""
    seeds = list(seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}")
    if "seed" in changes:
        raise ValueError("give the seeds as seeds=(...), not seed=")
    settings = [split_changes(preset_name, {**changes, "seed": seed}) for seed in seeds]
    finals = [cache_directory() / model_key(preset_name, config, recipe)
              for config, recipe in settings]
    started = {seed: started[final.name] for seed, final in zip(seeds, finals)
               if final.name in (started or {})}  # by `start`, done or not
    missing = [seed for seed, final in zip(seeds, finals) if not final.is_dir()]
    processes = training_processes()
    if len(missing) > 1 and get_device().type != "cpu" and not settings[0][1].prepare:
        _train_together(preset_name, changes, missing, progress)
    elif missing and in_pool() and (len(missing) > 1 or started):
        jobs = [started.get(seed) or _submit_member(preset_name, {**changes, "seed": seed},
                                                    processes)
                for seed in missing]
        bar = progress_bar(1, progress, f"train seeds {missing}, {processes} processes")
        wait_for(jobs, bar)
        bar.close()
    else:
        _train_one_by_one([(*settings[k], finals[k]) for k, seed in enumerate(seeds)
                           if seed in missing], progress)
    return finals


def _train_one_by_one(models: list[tuple[BertConfig, Recipe, Path]], progress: bool) -> None:
    """Train these (config, recipe, cache directory) models in this process, one after
    another: first those no other process is training (two test workers that ask for one
    group share its work rather than one waiting for the other), then wait for the rest."""
    waiting = []
    for config, recipe, final in models:
        with model_lock(final, wait=False) as mine:
            if mine and not final.is_dir():
                train_and_save(config, recipe, final, progress)
        if not mine:
            waiting.append((config, recipe, final))
    for config, recipe, final in waiting:
        train_unless_cached(config, recipe, final, progress)


def pretrained_corpus_models(preset_name: str = "tiny", seeds=(0, 1, 2), progress: bool = True,
                             **changes) -> list[BertForPreTraining]:
    """A small BERT pre-trained (MLM + NSP) on the synthetic corpus per seed, in eval mode on
    the CPU. Keyword arguments change config fields (layer_norm_position="pre") or Recipe
    fields (negatives=None for no NSP, mask_rate=0.4); each variant is cached apart, and
    each member under its solo name, so a group of one seed finds it. Seeds not cached yet
    train at once: on a CPU in one process per core (each exactly its solo run), on a GPU
    as one batched model. Its tokenizer is in each model directory (`recipe_tokenizer`)."""
    return [BertForPreTraining.from_pretrained(directory)
            for directory in corpus_model_directories(preset_name, seeds, progress, **changes)]


def training_records(preset_name: str = "tiny", seeds=(0, 1, 2), **changes) -> list[dict]:
    """The training record of every member of `pretrained_corpus_models` (training them first
    if needed)."""
    return [json.loads((directory / "training.json").read_text())
            for directory in corpus_model_directories(preset_name, seeds, False, **changes)]
