# %% [markdown]
# # How does attention differ from a fully connected layer?
#
# **注意力机制和全连接层的区别在哪里？**
#
# Both can mix the tokens of a sequence: each output is a weighted sum of the inputs. The
# difference is who sets the weights. This chapter shows it three ways: the symmetry each
# layer has (or lacks) when the tokens are shuffled, a task that one layer of attention
# learns in a few dozen steps and a fully connected mixer of the same size never learns,
# and the mixing weights of the two trained models side by side.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import copy

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import recall, viz
from minibert.data import corpus_tokenizer
from minibert.zoo import pretrained_corpus_model

device = minibert.get_device()
minibert.set_seed(0)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# A fully connected layer that mixes tokens uses weights **learned once and then fixed**:
# position $j$ always contributes to position $i$ with the same weight, whatever the
# tokens are. Attention **computes its weights from the input** ($a_{ij}$ is a softmax
# of query·key), so where a token reads from depends on what the tokens say. Three
# consequences: attention's parameters do not depend on the sequence length; without
# position embeddings it is permutation-equivariant (shuffle the tokens and the outputs
# shuffle the same way), which is why BERT adds positions; and it can fetch information
# by content. On an associative-recall task a one-block attention model becomes perfect
# while a dense token mixer of the same width and size stays at the accuracy of
# "guess the most frequent value". A big enough dense network could in principle learn
# the task too, but the size it needs grows with the table; attention's does not.
# ```
#
# ## The reasoning
#
# Write a sequence as the rows of $X \in \mathbb{R}^{T\times d}$ ($T$ tokens of width
# $d$). A **dense token-mixing layer** (the token-mixing step of MLP-Mixer
# {cite}`tolstikhin2021mlpmixer`) is
#
# $$Y = W\,X W_V, \qquad W \in \mathbb{R}^{T\times T} \text{ learned.}$$
#
# **Self-attention** is the same shape of formula with a computed matrix:
#
# $$Y = A(X)\,X W_V, \qquad A(X) = \operatorname{softmax}\!\left(\frac{X W_Q (X W_K)^\top}{\sqrt{d_k}}\right).$$
#
# - $W$ is a parameter: one matrix for every input. $A(X)$ is recomputed for every input.
# - $W$ has $T^2$ entries tied to positions, so the layer only accepts length $T$.
#   Attention's parameters $W_Q, W_K, W_V$ are $d\times d$: any length works.
# - Permute the tokens with a permutation matrix $P$. Attention gives
#   $A(PX)\,PXW_V = P A(X) P^\top P X W_V = P\,Y$: the outputs are permuted the same way
#   (permutation equivariance). The dense layer gives $W P X W_V$, which is $P\,Y$ only if
#   $W$ commutes with every permutation.
# - The rows of $A$ are non-negative and sum to 1 (an average); $W$ may hold any sign.
#
# (A "fully connected layer" in a Transformer usually means the feed-forward block, which
# is applied to each token separately and mixes no tokens at all. The question is about
# the layer that mixes tokens.)
#
# ## Permutation equivariance, measured
#
# One attention layer (minibert's `BertSelfAttention` with an output projection, no
# position embeddings) and one dense token-mixing layer, both freshly initialised, on a
# random sequence and on the same sequence shuffled. We compute in double precision, so
# rounding errors sit far below any tolerance we test.

# %%
T, width = 9, 64
attention_layer = recall.AttentionMixing(width, num_heads=4).to(device).double().eval()
dense_layer = recall.DenseTokenMixing(T, width).to(device).double().eval()
x = torch.randn(1, T, width, device=device, dtype=torch.float64)  # (B, T, d)
shuffle = torch.randperm(T, device=device)


def equivariance_error(layer, x, order):
    """Largest gap between layer(shuffled x) and the shuffled layer(x), relative to the
    output's size: 0 for a permutation-equivariant layer."""
    with torch.no_grad():
        gap = layer(x[:, order]) - layer(x)[:, order]
        return (gap.abs().max() / layer(x).abs().max()).item()


attention_error = equivariance_error(attention_layer, x, shuffle)
dense_error = equivariance_error(dense_layer, x, shuffle)
print(f"attention: relative error {attention_error:.1e}")
print(f"dense:     relative error {dense_error:.1e}")

# %% [markdown]
# The attention layer's outputs are the shuffled outputs, up to rounding; the dense
# layer's are something else. A whole BERT behaves the same way once its position
# embeddings are removed: the feed-forward blocks and LayerNorms act on each token alone,
# so only the position table tells the model where a token stands. Below, the tiny BERT
# pre-trained on the synthetic corpus, with its position table and with it set to zero.

# %%
bert = pretrained_corpus_model("tiny", progress=False).bert.to(device).double()
no_positions = copy.deepcopy(bert)
with torch.no_grad():
    no_positions.embeddings.position_embeddings.weight.zero_()
sentence = corpus_tokenizer().encode("the dogs that chase the cat near the river run .")
ids = torch.tensor([sentence.ids], device=device)  # (1, T)
order = torch.randperm(ids.shape[1], device=device)


def last_hidden(model):
    """The model as a function from token ids to its last layer's vectors."""
    return lambda input_ids: model(input_ids).last_hidden_state


bert_errors = {}
for name, model in {"with positions": bert, "positions zeroed": no_positions}.items():
    bert_errors[name] = equivariance_error(last_hidden(model), ids, order)
    print(f"tiny BERT, {name:16s}: relative error {bert_errors[name]:.1e}")

# %% [markdown]
# ## A task that needs content-based addressing: associative recall
#
# Each example is a small table: 8 (key, value) pairs in random order, one pair per
# position, then a query key at the last position. The answer is the value stored under
# that key. Keys are distinct, drawn from 16; values from 16, repeats allowed; every
# example is freshly drawn, so nothing can be memorised. This is the associative recall
# task that is used to probe sequence models {cite}`ba2016fastweights,arora2023zoology`.

# %%
task = recall.RecallTask(num_keys=16, num_values=16, num_pairs=8)
keys, values, answers = task.sample(3, torch.Generator().manual_seed(0))
for k, v, a in zip(keys.tolist(), values.tolist(), answers.tolist()):
    table = "  ".join(f"{key}->{value}" for key, value in zip(k[:-1], v[:-1]))
    print(f"{table}   query {k[-1]} -> answer {a}")

# %% [markdown]
# Two models read it, built the same way: each position's vector is key embedding +
# value embedding (the query carries a marker in place of a value); one pre-LN block
# of token mixing and a feed-forward block, each with a residual; a linear readout at the
# query position; width 64 and no position embeddings. The only difference is the
# token-mixing layer: self-attention (one head) or the dense $T\times T$ matrix. The
# dense model's feed-forward block is a little wider so that both have the same number of
# parameters.
#
# What can a fixed mix keep? The query position receives the same blend of the eight
# pair vectors for every table. Each pair vector is a *sum* key + value, so the blend
# holds which keys and which values are present but loses which value sits with which
# key. The best a reader of that blend can do is to guess the value that appears most
# often in the table. We compute that accuracy exactly (`bag_of_values_accuracy`) and
# draw it as a line.

# %%
attention_model, dense_model = recall.build_pair(task)
print("parameters: attention", attention_model.num_parameters(),
      " dense", dense_model.num_parameters())
bag_level = recall.bag_of_values_accuracy(task)
chance = 1 / task.num_values
print(f"chance {chance:.3f}, best guess from the bag of values {bag_level:.3f}")

# %% [markdown]
# Train both for 200 steps (batches of 64 fresh examples, AdamW), three seeds each. The
# held-out accuracy is recorded every 25 steps, and so are the query position's mixing
# weights on one held-out example (the probe).

# %%
SEEDS = (0, 1, 2)
probe = task.sample(1, torch.Generator().manual_seed(123))
histories = {"attention": [], "dense": []}
trained = {}
for seed in SEEDS:
    torch.manual_seed(seed)  # the initial weights
    models = dict(zip(("attention", "dense"), recall.build_pair(task)))
    for kind, model in models.items():
        model.to(device)
        histories[kind].append(recall.train_recall(model, seed=seed, probe=probe[:2]))
        trained.setdefault(kind, model)  # keep the seed-0 models for a closer look
for kind, runs in histories.items():
    finals = " ".join(f"{run.accuracy[-1]:.3f}" for run in runs)
    seconds = sum(run.seconds for run in runs)
    print(f"{kind:9s} final accuracy per seed: {finals}   ({seconds:.1f} s)")

# %%
steps = np.array(histories["attention"][0].steps)
colors = {"attention": "tab:blue", "dense": "tab:orange"}
probe_keys, probe_values, probe_answer = (t[0] for t in probe)
match = int((probe_keys[:-1] == probe_keys[-1]).nonzero())  # the slot holding the key
slot_labels = [f"{k}->{v}" for k, v in zip(probe_keys[:-1].tolist(),
                                             probe_values[:-1].tolist())] + ["query"]


def render_step(step):
    """Accuracy up to `step` (all seeds), and the probe's query-row mixing weights."""
    shown = steps <= step
    index = int(shown.sum()) - 1
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.3), layout="constrained")
    for kind, runs in histories.items():
        for seed, run in zip(SEEDS, runs):
            axes[0].plot(steps[shown], np.array(run.accuracy)[shown], "-o",
                         color=colors[kind], markersize=3,
                         label=kind if seed == SEEDS[0] else None)
    axes[0].axhline(bag_level, color="gray", linestyle="--", label="bag of values")
    axes[0].axhline(chance, color="gray", linestyle=":", label="chance")
    axes[0].set(xlim=(-5, steps[-1] + 5), ylim=(0, 1.05), xlabel="training step",
                ylabel="held-out accuracy", title=f"accuracy, 3 seeds (step {step})")
    axes[0].legend(fontsize=8, loc="center right")
    for ax, kind in zip(axes[1:], ("attention", "dense")):
        weights = histories[kind][0].query_weights[index][0].numpy()  # (T,)
        positions = range(task.seq_len)
        bar_colors = [colors[kind] if j != match else "tab:green" for j in positions]
        ax.bar(positions, weights, color=bar_colors)
        ax.axhline(0, color="black", linewidth=0.5)
        ax.set_xticks(positions, slot_labels, rotation=45, fontsize=8)
        ax.set(xlabel=f"position (key->value); query key {probe_keys[-1].item()}",
               ylabel="weight from the query position",
               title=f"{kind}: query row of the mixing matrix")
    return fig


viz.slider(render_step, list(steps), label="training step", start=int(steps[-1]))

# %% [markdown]
# *What to see:* attention jumps from chance to perfect within the first few dozen steps,
# for every seed. In the middle panel its query row concentrates on the green bar, the
# pair whose key matches the query, and it copies that pair's value. The dense mixer
# climbs to the bag-of-values line and stays there. Its query row (right) is one fixed
# set of signed weights, the same for every table, and training has pulled it towards
# one common weight for all eight pairs (printed below): an average of the table, the
# bag, which is the best a fixed row can do when the matching pair may sit anywhere.

# %%
def spread(row):
    """How uneven a row of weights is: standard deviation over mean size."""
    return (row.std() / row.abs().mean()).item()


initial_row = dense_model.mixing.mixing.detach()[-1, :-1]  # untrained, pair positions
trained_row = trained["dense"].mixing.mixing.detach()[-1, :-1].cpu()
print("dense query row, untrained:", np.round(initial_row.numpy(), 2),
      f" spread {spread(initial_row):.2f}")
print("dense query row, trained:  ", np.round(trained_row.numpy(), 2),
      f" spread {spread(trained_row):.2f}")
#
# ## The mixing matrices of the two trained models
#
# The same two trained models on two different tables: the full $T\times T$ mixing
# matrix (row = receiving position). Attention's changes with the input; the dense one
# is literally the same matrix.

# %%
two_tables = task.sample(2, torch.Generator().manual_seed(7))
two_keys, two_values = (t.to(device) for t in two_tables[:2])
with torch.no_grad():
    mixing = {kind: model.mixing_matrix(two_keys, two_values).cpu()
              for kind, model in trained.items()}  # (2, T, T) each
fig, axes = plt.subplots(2, 2, figsize=(9, 8), layout="constrained")
for row, kind in enumerate(("attention", "dense")):
    scale = mixing[kind].abs().max().item()
    for column in range(2):
        ax = axes[row, column]
        image = ax.imshow(mixing[kind][column].numpy(), cmap="RdBu_r",
                          vmin=-scale, vmax=scale)
        labels = [f"{k}" for k in two_keys[column].tolist()]
        ax.set_xticks(range(task.seq_len), labels)
        ax.set_yticks(range(task.seq_len), labels)
        ax.set(xlabel="sending position (its key)", ylabel="receiving position",
               title=f"{kind}, table {column + 1}")
    fig.colorbar(image, ax=axes[row], shrink=0.8, label="mixing weight")
fig.suptitle("Mixing matrices on two inputs: computed (attention) vs fixed (dense)")
plt.show()

# %% [markdown]
# *What to see:* in the attention maps, the bottom row (the query) has one bright cell:
# the position whose key equals the query key, at a different place in each table. The
# other rows mostly keep to themselves (a pair has nothing to fetch), except the pair
# holding the query's key, which also looks at the query: that row moves with the input
# too. The two dense matrices are identical. Over 2,000 held-out tables, the share of
# the query's attention that lands on the matching pair:

# %%
held_keys, held_values, _ = (t.to(device) for t in task.sample(
    2000, torch.Generator().manual_seed(99)))
with torch.no_grad():
    mixing_matrices = trained["attention"].mixing_matrix(held_keys, held_values)
query_row = mixing_matrices[:, -1]  # (N, T): how the query position reads
is_match = held_keys[:, :-1] == held_keys[:, -1:]  # (N, T-1): the matching pair
on_match = query_row[:, :-1][is_match].mean().item()
print(f"attention weight on the matching pair: {on_match:.3f} "
      f"(even spread: {1 / task.seq_len:.3f})")

# %% [markdown]
# ## Claim check
#
# Each measured statement above, asserted.

# %%
# Attention without positions is permutation-equivariant; the dense mixer is not.
assert attention_error < 1e-6
assert dense_error > 0.1
# A whole BERT is equivariant once its position table is zero, and not with it.
assert bert_errors["positions zeroed"] < 1e-6
assert bert_errors["with positions"] > 0.1
# Same width, same size (within 1%).
sizes = [trained[kind].num_parameters() for kind in ("attention", "dense")]
assert abs(sizes[0] - sizes[1]) / sizes[0] < 0.01
# For every seed: attention near-perfect, within the first 100 steps; the dense mixer
# far below, at the bag-of-values level (well above chance).
for attention_run, dense_run in zip(histories["attention"], histories["dense"]):
    attention_acc = np.array(attention_run.accuracy)
    assert attention_acc[-1] > 0.9
    assert steps[np.argmax(attention_acc > 0.9)] <= 100
    assert dense_run.accuracy[-1] < 0.5
    assert attention_acc[-1] - dense_run.accuracy[-1] > 0.5
    assert abs(dense_run.accuracy[-1] - bag_level) < 0.06
    assert dense_run.accuracy[-1] > chance + 0.1
# Training pulls the dense query row towards one weight for all pairs: one sign,
# and less than half the spread it had at initialisation.
assert (trained_row > 0).all() or (trained_row < 0).all()
assert spread(trained_row) < 0.5 * spread(initial_row)
# Attention's mixing matrix changes with the input and finds the matching pair;
# the dense one is the same matrix for every input.
assert (mixing["attention"][0] - mixing["attention"][1]).abs().max() > 0.5
assert torch.equal(mixing["dense"][0], mixing["dense"][1])
assert on_match > 0.9

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"The difference is that attention has a query and a key."** The query and key are
#   the means; the point is what they buy: weights computed from the input, per example.
#   A dense layer's weights are frozen after training. The syllabus' answer also says a
#   fully connected layer gives "each value a weight": so does attention. Both are
#   weighted sums; only the origin of the weights differs.
# - **"A fully connected layer cannot do this."** Too strong. A wide enough network with
#   fixed weights can represent the recall function (MLPs approximate any function): for
#   instance, a per-token layer that builds one feature per (key, value) combination,
#   followed by a fixed sum, keeps the whole table, at a width of at least
#   16 × 16 = 256 here, against attention's 64. The width a fixed mixer needs grows with
#   the number of keys and values; attention's does not. That is the honest form of
#   the claim, and what the experiment shows at equal size.
# - **Cost is not the difference.** Mixing $T$ tokens costs $O(T^2 d)$ for both: the dense
#   layer multiplies by a $T\times T$ matrix too. What attention adds is computing that
#   matrix, and with it, independence from the sequence length.
# - **Attention is not "a more general dense layer".** Its weights are non-negative and
#   sum to 1 per row (a weighted average), while a dense row can subtract (the negative
#   bars above). And without position embeddings attention cannot tell the order of its
#   inputs at all: the equivariance that helps on this task (the table's order does not
#   matter) is a handicap for language, which is why BERT adds positions.
#
# ## At scale
#
# Whether fixed token mixing is enough has been tested at scale. MLP-Mixer replaces
# attention in a vision Transformer by dense token-mixing MLPs and, pre-trained on very
# large image data, gets close to attention-based models
# {cite}`tolstikhin2021mlpmixer`. gMLP adds multiplicative gating to static spatial
# mixing and reaches parity with BERT on pre-training perplexity; on the fine-tuning
# tasks where it falls behind, making it substantially larger closes the gap
# {cite}`liu2021gmlp`. The Zoology study traces most of the perplexity gap between
# attention and attention-free (gated-convolution) language models to associative recall:
# a 70M-parameter attention model beat a 1.4B-parameter gated-convolution model at it, and
# the convolution models needed a model dimension that grows with the sequence length
# where attention did not {cite}`arora2023zoology`. The tiny run here is the same
# effect in its simplest form: equal size, one block, and the dense mixer stops at the
# level that a bag of values allows.
#
# ## Exercises
#
# 1. Raise `num_pairs` to 12 (and `num_keys` to 24), retrain both models. Where do the
#    bag-of-values line and the dense mixer go? Does attention still learn?
# 2. Widen the dense model (`recall.RecallModel(task, "dense", width=256,
#    mlp_width=1024)`). Does width alone help? Why not? (Hint: what survives a fixed
#    average of vectors key + value?)
# 3. Make attention uniform: set `attention_model.mixing.attention.scale = 0.0` before
#    training, so every score is zero. Which line does it reach, and why?
# 4. Shrink the attention model (`width=16`, then 8, in `recall.build_pair`). How narrow
#    can it be and still solve the task? Compare with exercise 2.
