"""English sentences that use an ambiguous word in one of its two senses (chapter 01),
drawn from small lists, so a claim about a model's sense vectors can be tested over
independent draws of sentences rather than on one hand-written set.

Every sentence reads "The <adjective> <word> <rest>", so with [CLS] first the word is
always token 3 in BERT's uncased vocabulary: its embedding-layer output is the same in
every sentence, and any difference after the encoder comes from the context. A result on
these sentences covers these lists, not English at large.
"""

from __future__ import annotations

import random

POSITION = 3  # [CLS] the <adjective> <word>
PER_SENSE = 3  # sentences per sense in one draw

# word -> sense -> (adjectives, continuations); each a single token in BERT's vocabulary
SENSES = {
    "bank": {
        "river": (["muddy", "grassy", "steep", "sandy", "rocky", "narrow"],
                  ["of the river collapsed after the storm.", "sloped gently down to the water.",
                   "was covered with reeds and ducks.", "along the stream was full of frogs.",
                   "by the lake flooded in spring.", "of the canal was lined with willows."]),
        "money": (["central", "local", "investment", "national", "private", "foreign"],
                  ["raised interest rates again.", "approved her loan for the house.",
                   "hired fifty new analysts.", "closed his savings account.",
                   "lent money to the small company.", "charged a fee for every transfer."]),
    },
    "bat": {
        "animal": (["small", "brown", "sleeping", "tiny", "hungry", "wild"],
                   ["flew out of the dark cave.", "hunts moths and insects at night.",
                    "hung upside down in the barn.", "used echoes to find its prey.",
                    "woke up at dusk and left the roost.", "carried a disease to the farm."]),
        "sport": (["wooden", "heavy", "broken", "cricket", "baseball", "new"],
                  ["cracked when he hit the ball.", "was signed by the whole team.",
                   "helped him score a home run.", "leaned against the dugout wall.",
                   "was too long for the young batter.", "swung through the air and missed."]),
    },
    "spring": {
        "season": (["early", "late", "warm", "wet", "cold", "mild"],
                   ["brought flowers to the garden.", "came after a long winter.",
                    "weather made the trees bloom.", "rain filled the rivers.",
                    "was the best time to plant seeds.", "sunshine melted the last snow."]),
        "coil": (["metal", "steel", "loose", "tight", "broken", "copper"],
                 ["inside the pen snapped.", "made the old mattress creak.",
                  "in the clock was wound up.", "pushed the valve shut.",
                  "bounced out of the toy.", "held the door closed."]),
    },
    "plant": {
        "living": (["green", "small", "tomato", "house", "tall", "young"],
                   ["on the windowsill needs water.", "grew in the corner of the garden.",
                    "produced dozens of red fruits.", "lost its leaves in the heat.",
                    "turned towards the sunlight.", "grew new roots in the pot."]),
        "factory": (["power", "car", "nuclear", "chemical", "steel", "old"],
                    ["burns coal to make electricity.", "laid off two hundred workers.",
                     "was shut down for repairs.", "ran three shifts a day.",
                     "polluted the nearby river.", "built engines for trucks."]),
    },
}


def sense_sentences(seed: int, per_sense: int = PER_SENSE) -> list[tuple[str, str, str]]:
    """One draw: for every word and sense, `per_sense` sentences with distinct adjectives
    and distinct continuations. A list of (word, sense, sentence)."""
    most = min(len(words) for senses in SENSES.values() for lists in senses.values()
               for words in lists)  # the shortest list bounds a draw without repeats
    if not 1 <= per_sense <= most:
        raise ValueError(f"per_sense must lie in 1..{most} (the shortest list's length), "
                         f"got {per_sense}")
    rng = random.Random(seed)
    drawn = []
    for word, senses in SENSES.items():
        for sense, (adjectives, continuations) in senses.items():
            pairs = zip(rng.sample(adjectives, per_sense), rng.sample(continuations, per_sense))
            drawn += [(word, sense, f"The {adjective} {word} {rest}") for adjective, rest in pairs]
    return drawn
