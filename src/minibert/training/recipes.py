"""What a zoo model is and how it trains: its recipe, the data the recipe makes, and the
training run, one model alone or several seeds as one batched model.

A zoo model is a BertForPreTraining given by a preset, config changes and a `Recipe`
(corpus, rows, masking, schedule, optimiser, seed). Seed s fixes the initial weights, the
documents, the masks and the batches, so two recipes that differ in one setting pair by
seed. The held-out rows come from seed + HELD_OUT_SEED, which no zoo model trains on.
`model_cache` keeps trained models on disk; `zoo` decides where runs train.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from ..model import BertConfig, BertForPreTraining, preset
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
from . import preparations
from .ensemble import train_together
from .optimizers import OPTIMIZERS
from .trainer import History, evaluate_mlm, train, unigram_baseline

CODE_VERSION = 2  # bump when the corpus, the model or the loop changes what training gives
HELD_OUT_SEED = 10_000  # the evaluation documents come from seed + HELD_OUT_SEED


@dataclass(frozen=True)
class Recipe:
    """How a zoo model is pre-trained. negatives=None trains without NSP on rows of contiguous
    text (RoBERTa's choice); nsp_loss=False keeps the A/B pair rows and drops only the NSP
    loss (BERT's own "No NSP" ablation). mask_split is (MASK, RANDOM, KEEP) of the chosen
    tokens. optimizer names one of `optimizers.OPTIMIZERS`. spellings > 1 writes every word
    in that many Zipfian spellings (`language.zipfian_corpus`), a vocabulary that many times
    larger. prepare is (name, *arguments) of a change made to the initial weights before
    training (`preparations`): a variant no config switch expresses. The defaults
    optimizer="adamw", spellings=1 and prepare=() are left out of a model's key and record,
    so that models trained before those fields existed keep their names."""

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
    prepare: tuple = ()


# A cheaper recipe for chapters that pre-train many variants (sweeps, ablations): shorter
# rows, fewer documents and steps. About a quarter of the default's cost, and still well
# above the unigram baseline. Use as pretrained_corpus_model(**QUICK, mask_rate=0.4).
QUICK = {"steps": 300, "max_length": 32, "num_documents": 1000}

# Config fields that the zoo sets for every model unless overridden: dropout off, since
# the corpus is regenerated rather than memorised and dropout costs a third of a step.
ZOO_CONFIG = {"hidden_dropout_prob": 0.0, "attention_probs_dropout_prob": 0.0}


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
    recipe_changes["prepare"] = preparations.checked(recipe_changes.get("prepare"))
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
    default that older models did not record (optimizer "adamw", spellings 1, no prepare)."""
    settings = dataclasses.asdict(recipe)
    for name, default in (("optimizer", "adamw"), ("spellings", 1), ("prepare", ())):
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


def corpus_data(recipe: Recipe, tokenizer: WordPiece, documents: list[Document] | None = None):
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
    return corpus_data(recipe, recipe_tokenizer(recipe))[0]


def training_summary(model, recipe: Recipe, history: History, eval_pairs, trained_with: list[int]) -> dict:
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


def masker_of(recipe: Recipe, tokenizer: WordPiece) -> Masker:
    return Masker.for_tokenizer(tokenizer, rate=recipe.mask_rate, split=recipe.mask_split)


def initial_model(config: BertConfig, recipe: Recipe) -> BertForPreTraining:
    torch.manual_seed(recipe.seed)  # the initial weights
    return BertForPreTraining(config)


def train_corpus_model(config: BertConfig, recipe: Recipe, documents: list[Document] | None = None,
                       tokenizer: WordPiece | None = None, progress: bool = True,
                       on_step=None) -> tuple[BertForPreTraining, dict]:
    """Pre-train a BertForPreTraining on the synthetic corpus (or on `documents`, with their
    tokenizer). Returns the model and a record: recipe, history, held-out metrics and the
    unigram baseline. on_step(steps_done) is called after each step. The recipe's
    preparation, if any, changes the initial weights first."""
    tokenizer = tokenizer or recipe_tokenizer(recipe)
    pairs, eval_pairs = corpus_data(recipe, tokenizer, documents)
    model = initial_model(config, recipe)
    preparations.apply(model, recipe.prepare)
    history = train(model, pairs, steps=recipe.steps, lr=recipe.lr,
                    batch_size=recipe.batch_size, schedule=recipe.schedule,
                    warmup_steps=recipe.warmup_steps, masker=masker_of(recipe, tokenizer),
                    seed=recipe.seed, progress=progress, on_step=on_step,
                    optimizer=recipe.optimizer)
    return model.cpu(), training_summary(model, recipe, history, eval_pairs, [recipe.seed])


def train_corpus_models(config: BertConfig, recipes: list[Recipe], progress: bool = True
                        ) -> list[tuple[BertForPreTraining, dict]]:
    """Pre-train one model per recipe, all together as one batched model. The recipes may
    differ in seed, corpus size and masking (rate and split); not in the kind of rows
    (negatives, nsp_loss: every member's batch must carry the same tensors), nor in anything
    that sets the schedule, the optimiser or the batch shape (steps, batch_size, lr,
    schedule, warm-up, optimizer, max_length)."""
    if any(recipe.prepare for recipe in recipes):
        raise ValueError("a prepared recipe trains alone: its preparation may hook the "
                         "model's parameters, which one batched model does not have")
    shared = ("steps", "batch_size", "lr", "schedule", "warmup_steps", "max_length",
              "negatives", "nsp_loss", "optimizer", "spellings")
    for name in shared:
        values = {getattr(r, name) for r in recipes}
        if len(values) > 1:
            raise ValueError(f"models trained together must share {name}, got {sorted(values, key=repr)}")
    tokenizer = recipe_tokenizer(recipes[0])
    data = [corpus_data(recipe, tokenizer) for recipe in recipes]
    models = [initial_model(config, recipe) for recipe in recipes]
    first = recipes[0]
    histories = train_together(models, [pairs for pairs, _ in data], steps=first.steps, lr=first.lr,
                               batch_size=first.batch_size, schedule=first.schedule,
                               warmup_steps=first.warmup_steps,
                               masker=[masker_of(r, tokenizer) for r in recipes],
                               seeds=[r.seed for r in recipes], progress=progress,
                               optimizer=first.optimizer)
    seeds = [r.seed for r in recipes]
    return [(model.cpu(), training_summary(model, recipe, history, eval_pairs, seeds))
            for model, recipe, history, (_, eval_pairs) in zip(models, recipes, histories, data)]
