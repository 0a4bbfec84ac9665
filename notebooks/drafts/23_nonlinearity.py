# %% [markdown]
# # Where does BERT's nonlinearity come from?
#
# **BERT 的非线性从哪里来？**
#
# The usual answer names two places: the GELU in the feed-forward layer and self-attention.
# There is a third, LayerNorm, and the three are not alike. This chapter takes GELU out and
# shows that the feed-forward block then collapses, exactly, into one small linear map;
# measures how far from linear each of BERT's parts is; and pre-trains the same small
# model with GELU, its tanh approximation, ReLU and no activation at all.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import viz, zoo
from minibert.data import corpus_tokenizer, generate_corpus, pretraining_pairs
from minibert.model import activation_fn

device = minibert.get_device()
minibert.set_seed(0)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# Each encoder layer has three nonlinear parts. **GELU** in the feed-forward block acts on
# every feature of every token separately. **Softmax** in self-attention turns scores into
# weights that depend on the input, so the mix of value vectors is itself a function of the
# input. **LayerNorm** divides each token's vector by its own standard deviation. (The
# heads add more: GELU and LayerNorm in the masked-LM head, tanh in the pooler.) Without
# GELU the feed-forward block $W_2(W_1x+b_1)+b_2$ is exactly one linear map $Wx+b$ with
# $W = W_2W_1$, an $H \times H$ matrix: the fourfold widening buys nothing. The network is
# still nonlinear, through softmax and LayerNorm, but its only per-token computation would
# be a linear map followed by a normalisation. GELU's tanh approximation is the same
# function to three decimals. In the tiny model of this book, though, none of this shows in
# pre-training: GELU, ReLU, the tanh approximation and no activation at all reach the same
# held-out accuracy.
# ```
#
# ## The reasoning
#
# One encoder layer, for a sequence of token vectors $X$ (post-LN, as BERT):
#
# $$\begin{aligned}
# A &= \operatorname{softmax}\!\big(XW_Q (XW_K)^\top / \sqrt{d_k}\big)\, XW_V W_O, \\
# Y &= \operatorname{LN}(X + A), \qquad
# Z = \operatorname{LN}\big(Y + W_2\,\varphi(W_1 Y + b_1) + b_2\big).
# \end{aligned}$$
#
# - $\varphi$ is GELU, $\varphi(x) = x\,\Phi(x)$ with $\Phi$ the standard normal CDF. Replace it
#   by the identity and $W_2(W_1y + b_1) + b_2 = (W_2W_1)\,y + (W_2b_1 + b_2)$: a product of
#   an $H \times 4H$ and a $4H \times H$ matrix is one $H \times H$ matrix.
# - Attention is nonlinear even before the softmax: the scores are products of two linear
#   functions of $X$, and the weights multiply a third. The softmax adds exponentials and a
#   normalisation.
# - $\operatorname{LN}(x) = \gamma \odot (x - \mu)/\sigma + \beta$ divides by $\sigma$, which
#   depends on $x$: $\operatorname{LN}(2x) = \operatorname{LN}(x)$, which no affine map
#   (other than a constant) satisfies.
#
# ## The experiment: GELU taken out
#
# The zoo pre-trains the same tiny model with `hidden_act="identity"` (the feed-forward
# block and the masked-LM head lose their GELU). Take its first layer's two dense layers
# and multiply them out.

# %%
tokenizer = corpus_tokenizer()
identity_model = zoo.pretrained_corpus_model(**zoo.QUICK, hidden_act="identity")
identity_model = identity_model.to(device)
gelu_model = zoo.pretrained_corpus_model(**zoo.QUICK).to(device)

layer = identity_model.bert.encoder.layer[0]
W1, b1 = layer.intermediate.dense.weight, layer.intermediate.dense.bias  # (4H, H) (4H,)
W2, b2 = layer.output.dense.weight, layer.output.dense.bias  # (H, 4H), (H,)
W = W2 @ W1  # (H, H): the whole block as one matrix
b = W2 @ b1 + b2  # (H,)
print("W1", tuple(W1.shape), " W2", tuple(W2.shape), " ->  W = W2 W1", tuple(W.shape))
two_layer_count = W1.numel() + b1.numel() + W2.numel() + b2.numel()
print(f"parameters: two dense layers {two_layer_count:,}, "
      f"one equivalent linear map {W.numel() + b.numel():,}")

# %% [markdown]
# Real inputs for the test: the embeddings of held-out rows of the synthetic corpus (the
# same held-out documents the zoo scores its models on).

# %%
held_out = pretraining_pairs(generate_corpus(100, seed=10_000), tokenizer,
                             max_length=32, seed=1)
with torch.no_grad():
    embedded = identity_model.bert.embeddings(held_out["input_ids"].to(device),
                                              held_out["token_type_ids"].to(device))
    x = embedded[:64]  # (64, T, H)
    two_layers = layer.output.dense(layer.intermediate(x))  # W2 (W1 x + b1) + b2
    one_map = x @ W.T + b  # W x + b
gap_collapse = ((two_layers - one_map).abs().max() / two_layers.abs().max()).item()
print(f"largest difference, relative to the largest output: {gap_collapse:.1e}")

# %% [markdown]
# Up to float32 rounding, the two dense layers are one linear map. Whatever the width of
# the hidden layer, without an activation between them they can only ever compute what a
# single $H \times H$ matrix computes.
#
# ## How far from linear is each part?
#
# An affine map $f$ (linear plus a constant) satisfies
# $f(a+b) - f(0) = \big(f(a) - f(0)\big) + \big(f(b) - f(0)\big)$ for all $a, b$. We measure
# the relative size of the failure,
#
# $$\text{nonlinearity}(f) = \frac{\lVert f(a+b) - f(a) - f(b) + f(0)\rVert}
#   {\lVert f(a+b) - f(0)\rVert},$$
#
# with $a$ and $b$ two different batches of real embedded rows: 0 for an affine map, and of
# order 1 when the map is far from one.

# %%
def nonlinearity(f, a: torch.Tensor, b: torch.Tensor) -> float:
    """0 when f is affine on these inputs; larger the further it is from affine."""
    with torch.no_grad():
        f0 = f(torch.zeros_like(a))
        whole = f(a + b) - f0
        parts = (f(a) - f0) + (f(b) - f0)
    return ((whole - parts).norm() / whole.norm()).item()


def parts_of(model):
    """The pieces of a model's first layer (and the whole encoder) as functions."""
    first, second = model.bert.encoder.layer
    return {
        "feed-forward block": lambda h: first.output.dense(first.intermediate(h)),
        "self-attention": lambda h: first.attention.self(h, None, False)[0],
        "LayerNorm": lambda h: first.attention.output.LayerNorm(h),
        "whole layer": lambda h: first(h, None, False)[0],
        "whole encoder": lambda h: second(first(h, None, False)[0], None, False)[0],
    }


a, b = embedded[:64], embedded[64:128]  # (64, T, H) each
measured = {name: {kind: nonlinearity(f, a, b) for kind, f in parts_of(model).items()}
            for name, model in [("identity", identity_model), ("GELU", gelu_model)]}
for kind in measured["GELU"]:
    print(f"{kind:20s} identity model {measured['identity'][kind]:.4f}   "
          f"GELU model {measured['GELU'][kind]:.4f}")

# %%
kinds = list(measured["GELU"])
fig, ax = plt.subplots(figsize=(8, 3.6))
for shift, name in [(-0.2, "identity"), (0.2, "GELU")]:
    values = [max(measured[name][k], 1e-9) for k in kinds]  # log scale needs > 0
    ax.bar(np.arange(len(kinds)) + shift, values, width=0.4,
           label=f"trained with {name} activation")
ax.set_yscale("log")
ax.set_ylim(1e-9, 30)
ax.set_xticks(range(len(kinds)), [k.replace(" ", "\n", 1) for k in kinds])
ax.set_ylabel("nonlinearity (0 = affine)")
ax.set_title("How far from linear is each part of a trained layer?")
ax.legend(loc="upper left", ncol=2, fontsize=8)
plt.show()

# %% [markdown]
# *What to see:* with GELU removed, the feed-forward block is affine up to float32 rounding
# (a bar about a million times lower than the others), yet self-attention, LayerNorm, a whole layer and the
# whole encoder stay far from linear, about as far as in the GELU model. The syllabus'
# "GELU and self-attention" misses LayerNorm, which on its own is as nonlinear here as
# attention.
#
# ## GELU, its tanh approximation, ReLU
#
# BERT's original code used the tanh approximation of GELU,
# $\tfrac12 x\big(1 + \tanh(\sqrt{2/\pi}\,(x + 0.044715x^3))\big)$; Hugging Face calls it
# `gelu_new`. How far is it from the exact GELU?

# %%
grid = torch.linspace(-6, 6, 2001)
gelu, gelu_tanh = activation_fn("gelu"), activation_fn("gelu_tanh")
approximation_error = (gelu(grid) - gelu_tanh(grid)).abs().max().item()
print(f"largest |GELU - tanh approximation| on [-6, 6]: {approximation_error:.1e}")

# %% [markdown]
# Now pre-train each variant with the zoo's quick recipe (300 steps, rows of 32 tokens):
# GELU and no activation with two seeds, ReLU and the tanh approximation with one. Within
# a seed the runs share their data order, masks and initial weights.

# %%
SEEDS = [0, 1]
variants = {"gelu": SEEDS, "identity": SEEDS, "relu": SEEDS[:1], "gelu_tanh": SEEDS[:1]}
records = {(act, seed): zoo.training_record("tiny", **zoo.QUICK, seed=seed,
                                             hidden_act=act)
           for act, seeds in variants.items() for seed in seeds}
accuracy = {key: r["metrics"]["mlm_accuracy"] for key, r in records.items()}
baseline = records["gelu", SEEDS[0]]["unigram_baseline"]["most_frequent"]
for (act, seed), value in accuracy.items():
    print(f"{act:10s} seed {seed}: held-out MLM accuracy {value:.3f}")
print(f"unigram baseline: {baseline:.3f}")

# %%
def smooth(values, width=20):
    """Moving average, so overlapping curves can be told apart."""
    return np.convolve(values, np.ones(width) / width, mode="valid")


fig, ax = plt.subplots(figsize=(8, 4))
styles = {"gelu": "-", "identity": "--", "relu": ":", "gelu_tanh": "-."}
for (act, seed), record in records.items():
    ax.plot(smooth(record["history"]["mlm_loss"]), styles[act], color=f"C{seed}",
            label=f"{act}, seed {seed}")
ax.set(xlabel="step", ylabel="training MLM loss (moving average)",
       title="Pre-training with different activations (tiny model, quick recipe)")
ax.legend()
plt.show()

# %% [markdown]
# *What to see:* the curves of one seed lie on top of each other, whatever the activation,
# and within a seed the held-out accuracies agree to a couple of points. In this tiny model
# and this short run, the feed-forward nonlinearity is not what limits learning: attention
# (which finds the context) and the embeddings carry most of what the model has learned so
# far, and softmax and LayerNorm keep the network nonlinear. That is a statement about a
# 2-layer model after 300 steps, not about BERT; see "At scale".
#
# ## The shape of the activation, and where the model uses it
#
# How curved an activation looks depends on the range of its inputs: near 0, GELU is
# almost the line $x/2$; far out, it is almost ReLU. Where do the trained GELU model's
# inputs to GELU (the pre-activations $W_1y + b_1$) actually fall?

# %%
with torch.no_grad():
    hidden = gelu_model.bert.embeddings(held_out["input_ids"].to(device),
                                        held_out["token_type_ids"].to(device))
    real = held_out["attention_mask"].to(device).bool()  # (N, T)
    pre_activations = []
    for block in gelu_model.bert.encoder.layer:
        pre_activations.append(block.intermediate.dense(hidden)[real].flatten().cpu())
        hidden = block(hidden, None, False)[0]
quantiles = torch.tensor([0.05, 0.95])
bands = [torch.quantile(p[::7], quantiles).tolist() for p in pre_activations]


def gelu_slope(values: torch.Tensor) -> torch.Tensor:
    """d GELU / dx, by autograd."""
    values = values.clone().requires_grad_(True)
    gelu(values).sum().backward()
    return values.grad


for i, (low, high) in enumerate(bands):
    slopes = gelu_slope(torch.tensor([low, high]))
    print(f"layer {i}: 90% of pre-activations in [{low:+.2f}, {high:+.2f}]; "
          f"GELU's slope there goes from {slopes[0]:.2f} to {slopes[1]:.2f}")

# %% [markdown]
# The trained model's pre-activations straddle GELU's bend: across the middle 90% of them
# the slope goes from near 0 to near 1. Move the slider to change the range of inputs
# shown; the shaded band is layer 0's middle 90%.

# %%
shapes = ["gelu", "gelu_tanh", "relu", "tanh", "identity"]


def render_scale(scale):
    x = torch.linspace(-scale, scale, 401)
    fig, (ax_f, ax_d) = plt.subplots(1, 2, figsize=(10, 3.6))
    for name in shapes:
        values = x.clone().requires_grad_(True)
        y = activation_fn(name)(values)
        y.sum().backward()
        style = "--" if name == "gelu_tanh" else "-"
        ax_f.plot(x, y.detach(), style, label=name)
        ax_d.plot(x, values.grad, style, label=name)
    for ax in (ax_f, ax_d):
        ax.axvspan(*bands[0], color="gray", alpha=0.15, label="layer 0, middle 90%")
        ax.set_xlim(-scale, scale)
        ax.set_xlabel("input x")
    ax_f.set(ylabel="activation", title="the function")
    ax_d.set(ylabel="slope", title="its derivative", ylim=(-0.2, 1.2))
    ax_d.legend(fontsize=8, loc="upper left")
    fig.suptitle(f"activations on [-{scale}, {scale}]")
    fig.tight_layout()
    return fig


viz.slider(render_scale, [0.1, 0.3, 1, 3, 10], label="input range", start=1)

# %% [markdown]
# ## Claim check

# %%
# Without GELU the feed-forward block is one linear map W x + b with W = W2 W1 (H x H).
assert tuple(W.shape) == (W1.shape[1], W1.shape[1]) and gap_collapse < 1e-5
assert measured["identity"]["feed-forward block"] < 1e-5
# With GELU it is not; and softmax attention, LayerNorm, a layer and the encoder are far
# from linear in both models.
assert measured["GELU"]["feed-forward block"] > 0.05
for name in ("identity", "GELU"):
    for kind in ("self-attention", "LayerNorm", "whole layer", "whole encoder"):
        assert measured[name][kind] > 0.3, (name, kind)
# LayerNorm is about as nonlinear as attention (within a factor of two).
for name in ("identity", "GELU"):
    ratio = measured[name]["LayerNorm"] / measured[name]["self-attention"]
    assert 0.5 < ratio < 2
# The tanh approximation matches GELU to three decimals.
assert approximation_error < 1e-3
# Every variant learns far beyond the unigram baseline...
assert min(accuracy.values()) > baseline + 0.08
# ... and the activation hardly matters: within a seed, each is within 0.02 of GELU.
for (act, seed), value in accuracy.items():
    assert abs(value - accuracy["gelu", seed]) < 0.02, (act, seed)
# The trained pre-activations straddle GELU's bend.
for low, high in bands:
    slopes = gelu_slope(torch.tensor([low, high]))
    assert slopes[0] < 0.2 and slopes[1] > 0.7

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"GELU and self-attention."** Also LayerNorm, which divides each token by its own
#   standard deviation and is as far from linear as attention in the measurement above;
#   and, in the heads, the masked-LM head's GELU and LayerNorm and the pooler's tanh.
# - **Not all nonlinearities are alike.** Softmax decides *how to mix tokens*; the mixture
#   itself is a weighted average of value vectors. LayerNorm only rescales a whole vector.
#   GELU is the only one that acts on each feature of each token separately, so without it
#   the per-token computation of a layer is a linear map and a normalisation. That is why
#   the collapse matters even though the network as a whole stays nonlinear.
# - **"GELU because it is better than ReLU."** The difference is small, in the paper that
#   introduced it and here; GELU is smooth, and its tanh approximation (BERT's original
#   code) is the same function to three decimals.
#
# ## At scale
#
# Hendrycks & Gimpel ({cite}`hendrycks2016gelu`) report small but consistent gains for GELU
# over ReLU and ELU, e.g. test error on CIFAR-10 of 7.89% (GELU) vs 8.16% (ReLU) and 8.41%
# (ELU), and on CIFAR-100 20.74% vs 21.77% and 22.98%. BERT adopted GELU from GPT
# ({cite}`devlin2019bert`). No one trains a large Transformer without a feed-forward
# activation, precisely because of the collapse shown above. In our tiny run the choice of
# activation, including none, sits well inside seed noise: a 2-layer, 64-wide model after
# 300 steps does not yet need per-token nonlinear features.
#
# ## Exercises
#
# 1. Train `hidden_act="identity"` and `"gelu"` for longer (`steps=600` with `zoo.QUICK`).
#    Does a gap open?
# 2. Check that the collapse also holds for layer 1, and compute the rank of $W = W_2W_1$.
#    Why can it never exceed $H$?
# 3. Measure the nonlinearity of LayerNorm on inputs $a$ and $b = a$. What do you get, and
#    why? (Hint: $\operatorname{LN}(2x)$.)
# 4. Scale the inputs of the GELU feed-forward block by 0.1 and by 10 before measuring its
#    nonlinearity. Relate what you see to the slider.
