"""The model: its config, its building blocks, BertModel and the task heads, and Hugging
Face-format weights in and out. Read `config.py`, then `layers.py`, `bert.py`, `heads.py`;
the sequence-to-sequence models after them: `seq2seq.py`, `encoder_decoder.py`,
`decoder_only.py`, `lstm_seq2seq.py`."""

from .bert import BertModel, BertModelOutput, BertPreTrainedModel
from .config import BertConfig, preset
from .decoder_only import DecoderOnlyConfig, DecoderOnlyModel
from .encoder_decoder import EncoderDecoderConfig, EncoderDecoderModel
from .heads import (
    BertForMaskedLM,
    BertForMultipleChoice,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from .layers import BertEmbeddings, BertSelfAttention
from .lstm_seq2seq import LstmEncoderDecoder, LstmSeq2SeqConfig

__all__ = [
    "BertConfig", "preset", "BertModel", "BertModelOutput", "BertPreTrainedModel",
    "BertForPreTraining", "BertForMaskedLM", "BertForSequenceClassification",
    "BertForTokenClassification", "BertForQuestionAnswering", "BertForMultipleChoice", "BertEmbeddings",
    "BertSelfAttention", "EncoderDecoderConfig", "EncoderDecoderModel", "DecoderOnlyConfig",
    "DecoderOnlyModel", "LstmSeq2SeqConfig", "LstmEncoderDecoder",
]
