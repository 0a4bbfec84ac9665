"""The model: its config, its building blocks, BertModel and the task heads, and Hugging
Face-format weights in and out. Read `config.py`, then `layers.py`, `bert.py`, `heads.py`."""

from .bert import BertModel, BertModelOutput, BertPreTrainedModel
from .config import BertConfig, preset
from .heads import (
    BertForMaskedLM,
    BertForMultipleChoice,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from .layers import BertEmbeddings, BertSelfAttention

__all__ = [
    "BertConfig", "preset", "BertModel", "BertModelOutput", "BertPreTrainedModel",
    "BertForPreTraining", "BertForMaskedLM", "BertForSequenceClassification",
    "BertForTokenClassification", "BertForQuestionAnswering", "BertForMultipleChoice", "BertEmbeddings",
    "BertSelfAttention",
]
