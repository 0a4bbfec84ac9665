"""The heads that sit on BertModel: masked-LM and next-sentence prediction for
pre-training, and the fine-tuning heads (sentence classification, token tagging, span
question answering, multiple choice). Names mirror Hugging Face's (`cls.predictions`, `classifier`,
`qa_outputs`), so task checkpoints load both ways.

Shapes: B = batch, T = sequence length, H = hidden size, V = vocabulary size, C = choices.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .bert import BertModel, BertPreTrainedModel
from .config import BertConfig
from .layers import activation_fn

IGNORE_INDEX = -100  # the label of a position that is not predicted (cross_entropy skips it)


@dataclass
class BertForPreTrainingOutput:
    prediction_logits: torch.Tensor  # (B, T, V) MLM scores
    seq_relationship_logits: torch.Tensor  # (B, 2) NSP scores: 0 = IsNext, 1 = NotNext
    loss: torch.Tensor | None = None
    mlm_loss: torch.Tensor | None = None
    nsp_loss: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class BertTaskOutput:
    """Output of the masked-LM, classification and tagging heads."""

    logits: torch.Tensor  # (B, V) per token, (B, num_labels) or (B, T, num_labels)
    loss: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


@dataclass
class BertQuestionAnsweringOutput:
    start_logits: torch.Tensor  # (B, T)
    end_logits: torch.Tensor  # (B, T)
    loss: torch.Tensor | None = None
    hidden_states: tuple[torch.Tensor, ...] | None = None
    attentions: tuple[torch.Tensor, ...] | None = None


class BertPredictionHeadTransform(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)
        self.act = activation_fn(config.activation)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, x):
        return self.LayerNorm(self.act(self.dense(x)))


class BertLMPredictionHead(nn.Module):
    """Hidden vector -> vocabulary scores. The decoder matrix is the input embedding table
    when tied: nn.Linear stores its weight as (out, in) = (V, H), the table's own shape."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.transform = BertPredictionHeadTransform(config)
        self.decoder = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.bias = nn.Parameter(torch.zeros(config.vocab_size))  # never tied

    def forward(self, x):
        # One fused matmul + bias (addmm), not a matmul and then a (..., V) addition.
        return F.linear(self.transform(x), self.decoder.weight, self.bias)  # (..., V)


class BertPreTrainingHeads(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)
        self.seq_relationship = nn.Linear(config.hidden_size, 2)


class BertOnlyMLMHead(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.predictions = BertLMPredictionHead(config)


def masked_lm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy over the positions to predict (labels != -100)."""
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1),
                           ignore_index=IGNORE_INDEX)


class BertForPreTraining(BertPreTrainedModel):
    """BERT with both pre-training heads: masked LM and next sentence prediction."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.bert = BertModel(config)
        self.cls = BertPreTrainingHeads(config)
        self.init_weights()
        self.tie_weights()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                next_sentence_label=None, output_attentions=False, output_hidden_states=False,
                mlm_positions=None):
        """labels (B, T): the original id where a token is to be predicted, -100 elsewhere.
        next_sentence_label (B,): 0 if segment B follows A, 1 if it is a random segment.

        Without labels, prediction_logits is (B, T, V) as in transformers. With labels it is
        (P, V) for the P positions to predict only: the decoder then skips the ~85% of tokens
        that carry no loss, which is most of a tiny model's training time.
        mlm_positions (P,) gives those positions in a fixed-size form, for batched runs
        (torch.func.vmap) where P must not depend on the data: flat indices into the B*T
        tokens, with labels then (P,) their targets, -100 where a position only pads."""
        out = self.bert(input_ids, attention_mask, token_type_ids, output_attentions,
                        output_hidden_states)
        hidden = out.last_hidden_state  # (B, T, H)
        if mlm_positions is not None:
            hidden, targets = hidden.flatten(0, 1)[mlm_positions], labels  # (P, H), (P,)
        elif labels is not None:  # score only the positions to predict: saves a (B, T, V) product
            hidden, targets = hidden[labels != IGNORE_INDEX], labels[labels != IGNORE_INDEX]  # (P, H), (P,)
        prediction_logits = self.cls.predictions(hidden)
        nsp_logits = self.cls.seq_relationship(out.pooler_output)  # (B, 2)
        mlm_loss = nsp_loss = loss = None
        if labels is not None:
            mlm_loss = F.cross_entropy(prediction_logits, targets)
            loss = mlm_loss
        if next_sentence_label is not None:
            nsp_loss = F.cross_entropy(nsp_logits, next_sentence_label.view(-1))
            loss = nsp_loss if loss is None else loss + nsp_loss
        return BertForPreTrainingOutput(prediction_logits, nsp_logits, loss, mlm_loss, nsp_loss,
                                        out.hidden_states, out.attentions)


class BertForMaskedLM(BertPreTrainedModel):
    """BERT with the masked-LM head only (no pooler), as used for fill-in-the-blank."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.bert = BertModel(config, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(config)
        self.init_weights()
        self.tie_weights()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False):
        """Logits (B, T, V) at every position; loss over positions where labels != -100."""
        out = self.bert(input_ids, attention_mask, token_type_ids, output_attentions,
                        output_hidden_states)
        logits = self.cls.predictions(out.last_hidden_state)  # (B, T, V)
        loss = masked_lm_loss(logits, labels) if labels is not None else None
        return BertTaskOutput(logits, loss, out.hidden_states, out.attentions)


class BertForSequenceClassification(BertPreTrainedModel):
    """A linear classifier on the pooled [CLS] vector; num_labels=1 means regression."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.num_labels = config.num_labels
        self.bert = BertModel(config)
        dropout = config.classifier_dropout
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.init_weights()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False):
        out = self.bert(input_ids, attention_mask, token_type_ids, output_attentions,
                        output_hidden_states)
        logits = self.classifier(self.dropout(out.pooler_output))  # (B, num_labels)
        loss = None
        if labels is not None:
            if self.num_labels == 1:
                loss = F.mse_loss(logits.squeeze(-1), labels.float())
            else:
                loss = F.cross_entropy(logits, labels.view(-1))
        return BertTaskOutput(logits, loss, out.hidden_states, out.attentions)


class BertForTokenClassification(BertPreTrainedModel):
    """A linear classifier on every token's vector (NER-style tagging)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.num_labels = config.num_labels
        self.bert = BertModel(config, add_pooling_layer=False)
        dropout = config.classifier_dropout
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)
        self.init_weights()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False):
        """labels (B, T): a tag id per token, -100 where no tag is scored."""
        out = self.bert(input_ids, attention_mask, token_type_ids, output_attentions,
                        output_hidden_states)
        logits = self.classifier(self.dropout(out.last_hidden_state))  # (B, T, num_labels)
        loss = masked_lm_loss(logits, labels) if labels is not None else None
        return BertTaskOutput(logits, loss, out.hidden_states, out.attentions)


class BertForQuestionAnswering(BertPreTrainedModel):
    """Span extraction: a start score and an end score for every token."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.bert = BertModel(config, add_pooling_layer=False)
        self.qa_outputs = nn.Linear(config.hidden_size, 2)  # the start and end vectors
        self.init_weights()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, start_positions=None,
                end_positions=None, output_attentions=False, output_hidden_states=False):
        out = self.bert(input_ids, attention_mask, token_type_ids, output_attentions,
                        output_hidden_states)
        start_logits, end_logits = self.qa_outputs(out.last_hidden_state).unbind(dim=-1)  # (B, T)
        loss = None
        if start_positions is not None and end_positions is not None:
            loss = (F.cross_entropy(start_logits, start_positions)
                    + F.cross_entropy(end_logits, end_positions)) / 2
        return BertQuestionAnsweringOutput(start_logits, end_logits, loss, out.hidden_states,
                                           out.attentions)


class BertForMultipleChoice(BertPreTrainedModel):
    """SWAG-style multiple choice, as Hugging Face's: each of C candidates is its own row
    `[CLS] context [SEP] candidate [SEP]`; the pooled [CLS] vector of each row is scored
    to one number by Linear(H, 1), and a softmax across the C scores picks the choice.

    Inputs are (B, C, T); logits are (B, C); labels (B,) hold the right choice's index."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.bert = BertModel(config)
        dropout = config.classifier_dropout
        self.dropout = nn.Dropout(config.hidden_dropout_prob if dropout is None else dropout)
        self.classifier = nn.Linear(config.hidden_size, 1)  # one score per candidate
        self.init_weights()

    def forward(self, input_ids, attention_mask=None, token_type_ids=None, labels=None,
                output_attentions=False, output_hidden_states=False):
        num_choices = input_ids.shape[1]
        flat = [None if x is None else x.flatten(0, 1)  # (B, C, T) -> (B*C, T)
                for x in (input_ids, attention_mask, token_type_ids)]
        out = self.bert(*flat, output_attentions, output_hidden_states)
        scores = self.classifier(self.dropout(out.pooler_output))  # (B*C, 1)
        logits = scores.view(-1, num_choices)  # (B, C)
        loss = F.cross_entropy(logits, labels.view(-1)) if labels is not None else None
        return BertTaskOutput(logits, loss, out.hidden_states, out.attentions)
