"""The zoo's disk cache: one directory per trained model, named by a hash of everything
that decides its weights, written atomically, with one lock per name across processes.

Models live in $MINIBERT_CACHE (default ~/.cache/minibert), under a name that hashes the
config, the recipe and `recipes.CODE_VERSION`. A second process that asks for a model
another is training waits on its lock and loads what it wrote; the directory is written
under a temporary name and renamed into place, so nobody sees it half written.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from ..model import BertConfig
from ..runtime import get_device, one_thread
from ..text.tokenizer import WordPiece
from .recipes import CODE_VERSION, Recipe, recipe_settings, recipe_tokenizer, train_corpus_model

try:
    import fcntl  # the lock between processes; absent on Windows, where none is taken
except ImportError:  # pragma: no cover
    fcntl = None


def cache_directory() -> Path:
    """Where zoo models live: $MINIBERT_CACHE, or ~/.cache/minibert."""
    return Path(os.environ.get("MINIBERT_CACHE") or Path.home() / ".cache" / "minibert")


def model_key(preset_name: str, config: BertConfig, recipe: Recipe) -> str:
    """A directory name that changes whenever the config, recipe or code version does."""
    settings = {"config": config.to_dict(), "recipe": recipe_settings(recipe),
                "code_version": CODE_VERSION}
    digest = hashlib.sha256(json.dumps(settings, sort_keys=True).encode()).hexdigest()
    return f"corpus-{preset_name}-{digest[:16]}"


def save_atomically(final: Path, model, record: dict, tokenizer: WordPiece) -> None:
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
def model_lock(final: Path, wait: bool = True):
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


def train_and_save(config: BertConfig, recipe: Recipe, final: Path, progress: bool,
                    on_step=None) -> None:
    """Train one zoo model and cache it. On a CPU it trains on one thread, so that its bits
    do not depend on how many threads the process that happened to train it had."""
    started = time.perf_counter()
    single = one_thread() if get_device().type == "cpu" else contextlib.nullcontext()
    with single:
        model, record = train_corpus_model(config, recipe, progress=progress, on_step=on_step)
    record["total_seconds"] = time.perf_counter() - started
    save_atomically(final, model, record, recipe_tokenizer(recipe))


def train_unless_cached(config: BertConfig, recipe: Recipe, final: Path, progress: bool,
                         on_step=None) -> None:
    """Take the model's lock (waiting for a process that holds it) and train it, unless
    that process trained it meanwhile."""
    with model_lock(final):
        if not final.is_dir():
            train_and_save(config, recipe, final, progress, on_step)
