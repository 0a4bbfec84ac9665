# %% [markdown]
# # How does BERT tag tokens (NER)?
#
# **BERT 如何给每个词打标签（命名实体识别）？**
#
# Named-entity recognition gives every word a tag: is it the beginning of a person's
# name, inside a city's, or none of these? This chapter shows how word-level tags meet
# WordPiece tokens, fine-tunes the book's small BERT as a tagger, scores it the way NER
# is scored (whole entities, not tokens), and looks at its errors as it trains.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

from collections import Counter, defaultdict

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import data, spans, viz, zoo
from minibert.pretrained import minilm_tokenizer
from minibert.train import train

device = minibert.get_device()
seed = 0
minibert.set_seed(seed)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# Put one linear layer on every token's final vector to score the tags, and train with
# cross-entropy per token. Tags follow the BIO scheme: `B-PER` begins a person's name,
# `I-PER` continues it, `O` is outside any entity. WordPiece may split a word into
# pieces; the word's tag goes on its **first piece**, and the other pieces get the label
# -100, which the loss ignores; at inference the word's tag is read at its first piece
# (this is what BERT's paper does). Score at the **entity** level, as CoNLL does: a
# predicted entity counts only if its type and both of its ends are right. Token accuracy
# looks much better than it is, because most tokens are `O`. Context is what BERT adds
# over a word list: the same word can be a surname or a city.
# ```
#
# ## The reasoning
#
# With $T_i$ the final vector of token $i$ and $K$ tags, the tagger computes
# $p(y_i \mid x) = \operatorname{softmax}(W T_i + b)$, $W \in \mathbb{R}^{K\times H}$, and
# minimises $-\sum_{i \in \mathcal{S}} \log p(y_i^\ast \mid x)$ over the scored tokens
# $\mathcal{S}$: the first piece of each word. Each token's vector has seen the whole
# sentence through self-attention, so its tag can depend on both neighbours; BERT needs no
# left-to-right decoder (nor a CRF, in the original paper) on top.
#
# ## Tags on WordPiece pieces
#
# The synthetic corpus's tokenizer has a token for every word of its language, so it
# never splits a word:

# %%
tokenizer = data.corpus_tokenizer()
words = data.corpus_words()
pieces_per_word = [len(tokenizer.tokenize(w)) for w in words]
print(f"{len(words)} words, the most pieces any word gets: {max(pieces_per_word)}")

# %% [markdown]
# A real vocabulary does split. MiniLM's tokenizer (BERT's uncased 30,522-token
# WordPiece vocabulary) on a real sentence, with its CoNLL-style tags; `word_ids` says
# which word each token comes from, and `spans.first_piece_labels` moves each word's tag
# to its first piece:

# %%
real_words = ("Angela Merkel met Tedros Ghebreyesus in Ouagadougou with "
              "HuggingFace engineers").split()
real_tags = ["B-PER", "I-PER", "O", "B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "O"]
real_tag_ids = {tag: i for i, tag in enumerate(sorted(set(real_tags)))}
encoding = minilm_tokenizer().encode(real_words, is_pretokenized=True)
token_labels = spans.first_piece_labels(encoding.word_ids,
                                        [real_tag_ids[t] for t in real_tags])
for token, word, label in zip(encoding.tokens, encoding.word_ids, token_labels):
    shown = "-100 (ignored)" if label == spans.IGNORE_INDEX else real_tags[word]
    print(f"{token:10s} word {str(word):5s} label {shown}")

# %% [markdown]
# "Ghebreyesus" becomes five pieces; only `g` carries `I-PER`. Why not tag every piece?
# Then long words would weigh more in the loss than short ones, and a word could get two
# different tags from its pieces. (Labelling every piece, `I-` on the continuations, also
# works in practice; what matters is to read the predictions back the same way.)
#
# ## The task
#
# `data.tagging_dataset` gives sentences of the synthetic corpus with BIO tags for five
# kinds of entities. Names of people span two words; some cities too ("new haven"); and
# two surnames are also city names, so "paris" is a `CITY` in "anna lives in paris" but
# `I-PERSON` in "anna paris works as a baker".

# %%
tags = data.TAGS
train_set = data.tagging_dataset(1000, seed=seed, max_length=16)
test_set = data.tagging_dataset(600, seed=seed + 100, max_length=16)
truth = [e["tags"] for e in test_set.examples]
for e in test_set.examples[:3]:
    print(list(zip(e["text"].split(), e["tags"])))
ambiguous = set(data.SURNAMES) & set(data.CITIES)
print("words that are both a surname and a city:", sorted(ambiguous))

# %% [markdown]
# ## A baseline without context
#
# A word list: tag each word with the tag it had most often in the training sentences.

# %%
counts = defaultdict(Counter)
for e in train_set.examples:
    for word, tag in zip(e["text"].split(), e["tags"]):
        counts[word][tag] += 1
lexicon = [[counts[w].most_common(1)[0][0] if w in counts else "O"
            for w in e["text"].split()] for e in test_set.examples]


def word_accuracy(predicted):
    pairs = [(p, t) for ps, ts in zip(predicted, truth) for p, t in zip(ps, ts)]
    return np.mean([p == t for p, t in pairs])


def ambiguous_accuracy(predicted):
    """Accuracy on the words that are both surnames and cities."""
    hits = [p == t for ps, ts, e in zip(predicted, truth, test_set.examples)
            for p, t, w in zip(ps, ts, e["text"].split()) if w in ambiguous]
    return np.mean(hits), len(hits)


baseline = spans.entity_scores(truth, lexicon)
print(f"word list: word accuracy {word_accuracy(lexicon):.3f},"
      f" entity F1 {baseline['f1']:.3f},"
      f" on the ambiguous words {ambiguous_accuracy(lexicon)[0]:.3f}"
      f" ({ambiguous_accuracy(lexicon)[1]} occurrences)")

# %% [markdown]
# ## Fine-tuning the tagger
#
# `BertForTokenClassification` from the pre-trained checkpoint, 250 steps of 32
# sentences. Every 25 steps we read the tags back at each word's first piece
# (`spans.word_predictions`) and score them.

# %%
directory = zoo.corpus_model_directory("tiny", progress=False)
torch.manual_seed(seed)  # the fresh classifier
model = minibert.BertForTokenClassification.from_pretrained(
    directory, num_labels=len(tags), hidden_dropout_prob=0.0,
    attention_probs_dropout_prob=0.0)
snapshots = []  # the predicted tags of every test sentence, at each evaluation


@torch.no_grad()
def evaluate(model):
    inputs = {k: test_set[k].to(device) for k in ("input_ids", "attention_mask")}
    predicted_ids = model(**inputs).logits.argmax(-1).cpu()  # (N, T)
    predicted = [[tags[i] for i in spans.word_predictions(ids.tolist(), gold.tolist())]
                 for ids, gold in zip(predicted_ids, test_set["labels"])]
    snapshots.append(predicted)
    return {"entity F1": spans.entity_scores(truth, predicted)["f1"],
            "word accuracy": word_accuracy(predicted)}


history = train(model, train_set, steps=250, lr=1e-3, batch_size=32, warmup_steps=25,
                eval_fn=evaluate, eval_every=25, seed=seed, progress=False,
                device=device)
final = spans.entity_scores(truth, snapshots[-1])
print("entity-level:", {k: round(v, 3) for k, v in final.items()})
print(f"ambiguous words: {ambiguous_accuracy(snapshots[-1])[0]:.3f}")

# %%
eval_steps = [s + 1 for s in history.eval_steps]
fig, ax = plt.subplots(figsize=(7, 3.6))
ax.plot(eval_steps, history.metric("word accuracy"), marker="o", label="word accuracy")
ax.plot(eval_steps, history.metric("entity F1"), marker="o", label="entity F1")
ax.axhline(baseline["f1"], color="gray", linestyle="--", label="word list, entity F1")
ax.set_xlabel("fine-tuning step (batch of 32)")
ax.set_ylabel("held-out score")
ax.set_ylim(0, 1.02)
ax.set_title("Tagging: word accuracy flatters, entity F1 tells")
ax.legend()
plt.show()

# %% [markdown]
# *What to see:* word accuracy is high from the first evaluation, because most words are
# `O` and easy; entity F1, which needs every word of an entity right, starts far lower
# and catches up only as the model learns the entities' boundaries. By the end the
# tagger beats the word list.
#
# ## The errors, step by step
#
# The slider shows, at each evaluation, the test sentences the tagger still gets wrong
# (up to six), each wrong word with its predicted tag and the true one.

# %%
def errors_at(index):
    """(sentence, [(word, predicted, true)]) for the sentences tagged wrong."""
    wrong = []
    for predicted, true, e in zip(snapshots[index], truth, test_set.examples):
        mistakes = [(w, p, t) for w, p, t in zip(e["text"].split(), predicted, true)
                    if p != t]
        if mistakes:
            wrong.append((e["text"], mistakes))
    return wrong


def render_errors(index):
    wrong = errors_at(index)
    fig, ax = plt.subplots(figsize=(10, 3.6))
    ax.axis("off")
    lines = [f"{len(wrong)} of {len(truth)} sentences have a wrong tag"
             f" (entity F1 {history.metric('entity F1')[index]:.3f})", ""]
    for text, mistakes in wrong[:6]:
        lines.append(text)
        lines.append("      " + ";  ".join(f"'{w}': said {p}, truth {t}"
                                          for w, p, t in mistakes))
    ax.text(0, 1, "\n".join(lines), va="top", family="monospace", fontsize=9)
    ax.set_title(f"after {eval_steps[index]} steps")
    return fig


viz.slider(render_errors, list(range(len(eval_steps))), label="evaluation",
           fmt=lambda i: f"step {eval_steps[i]}")

# %%
def error_kinds(index):
    """How many wrong words were missed entities, spurious ones, or entities with the
    wrong kind or the wrong B/I prefix."""
    kinds = Counter()
    for _, mistakes in errors_at(index):
        for _, predicted, true in mistakes:
            if predicted == "O":
                kinds["missed"] += 1
            elif true == "O":
                kinds["spurious"] += 1
            elif predicted[2:] != true[2:]:
                kinds["wrong kind"] += 1
            else:
                kinds["wrong B/I"] += 1
    return kinds


for index, step in enumerate(eval_steps):
    print(f"step {step:3d}: wrong words {dict(error_kinds(index))}")

# %% [markdown]
# *What to see:* at first the tagger says `O` almost everywhere, so most errors are
# missed entities. Next come wrong boundaries (`B-` where `I-` belongs, the second word
# of a name or a two-word city) and wrong kinds. The last errors to go, when any are
# left, are the ambiguous surnames: "paris" or "lima" inside a person's name, read as a
# city. The word list gets those wrong about one time in three; the tagger learns to
# resolve them from their neighbours.
#
# ## Claim check

# %%
# The corpus tokenizer never splits a word; MiniLM's does, and the first-piece rule
# leaves exactly one scored token a word.
assert max(pieces_per_word) == 1
assert len(encoding.tokens) > len(real_words) + 2
assert sum(label != spans.IGNORE_INDEX for label in token_labels) == len(real_words)
# The word list: good word accuracy, entity F1 below it, weak on the ambiguous words.
assert word_accuracy(lexicon) > baseline["f1"]
assert ambiguous_accuracy(lexicon)[0] < 0.8
# Early in fine-tuning, word accuracy flatters: far above entity F1.
f1_curve, accuracy_curve = history.metric("entity F1"), history.metric("word accuracy")
assert accuracy_curve[0] > f1_curve[0] + 0.1
# By the end: entity F1 above the word list's, and the ambiguous words resolved.
assert f1_curve[-1] > baseline["f1"] + 0.01
assert ambiguous_accuracy(snapshots[-1])[0] > 0.9
# Errors fall as training goes on: first mostly missed entities; what is left at the
# end (if anything) is ambiguous words.
first_kinds = error_kinds(0)
assert first_kinds["missed"] == max(first_kinds.values())
assert len(errors_at(len(eval_steps) - 1)) < len(errors_at(0)) / 5
assert all(w in ambiguous for _, m in errors_at(len(eval_steps) - 1) for w, _, _ in m)

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"Put a softmax on each token's output."** Yes, but on which tokens? WordPiece
#   tokens are not words. The labels must be aligned: one scored token a word (its
#   first piece), -100 elsewhere, and predictions read back at the same pieces. Getting
#   this wrong quietly shifts every tag after the first split word.
# - **"The tagger is 99% accurate."** Per token, perhaps: most tokens are `O`. NER is
#   scored per entity (CoNLL's `conlleval`, or `seqeval`); a two-word name with one wrong
#   tag is a miss, and the word-level score can look fine while the entity score does
#   not (the curves above; `spans.entity_scores` is that scorer).
# - **"A CRF on top is needed for valid BIO sequences."** BERT's paper tags without one;
#   an `I-X` after `O` is read as the start of an entity, as `conlleval` does
#   (`spans.bio_entities`). Many BERT taggers add a CRF anyway; it is an option, not a
#   requirement.
# - **What BERT adds** over a gazetteer is context: "paris" after "anna" is part of a
#   name. The word list cannot tell; the tagger learns to.
#
# ## At scale
#
# On CoNLL-2003 English NER {cite}`tjong2003conll` (persons, locations, organisations,
# miscellaneous), BERT-base fine-tuned this way reaches about 95.4 F1 on the development
# set in the ablation of its paper {cite}`devlin2019bert`, scored per entity. The paper
# also feeds frozen BERT features to a two-layer BiLSTM instead of fine-tuning, and the
# best such combination comes within a few tenths of a point (their Table 7): for
# tagging, the
# pre-trained token vectors already hold most of what is needed. Our synthetic entities
# are far more regular than newswire, which is why the tiny tagger ends near perfect.
#
# ## Exercises
#
# 1. Label every piece instead of the first one (`I-X` on continuation pieces). Train a
#    tagger with a tokenizer that splits words (e.g. `data.load_text_corpus` trains a
#    small WordPiece vocabulary) and compare.
# 2. Make the word list smarter: tag a word with the most frequent tag *given the
#    previous word*. How close does it get to the tagger on the ambiguous words?
# 3. Start the tagger from random weights. Does pre-training matter on this task? Why
#    might it matter less than for the classification chapter?
# 4. Write the "strict" reading of BIO (an `I-X` after `O` is an error, not an entity)
#    and compare the two scores early in training.
