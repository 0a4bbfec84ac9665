"""Small BERTs pre-trained on the synthetic corpus, shared by the chapters.

A model is trained from code and a seed on first use (well under a minute on two CPU
cores) and cached on disk, in $MINIBERT_CACHE (default ~/.cache/minibert), under a name
that hashes its config, its training recipe and CODE_VERSION; later calls load it in a
fraction of a second. The directory is written under a temporary name and renamed into
place, so a notebook running at the same time never sees it half written.
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
from ..text.datasets import pretraining_pairs
from ..text.language import Document, corpus_tokenizer, generate_corpus
from ..text.tokenizer import WordPiece
from .trainer import evaluate_mlm, train, unigram_baseline

CODE_VERSION = 1  # bump when the corpus, the model or the loop changes what training gives
HELD_OUT_SEED = 10_000  # the evaluation documents come from seed + HELD_OUT_SEED


@dataclass(frozen=True)
class Recipe:
    """How a zoo model is pre-trained. negatives=None trains without NSP."""

    num_documents: int = 3000
    max_length: int = 64
    negatives: str | None = "random"
    steps: int = 800
    batch_size: int = 64
    lr: float = 3e-3
    schedule: str = "linear"
    warmup_steps: int = 80
    mask_rate: float = 0.15
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
    recipe = Recipe(**{k: v for k, v in changes.items() if k in recipe_fields})
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


def train_corpus_model(config: BertConfig, recipe: Recipe, documents: list[Document] | None = None,
                       tokenizer: WordPiece | None = None, progress: bool = True
                       ) -> tuple[BertForPreTraining, dict]:
    """Pre-train a BertForPreTraining on the synthetic corpus (or on `documents`, with their
    tokenizer). Returns the model and a record: recipe, history, held-out metrics and the
    unigram baseline."""
    tokenizer = tokenizer or corpus_tokenizer()
    if documents is None:
        documents = generate_corpus(recipe.num_documents, seed=recipe.seed)
        held_out = generate_corpus(max(2, recipe.num_documents // 10),
                                   seed=recipe.seed + HELD_OUT_SEED)
    else:  # the last tenth of the reader's documents is held out
        cut = max(1, len(documents) - max(2, len(documents) // 10))
        documents, held_out = documents[:cut], documents[cut:]
    pairs = pretraining_pairs(documents, tokenizer, recipe.max_length, recipe.negatives,
                              seed=recipe.seed)
    eval_pairs = pretraining_pairs(held_out, tokenizer, recipe.max_length, recipe.negatives,
                                   seed=recipe.seed + 1)
    torch.manual_seed(recipe.seed)  # the initial weights
    model = BertForPreTraining(config)
    history = train(model, pairs, steps=recipe.steps, lr=recipe.lr,
                    batch_size=recipe.batch_size, schedule=recipe.schedule,
                    warmup_steps=recipe.warmup_steps, mask_rate=recipe.mask_rate,
                    seed=recipe.seed, progress=progress)
    record = {
        "recipe": dataclasses.asdict(recipe),
        "metrics": evaluate_mlm(model, eval_pairs, rate=0.15),
        "unigram_baseline": unigram_baseline(eval_pairs),
        "train_seconds": history.wall_time,
        "tokens_per_second": history.tokens_per_second,
        "history": history.to_dict(),
    }
    return model.cpu(), record


def corpus_model_directory(preset_name: str = "tiny", progress: bool = True, **changes) -> Path:
    """The cache directory of a zoo model, training it first if it is not there yet."""
    config, recipe = split_changes(preset_name, changes)
    cache = cache_directory()
    final = cache / model_key(preset_name, config, recipe)
    if final.is_dir():
        return final
    cache.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{final.name}-", dir=cache))
    try:
        started = time.perf_counter()
        model, record = train_corpus_model(config, recipe, progress=progress)
        record["total_seconds"] = time.perf_counter() - started
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
    return final


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
