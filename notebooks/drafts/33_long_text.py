# %% [markdown]
# # How do you handle text longer than 512 tokens?
#
# **BERT 应用中，文本超过 512 个 token 时该怎么处理？**
#
# BERT reads at most 512 tokens at once. This chapter builds long documents whose label
# hangs on one sentence placed at a known spot (the beginning, the middle or the end),
# then compares the usual remedies on them: keep the head, keep the tail, keep both, or
# slide a window over the whole text and pool the windows' predictions. It measures what
# each one gets right, where, and at what cost in tokens read.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import data, long_text, viz, zoo
from minibert.train import train

device = minibert.get_device()
seed = 0
minibert.set_seed(seed)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# The limit comes from the learned position table (512 rows) and from attention's cost,
# which grows with the square of the length. Three families of fixes:
# **truncate** (keep the first tokens, the last ones, or both: head+tail was best in Sun et
# al.'s experiments); **split** the text into overlapping windows, classify each, and pool
# the windows' outputs (mean or max; for QA, keep the best-scoring span over all
# windows); or use a **long-input model** with sparse attention (Longformer, BigBird).
# Truncation is free but blind: it works only if the evidence sits in the part it keeps.
# Windows see everything, at a cost that grows with the number of windows; the stride must
# leave an overlap at least as long as the evidence so that no window cuts it in half.
# ```
#
# ## The reasoning
#
# A BERT's position embeddings are a table with `max_position_embeddings` rows (512 for
# BERT-base), so position 512 has no vector at all; and each layer's attention compares
# every token with every other, $n^2$ pairs. A longer table could be added, but its new
# rows would be untrained, and the cost would still grow quadratically.
#
# Cut a text of $L$ tokens into windows of $r$ tokens (the model's length minus [CLS]
# and [SEP]) that start every $s$ tokens (the **stride**), the last one reaching the end:
#
# $$n_\text{windows} = 1 + \left\lceil \frac{\max(0,\, L - r)}{s} \right\rceil ,$$
#
# and consecutive windows share $r - s$ tokens. A sentence of $k$ tokens lies whole inside
# some window whenever $r - s \ge k - 1$. The model reads every window, so the tokens read
# grow like $L \cdot r / s$: about twice the text when the windows overlap by half.
#
# Here the book's tiny model (pre-trained on 64-token rows) reads at most **32 tokens**,
# a stand-in for 512, and the documents run from 80 to 160 tokens: from two and a half
# to five times the window, as a 1,300- to 2,500-token article would be for BERT.

# %%
max_length = 32  # our stand-in for BERT's 512
room = max_length - 2  # text tokens per window, after [CLS] and [SEP]
stride = 24  # windows overlap by room - stride = 6 tokens: a whole evidence sentence
train_docs = data.long_documents(600, seed=seed, min_tokens=80, max_tokens=160)
test_docs = data.long_documents(150, seed=seed + 100, min_tokens=80, max_tokens=160)
example = test_docs.examples[1]
print(f"{example['num_tokens']} tokens, evidence at the {example['position']}:",
      f"'{example['evidence']}' -> label {example['label']}")
print(example["text"][:300], "...")

# %% [markdown]
# The label (1 for a positive mood, 0 for a negative one) is carried by one six-token
# sentence, "... is happy/sad today ."; everything else is filler from ordinary
# documents. The position of that sentence cycles through beginning, middle and end.
#
# The model itself refuses a row longer than its position table:

# %%
# tags: raises-exception
# NBVAL_RAISES_EXCEPTION
directory = zoo.corpus_model_directory("tiny", progress=False)
no_dropout = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
model = minibert.BertForSequenceClassification.from_pretrained(
    directory, num_labels=2, **no_dropout).to(device)
print("position table:", model.config.max_position_embeddings, "rows")
model(test_docs["input_ids"][:2].to(device), test_docs["attention_mask"][:2].to(device))

# %% [markdown]
# ## What each strategy keeps
#
# `data.truncate` keeps the head (the first 30 text tokens), the tail (the last 30) or
# Sun et al.'s head+tail (a quarter from the head, the rest from the tail).
# `long_text.sliding_windows` cuts every document into windows with our stride. Below,
# the spans of one test document that each strategy reads, and where its evidence is.

# %%
strategies = ["head", "tail", "head_tail"]
truncated = {keep: data.truncate(test_docs, max_length, keep) for keep in strategies}
windows, window_document = long_text.sliding_windows(test_docs, max_length, stride)

row = 1
length = example["num_tokens"]
starts = long_text.window_starts(length, room, stride)
head_part = room // 4
kept = {"head": [(0, room)], "tail": [(length - room, length)],
        "head_tail": [(0, head_part), (length - (room - head_part), length)],
        "windows": [(s, min(s + room, length)) for s in starts]}
evidence_at = int(test_docs["evidence_start"][row]) - 1  # text coordinates
fig, ax = plt.subplots(figsize=(9, 2.6))
for y, (name, spans) in enumerate(kept.items()):
    for k, (a, b) in enumerate(spans):
        offset = 0.12 * (k % 2) if name == "windows" else 0  # stagger the windows
        ax.barh(y + offset, b - a, left=a, height=0.35, color=f"C{y}", alpha=0.7)
ax.axvspan(evidence_at, evidence_at + 6, color="black", alpha=0.25, label="evidence")
ax.set_yticks(range(len(kept)), list(kept))
ax.set_xlabel("token position in the document")
ax.set_title(f"What each strategy reads of one {length}-token document")
ax.legend(loc="lower right")
plt.show()

# %% [markdown]
# *What to see:* the head and head+tail keep this document's evidence only if it sits in
# their first tokens, the tail only if it sits in the last ones; the windows (staggered
# so their overlaps show) cover every token, some twice.
#
# ## Fine-tuning one model per strategy
#
# As Sun et al. did, each truncation gets its own fine-tuned model: the same pre-trained
# checkpoint, 300 steps of 32 rows. For the windows, every window of a training document
# inherits the document's label, although most windows hold no evidence; so that the
# model already knows what to look for, the window model starts from the head+tail one
# and gets 200 more steps on windows. At test time its window logits are pooled per
# document, by their mean or by each class's maximum.

# %%
def fine_tune(dataset, steps, start=None):
    """A copy of the pre-trained model (or of `start`), fine-tuned on `dataset`."""
    torch.manual_seed(seed)  # the same classifier initialisation for every strategy
    model = minibert.BertForSequenceClassification.from_pretrained(
        directory, num_labels=2, **no_dropout)
    if start is not None:
        model.load_state_dict(start.state_dict())
    train(model, long_text.model_columns(dataset), steps=steps, lr=1e-3, batch_size=32,
          warmup_steps=steps // 10, seed=seed, progress=False, device=device)
    return model


@torch.no_grad()
def logits_of(model, dataset):
    """Each row's logits, (N, 2)."""
    inputs = [dataset[k].to(device) for k in ("input_ids", "attention_mask")]
    return model(*inputs).logits.cpu()


models = {keep: fine_tune(data.truncate(train_docs, max_length, keep), 300)
          for keep in strategies}
train_windows, _ = long_text.sliding_windows(train_docs, max_length, stride)
models["windows"] = fine_tune(train_windows, 200, start=models["head_tail"])

# %%
predictions = {keep: logits_of(models[keep], truncated[keep]).argmax(-1)
               for keep in strategies}
window_logits = logits_of(models["windows"], windows)  # (W, 2)
for how in long_text.POOLINGS:
    pooled = long_text.pool_logits(window_logits, window_document, len(test_docs), how)
    predictions[f"windows, {how}"] = pooled.argmax(-1)

positions = np.array([e["position"] for e in test_docs.examples])
accuracy = {name: {where: (predicted == test_docs["labels"])[positions == where]
                   .float().mean().item() for where in data.EVIDENCE_POSITIONS}
            for name, predicted in predictions.items()}
print(f"{'strategy':16s}"
      + "".join(f"{where:>11s}" for where in data.EVIDENCE_POSITIONS))
for name, by_position in accuracy.items():
    print(f"{name:16s}" + "".join(f"{a:11.2f}" for a in by_position.values()))

# %%
fig, ax = plt.subplots(figsize=(9, 3.8))
width = 0.8 / len(accuracy)
for k, (name, by_position) in enumerate(accuracy.items()):
    x = np.arange(3) + (k - (len(accuracy) - 1) / 2) * width
    ax.bar(x, list(by_position.values()), width=width, label=name)
ax.axhline(0.5, color="gray", linestyle="--", label="chance")
ax.set_xticks(range(3), [f"evidence at the {w}" for w in data.EVIDENCE_POSITIONS])
ax.set_ylabel("test accuracy")
ax.set_ylim(0, 1.3)
ax.set_title(f"Documents of 80-160 tokens, a model that reads {max_length}")
ax.legend(ncol=3, fontsize=8, loc="upper center")
plt.show()

# %% [markdown]
# *What to see:* each truncation is right exactly where it keeps the evidence and at
# chance elsewhere: the head only on beginning-evidence documents, the tail only on
# end-evidence ones, head+tail on both but not on the middle. The windows, pooled by the
# mean or the max, get every position right, the max at least as well as the mean.
#
# ## What it costs
#
# Truncation reads `max_length` tokens a document whatever its length. Windows read
# every window, [CLS] and [SEP] included; `long_text.window_cost` adds them up from the
# formula above, which must match the tokens actually fed to the model. Attention's
# work grows with the square of each row's length, so it is also worth comparing with
# reading each document in one piece (had the position table been long enough).

# %%
text_lengths = (test_docs["attention_mask"].sum(dim=1) - 2).tolist()
tokens_read = {keep: int(truncated[keep]["attention_mask"].sum())
               for keep in strategies}
tokens_read["windows"] = int(windows["attention_mask"].sum())
expected_windows = sum(long_text.window_cost(n, max_length, stride)
                       for n in text_lengths)
window_rows = windows["attention_mask"].sum(dim=1)
attention_pairs = {"truncation": len(test_docs) * max_length ** 2,
                   "windows": int((window_rows ** 2).sum()),
                   "whole document": sum((n + 2) ** 2 for n in text_lengths)}
print("tokens read:", tokens_read, "| by the window formula:", expected_windows)
print("windows per document:", len(windows) / len(test_docs))
print("attention pairs (sum over rows of n^2):", attention_pairs)

# %% [markdown]
# *What to see:* the windows read several times more tokens than a truncation, exactly as
# the formula says, but their attention work stays well below reading each document in
# one piece, because $n^2$ is paid per window.
#
# ## Inside the pooling
#
# Move the slider over nine test documents, three for each evidence position. Each bar
# is one window's vote, the logit of "positive" minus that of "negative"; the window
# holding the evidence is outlined in red. The last two bars are the document's pooled
# votes.

# %%
margins = window_logits[:, 1] - window_logits[:, 0]  # (W,): > 0 votes positive
pooled_votes = {how: long_text.pool_logits(window_logits, window_document,
                                           len(test_docs), how)
                for how in long_text.POOLINGS}
shown = [r for where in data.EVIDENCE_POSITIONS
         for r in np.flatnonzero(positions == where)[:3].tolist()]


def render_document(r):
    rows = torch.nonzero(window_document == r).flatten()
    votes = margins[rows].tolist()
    holds_evidence = (windows["evidence_start"][rows] >= 0).tolist()
    pooled = [float(pooled_votes[how][r, 1] - pooled_votes[how][r, 0])
              for how in ("mean", "max")]
    fig, ax = plt.subplots(figsize=(7, 3))
    colors = ["C0"] * len(votes) + ["C2", "C3"]
    edges = ["red" if e else "none" for e in holds_evidence] + ["none", "none"]
    ax.bar(range(len(votes) + 2), votes + pooled, color=colors, edgecolor=edges,
           linewidth=2.5)
    ax.set_xticks(range(len(votes) + 2),
                  [f"w{k}" for k in range(len(votes))] + ["mean", "max"])
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("logit(positive) - logit(negative)")
    document = test_docs.examples[r]
    ax.set_title(f"evidence at the {document['position']}, true label "
                 f"{test_docs.label_names[document['label']]}")
    return fig


viz.slider(render_document, shown, label="test document")

# %% [markdown]
# *What to see:* the window holding the evidence casts a strong vote; windows without it
# vote weakly either way. The maximum follows the strongest window; the mean is diluted
# by the weak ones but keeps their sign as long as the evidence window dominates.
#
# ## Claim check

# %%
def acc(name, where):
    return accuracy[name][where]


def near_chance(value):
    return abs(value - 0.5) < 0.2  # 50 documents a cell: chance is 0.5 +- 0.07


# Head only: right when the evidence opens the document, at chance when it ends it.
assert acc("head", "beginning") > 0.9 and near_chance(acc("head", "end"))
assert near_chance(acc("head", "middle"))
# Tail only: the mirror image.
assert acc("tail", "end") > 0.9 and near_chance(acc("tail", "beginning"))
# Head+tail: both ends, but not the middle.
assert min(acc("head_tail", "beginning"), acc("head_tail", "end")) > 0.9
assert near_chance(acc("head_tail", "middle"))
# Sliding windows, pooled either way, handle every position.
for how in long_text.POOLINGS:
    assert all(acc(f"windows, {how}", w) > 0.85 for w in data.EVIDENCE_POSITIONS)
overall = {name: (p == test_docs["labels"]).float().mean().item()
           for name, p in predictions.items()}
assert overall["windows, max"] >= overall["windows, mean"]
# Cost: truncation reads max_length tokens a document; the windows read exactly what
# the window formula says, several times more, yet less attention work than one piece.
assert all(tokens_read[k] == len(test_docs) * max_length for k in strategies)
assert tokens_read["windows"] == expected_windows > 2.5 * tokens_read["head"]
assert attention_pairs["windows"] < attention_pairs["whole document"] / 2
# Every evidence sentence lies whole inside some window (overlap >= its 6 tokens - 1).
assert room - stride >= 5
for r in range(len(test_docs)):
    inside = windows["evidence_start"][window_document == r]
    assert ((inside >= 1) & (inside + 5 <= room)).any()

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"Just truncate to the first 512 tokens."** It is the default of most libraries, and
#   it is right only when the evidence comes early. Here the head model is at chance on
#   every document whose evidence sits at the end, and no amount of training can fix
#   that: the evidence is not in its input.
# - **"Head+tail is best."** It was, on IMDb reviews, whose opinion tends to sit in the
#   first and last sentences. On our documents with the evidence in the middle it is at
#   chance. Which truncation wins is a fact about the data, not about BERT: look at where
#   the label-bearing text sits before choosing.
# - **"Sliding windows solve it."** They see everything, but the model reads several
#   times more tokens, each window's training label may be one its text gives no
#   evidence for, and the windows' votes must be pooled: the maximum trusts the single
#   most confident window, the mean dilutes one sure window among all the unsure ones.
#   For QA the same idea keeps, over all windows, the best span (Google's SQuAD script
#   reads 384-token windows with a stride of 128).
# - **"Just make max_position_embeddings bigger."** The new position rows start
#   untrained, and the attention cost still grows as $n^2$; the long-input models change
#   the attention pattern instead.
# - The 512 counts [CLS] and [SEP]: a single text gets 510 tokens, a pair 509.
#
# ## At scale
#
# Sun et al. {cite}`sun2019finetune` fine-tuned BERT-base on IMDb and Sogou News, whose
# documents are often longer than 512 tokens (test error, %):
#
# | strategy | IMDb | Sogou |
# |---|---|---|
# | head only (510 tokens) | 5.63 | 2.58 |
# | tail only | 5.44 | 3.17 |
# | head + tail (128 + 382) | **5.42** | **2.43** |
# | hierarchical, mean | 5.89 | 2.83 |
# | hierarchical, max | 5.71 | 2.47 |
# | hierarchical, self-attention | 5.49 | 2.65 |
#
# The gaps are tenths of a point, not the jump from chance to perfect of our tiny run,
# because real reviews and news spread their evidence through the text: whatever 510
# tokens you keep hold most of it. Their hierarchical variants (encode every fraction of the text, pool
# the fractions) did not beat head+tail, though they read the whole text. Our documents
# are the opposite extreme, one sentence of evidence at a known place, built to show
# *why* the strategies differ. Long-input models replace full attention by a sliding
# window plus a few global tokens, so the cost grows linearly with the length:
# Longformer {cite}`beltagy2020longformer` and BigBird {cite}`zaheer2020bigbird`, which
# handles sequences up to eight times longer than BERT's on the same hardware.
#
# ## Exercises
#
# 1. Set `stride = 30` (no overlap). Which evidence sentences get cut in two, and what
#    happens to the windows' accuracy? Then try `stride = 15`: what does it cost?
# 2. Train the window model from the pre-trained checkpoint instead of the head+tail one
#    (`start=None`), for the same 200 steps. What happens, and why does a window's
#    inherited label make this hard?
# 3. Make the documents longer (`min_tokens=300, max_tokens=600`). Does mean pooling
#    still keep up with max pooling?
# 4. Put the evidence only at the middle (`positions=("middle",)`) and give head+tail a
#    larger share of the head. Where would you put the cut for real data, and how would
#    you find out?
