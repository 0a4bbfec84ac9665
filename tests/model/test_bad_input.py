"""Bad input gets a ValueError that names the problem, not a deep IndexError."""

import pytest
import torch

import minibert


@pytest.fixture
def model(tiny_config):
    return minibert.BertForPreTraining(tiny_config).eval()


def test_sequence_longer_than_max_positions(model):
    with pytest.raises(ValueError, match="exceeds max_position_embeddings"):
        model(torch.ones(1, model.config.max_position_embeddings + 1, dtype=torch.long))


def test_segment_id_beyond_type_vocab_size(model):
    ids = torch.ones(1, 6, dtype=torch.long)
    with pytest.raises(ValueError, match="beyond type_vocab_size"):
        model(ids, token_type_ids=torch.full_like(ids, 2))


def test_token_id_beyond_vocabulary(model):
    with pytest.raises(ValueError, match="vocab_size"):
        model(torch.full((1, 4), model.config.vocab_size, dtype=torch.long))


@pytest.mark.parametrize("shape", [(1, 5), (2, 6, 1), (6,)])
def test_attention_mask_of_wrong_shape(model, shape):
    with pytest.raises(ValueError, match="attention_mask has shape"):
        model(torch.ones(2, 6, dtype=torch.long), attention_mask=torch.ones(shape))


def test_input_ids_of_wrong_rank(model):
    with pytest.raises(ValueError, match=r"\(batch, seq_len\)"):
        model(torch.ones(6, dtype=torch.long))


@pytest.mark.parametrize("changes,field", [
    (dict(hidden_size=30, num_attention_heads=4), "divisible by num_attention_heads"),
    (dict(num_hidden_layers=0), "num_hidden_layers"),
    (dict(vocab_size=-3), "vocab_size"),
    (dict(hidden_act="swish3"), "hidden_act"),
    (dict(hidden_dropout_prob=1.5), "hidden_dropout_prob"),
    (dict(qkv_sharing="vq"), "qkv_sharing"),
    (dict(identity_projections="k"), "identity_projections"),
    (dict(identity_projections="v", use_qkv_projections=False), "identity_projections"),
    (dict(identity_projections="qk", qkv_sharing="kv"), "identity_projections"),
    (dict(layer_norm_position="middle"), "layer_norm_position"),
    (dict(position_embedding_type="relative_key"), "position_embedding_type"),
        (dict(position_embedding_type="rotary", hidden_size=66, num_attention_heads=6),
         "head size"),
])
def test_config_validation_names_the_field(changes, field):
    with pytest.raises(ValueError, match=field):
        minibert.BertConfig(**changes)


def test_checkpoint_with_mismatched_shapes(tmp_path, tiny_config):
    minibert.BertForPreTraining(tiny_config).save_pretrained(tmp_path)
    wider = tiny_config.replace(intermediate_size=tiny_config.intermediate_size * 2)
    with pytest.raises(ValueError, match=r"intermediate\.dense\.weight: checkpoint"):
        minibert.BertForPreTraining.from_pretrained(tmp_path, config=wider)


def test_checkpoint_missing_keys(tmp_path, tiny_config):
    minibert.BertModel(tiny_config.replace(num_hidden_layers=1)).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"missing from the checkpoint:\n  encoder\.layer\.1\."):
        minibert.BertModel.from_pretrained(tmp_path, num_hidden_layers=2)


def test_task_head_starts_fresh_from_a_base_checkpoint(tmp_path, tiny_config):
    minibert.BertForPreTraining(tiny_config).save_pretrained(tmp_path)
    model = minibert.BertForSequenceClassification.from_pretrained(tmp_path)
    assert model.fresh_head_keys == ["classifier.weight", "classifier.bias"]


def test_pickle_checkpoints_are_refused(tmp_path, tiny_config):
    model = minibert.BertModel(tiny_config)
    model.config.to_json_file(tmp_path / "config.json")
    torch.save({"weights": model.state_dict(), "payload": object()}, tmp_path / "pytorch_model.bin")
    with pytest.raises(Exception, match="(?i)weights only|weights_only|unsupported"):
        minibert.BertModel.from_pretrained(tmp_path)


def test_model_without_pooler_ignores_the_checkpoint_pooler(tmp_path, tiny_config):
    minibert.BertForPreTraining(tiny_config).save_pretrained(tmp_path)
    model = minibert.BertForMaskedLM.from_pretrained(tmp_path)
    assert model.fresh_head_keys == []
    assert model.cls.predictions.decoder.weight is model.bert.embeddings.word_embeddings.weight


def test_fresh_head_is_initialised_not_left_empty(tmp_path, tiny_config):
    minibert.BertModel(tiny_config).save_pretrained(tmp_path)
    model = minibert.BertForQuestionAnswering.from_pretrained(tmp_path)
    weight = model.qa_outputs.weight
    assert torch.isfinite(weight).all() and 0.005 < weight.std() < 0.03
    assert (model.qa_outputs.bias == 0).all()


@pytest.mark.parametrize("make", [lambda ids, P: torch.full_like(ids, P),
                                  lambda ids, P: torch.zeros(1, 5, dtype=torch.long)])
def test_position_ids_out_of_range_or_shape(model, make):
    ids = torch.ones(1, 6, dtype=torch.long)
    with pytest.raises(ValueError, match="position_ids must have the shape of input_ids"):
        model.bert(ids, position_ids=make(ids, model.config.max_position_embeddings))
