"""The synthetic language the book pre-trains on, with known ground truth, and plain text
files as a corpus.

The language: documents of consecutive sentences about one entity of one topic (animals,
cities, foods, tools, people). Each document draws fresh attributes for its entities, so
"the fox lives in the forest" in one document and "in the cave" in the next: a word
mentioned again later ("every morning the fox leaves the [MASK]") can be recovered only
from the document, and a second entity of the same topic is there as a distractor.
Sentences like "the dogs that chase the cat near the river run" carry subject-verb
agreement across a relative clause whose noun has the other number.

Everything is deterministic given a seed. The task datasets built from it are in
`minibert.text.datasets`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from .tokenizer import SPECIAL_TOKENS, WordPiece, train_wordpiece

# ---------------------------------------------------------------- the lexicon

ANIMALS = {  # singular -> plural
    "fox": "foxes", "wolf": "wolves", "bear": "bears", "owl": "owls", "rabbit": "rabbits",
    "cat": "cats", "dog": "dogs", "horse": "horses", "mouse": "mice", "eagle": "eagles",
    "frog": "frogs", "goat": "goats",
}
JOBS = {
    "baker": "bakers", "doctor": "doctors", "teacher": "teachers", "pilot": "pilots",
    "painter": "painters", "farmer": "farmers", "singer": "singers", "driver": "drivers",
}
# Verbs as (plural form, singular form): "the dogs run", "the dog runs".
INTRANSITIVE = {
    "animals": [("run", "runs"), ("sleep", "sleeps"), ("swim", "swims"), ("hide", "hides"),
                ("rest", "rests"), ("wait", "waits")],
    "people": [("sing", "sings"), ("work", "works"), ("smile", "smiles"), ("laugh", "laughs"),
               ("rest", "rests"), ("wait", "waits")],
}
TRANSITIVE = [("chase", "chases"), ("watch", "watches"), ("follow", "follows"), ("see", "sees"),
              ("help", "helps"), ("meet", "meets")]
FIRST_NAMES = ["anna", "ben", "carl", "dora", "emma", "felix", "greta", "hugo", "iris", "jonas",
               "lena", "max"]
SURNAMES = ["berg", "stone", "fischer", "moss", "vale", "lima", "paris", "brook"]  # some are cities
CITIES = ["paris", "rome", "cairo", "lima", "oslo", "perth", "quito", "dakar", "vienna", "madrid",
          "port lucas", "new haven", "san pedro", "north bay"]
DISHES = ["soup", "bread", "cake", "pie", "rice", "salad", "stew", "tea", "cheese", "porridge",
          "pasta", "curry"]
TOOLS = ["hammer", "saw", "drill", "knife", "rope", "ladder", "brush", "shovel", "wrench", "axe",
         "needle", "spoon"]
POSITIVE_MOODS = ["happy", "calm", "glad", "proud"]
NEGATIVE_MOODS = ["sad", "angry", "afraid", "tired"]

# Per topic: the relations an entity has, each with the values it may take, the sentence
# that states it first, sentences that mention it again, and the question asking for it.
# {e} is the entity, {v} the value.
RELATIONS = {
    "animals": {
        "home": (["forest", "river", "mountain", "field", "cave", "lake", "meadow", "desert",
                  "swamp", "valley"],
                 "{e} lives in the {v} .",
                 ["{e} sleeps in the {v} at night .", "every morning {e} leaves the {v} ."],
                 "where does {e} live ?"),
        "food": (["berries", "fish", "grass", "seeds", "insects", "leaves", "honey", "roots",
                  "nuts", "worms"],
                 "{e} eats {v} .",
                 ["{e} looks for {v} all day .", "{e} likes {v} best ."],
                 "what does {e} eat ?"),
        "color": (["brown", "gray", "white", "black", "red", "golden"],
                  "{e} is {v} .",
                  ["the fur of {e} is {v} ."],
                  "what color is {e} ?"),
    },
    "cities": {
        "near": (["coast", "river", "hills", "plain", "lake", "island", "desert", "valley"],
                 "{e} is a city near the {v} .",
                 ["the {v} is close to {e} .", "people in {e} walk to the {v} ."],
                 "what is {e} near ?"),
        "landmark": (["bridge", "tower", "market", "museum", "harbor", "temple", "castle",
                      "garden"],
                     "{e} is famous for its {v} .",
                     ["visitors to {e} love the {v} ."],
                     "what is {e} famous for ?"),
        "mayor": ("PERSON",
                  "the mayor of {e} is {v} .",
                  ["{v} works hard for {e} ."],
                  "who is the mayor of {e} ?"),
    },
    "foods": {
        "taste": (["sweet", "salty", "sour", "spicy", "bitter", "mild", "rich", "fresh"],
                  "{e} tastes {v} .",
                  ["everyone says {e} is {v} ."],
                  "how does {e} taste ?"),
        "ingredient": (["apples", "beans", "corn", "onions", "potatoes", "lemons", "carrots",
                        "nuts", "honey", "mushrooms"],
                       "{e} is made with {v} .",
                       ["the cook adds more {v} to {e} ."],
                       "what is {e} made with ?"),
        "cook": ("PERSON",
                 "{v} cooks {e} .",
                 ["{v} serves {e} at dinner ."],
                 "who cooks {e} ?"),
        "origin": ("CITY",
                   "{e} comes from {v} .",
                   ["in {v} people eat {e} every day ."],
                   "where does {e} come from ?"),
    },
    "tools": {
        "material": (["steel", "wood", "iron", "plastic", "copper", "stone", "glass", "brass"],
                     "{e} is made of {v} .",
                     ["the {v} of {e} shines ."],
                     "what is {e} made of ?"),
        "place": (["shed", "garage", "kitchen", "barn", "box", "drawer", "attic", "cellar"],
                  "{e} is kept in the {v} .",
                  ["{e} goes back to the {v} after work ."],
                  "where is {e} kept ?"),
        "owner": ("PERSON",
                  "{e} belongs to {v} .",
                  ["{v} uses {e} every day ."],
                  "who owns {e} ?"),
    },
    "people": {
        "job": (list(JOBS),
                "{e} works as a {v} .",
                ["as a {v} , {e} is busy ."],
                "what is the job of {e} ?"),
        "city": ("CITY",
                 "{e} lives in {v} .",
                 ["{e} was born in {v} ."],
                 "where does {e} live ?"),
        "pet": ("ANIMAL",
                "{e} has a {v} .",
                ["{e} walks the {v} every day ."],
                "what pet does {e} have ?"),
    },
}
TOPICS = tuple(RELATIONS)
ENTITY_KINDS = ("ANIMAL", "CITY", "PERSON", "FOOD", "TOOL")
TAGS = ("O", *(f"{prefix}-{kind}" for kind in ENTITY_KINDS for prefix in "BI"))
MOOD_SENTENCE = "{e} is {v} today ."
AGREEMENT_TOPICS = {"animals": ANIMALS, "people": JOBS}  # topics whose nouns have plurals

# ---------------------------------------------------------------- sentences and documents


@dataclass(frozen=True)
class Phrase:
    """Words with their BIO entity tags."""

    words: tuple[str, ...]
    tags: tuple[str, ...]

    @classmethod
    def of(cls, text: str, kind: str | None = None) -> Phrase:
        """A phrase whose words are all one entity of `kind` (or none, tagged O)."""
        words = tuple(text.split())
        if kind is None:
            return cls(words, ("O",) * len(words))
        return cls(words, tuple(f"{'B' if i == 0 else 'I'}-{kind}" for i in range(len(words))))

    def __add__(self, other: Phrase) -> Phrase:
        return Phrase(self.words + other.words, self.tags + other.tags)

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass(frozen=True)
class Fact:
    entity: Phrase
    relation: str
    value: Phrase


@dataclass
class Sentence:
    """One sentence: its words and tags; `kind` says what it does in the document
    ("fact", "again", "agreement", "mood"); `fact` and `value_start` locate the value of
    the fact it states, if any (word index)."""

    words: tuple[str, ...]
    tags: tuple[str, ...]
    kind: str
    fact: Fact | None = None
    value_start: int | None = None

    @property
    def text(self) -> str:
        return " ".join(self.words)


@dataclass
class Document:
    """Consecutive sentences on one topic, and the facts they state (the ground truth)."""

    topic: str
    sentences: list[Sentence]
    facts: list[Fact] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.sentences)


def fill(template: str, kind: str, **slots: Phrase) -> Sentence:
    """Fill a template's {e}/{v} slots with phrases, keeping the tags; records where {v} is."""
    words: list[str] = []
    tags: list[str] = []
    value_start = None
    for token in template.split():
        if token.startswith("{") and token.endswith("}"):
            name = token[1:-1]
            if name == "v":
                value_start = len(words)
            words += slots[name].words
            tags += slots[name].tags
        else:
            words.append(token)
            tags.append("O")
    return Sentence(tuple(words), tuple(tags), kind, value_start=value_start)


class World:
    """Draws entities, values and sentences of the synthetic language from one random stream."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def person(self) -> Phrase:
        return Phrase.of(f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(SURNAMES)}", "PERSON")

    def entity(self, topic: str) -> Phrase:
        """A fresh entity of the topic: "the fox", "paris", "the soup", "anna berg"."""
        if topic == "animals":
            return Phrase.of("the") + Phrase.of(self.rng.choice(list(ANIMALS)), "ANIMAL")
        if topic == "cities":
            return Phrase.of(self.rng.choice(CITIES), "CITY")
        if topic == "foods":
            return Phrase.of("the") + Phrase.of(self.rng.choice(DISHES), "FOOD")
        if topic == "tools":
            return Phrase.of("the") + Phrase.of(self.rng.choice(TOOLS), "TOOL")
        return self.person()

    def value(self, topic: str, relation: str, exclude: Phrase | None = None) -> Phrase:
        """A value for the relation, different from `exclude` (to build contradictions)."""
        choices = RELATIONS[topic][relation][0]
        while True:
            if choices == "PERSON":
                value = self.person()
            elif choices == "CITY":
                value = Phrase.of(self.rng.choice(CITIES), "CITY")
            elif choices == "ANIMAL":
                value = Phrase.of(self.rng.choice(list(ANIMALS)), "ANIMAL")
            else:
                value = Phrase.of(self.rng.choice(choices))
            if value != exclude:
                return value

    def state(self, topic: str, fact: Fact, again: bool = False) -> Sentence:
        """A sentence stating the fact: its first mention, or a later one in other words."""
        _, first, later, _ = RELATIONS[topic][fact.relation]
        template = self.rng.choice(later) if again else first
        sentence = fill(template, "again" if again else "fact", e=fact.entity, v=fact.value)
        sentence.fact = fact
        return sentence

    def agreement(self, topic: str, subject: str | None = None) -> tuple[Sentence, bool]:
        """"the dogs that chase the cat (near the river) run ." The subject and the noun of
        the relative clause get independent numbers, so the nearest noun is no guide to the
        verb. Returns the sentence and whether its subject is plural."""
        nouns = AGREEMENT_TOPICS[topic]
        kind = "ANIMAL" if topic == "animals" else None
        subject = subject or self.rng.choice(list(nouns))
        other = self.rng.choice([n for n in nouns if n != subject])
        plural, other_plural = self.rng.random() < 0.5, self.rng.random() < 0.5
        relative_verb = self.rng.choice(TRANSITIVE)[0 if plural else 1]
        main_verb = self.rng.choice(INTRANSITIVE[topic])[0 if plural else 1]
        sentence = (Phrase.of("the") + Phrase.of(nouns[subject] if plural else subject, kind)
                    + Phrase.of(f"that {relative_verb} the")
                    + Phrase.of(nouns[other] if other_plural else other, kind))
        if self.rng.random() < 0.5:  # a longer gap between subject and verb
            sentence = sentence + Phrase.of(f"near the {self.rng.choice(RELATIONS['animals']['home'][0])}")
        sentence = sentence + Phrase.of(f"{main_verb} .")
        return Sentence(sentence.words, sentence.tags, "agreement"), plural

    def mood(self, entity: Phrase, positive: bool) -> Sentence:
        moods = POSITIVE_MOODS if positive else NEGATIVE_MOODS
        return fill(MOOD_SENTENCE, "mood", e=entity, v=Phrase.of(self.rng.choice(moods)))

    def document(self, topic: str | None = None) -> Document:
        """First the main entity's facts, then a second entity's (the distractor), then a
        shuffled mix of facts mentioned again, agreement sentences and a mood."""
        rng = self.rng
        topic = topic or rng.choice(TOPICS)
        main = self.entity(topic)
        second = self.entity(topic)
        while second == main:
            second = self.entity(topic)
        relations = list(RELATIONS[topic])
        rng.shuffle(relations)
        main_facts = [Fact(main, r, self.value(topic, r)) for r in relations]
        second_facts = [Fact(second, r, self.value(topic, r)) for r in rng.sample(relations, 2)]
        sentences = [self.state(topic, f) for f in main_facts + second_facts]
        later = [self.state(topic, f, again=True) for f in rng.sample(main_facts, 2)]
        later.append(self.state(topic, rng.choice(second_facts), again=True))
        if topic in AGREEMENT_TOPICS:
            later += [self.agreement(topic)[0] for _ in range(2)]
        if topic in ("animals", "people"):
            later.append(self.mood(main, rng.random() < 0.5))
        rng.shuffle(later)
        return Document(topic, sentences + later, main_facts + second_facts)


def generate_corpus(num_documents: int = 2000, seed: int = 0) -> list[Document]:
    """`num_documents` documents of the synthetic language, topics evenly mixed."""
    check_count("num_documents", num_documents)
    world = World(random.Random(seed))
    return [world.document(TOPICS[i % len(TOPICS)]) for i in range(num_documents)]


def corpus_words() -> list[str]:
    """Every word the synthetic language can produce, sorted (so ids never depend on a run)."""
    texts = [MOOD_SENTENCE, "the that near", *POSITIVE_MOODS, *NEGATIVE_MOODS, *FIRST_NAMES,
             *SURNAMES, *CITIES, *DISHES, *TOOLS]
    texts += [w for pair in [*ANIMALS.items(), *JOBS.items()] for w in pair]
    texts += [w for verbs in [*INTRANSITIVE.values(), TRANSITIVE] for pair in verbs for w in pair]
    for relations in RELATIONS.values():
        for values, first, later, question in relations.values():
            texts += [first, *later, question]
            if isinstance(values, list):
                texts += values
    words = {w for text in texts for w in text.split()} - {"{e}", "{v}"}
    return sorted(words)


def corpus_tokenizer() -> WordPiece:
    """A vocabulary of the synthetic language: [PAD]=0, [UNK], [CLS], [SEP], [MASK], then
    every word, sorted. Every word is one token, so MLM accuracy is accuracy on words."""
    return WordPiece([*SPECIAL_TOKENS, *corpus_words()])


# ---------------------------------------------------------------- a Zipfian vocabulary

ZIPF_SEED = 20_000  # the spellings of a seed's corpus come from seed + ZIPF_SEED


def spelling(word: str, rank: int) -> str:
    """The rank-th spelling of a word: "fox", "fox2", "fox3", ... (punctuation has one)."""
    return word if rank == 1 or not word.isalpha() else f"{word}{rank}"


def zipfian_corpus(num_documents: int = 1000, seed: int = 0, spellings: int = 16,
                   exponent: float = 1.0) -> list[Document]:
    """The documents of `generate_corpus(num_documents, seed)` with every word written in
    one of `spellings` interchangeable forms, the r-th drawn with weight 1 / r**exponent
    (Zipf's law). The meaning is unchanged; the vocabulary (`zipfian_tokenizer`) grows
    `spellings`-fold, so that most of its rows are rare in any batch: the setting where
    tying the output layer to the input table could help a rare word's row learn."""
    check_count("spellings", spellings)
    if not exponent > 0:
        raise ValueError(f"exponent must be positive, got {exponent!r}")
    rng = random.Random(seed + ZIPF_SEED)
    ranks = range(1, spellings + 1)
    weights = [rank ** -exponent for rank in ranks]

    def respell(words: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(spelling(w, rng.choices(ranks, weights)[0]) for w in words)

    return [Document(d.topic, [Sentence(respell(s.words), s.tags, s.kind, s.fact,
                                        s.value_start) for s in d.sentences], d.facts)
            for d in generate_corpus(num_documents, seed)]


def zipfian_tokenizer(spellings: int = 16) -> WordPiece:
    """The vocabulary of `zipfian_corpus`: the special tokens, then every spelling of every
    word, sorted. With spellings=1 it is `corpus_tokenizer()`."""
    check_count("spellings", spellings)
    words = {spelling(w, rank) for w in corpus_words() for rank in range(1, spellings + 1)}
    return WordPiece([*SPECIAL_TOKENS, *sorted(words)])


# ---------------------------------------------------------------- plain text files


def load_text_corpus(path: str | Path, vocab_size: int = 2000) -> tuple[list[Document], WordPiece]:
    """Read any plain text file as a corpus: blank lines separate documents, and a
    document splits into sentences after . ! or ?. Also returns a WordPiece vocabulary
    of at most `vocab_size` tokens trained on the file."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"load_text_corpus: no such file {path}")
    text = path.read_text(encoding="utf-8", errors="replace")
    documents = []
    for block in re.split(r"\n\s*\n", text):
        flat = " ".join(block.split())
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", flat) if s]
        if sentences:
            words = [tuple(s.split()) for s in sentences]
            documents.append(Document("text", [Sentence(w, ("O",) * len(w), "text") for w in words]))
    if not documents:
        raise ValueError(f"load_text_corpus: {path} holds no text")
    tokenizer, _ = train_wordpiece((d.text for d in documents), vocab_size)
    return documents, tokenizer


def check_count(name: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
