"""Pre-training across processes: two gloo processes under torchrun train exactly what one
process does with the same global batch; a run resumes from its checkpoint; and the command
line refuses impossible settings with one line and exit status 2."""

import json
import os
import subprocess
import sys

import pytest
import torch

from minibert import BertForPreTraining
from minibert.__main__ import main

SMALL = ["--steps", "4", "--batch-size", "8", "--documents", "40", "--max-length", "32",
         "--warmup-steps", "1"]


def pretrain(out, *extra, processes=1):
    """Run the command line in fresh processes, as a reader would; return training.json."""
    launcher = ([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", str(processes),
                 "--master_port", "29533"] if processes > 1 else [sys.executable])
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    result = subprocess.run([*launcher, "-m", "minibert", "pretrain", "--out", str(out), *SMALL, *extra],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads((out / "training.json").read_text())


def test_two_processes_train_what_one_process_trains(tmp_path):
    one = pretrain(tmp_path / "one")
    two = pretrain(tmp_path / "two", processes=2)
    assert two["processes"] == 2 and one["processes"] == 1
    for name in ("loss", "mlm_loss", "nsp_loss"):
        assert one["history"][name] == pytest.approx(two["history"][name], abs=1e-5), name
    single = BertForPreTraining.from_pretrained(tmp_path / "one")
    double = BertForPreTraining.from_pretrained(tmp_path / "two")
    assert max((a - b).abs().max() for a, b in zip(single.state_dict().values(),
                                                   double.state_dict().values())) < 1e-5
    transformers = pytest.importorskip("transformers")
    loaded = transformers.BertForPreTraining.from_pretrained(tmp_path / "two")
    ids = torch.tensor([[2, 10, 11, 12, 3]])
    assert torch.allclose(loaded(ids).prediction_logits, double(ids).prediction_logits, atol=1e-5)


def test_a_run_resumes_from_its_checkpoint(tmp_path):
    constant = ["--schedule", "constant"]
    straight = pretrain(tmp_path / "straight", *constant)
    pretrain(tmp_path / "half", *constant, "--steps", "2", "--save-every", "2")
    resumed = pretrain(tmp_path / "half", *constant, "--save-every", "2")  # steps 2 and 3 only
    assert resumed["history"]["steps"] == [2, 3]
    assert resumed["history"]["loss"] == pytest.approx(straight["history"]["loss"][2:], abs=1e-5)


@pytest.mark.parametrize("arguments, message", [
    (["--max-length", "100000"], "has 128 positions"),
    (["--text", "/no/such/file.txt"], "no such file"),
    (["--mask-rate", "1.5"], "must lie in (0, 1]"),
    (["--steps", "0"], "--steps must be positive"),
])
def test_impossible_settings_stop_at_once_with_one_line(tmp_path, capsys, arguments, message):
    with pytest.raises(SystemExit) as stop:
        main(["pretrain", "--out", str(tmp_path), *arguments])
    assert stop.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert message in error[-1] and "Traceback" not in "\n".join(error)
    assert not any(tmp_path.iterdir())  # nothing was made
