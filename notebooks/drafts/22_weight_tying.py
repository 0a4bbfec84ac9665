# %% [markdown]
# # Where does BERT share weights, and why can it?
#
# **BERT 在哪里共享权重？为什么能共享？**
#
# The Transformer built for translation shares one matrix three ways: the encoder's input
# embedding, the decoder's input embedding and the layer before the decoder's softmax. BERT
# has no decoder, and keeps one of those ties: its masked-LM head scores the vocabulary with
# the input embedding table. This chapter checks why the shapes fit, counts what the tie
# saves, looks at what the two halves learn when they are left apart, and pre-trains tied
# and untied twins of the same small model.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import matplotlib.pyplot as plt
import numpy as np
import torch
from torch import nn

import minibert
from minibert import zoo
from minibert.data import corpus_tokenizer, generate_corpus, pretraining_pairs
from minibert.masking import Masker
from minibert.train import evaluate_mlm

device = minibert.get_device()
minibert.set_seed(0)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# BERT ties one pair: the input word-embedding table $E$ ($V \times H$) and the weight of
# the last layer of the masked-LM head, which turns a hidden vector into one score per
# vocabulary word. The score of word $w$ becomes $\tilde h \cdot E_w + b_w$: how well the
# (transformed) hidden vector matches the word's own input vector, plus a per-word bias
# that is **not** shared. No transpose is needed because `nn.Linear(H, V)` stores its
# weight as (out, in) = $(V, H)$, the table's own shape. The tie saves exactly $V \cdot H$
# parameters, about a sixth of an untied BERT-base. It is possible because both matrices
# connect the same words to the same $H$-dimensional space, and sensible because the
# output matrix gets a gradient for every word at every step, while an input row learns
# only when its word occurs (Press & Wolf). Sharing between an encoder and a decoder, the
# other tie of the original Transformer, needs a decoder and a joint source/target
# vocabulary; BERT has neither. In the tiny model of this book the tie saves parameters
# but buys no accuracy: the untied twin, with its extra output matrix, does as well.
# ```
#
# ## The reasoning
#
# A lookup is a one-hot vector times the table: the input vector of token $t$ is the row
# $E_t$. The masked-LM head first transforms the last hidden vector $h$,
# $\tilde h = \operatorname{LayerNorm}(\operatorname{GELU}(W h + c))$, then scores every
# word with an output matrix $U$ ($V \times H$) and a bias $b$:
#
# $$z = U \tilde h + b, \qquad z_w = U_w \cdot \tilde h + b_w .$$
#
# Tying sets $U = E$. Both matrices have one row per word and one column per hidden
# dimension, so nothing has to be reshaped: the input row of a word doubles as the
# "template" its output score compares against. (A common worry, which the syllabus
# voices too: the output layer maps $H \to V$, so is its matrix not $H \times V$? In PyTorch
# `nn.Linear(in, out)` stores its weight as (out, in) and computes $x W^\top$, so it is
# $V \times H$, like the table.)
#
# Why it is a good idea, not just a possible one: the loss's gradient with respect to $U$
# is $(p_w - y_w)\,\tilde h$ for **every** row $w$ at **every** masked position, because the
# softmax involves all words; the gradient with respect to $E$ touches only the rows of
# the words in the batch. Tied, every row of the table learns from every step.
#
# ## The experiment: one tensor, two roles
#
# Two freshly built tiny models for the book's synthetic corpus, one tied (BERT's default)
# and one with `tie_word_embeddings=False`.

# %%
tokenizer = corpus_tokenizer()
config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size)
V, H = config.vocab_size, config.hidden_size
tied = minibert.BertForPreTraining(config).to(device)
untied_config = config.replace(tie_word_embeddings=False)
untied = minibert.BertForPreTraining(untied_config).to(device)

table = tied.bert.embeddings.word_embeddings.weight  # (V, H)
decoder = tied.cls.predictions.decoder  # nn.Linear(H, V, bias=False)
print("embedding table        ", tuple(table.shape), "= (V, H)")
print(f"decoder: nn.Linear(in_features={decoder.in_features}, "
      f"out_features={decoder.out_features})")
print("decoder.weight         ", tuple(decoder.weight.shape), "= (out, in)")
print("tied:   decoder.weight is the table ->", decoder.weight is table)
untied_decoder = untied.cls.predictions.decoder
print("untied: decoder.weight is the table ->",
      untied_decoder.weight is untied.bert.embeddings.word_embeddings.weight)

# %% [markdown]
# The decoder is the table, not a copy of it. Applying it is a dot product of the
# transformed hidden vector with every word's input vector:

# %%
transformed = torch.randn(5, H, device=device)  # (5, H): five hidden vectors
with torch.no_grad():
    by_layer = decoder(transformed)  # (5, V)
    by_hand = transformed @ table.T  # (5, V): one dot product per word
gap_decoder = (by_layer - by_hand).abs().max().item()
print(f"largest difference, decoder(x) vs x @ E.T: {gap_decoder:.1e}")

head = tied.cls.predictions
print("the output bias:", tuple(head.bias.shape), "its own parameter ->",
      all(head.bias is not p for p in tied.bert.embeddings.parameters()))

# %% [markdown]
# ## What the tie saves
#
# Exactly one $V \times H$ matrix. For BERT-base we count on PyTorch's `meta` device, which
# builds the modules with shapes but no memory.

# %%
def count_parameters(preset_name: str, tie: bool, **changes) -> int:
    """Distinct parameters of a BertForPreTraining (a tied matrix counts once)."""
    with torch.device("meta"):  # shapes only: no memory, no initialisation cost
        config = minibert.preset(preset_name, tie_word_embeddings=tie, **changes)
        return minibert.BertForPreTraining(config).num_parameters()


sizes = {"tiny": {"vocab_size": V}, "base": {}}
savings = {}
for name, changes in sizes.items():
    vocab = minibert.preset(name, **changes)
    n_tied = count_parameters(name, True, **changes)
    n_untied = count_parameters(name, False, **changes)
    savings[name] = (n_tied, n_untied, vocab.vocab_size * vocab.hidden_size)
    print(f"{name:5s} tied {n_tied:>12,}  untied {n_untied:>12,}  "
          f"saved {n_untied - n_tied:>11,} = V*H = {vocab.vocab_size} x "
          f"{vocab.hidden_size}  ({(n_untied - n_tied) / n_untied:.1%} of untied)")

# %% [markdown]
# ## Which rows learn from a batch
#
# Take the untied model, where the two matrices are apart, and one small batch of eight
# masked rows. Which rows of each matrix receive a gradient?

# %%
pairs = pretraining_pairs(generate_corpus(50, seed=0), tokenizer, max_length=32)
masker = Masker.for_tokenizer(tokenizer)
rows = {name: t[:8] for name, t in pairs.tensors.items()}
batch = masker(rows, torch.Generator().manual_seed(0))
batch = {name: t.to(device) for name, t in batch.items()}
untied.zero_grad()
untied(**batch).loss.backward()

input_grad = untied.bert.embeddings.word_embeddings.weight.grad  # (V, H)
output_grad = untied_decoder.weight.grad  # (V, H)
rows_input = int((input_grad.abs().sum(dim=1) > 0).sum())
rows_output = int((output_grad.abs().sum(dim=1) > 0).sum())
words_in_batch = len(set(batch["input_ids"].flatten().tolist()) - {tokenizer.pad_id})
print(f"vocabulary: {V} words; distinct input ids in the batch: {words_in_batch}")
print(f"rows with a gradient: input table {rows_input}, output matrix {rows_output}")

# %% [markdown]
# The input table learns only the rows of the words present in the batch; the output
# matrix learns every row, because the softmax pushes down the score of every wrong word.
# Tied, the input table gets both kinds of update. (BERT's vocabulary has 30,522 words;
# exercise 2 asks what share of them one row can touch.)
#
# ## Pre-training tied and untied twins
#
# Now the same recipe (`zoo.QUICK`: 300 steps, rows of 32 tokens) for both, with three
# seeds. Each seed fixes the data order, the masks and the initial weights, so the twins
# differ only in the tie.

# %%
SEEDS = [0, 1, 2]
records = {
    tie: [zoo.training_record("tiny", **zoo.QUICK, seed=seed, tie_word_embeddings=tie)
          for seed in SEEDS]
    for tie in (True, False)
}
baseline = records[True][0]["unigram_baseline"]["most_frequent"]
accuracy = {tie: np.array([r["metrics"]["mlm_accuracy"] for r in records[tie]])
            for tie in records}
held_out_loss = {tie: np.array([r["metrics"]["mlm_loss"] for r in records[tie]])
                 for tie in records}
print("seed  tied acc / loss   untied acc / loss")
for i, seed in enumerate(SEEDS):
    print(f"{seed:4d}  {accuracy[True][i]:.3f} / {held_out_loss[True][i]:.2f}"
          f"     {accuracy[False][i]:.3f} / {held_out_loss[False][i]:.2f}")
print(f"unigram baseline (always the most frequent word): {baseline:.3f}")


# %%
def smooth(values, width=20):
    """Moving average, so the curves of different runs can be told apart."""
    return np.convolve(values, np.ones(width) / width, mode="valid")


fig, (ax_curve, ax_dots) = plt.subplots(1, 2, figsize=(11, 3.8))
for tie, style, label in [(True, "-", "tied"), (False, "--", "untied")]:
    for i, record in enumerate(records[tie]):
        ax_curve.plot(smooth(record["history"]["mlm_loss"]), style, color=f"C{i}",
                      label=f"{label}, seed {SEEDS[i]}")
    x = np.arange(len(SEEDS)) + (-0.1 if tie else 0.1)
    ax_dots.plot(x, accuracy[tie], "o" if tie else "s", label=label)
ax_curve.set(xlabel="step", ylabel="training MLM loss (moving average)",
             title="Training curves")
ax_curve.legend(fontsize=7, ncol=2)
ax_dots.axhline(baseline, color="gray", linestyle=":", label="unigram baseline")
ax_dots.set(xticks=range(len(SEEDS)), xticklabels=[f"seed {s}" for s in SEEDS],
            ylabel="held-out MLM accuracy", title="Held-out accuracy", ylim=(0, 0.4))
ax_dots.legend()
fig.suptitle("Tied vs untied decoder, same recipe")
plt.show()

# %% [markdown]
# *What to see:* for the first hundred steps the curves of a tied model and its untied twin
# run together; later the twins part by a little, and their held-out accuracies differ by a
# few points, about as much as the seeds do. On average the tied model is not ahead. All
# are far above the unigram baseline.
#
# Press & Wolf found that tying helps as a regulariser. Is there anything to regularise
# here? Score each model, with the same fill-in-the-blank test, on 400 of the rows it was
# trained on and compare with its held-out score.

# %%
overfit_gap = []
for seed in SEEDS:
    documents = generate_corpus(zoo.QUICK["num_documents"], seed=seed)
    seen_rows = pretraining_pairs(documents, tokenizer, max_length=32, seed=seed)
    seen_rows = seen_rows.select(range(400))  # rows this seed's models trained on
    for tie in (True, False):
        model = zoo.pretrained_corpus_model(**zoo.QUICK, seed=seed,
                                            tie_word_embeddings=tie)
        on_training_rows = evaluate_mlm(model.to(device), seen_rows)["mlm_accuracy"]
        overfit_gap.append(on_training_rows - accuracy[tie][SEEDS.index(seed)])
print("training-row accuracy minus held-out accuracy:", np.round(overfit_gap, 3))

# %% [markdown]
# The models score about the same on rows they have seen as on new ones: with fresh masks
# at every pass over the data, nothing has been memorised, so a regulariser has nothing to
# cure.
#
# ## What the untied halves learn, and the bias that stays apart
#
# Left apart, do the input table and the output matrix learn the same geometry? Their
# coordinates are unrelated (each could be rotated freely), so compare their *similarity
# structure*: the cosine similarity of every pair of words computed in each matrix, and
# how those two lists correlate. We also ask what the output bias, never tied, has learned:
# its correlation with each word's log frequency in the training corpus.

# %%
special = set(tokenizer.special_ids)
words = torch.tensor([i for i in range(V) if i not in special])  # ordinary words


def similarity_structure(matrix: torch.Tensor) -> np.ndarray:
    """Cosine similarity of every pair of ordinary words (upper triangle, flattened)."""
    rows = matrix[words].detach().cpu()
    rows = nn.functional.normalize(rows - rows.mean(0), dim=1)  # (W, H)
    similarity = rows @ rows.T  # (W, W)
    upper = torch.triu_indices(len(words), len(words), offset=1)
    return similarity[upper[0], upper[1]].numpy()


def structure_agreement(model) -> float:
    """Correlation between the input table's and the output matrix's similarities."""
    inputs = similarity_structure(model.bert.embeddings.word_embeddings.weight)
    outputs = similarity_structure(model.cls.predictions.decoder.weight)
    return float(np.corrcoef(inputs, outputs)[0, 1])


train_ids = pretraining_pairs(generate_corpus(1000, seed=0), tokenizer,
                              max_length=32)["input_ids"]  # seed 0's training rows
log_count = torch.bincount(train_ids.flatten(), minlength=V).double().log()
seen = torch.isfinite(log_count) & torch.isin(torch.arange(V), words)

agreement_untrained = structure_agreement(untied)
agreement_trained, bias_correlation = [], []
for seed in SEEDS:
    for tie in (True, False):
        model = zoo.pretrained_corpus_model(**zoo.QUICK, seed=seed,
                                            tie_word_embeddings=tie)
        bias = model.cls.predictions.bias.detach()
        bias_correlation.append(np.corrcoef(bias[seen], log_count[seen])[0, 1])
        if not tie:
            agreement_trained.append(structure_agreement(model))
print(f"input vs output similarity structure, untied: at initialisation "
      f"{agreement_untrained:+.3f}, trained", np.round(agreement_trained, 3))
print("output bias vs log word frequency, all six models:",
      np.round(bias_correlation, 3))

# %%
model = zoo.pretrained_corpus_model(**zoo.QUICK, seed=SEEDS[0])
fig, ax = plt.subplots(figsize=(5.5, 3.8))
ax.scatter(log_count[seen], model.cls.predictions.bias.detach()[seen], s=10)
ax.set(xlabel="log count of the word in the training rows",
       ylabel="learned output bias $b_w$",
       title="The untied part of the head: a per-word prior")
plt.show()

# %% [markdown]
# *What to see:* the bias climbs with the word's frequency. It holds each word's prior, the
# part of the score that does not depend on context, which an input vector has no use for;
# that is why BERT (and Hugging Face's `BertLMPredictionHead`) keep it as its own
# parameter. And the untied twins, starting from unrelated random matrices, end up with
# input and output tables whose similarity structures agree in part: words that are close
# as inputs tend to be close as outputs. Tying turns that partial agreement into an
# identity.
#
# ## Claim check

# %%
# One tensor, two roles; nn.Linear(H, V) is stored (V, H); the bias is separate.
assert decoder.weight is table and tuple(table.shape) == (V, H)
assert tuple(nn.Linear(H, V).weight.shape) == (V, H)
assert untied_decoder.weight is not untied.bert.embeddings.word_embeddings.weight
assert gap_decoder < 1e-5
# The tie saves exactly V*H parameters (BERT-base's published 110,106,428 when tied).
for n_tied, n_untied, v_times_h in savings.values():
    assert n_untied - n_tied == v_times_h
assert savings["base"][0] == 110_106_428
assert 0.15 < 1 - savings["base"][0] / savings["base"][1] < 0.2  # "about a sixth"
# From one batch only the words present update the input table; every output row learns.
assert rows_input == words_in_batch < V and rows_output == V
# Every run learns far beyond the unigram baseline, tied or not, and none overfits.
assert min(accuracy[True].min(), accuracy[False].min()) > baseline + 0.08
assert max(abs(gap) for gap in overfit_gap) < 0.03
# The tie buys no accuracy: on average the tied model is not ahead of its untied twin,
# twins differ by a few points at most, and early training runs together.
assert accuracy[True].mean() < accuracy[False].mean() + 0.01
assert np.abs(accuracy[True] - accuracy[False]).max() < 0.06
early_loss = {tie: np.array([np.mean(r["history"]["mlm_loss"][:100])
                             for r in records[tie]]) for tie in records}
assert np.abs(early_loss[True] - early_loss[False]).max() < 0.05
# The untied halves learn related, not identical, geometry; the bias tracks frequency.
assert abs(agreement_untrained) < 0.05 and min(agreement_trained) > 0.1
assert max(agreement_trained) < 0.6
assert min(bias_correlation) > 0.8

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"The Transformer shares weights in two places."** That is the translation model: one
#   matrix for the encoder's embedding, the decoder's embedding and the pre-softmax layer
#   ({cite}`vaswani2017attention`, §3.4, which also multiplies the embedding by
#   $\sqrt{d_\text{model}}$). Sharing across the encoder and the decoder works only with a
#   joint source/target vocabulary (a shared BPE). BERT is an encoder alone: its one tie is
#   between the input table and the masked-LM output layer ({cite}`devlin2019bert`).
# - **"The row most similar to the hidden vector wins, so embedding and output layer are
#   inverse operations."** Not quite. The decoder sees $\tilde h$, the hidden vector after a
#   dense layer, GELU and LayerNorm, not the hidden vector itself; the score adds a bias
#   that tracks frequency; and a longer row can out-score the most similar one (chapter 2
#   measures this for attention). Nor can a $V \times H$ table with $V > H$ be inverted.
# - **"Tying speeds up convergence."** Not visibly here: early on the tied and untied
#   curves overlap.
#   What is exact is the saving in parameters; what the papers measure is a gain in held-out
#   perplexity for language models that overfit (below).
# - **The bias.** Answers that say "the output layer is the embedding" forget the output
#   bias, which is separate and learns each word's prior.
#
# ## At scale
#
# Press & Wolf ({cite}`press2017tying`) tied the input and output embeddings of LSTM language
# models on the Penn Treebank: validation/test perplexity went from 82.2/78.4 to 77.7/74.3
# for their large model (66M parameters untied, 51M tied) and from 120.7/114.5 to
# 117.5/112.4 for the small one (4.65M to 2.65M). The tied models had a *higher* training
# perplexity: the tie acts as a regulariser, which is why it helps most where a model
# overfits a small corpus. They also report that tying more than halves the size of
# translation models without hurting them. PyTorch's word-language-model example shows the
# same on the Penn Treebank (80.97 to 75.96 for 650 units, 77.42 to 72.30 for 1500 units).
# In BERT-base the tie saves the 23.4M parameters counted above.
#
# Our tiny run matches the exact part (the parameter count) and not the perplexity gain.
# That fits Press & Wolf's reading: the model does not overfit (it scores about the same
# on training rows as on held-out rows), so a regulariser has nothing to cure, while the
# untied twin's extra output matrix is capacity that a model this small can use.
#
# ## Exercises
#
# 1. Shrink the corpus (`num_documents=100` with `zoo.QUICK`) so the model overfits. Does
#    tying help held-out accuracy then?
# 2. Repeat the gradient count with a batch of one row. What share of the input table
#    learns from it? What would it be for BERT's 30,522-word vocabulary and a 128-token row?
# 3. Freeze the output bias at zero (`model.cls.predictions.bias.requires_grad_(False)`)
#    and pre-train with `minibert.train.train`. How much held-out accuracy does the model
#    lose, and how does the tied table compensate?
# 4. Count the share of parameters the tie saves for BERT-large, and for a multilingual
#    model with a 250,000-word vocabulary and H = 768.
