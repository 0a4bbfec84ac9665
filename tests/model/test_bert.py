"""minibert agrees with transformers' BERT on the same weights, both ways (to 1e-5)."""

import pytest
import torch
import transformers

import minibert
from helpers import padded_batch

TOLERANCE = 1e-5

CONFIGS = [
    dict(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
         intermediate_size=37, max_position_embeddings=24),
    dict(vocab_size=150, hidden_size=48, num_hidden_layers=3, num_attention_heads=3,
         intermediate_size=96, max_position_embeddings=16, type_vocab_size=3),
    dict(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=1,
         intermediate_size=64, max_position_embeddings=40, hidden_act="gelu_new"),
    dict(vocab_size=80, hidden_size=64, num_hidden_layers=2, num_attention_heads=8,
         intermediate_size=128, max_position_embeddings=12, hidden_act="relu"),
]


def hf_model(cls_name, sizes, seed):
    torch.manual_seed(seed)
    config = transformers.BertConfig(**sizes, attn_implementation="eager")
    model = getattr(transformers, cls_name)(config).eval()
    with torch.no_grad():  # non-zero biases and LayerNorm gains, so every parameter matters
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    return model


def assert_close(a, b, what):
    error = (a - b).abs().max().item()
    assert error < TOLERANCE, f"{what}: max abs difference {error:.2e}"


@pytest.mark.parametrize("seed,sizes", list(enumerate(CONFIGS)))
def test_pretraining_model_matches_transformers(tmp_path, seed, sizes):
    hf = hf_model("BertForPreTraining", sizes, seed)
    hf.save_pretrained(tmp_path)
    ours = minibert.BertForPreTraining.from_pretrained(tmp_path)
    batch = padded_batch(ours.config, seq_len=sizes["max_position_embeddings"] - 1, seed=seed)
    with torch.no_grad():
        theirs_out = hf(**batch, output_attentions=True, output_hidden_states=True)
        theirs_base = hf.bert(**batch)
        ours_out = ours(**batch, output_attentions=True, output_hidden_states=True)
        ours_base = ours.bert(**batch)
    assert_close(ours_base.last_hidden_state, theirs_base.last_hidden_state, "last_hidden_state")
    assert_close(ours_base.pooler_output, theirs_base.pooler_output, "pooler_output")
    assert_close(ours_out.prediction_logits, theirs_out.prediction_logits, "MLM logits")
    assert_close(ours_out.seq_relationship_logits, theirs_out.seq_relationship_logits, "NSP logits")
    assert len(ours_out.attentions) == len(theirs_out.attentions) == sizes["num_hidden_layers"]
    for layer, (a, b) in enumerate(zip(ours_out.attentions, theirs_out.attentions, strict=True)):
        assert a.shape == b.shape
        assert_close(a, b, f"attention map of layer {layer}")
    for a, b in zip(ours_out.hidden_states, theirs_out.hidden_states, strict=True):
        assert_close(a, b, "hidden state")


def test_losses_match_transformers(tmp_path):
    hf = hf_model("BertForPreTraining", CONFIGS[0], seed=7)
    hf.save_pretrained(tmp_path)
    ours = minibert.BertForPreTraining.from_pretrained(tmp_path)
    batch = padded_batch(ours.config, seq_len=20)
    labels = torch.full_like(batch["input_ids"], -100)
    labels[:, 1:4] = batch["input_ids"][:, 1:4]
    nsp = torch.tensor([0, 1, 0])
    with torch.no_grad():
        theirs = hf(**batch, labels=labels, next_sentence_label=nsp).loss
        mine = ours(**batch, labels=labels, next_sentence_label=nsp).loss
    assert_close(mine, theirs, "pre-training loss")


def test_minibert_checkpoint_loads_into_transformers(tmp_path):
    config = minibert.BertConfig(**CONFIGS[1])
    ours = minibert.BertForPreTraining(config).eval()
    ours.save_pretrained(tmp_path)
    hf = transformers.BertForPreTraining.from_pretrained(tmp_path, attn_implementation="eager").eval()
    batch = padded_batch(config, seq_len=15)
    with torch.no_grad():
        a, b = ours(**batch), hf(**batch)
    assert_close(a.prediction_logits, b.prediction_logits, "MLM logits")
    assert_close(a.seq_relationship_logits, b.seq_relationship_logits, "NSP logits")
    tied = hf.cls.predictions.decoder.weight, hf.bert.embeddings.word_embeddings.weight
    assert tied[0].data_ptr() == tied[1].data_ptr()


@pytest.mark.parametrize("name", ["BertForSequenceClassification", "BertForTokenClassification",
                                  "BertForQuestionAnswering", "BertForMaskedLM"])
def test_task_heads_match_transformers(tmp_path, name):
    hf = hf_model(name, CONFIGS[0], seed=3)
    hf.save_pretrained(tmp_path)
    ours = getattr(minibert, name).from_pretrained(tmp_path)
    batch = padded_batch(ours.config, seq_len=16)
    with torch.no_grad():
        a, b = ours(**batch), hf(**batch)
    if name == "BertForQuestionAnswering":
        assert_close(a.start_logits, b.start_logits, "start logits")
        assert_close(a.end_logits, b.end_logits, "end logits")
    else:
        assert_close(a.logits, b.logits, "logits")


def test_parameter_counts_match_published_sizes():
    with torch.device("meta"):  # shapes only: no memory, no initialisation to wait for
        assert minibert.BertModel(minibert.preset("base")).num_parameters() == 109_482_240
        assert minibert.BertModel(minibert.preset("large")).num_parameters() == 335_141_888
        pretraining = minibert.BertForPreTraining(minibert.preset("base"))
        assert pretraining.num_parameters() == 110_106_428


def test_multiple_choice_matches_transformers(tmp_path):
    """BertForMultipleChoice: (B, C, T) inputs, one score per choice, the same logits and
    loss as transformers' on the same weights."""
    from minibert.model import BertForMultipleChoice

    hf = hf_model("BertForMultipleChoice", CONFIGS[0], seed=4)
    hf.save_pretrained(tmp_path)
    ours = BertForMultipleChoice.from_pretrained(tmp_path).eval()
    flat = padded_batch(ours.config, batch=6, seq_len=16)  # (6, T) tensors
    batch = {k: v.reshape(2, 3, -1) for k, v in flat.items()}  # (2, 3, T)
    labels = torch.tensor([2, 0])
    with torch.no_grad():
        a, b = ours(**batch, labels=labels), hf(**batch, labels=labels)
    assert a.logits.shape == (2, 3)
    assert_close(a.logits, b.logits, "choice logits")
    assert_close(a.loss, b.loss, "loss")


def test_position_ids_match_transformers(tmp_path):
    """Given positions (as left padding needs) are looked up as transformers looks them up."""
    sizes = CONFIGS[0]
    hf = hf_model("BertForPreTraining", sizes, seed=7)
    hf.save_pretrained(tmp_path)
    ours = minibert.BertForPreTraining.from_pretrained(tmp_path)
    batch = padded_batch(ours.config, seq_len=10, seed=7)
    position_ids = torch.randint(0, sizes["max_position_embeddings"], batch["input_ids"].shape,
                                 generator=torch.Generator().manual_seed(7))  # (B, T)
    with torch.no_grad():
        theirs = hf.bert(**batch, position_ids=position_ids).last_hidden_state
        ours_given = ours.bert(**batch, position_ids=position_ids).last_hidden_state
        default = ours.bert(**batch).last_hidden_state
        counted = ours.bert(**batch, position_ids=torch.arange(10).expand(
            len(position_ids), 10)).last_hidden_state
    assert_close(ours_given, theirs, "last_hidden_state with position_ids")
    assert_close(counted, default, "position_ids 0..T-1 against none given")
