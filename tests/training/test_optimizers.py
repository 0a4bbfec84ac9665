"""The optimisers by name: AdamW stays the default, RAdam and Google's BERT optimiser
(Adam without bias correction) step as their papers and code say."""

import pytest
import torch

from minibert import BertForMaskedLM, preset
from minibert.text.language import corpus_tokenizer
from minibert.training.optimizers import (
    AdamWeightDecayNoBiasCorrection,
    bias_correction_ratio,
    build_optimizer,
)
from minibert.training.trainer import train

BETAS = (0.9, 0.999)


def test_default_is_torch_adamw_and_bad_names_are_refused():
    weight = torch.nn.Parameter(torch.zeros(3))
    groups = [{"params": [weight], "weight_decay": 0.01}]
    adamw = build_optimizer("adamw", groups, lr=1e-3, betas=BETAS)
    assert type(adamw) is torch.optim.AdamW and adamw.defaults["fused"] is None
    radam = build_optimizer("radam", groups, lr=1e-3, betas=BETAS)
    assert type(radam) is torch.optim.RAdam and radam.param_groups[0]["decoupled_weight_decay"]
    with pytest.raises(ValueError, match="optimizer must be one of"):
        build_optimizer("sgd", groups, lr=1e-3, betas=BETAS)


def test_no_bias_correction_first_step_is_the_papers_ratio_of_adams():
    """(1 - beta1) / sqrt(1 - beta2) times Adam's first step, about 3.2."""
    torch.manual_seed(0)
    gradients = [torch.randn(50) for _ in range(30)]
    steps = {}
    for name in ("adam", "google"):
        weight = torch.nn.Parameter(torch.zeros(50))
        optimizer = (torch.optim.Adam([weight], lr=1e-3, betas=BETAS, eps=0.0)
                     if name == "adam" else
                     AdamWeightDecayNoBiasCorrection([weight], lr=1e-3, betas=BETAS, eps=0.0))
        changes = []
        for g in gradients:
            before = weight.detach().clone()
            weight.grad = g.clone()
            optimizer.step()
            changes.append(weight.detach() - before)
        steps[name] = torch.stack(changes)  # (30, 50)
    first = steps["google"][0] / steps["adam"][0]  # (50,)
    expected = (1 - BETAS[0]) / (1 - BETAS[1]) ** 0.5
    torch.testing.assert_close(first, torch.full_like(first, expected), rtol=1e-4, atol=0)
    assert 3.1 < expected < 3.2
    ratio = (steps["google"] / steps["adam"]).mean(1).numpy()  # (30,)
    assert ratio == pytest.approx(bias_correction_ratio(30, BETAS), rel=1e-3)
    assert int(ratio.argmax()) + 1 in range(8, 13) and 6.4 < ratio.max() < 6.6


def test_no_bias_correction_decays_like_adamw():
    weight = torch.nn.Parameter(torch.ones(4))
    optimizer = AdamWeightDecayNoBiasCorrection([weight], lr=0.1, weight_decay=0.5, eps=1e-6)
    weight.grad = torch.zeros(4)  # no gradient signal: only the decay moves the weight
    optimizer.step()
    torch.testing.assert_close(weight.detach(), torch.full((4,), 1 - 0.1 * 0.5))


def test_train_takes_every_optimizer_and_adamw_is_the_default():
    config = preset("tiny", vocab_size=corpus_tokenizer().vocab_size, hidden_size=32,
                    num_hidden_layers=1, num_attention_heads=2, intermediate_size=64)
    ids = torch.randint(5, config.vocab_size, (8, 10), generator=torch.Generator().manual_seed(0))
    labels = ids.masked_fill(torch.rand(ids.shape, generator=torch.Generator().manual_seed(1)) > 0.3,
                             -100)
    data = lambda: [{"input_ids": ids, "labels": labels}]  # noqa: E731
    losses = {}
    for name in (None, "adamw", "radam", "adamw_no_bias_correction"):
        torch.manual_seed(0)
        model = BertForMaskedLM(config)
        extra = {} if name is None else {"optimizer": name}
        losses[name] = train(model, data, steps=4, lr=1e-2, progress=False, device="cpu",
                             **extra).loss
    assert losses[None] == losses["adamw"]  # bit for bit
    assert losses["radam"][1:] != losses["adamw"][1:]
    assert losses["adamw_no_bias_correction"][1:] != losses["adamw"][1:]
    with pytest.raises(ValueError, match="optimizer"):
        train(model, data, steps=1, optimizer="adam", progress=False, device="cpu")


def test_radam_rectification_is_torchs():
    """Torch's RAdam step on one coordinate, against Adam's, is the rectification factor
    once the adaptive step is on (and the momentum alone before)."""
    from minibert.measure.adam_updates import step_ratios
    from minibert.training.optimizers import radam_rectification

    gradients = torch.randn(40, 10, generator=torch.Generator().manual_seed(2))
    ratio = step_ratios(lambda p: torch.optim.Adam(p, lr=1e-3, eps=0.0),
                        lambda p: torch.optim.RAdam(p, lr=1e-3, eps=0.0), gradients)
    factor = radam_rectification(40)
    on = factor > 0
    assert not on[:4].any() and on[6:].all()
    assert ratio[on] == pytest.approx(factor[on], rel=1e-4)
    assert 0.2 < radam_rectification(150)[-1] < 0.3 and radam_rectification(20_000)[-1] > 0.95
