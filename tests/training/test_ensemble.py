"""Training members together: each member's run equals its solo `train` run, and members
that cannot be stacked get an error that names the difference."""

import copy
import math
import warnings

import pytest
import torch

from minibert import BertForPreTraining, BertForSequenceClassification, preset
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.training import ensemble
from minibert.training.ensemble import clip_per_member, train_together
from minibert.training.trainer import train

NO_DROPOUT = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
SETTINGS = dict(lr=3e-3, batch_size=8, warmup_steps=1, weight_decay=0.01, progress=False, device="cpu")


@pytest.fixture(scope="module")
def pairs():
    return pretraining_pairs(generate_corpus(60, seed=0), corpus_tokenizer(), max_length=32)


def tiny_model(seed, cls=BertForPreTraining, **changes):
    torch.manual_seed(seed)
    return cls(preset("tiny", vocab_size=corpus_tokenizer().vocab_size, **{**NO_DROPOUT, **changes}))


def assert_matches_solo(members, solos, histories, solo_histories):
    for k, (history, solo) in enumerate(zip(histories, solo_histories)):
        for name in ("loss", "mlm_loss", "nsp_loss", "lr"):
            assert getattr(history, name) == pytest.approx(getattr(solo, name), abs=1e-5), (k, name)
        assert history.tokens == solo.tokens
    for member, solo in zip(members, solos):
        for (name, a), b in zip(member.named_parameters(), solo.parameters()):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4, msg=name)


@pytest.mark.parametrize("steps", [1, 4])
def test_each_member_equals_its_solo_run_with_clipping(pairs, steps, monkeypatch):
    members = [tiny_model(seed) for seed in (0, 1, 2)]
    solos = [copy.deepcopy(m) for m in members]
    norms = []
    def recording_clip(grads, max_norm):
        norms.append(clip_per_member(grads, max_norm))
        return norms[-1]
    monkeypatch.setattr(ensemble, "clip_per_member", recording_clip)
    with warnings.catch_warnings():  # vmap warns when an op has no batching rule and loops
        warnings.filterwarnings("error", message=".*batching rule")
        histories = train_together(members, pairs, steps, grad_clip=0.5, seeds=[0, 1, 2], **SETTINGS)
    solo_histories = [train(model, pairs, steps, grad_clip=0.5, seed=seed, **SETTINGS)
                      for seed, model in enumerate(solos)]
    assert_matches_solo(members, solos, histories, solo_histories)
    assert len(norms) == steps and (norms[0] > 0.5).all()  # the clipping did scale every member
    assert not members[0].training and len(set(h.loss[0] for h in histories)) == 3


def test_members_with_their_own_mask_rate_and_data_equal_their_solo_runs(pairs):
    tokenizer = corpus_tokenizer()
    other = pretraining_pairs(generate_corpus(60, seed=5), tokenizer, max_length=32,
                              negatives="same_document", seed=5)
    datas, rates, seeds = [pairs, pairs, other], [0.15, 0.4, 0.25], [3, 3, 7]
    members = [tiny_model(seed) for seed in (0, 1, 2)]
    solos = [copy.deepcopy(m) for m in members]
    histories = train_together(members, datas, 3, mask_rate=rates, seeds=seeds, **SETTINGS)
    solo_histories = [train(model, d, 3, mask_rate=r, seed=s, **SETTINGS)
                      for model, d, r, s in zip(solos, datas, rates, seeds)]
    assert_matches_solo(members, solos, histories, solo_histories)


@pytest.mark.parametrize("optimizer", ["radam", "adamw_no_bias_correction"])
def test_members_equal_their_solo_runs_with_another_optimizer(pairs, optimizer):
    members = [tiny_model(seed) for seed in (0, 1)]
    solos = [copy.deepcopy(m) for m in members]
    histories = train_together(members, pairs, 3, seeds=[0, 1], optimizer=optimizer,
                               **SETTINGS)
    solo_histories = [train(model, pairs, 3, seed=seed, optimizer=optimizer, **SETTINGS)
                      for seed, model in enumerate(solos)]
    assert_matches_solo(members, solos, histories, solo_histories)


def test_clip_per_member_is_clip_grad_norm_on_each_slice():
    g = torch.Generator().manual_seed(0)
    grads = [torch.randn(3, 4, 5, generator=g), torch.randn(3, 7, generator=g) * 0.01]
    grads[0][1] *= 0.001  # member 1 stays under the threshold
    expected = []
    for k in range(3):
        slices = [grad[k].clone().requires_grad_() for grad in grads]
        for s, grad in zip(slices, grads):
            s.grad = grad[k].clone()
        expected.append((torch.nn.utils.clip_grad_norm_(slices, 1.0), [s.grad for s in slices]))
    norms = clip_per_member(grads, 1.0)
    for k, (norm, clipped) in enumerate(expected):
        torch.testing.assert_close(norms[k], norm)
        for grad, want in zip(grads, clipped):
            torch.testing.assert_close(grad[k], want)


def test_members_that_cannot_be_stacked_are_named(pairs):
    with pytest.raises(ValueError, match="members differ in num_hidden_layers: 2 vs 4"):
        train_together([tiny_model(0), tiny_model(1, num_hidden_layers=4)], pairs, 1, **SETTINGS)
    with pytest.raises(ValueError, match="members differ in class"):
        train_together([tiny_model(0), tiny_model(1, cls=BertForSequenceClassification)], pairs, 1,
                       **SETTINGS)
    frozen = tiny_model(1)
    frozen.cls.seq_relationship.weight.requires_grad_(False)
    with pytest.raises(ValueError, match="requires_grad of parameter 'cls.seq_relationship.weight'"):
        train_together([tiny_model(0), frozen], pairs, 1, **SETTINGS)
    twice = tiny_model(0)
    with pytest.raises(ValueError, match="appears twice"):
        train_together([twice, twice], pairs, 1, **SETTINGS)
    with pytest.raises(ValueError, match="at least one model"):
        train_together([], pairs, 1, **SETTINGS)
    with pytest.raises(ValueError, match="mask_rate has 2 entries for 3 members"):
        train_together([tiny_model(s) for s in range(3)], pairs, 1, mask_rate=[0.1, 0.2], **SETTINGS)
    longer = pretraining_pairs(generate_corpus(20, seed=1), corpus_tokenizer(), max_length=48)
    with pytest.raises(ValueError, match="member 1's input_ids has shape"):
        train_together([tiny_model(0), tiny_model(1)], [pairs, longer], 1, **SETTINGS)


def test_bad_input_is_caught_outside_vmap(pairs):
    def bad_batches():
        ids = torch.full((8, 32), 5000)  # beyond the vocabulary
        yield dict(input_ids=ids, token_type_ids=torch.zeros_like(ids), attention_mask=torch.ones_like(ids),
                   next_sentence_label=torch.zeros(8, dtype=torch.long), labels=ids)
    with pytest.raises(ValueError, match="input_ids must lie in"):
        train_together([tiny_model(0), tiny_model(1)], [pairs, bad_batches], 1, **SETTINGS)


def test_dropout_evaluation_and_record(pairs):
    def run():
        members = [tiny_model(seed, hidden_dropout_prob=0.1) for seed in (0, 1)]
        calls = []
        def evaluate(model):
            calls.append(model.training)
            return {"first": next(model.parameters()).detach().flatten()[0].item()}
        histories = train_together(members, pairs, 3, eval_fn=evaluate, eval_every=2, **SETTINGS)
        return members, histories, calls
    (members, histories, calls), (_, again, _) = run(), run()
    assert [h.loss for h in histories] == [h.loss for h in again]  # repeatable, dropout included
    assert calls == [False] * 4 and histories[1].eval_steps == [1, 2]
    assert histories[1].metric("first")[-1] == next(members[1].parameters()).detach().flatten()[0].item()
    record = histories[0].to_dict()
    assert record["tokens_per_second"] > 0 and not math.isnan(record["nsp_loss"][0])


def test_a_group_trained_in_another_process_equals_its_run_here(pairs):
    """train_group, the run `processes.run_all` hands a training process, trains exactly as
    train_together on one thread here, with a probe as eval_fn that pickles."""
    import functools
    import pickle

    from minibert.measure import probes
    from minibert.text import datasets
    from minibert.training import processes

    topic = (datasets.sentence_classification("topic", 20, seed=1),
             datasets.sentence_classification("topic", 30, seed=2))
    probe = functools.partial(probes.sentence_probe_scores, sets={"topic": topic})
    run = dict(steps=3, lr=3e-3, batch_size=8, seeds=[0, 1], eval_fn=probe, eval_every=2)
    here = [tiny_model(seed) for seed in (0, 1)]
    with ensemble.one_thread():
        expected = train_together(here, pairs, progress=False, **run)
    (members, histories), = processes.run_in_processes(
        ensemble.train_group, [dict(models=[tiny_model(s) for s in (0, 1)], data=pairs, **run)],
        [run["steps"]], processes=1)
    assert [h.eval_metrics for h in histories] == [h.eval_metrics for h in expected]
    assert expected[0].eval_metrics[-1] == {"topic": probes.sentence_probe(here[0], *topic)}
    for member, solo in zip(members, here):
        for a, b in zip(member.parameters(), solo.parameters()):
            assert torch.equal(a, b)
    assert pickle.loads(pickle.dumps(probe)).keywords["sets"]["topic"][0].examples
