"""Fill-in-the-blank tests for masked-LM models: which side of a blank does a model use?

`middle_blanks` hides one ordinary token per row, drawn from the middle of the row's text,
so that there are words on both sides. `blank_logits` scores the blanks, optionally with
everything to the right of the blank hidden from attention (what a left-to-right model
sees anyway). `accuracy_by_position` scores BERT-style random masks position by position.
`value_blanks` hides the value of each first-mention fact of the synthetic corpus ("the
fox lives in the ___ ."), and `value_blank_shares` asks whether a model's guesses are the
true word, or at least of the right kind.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from ..model.heads import IGNORE_INDEX
from ..text.datasets import Dataset
from ..text.language import RELATIONS
from ..training.trainer import masked_lm_scores, vocabulary_logits
from .positions import mlm_accuracy_by_position


@dataclass
class Blanks:
    """Rows with one [MASK] each: the model inputs, where the blank is, and its answer."""

    input_ids: torch.Tensor  # (N, T) with [MASK] at `position`
    attention_mask: torch.Tensor  # (N, T)
    token_type_ids: torch.Tensor  # (N, T)
    position: torch.Tensor  # (N,) index of the blank
    answer: torch.Tensor  # (N,) the hidden token id

    def __len__(self) -> int:
        return len(self.position)


def middle_blanks(dataset: Dataset, low: float = 0.25, high: float = 0.75,
                  seed: int = 0) -> Blanks:
    """One blank per row, at an ordinary token whose place in the row's text (0 = first
    token after [CLS], 1 = last before the final [SEP]) lies in [low, high). Rows without
    such a token are skipped."""
    if not 0.0 <= low < high <= 1.0:
        raise ValueError(f"need 0 <= low < high <= 1, got low={low!r}, high={high!r}")
    tokenizer = dataset.tokenizer
    ids, mask = dataset["input_ids"], dataset["attention_mask"]
    special = torch.tensor(tokenizer.special_ids)
    generator = torch.Generator().manual_seed(seed)
    rows, positions = [], []
    for row in range(len(ids)):
        length = int(mask[row].sum())
        place = (torch.arange(ids.shape[1]) - 1) / max(1, length - 3)  # 0 .. 1 over the text
        ok = (place >= low) & (place < high) & ~torch.isin(ids[row], special)
        candidates = ok[:length].nonzero().flatten()
        if len(candidates):
            pick = torch.randint(len(candidates), (1,), generator=generator)
            rows.append(row)
            positions.append(int(candidates[pick]))
    index, position = torch.tensor(rows, dtype=torch.long), torch.tensor(positions)
    input_ids = ids[index].clone()
    answer = input_ids[torch.arange(len(index)), position].clone()
    input_ids[torch.arange(len(index)), position] = tokenizer.mask_id
    return Blanks(input_ids, mask[index].clone(), dataset["token_type_ids"][index].clone(),
                  position, answer)


def blank_batch(blanks: Blanks, hide_right: bool = False,
                input_ids: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
    """The blanks as a masked batch (labels: the answer at each blank, IGNORE_INDEX
    elsewhere). hide_right=True removes every token to the right of the blank from the
    attention mask; input_ids replaces the rows' tokens (e.g. with a changed right context)."""
    ids = blanks.input_ids if input_ids is None else input_ids  # (N, T)
    attention_mask = blanks.attention_mask.clone()
    if hide_right:
        right = torch.arange(ids.shape[1])[None, :] > blanks.position[:, None]  # (N, T)
        attention_mask[right] = 0
    rows = torch.arange(len(blanks))
    labels = torch.full_like(ids, IGNORE_INDEX)
    labels[rows, blanks.position] = blanks.answer
    return {"input_ids": ids, "attention_mask": attention_mask,
            "token_type_ids": blanks.token_type_ids, "labels": labels}


@torch.no_grad()
def blank_logits(model: torch.nn.Module, blanks: Blanks, hide_right: bool = False,
                 input_ids: torch.Tensor | None = None) -> torch.Tensor:
    """The model's vocabulary scores at each blank, (N, V); the arguments as in
    `blank_batch`."""
    _, logits = vocabulary_logits(model, blank_batch(blanks, hide_right, input_ids))  # (N, T, V)
    return logits[torch.arange(len(blanks)), blanks.position.to(logits.device)].cpu()


def blank_accuracy(model: torch.nn.Module, blanks: Blanks, hide_right: bool = False) -> float:
    """Share of blanks whose top-scoring token is the answer."""
    scores = masked_lm_scores(model, blank_batch(blanks, hide_right))
    return scores.right.sum().item() / len(blanks)


def accuracy_by_position(model: torch.nn.Module, dataset: Dataset, rate: float = 0.15,
                         repeats: int = 3, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Masked-LM accuracy at each position of the rows (every chosen token becomes [MASK]),
    over `repeats` random maskings. Returns accuracy (T,) (nan where nothing was masked)
    and the number of blanks scored at each position (T,)."""
    hits, trials = mlm_accuracy_by_position(model, dataset, rate=rate, seed=seed,
                                            repeats=repeats, batch_size=len(dataset))
    accuracy = torch.where(trials > 0, hits / trials.clamp(min=1), torch.tensor(float("nan")))
    return accuracy, trials


@torch.no_grad()
def top_guesses(model: torch.nn.Module, input_ids: torch.Tensor, token_type_ids: torch.Tensor,
                position: int, vocab: list[str], mask_id: int, k: int = 3) -> str:
    """The model's k most likely words, with their probabilities, for a blank at `position`
    of one row (input_ids, token_type_ids: (T,)); for an explorer of what a model guesses."""
    device = next(model.parameters()).device
    ids = input_ids.clone()
    ids[position] = mask_id
    output = model(ids[None].to(device), token_type_ids=token_type_ids[None].to(device))
    logits = getattr(output, "prediction_logits", None)
    logits = output.logits if logits is None else logits  # (1, T, V)
    probabilities, guesses = logits[0, position].softmax(-1).topk(k)
    return ", ".join(f"{vocab[i]} ({p:.2f})"
                     for i, p in zip(guesses.tolist(), probabilities.tolist()))


# ---------------------------------------------------------------- the corpus' facts


@dataclass(frozen=True)
class ValueBlank:
    """One first-mention fact of a synthetic document, its value hidden: the sentence's
    words, the value's word position, the value, its relation, and the values that fit."""

    words: tuple[str, ...]
    position: int
    answer: str
    relation: str
    values: tuple[str, ...]


def value_blanks(documents) -> list[ValueBlank]:
    """A blank for every first-mention fact of `documents` (minibert.text.language
    Documents) whose value is one word from its relation's fixed list (not a person or a
    city)."""
    found = []
    for document in documents:
        for sentence in document.sentences:
            fact = sentence.fact
            if sentence.kind != "fact" or len(fact.value.words) != 1:
                continue
            values = RELATIONS[document.topic][fact.relation][0]
            if isinstance(values, list):
                found.append(ValueBlank(tuple(sentence.words), sentence.value_start,
                                        fact.value.text, fact.relation, tuple(values)))
    return found


@torch.no_grad()
def value_blank_probabilities(model: torch.nn.Module, blanks: list[ValueBlank],
                              tokenizer) -> torch.Tensor:
    """(N, V) the model's distribution over the token at each blank, [MASK]ed, with the
    sentence alone as its row, [CLS] sentence [SEP] (every word is one token)."""
    device = next(model.parameters()).device
    rows = []
    for blank in blanks:
        ids = tokenizer.convert_tokens_to_ids(list(blank.words))
        ids[blank.position] = tokenizer.mask_id
        rows.append([tokenizer.cls_id, *ids, tokenizer.sep_id])
    width = max(len(row) for row in rows)
    ids = torch.tensor([row + [tokenizer.pad_id] * (width - len(row)) for row in rows])
    mask = (ids != tokenizer.pad_id).long()  # (N, width): padding is not attended to
    was_training = model.training
    model.eval()
    logits = model(ids.to(device), attention_mask=mask.to(device)).prediction_logits
    model.train(was_training)
    where = torch.tensor([blank.position + 1 for blank in blanks])  # +1: [CLS]
    return logits.cpu()[torch.arange(len(rows)), where].softmax(-1)


def value_blank_shares(model: torch.nn.Module, blanks: list[ValueBlank],
                       tokenizer) -> dict[str, float]:
    """Three shares over the blanks: the top prediction is the true word; a word of the
    right kind (one of the values that fit) is among the top five; and, among the value
    words of all the blanks, the one the model ranks highest is of the right kind."""
    value_words = sorted({word for blank in blanks for word in blank.values})
    value_ids = torch.tensor(tokenizer.convert_tokens_to_ids(value_words))  # (W,)
    hits = {"true word on top": 0, "right kind in top 5": 0, "right kind among values": 0}
    probabilities = value_blank_probabilities(model, blanks, tokenizer)  # (N, V)
    for blank, probs in zip(blanks, probabilities):
        top5 = [tokenizer.vocab[i] for i in probs.topk(5).indices.tolist()]
        favourite_value = value_words[int(probs[value_ids].argmax())]
        hits["true word on top"] += top5[0] == blank.answer
        hits["right kind in top 5"] += any(token in blank.values for token in top5)
        hits["right kind among values"] += favourite_value in blank.values
    return {name: count / len(blanks) for name, count in hits.items()}
