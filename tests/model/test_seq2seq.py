"""The three sequence-to-sequence models (encoder-decoder, decoder-only, LSTM): causality,
padding, greedy generation against teacher forcing, cross-attention's weights, shared
tables, parameter counts, config and input errors, and learning a tiny reversal task."""

import pytest
import torch

from minibert.measure.cost import decoding_times
from minibert.measure.parameters import seq2seq_count_by_formula, sized_to_budget
from minibert.model.decoder_only import DecoderOnlyConfig, DecoderOnlyModel
from minibert.model.encoder_decoder import EncoderDecoderConfig, EncoderDecoderModel
from minibert.model.lstm_seq2seq import LstmEncoderDecoder, LstmSeq2SeqConfig
from minibert.training.trainer import train

SIZES = dict(source_vocab_size=20, target_vocab_size=18, hidden_size=32,
             max_source_positions=12, max_target_positions=10)
TRANSFORMER = dict(SIZES, num_attention_heads=2, intermediate_size=64)
BOS, EOS = 1, 2

CONFIGS = {
    "encoder-decoder": EncoderDecoderConfig(**TRANSFORMER),
    "encoder-decoder pre-LN": EncoderDecoderConfig(**TRANSFORMER, layer_norm_position="pre"),
    "decoder-only": DecoderOnlyConfig(**TRANSFORMER, num_hidden_layers=2),
    "prefix LM": DecoderOnlyConfig(**TRANSFORMER, num_hidden_layers=2,
                                   prefix_attention="bidirectional"),
    "LSTM": LstmSeq2SeqConfig(**SIZES),
    "LSTM two layers, two heads": LstmSeq2SeqConfig(**SIZES, num_layers=2,
                                                    num_attention_heads=2),
    "LSTM additive": LstmSeq2SeqConfig(**SIZES, attention_score="additive"),
}
MODEL_OF = {EncoderDecoderConfig: EncoderDecoderModel, DecoderOnlyConfig: DecoderOnlyModel,
            LstmSeq2SeqConfig: LstmEncoderDecoder}
TRANSFORMERS = [name for name in CONFIGS if "LSTM" not in name]
WITH_CROSS_ATTENTION = ["encoder-decoder", "encoder-decoder pre-LN", "LSTM",
                        "LSTM two layers, two heads", "LSTM additive"]


def build(name: str, **changes):
    torch.manual_seed(0)
    config = CONFIGS[name].replace(**changes)
    return MODEL_OF[type(config)](config).eval()


def batch(config, seed: int = 0, S: int = 7, T: int = 6):
    """Random source rows of lengths S, S - 2 and 3 (padded with 0), and random targets."""
    g = torch.Generator().manual_seed(seed)
    source_ids = torch.randint(3, config.source_vocab_size, (3, S), generator=g)
    source_mask = (torch.arange(S)[None, :] < torch.tensor([[S], [S - 2], [3]])).long()
    target_in_ids = torch.randint(3, config.target_vocab_size, (3, T), generator=g)
    target_in_ids[:, 0] = BOS
    return source_ids * source_mask, source_mask, target_in_ids


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_a_target_token_changes_no_score_before_it(name):
    model = build(name)
    source_ids, source_mask, target_in_ids = batch(model.config)
    t = 2
    changed = target_in_ids.clone()
    changed[:, t + 1:] = (changed[:, t + 1:] + 5) % model.config.target_vocab_size
    with torch.no_grad():
        before = model(source_ids, source_mask, target_in_ids).logits  # (B, T, V)
        after = model(source_ids, source_mask, changed).logits
    torch.testing.assert_close(after[:, : t + 1], before[:, : t + 1], rtol=0, atol=1e-6)
    assert (after[:, t + 1:] - before[:, t + 1:]).abs().max() > 1e-3  # the later ones do move


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_source_padding_changes_nothing(name):
    model = build(name)
    source_ids, source_mask, target_in_ids = batch(model.config)
    other_padding = torch.where(source_mask.bool(), source_ids, 7)
    with torch.no_grad():
        before = model(source_ids, source_mask, target_in_ids).logits
        after = model(other_padding, source_mask, target_in_ids).logits
    torch.testing.assert_close(after, before, rtol=0, atol=1e-6)


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_generation_scores_as_teacher_forcing_on_its_own_prefix(name, use_cache):
    model = build(name)
    source_ids, source_mask, _ = batch(model.config)
    generated = model.generate_greedy(source_ids, source_mask, max_length=8, bos_id=BOS,
                                      eos_id=EOS, use_cache=use_cache)
    B, n = generated.tokens.shape
    assert generated.num_steps == n and generated.step_logits.shape == (
        B, n, model.config.target_vocab_size)
    prefix = torch.cat([torch.full((B, 1), BOS), generated.tokens[:, :-1]], dim=1)  # (B, n)
    with torch.no_grad():
        teacher_forced = model(source_ids, source_mask, prefix).logits  # (B, n, V)
    torch.testing.assert_close(generated.step_logits, teacher_forced, rtol=0, atol=1e-5)
    assert torch.equal(generated.tokens, generated.step_logits.argmax(-1))  # before any EOS


@pytest.mark.parametrize("name", ["encoder-decoder", "decoder-only", "LSTM"])
def test_generation_stops_once_every_row_has_said_eos(name):
    model = build(name)
    with torch.no_grad():
        model.output_bias[EOS] = 100.0  # EOS wins every step
    source_ids, source_mask, _ = batch(model.config)
    generated = model.generate_greedy(source_ids, source_mask, max_length=8, bos_id=BOS,
                                      eos_id=EOS)
    assert generated.num_steps == 1 and (generated.tokens == EOS).all()
    without_eos = model.generate_greedy(source_ids, source_mask, max_length=8, bos_id=BOS,
                                        eos_id=None)
    assert without_eos.num_steps == 8 and (without_eos.tokens == EOS).all()


@pytest.mark.parametrize("name", WITH_CROSS_ATTENTION)
def test_cross_attention_weights_are_distributions_over_the_real_source_tokens(name):
    model = build(name)
    source_ids, source_mask, target_in_ids = batch(model.config)
    with torch.no_grad():
        out = model(source_ids, source_mask, target_in_ids, output_attentions=True)
    layers = getattr(model.config, "num_decoder_layers", 1)
    heads = model.config.num_attention_heads
    assert len(out.cross_attentions) == layers
    for weights in out.cross_attentions:
        assert weights.shape == (3, heads, target_in_ids.shape[1], source_ids.shape[1])
        torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
        padded = ~source_mask.bool()[:, None, None, :].expand_as(weights)
        assert (weights[padded] == 0).all()


@pytest.mark.parametrize("name", TRANSFORMERS)
def test_asking_for_weights_leaves_the_scores_unchanged(name):
    """The fused kernel and the explicit scores agree, cross-attention's included."""
    model = build(name)
    source_ids, source_mask, target_in_ids = batch(model.config)
    with torch.no_grad():
        fast = model(source_ids, source_mask, target_in_ids).logits
        explicit = model(source_ids, source_mask, target_in_ids, output_attentions=True).logits
    torch.testing.assert_close(explicit, fast, rtol=0, atol=1e-5)


@pytest.mark.parametrize("name", ["decoder-only", "prefix LM"])
def test_the_prefix_attends_both_ways_only_in_the_prefix_lm(name):
    model = build(name)
    source_ids, source_mask, target_in_ids = batch(model.config)
    with torch.no_grad():
        out = model(source_ids, source_mask, target_in_ids, output_attentions=True)
    S = source_ids.shape[1]
    weights = out.attentions[0]  # (B, nh, N, N)
    source_looks_ahead = weights[0, :, 0, 1:S].sum()  # the first source token, later ones
    assert (source_looks_ahead > 0) == (name == "prefix LM")
    assert (weights[:, :, :S, S:] == 0).all()  # the source never reads the target
    assert (weights[..., :S][~source_mask.bool()[:, None, None, :].expand(
        -1, weights.shape[1], weights.shape[2], -1)] == 0).all()  # no one reads the padding
    target_rows = weights[:, :, S:, S:]  # (B, nh, T, T): causal in both variants
    assert (target_rows.triu(diagonal=1) == 0).all()


@pytest.mark.parametrize("name", ["encoder-decoder", "decoder-only", "LSTM"])
def test_shared_embeddings_are_one_table(name):
    separate = build(name, target_vocab_size=20)
    shared = build(name, target_vocab_size=20, share_embeddings=True)
    tables = {
        "encoder-decoder": lambda m: (m.encoder.embeddings.word_embeddings.weight,
                                      m.decoder.embeddings.word_embeddings.weight),
        "decoder-only": lambda m: (m.bert.embeddings.word_embeddings.weight,) * 2,
        "LSTM": lambda m: (m.source_embeddings.weight, m.target_embeddings.weight),
    }[name]
    source_table, target_table = tables(shared)
    assert source_table is target_table and source_table.shape == (20, 32)
    if name != "decoder-only":
        assert tables(separate)[0] is not tables(separate)[1]
    assert separate.num_parameters() - shared.num_parameters() == 20 * 32


def test_the_output_layer_is_the_target_table():
    model = build("encoder-decoder")
    source_ids, source_mask, target_in_ids = batch(model.config)
    out = model(source_ids, source_mask, target_in_ids, labels=target_in_ids)
    out.loss.backward()
    table = model.decoder.embeddings.word_embeddings.weight
    assert table.grad[model.config.target_vocab_size - 1].abs().sum() > 0  # never an input


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("share", [False, True])
def test_the_parameter_formula_counts_every_parameter(name, share):
    model = build(name, target_vocab_size=20, share_embeddings=share)
    counts = seq2seq_count_by_formula(model.config)
    assert sum(counts.values()) == sum(p.numel() for p in model.parameters())


@pytest.mark.parametrize("name", ["encoder-decoder", "decoder-only", "LSTM"])
def test_a_config_sized_to_a_budget_lands_near_it(name):
    config = sized_to_budget(CONFIGS[name], 60_000)
    total = sum(seq2seq_count_by_formula(config).values())
    wider = sized_to_budget(CONFIGS[name], 120_000)
    assert abs(total - 60_000) < 0.1 * 60_000 and wider.hidden_size > config.hidden_size
    with pytest.raises(ValueError, match="budget"):
        sized_to_budget(CONFIGS[name], 0)


@pytest.mark.parametrize("config_class, changes, message", [
    (EncoderDecoderConfig, dict(hidden_size=30, num_attention_heads=4),
     r"EncoderDecoderConfig.hidden_size \(30\) must be divisible by num_attention_heads"),
    (DecoderOnlyConfig, dict(hidden_size=30, num_attention_heads=4),
     r"DecoderOnlyConfig.hidden_size \(30\) must be divisible"),
    (LstmSeq2SeqConfig, dict(hidden_size=30, num_attention_heads=4),
     r"LstmSeq2SeqConfig.hidden_size \(30\) must be divisible"),
    (LstmSeq2SeqConfig, dict(hidden_size=31), "must be even"),
    (LstmSeq2SeqConfig, dict(attention_score="bilinear"), "LstmSeq2SeqConfig.attention_score"),
    (EncoderDecoderConfig, dict(source_vocab_size=20, target_vocab_size=18,
                                share_embeddings=True), "share_embeddings needs one vocabulary"),
    (LstmSeq2SeqConfig, dict(source_vocab_size=20, target_vocab_size=18,
                             share_embeddings=True), "share_embeddings needs one vocabulary"),
    (EncoderDecoderConfig, dict(num_decoder_layers=0),
     "EncoderDecoderConfig.num_decoder_layers must be a positive integer"),
    (EncoderDecoderConfig, dict(max_target_positions=True), "max_target_positions"),
    (DecoderOnlyConfig, dict(prefix_attention="both"), "prefix_attention must be one of"),
    (EncoderDecoderConfig, dict(hidden_dropout_prob=1.0), "hidden_dropout_prob"),
    (EncoderDecoderConfig, dict(attention_probs_dropout_prob=-0.1),
     "EncoderDecoderConfig.attention_probs_dropout_prob"),
    (EncoderDecoderConfig, dict(layer_norm_position="middle"), "layer_norm_position"),
    (EncoderDecoderConfig, dict(hidden_act="swish"), "hidden_act 'swish' is unknown"),
    (EncoderDecoderConfig, dict(pad_token_id=18, target_vocab_size=18), "pad_token_id"),
    (EncoderDecoderConfig, dict(share_embeddings=1), "share_embeddings must be True or False"),
])
def test_a_bad_config_is_refused_with_its_field_named(config_class, changes, message):
    with pytest.raises(ValueError, match=message):
        config_class(**changes)


@pytest.mark.parametrize("name", ["encoder-decoder", "decoder-only", "LSTM"])
def test_a_bad_batch_is_refused_with_a_message(name):
    model = build(name)
    source_ids, source_mask, target_in_ids = batch(model.config)
    with pytest.raises(ValueError, match="padding at the end"):
        model(source_ids, source_mask.flip(1), target_in_ids)
    with pytest.raises(ValueError, match="target ids must lie in"):
        model(source_ids, source_mask, target_in_ids + 100)
    with pytest.raises(ValueError, match="source length 13 exceeds"):
        model(torch.ones(3, 13, dtype=torch.long), torch.ones(3, 13), target_in_ids)
    with pytest.raises(ValueError, match="labels have shape"):
        model(source_ids, source_mask, target_in_ids, labels=target_in_ids[:, 1:])
    with pytest.raises(ValueError, match="max_length"):
        model.generate_greedy(source_ids, source_mask, max_length=11, bos_id=BOS, eos_id=EOS)
    with pytest.raises(ValueError, match="bos_id"):
        model.generate_greedy(source_ids, source_mask, max_length=5, bos_id=18, eos_id=EOS)


def reversal_task(config, rows: int = 16, length: int = 5, seed: int = 0):
    """Reverse a row of random tokens (ids 3.. of a small vocabulary): sources, their mask,
    the reversed target behind BOS, and the labels (the reversed target, then EOS)."""
    g = torch.Generator().manual_seed(seed)
    source_ids = torch.randint(3, 10, (rows, length), generator=g)
    reversed_ids = source_ids.flip(1)
    target_in_ids = torch.cat([torch.full((rows, 1), BOS), reversed_ids], dim=1)
    labels = torch.cat([reversed_ids, torch.full((rows, 1), EOS)], dim=1)
    return source_ids, torch.ones_like(source_ids), target_in_ids, labels


@pytest.mark.parametrize("name", ["encoder-decoder", "decoder-only", "LSTM"])
def test_each_model_learns_to_reverse_a_few_rows(name):
    model = build(name, hidden_dropout_prob=0.0).train()
    source_ids, source_mask, target_in_ids, labels = reversal_task(model.config)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(80):
        loss = model(source_ids, source_mask, target_in_ids, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert losses[-1] < 0.25 * losses[0], losses[::10]


@pytest.mark.parametrize("name", ["encoder-decoder", "decoder-only", "LSTM"])
def test_the_books_training_loop_trains_each_model(name):
    model = build(name)
    source_ids, source_mask, target_in_ids, labels = reversal_task(model.config, rows=4)
    data = [dict(source_ids=source_ids, source_mask=source_mask, target_in_ids=target_in_ids,
                 labels=labels)]
    history = train(model, lambda: data, steps=3, lr=1e-2, progress=False, device="cpu")
    assert history.tokens == 3 * (4 * 5 + 4 * 6)  # the source tokens and the labels, each step
    assert history.loss[-1] < history.loss[0]


def test_decoding_times_count_one_step_for_teacher_forcing_and_n_for_generation():
    model = build("encoder-decoder")
    source_ids, source_mask, _ = batch(model.config)
    table = decoding_times(model, source_ids, source_mask, [2, 5], bos_id=BOS, repeats=1)
    assert table["length"] == [2, 5] and table["generation steps"] == [2, 5]
    assert table["teacher forcing steps"] == [1, 1]
    assert all(s > 0 for s in table["teacher forcing s"] + table["generation s"])
