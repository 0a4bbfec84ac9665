"""Small BERTs pre-trained on the synthetic corpus, shared by the chapters.

A model is trained from code and a seed on first use (well under a minute on two CPU
cores) and cached on disk, in $MINIBERT_CACHE (default ~/.cache/minibert), under a name
that hashes its config, its training recipe and CODE_VERSION; later calls load it in a
fraction of a second. One lock per name, across processes, makes a second process that
asks for the same model wait for the first and load what it wrote; the directory is
written under a temporary name and renamed into place, so nobody sees it half written.

`pretrained_corpus_models(seeds=(0, 1, 2))` gives several seeds of one recipe. On a CPU
they train in one process per core, one thread each (the kernel's one pool, `processes`), and
every model trains on one thread wherever it trains, so each member is exactly its solo
run: seed 0 of a group is the model `pretrained_corpus_model(seed=0)` gives, whatever the
cache held. On a GPU they train together as one batched model (`ensemble.train_together`),
equal to solo runs to float rounding; the record says how a model was trained.

`start([...])` starts, at a chapter's start, every group the chapter will ask for: the
missing models train at once in the kernel's one pool of processes, longest first, while
the chapter goes on. It returns the runs it started; a later call given them
(`started=`) waits only for its own models. A chapter names its groups once, as the arms
of its `minibert.experiment.Experiment`, which does both.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from ..model import BertConfig, BertForPreTraining, preset
from ..runtime import get_device, one_thread
from ..text.datasets import Dataset, pretraining_pairs
from ..text.language import (
    Document,
    check_count,
    corpus_tokenizer,
    generate_corpus,
    zipfian_corpus,
    zipfian_tokenizer,
)
from ..text.masking import Masker, check_masking
from ..text.tokenizer import WordPiece
from .ensemble import train_together
from .optimizers import OPTIMIZERS
from .processes import Job, in_pool, submit, training_processes, wait_for
from .trainer import History, evaluate_mlm, progress_bar, train, unigram_baseline

try:
    import fcntl  # the lock between processes; absent on Windows, where none is taken
except ImportError:  # pragma: no cover
    fcntl = None

CODE_VERSION = 2  # bump when the corpus, the model or the loop changes what training gives
HELD_OUT_SEED = 10_000  # the evaluation documents come from seed + HELD_OUT_SEED


@dataclass(frozen=True)
class Recipe:
    """How a zoo model is pre-trained. negatives=None trains without NSP on rows of contiguous
    text (RoBERTa's choice); nsp_loss=False keeps the A/B pair rows and drops only the NSP
    loss (BERT's own "No NSP" ablation). mask_split is (MASK, RANDOM, KEEP) of the chosen
    tokens. optimizer names one of `optimizers.OPTIMIZERS`. spellings > 1 writes every word
    in that many Zipfian spellings (`language.zipfian_corpus`), a vocabulary that many times
    larger. The defaults optimizer="adamw" and spellings=1 are left out of a model's key and
    record, so that models trained before those fields existed keep their names."""

    num_documents: int = 3000
    max_length: int = 64
    negatives: str | None = "random"
    steps: int = 800
    batch_size: int = 64
    lr: float = 3e-3
    schedule: str = "linear"
    warmup_steps: int = 80
    mask_rate: float = 0.15
    mask_split: tuple[float, float, float] = (0.8, 0.1, 0.1)
    nsp_loss: bool = True
    seed: int = 0
    optimizer: str = "adamw"
    spellings: int = 1


# A cheaper recipe for chapters that pre-train many variants (sweeps, ablations): shorter
# rows, fewer documents and steps. About a quarter of the default's cost, and still well
# above the unigram baseline. Use as pretrained_corpus_model(**QUICK, mask_rate=0.4).
QUICK = {"steps": 300, "max_length": 32, "num_documents": 1000}

# Config fields that the zoo sets for every model unless overridden: dropout off, since
# the corpus is regenerated rather than memorised and dropout costs a third of a step.
ZOO_CONFIG = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


def cache_directory() -> Path:
    """Where zoo models live: $MINIBERT_CACHE, or ~/.cache/minibert."""
    return Path(os.environ.get("MINIBERT_CACHE") or Path.home() / ".cache" / "minibert")


def split_changes(preset_name: str, changes: dict) -> tuple[BertConfig, Recipe]:
    """Sort keyword arguments into config fields and recipe fields; anything else is an error."""
    recipe_fields = {f.name for f in dataclasses.fields(Recipe)}
    config_fields = {f.name for f in dataclasses.fields(BertConfig)} - {"extra", "vocab_size"}
    unknown = sorted(set(changes) - recipe_fields - config_fields)
    if unknown:
        raise ValueError(f"unknown zoo settings {unknown}: use fields of Recipe "
                         f"{sorted(recipe_fields)} or of BertConfig")
    recipe_changes = {k: v for k, v in changes.items() if k in recipe_fields}
    if "mask_split" in recipe_changes:
        recipe_changes["mask_split"] = tuple(recipe_changes["mask_split"])
    recipe = Recipe(**recipe_changes)
    check_masking(recipe.mask_rate, recipe.mask_split)
    if recipe.optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {list(OPTIMIZERS)}, "
                         f"got {recipe.optimizer!r}")
    if not recipe.nsp_loss and recipe.negatives is None:
        raise ValueError("nsp_loss=False drops the NSP loss from pair rows; with "
                         "negatives=None the rows have no pairs and no NSP loss already")
    check_count("spellings", recipe.spellings)
    config_changes = {**ZOO_CONFIG, **{k: v for k, v in changes.items() if k in config_fields}}
    config = preset(preset_name, vocab_size=recipe_tokenizer(recipe).vocab_size,
                    **config_changes)
    if recipe.max_length > config.max_position_embeddings:
        raise ValueError(f"max_length {recipe.max_length} exceeds the model's "
                         f"max_position_embeddings ({config.max_position_embeddings})")
    return config, recipe


def recipe_settings(recipe: Recipe) -> dict:
    """The recipe as a dict, for a model's key and record: every field, except those at a
    default that older models did not record (optimizer "adamw", spellings 1)."""
    settings = dataclasses.asdict(recipe)
    for name, default in (("optimizer", "adamw"), ("spellings", 1)):
        if settings[name] == default:
            del settings[name]
    return settings


def recipe_tokenizer(recipe: Recipe) -> WordPiece:
    """The vocabulary a recipe's models read: the corpus's, or its Zipfian spellings'."""
    return corpus_tokenizer() if recipe.spellings == 1 else zipfian_tokenizer(recipe.spellings)


def recipe_documents(recipe: Recipe, num_documents: int, seed: int) -> list[Document]:
    """Documents of the synthetic language as the recipe writes them."""
    if recipe.spellings == 1:
        return generate_corpus(num_documents, seed=seed)
    return zipfian_corpus(num_documents, seed=seed, spellings=recipe.spellings)


def model_key(preset_name: str, config: BertConfig, recipe: Recipe) -> str:
    """A directory name that changes whenever the config, recipe or code version does."""
    settings = {"config": config.to_dict(), "recipe": recipe_settings(recipe),
                "code_version": CODE_VERSION}
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
    return f"corpus-{preset_name}-{digest[:16]}"


def held_out_documents(recipe: Recipe) -> list[Document]:
    """The documents a recipe's models are evaluated on: a tenth as many as it trains on,
    drawn from seed + HELD_OUT_SEED, so no model of the zoo ever trains on them."""
    return recipe_documents(recipe, max(2, recipe.num_documents // 10),
                            seed=recipe.seed + HELD_OUT_SEED)


def held_out_rows(recipe: Recipe, tokenizer: WordPiece | None = None) -> Dataset:
    """The held-out rows the zoo scores a recipe's models on, cut as the recipe cuts its
    training rows (its max_length and negatives). For the same documents cut another way,
    pass dataclasses.replace(recipe, negatives=...)."""
    return pretraining_pairs(held_out_documents(recipe), tokenizer or recipe_tokenizer(recipe),
                             recipe.max_length, recipe.negatives, seed=recipe.seed + 1)


def _corpus_data(recipe: Recipe, tokenizer: WordPiece, documents: list[Document] | None = None):
    """The training and held-out pre-training pairs of a recipe (or of the reader's documents,
    whose last tenth is held out)."""
    if documents is None:
        documents = recipe_documents(recipe, recipe.num_documents, seed=recipe.seed)
        held_out = held_out_documents(recipe)
    else:
        cut = max(1, len(documents) - max(2, len(documents) // 10))
        documents, held_out = documents[:cut], documents[cut:]
    pairs = pretraining_pairs(documents, tokenizer, recipe.max_length, recipe.negatives,
                              seed=recipe.seed)
    if not recipe.nsp_loss:  # the same rows, without the label that switches NSP on
        tensors = {k: v for k, v in pairs.tensors.items() if k != "next_sentence_label"}
        pairs = Dataset(tensors, pairs.examples, pairs.tokenizer, pairs.label_names)
    eval_pairs = pretraining_pairs(held_out, tokenizer, recipe.max_length, recipe.negatives,
                                   seed=recipe.seed + 1)
    return pairs, eval_pairs


def training_rows(recipe: Recipe) -> Dataset:
    """The rows a recipe's models train on (each seed its own documents, cut its way)."""
    return _corpus_data(recipe, recipe_tokenizer(recipe))[0]


def _record(model, recipe: Recipe, history: History, eval_pairs, trained_with: list[int]) -> dict:
    """What the cache keeps beside a model: recipe, held-out metrics, history, and the seeds it
    was trained together with (just its own seed when it trained alone)."""
    return {
        "recipe": recipe_settings(recipe),
        "trained_with": {"seeds": trained_with,
                         "how": "alone" if len(trained_with) == 1 else "together, one batched model"},
        "metrics": evaluate_mlm(model, eval_pairs, rate=0.15),
        "unigram_baseline": unigram_baseline(eval_pairs),
        "train_seconds": history.wall_time,
        "tokens_per_second": history.tokens_per_second,
        "history": history.to_dict(),
    }


def _masker(recipe: Recipe, tokenizer: WordPiece) -> Masker:
    return Masker.for_tokenizer(tokenizer, rate=recipe.mask_rate, split=recipe.mask_split)


def _initial_model(config: BertConfig, recipe: Recipe) -> BertForPreTraining:
    torch.manual_seed(recipe.seed)  # the initial weights
    return BertForPreTraining(config)


def train_corpus_model(config: BertConfig, recipe: Recipe, documents: list[Document] | None = None,
                       tokenizer: WordPiece | None = None, progress: bool = True,
                       on_step=None, prepare=None) -> tuple[BertForPreTraining, dict]:
    """Pre-train a BertForPreTraining on the synthetic corpus (or on `documents`, with their
    tokenizer). Returns the model and a record: recipe, history, held-out metrics and the
    unigram baseline. on_step(steps_done) is called after each step. prepare(model), if
    given, changes the freshly initialised model in place before training: a chapter's
    variant that no config switch expresses, paired with the zoo's model of the same seed
    (same initial weights, rows, masks and batches). Such models are not cached."""
    tokenizer = tokenizer or recipe_tokenizer(recipe)
    pairs, eval_pairs = _corpus_data(recipe, tokenizer, documents)
    model = _initial_model(config, recipe)
    if prepare is not None:
        prepare(model)
    history = train(model, pairs, steps=recipe.steps, lr=recipe.lr,
                    batch_size=recipe.batch_size, schedule=recipe.schedule,
                    warmup_steps=recipe.warmup_steps, masker=_masker(recipe, tokenizer),
                    seed=recipe.seed, progress=progress, on_step=on_step,
                    optimizer=recipe.optimizer)
    return model.cpu(), _record(model, recipe, history, eval_pairs, [recipe.seed])


def train_corpus_models(config: BertConfig, recipes: list[Recipe], progress: bool = True
                        ) -> list[tuple[BertForPreTraining, dict]]:
    """Pre-train one model per recipe, all together as one batched model. The recipes may
    differ in seed, corpus size and masking (rate and split); not in the kind of rows
    (negatives, nsp_loss: every member's batch must carry the same tensors), nor in anything
    that sets the schedule, the optimiser or the batch shape (steps, batch_size, lr,
    schedule, warm-up, optimizer, max_length)."""
    shared = ("steps", "batch_size", "lr", "schedule", "warmup_steps", "max_length",
              "negatives", "nsp_loss", "optimizer", "spellings")
    for name in shared:
        values = {getattr(r, name) for r in recipes}
        if len(values) > 1:
            raise ValueError(f"models trained together must share {name}, got {sorted(values, key=repr)}")
    tokenizer = recipe_tokenizer(recipes[0])
    data = [_corpus_data(recipe, tokenizer) for recipe in recipes]
    models = [_initial_model(config, recipe) for recipe in recipes]
    first = recipes[0]
    histories = train_together(models, [pairs for pairs, _ in data], steps=first.steps, lr=first.lr,
                               batch_size=first.batch_size, schedule=first.schedule,
                               warmup_steps=first.warmup_steps,
                               masker=[_masker(r, tokenizer) for r in recipes],
                               seeds=[r.seed for r in recipes], progress=progress,
                               optimizer=first.optimizer)
    seeds = [r.seed for r in recipes]
    return [(model.cpu(), _record(model, recipe, history, eval_pairs, seeds))
            for model, recipe, history, (_, eval_pairs) in zip(models, recipes, histories, data)]


def _save_atomically(final: Path, model, record: dict, tokenizer: WordPiece) -> None:
    """Write a model directory under a temporary name, then rename it into place."""
    cache = final.parent
    cache.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=cache))
    try:
        model.save_pretrained(temporary)
        tokenizer.save(temporary)
        (temporary / "training.json").write_text(json.dumps(record, indent=1) + "\n")
        try:
            os.rename(temporary, final)  # atomic: the directory appears complete or not at all
        except OSError:
            if not final.is_dir():  # not another process finishing first: a real error
                raise
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


@contextlib.contextmanager
def _model_lock(final: Path, wait: bool = True):
    """Hold the lock of one model name across processes for the duration of the block, and
    yield True. With wait=False, yield False at once instead when another process holds it."""
    locks = final.parent / ".locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{final.name}.lock", "w") as handle:
        if fcntl is not None:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # only without waiting: another process trains it
                yield False
                return
        yield True  # the lock is released when the file closes


def _train_and_save(config: BertConfig, recipe: Recipe, final: Path, progress: bool,
                    on_step=None) -> None:
    """Train one zoo model and cache it. On a CPU it trains on one thread, so that its bits
    do not depend on how many threads the process that happened to train it had."""
    started = time.perf_counter()
    single = one_thread() if get_device().type == "cpu" else contextlib.nullcontext()
    with single:
        model, record = train_corpus_model(config, recipe, progress=progress, on_step=on_step)
    record["total_seconds"] = time.perf_counter() - started
    _save_atomically(final, model, record, recipe_tokenizer(recipe))


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
def corpus_model_directory(preset_name: str = "tiny", progress: bool = True, on_step=None,
                           **changes) -> Path:
    """The cache directory of a zoo model, training it first if it is not there yet (or
    waiting for the process that is training it)."""
    config, recipe = split_changes(preset_name, changes)
    final = cache_directory() / model_key(preset_name, config, recipe)
    if not final.is_dir():
        _train_unless_cached(config, recipe, final, progress, on_step)
    return final


def _train_unless_cached(config: BertConfig, recipe: Recipe, final: Path, progress: bool,
                         on_step=None) -> None:
    """Take the model's lock (waiting for a process that holds it) and train it, unless
    that process trained it meanwhile."""
    with _model_lock(final):
        if not final.is_dir():
            _train_and_save(config, recipe, final, progress, on_step)


def _train_member(preset_name: str, changes: dict, cache: str, on_step) -> str:
    """One member of a group, in a training process (see `processes.submit`). The process
    outlives the call, so it is told the asking kernel's cache rather than reading its own
    environment, which dates from its start."""
    os.environ["MINIBERT_CACHE"] = cache
    return str(corpus_model_directory(preset_name, progress=False, on_step=on_step, **changes))


def _train_together(preset_name: str, changes: dict, seeds: list[int], progress: bool) -> None:
    """Train the members not cached yet as one batched model (the GPU path), holding every
    member's lock, in a fixed order so that two groups never wait on each other."""
    settings = {seed: split_changes(preset_name, {**changes, "seed": seed}) for seed in seeds}
    finals = {seed: cache_directory() / model_key(preset_name, *settings[seed]) for seed in seeds}
    with contextlib.ExitStack() as locks:
        for seed in sorted(seeds, key=lambda s: finals[s].name):
            locks.enter_context(_model_lock(finals[seed]))
        missing = [seed for seed in seeds if not finals[seed].is_dir()]
        if not missing:
            return
        started = time.perf_counter()
        config = settings[missing[0]][0]
        trained = train_corpus_models(config, [settings[seed][1] for seed in missing], progress)
        for seed, (model, record) in zip(missing, trained):
            record["total_seconds"] = time.perf_counter() - started
            _save_atomically(finals[seed], model, record, recipe_tokenizer(settings[seed][1]))


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
    if len(missing) > 1 and get_device().type != "cpu":
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
        with _model_lock(final, wait=False) as mine:
            if mine and not final.is_dir():
                _train_and_save(config, recipe, final, progress)
        if not mine:
            waiting.append((config, recipe, final))
    for config, recipe, final in waiting:
        _train_unless_cached(config, recipe, final, progress)


def pretrained_corpus_model(preset_name: str = "tiny", progress: bool = True,
                            **changes) -> BertForPreTraining:
    """A small BERT pre-trained (MLM + NSP) on the synthetic corpus, in eval mode on the CPU.
    Keyword arguments change config fields (e.g. layer_norm_position="pre") or Recipe
    fields (e.g. negatives=None for no NSP, mask_rate=0.4); each variant is cached apart.
    Its tokenizer is `minibert.text.language.corpus_tokenizer()` (with spellings > 1,
    `zipfian_tokenizer(spellings)`; each model directory holds its own)."""
    return BertForPreTraining.from_pretrained(corpus_model_directory(preset_name, progress,
                                                                     **changes))


def training_record(preset_name: str = "tiny", **changes) -> dict:
    """How a zoo model was trained: recipe, loss history, held-out MLM/NSP accuracy and
    the unigram baseline (training it first if needed)."""
    directory = corpus_model_directory(preset_name, progress=False, **changes)
    return json.loads((directory / "training.json").read_text())


def pretrained_corpus_models(preset_name: str = "tiny", seeds=(0, 1, 2), progress: bool = True,
                             **changes) -> list[BertForPreTraining]:
    """One zoo model per seed (same preset, config and recipe changes as
    `pretrained_corpus_model`), in eval mode on the CPU. Seeds not cached yet train at once:
    on a CPU in one process per core (each exactly its solo run), on a GPU as one batched
    model. Each member is cached under its solo name, so `pretrained_corpus_model(seed=s)`
    and `training_record(seed=s)` find it."""
    return [BertForPreTraining.from_pretrained(directory)
            for directory in corpus_model_directories(preset_name, seeds, progress, **changes)]


def training_records(preset_name: str = "tiny", seeds=(0, 1, 2), **changes) -> list[dict]:
    """The training record of every member of `pretrained_corpus_models` (training them first
    if needed)."""
    return [json.loads((directory / "training.json").read_text())
            for directory in corpus_model_directories(preset_name, seeds, False, **changes)]
