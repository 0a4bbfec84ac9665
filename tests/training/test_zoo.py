"""The shared pre-trained models: trained once, cached, reloaded without training again;
one lock per model across processes; a group's members are their solo runs. (Training
time is a benchmark, not a test: see benchmarks/README.md.)"""

import dataclasses
import multiprocessing
import threading
import time

import pytest
import torch

from minibert import BertForPreTraining
from minibert.text import language
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.training import model_cache, recipes, zoo
from minibert.training.trainer import evaluate_mlm


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    directory = tmp_path_factory.mktemp("cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MINIBERT_CACHE", str(directory))
        yield directory


def test_beats_the_unigram_baseline_and_reloads_from_the_cache(cache):
    model = zoo.pretrained_corpus_models("tiny", seeds=(0,), progress=False, **zoo.QUICK)[0]  # ~8 s
    record = zoo.training_records("tiny", seeds=(0,), **zoo.QUICK)[0]
    accuracy = record["metrics"]["mlm_accuracy"]
    baseline = record["unigram_baseline"]["most_frequent"]
    assert accuracy > baseline + 0.08, (accuracy, baseline)
    assert record["metrics"]["nsp_accuracy"] > 0.58
    directories = [p for p in cache.iterdir() if p.name != ".locks"]
    assert len(directories) == 1 and not directories[0].name.startswith(".")  # no temp dir left

    trained_at = (directories[0] / "model.safetensors").stat().st_mtime_ns
    again = zoo.pretrained_corpus_models("tiny", seeds=(0,), **zoo.QUICK)[0]
    assert (directories[0] / "model.safetensors").stat().st_mtime_ns == trained_at
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(),
                                                 again.state_dict().values()))

    rows = zoo.held_out_rows(zoo.Recipe(**record["recipe"]))  # what the record was scored on
    assert evaluate_mlm(model, rows) == pytest.approx(record["metrics"])


def test_held_out_documents_are_never_trained_on():
    recipe = zoo.Recipe(num_documents=200, seed=4)
    trained = {d.text for d in generate_corpus(recipe.num_documents, seed=recipe.seed)}
    held_out = recipes.held_out_documents(recipe)
    assert len(held_out) == 20 and not trained & {d.text for d in held_out}
    contiguous = zoo.held_out_rows(dataclasses.replace(recipe, negatives=None))
    assert "next_sentence_label" not in contiguous.tensors
    assert "next_sentence_label" in zoo.held_out_rows(recipe).tensors


def test_variants_are_keyed_apart_and_bad_settings_refused():
    base = zoo.model_key("tiny", *zoo.split_changes("tiny", {}))
    no_nsp = zoo.model_key("tiny", *zoo.split_changes("tiny", {"negatives": None}))
    pre_ln = zoo.model_key("tiny", *zoo.split_changes("tiny", {"layer_norm_position": "pre"}))
    assert len({base, no_nsp, pre_ln}) == 3
    assert base == zoo.model_key("tiny", *zoo.split_changes("tiny", {}))
    radam = zoo.model_key("tiny", *zoo.split_changes("tiny", {"optimizer": "radam"}))
    assert radam != base  # the optimizer enters the key only when it is not the default
    assert base == zoo.model_key("tiny", *zoo.split_changes("tiny", {"optimizer": "adamw"}))
    assert "optimizer" not in recipes.recipe_settings(zoo.Recipe())
    assert "spellings" not in recipes.recipe_settings(zoo.Recipe())  # old keys stay
    zipf_config, zipf_recipe = zoo.split_changes("tiny", {"spellings": 4})
    assert zoo.model_key("tiny", zipf_config, zipf_recipe) != base
    assert zipf_config.vocab_size == zoo.recipe_tokenizer(zipf_recipe).vocab_size > 1000
    with pytest.raises(ValueError, match="spellings"):
        zoo.split_changes("tiny", {"spellings": 0})
    with pytest.raises(ValueError, match="optimizer"):
        zoo.split_changes("tiny", {"optimizer": "sgd"})
    with pytest.raises(ValueError, match="unknown zoo settings"):
        zoo.split_changes("tiny", {"learning_rate": 1e-3})
    with pytest.raises(ValueError, match="max_length"):
        zoo.split_changes("tiny", {"max_length": 1024})
    with pytest.raises(ValueError, match="nsp_loss=False"):
        zoo.split_changes("tiny", {"nsp_loss": False, "negatives": None})
    with pytest.raises(ValueError, match="split"):
        zoo.split_changes("tiny", {"mask_split": (0.5, 0.1, 0.1)})


SMALL = {"steps": 6, "num_documents": 60, "max_length": 32, "batch_size": 16, "warmup_steps": 2}


def same_weights(a, b) -> bool:
    return all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_a_group_is_its_solo_runs_whoever_trains_it(tmp_path, monkeypatch):
    """Members trained in one process per core, in this process, or alone: the same bits."""
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "processes"))
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "2")
    in_processes = zoo.pretrained_corpus_models("tiny", seeds=(0, 1, 2), progress=False, **SMALL)
    assert len({p.name for p in (tmp_path / "processes").iterdir()} - {".locks"}) == 3
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "here"))
    alone = zoo.pretrained_corpus_models("tiny", seeds=(0,), progress=False, **SMALL)[0]  # cached first
    here = zoo.pretrained_corpus_models("tiny", seeds=(0, 1, 2), progress=False, **SMALL)
    assert all(same_weights(a, b) for a, b in zip(in_processes, here))
    assert same_weights(alone, here[0])
    records = zoo.training_records("tiny", seeds=(0, 1, 2), **SMALL)
    assert [r["recipe"]["seed"] for r in records] == [0, 1, 2]
    assert all(r["trained_with"] == {"seeds": [r["recipe"]["seed"]], "how": "alone"}
               for r in records)
    assert all(len(r["history"]["loss"]) == SMALL["steps"] for r in records)

    def no_training(*args, **kwargs):
        raise AssertionError("trained again")

    monkeypatch.setattr(model_cache, "train_corpus_model", no_training)
    again = zoo.pretrained_corpus_models("tiny", seeds=(2, 1), progress=False, **SMALL)
    assert same_weights(again[0], here[2]) and same_weights(again[1], here[1])


def ask_for_the_model(cache: str, answers) -> None:
    """In another process: the SMALL model's training record, as the zoo gives it."""
    import os

    os.environ["MINIBERT_CACHE"] = cache
    answers.put("asking")
    answers.put(zoo.training_records("tiny", seeds=(0,), **SMALL)[0])


def test_a_second_process_waits_for_the_first_and_loads_what_it_wrote(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    config, recipe = zoo.split_changes("tiny", SMALL)
    final = tmp_path / zoo.model_key("tiny", config, recipe)
    context = multiprocessing.get_context("spawn")
    answers = context.Queue()
    with model_cache.model_lock(final):  # this process is "training" the model
        other = context.Process(target=ask_for_the_model, args=(str(tmp_path), answers))
        other.start()
        assert answers.get(timeout=120) == "asking"  # it has started and asks for the model
        model, record = recipes.train_corpus_model(config, recipe, progress=False)
        assert other.is_alive() and not final.exists()  # it waited, and trained nothing
        record["written_by"] = "the first process"
        model_cache.save_atomically(final, model, record, zoo.recipe_tokenizer(recipe))
    assert answers.get(timeout=120)["written_by"] == "the first process"
    other.join(timeout=60)
    assert other.exitcode == 0


def test_one_process_first_trains_the_models_no_other_process_is_training(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")  # the test run's path
    settings = {s: zoo.split_changes("tiny", {**SMALL, "seed": s}) for s in (0, 1)}
    finals = {s: tmp_path / zoo.model_key("tiny", *settings[s]) for s in (0, 1)}
    trained_here = []
    train_and_save = zoo.train_and_save
    monkeypatch.setattr(zoo, "train_and_save", lambda config, recipe, *rest: (
        trained_here.append(recipe.seed), train_and_save(config, recipe, *rest)))
    group = threading.Thread(target=zoo.corpus_model_directories,
                             kwargs={"seeds": (0, 1), "progress": False, **SMALL})
    with model_cache.model_lock(finals[0]):  # another worker is training seed 0
        group.start()
        deadline = time.monotonic() + 120
        while not finals[1].is_dir() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert finals[1].is_dir() and not finals[0].exists()  # seed 1 first, no waiting
        model, record = recipes.train_corpus_model(*settings[0], progress=False)
        model_cache.save_atomically(finals[0], model, record, zoo.recipe_tokenizer(settings[0][1]))
    group.join(timeout=120)
    assert trained_here == [1]  # seed 0 came from the other worker


def test_bad_groups_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        zoo.corpus_model_directories("tiny", seeds=(1, 1))
    with pytest.raises(ValueError, match="seeds="):
        zoo.corpus_model_directories("tiny", seeds=(0, 1), seed=3)
    with pytest.raises(ValueError, match="must share steps"):
        config, recipe = zoo.split_changes("tiny", {})
        recipes.train_corpus_models(config, [recipe, zoo.Recipe(steps=10, seed=1)])
    with pytest.raises(ValueError, match="must share negatives"):  # rows of another kind
        recipes.train_corpus_models(config, [recipe, zoo.Recipe(negatives=None, seed=1)])


def test_no_nsp_loss_keeps_the_pair_rows_and_the_split_reaches_the_masker(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    with_nsp = zoo.training_records("tiny", seeds=(0,), **SMALL)[0]
    pairs_only = zoo.training_records("tiny", seeds=(0,), nsp_loss=False, **SMALL)[0]
    # The same pair rows (the same held-out NSP labels to score), no NSP term in the loss.
    assert all(loss == loss for loss in with_nsp["history"]["nsp_loss"])
    assert all(loss != loss for loss in pairs_only["history"]["nsp_loss"])  # NaN: not computed
    assert abs(pairs_only["metrics"]["nsp_accuracy"] - 0.5) < 0.2  # an untrained NSP head
    config, recipe = zoo.split_changes("tiny", {"mask_split": [1.0, 0.0, 0.0]})
    assert recipes.masker_of(recipe, recipes.corpus_tokenizer()).split == (1.0, 0.0, 0.0)


def test_a_zipfian_model_reads_and_keeps_its_own_vocabulary(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    directory = zoo.corpus_model_directories("tiny", seeds=(0,), progress=False, spellings=4, **SMALL)[0]
    tokenizer = recipes.WordPiece.from_file(directory / "vocab.txt")
    assert tokenizer.vocab == language.zipfian_tokenizer(4).vocab
    model = BertForPreTraining.from_pretrained(directory)
    assert model.config.vocab_size == tokenizer.vocab_size
    record = zoo.training_records("tiny", seeds=(0,), spellings=4, **SMALL)[0]
    rows = zoo.held_out_rows(zoo.Recipe(**record["recipe"]))  # the spelled-out rows
    assert int(rows.tensors["input_ids"].max()) >= corpus_tokenizer().vocab_size
    assert evaluate_mlm(model, rows) == pytest.approx(record["metrics"])


def test_started_models_train_in_one_reused_pool_and_are_their_solo_runs(tmp_path, monkeypatch):
    """A chapter starts its groups first; they train in the background in one pool of
    processes, which later calls reuse, and each model is the bits of its solo run."""
    from minibert.training import processes

    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "started"))
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "2")
    longer = {**SMALL, "steps": 8}
    started = zoo.start([{"seeds": (0, 1), **SMALL}, {"seeds": (2,), **longer}])
    assert len(started) == 3  # returned before they are done
    pool = processes.shared_pool(2)  # the pool they train in

    def no_training_here(*args, **kwargs):
        raise AssertionError("trained in the kernel")

    monkeypatch.setattr(model_cache, "train_corpus_model", no_training_here)  # workers unaffected
    directories = zoo.corpus_model_directories("tiny", seeds=(0, 1), progress=False,
                                               started=started, **SMALL)
    started_models = [BertForPreTraining.from_pretrained(d) for d in directories]
    single = zoo.corpus_model_directories("tiny", seeds=(2,), progress=False, started=started,
                                          **longer)
    assert single[0].is_dir() and processes.shared_pool(2) is pool  # waited for, one pool
    zoo.pretrained_corpus_models("tiny", seeds=(3, 4), progress=False, **SMALL)
    assert processes.shared_pool(2) is pool  # a later group reuses it
    monkeypatch.undo()
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path / "alone"))
    assert zoo.start([{"seeds": (0, 1), **SMALL}]) == {}  # one process: nothing starts
    alone = [zoo.pretrained_corpus_models("tiny", seeds=(s,), progress=False, **SMALL)[0] for s in (0, 1)]
    assert all(same_weights(a, b) for a, b in zip(started_models, alone))
    assert same_weights(BertForPreTraining.from_pretrained(single[0]),
                        zoo.pretrained_corpus_models("tiny", seeds=(2,), progress=False, **longer)[0])
