# %% [markdown]
# # How does BERT answer questions (span extraction)?
#
# **BERT 如何做抽取式问答（从原文中找出答案片段）？**
#
# In extractive question answering (SQuAD-style) the answer is a span of the given text.
# This chapter fine-tunes the book's small pre-trained BERT to point at that span, opens
# the two vectors that do the pointing, decodes the best valid span, scores the answers
# as SQuAD does, and looks at what the answer tokens attend to in the question.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import data, spans, viz, zoo
from minibert.train import train

device = minibert.get_device()
seed = 0
minibert.set_seed(seed)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# Feed `[CLS] question [SEP] context [SEP]` (segments 0 and 1). Fine-tuning adds two
# vectors, a start vector $S$ and an end vector $E$ (one linear layer with two outputs):
# token $i$'s start score is $S \cdot T_i$ and its end score $E \cdot T_i$, where $T_i$
# is its final hidden vector; a softmax over positions turns each into a distribution,
# and the loss is the cross-entropy of the true start plus that of the true end. At
# inference, pick the span $(i, j)$ with the highest $s_i + e_j$ among **valid** spans:
# $j \ge i$, at most a few tokens long, inside the context. Taking the two argmaxes
# separately can give an end before the start or a span in the question. Answers are
# scored as text: exact match and word-overlap F1. Contexts longer than the model's
# window are read in overlapping windows, keeping the best span over all of them; for
# unanswerable questions (SQuAD 2.0) the [CLS] position stands for "no answer".
# ```
#
# ## The reasoning
#
# With $T_i \in \mathbb{R}^H$ the last layer's vector at token $i$,
#
# $$P_\text{start}(i) = \frac{e^{S\cdot T_i}}{\sum_k e^{S\cdot T_k}}, \qquad
# P_\text{end}(j) = \frac{e^{E\cdot T_j}}{\sum_k e^{E\cdot T_k}}, \qquad
# \mathcal{L} = -\tfrac12\left(\log P_\text{start}(i^\ast) + \log P_\text{end}(j^\ast)\right).$$
#
# A span's score is $\log P_\text{start}(i) + \log P_\text{end}(j)$, which up to a
# constant is $s_i + e_j$; so the best span maximises $s_i + e_j$ over the valid pairs, an
# $O(T \cdot L_\text{max})$ search. Nothing in the two softmaxes ties the end to the
# start: the model learns where answers begin and where they end, and the decoder makes
# the pair consistent.
#
# ## The task
#
# Each row is a question about one of two entities of a synthetic document, and the
# answer is a value the document states: "where does the fox live ?" over a context that
# also says where the *other* animal lives (a distractor of the right type). Rows hold 64
# tokens, the length the model was pre-trained on.

# %%
train_set = data.qa_dataset(2000, seed=seed, max_length=64)
test_set = data.qa_dataset(300, seed=seed + 100, max_length=64)
tokenizer = test_set.tokenizer
row = 0
example = test_set.examples[row]
gold = (int(test_set["start_positions"][row]), int(test_set["end_positions"][row]))
tokens = [tokenizer.vocab[i] for i in test_set["input_ids"][row].tolist()]
print("question:", example["question"])
print("context: ", example["context"])
print("answer:  ", example["answer"], "| tokens", gold, "=",
      tokens[gold[0]:gold[1] + 1])

# %% [markdown]
# ## The start and end vectors
#
# `BertForQuestionAnswering` adds `qa_outputs`, a linear layer from $H$ to 2: its weight
# rows are $S$ and $E$ (plus a bias each). We check that the model's start scores are
# exactly $S \cdot T_i + b_S$.

# %%
directory = zoo.corpus_model_directory("tiny", progress=False)
no_dropout = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
torch.manual_seed(seed)  # the fresh qa_outputs layer
model = minibert.BertForQuestionAnswering.from_pretrained(directory, **no_dropout)
model.to(device)
start_vector, end_vector = model.qa_outputs.weight  # each (H,)
print("S and E:", tuple(start_vector.shape), tuple(end_vector.shape),
      "| new weights:", model.fresh_head_keys)

inputs = {k: test_set[k].to(device)
          for k in ("input_ids", "attention_mask", "token_type_ids")}
with torch.no_grad():
    hidden = model.bert(**inputs).last_hidden_state  # (N, T, H)
    start_by_hand = hidden @ start_vector + model.qa_outputs.bias[0]  # (N, T)
    untrained = model(**inputs)
difference = (start_by_hand - untrained.start_logits).abs().max().item()
print("largest difference:", difference)

# %% [markdown]
# ## Fine-tuning
#
# 300 steps of 32 questions, warm-up then linear decay. We also keep the attention maps of
# the model before fine-tuning, to compare later.

# %%
with torch.no_grad():
    attention_before = model.bert(**inputs, output_attentions=True).attentions
history = train(model, train_set, steps=300, lr=3e-3, batch_size=32, warmup_steps=30,
                seed=seed, progress=False, device=device)
print(f"training loss: first 20 steps {np.mean(history.loss[:20]):.2f},"
      f" last 20 {np.mean(history.loss[-20:]):.2f}")
with torch.no_grad():
    output = model(**inputs, output_attentions=True)
start_logits, end_logits = output.start_logits.cpu(), output.end_logits.cpu()

# %% [markdown]
# ## Decoding the span
#
# `spans.context_mask` marks where an answer may lie (segment 1, real tokens, not [SEP]).
# `spans.best_spans` scores every valid pair $(i, j)$ with $s_i + e_j$ (at most
# `max_answer_length` tokens: the longest answers here, two-word names, are two tokens)
# and keeps the best. `spans.naive_spans` takes the two argmaxes apart, for comparison.

# %%
max_answer_length = 5
allowed = spans.context_mask(test_set["input_ids"], test_set["token_type_ids"],
                             test_set["attention_mask"], tokenizer.sep_id)
best = spans.best_spans(start_logits, end_logits, allowed, max_answer_length)
naive = spans.naive_spans(start_logits, end_logits)


def span_text(r, start, end):
    return tokenizer.decode(test_set["input_ids"][r, start:end + 1].tolist())


def is_valid(r, start, end):
    return (start <= end < start + max_answer_length and bool(allowed[r, start])
            and bool(allowed[r, end]))


truths = [e["answer"] for e in test_set.examples]
predicted = [span_text(r, s.start, s.end) for r, s in enumerate(best)]
naive_valid = [is_valid(r, s, e) for r, (s, e) in enumerate(naive)]
naive_text = [span_text(r, s, e) if ok else "" for r, ((s, e), ok)
              in enumerate(zip(naive, naive_valid))]
def squad_scores(answers):
    """Mean exact match and F1 of some answers against the true ones."""
    pairs = list(zip(answers, truths))
    return {"exact match": np.mean([spans.exact_match(p, t) for p, t in pairs]),
            "F1": np.mean([spans.f1_score(p, t) for p, t in pairs])}


scores = {"best valid span": squad_scores(predicted),
          "two argmaxes": squad_scores(naive_text)}
for name, values in scores.items():
    print(f"{name:16s}", "  ".join(f"{k} {v:.3f}" for k, v in values.items()))
print(f"two argmaxes give no valid span for {1 - np.mean(naive_valid):.1%}"
      " of the questions")
same_place = np.mean([(s.start, s.end) == (int(a), int(b)) for s, a, b in zip(
    best, test_set["start_positions"], test_set["end_positions"])])
print(f"best span at the labelled tokens: {same_place:.3f}")

# %% [markdown]
# Exact match counts more answers right than the labelled positions do: the documents
# mention a fact again later ("the brush goes back to the drawer after work"), and the
# second mention is the same text. SQuAD compares text for exactly this reason, against
# several reference answers.
#
# Here are all the span scores of one question, the valid ones in colour:

# %%
context_tokens = allowed[row].nonzero().flatten()
first, last = int(context_tokens[0]), int(context_tokens[-1])
table = spans.span_scores(start_logits[row], end_logits[row], allowed[row],
                          max_answer_length)[first:last + 1, first:last + 1]
fig, ax = plt.subplots(figsize=(7, 6))
image = ax.imshow(table.numpy(), cmap="viridis")
labels = tokens[first:last + 1]
ax.set_xticks(range(len(labels)), labels, rotation=90, fontsize=6)
ax.set_yticks(range(len(labels)), labels, fontsize=6)
ax.set_xlabel("end token j")
ax.set_ylabel("start token i")
ax.set_title(f"s_i + e_j for '{example['question']}' (white: invalid)")
fig.colorbar(image, ax=ax, shrink=0.7)
plt.show()

# %% [markdown]
# *What to see:* only a thin band along the diagonal is valid (the end at or after the
# start, at most five tokens); its bright cells are the candidate answers, and the
# decoder keeps the brightest. Every cell below the diagonal is invalid, however high its
# two scores would add up.
#
# ## What goes wrong
#
# The wrong answers are mostly of the right kind: a place for "where", a person for
# "who", often the other entity's value.

# %%
values_of = {relation: values for relations in data.RELATIONS.values()
             for relation, (values, *_) in relations.items()}
named = {"PERSON": lambda t: len(t.split()) == 2 and t.split()[0] in data.FIRST_NAMES,
         "CITY": lambda t: t in data.CITIES, "ANIMAL": lambda t: t in data.ANIMALS}


def right_kind(text, relation):
    """Is the text a possible value of the relation the question asks about?"""
    values = values_of[relation]
    return named[values](text) if isinstance(values, str) else text in values


wrong = [r for r in range(len(test_set))
         if not spans.exact_match(predicted[r], truths[r])]
kind_ok = [right_kind(predicted[r], test_set.examples[r]["relation"]) for r in wrong]
print(f"{len(wrong)} wrong answers, {np.mean(kind_ok):.0%} of them of the right kind")
for r in wrong[:5]:
    print(f"  {test_set.examples[r]['question']:32s} said '{predicted[r]}',"
          f" truth '{truths[r]}'")

# %% [markdown]
# The model has learned *what kind* of answer each question wants faster than *whose*
# value it is: binding a value to the right entity across a sentence is the harder half,
# for a two-layer model fine-tuned for 300 steps.
#
# ## Where the answer tokens look
#
# Each layer's attention tells how much a token draws on the question. Before
# fine-tuning (the pre-trained model, which never saw a question) and after, the share of
# attention that context tokens, and the answer's first token in particular, give to the
# question's tokens:

# %%
question_tokens = ((test_set["token_type_ids"] == 0) & (test_set["attention_mask"] == 1)
                   & (test_set["input_ids"] != tokenizer.cls_id)
                   & (test_set["input_ids"] != tokenizer.sep_id))  # (N, T)
answer_start = test_set["start_positions"]  # (N,)


def share_on_question(attentions):
    """Per layer: attention mass on the question, from context tokens and from the
    answer's first token (averaged over heads and questions)."""
    shares = []
    for weights in attentions:
        averaged = weights.mean(1).cpu()  # (N, T, T), over the heads
        to_question = (averaged * question_tokens[:, None, :]).sum(-1)  # (N, T)
        from_context = ((to_question * allowed).sum(1) / allowed.sum(1)).mean().item()
        from_answer = to_question[torch.arange(len(test_set)), answer_start]
        from_answer = from_answer.mean().item()
        shares.append({"context": from_context, "answer start": from_answer})
    return shares


shares = {"before": share_on_question(attention_before),
          "after": share_on_question(output.attentions)}
uniform = (question_tokens.sum(1) / test_set["attention_mask"].sum(1)).mean().item()
for when, per_layer in shares.items():
    for layer, values in enumerate(per_layer):
        print(f"{when:6s} fine-tuning, layer {layer}:",
              "  ".join(f"{k} {v:.3f}" for k, v in values.items()))
print(f"the question's share of the tokens: {uniform:.3f}")

# %% [markdown]
# The slider walks through held-out questions. Top: each token's start and end scores
# (the question shaded grey, the true answer in green, the chosen span in red). Bottom:
# how the chosen span's first token spreads its last-layer attention over the question.

# %%
last_layer = output.attentions[-1].mean(1).cpu()  # (N, T, T), averaged over heads


def render_question(r):
    length = int(test_set["attention_mask"][r].sum())
    words = [tokenizer.vocab[i] for i in test_set["input_ids"][r, :length].tolist()]
    question_end = words.index("[SEP]")
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(11, 5.2),
                                      gridspec_kw={"height_ratios": [2, 1]})
    x = np.arange(length)
    top.bar(x - 0.2, start_logits[r, :length], width=0.4, label="start score s_i")
    top.bar(x + 0.2, end_logits[r, :length], width=0.4, label="end score e_i")
    top.axvspan(-0.5, question_end + 0.5, color="gray", alpha=0.15)
    a, b = int(test_set["start_positions"][r]), int(test_set["end_positions"][r])
    top.axvspan(a - 0.5, b + 0.5, color="green", alpha=0.25, label="true answer")
    top.axvspan(best[r].start - 0.5, best[r].end + 0.5, fill=False, edgecolor="red",
                linewidth=2, label="chosen span")
    top.set_xticks(x, words, rotation=90, fontsize=7)
    top.set_ylabel("score")
    top.legend(fontsize=7, ncol=4, loc="lower left")
    top.set_title(f"{test_set.examples[r]['question']}  ->  '{predicted[r]}'"
                  f" (truth '{truths[r]}')")
    attention = last_layer[r, best[r].start, 1:question_end]
    bottom.bar(range(1, question_end), attention)
    bottom.set_xticks(range(1, question_end), words[1:question_end], fontsize=8)
    bottom.set_ylabel("attention")
    bottom.set_title(f"last layer: from '{words[best[r].start]}' to the question",
                     fontsize=9)
    fig.tight_layout()
    return fig


viz.slider(render_question, list(range(8)), label="held-out question")

# %% [markdown]
# *What to see:* after fine-tuning the start and end scores peak on the answer (or on a
# later mention of it) and on the distractor of the same kind; the decoder keeps the
# highest valid pair. Before fine-tuning, the context barely looks at the question:
# pre-training only ever saw two consecutive text segments, never a question. After
# fine-tuning the context tokens, the answer included, give the question several times
# more attention, in every layer: the only way to tell the fox's home from the owl's is to
# read which animal was asked about.
#
# ## Claim check

# %%
# S and E are the rows of qa_outputs; the start scores are S . T_i + b.
assert torch.allclose(start_by_hand, untrained.start_logits, atol=1e-5)
assert sorted(model.fresh_head_keys) == ["qa_outputs.bias", "qa_outputs.weight"]
# Fine-tuning learned: the loss fell by more than half.
assert np.mean(history.loss[-20:]) < 0.5 * np.mean(history.loss[:20])
# The decoder's spans are all valid; the two argmaxes often are not.
assert all(is_valid(r, s.start, s.end) for r, s in enumerate(best))
assert 1 - np.mean(naive_valid) > 0.05
# The best valid span answers more questions than the two argmaxes.
best_em, naive_em = (scores[k]["exact match"] for k in scores)
assert best_em > naive_em + 0.03
assert scores["best valid span"]["F1"] >= best_em
# Text-level exact match counts repeated mentions: above position-level accuracy.
assert best_em > same_place
# Most wrong answers are of the right kind (the distractor problem).
assert np.mean(kind_ok) > 0.6
# Fine-tuning makes the context, and the answer's first token, look at the question:
# several times more attention in every layer; before, less than the question's share
# of the tokens.
for before, after in zip(shares["before"], shares["after"]):
    assert after["context"] > 3 * before["context"]
    assert after["answer start"] > 3 * before["answer start"]
assert all(layer["context"] < uniform for layer in shares["before"])

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"Take the token with the highest start probability and the one with the highest
#   end probability."** Taken apart, the two argmaxes give no valid span for a sizeable
#   share of the questions here (an end before the start, or a token of the question),
#   and the best valid span answers clearly more of them. The answer is the best *pair*.
# - **"The span with the highest probability"** also needs a length limit and the
#   context mask: BERT's SQuAD code caps answers at 30 tokens and skips spans outside the
#   passage.
# - **Scoring by positions** undercounts: the same answer text may appear twice. SQuAD
#   scores text, with exact match and F1 after normalising case, punctuation and
#   articles; `spans.exact_match` and `spans.f1_score` do the same.
# - **Long passages** do not fit: split them into windows with a stride (the next
#   chapters), score every window, keep the best span over all windows.
# - **Unanswerable questions** (SQuAD 2.0): the span $(0, 0)$ at [CLS] means "no answer";
#   BERT answers only when the best span's score beats the [CLS] score by a threshold
#   tuned on the development set.
#
# ## At scale
#
# On SQuAD v1.1 {cite}`rajpurkar2016squad` (100,000 questions on Wikipedia paragraphs),
# fine-tuned BERT-base reaches an F1 of 88.5 on the development set
# {cite}`devlin2019bert`, with the same two vectors and the same decoding. Our tiny model,
# pre-trained for under a minute and fine-tuned for 300 steps, answers far fewer, and its
# errors show the hard part in miniature: finding an answer of the right type is easy,
# binding it to the entity the question names is not.
#
# ## Exercises
#
# 1. Set `max_answer_length = 1`. Which answers can no longer be found?
# 2. Start from random weights (`minibert.BertForQuestionAnswering(config)` with the
#    checkpoint's config) and fine-tune the same 300 steps. How much does pre-training buy
#    on this task?
# 3. Train for 600 steps. Does the share of right-kind errors fall, or only their number?
# 4. Make the model abstain: treat the [CLS] span as "no answer" and ask questions about
#    an entity that is not in the document. What threshold would you pick?
