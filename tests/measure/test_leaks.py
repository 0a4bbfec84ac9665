"""How a word reaches its own prediction: paths through values and the residual, the
every-token task's accuracy, and a row's guesses."""

import pytest
import torch

import minibert
from minibert.measure import leaks
from minibert.model.bert import additive_mask
from minibert.text.datasets import pretraining_pairs, sentence_batch
from minibert.text.language import corpus_tokenizer, generate_corpus


def not_self(T):
    return ~torch.eye(T, dtype=torch.bool)


@pytest.mark.parametrize("T", [2, 5, 9])
def test_the_diagonal_is_closed_for_one_layer_and_open_after_two(T):
    allowed = not_self(T)
    assert not leaks.value_paths(allowed, 1, residual=False).diagonal().any()
    assert leaks.value_paths(allowed, 2, residual=False).diagonal().all()
    assert leaks.value_paths(allowed, 1, residual=True).diagonal().all()  # the skip path
    assert leaks.value_paths(allowed, 0, residual=False).equal(torch.eye(T, dtype=torch.bool))


def test_paths_match_an_enumeration_of_every_route():
    g = torch.Generator().manual_seed(0)
    allowed = torch.rand(6, 6, generator=g) < 0.3
    for residual in (False, True):
        step = allowed | torch.eye(6, dtype=torch.bool) if residual else allowed
        for layers in range(4):
            reach = leaks.value_paths(allowed, layers, residual)
            for i in range(6):
                for j in range(6):
                    frontier = {j}  # where input j's information sits after each layer
                    for _ in range(layers):
                        frontier = {a for a in range(6) if any(step[a, b] for b in frontier)}
                    assert bool(reach[i, j]) == (i in frontier)


def test_a_causal_pattern_without_the_diagonal_never_reaches_itself():
    config = minibert.preset("tiny", vocab_size=50, attention_direction="causal",
                             mask_self_attention=True)
    allowed = additive_mask(config, None, 7, torch.float32, "cpu") == 0  # (T, T)
    for layers in (1, 2, 5):
        assert not leaks.value_paths(allowed, layers, residual=False).diagonal().any()
    with pytest.raises(ValueError, match="square"):
        leaks.value_paths(torch.ones(3, 4, dtype=torch.bool), 1, residual=False)


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    config = minibert.preset("tiny", vocab_size=corpus_tokenizer().vocab_size)
    return minibert.BertForPreTraining(config).eval()


def test_every_token_accuracy_counts_every_ordinary_token(model):
    rows = pretraining_pairs(generate_corpus(6, seed=2), corpus_tokenizer(), max_length=32)
    ids = rows["input_ids"]
    ordinary = ~torch.isin(ids, torch.tensor(rows.tokenizer.special_ids))
    with torch.no_grad():
        guesses = model(input_ids=ids, attention_mask=rows["attention_mask"],
                        token_type_ids=rows["token_type_ids"]).prediction_logits.argmax(-1)
    expected = ((guesses == ids) & ordinary).sum().item() / ordinary.sum().item()
    assert leaks.every_token_accuracy(model, rows) == pytest.approx(expected)


def test_row_guesses_as_is_and_each_masked(model):
    tokenizer = corpus_tokenizer()
    row = sentence_batch("the fox lives in the forest .", tokenizer)
    T = row["input_ids"].shape[1]
    as_is = leaks.row_guesses(model, row, tokenizer.mask_id, each_masked=False)
    masked = leaks.row_guesses(model, row, tokenizer.mask_id, each_masked=True)
    assert as_is.shape == masked.shape == (T,)
    with torch.no_grad():
        assert as_is.equal(model(**row).prediction_logits.argmax(-1)[0])
        ids = row["input_ids"].clone()
        ids[0, 2] = tokenizer.mask_id
        third = model(ids, token_type_ids=row["token_type_ids"]).prediction_logits[0, 2]
    assert masked[2] == third.argmax()
