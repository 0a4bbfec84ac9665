"""Extending position and segment tables, the zoo's initial weights, weight decay on
unused rows, and per-position masked-LM accuracy."""

import pytest
import torch

import minibert
from helpers import padded_batch
from minibert.measure import positions
from minibert.model.layers import sinusoidal_table
from minibert.text.datasets import pretraining_pairs
from minibert.text.language import corpus_tokenizer, generate_corpus
from minibert.training.trainer import train


def table(rows=6, width=4):
    return torch.arange(rows * width, dtype=torch.float32).reshape(rows, width)


def test_copy_repeats_the_trained_rows():
    rows = positions.extended_rows(table(), trained_length=3, new_length=7, method="copy")
    assert rows.shape == (7, 4)
    assert torch.equal(rows[:3], table()[:3]) and torch.equal(rows[3:6], table()[:3])
    assert torch.equal(rows[6], table()[0])


def test_interpolate_keeps_the_ends_and_stays_between_neighbours():
    trained = table()[:3]
    rows = positions.extended_rows(table(), trained_length=3, new_length=5, method="interpolate")
    assert torch.equal(rows[0], trained[0]) and torch.allclose(rows[-1], trained[-1])
    assert torch.allclose(rows[1], (trained[0] + trained[1]) / 2)  # 1 * 2/4 = 0.5
    assert torch.allclose(rows[2], trained[1])


def test_fresh_keeps_trained_rows_and_draws_bert_like_new_ones():
    generator = torch.Generator().manual_seed(0)
    big = torch.zeros(2, 256)
    rows = positions.extended_rows(big, 2, 202, "fresh", std=0.02, generator=generator)
    assert torch.equal(rows[:2], big)
    new = rows[2:]
    assert new.abs().max() <= 0.04 and 0.01 < new.std() < 0.02  # truncated at 2 std


def test_extended_rows_rejects_bad_arguments():
    with pytest.raises(ValueError, match="method"):
        positions.extended_rows(table(), 3, 6, "tile")
    with pytest.raises(ValueError, match="trained_length"):
        positions.extended_rows(table(), 9, 12, "copy")
    with pytest.raises(ValueError, match="new_length"):
        positions.extended_rows(table(), 4, 3, "copy")


def test_extend_positions_grows_the_table_and_accepts_longer_input(tiny_config):
    model = minibert.BertModel(tiny_config).eval()  # 32 positions
    longer = positions.extend_positions(model, 80, method="copy")
    assert longer.config.max_position_embeddings == 80
    assert model.config.max_position_embeddings == 32  # the original is untouched
    old = model.embeddings.position_embeddings.weight
    new = longer.embeddings.position_embeddings.weight
    assert new.shape == (80, tiny_config.hidden_size) and new.requires_grad
    assert torch.equal(new[32:64], old) and torch.equal(new[:32], old)
    batch = padded_batch(tiny_config, seq_len=80)
    assert longer(**batch).last_hidden_state.shape[1] == 80
    with pytest.raises(ValueError, match="exceeds max_position_embeddings"):
        model(**batch)


def test_extend_positions_of_a_task_model_keeps_rows_past_new_length(tiny_config):
    model = minibert.BertForPreTraining(tiny_config)
    changed = positions.extend_positions(model, 16, trained_length=8, method="interpolate")
    old = model.bert.embeddings.position_embeddings.weight
    new = changed.bert.embeddings.position_embeddings.weight
    assert new.shape == old.shape and changed.bert.config is changed.config
    assert torch.equal(new[16:], old[16:]) and torch.equal(new[0], old[0])
    assert torch.allclose(new[15], old[7])


def test_sinusoidal_positions_extend_by_formula(tiny_config):
    model = minibert.BertModel(tiny_config.replace(position_embedding_type="sinusoidal"))
    longer = positions.extend_positions(model, 100)
    weight = longer.embeddings.position_embeddings.weight
    assert torch.allclose(weight, sinusoidal_table(100, tiny_config.hidden_size))
    assert not weight.requires_grad
    with pytest.raises(ValueError, match="no method"):
        positions.extend_positions(model, 100, method="copy")
    with pytest.raises(ValueError, match="needs a method"):
        positions.extend_positions(minibert.BertModel(tiny_config), 100)


def test_extend_segments(tiny_config):
    model = minibert.BertModel(tiny_config).eval()
    batch = padded_batch(tiny_config)
    batch["token_type_ids"][:, -1] = 2
    with pytest.raises(ValueError, match="segment id 2"):
        model(**batch)
    fresh = positions.extend_segments(model, 3)
    copied = positions.extend_segments(model, 3, copy_from=1)
    old = model.embeddings.token_type_embeddings.weight
    assert fresh.config.type_vocab_size == 3
    assert torch.equal(fresh.embeddings.token_type_embeddings.weight[:2], old)
    assert torch.equal(copied.embeddings.token_type_embeddings.weight[2], old[1])
    as_one = {**batch, "token_type_ids": batch["token_type_ids"].clamp(max=1)}
    assert torch.allclose(copied(**batch).last_hidden_state, model(**as_one).last_hidden_state)
    with pytest.raises(ValueError, match="exceed"):
        positions.extend_segments(model, 2)


def test_initial_model_is_seeded_and_leaves_the_global_rng_alone(tiny_config):
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    a = positions.initial_model(tiny_config, seed=5)
    assert torch.equal(torch.rand(3), expected)
    b = positions.initial_model(tiny_config, seed=5)
    c = positions.initial_model(tiny_config, seed=6)
    table_a = a.bert.embeddings.position_embeddings.weight
    assert torch.equal(table_a, b.bert.embeddings.position_embeddings.weight)
    assert not torch.equal(table_a, c.bert.embeddings.position_embeddings.weight)


def test_unused_rows_only_decay():
    """Rows past the training length get no gradient: AdamW only shrinks them."""
    tokenizer = corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, num_hidden_layers=1,
                             max_position_embeddings=24)
    pairs = pretraining_pairs(generate_corpus(20, seed=0), tokenizer, max_length=16)
    model = positions.initial_model(config, seed=0)
    start = model.bert.embeddings.position_embeddings.weight.detach().clone()
    history = train(model, pairs, steps=6, lr=1e-2, batch_size=8, warmup_steps=2,
                    weight_decay=0.1, progress=False, device="cpu")
    end = model.bert.embeddings.position_embeddings.weight.detach()
    factor = positions.decay_factor(history.lr, weight_decay=0.1)
    assert factor < 0.999
    assert torch.allclose(end[16:], start[16:] * factor, atol=1e-7, rtol=0)
    assert (end[:16] - start[:16]).norm(dim=1).min() > 10 * (1 - factor) * start.norm(dim=1).max()


def test_mlm_accuracy_by_position_counts_every_masked_token():
    tokenizer = corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, num_hidden_layers=1,
                             max_position_embeddings=16)
    pairs = pretraining_pairs(generate_corpus(10, seed=1), tokenizer, max_length=16)
    model = positions.initial_model(config, seed=0)
    hits, trials = positions.mlm_accuracy_by_position(model, pairs, repeats=2)
    assert hits.shape == trials.shape == (16,)
    assert trials[0] == 0 and trials.sum() > 0 and (hits <= trials).all()
    eligible = ~torch.isin(pairs["input_ids"], torch.tensor(tokenizer.special_ids))
    assert trials.sum() <= 2 * eligible.sum()


def test_hidden_tail_does_not_reach_the_visible_positions():
    """With visible=k the attention mask hides positions k.. from every row, the blanks
    drawn are unchanged, and what is read at 0..k-1 does not depend on the tail."""
    tokenizer = corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, num_hidden_layers=1,
                             max_position_embeddings=16)
    pairs = pretraining_pairs(generate_corpus(10, seed=1), tokenizer, max_length=16)
    model = positions.initial_model(config, seed=0)
    train(model, pairs, steps=30, lr=1e-2, batch_size=8, warmup_steps=2, progress=False,
          device="cpu")  # enough to get some blanks right
    masks_seen = []

    class Recorder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = model

        def forward(self, **inputs):
            masks_seen.append(inputs["attention_mask"])
            return self.inner(**inputs)

    other_tail = pairs["input_ids"].clone()  # (B, 16)
    other_tail[:, 8:] = other_tail[:, 8:].roll(1, dims=0)  # another row's tail
    shuffled = type(pairs)({**pairs.tensors, "input_ids": other_tail}, pairs.examples,
                           pairs.tokenizer, pairs.label_names)
    hidden = [positions.mlm_accuracy_by_position(Recorder(), d, visible=8, rate=0.5)
              for d in (pairs, shuffled)]
    assert all((m[:, 8:] == 0).all() for m in masks_seen)
    assert torch.equal(masks_seen[0][:, :8], pairs["attention_mask"][:, :8])
    seen = positions.mlm_accuracy_by_position(model, pairs, rate=0.5)
    assert torch.equal(hidden[0][1][:8], seen[1][:8])  # the same blanks
    assert hidden[0][0][:8].sum() > 0 and torch.equal(hidden[0][0][:8], hidden[1][0][:8])


def test_window_reads_each_piece_alone():
    """With window=k each position attends only within its block of k: a rotary model
    (positions relative) reads the second block as it reads those tokens as a row of
    their own; a window as long as the row changes nothing."""
    tokenizer = corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size, num_hidden_layers=1,
                             max_position_embeddings=16, position_embedding_type="rotary")
    pairs = pretraining_pairs(generate_corpus(10, seed=1), tokenizer, max_length=16)
    model = positions.initial_model(config, seed=0).eval()
    whole = positions.mlm_accuracy_by_position(model, pairs)
    assert all(torch.equal(a, b) for a, b in
               zip(whole, positions.mlm_accuracy_by_position(model, pairs, window=16)))
    ids, segments = pairs["input_ids"][:4], pairs["token_type_ids"][:4]  # (4, 16) each
    block = torch.arange(16) // 8
    mask = (block[:, None] == block[None, :]).expand(4, 16, 16)  # (B, T, T)
    with torch.no_grad():
        pieces = model.bert(ids, attention_mask=mask, token_type_ids=segments
                            ).last_hidden_state[:, 8:]  # (4, 8, H)
        alone = model.bert(ids[:, 8:], token_type_ids=segments[:, 8:]
                           ).last_hidden_state  # the second half as its own row
    torch.testing.assert_close(pieces, alone, atol=1e-5, rtol=1e-5)
