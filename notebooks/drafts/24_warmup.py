# %% [markdown]
# # Why does BERT warm up its learning rate?
#
# **BERT 训练时的学习率 warm-up 是怎么做的？为什么要这样做？**
#
# BERT raises its learning rate linearly from zero over the first 10,000 steps, then lets it
# fall linearly to zero. This chapter plots that schedule and the Transformer's original
# one, looks inside Adam's first steps to see what warm-up protects against, and pre-trains
# the same tiny model at a high learning rate with and without warm-up, with LayerNorm
# after (BERT) and before (pre-LN) each sublayer, over several seeds. It also shows the
# regime where warm-up makes no difference at all.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import adam_probe, viz, zoo
from minibert.data import corpus_tokenizer, generate_corpus, pretraining_pairs
from minibert.train import lr_schedule, train

device = minibert.get_device()
minibert.set_seed(0)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# BERT trains with Adam at a peak learning rate of 1e-4, reached by a linear warm-up over
# the first 10,000 of its 1,000,000 steps and followed by a linear decay to zero; the
# original Transformer warmed up over 4,000 steps, then decayed as $1/\sqrt{\text{step}}$.
# Warm-up exists because the first steps of Adam are both **large and badly informed**: its
# estimate of each gradient's scale starts from a single sample, so its very first update
# moves *every* weight by the full learning rate in the direction of its gradient's sign,
# however tiny or noisy that gradient is. A Transformer with LayerNorm after each sublayer
# (post-LN, as BERT) is particularly fragile early on. Warm-up keeps those first steps
# small until Adam's statistics have settled. In this book's tiny model: at a high
# learning rate, post-LN without warm-up collapses (every token comes out of the encoder
# nearly the same vector and the model predicts word frequencies only), while a 50-step
# warm-up lets it learn; pre-LN suffers less, but still gains from warm-up; at the
# recipe's moderate learning rate, warm-up makes no difference. Warm-up is counted in
# optimiser steps: nothing in the evidence ties its length to the size of the data set.
# ```
#
# ## The reasoning
#
# **The schedules.** With peak rate $\eta$, $w$ warm-up steps and $T$ steps in all, BERT's
# rate at step $t$ is
#
# $$\eta_t = \eta \cdot \begin{cases} t / w & t < w \\ (T - t)/(T - w) & t \ge w ,\end{cases}$$
#
# and Vaswani et al.'s is
# $\eta_t = d_\text{model}^{-1/2} \min\!\big(t^{-1/2},\; t\,w^{-3/2}\big)$, a linear rise
# that meets an inverse square-root decay at $t = w$.
#
# **Adam's first step.** Adam keeps running means of the gradient, $m_t$, and of its square,
# $v_t$, corrects them for starting at zero, and steps by
#
# $$\Delta\theta = -\eta_t \,\frac{\hat m_t}{\sqrt{\hat v_t} + \epsilon},\qquad
#   \hat m_1 = g_1,\; \hat v_1 = g_1^2 \;\Rightarrow\;
#   \Delta\theta_1 = -\eta_1\,\operatorname{sign}(g_1).$$
#
# At the first step every coordinate with a nonzero gradient moves by exactly $\eta_1$,
# whether its gradient is large or a speck of noise. Only as $\hat v_t$ averages more
# gradients does the step of each coordinate shrink to reflect how consistent its gradient
# is. Liu et al. ({cite}`liu2020radam`) analyse this as a large variance of Adam's adaptive
# learning rate in the first steps, and show that warm-up works by damping it. Xiong et al.
# ({cite}`xiong2020layer`) add a second reason specific to post-LN: at initialisation the
# gradients of the parameters near the output are large, so a large learning rate there
# is unstable; with LayerNorm moved to the input of each sublayer (pre-LN) the gradients are
# well behaved and warm-up can be dropped.
#
# ## The schedules, plotted

# %%
bert_steps, bert_warmup = 1_000_000, 10_000
bert = lr_schedule("linear", 1e-4, bert_steps, bert_warmup)
d_model, noam_warmup = 512, 4_000
noam_peak = (d_model * noam_warmup) ** -0.5  # d^-1/2 * w^-1/2, the value at step w
noam = lr_schedule("noam", noam_peak, 100_000, noam_warmup)
TINY_STEPS, HIGH_LR, WARMUP = 150, 1e-2, 50  # the high-lr runs of this chapter

fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
axes[0].plot(np.arange(0, bert_steps, 1000), bert[::1000])
axes[0].set_title(f"BERT: warm-up {bert_warmup:,}, linear decay")
axes[1].plot(noam)
axes[1].set_title(f"Transformer: warm-up {noam_warmup:,}, 1/sqrt(step)")
for warmup, style in [(0, "--"), (WARMUP, "-")]:
    axes[2].plot(lr_schedule("linear", HIGH_LR, TINY_STEPS, warmup), style,
                 label=f"warm-up {warmup}")
axes[2].set_title("this chapter's high-lr runs")
axes[2].legend()
for ax in axes:
    ax.set(xlabel="step", ylabel="learning rate")
fig.suptitle("Learning-rate schedules")
fig.tight_layout()
plt.show()

# %% [markdown]
# *What to see:* both published schedules spend a small share of training (1% for BERT) on
# the rise. The peak of the Transformer's schedule is $d_\text{model}^{-1/2}w^{-1/2}$, so a
# longer warm-up also means a lower peak.
#
# ## Inside Adam's first steps
#
# `minibert.adam_probe.record_updates` watches the optimiser inside the book's ordinary
# training loop and logs, at each step, (a) the change of every weight divided by that
# step's learning rate, as a root mean square over the weights that had a gradient (1.0
# means each moved by the full rate), and (b) the size of the whole change relative to the
# size of the weights. We run the first 30 steps of the tiny post-LN model at the high
# learning rate, without warm-up and with a 50-step warm-up (held flat after the rise, as
# decay would hardly start in 30 steps), and once more without warm-up on a corpus three
# times larger.

# %%
tokenizer = corpus_tokenizer()
config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, **zoo.ZOO_CONFIG)


def probe_first_steps(num_documents: int, warmup: int, steps: int = 30):
    """Adam's update sizes over the first steps of a fresh model (seed 0)."""
    rows = pretraining_pairs(generate_corpus(num_documents, seed=0), tokenizer,
                             max_length=32)
    torch.manual_seed(0)
    model = minibert.BertForPreTraining(config)
    with adam_probe.record_updates() as log:
        train(model, rows, steps=steps, lr=HIGH_LR, schedule="constant",
              warmup_steps=warmup, progress=False, device=device)
    return log


probes = {"no warm-up": probe_first_steps(1000, 0),
          f"warm-up {WARMUP}": probe_first_steps(1000, WARMUP),
          "no warm-up, 3x the data": probe_first_steps(3000, 0)}
for name, log in probes.items():
    print(f"{name:24s} step 1: update/lr RMS {log.unit_rms[0]:.3f}, "
          f"weights changed by {log.relative_change[0]:.1%}")

# %%
fig, (ax_unit, ax_change) = plt.subplots(1, 2, figsize=(11, 3.6))
for (name, log), style in zip(probes.items(), ["-", "-", ":"]):
    ax_unit.plot(log.unit_rms, style, label=name)
    ax_change.plot(log.relative_change, style, label=name)
ax_unit.set(xlabel="step", ylabel="RMS of update / learning rate",
            title="Adam's step, in units of the learning rate")
ax_change.set(xlabel="step", ylabel="|change| / |weights|", yscale="log",
              title="How much the weights change per step")
ax_unit.legend()
fig.tight_layout()
plt.show()

# %% [markdown]
# *What to see:* on the left, Adam's first step is a full learning rate for every weight in
# all three runs, and the ratio then falls as $\hat v_t$ fills with more gradients. On the
# right is what that means for the weights: without warm-up the very first step, taken
# on one mini-batch with no gradient history, changes the weights by about half their own
# size, the biggest step of the run; with warm-up the first steps are tiny and grow with
# the rate, by which time Adam's ratio has come down from 1. The dotted run, on three
# times the data, follows the solid one of the same schedule: how fast Adam's statistics
# settle depends on the number of steps, not on the size of the data set.
#
# ## Pre-training at a high learning rate
#
# Now full runs from the zoo: 150 steps of the quick recipe (rows of 32 tokens) at a
# learning rate of 1e-2, about three times the recipe's, with BERT's linear schedule,
# without warm-up and with a 50-step warm-up, for post-LN and pre-LN, two seeds each.

# %%
SEEDS = [0, 1]
high = {**zoo.QUICK, "steps": TINY_STEPS, "lr": HIGH_LR}
runs = {(ln, warmup, seed): zoo.training_record("tiny", **high, layer_norm_position=ln,
                                                warmup_steps=warmup, seed=seed)
        for ln in ("post", "pre") for warmup in (0, WARMUP) for seed in SEEDS}
accuracy = {key: r["metrics"]["mlm_accuracy"] for key, r in runs.items()}
held_out_loss = {key: r["metrics"]["mlm_loss"] for key, r in runs.items()}
baseline = {key: r["unigram_baseline"]["most_frequent"] for key, r in runs.items()}
for (ln, warmup, seed), value in accuracy.items():
    print(f"{ln}-LN, warm-up {warmup:2d}, seed {seed}: held-out accuracy {value:.3f} "
          f"(baseline {baseline[ln, warmup, seed]:.3f}), "
          f"loss {held_out_loss[ln, warmup, seed]:.2f}")

# %% [markdown]
# What does "predicting word frequencies only" cost? A model that ignores the context
# and always outputs the corpus' word frequencies has a loss equal to their entropy.

# %%
held_out = pretraining_pairs(generate_corpus(100, seed=10_000), tokenizer,
                             max_length=32, seed=1)  # seed 0's held-out rows
ids = held_out["input_ids"]
words = ids[~torch.isin(ids, torch.tensor(tokenizer.special_ids))]
frequency = torch.bincount(words).double() / len(words)
frequency = frequency[frequency > 0]
unigram_loss = -(frequency * frequency.log()).sum().item()
print(f"loss of predicting word frequencies only: {unigram_loss:.2f}")


# %%
def smooth(values, width=10):
    """Moving average, so the curves of different runs can be told apart."""
    return np.convolve(values, np.ones(width) / width, mode="valid")


fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
for ax, ln in zip(axes, ("post", "pre")):
    for warmup, style in [(0, "--"), (WARMUP, "-")]:
        for seed in SEEDS:
            ax.plot(smooth(runs[ln, warmup, seed]["history"]["mlm_loss"]), style,
                    color=f"C{seed}", label=f"warm-up {warmup}, seed {seed}")
    ax.axhline(unigram_loss, color="gray", linestyle=":", label="word frequencies only")
    ax.set(xlabel="step", title=f"{ln}-LN, peak lr {HIGH_LR}")
axes[0].set_ylabel("training MLM loss (moving average)")
axes[1].legend(fontsize=7, ncol=2)
fig.suptitle("Pre-training at a high learning rate, with and without warm-up")
plt.show()

# %% [markdown]
# *What to see:* without warm-up (dashed), post-LN drops quickly to the level of
# "word frequencies only" and stays there, with an occasional spike; with warm-up (solid)
# it goes below that level and keeps going. Pre-LN without warm-up hovers near the
# plateau, a little lower than post-LN on average; with warm-up it learns as well as
# post-LN does.
#
# What went wrong inside the stuck models? Measure how alike the tokens of a row are when
# they leave the encoder: the mean cosine similarity between the final vectors of
# different tokens of the same row.

# %%
real = held_out["attention_mask"].bool()  # (N, T)
pairs_mask = real[:, :, None] & real[:, None, :] & ~torch.eye(real.shape[1], dtype=bool)


def token_similarity(model) -> float:
    """Mean cosine similarity between the last-layer vectors of a row's tokens."""
    names = ("input_ids", "attention_mask", "token_type_ids")
    with torch.no_grad():
        out = model.to(device).bert(**{k: held_out[k].to(device) for k in names})
    unit = torch.nn.functional.normalize(out.last_hidden_state, dim=-1)  # (N, T, H)
    similarity = (unit @ unit.transpose(1, 2)).cpu()  # (N, T, T)
    return similarity[pairs_mask].mean().item()


similarity = {}
for ln, warmup, seed in runs:
    model = zoo.pretrained_corpus_model(**high, layer_norm_position=ln,
                                        warmup_steps=warmup, seed=seed)
    similarity[ln, warmup, seed] = token_similarity(model)
for ln in ("post", "pre"):
    for warmup in (0, WARMUP):
        values = [similarity[ln, warmup, seed] for seed in SEEDS]
        print(f"{ln}-LN, warm-up {warmup:2d}: token similarity", np.round(values, 2))

# %% [markdown]
# Without warm-up the post-LN encoder sends much more similar vectors out of its positions,
# in some seeds the very same vector: it has collapsed, and a masked-LM head that sees the
# same vector everywhere can only predict the same distribution everywhere, the word
# frequencies. The warmed-up models keep their tokens apart. (Pre-LN without warm-up sits
# in between.)
#
# ## The other regime: a moderate learning rate
#
# The zoo's recipe uses a peak learning rate of 3e-3. Same 150 steps, with and without
# warm-up:

# %%
moderate = {warmup: zoo.training_record("tiny", **{**high, "lr": 3e-3},
                                        warmup_steps=warmup, seed=SEEDS[0])
            for warmup in (0, WARMUP)}
moderate_accuracy = {w: r["metrics"]["mlm_accuracy"] for w, r in moderate.items()}
for warmup, value in moderate_accuracy.items():
    print(f"lr 3e-3, warm-up {warmup:2d}: held-out accuracy {value:.3f}")

# %% [markdown]
# At this learning rate the first, full-size Adam steps are small enough, and warm-up
# changes nothing that matters: a 2-layer model at a moderate learning rate trains fine
# without it.
#
# ## How much warm-up is enough?
#
# Move the slider over the warm-up length of the post-LN run at the high learning rate
# (seed 0). Left: the schedule. Right: the training loss of that run (pre-computed), with
# the run without warm-up for reference.

# %%
slider_warmups = [0, 15, WARMUP]
slider_runs = {w: zoo.training_record("tiny", **high, warmup_steps=w, seed=SEEDS[0])
               for w in slider_warmups}


def render_warmup(warmup):
    record = slider_runs[warmup]
    fig, (ax_lr, ax_loss) = plt.subplots(1, 2, figsize=(10, 3.4))
    ax_lr.plot(lr_schedule("linear", HIGH_LR, TINY_STEPS, warmup))
    ax_lr.set(xlabel="step", ylabel="learning rate", ylim=(0, HIGH_LR * 1.05),
              title=f"linear schedule, warm-up {warmup}")
    ax_loss.plot(smooth(slider_runs[0]["history"]["mlm_loss"]), "--", color="gray",
                 label="no warm-up")
    ax_loss.plot(smooth(record["history"]["mlm_loss"]), label=f"warm-up {warmup}")
    ax_loss.axhline(unigram_loss, color="gray", linestyle=":")
    ax_loss.set(xlabel="step", ylabel="training MLM loss", ylim=(3.8, 5.8),
                title=f"held-out accuracy {record['metrics']['mlm_accuracy']:.3f}")
    ax_loss.legend()
    fig.tight_layout()
    return fig


viz.slider(render_warmup, slider_warmups, label="warm-up steps", start=WARMUP)

# %% [markdown]
# The rise has to last long enough to carry the model through the steps where Adam's
# updates are full-size and least informed; the 50 steps used above worked for every seed.
# How short can it be? That depends on the seed: see the exercises.
#
# ## Claim check

# %%
unit = {name: np.array(log.unit_rms) for name, log in probes.items()}
change = {name: np.array(log.relative_change) for name, log in probes.items()}
no_wu, wu, more_data = probes
# Adam's first step moves every weight with a gradient by the full learning rate ...
assert all(u[0] > 0.95 for u in unit.values())
# ... and the ratio falls as the second-moment estimate fills.
assert unit[no_wu][-5:].mean() < 0.5 * unit[no_wu][0]
# Without warm-up the first step changes the weights by about half their size; with
# warm-up by a few percent at most. It is the largest step of the run without warm-up.
assert 0.3 < change[no_wu][0] < 0.8 and change[wu][0] < 0.03
assert change[no_wu][0] == change[no_wu].max()
# Three times the data: the same curve, step for step.
assert np.abs(unit[no_wu] - unit[more_data]).mean() < 0.05
# Post-LN, high lr, no warm-up: stuck at the word-frequency solution, collapsed.
for seed in SEEDS:
    stuck, ok = ("post", 0, seed), ("post", WARMUP, seed)
    assert abs(accuracy[stuck] - baseline[stuck]) < 0.015
    assert held_out_loss[stuck] > unigram_loss - 0.1
    # With warm-up it learns: above the baseline, lower loss, tokens kept apart.
    assert accuracy[ok] > baseline[ok] + 0.03
    assert held_out_loss[ok] < held_out_loss[stuck] - 0.1
    assert similarity[stuck] > similarity[ok] + 0.15
    # Pre-LN: warm-up still lowers the held-out loss.
    assert held_out_loss["pre", WARMUP, seed] < held_out_loss["pre", 0, seed] - 0.05
# In some seeds the collapse is complete: every token leaves as the same vector.
assert max(similarity["post", 0, seed] for seed in SEEDS) > 0.95
# Pre-LN without warm-up sits in between (on average over the seeds).
mean_similarity = {(ln, w): np.mean([similarity[ln, w, s] for s in SEEDS])
                   for ln in ("post", "pre") for w in (0, WARMUP)}
assert (mean_similarity["post", WARMUP] < mean_similarity["pre", 0]
        < mean_similarity["post", 0])
# Pre-LN without warm-up suffers less than post-LN on average over the seeds; with
# warm-up the two learn alike.
mean_acc = {(ln, w): np.mean([accuracy[ln, w, s] for s in SEEDS])
            for ln in ("post", "pre") for w in (0, WARMUP)}
assert mean_acc["pre", 0] > mean_acc["post", 0]
assert abs(mean_acc["pre", WARMUP] - mean_acc["post", WARMUP]) < 0.02
# At the moderate lr warm-up makes no difference, and both runs learn.
assert abs(moderate_accuracy[0] - moderate_accuracy[WARMUP]) < 0.02
assert min(moderate_accuracy.values()) > baseline["post", 0, SEEDS[0]] + 0.04

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"Warm-up adapts the learning rate to the size of the data set."** The syllabus quotes
#   code that sets the warm-up to five epochs' worth of batches and concludes that the
#   initial rate is inversely proportional to the corpus size. That is a property of that
#   one piece of code, which happens to count warm-up in epochs. The problem warm-up solves
#   is counted in optimiser steps: Adam's statistics settle at the same pace on three times
#   the data (the dotted curve above). BERT fixed its warm-up at 10,000 steps out of
#   1,000,000, and the Transformer at 4,000 steps, whatever the corpus. What the evidence
#   here supports is narrower: warm-up must cover Adam's first steps, and how fast those
#   settle did not change with three times the data.
# - **"It lets you find the right learning-rate range."** The syllabus' anecdote (training
#   loss that falls and then rises within an epoch) is a learning rate that is too high,
#   not an argument about warm-up; warm-up does not replace tuning the peak rate.
# - **"The model is random at first, so big steps are dangerous."** True but vague. The
#   specific mechanisms are Adam's first, sign-like steps (every weight moves by the full
#   rate, shown above) and, for post-LN, large gradients near the output at initialisation.
#   That is why pre-LN and RAdam-style corrections reduce the need for warm-up.
#
# ## At scale
#
# - BERT ({cite}`devlin2019bert`): Adam with learning rate 1e-4, $\beta_1 = 0.9$,
#   $\beta_2 = 0.999$, weight decay 0.01, warm-up over the first 10,000 steps, then linear
#   decay.
# - The Transformer ({cite}`vaswani2017attention`): the schedule above with $w = 4000$, Adam
#   with $\beta_2 = 0.98$ and $\epsilon = 10^{-9}$.
# - Xiong et al. ({cite}`xiong2020layer`) on IWSLT14 German-English translation: a post-LN
#   Transformer trained without warm-up reached 8.45 BLEU, against about 34 with 4,000
#   warm-up steps; with a 500-step warm-up it reached 31.16 BLEU at a learning rate of 5e-4
#   but 2.77 at 1e-3. Their pre-LN Transformer trains without warm-up.
# - Liu et al. ({cite}`liu2020radam`): without warm-up the training loss of their
#   Transformer stalls (around 10, against about 3 with warm-up); RAdam, which switches off
#   the adaptive rate while its variance is large, removes the need for warm-up.
#
# The tiny runs reproduce the shape of these findings (a high learning rate without
# warm-up stalls a post-LN model, a warm-up fixes it, pre-LN is more robust) and also
# the regime that papers report less often: at a moderate learning rate, a shallow model
# does not need warm-up at all. Unlike Xiong et al.'s deep models, our 2-layer pre-LN model
# is not immune at a learning rate this high.
#
# ## Exercises
#
# 1. Add `schedule="constant"` to the high-lr runs (warm-up, then a flat rate). Does the
#    linear decay help the runs without warm-up to recover?
# 2. Set the Adam `betas=(0.9, 0.98)` of the Transformer in `probe_first_steps`. How does
#    the ratio on the left-hand plot fall now, and why?
# 3. Try a deeper model (`num_hidden_layers=6`) at lr 3e-3 without warm-up, post-LN and
#    pre-LN. Does depth bring back the need for warm-up at a moderate rate?
# 4. Set `seed=1` and `seed=2` for the slider's runs. Is a 15-step warm-up still enough?
#    What is the shortest warm-up that keeps every seed off the plateau?
