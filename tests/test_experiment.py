"""A chapter's experiment: arms named once and trained as the zoo trains them, tables of
arm by seed, claims declared and judged by name, and a check that names what it fails on."""

import json

import numpy as np
import pandas as pd
import pytest
import torch

from minibert import BertForPreTraining, experiment
from minibert.experiment import Experiment
from minibert.training import zoo

SMALL = {"steps": 6, "num_documents": 60, "max_length": 32, "batch_size": 16, "warmup_steps": 2}


@pytest.fixture
def exp(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_CACHE", str(tmp_path))
    monkeypatch.setenv("MINIBERT_TRAIN_PROCESSES", "1")
    return Experiment(seeds=[0, 1, 2], recipe=SMALL, arms={
        "post-LN": {}, "pre-LN": {"layer_norm_position": "pre", "seeds": [0, 1, 2, 3]}})


def test_arms_are_the_zoo_models_of_their_settings(exp):
    records = exp.records("pre-LN")
    assert [r["recipe"]["seed"] for r in records] == [0, 1, 2, 3]
    alone = zoo.training_records("tiny", seeds=(1,), layer_norm_position="pre", **SMALL)[0]
    assert records[1]["metrics"] == alone["metrics"]
    assert exp.model("post-LN", 2).config.layer_norm_position == "post"
    before = exp.untrained("pre-LN", 1)
    torch.manual_seed(1)  # the zoo's rule: seed s draws the initial weights
    by_hand = BertForPreTraining(before.config)
    assert all(torch.equal(x, y) for x, y in zip(before.state_dict().values(),
                                                  by_hand.state_dict().values()))
    with pytest.raises(KeyError, match="no arm named 'rms'.*post-LN, pre-LN"):
        exp.models("rms")


def test_tables_are_arm_by_seed_with_gaps_where_an_arm_lacks_a_seed(exp):
    accuracy = exp.record_table("metrics", "mlm_accuracy")
    assert list(accuracy.index) == ["post-LN", "pre-LN"] and list(accuracy.columns) == [0, 1, 2, 3]
    assert np.isnan(accuracy.loc["post-LN", 3]) and not accuracy.loc["pre-LN"].isna().any()
    sizes = exp.measure(lambda model, seed: {"params": model.num_parameters(), "seed": seed})
    assert (sizes["seed"].loc["pre-LN"] == [0, 1, 2, 3]).all()


def test_claims_are_judged_by_name_on_the_rows_of_their_arms(exp, capsys):
    exp.superiority("pre_first", "pre-LN", "post-LN", metric="m", finding=False)
    exp.superiority("made_up", "A", "B", metric="m", finding=True)
    table = pd.DataFrame({0: [0.5, 0.6], 1: [0.4, 0.45], 2: [0.3, 0.41], 3: [np.nan, 0.2]},
                         index=["post-LN", "pre-LN"])
    result = exp.judge("pre_first", table)
    assert result.seeds == (0, 1, 2) and result.gaps == pytest.approx((0.1, 0.05, 0.11))
    assert exp["pre_first"] is result
    with pytest.raises(AssertionError, match="arms trained and never used: post-LN, pre-LN"):
        exp.check()
    exp.models("post-LN"), exp.models("pre-LN")
    with pytest.raises(ValueError, match="declared but never measured: made_up"):
        exp.check()
    exp.judge("made_up", a=[0.1, 0.3, 0.2], b=[0.2, 0.4, 0.1])
    exp.superiority("beats_a_constant", "pre-LN", "chance", metric="m", finding=False)
    against_chance = exp.judge("beats_a_constant", a=table.loc["pre-LN"], b=0.3)
    assert against_chance.seeds == (0, 1, 2, 3) and against_chance.gaps[3] == pytest.approx(-0.1)
    with pytest.raises(AssertionError, match="findings not supported: made_up"):
        exp.check()
    assert "finding made_up: A better than B, on m: inconclusive" in capsys.readouterr().out


def test_a_headline_carries_its_pilot_and_a_pilot_run_writes_its_gaps(exp, tmp_path, monkeypatch):
    with pytest.raises(ValueError, match="write what each outcome would mean"):
        exp.superiority("gain", "pre-LN", "post-LN", metric="m", finding=True, headline=True)
    says = {"supported": "Pre-LN wins.", "contradicted": "Post-LN wins.",
            "inconclusive": "Undecided."}
    with pytest.raises(ValueError, match="headline claim: it needs a pilot"):
        exp.superiority("gain", "pre-LN", "post-LN", metric="m", finding=True, headline=True,
                        says=says)
    pilot = {"gain": {"seeds": list(range(1000, 1008)), "seeds_needed": 5,
                      "gaps": [0.1, 0.2, 0.15, 0.1, 0.12, 0.2, 0.18, 0.11]}}
    (tmp_path / "ch.json").write_text(json.dumps(pilot))
    monkeypatch.setattr(experiment, "PILOTS", tmp_path)
    exp.chapter = "ch"
    claim = exp.superiority("gain", "pre-LN", "post-LN", metric="m", finding=True, headline=True,
                            says=says)
    assert claim.pilot == pilot["gain"]
    exp.judge("gain", a=[0.5, 0.6, 0.7], b=[0.4, 0.41, 0.6])
    assert exp["gain"].record()["pilot"]["seeds_needed"] == 5
    exp.models("post-LN"), exp.models("pre-LN")
    with pytest.raises(AssertionError, match=r"gain \(its pilot asks for 5, this run has 3\)"):
        exp.check()
    monkeypatch.setenv(experiment.PILOT_OUT, str(tmp_path / "out.json"))
    exp.check()
    assert json.loads((tmp_path / "out.json").read_text())[0]["seeds"] == [0, 1, 2]
