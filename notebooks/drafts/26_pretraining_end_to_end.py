# %% [markdown]
# # Pre-training a mini-BERT end to end
#
# **从零预训练一个迷你 BERT：语料、目标、初始化、优化器和学习率，各是怎么做的？**
#
# Each piece of BERT's pre-training recipe gets its own chapter elsewhere in this book. Here
# they are put together once, in the order they happen: a document-level corpus cut into
# sentence pairs, the masked-LM and next-sentence losses added together, BERT's
# initialisation, AdamW with warm-up and linear decay, GELU. The model is the book's shared
# default: a 2-layer, 64-wide BERT pre-trained on the synthetic corpus, trained once and
# cached, so this chapter reads its record instead of training it again. At the end we ask
# it to fill in blanks in sentences it has never seen.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import math

import matplotlib.pyplot as plt
import numpy as np
import torch

import minibert
from minibert import data, train, viz, zoo
from minibert.data import RELATIONS

device = minibert.get_device()
minibert.set_seed(0)
SEED = 0  # the default model's seed (another seed trains a model of its own)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# Take a corpus of whole documents, so that sentences keep their neighbours. Cut it into
# rows `[CLS] A [SEP] B [SEP]`, where B is A's true continuation half of the time and a
# segment from another document otherwise. Choose 15% of the tokens to predict (80% of
# them become [MASK], 10% a random token, 10% stay). The loss is the mean cross-entropy
# over the chosen tokens plus the cross-entropy of the IsNext/NotNext classifier on [CLS].
# Initialise every weight matrix from a normal of standard deviation 0.02 truncated at two
# standard deviations, biases at zero and LayerNorm at one; use GELU in the feed-forward
# blocks; train with AdamW (weight decay on matrices only), the learning rate rising
# linearly during a warm-up and then falling linearly to zero. Check the result against
# baselines that ignore context: the tiny model here predicts masked words far more often
# than always guessing the commonest token would, and tells IsNext from NotNext far above
# chance. On unseen sentences it knows *which kind* of word fits a blank (a habitat, a
# taste, a job); the exact word, where the sentence states a new fact, it cannot know,
# and it does not pretend to.
# ```
#
# ## 1. The corpus: documents, not shuffled sentences
#
# BERT's authors insist on a document-level corpus (BooksCorpus and Wikipedia) rather than
# a shuffled list of sentences, for two reasons: a row should hold long stretches of
# running text, and next sentence prediction needs to know which sentence really comes
# next. The book's synthetic corpus is made of documents of consecutive sentences about
# one entity of one topic (and a second entity of the same topic as a distractor):

# %%
tokenizer = data.corpus_tokenizer()
record = zoo.training_record("tiny", seed=SEED)  # the shared default model, cached
recipe = zoo.Recipe(**record["recipe"])
documents = data.generate_corpus(recipe.num_documents, seed=recipe.seed)
print(recipe)
print(f"{len(documents)} documents, vocabulary of {tokenizer.vocab_size} tokens")
print(documents[0].text)

# %% [markdown]
# `pretraining_pairs` walks through each document as Google's `create_pretraining_data`
# does: it gathers consecutive sentences up to the row length, splits them at a random
# sentence boundary into A and B, and half the time swaps B for a span of another
# document (label NotNext). The segment ids tell the model which tokens are A (0) and
# which are B (1).

# %%
pairs = data.pretraining_pairs(documents[:3], tokenizer, recipe.max_length,
                               recipe.negatives, seed=recipe.seed)
for example in pairs.examples[:4]:
    label = pairs.label_names[example["next_sentence_label"]]
    print(f"{label:8s} A: {example['text_a']}\n{'':8s} B: {example['text_b']}\n")
row = pairs["input_ids"][0]  # (T,)
print("ids:     ", row[:16].tolist())
print("segments:", pairs["token_type_ids"][0][:16].tolist())

# %% [markdown]
# The masking happens later, afresh for every batch (so a row is masked differently each
# time it comes back), in `minibert.masking`; the chapter on the mask rate looks at it
# closely.
#
# ## 2. The model and its initialisation
#
# The default model is `preset("tiny")`: 2 layers, hidden size 64, 2 heads, feed-forward
# width 256, GELU. BERT initialises every linear and embedding weight from a normal
# distribution with standard deviation `initializer_range` = 0.02, **truncated** at two
# standard deviations (Google's TensorFlow code uses `truncated_normal_initializer`),
# biases at zero, LayerNorm gains at one. Here is a freshly built model's histogram:

# %%
config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, **zoo.ZOO_CONFIG)
torch.manual_seed(recipe.seed)
fresh = minibert.BertForPreTraining(config)
matrices = {name: p.detach() for name, p in fresh.named_parameters() if p.dim() == 2}
weights = torch.cat([p.flatten() for p in matrices.values()])  # every matrix entry
std = config.initializer_range


def normal_cdf(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def truncated_std(sigma, cut=2.0):
    """Standard deviation of N(0, sigma^2) truncated to [-cut*sigma, cut*sigma]."""
    density = math.exp(-cut**2 / 2) / math.sqrt(2 * math.pi)
    mass = normal_cdf(cut) - normal_cdf(-cut)
    return sigma * math.sqrt(1 - 2 * cut * density / mass)


print(f"{len(matrices)} weight matrices, {weights.numel():,} numbers")
print(f"hidden activation: {config.hidden_act}")
print(f"range [{weights.min():.4f}, {weights.max():.4f}], bounds ±{2 * std}")
print(f"std {weights.std():.5f}; a normal truncated at 2 sd: {truncated_std(std):.5f}")
layer_norm_gains = [p for n, p in fresh.named_parameters() if "LayerNorm.weight" in n]
print("LayerNorm gains all one:", all(bool((g == 1).all()) for g in layer_norm_gains))

# %%
fig, ax = plt.subplots(figsize=(7, 3.2))
ax.hist(weights.cpu().numpy(), bins=80, density=True, color="tab:blue", alpha=0.7,
        label="fresh model's weights")
grid = np.linspace(-3 * std, 3 * std, 200)
ax.plot(grid, np.exp(-grid**2 / (2 * std**2)) / (std * np.sqrt(2 * np.pi)),
        color="gray", linestyle="--", label="untruncated N(0, 0.02²)")
for bound in (-2 * std, 2 * std):
    ax.axvline(bound, color="tab:red", linewidth=1)
ax.set_xlabel("weight value")
ax.set_ylabel("density")
ax.set_title("BERT's initialisation: normal(0, 0.02) cut at ±2 sd")
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# *What to see:* nothing lies beyond ±0.04 (red lines); the mass that would have been in
# the tails is spread over the rest, so the histogram sits a little above the dashed
# normal, and the actual spread is about 0.88 × 0.02, not 0.02.
#
# ## 3. The objective, the optimiser and the learning rate
#
# For a batch with chosen positions $\mathcal{M}$ (labels ≠ −100) and NSP labels $y$,
#
# $$\mathcal{L} = \underbrace{-\frac{1}{|\mathcal{M}|}\sum_{i\in\mathcal{M}}
#   \log p_\theta(x_i \mid \tilde{x})}_{\text{masked LM}}
#   \;\underbrace{-\;\frac{1}{B}\sum_{b} \log p_\theta(y_b \mid \tilde{x}_b)}_{\text{NSP}} ,$$
#
# a plain sum of the two means, as the paper says. `minibert.train.train` minimises it with
# AdamW ($\beta$ = 0.9, 0.999), weight decay 0.01 on weight matrices and embeddings but
# not on biases and LayerNorm parameters, gradient clipping at norm 1, and BERT's
# schedule: linear warm-up to the peak, then linear decay to zero.

# %%
history = record["history"]
groups = train.parameter_groups(fresh, weight_decay=0.01)
decayed, not_decayed = (sum(p.numel() for p in g["params"]) for g in groups)
print(f"weight decay on {decayed:,} parameters, none on {not_decayed:,}")
schedule = train.lr_schedule(recipe.schedule, recipe.lr, recipe.steps,
                             recipe.warmup_steps)
peak_step = int(np.argmax(history["lr"]))
print(f"peak lr {max(history['lr']):.4f} at step {peak_step}, "
      f"last {history['lr'][-1]:.6f}")
total_is_sum = np.allclose(history["loss"],
                           np.add(history["mlm_loss"], history["nsp_loss"]), atol=1e-5)
print("loss = MLM loss + NSP loss at every step:", total_is_sum)

# %% [markdown]
# Two reference lines help read the loss curves. A model that has learned nothing predicts
# every token with probability $1/V$: loss $\ln V$. A model that knows only how often each
# word occurs, and ignores the context, pays the unigram entropy $-\sum_w f_w \ln f_w$.
# For NSP, a coin flip costs $\ln 2$.

# %%
held_out = data.pretraining_pairs(
    data.generate_corpus(max(2, recipe.num_documents // 10),
                         seed=recipe.seed + zoo.HELD_OUT_SEED),
    tokenizer, recipe.max_length, recipe.negatives, seed=recipe.seed + 1)
ids = held_out["input_ids"]
ordinary = ids[~torch.isin(ids, torch.tensor(tokenizer.special_ids))]
frequency = torch.bincount(ordinary, minlength=tokenizer.vocab_size).double()
frequency = frequency[frequency > 0] / frequency.sum()
unigram_entropy = float(-(frequency * frequency.log()).sum())
print(f"ln V = {math.log(tokenizer.vocab_size):.2f}, "
      f"unigram entropy = {unigram_entropy:.2f}, ln 2 = {math.log(2):.3f}")


def smooth(values, width=25):
    """Moving average, to see the trend through the batch-to-batch noise."""
    return np.convolve(values, np.ones(width) / width, mode="valid")


# %%
steps = np.arange(len(history["loss"]))
fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
axes[0].plot(steps, history["lr"])
axes[0].set_title("learning rate: warm-up, then linear decay")
axes[0].set_ylabel("learning rate")
axes[1].plot(steps, history["mlm_loss"], alpha=0.3, color="tab:blue")
axes[1].plot(steps[12:-12], smooth(history["mlm_loss"]), color="tab:blue")
axes[1].axhline(math.log(tokenizer.vocab_size), color="gray", linestyle=":",
                label="ln V (uniform guess)")
axes[1].axhline(unigram_entropy, color="gray", linestyle="--",
                label="unigram entropy (no context)")
axes[1].set_title("masked LM loss")
axes[2].plot(steps, history["nsp_loss"], alpha=0.3, color="tab:orange")
axes[2].plot(steps[12:-12], smooth(history["nsp_loss"]), color="tab:orange")
axes[2].axhline(math.log(2), color="gray", linestyle="--", label="ln 2 (coin flip)")
axes[2].set_title("next sentence prediction loss")
for ax in axes:
    ax.set_xlabel("step")
for ax in axes[1:]:
    ax.set_ylabel("cross-entropy (nats)")
    ax.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %% [markdown]
# *What to see:* the masked-LM loss falls below the unigram line early: from then on the
# model uses context, not just word frequencies. The NSP loss sits at $\ln 2$ for the
# first stretch of training (the classifier on [CLS] has nothing to read yet) and then
# drops steadily. Both keep improving until the learning rate reaches zero: this tiny run
# is far from converged.
#
# The record also holds the held-out scores, measured on documents the model never saw,
# with 15% of the tokens replaced by [MASK]:

# %%
metrics, baseline = record["metrics"], record["unigram_baseline"]
print(f"masked LM accuracy        {metrics['mlm_accuracy']:.3f}")
print(f"  always the commonest word {baseline['most_frequent']:.3f}")
print(f"NSP accuracy              {metrics['nsp_accuracy']:.3f}  (chance 0.5)")
print(f"trained in {record['train_seconds']:.0f} s, "
      f"{record['tokens_per_second']:,.0f} tokens/s")

# %% [markdown]
# ## 4. Filling in blanks in unseen sentences
#
# Now the model itself. We take first-mention sentences from held-out documents ("the
# fox lives in the cave ."), hide the value of the fact, and look at the model's
# predictions. The sentence goes in alone, `[CLS] sentence [SEP]`.
#
# Such a sentence states a *fresh* fact: nothing before it says where this fox lives, so
# the exact word cannot be known, and the best a model can do is spread its bet over the
# values that fit. What it can know is **which kind** of word fits, and that depends on
# the rest of the sentence: "lives in the ___" wants a habitat, "tastes ___" a taste,
# "works as a ___" a job. Three measurements over all the blanks:
#
# - the top prediction is the true word;
# - a word of the right kind is among the top five;
# - among all the value words of the language (every habitat, colour, taste, material...),
#   the one the model ranks highest is of the right kind. This ignores how much weight the
#   model puts on frequent tokens like "the" and asks only about the kind.

# %%
model = zoo.pretrained_corpus_model("tiny", seed=SEED).to(device)


@torch.no_grad()
def blank_probabilities(words, position):
    """The model's distribution (V,) over the token at words[position], masked."""
    ids = tokenizer.convert_tokens_to_ids(list(words))  # every word is one token
    ids[position] = tokenizer.mask_id
    row = torch.tensor([[tokenizer.cls_id, *ids, tokenizer.sep_id]], device=device)
    logits = model(row).prediction_logits[0, position + 1]  # (V,); +1 skips [CLS]
    return logits.softmax(-1).cpu()


def value_blanks(documents):
    """(words, position, answer, relation, allowed values) for every first-mention fact
    whose value is one word from a fixed list (not a person or a city)."""
    blanks = []
    for document in documents:
        for sentence in document.sentences:
            fact = sentence.fact
            if sentence.kind != "fact" or len(fact.value.words) != 1:
                continue
            values = RELATIONS[document.topic][fact.relation][0]
            if isinstance(values, list):
                blanks.append((sentence.words, sentence.value_start, fact.value.text,
                               fact.relation, values))
    return blanks


unseen = data.generate_corpus(200, seed=recipe.seed + zoo.HELD_OUT_SEED + 1)
blanks = value_blanks(unseen)
value_words = sorted({word for *_, values in blanks for word in values})
value_ids = torch.tensor(tokenizer.convert_tokens_to_ids(value_words))
hits = {"true word on top": 0, "right kind in top 5": 0, "right kind among values": 0}
for words, position, answer, _, values in blanks:
    probs = blank_probabilities(words, position)
    top5 = [tokenizer.vocab[i] for i in probs.topk(5).indices.tolist()]
    favourite_value = value_words[int(probs[value_ids].argmax())]
    hits["true word on top"] += top5[0] == answer
    hits["right kind in top 5"] += any(token in values for token in top5)
    hits["right kind among values"] += favourite_value in values
shares = {name: count / len(blanks) for name, count in hits.items()}
uniform_among_fitting = np.mean([1 / len(values) for *_, values in blanks])
kind_by_chance = np.mean([len(values) / len(value_words) for *_, values in blanks])
print(f"{len(blanks)} blanks, {len(value_words)} value words")
for name, share in shares.items():
    print(f"{name:24s} {share:.2f}")
print(f"a uniform guess among the fitting values finds the true word "
      f"{uniform_among_fitting:.2f}; a random value word is of the right kind "
      f"{kind_by_chance:.2f}")

# %% [markdown]
# Move the slider through a few held-out examples, one per relation (the true word in
# green):

# %%
shown_relations = ("home", "color", "food", "taste", "ingredient", "material", "job",
                   "landmark")
examples = [next((words, position, answer) for words, position, answer, relation, _
                 in blanks if relation == wanted)
            for wanted in shown_relations]


def render_example(index):
    words, position, answer = examples[index]
    probs, token_ids = blank_probabilities(words, position).topk(5)
    tokens = [tokenizer.vocab[i] for i in token_ids.tolist()]
    shown = " ".join("___" if i == position else w for i, w in enumerate(words))
    fig, ax = plt.subplots(figsize=(6, 2.8))
    colors = ["tab:green" if t == answer else "tab:gray" for t in tokens]
    ax.barh(range(5)[::-1], probs.tolist(), color=colors)
    ax.set_yticks(range(5)[::-1], tokens)
    ax.set_xlim(0, 0.5)
    ax.set_xlabel("predicted probability")
    ax.set_title(f"{shown}\n(true: {answer})", fontsize=10)
    fig.tight_layout()
    return fig


viz.slider(render_example, list(range(len(examples))), label="example")

# %% [markdown]
# *What to see:* where the sentence pins the kind of word down ("lives in the", "works as
# a", "tastes", "is made of"), the top five hold words of that kind, each with a small
# probability, and the true word is often among them: the model spreads its bet over the
# values that fit, the right answer to a question whose answer is new information. Often a
# frequent token ("the", ".") still comes first: the tiny model hedges between templates
# that differ only after the blank. Over all the blanks, the true word is on top no more
# often than a uniform guess among the fitting values would manage, while the kind is
# right almost every time among the value words, many times more often than chance.
#
# ## 5. The same from the command line
#
# Everything above is one call, `minibert.zoo.train_corpus_model(config, recipe)`, also
# available from a shell. It writes a Hugging Face-format directory (`config.json`,
# `model.safetensors`, `vocab.txt`) plus `training.json` with this chapter's record, and
# can pre-train on a text file of your own (blank lines between documents) with a WordPiece
# vocabulary trained on it:
#
# ```text
# $ python -m minibert pretrain --help
# usage: python -m minibert pretrain [-h] [--preset PRESET] --out OUT [--steps STEPS]
#                                    [--batch-size BATCH_SIZE] [--lr LR]
#                                    [--schedule {constant,linear,noam}]
#                                    [--warmup-steps WARMUP_STEPS]
#                                    [--max-length MAX_LENGTH] [--mask-rate MASK_RATE]
#                                    [--negatives {random,same_document,none}]
#                                    [--documents DOCUMENTS] [--seed SEED] [--text TEXT]
#                                    [--vocab-size VOCAB_SIZE]
#
# options:
#   -h, --help            show this help message and exit
#   --preset PRESET       tiny, small, base or large
#   --out OUT             directory to write
#   --steps STEPS
#   --batch-size BATCH_SIZE
#   --lr LR
#   --schedule {constant,linear,noam}
#   --warmup-steps WARMUP_STEPS
#   --max-length MAX_LENGTH
#                         tokens per row, [CLS] and [SEP]s included
#   --mask-rate MASK_RATE
#   --negatives {random,same_document,none}
#                         where NotNext segments come from; none = no NSP
#   --documents DOCUMENTS
#                         synthetic documents to generate
#   --seed SEED
#   --text TEXT           pre-train on this plain text file instead
#   --vocab-size VOCAB_SIZE
#                         WordPiece vocabulary size for --text
#
# $ python -m minibert pretrain --preset tiny --steps 800 --out my-bert
# $ python -m minibert pretrain --text my_book.txt --vocab-size 3000 --out my-book-bert
# ```
#
# ## Claim check

# %%
# Initialisation: truncated at +-2 sd, spread as a truncated normal's, LayerNorm at one.
assert weights.abs().max() <= 2 * std + 1e-7
assert abs(weights.std().item() / truncated_std(std) - 1) < 0.02
assert all(bool((g == 1).all()) for g in layer_norm_gains)
assert config.hidden_act == "gelu"
# The learning rate: warm-up to the peak, then linear decay to zero, as scheduled.
assert np.allclose(history["lr"], schedule)
assert peak_step == recipe.warmup_steps - 1 and history["lr"][-1] < 0.01 * recipe.lr
# The loss is the sum of the two losses.
assert total_is_sum
# The MLM loss ends well below the unigram entropy; NSP starts at ln 2, ends far below.
assert np.mean(history["mlm_loss"][-50:]) < unigram_entropy - 0.5
assert abs(np.mean(history["nsp_loss"][:50]) - math.log(2)) < 0.05
assert np.mean(history["nsp_loss"][-50:]) < 0.5 * math.log(2)
# Held out: MLM accuracy well above the commonest-word baseline; NSP far above chance.
assert metrics["mlm_accuracy"] > 1.5 * baseline["most_frequent"]
assert metrics["nsp_accuracy"] > 0.5 + 0.25
# Unseen blanks: the true word no more often than a uniform guess among the fitting
# values; the right kind of word in the top five most of the time, and nearly always
# the favourite among the value words, many times the chance rate.
assert shares["true word on top"] < uniform_among_fitting + 0.03
assert shares["right kind in top 5"] > 0.7
assert shares["right kind among values"] > 0.75
assert shares["right kind among values"] > 5 * kind_by_chance

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"Initialised with N(0, 0.02)."** Google's BERT truncates at two standard deviations,
#   which makes the real spread about 0.0176. Hugging Face's PyTorch `BertModel` draws from
#   an *untruncated* normal instead; minibert follows the original. At these sizes either
#   works; the point of a small scale is that the residual stream does not blow up through
#   the layers at the start.
# - **"The loss is MLM plus NSP."** True, and the two terms are on different footings: the
#   MLM term averages over the chosen tokens of the whole batch, the NSP term over rows. The
#   NSP loss also stays flat at $\ln 2$ for a while before it moves, so a loss curve of the
#   sum hides when each task starts to learn: plot them apart.
# - **"MLM accuracy of X% means the model understands the text."** Much of a masked-LM
#   accuracy comes from easy tokens (articles, full stops). Compare with the unigram
#   baseline, and look at what kind of word is predicted where the answer is new
#   information: this model has learned the language's templates and categories, not facts.
# - **"Warm-up for 10,000 steps."** That is BERT's number for a million steps at lr 1e-4. The
#   tiny run warms up for a tenth of its 800 steps at a much higher peak (3e-3); what
#   transfers is the shape, not the step count (see the warm-up chapter).
#
# ## At scale
#
# BERT-base was pre-trained for 1,000,000 steps of 256 rows of up to 512 tokens (128 tokens
# for the first 90% of the steps) on BooksCorpus and English Wikipedia, about 3.3 billion
# words, with Adam at lr 1e-4, β = (0.9, 0.999), weight decay 0.01, 10,000 warm-up steps and
# linear decay, dropout 0.1 and GELU {cite}`devlin2019bert`. Its NSP accuracy reaches 97–98%
# (papers.md). The tiny run uses the same recipe with everything shrunk: 800 steps of 64
# rows of 64 tokens, a 289-token vocabulary, no dropout, on two CPU cores.
#
# ## Exercises
#
# 1. Pre-train with `zoo.pretrained_corpus_model("tiny", steps=1600)`. Which of the two
#    losses gains more from the extra steps? Do the shares in section 4 move?
# 2. Give the model a document's earlier sentences before an "again" sentence ("every
#    morning the fox leaves the ___"). Does it copy the value from the context? What would
#    a bigger model (`"small"`) need?
# 3. Build a fresh model with `initializer_range=0.2` and compare the norm of the hidden
#    states after each layer with the default's. What goes wrong with the softmax?
# 4. Run `python -m minibert pretrain --text` on a plain text file of your own and look at
#    its top-5 predictions for a few sentences.
