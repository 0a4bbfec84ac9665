"""The training loop: schedules, reproducibility, fine-tuning, evaluation and the CLI."""

import math

import pytest
import torch
import transformers

from helpers import python_license_path
from minibert import BertForPreTraining, BertForSequenceClassification, preset
from minibert.__main__ import main
from minibert.measure import attention, blanks, positions
from minibert.text.datasets import pretraining_pairs, sentence_classification
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.training.schedules import lr_schedule
from minibert.training.trainer import (
    History,
    evaluate_mlm,
    masked_batches,
    parameter_groups,
    train,
    unigram_baseline,
)

MICRO = dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64,
             max_position_embeddings=64)


@pytest.fixture(scope="module")
def pairs():
    return pretraining_pairs(generate_corpus(60, seed=0), corpus_tokenizer(), max_length=32)


def micro_model(cls=BertForPreTraining, seed=0, **changes):
    torch.manual_seed(seed)
    return cls(preset("tiny", vocab_size=corpus_tokenizer().vocab_size, **{**MICRO, **changes}))


def test_schedules():
    linear = lr_schedule("linear", lr=1.0, steps=100, warmup_steps=10)
    assert linear[9] == pytest.approx(1.0) and linear[0] == pytest.approx(0.1)
    assert linear[-1] == pytest.approx(1 / 90) and all(a >= b for a, b in zip(linear[9:], linear[10:]))
    noam = lr_schedule("noam", lr=1.0, steps=100, warmup_steps=25)
    assert max(noam) == pytest.approx(1.0) and noam.index(max(noam)) == 24
    assert noam[99] == pytest.approx(math.sqrt(25 / 100))
    assert lr_schedule("constant", lr=0.5, steps=5) == [0.5] * 5
    with pytest.raises(ValueError, match="schedule"):
        lr_schedule("cosine", lr=1.0, steps=10)


def test_same_seed_same_history_bit_for_bit(pairs):
    def run(seed):
        model = micro_model()  # dropout on, so its seeding is tested too
        history = train(model, pairs, steps=12, lr=3e-3, batch_size=8, warmup_steps=3,
                        seed=seed, progress=False, device="cpu")
        return history, model
    (first, model_a), (second, model_b) = run(0), run(0)
    assert first.loss == second.loss and first.mlm_loss == second.mlm_loss
    assert first.nsp_loss == second.nsp_loss and first.lr == second.lr
    assert all(torch.equal(a, b) for a, b in zip(model_a.parameters(), model_b.parameters()))
    assert run(1)[0].loss != first.loss


def test_history_records_every_step_and_evaluation(pairs):
    calls = []
    def evaluate(model):
        calls.append(model.training)
        return {"score": float(len(calls))}
    history = train(micro_model(), pairs, steps=10, batch_size=8, eval_fn=evaluate,
                    eval_every=4, progress=False, device="cpu")
    assert isinstance(history, History)
    assert history.steps == list(range(10)) and len(history.loss) == len(history.lr) == 10
    assert history.eval_steps == [3, 7, 9] and history.metric("score") == [1.0, 2.0, 3.0]
    assert calls == [False] * 3  # evaluated in eval mode
    assert history.tokens > 0 and history.tokens_per_second > 0
    assert not math.isnan(history.mlm_loss[0]) and not math.isnan(history.nsp_loss[0])


def test_loss_goes_down(pairs):
    history = train(micro_model(hidden_dropout_prob=0.0), pairs, steps=60, lr=3e-3,
                    batch_size=16, warmup_steps=5, progress=False, device="cpu")
    assert sum(history.loss[-10:]) < sum(history.loss[:10]) - 10 * 0.5


def test_fine_tuning_from_a_function_of_batches():
    dataset = sentence_classification("topic", 64, seed=0)
    def two_batches():
        yield {k: v[:32] for k, v in dataset.tensors.items()}
        yield {k: v[32:] for k, v in dataset.tensors.items()}
    model = micro_model(BertForSequenceClassification, num_labels=5)
    history = train(model, two_batches, steps=5, progress=False, device="cpu")
    assert len(history.loss) == 5 and all(math.isnan(x) for x in history.nsp_loss)
    assert not model.training


def test_no_weight_decay_on_biases_and_layer_norm():
    model = micro_model()
    decay, no_decay = parameter_groups(model, 0.01)
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(names[id(p)].endswith("bias") or "LayerNorm" in names[id(p)]
               for p in no_decay["params"])
    assert all(p.dim() == 2 for p in decay["params"])


def test_evaluate_mlm_and_baseline(pairs):
    model = micro_model()
    metrics = evaluate_mlm(model, pairs, rate=0.15)
    assert set(metrics) == {"mlm_accuracy", "mlm_loss", "nsp_accuracy"}
    assert 0 <= metrics["mlm_accuracy"] <= 1 and 0 <= metrics["nsp_accuracy"] <= 1
    assert metrics == evaluate_mlm(model, pairs, rate=0.15)  # the same masks each time
    baseline = unigram_baseline(pairs)
    assert 0 < baseline["frequency_weighted"] < baseline["most_frequent"] < 1


def test_every_masked_lm_accuracy_is_one_count(pairs):
    """evaluate_mlm, the per-position view, the per-batch view (attention.mlm_accuracy)
    and the per-blank view all count the same hits of `masked_lm_scores`."""
    model = micro_model(hidden_dropout_prob=0.0)
    train(model, pairs, steps=40, lr=3e-3, batch_size=16, warmup_steps=5, progress=False,
          device="cpu")
    accuracy = evaluate_mlm(model, pairs, rate=0.15, seed=3)["mlm_accuracy"]
    assert accuracy > 0.05  # a model that has learned something, so the counts can differ
    hits, trials = positions.mlm_accuracy_by_position(model, pairs, rate=0.15, seed=3)
    assert hits.sum().item() / trials.sum().item() == pytest.approx(accuracy, abs=1e-12)
    batch = next(masked_batches(pairs, rate=0.15, seed=3, batch_size=len(pairs)))
    assert attention.mlm_accuracy(model, batch) == pytest.approx(accuracy, abs=1e-12)
    rows = blanks.middle_blanks(pairs, seed=1)
    guesses = blanks.blank_logits(model, rows).argmax(-1)  # (N,)
    expected = (guesses == rows.answer).float().mean().item()
    assert blanks.blank_accuracy(model, rows) == pytest.approx(expected, abs=1e-6)


@pytest.mark.parametrize("settings,message", [
    (dict(steps=0), "steps"), (dict(lr=-1.0), "lr"), (dict(schedule="cosine"), "schedule"),
    (dict(betas=(0.9, 1.5)), "betas"), (dict(batch_size=0), "batch_size"),
    (dict(grad_clip=0.0), "grad_clip"), (dict(mask_rate=0.0), "rate"),
])
def test_bad_settings_raise_a_named_error(pairs, settings, message):
    with pytest.raises(ValueError, match=message):
        train(micro_model(), pairs, **{"steps": 2, **settings}, progress=False, device="cpu")


def test_progress_bar_is_silent_when_not_on_a_terminal(pairs, capsys):
    train(micro_model(), pairs, steps=3, batch_size=8, progress=True, device="cpu")
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


def test_cli_pretrains_and_writes_a_hugging_face_directory(tmp_path):
    main(["pretrain", "--preset", "tiny", "--steps", "3", "--documents", "30",
          "--batch-size", "8", "--out", str(tmp_path / "synthetic")])
    for name in ("config.json", "model.safetensors", "vocab.txt", "training.json"):
        assert (tmp_path / "synthetic" / name).exists()
    ours = BertForPreTraining.from_pretrained(tmp_path / "synthetic")
    theirs = transformers.BertForPreTraining.from_pretrained(tmp_path / "synthetic")
    ids = torch.tensor([[2, 10, 11, 3]])
    with torch.no_grad():
        assert torch.allclose(ours(ids).prediction_logits, theirs(ids).prediction_logits,
                              atol=1e-5)
    main(["pretrain", "--steps", "2", "--batch-size", "4", "--text", str(python_license_path()),
          "--vocab-size", "500", "--negatives", "same_document", "--out", str(tmp_path / "text")])
    assert len((tmp_path / "text" / "vocab.txt").read_text().split()) <= 500
