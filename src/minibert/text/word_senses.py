"""Sentences that use an ambiguous word in one of its two senses (chapter 01), in English
and in the synthetic corpus's language, so a claim about a model's sense vectors can be
tested on sentences that put the word at one token position.

English: every sentence reads "The <adjective> <word> <rest>", so with [CLS] first the word
is always token 3 in BERT's uncased vocabulary: its embedding-layer output is the same in
every sentence, and any difference after the encoder comes from the context. Drawn from
small lists, so a claim can be tested over independent draws of sentences rather than on
one hand-written set; a result covers these lists, not English at large.

The synthetic corpus: two of its city names, "paris" and "lima", are also surnames. Each
sense gets seven of the corpus's templates, four of them shared by both senses, so that
"same sense" does not mean "same template"; a short sentence about animals goes first, as
long as it takes to put the name at one token position in the sentence pair.
"""

from __future__ import annotations

import random

from . import language

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


# ---------------------------------------------------------------- the corpus's ambiguous names

NAMES = ("paris", "lima")  # cities of the corpus that are also surnames
NAME_TEMPLATES = {  # corpus templates that hold a city or a person; {x} = the name
    "city": ["the mayor of {x} is {p} .", "{p} works hard for {x} .",
             "{p} lives in {x} .", "{p} was born in {x} .",
             "in {x} people eat the {d} every day .",
             "visitors to {x} love the {l} .", "the {d} comes from {x} ."],
    "surname": ["the mayor of {c} is {f} {x} .", "{f} {x} works hard for {c} .",
                "{f} {x} lives in {c} .", "{f} {x} was born in {c} .",
                "{f} {x} works as a {j} .", "the {t} belongs to {f} {x} .",
                "as a {j} , {f} {x} is busy ."],
}
ANIMAL_LINES = {  # a first segment of each length in words, from the animal templates
    5: "the {a} eats {v} .", 6: "the {a} likes {v} best .",
    7: "the {a} lives in the {h} .", 8: "every morning the {a} leaves the {h} .",
    9: "the {a} sleeps in the {h} at night .",
    10: "the {a} is {k} . the {a} eats {v} ."}
NAME_POSITION = 13  # [CLS], the animal line, [SEP], then the name's sentence


def name_uses(seed: int = 0) -> list[tuple[str, str, str, str, str]]:
    """Every template of `NAME_TEMPLATES` filled twice for each of the two names, with
    one-word fillers drawn with `seed` (never one of the names), each after an animal line
    that puts the name at token `NAME_POSITION` of the pair [CLS] line [SEP] sentence
    [SEP] (every corpus word is one token). A list of (name, sense, template, line,
    sentence), where template is the template's fixed words, shared by the uses that
    filled it."""
    rng = random.Random(seed)
    animals = language.RELATIONS["animals"]

    def pick(words) -> str:
        """A random one-word filler that is neither of the two ambiguous names."""
        return rng.choice([w for w in words if w not in NAMES and " " not in w])

    uses = []
    for name in NAMES:
        for sense, templates in NAME_TEMPLATES.items():
            for template in templates + templates:  # each template filled twice
                text = template.format(
                    x=name, p=f"{pick(language.FIRST_NAMES)} {pick(language.SURNAMES)}",
                    f=pick(language.FIRST_NAMES), c=pick(language.CITIES),
                    d=pick(language.DISHES), j=pick(language.JOBS), t=pick(language.TOOLS),
                    l=pick(language.RELATIONS["cities"]["landmark"][0]))
                line = ANIMAL_LINES[NAME_POSITION - 2 - text.split().index(name)].format(
                    a=pick(language.ANIMALS), v=pick(animals["food"][0]),
                    h=pick(animals["home"][0]), k=pick(animals["color"][0]))
                relation = " ".join(w for w in template.split() if w[0] != "{")  # shared
                uses.append((name, sense, relation, line, text))
    return uses
