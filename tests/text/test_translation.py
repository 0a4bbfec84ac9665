"""The synthetic translation task: its rules applied exactly, the overlap knob, the
alignment, determinism, and tensors ready for an encoder-decoder."""

import pytest
import torch

from minibert.model.heads import IGNORE_INDEX
from minibert.text.tokenizer import CLS, SEP
from minibert.text.translation import (
    ARTICLES,
    VERBS,
    TargetLanguage,
    prefix_lm_tensors,
    rewrite,
    seq2seq_tensors,
    shared_piece_share,
    target_order,
    translation_pairs,
    translation_tokenizers,
)


def test_rewrite_is_rot13_and_the_suffix():
    assert rewrite("fox") == "sbken"
    assert rewrite("the") == "guren"


@pytest.mark.parametrize("source, expected", [
    ("the fox lives in the forest .", "sbken guren vaen sberfgen guren yvirfen ."),
    # relative clause: the verb follows its object; the main verb is already last
    ("the dogs that chase the cat run .",
     "qbtfen guren gungen pngen guren punfren ehaen ."),
    # the main verb is the first one: "is" of the reported clause stays in place
    ("everyone says the soup is sweet .", "rirelbaren fbhcen guren vfen fjrrgen fnlfen ."),
])
def test_hand_written_sentences_translate_as_the_rules_say(source, expected):
    assert TargetLanguage(overlap=0.0).translate(source.split()).target_text == expected


def test_word_order_alone_at_full_overlap():
    pair = TargetLanguage(overlap=1.0).translate("as a baker , anna berg is busy .".split())
    assert pair.target_text == "as baker a , anna berg busy is ."
    assert pair.alignment == (0, 2, 1, 3, 4, 5, 7, 6, 8)


def test_overlap_one_keeps_every_spelling_and_zero_changes_every_word():
    pairs_kept = translation_pairs(300, seed=1, overlap=1.0)
    pairs_changed = translation_pairs(300, seed=1, overlap=0.0)
    for kept, changed in zip(pairs_kept, pairs_changed):
        assert sorted(kept.target) == sorted(kept.source)
        for j, word in enumerate(changed.target):
            source_word = changed.source[changed.alignment[j]]
            assert word == (source_word if not source_word.isalpha() else rewrite(source_word))
            assert word != source_word or not word.isalpha()


def test_overlap_keeps_its_share_of_the_vocabulary_nested_by_seed():
    low, high = TargetLanguage(0.2, seed=4), TargetLanguage(0.7, seed=4)
    vocabulary = len(TargetLanguage(1.0).kept)
    assert len(low.kept) == round(0.2 * vocabulary) and len(high.kept) == round(0.7 * vocabulary)
    assert low.kept < high.kept
    assert TargetLanguage(0.2, seed=5).kept != low.kept


def test_alignment_is_a_permutation_consistent_with_the_order_rules():
    language = TargetLanguage(overlap=0.5, seed=2)
    for pair in translation_pairs(500, seed=2, overlap=0.5):
        assert sorted(pair.alignment) == list(range(len(pair.source)))
        assert pair.target == tuple(language.spell(pair.source[i]) for i in pair.alignment)
        aligned = [pair.source[i] for i in pair.alignment]
        assert aligned[-1] == "." and aligned[-2] in VERBS  # verb-final
        for j, word in enumerate(aligned[1:], start=1):  # every article follows its noun
            if word in ARTICLES:
                assert pair.alignment[j - 1] == pair.alignment[j] + 1


def test_pairs_are_deterministic_by_seed_and_a_prefix_of_longer_runs():
    assert translation_pairs(50, seed=7) == translation_pairs(50, seed=7)
    assert translation_pairs(50, seed=7) == translation_pairs(90, seed=7)[:50]
    assert translation_pairs(50, seed=7) != translation_pairs(50, seed=8)


@pytest.mark.parametrize("call, message", [
    (lambda: translation_pairs(0), "num_pairs"),
    (lambda: translation_pairs(10, overlap=1.5), "overlap"),
    (lambda: translation_pairs(10, overlap="half"), "overlap"),
    (lambda: TargetLanguage(0.5, seed=1.5), "seed"),
    (lambda: target_order("the fox lives in the forest".split()), "full stop"),
    (lambda: target_order("the fox in the forest .".split()), "no verb"),
    (lambda: target_order("the dogs that .".split()), "relative clause"),
    (lambda: translation_tokenizers([], 50), "at least one pair"),
    (lambda: prefix_lm_tensors([], None), "at least one pair"),
    (lambda: seq2seq_tensors([], None, None), "at least one pair"),
])
def test_bad_arguments_are_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize("shared", [True, False])
def test_tensors_feed_teacher_forcing(shared):
    pairs = translation_pairs(200, seed=0, overlap=0.5)
    source_tokenizer, target_tokenizer = translation_tokenizers(pairs, 120, shared=shared)
    assert (source_tokenizer is target_tokenizer) == shared
    assert len(source_tokenizer) <= 120 and len(target_tokenizer) <= 120
    data = seq2seq_tensors(pairs, source_tokenizer, target_tokenizer)
    t = data.tensors
    assert len(data) == 200
    pad = target_tokenizer.pad_id
    for row, pair in enumerate(pairs):
        decoder_ids = t["decoder_input_ids"][row][t["decoder_attention_mask"][row] == 1]
        labels = t["labels"][row][t["labels"][row] != IGNORE_INDEX]
        assert decoder_ids[0] == target_tokenizer.token_to_id[CLS]
        assert labels[-1] == target_tokenizer.token_to_id[SEP]
        assert torch.equal(decoder_ids[1:], labels[:-1])  # the labels, shifted right
        assert target_tokenizer.decode(labels.tolist()) == pair.target_text
        source = t["input_ids"][row][t["attention_mask"][row] == 1]
        assert source_tokenizer.decode(source.tolist()) == pair.source_text
        # each label piece knows its target word, each source piece its source word
        words = data.target_words[row][: len(labels) - 1]
        assert words.unique().tolist() == list(range(len(pair.target)))
        assert data.source_words[row][: len(source)].max() == len(pair.source) - 1
    assert (t["decoder_input_ids"][t["decoder_attention_mask"] == 0] == pad).all()
    assert (t["labels"][t["decoder_attention_mask"] == 0] == IGNORE_INDEX).all()


def test_prefix_tensors_ask_for_the_target_after_the_source():
    pairs = translation_pairs(100, seed=3, overlap=0.5)
    tokenizer, _ = translation_tokenizers(pairs, 150)
    data = prefix_lm_tensors(pairs, tokenizer)
    ids, labels = data.tensors["input_ids"], data.tensors["labels"]
    for row, pair in enumerate(pairs):
        length = int(data.tensors["attention_mask"][row].sum())
        separator = int((ids[row] == tokenizer.sep_id).nonzero()[0])
        assert tokenizer.decode(ids[row, :separator].tolist()) == pair.source_text
        assert (labels[row, :separator] == IGNORE_INDEX).all()  # the source: never asked
        assert torch.equal(labels[row, separator:length - 1], ids[row, separator + 1:length])
        assert labels[row, length - 1] == tokenizer.sep_id  # the end token
        assert tokenizer.decode(labels[row, separator:length - 1].tolist()) == pair.target_text
        asked_words = data.target_words[row][separator:length - 1]
        assert asked_words.unique().tolist() == list(range(len(pair.target)))
        assert data.source_words[row].max() == len(pair.source) - 1


def test_shared_pieces_follow_the_overlap():
    shares = []
    for overlap in (0.0, 0.5, 1.0):
        pairs = translation_pairs(300, seed=0, overlap=overlap)
        shares.append(shared_piece_share(pairs, translation_tokenizers(pairs, 200)[0]))
    assert shares[0] < shares[1] < shares[2] == 1.0
