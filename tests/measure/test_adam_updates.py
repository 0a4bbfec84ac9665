"""Adam's update sizes, logged by minibert.measure.adam_updates around the book's training loop."""

import torch

import minibert
from minibert.measure import adam_updates
from minibert.training.trainer import train


def test_first_adam_step_moves_every_weight_by_the_learning_rate():
    weight = torch.nn.Parameter(torch.tensor([0.5, -0.2, 0.1]))
    optimizer = torch.optim.Adam([weight], lr=0.01)
    with adam_updates.record_updates() as log:
        weight.grad = torch.tensor([3.0, -1e-4, 0.0])  # large, tiny, and no gradient
        before = weight.detach().clone()
        optimizer.step()
    change = weight.detach() - before
    assert torch.allclose(change[:2], torch.tensor([-0.01, 0.01]), rtol=1e-3)
    assert change[2] == 0
    assert abs(log.unit_rms[0] - 1.0) < 1e-3  # the zero-gradient weight is not counted
    assert log.lr == [0.01]


def test_logs_every_step_of_train_and_stops_after_the_block(tiny_config):
    torch.manual_seed(0)
    model = minibert.BertForMaskedLM(tiny_config)
    ids = torch.randint(5, tiny_config.vocab_size, (8, 10))
    labels = ids.masked_fill(torch.rand(ids.shape) > 0.3, -100)
    data = lambda: [{"input_ids": ids, "labels": labels}]  # noqa: E731
    with adam_updates.record_updates() as log:
        train(model, data, steps=4, lr=1e-3, schedule="linear", warmup_steps=2,
              progress=False, device="cpu")
    assert len(log.lr) == len(log.unit_rms) == len(log.relative_change) == 4
    assert log.lr[0] < log.lr[1]  # warm-up
    assert 0.9 < log.unit_rms[0] <= 1.01
    assert all(change > 0 for change in log.relative_change)
    train(model, data, steps=2, progress=False, device="cpu")  # hooks removed
    assert len(log.lr) == 4


def test_step_ratios_of_the_uncorrected_optimizer_follow_the_bias_correction():
    from minibert.training.optimizers import AdamWeightDecayNoBiasCorrection

    betas = (0.9, 0.999)
    gradients = torch.randn(30, 20, generator=torch.Generator().manual_seed(0))  # (steps, n)
    ratio = adam_updates.step_ratios(
        lambda p: torch.optim.Adam(p, lr=1e-3, betas=betas, eps=0.0),
        lambda p: AdamWeightDecayNoBiasCorrection(p, lr=1e-3, betas=betas, eps=0.0),
        gradients)
    t = torch.arange(1, 31, dtype=torch.float64)
    expected = (1 - betas[0] ** t) / (1 - betas[1] ** t).sqrt()
    assert ratio.shape == (30,)
    assert abs(ratio[0] - (1 - betas[0]) / (1 - betas[1]) ** 0.5) < 1e-4
    torch.testing.assert_close(torch.from_numpy(ratio).double(), expected, rtol=1e-4, atol=0)
    same = adam_updates.step_ratios(lambda p: torch.optim.Adam(p, lr=1e-3),
                                    lambda p: torch.optim.Adam(p, lr=1e-3), gradients)
    assert (same == 1).all()
