"""minibert: a small, readable BERT that matches Hugging Face's numerically, with the
switches the book's experiments flip."""

from .model import (
    BertConfig,
    BertForMaskedLM,
    BertForPreTraining,
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
    BertModel,
    preset,
)
from .model.minilm import minilm_directory
from .runtime import chapter_seeds, get_device, set_seed

__version__ = "0.2.0"

__all__ = [
    "BertConfig", "preset", "BertModel", "BertForPreTraining", "BertForMaskedLM",
    "BertForSequenceClassification", "BertForTokenClassification", "BertForQuestionAnswering",
    "minilm_directory", "get_device", "set_seed", "chapter_seeds",
]
