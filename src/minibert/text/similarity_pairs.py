"""English sentence pairs, generated from templates, for testing sentence vectors
(chapter 41): paraphrases, and "same words" pairs that share their words but not their
meaning (two nouns swapped, a "not" added).

Each template has slots filled from small word lists, so a few hundred pairs come from a
handful of templates. A result on them covers these templates' kinds of sentence, not
English at large; disjoint draws (different seeds) let a chapter see how much it varies.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from .language import check_count

NAMES = ["Anna", "Omar", "Lena", "Tom", "Priya", "Jonas", "Maria", "Kenji", "Sara", "Luis"]
ITEMS = ["lamp", "jacket", "bicycle", "kettle", "guitar", "backpack", "camera", "sofa"]
SHOPS = ["market", "bakery", "pharmacy", "bookshop", "supermarket", "hardware store"]
EVENTS = ["concert", "match", "meeting", "parade", "wedding", "lecture"]
WEATHER = ["snow", "storm", "heavy rain", "fog", "heat wave"]
INSTRUMENTS = ["piano", "violin", "drums", "flute", "cello", "trumpet"]
VEHICLES = ["train", "bus", "ferry", "flight", "tram"]
DISHES = ["soup", "pasta", "curry", "pancakes", "a stew", "fried rice"]
ANIMALS = ["dog", "cat", "horse", "fox", "goat", "rabbit", "duck", "mouse"]
DAYS = ["Monday", "Tuesday", "Friday", "Saturday", "Sunday"]
CITIES = ["Lyon", "Porto", "Leeds", "Graz", "Bergen", "Turin"]

PARAPHRASES = [  # (first, second): the same fact in other words
    ("{name} bought a {item} at the {shop}.", "At the {shop}, {name} purchased a {item}."),
    ("The {event} was cancelled because of the {weather}.",
     "The {weather} forced them to call off the {event}."),
    ("{name} is learning to play the {instrument}.", "{name} takes {instrument} lessons."),
    ("The {vehicle} to {city} arrived forty minutes late.",
     "The {vehicle} to {city} was delayed by forty minutes."),
    ("{name} cooked {dish} for dinner.", "For dinner, {name} made {dish}."),
    ("{name} lost the {item} on the way home.",
     "On the way home, {name}'s {item} went missing."),
]
SAME_WORDS = {  # kind -> (first, second): the same words, another meaning
    "word order": ("The {animal} chased the {other_animal}.",
                   "The {other_animal} chased the {animal}."),
    "negation": ("The {shop} is open on {day}.", "The {shop} is not open on {day}."),
}
KINDS = ("paraphrase", *SAME_WORDS)


@dataclass(frozen=True)
class SentencePair:
    """Two sentences, the kind of pair, and the template it came from."""

    first: str
    second: str
    kind: str  # "paraphrase", "word order" or "negation"
    template: int  # the index of its template within its kind


def _slots(rng: random.Random) -> dict[str, str]:
    animal, other_animal = rng.sample(ANIMALS, 2)
    return {"name": rng.choice(NAMES), "item": rng.choice(ITEMS), "shop": rng.choice(SHOPS),
            "event": rng.choice(EVENTS), "weather": rng.choice(WEATHER),
            "instrument": rng.choice(INSTRUMENTS), "vehicle": rng.choice(VEHICLES),
            "dish": rng.choice(DISHES), "animal": animal, "other_animal": other_animal,
            "day": rng.choice(DAYS), "city": rng.choice(CITIES)}


def similarity_pairs(num_paraphrases: int = 60, num_same_words: int = 10, seed: int = 0
                     ) -> list[SentencePair]:
    """num_paraphrases paraphrase pairs (the templates in turn) and num_same_words pairs of
    each "same words" kind, with slots drawn from `seed`. Sentences are distinct within a
    draw, so pairings across pairs are never the same sentence twice."""
    check_count("num_paraphrases", num_paraphrases)
    check_count("num_same_words", num_same_words)
    rng = random.Random(seed)
    wanted = [("paraphrase", i % len(PARAPHRASES), PARAPHRASES[i % len(PARAPHRASES)])
              for i in range(num_paraphrases)]
    wanted += [(kind, 0, SAME_WORDS[kind]) for kind in SAME_WORDS for _ in range(num_same_words)]
    pairs, seen = [], set()
    for kind, template, (first, second) in wanted:
        for _ in range(1000):  # draw slots until the sentence is new
            slots = _slots(rng)
            text = first.format(**slots)
            if text not in seen:
                break
        else:
            raise ValueError(f"too many pairs asked of the {kind} template {first!r}")
        seen.add(text)
        pairs.append(SentencePair(text, second.format(**slots), kind, template))
    return pairs
