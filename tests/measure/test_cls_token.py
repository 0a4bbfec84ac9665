"""The [CLS]-against-a-word helpers of chapter 14 (`probes.sentence_vectors`,
`few_shot_readouts`, `cls_and_ordinary_entropy`)."""

import numpy as np
import torch

import minibert
from minibert.measure import probes
from minibert.text import datasets, language


def _model():
    tokenizer = language.corpus_tokenizer()
    config = minibert.preset("tiny", vocab_size=tokenizer.vocab_size)
    torch.manual_seed(0)
    return minibert.BertForPreTraining(config).eval()


def test_sentence_vectors_add_the_first_word_to_the_poolings():
    model = _model()
    sentences = datasets.sentence_classification("topic", 7, seed=0, max_length=24)
    vectors = probes.sentence_vectors(model, sentences, batch_size=3)
    pooled = probes.pooled_features(model, sentences, layer="all", batch_size=3)
    assert set(vectors) == set(probes.SENTENCE_VECTORS)
    for how in probes.TOKEN_POOLINGS:
        assert torch.allclose(vectors[how], pooled[how], atol=1e-6)
    with torch.no_grad():  # the first word is position 1 of the last layer's output
        last = model.bert(sentences["input_ids"], sentences["attention_mask"]).last_hidden_state
    assert torch.allclose(vectors["first word"][-1], last[:, 1], atol=1e-5)


def test_few_shot_readouts_average_the_draws_and_cls_starts_at_chance():
    model = _model()
    train_sets = [datasets.sentence_classification("topic", 10, seed=s) for s in (1, 2)]
    test_set = datasets.sentence_classification("topic", 20, seed=3)
    readouts = {"centroid": probes.centroid_accuracy}
    scores = probes.few_shot_readouts(model, train_sets, test_set, readouts)
    layers = model.config.num_hidden_layers + 1
    assert all(scores["centroid"][how].shape == (layers,) for how in probes.SENTENCE_VECTORS)
    # Layer 0: [CLS] is one vector for every sentence, so a balanced test set is at chance.
    assert abs(scores["centroid"]["cls"][0] - 1 / len(language.TOPICS)) < 1e-6
    each = [probes.centroid_accuracy(probes.sentence_vectors(model, t)["mean"], t["labels"],
                                     probes.sentence_vectors(model, test_set)["mean"],
                                     test_set["labels"]).numpy() for t in train_sets]
    assert np.allclose(scores["centroid"]["mean"], np.mean(each, axis=0))


def test_cls_and_ordinary_entropy_one_value_per_layer():
    model = _model()
    sentences = datasets.sentence_classification("topic", 5, seed=0, max_length=24)
    batch = {k: sentences[k] for k in ("input_ids", "attention_mask", "token_type_ids")}
    cls_h, ordinary_h, attentions = probes.cls_and_ordinary_entropy(model.bert, batch)
    assert len(cls_h) == len(ordinary_h) == len(attentions) == model.config.num_hidden_layers
    assert all(0 <= v <= 1 for v in [*cls_h, *ordinary_h])
