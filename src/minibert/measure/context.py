"""Contextual vectors, measured: how alike one word's vectors are in different sentences,
layer by layer, and how far the context moves them against the distance between two
different words (chapter 01).

The sentences are built so that the word always sits at one token position: its
embedding-layer output is then the same vector in every sentence, and any difference
after the encoder comes from the other tokens, through attention. Shapes: L = layers,
B = batch (one sentence a row), T = sequence length, H = hidden size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..model.bert import encoder_of
from .positions import cosine_matrix


def cosines_per_layer(hidden_states: Sequence[torch.Tensor], position: int, words: np.ndarray,
                      senses: np.ndarray | None = None, templates: np.ndarray | None = None
                      ) -> dict[str, np.ndarray]:
    """Mean cosine between the vectors at `position` of two sentences, per layer, over kinds
    of sentence pairs: the same word in the same sense, the same word in the other sense,
    the same word in any pair, and two different words (the floor). The cosine ignores a
    vector's length, so only the direction that the context gave a word counts.

    hidden_states: one (B, T, H) tensor per layer (the encoder's output_hidden_states);
    words, senses, templates: (B,) labels of the sentences. Without `senses` only the last
    two kinds are measured. With `templates`, the sense kinds take only pairs from different
    templates, and same-sense pairs that share one form a kind of their own ("same word,
    same template"), so that a model which keeps together what shares its words is not
    mistaken for one that keeps senses apart. Kinds without a pair are left out. Returns
    {kind: (L,) array}, in the order the layers were given."""
    if templates is not None and senses is None:
        raise ValueError("templates are compared within a sense: give the senses too")
    first, second = np.triu_indices(len(words), k=1)  # every pair of sentences once
    same_word = words[first] == words[second]  # (pairs,)
    kinds = {"same word, all pairs": same_word, "different words": ~same_word}
    if senses is not None:
        same_sense = senses[first] == senses[second]
        apart = np.full(len(first), True) if templates is None else (
            templates[first] != templates[second])  # (pairs,): from different templates
        kinds = {"same word, same sense": same_word & same_sense & apart,
                 "same word, other sense": same_word & ~same_sense & apart,
                 **kinds, "same word, same template": same_word & same_sense & ~apart}
    kinds = {kind: chosen for kind, chosen in kinds.items() if chosen.any()}
    result = {kind: [] for kind in kinds}
    for h in hidden_states:  # (B, T, H)
        pair_cosines = cosine_matrix(h[:, position]).numpy()[first, second]  # (pairs,)
        for kind, chosen in kinds.items():
            result[kind].append(pair_cosines[chosen].mean())
    return {kind: np.array(values) for kind, values in result.items()}


@torch.no_grad()
def moved_share(model, inputs: dict[str, torch.Tensor], position: int, words: np.ndarray
                ) -> float:
    """How far the context moved a word after the encoder, in units of how far apart two
    different words sit: the distance 1 - cosine between two uses of one word, averaged
    over every such pair, divided by the same distance between uses of two different words.
    0: the context moved nothing; 1: a word's uses sit as far apart as two words do.

    inputs: the encoder's inputs (on the model's device), one sentence a row, the word of
    each row at `position`; words: (B,) which word each row uses (at least two)."""
    last = encoder_of(model)(**inputs).last_hidden_state  # (B, T, H)
    cos = cosines_per_layer([last], position, words)
    return float((1 - cos["same word, all pairs"][0]) / (1 - cos["different words"][0]))
