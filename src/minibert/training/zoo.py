"""Small BERTs pre-trained on the synthetic corpus, shared by the chapters.

A model is trained from code and a seed on first use (well under a minute on two CPU
cores) and cached on disk, in $MINIBERT_CACHE (default ~/.cache/minibert), under a name
that hashes its config, its training recipe and CODE_VERSION; later calls load it in a
fraction of a second. The directory is written under a temporary name and renamed into
place, so a notebook running at the same time never sees it half written.

`pretrained_corpus_models(seeds=(0, 1, 2))` trains several seeds of one recipe together, as
one batched model (`ensemble.train_together`). Members trained together match solo runs
only to float rounding (about 1e-6 in the weights), so a member's directory name also
records its group: the same call then gives the same models bit for bit whatever the cache
held before, and `pretrained_corpus_model(seed=s)` still finds a member trained in a group
without training again.
"""

from __future__ import annotations

import dataclasses
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
from ..text.datasets import Dataset, pretraining_pairs
from ..text.language import Document, corpus_tokenizer, generate_corpus
from ..text.masking import Masker, check_masking
from ..text.tokenizer import WordPiece
from .ensemble import train_together
from .trainer import History, evaluate_mlm, train, unigram_baseline

CODE_VERSION = 1  # bump when the corpus, the model or the loop changes what training gives
HELD_OUT_SEED = 10_000  # the evaluation documents come from seed + HELD_OUT_SEED


@dataclass(frozen=True)
class Recipe:
    """How a zoo model is pre-trained. negatives=None trains without NSP on rows of contiguous
    text (RoBERTa's choice); nsp_loss=False keeps the A/B pair rows and drops only the NSP
    loss (BERT's own "No NSP" ablation). mask_split is (MASK, RANDOM, KEEP) of the chosen
    tokens."""

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
    if not recipe.nsp_loss and recipe.negatives is None:
        raise ValueError("nsp_loss=False drops the NSP loss from pair rows; with "
                         "negatives=None the rows have no pairs and no NSP loss already")
    config_changes = {**ZOO_CONFIG, **{k: v for k, v in changes.items() if k in config_fields}}
    config = preset(preset_name, vocab_size=corpus_tokenizer().vocab_size, **config_changes)
    if recipe.max_length > config.max_position_embeddings:
        raise ValueError(f"max_length {recipe.max_length} exceeds the model's "
                         f"max_position_embeddings ({config.max_position_embeddings})")
    return config, recipe


def model_key(preset_name: str, config: BertConfig, recipe: Recipe) -> str:
    """A directory name that changes whenever the config, recipe or code version does."""
    settings = {"config": config.to_dict(), "recipe": dataclasses.asdict(recipe),
                "code_version": CODE_VERSION}
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
    return f"corpus-{preset_name}-{digest[:16]}"


def held_out_documents(recipe: Recipe) -> list[Document]:
    """The documents a recipe's models are evaluated on: a tenth as many as it trains on,
    drawn from seed + HELD_OUT_SEED, so no model of the zoo ever trains on them."""
    return generate_corpus(max(2, recipe.num_documents // 10), seed=recipe.seed + HELD_OUT_SEED)


def held_out_rows(recipe: Recipe, tokenizer: WordPiece | None = None) -> Dataset:
    """The held-out rows the zoo scores a recipe's models on, cut as the recipe cuts its
    training rows (its max_length and negatives). For the same documents cut another way,
    pass dataclasses.replace(recipe, negatives=...)."""
    return pretraining_pairs(held_out_documents(recipe), tokenizer or corpus_tokenizer(),
                             recipe.max_length, recipe.negatives, seed=recipe.seed + 1)


def _corpus_data(recipe: Recipe, tokenizer: WordPiece, documents: list[Document] | None = None):
    """The training and held-out pre-training pairs of a recipe (or of the reader's documents,
    whose last tenth is held out)."""
    if documents is None:
        documents = generate_corpus(recipe.num_documents, seed=recipe.seed)
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


def _record(model, recipe: Recipe, history: History, eval_pairs, trained_with: list[int]) -> dict:
    """What the cache keeps beside a model: recipe, held-out metrics, history, and the seeds it
    was trained together with (just its own seed when it trained alone)."""
    return {
        "recipe": dataclasses.asdict(recipe),
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
                       tokenizer: WordPiece | None = None, progress: bool = True
                       ) -> tuple[BertForPreTraining, dict]:
    """Pre-train a BertForPreTraining on the synthetic corpus (or on `documents`, with their
    tokenizer). Returns the model and a record: recipe, history, held-out metrics and the
    unigram baseline."""
    tokenizer = tokenizer or corpus_tokenizer()
    pairs, eval_pairs = _corpus_data(recipe, tokenizer, documents)
    model = _initial_model(config, recipe)
    history = train(model, pairs, steps=recipe.steps, lr=recipe.lr,
                    batch_size=recipe.batch_size, schedule=recipe.schedule,
                    warmup_steps=recipe.warmup_steps, masker=_masker(recipe, tokenizer),
                    seed=recipe.seed, progress=progress)
    return model.cpu(), _record(model, recipe, history, eval_pairs, [recipe.seed])


def train_corpus_models(config: BertConfig, recipes: list[Recipe], progress: bool = True
                        ) -> list[tuple[BertForPreTraining, dict]]:
    """Pre-train one model per recipe, all together as one batched model. The recipes may
    differ in seed, corpus size and masking (rate and split); not in the kind of rows
    (negatives, nsp_loss: every member's batch must carry the same tensors), nor in anything
    that sets the schedule or the batch shape (steps, batch_size, lr, schedule, warm-up,
    max_length)."""
    shared = ("steps", "batch_size", "lr", "schedule", "warmup_steps", "max_length",
              "negatives", "nsp_loss")
    for name in shared:
        values = {getattr(r, name) for r in recipes}
        if len(values) > 1:
            raise ValueError(f"models trained together must share {name}, got {sorted(values, key=repr)}")
    tokenizer = corpus_tokenizer()
    data = [_corpus_data(recipe, tokenizer) for recipe in recipes]
    models = [_initial_model(config, recipe) for recipe in recipes]
    first = recipes[0]
    histories = train_together(models, [pairs for pairs, _ in data], steps=first.steps, lr=first.lr,
                               batch_size=first.batch_size, schedule=first.schedule,
                               warmup_steps=first.warmup_steps,
                               masker=[_masker(r, tokenizer) for r in recipes],
                               seeds=[r.seed for r in recipes], progress=progress)
    seeds = [r.seed for r in recipes]
    return [(model.cpu(), _record(model, recipe, history, eval_pairs, seeds))
            for model, recipe, history, (_, eval_pairs) in zip(models, recipes, histories, data)]


def _save_atomically(final: Path, model, record: dict) -> None:
    """Write a model directory under a temporary name, then rename it into place."""
    cache = final.parent
    cache.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=cache))
    try:
        model.save_pretrained(temporary)
        corpus_tokenizer().save(temporary)
        (temporary / "training.json").write_text(json.dumps(record, indent=1) + "\n")
        try:
            os.rename(temporary, final)  # atomic: the directory appears complete or not at all
        except OSError:
            if not final.is_dir():  # not another process finishing first: a real error
                raise
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)


def _group_suffix(seeds: list[int]) -> str:
    return "-with-" + hashlib.sha256(json.dumps(seeds).encode()).hexdigest()[:8]


def corpus_model_directory(preset_name: str = "tiny", progress: bool = True, **changes) -> Path:
    """The cache directory of a zoo model, training it first if it is not there yet. A model
    trained alone is preferred; otherwise a member trained in a group is used as it is."""
    config, recipe = split_changes(preset_name, changes)
    final = cache_directory() / model_key(preset_name, config, recipe)
    if final.is_dir():
        return final
    members = sorted(final.parent.glob(final.name + "-with-*")) if final.parent.is_dir() else []
    if members:
        return members[0]
    started = time.perf_counter()
    model, record = train_corpus_model(config, recipe, progress=progress)
    record["total_seconds"] = time.perf_counter() - started
    _save_atomically(final, model, record)
    return final


def corpus_model_directories(preset_name: str = "tiny", seeds=(0, 1, 2), progress: bool = True,
                             **changes) -> list[Path]:
    """The cache directories of one zoo model per seed, trained together (those not cached
    yet) as one batched model; see `pretrained_corpus_models`."""
    seeds = list(seeds)
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be distinct and at least one, got {seeds}")
    if "seed" in changes:
        raise ValueError("give the seeds as seeds=(...), not seed=")
    if len(seeds) == 1:
        return [corpus_model_directory(preset_name, progress, seed=seeds[0], **changes)]
    settings = [split_changes(preset_name, {**changes, "seed": seed}) for seed in seeds]
    config = settings[0][0]
    suffix = _group_suffix(seeds)
    finals = [cache_directory() / (model_key(preset_name, config, recipe) + suffix)
              for _, recipe in settings]
    missing = [i for i, final in enumerate(finals) if not final.is_dir()]
    if missing:
        started = time.perf_counter()
        # Train the whole group, so that every member's bits are those of this group.
        trained = train_corpus_models(config, [recipe for _, recipe in settings], progress)
        for i in missing:
            model, record = trained[i]
            record["total_seconds"] = time.perf_counter() - started
            _save_atomically(finals[i], model, record)
    return finals


def pretrained_corpus_model(preset_name: str = "tiny", progress: bool = True,
                            **changes) -> BertForPreTraining:
    """A small BERT pre-trained (MLM + NSP) on the synthetic corpus, in eval mode on the CPU.
    Keyword arguments change config fields (e.g. layer_norm_position="pre") or Recipe
    fields (e.g. negatives=None for no NSP, mask_rate=0.4); each variant is cached apart.
    Its tokenizer is `minibert.text.language.corpus_tokenizer()`."""
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
    `pretrained_corpus_model`), in eval mode on the CPU. Seeds not cached yet train together
    as one batched model: one progress bar, one optimiser step for all, each member with its
    own data, masking and clipping. Each member is cached under its own name (recording the
    group), so `pretrained_corpus_model(seed=s)` and `training_record(seed=s)` find it."""
    return [BertForPreTraining.from_pretrained(directory)
            for directory in corpus_model_directories(preset_name, seeds, progress, **changes)]


def training_records(preset_name: str = "tiny", seeds=(0, 1, 2), **changes) -> list[dict]:
    """The training record of every member of `pretrained_corpus_models` (training them first
    if needed)."""
    return [json.loads((directory / "training.json").read_text())
            for directory in corpus_model_directories(preset_name, seeds, False, **changes)]
