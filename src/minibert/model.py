"""BERT, written to be read: embeddings, self-attention, encoder, pooler and task heads.

Module and parameter names mirror Hugging Face's `BertModel` state_dict keys
(`encoder.layer.0.attention.self.query.weight`, ...), so weights move between the two
without a renaming table. The book's variants are switches in `BertConfig`, not
subclasses. Shapes: B = batch, T = sequence length, H = hidden size,
nh = number of heads, hs = head size (H = nh * hs), V = vocabulary size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .config import BertConfig

# ---------------------------------------------------------------- outputs


@dataclass
class BertModelOutput:
    last_hidden_state: torch.Tensor  # (B, T, H)
    pooler_output: torch.Tensor | None = None  # (B, H): tanh(W h_[CLS] + b)
    hidden_states: tuple[torch.Tensor, ...] | None = None  # L+1 tensors (B, T, H)
    attentions: tuple[torch.Tensor, ...] | None = None  # L tensors (B, nh, T, T)


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


# ---------------------------------------------------------------- building blocks


def activation_fn(name: str):
    """The function for a canonical activation name (see config.ACTIVATIONS)."""
    return {
        "gelu": F.gelu,
        "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
        "relu": F.relu,
        "tanh": torch.tanh,
        "identity": lambda x: x,
    }[name]


def sinusoidal_table(num_positions: int, width: int) -> torch.Tensor:
    """Vaswani et al.'s fixed position code: sin on even dims, cos on odd dims. (P, H)"""
    position = torch.arange(num_positions, dtype=torch.float32)[:, None]  # (P, 1)
    frequency = torch.exp(torch.arange(0, width, 2) * (-math.log(10000.0) / width))  # (H/2,)
    table = torch.zeros(num_positions, width)
    table[:, 0::2] = torch.sin(position * frequency)
    table[:, 1::2] = torch.cos(position * frequency[: width // 2])
    return table


class BertEmbeddings(nn.Module):
    """Token + position + segment embeddings, summed, then LayerNorm and dropout."""

    def __init__(self, config: BertConfig):
        super().__init__()
        H = config.hidden_size
        self.word_embeddings = nn.Embedding(config.vocab_size, H, padding_idx=config.pad_token_id)
        self.position_embeddings = nn.Embedding(config.max_position_embeddings, H)
        self.token_type_embeddings = nn.Embedding(config.type_vocab_size, H)
        self.LayerNorm = nn.LayerNorm(H, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        if config.position_embedding_type == "sinusoidal":
            self.position_embeddings.weight.requires_grad_(False)

    def forward(self, input_ids: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
        T = input_ids.shape[1]
        positions = self.position_embeddings.weight[:T]  # (T, H), shared by the batch
        summed = (
            self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids) + positions
        )  # (B, T, H)
        return self.dropout(self.LayerNorm(summed))


class BertSelfAttention(nn.Module):
    """Multi-head scaled dot-product attention, with the book's switches.

    use_qkv_projections=False uses the input itself as q, k and v; qkv_sharing="kv" computes
    v with the key matrix, "qk" computes k with the query matrix.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        H = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_size = config.head_size
        self.scale = 1.0 / math.sqrt(self.head_size) if config.scale_attention_scores else 1.0
        self.dropout_p = config.attention_probs_dropout_prob
        self.sharing = config.qkv_sharing if config.use_qkv_projections else "identity"
        if config.use_qkv_projections:
            self.query = nn.Linear(H, H)
            if self.sharing != "qk":
                self.key = nn.Linear(H, H)
            if self.sharing != "kv":
                self.value = nn.Linear(H, H)

    def project(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v of the input, before the split into heads. Each (B, T, H)."""
        if self.sharing == "identity":
            return x, x, x
        q = self.query(x)
        if self.sharing == "qk":
            return q, q, self.value(x)
        k = self.key(x)
        return q, k, (k if self.sharing == "kv" else self.value(x))

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.head_size).transpose(1, 2)  # (B, nh, T, hs)

    def forward(
        self, x: torch.Tensor, additive_mask: torch.Tensor | None, need_weights: bool
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x (B, T, H) and a mask broadcastable to (B, nh, T, T) holding 0 or a large negative
        number. Returns the context (B, T, H) and, if asked, the attention weights."""
        B, T, H = x.shape
        q, k, v = (self.split_heads(t) for t in self.project(x))  # (B, nh, T, hs) each
        dropout_p = self.dropout_p if self.training else 0.0
        if need_weights:
            scores = (q @ k.transpose(-2, -1)) * self.scale  # (B, nh, T, T)
            if additive_mask is not None:
                scores = scores + additive_mask
            weights = scores.softmax(dim=-1)
            context = F.dropout(weights, dropout_p, self.training) @ v  # (B, nh, T, hs)
        else:
            weights = None
            context = F.scaled_dot_product_attention(
                q, k, v, attn_mask=additive_mask, dropout_p=dropout_p, scale=self.scale
            )
        return context.transpose(1, 2).reshape(B, T, H), weights


class BertSublayerOutput(nn.Module):
    """The dense projection that closes a sublayer, then dropout, residual and LayerNorm."""

    def __init__(self, config: BertConfig, in_features: int):
        super().__init__()
        self.dense = nn.Linear(in_features, config.hidden_size)
        self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)
        self.dropout = nn.Dropout(config.hidden_dropout_prob)
        self.pre_ln = config.layer_norm_position == "pre"

    def forward(self, h: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
        out = residual + self.dropout(self.dense(h))
        return out if self.pre_ln else self.LayerNorm(out)  # pre-LN normalises at the input


class BertAttention(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.self = BertSelfAttention(config)
        self.output = BertSublayerOutput(config, config.hidden_size)


class BertIntermediate(nn.Module):
    """The feed-forward block's widening layer and its nonlinearity: (B, T, H) -> (B, T, 4H)."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.intermediate_size)
        self.act = activation_fn(config.activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.dense(x))


class BertLayer(nn.Module):
    """One encoder layer: self-attention, then the feed-forward block, each with a residual."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.attention = BertAttention(config)
        self.intermediate = BertIntermediate(config)
        self.output = BertSublayerOutput(config, config.intermediate_size)
        self.pre_ln = config.layer_norm_position == "pre"

    def forward(self, x, additive_mask, need_weights):
        attention_in = self.attention.output.LayerNorm(x) if self.pre_ln else x
        context, weights = self.attention.self(attention_in, additive_mask, need_weights)
        x = self.attention.output(context, residual=x)
        ffn_in = self.output.LayerNorm(x) if self.pre_ln else x
        x = self.output(self.intermediate(ffn_in), residual=x)
        return x, weights


class BertEncoder(nn.Module):
    def __init__(self, config: BertConfig):
        super().__init__()
        self.layer = nn.ModuleList(BertLayer(config) for _ in range(config.num_hidden_layers))
        if config.layer_norm_position == "pre":  # pre-LN leaves the residual stream unnormalised
            self.LayerNorm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)


class BertPooler(nn.Module):
    """tanh(W h_[CLS] + b): the sentence vector the NSP and classification heads read."""

    def __init__(self, config: BertConfig):
        super().__init__()
        self.dense = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.dense(hidden[:, 0]))  # (B, H)


# ---------------------------------------------------------------- models


def init_module(module: nn.Module, config: BertConfig) -> None:
    """BERT's initialisation: truncated normal(0, 0.02) weights, zero biases, unit LayerNorm,
    and the fixed table when positions are sinusoidal. Touches `module`'s own parameters only."""
    std = config.initializer_range
    if isinstance(module, (nn.Linear, nn.Embedding)):
        nn.init.trunc_normal_(module.weight, std=std, a=-2 * std, b=2 * std)
        if isinstance(module, nn.Embedding) and module.padding_idx is not None:
            module.weight.data[module.padding_idx].zero_()
        if getattr(module, "bias", None) is not None:
            nn.init.zeros_(module.bias)
    elif isinstance(module, nn.LayerNorm):
        nn.init.ones_(module.weight)
        nn.init.zeros_(module.bias)
    elif isinstance(module, BertLMPredictionHead):
        nn.init.zeros_(module.bias)
    elif isinstance(module, BertEmbeddings) and config.position_embedding_type == "sinusoidal":
        table = sinusoidal_table(*module.position_embeddings.weight.shape)
        module.position_embeddings.weight.data.copy_(table)


class BertPreTrainedModel(nn.Module):
    """What every minibert model shares: initialisation, loading, saving, counting."""

    def init_weights(self) -> None:
        """BERT's initialisation (see `init_module`) of every module but the encoder inside
        a task model, which initialised itself when it was built."""
        done = set(self.bert.modules()) if isinstance(getattr(self, "bert", None), BertModel) else set()
        for module in reversed(list(self.modules())):  # children first: a parent may override
            if module not in done:
                init_module(module, self.config)

    def tie_weights(self) -> None:
        """Make the MLM decoder use the input embedding table, when the config ties them."""
        if self.config.tie_word_embeddings and hasattr(self, "cls"):
            self.cls.predictions.decoder.weight = self.bert.embeddings.word_embeddings.weight

    def num_parameters(self) -> int:
        """Number of distinct parameters (a tied matrix counts once)."""
        return sum(p.numel() for p in self.parameters())

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @classmethod
    def from_pretrained(cls, directory, config: BertConfig | None = None, **config_changes):
        """Load a Hugging Face-format directory (config.json + model.safetensors)."""
        from .pretrained import load_pretrained

        return load_pretrained(cls, directory, config=config, **config_changes)

    def save_pretrained(self, directory) -> None:
        """Write config.json + model.safetensors that `transformers` can load."""
        from .pretrained import save_pretrained

        save_pretrained(self, directory)


class BertModel(BertPreTrainedModel):
    """The encoder: token ids in, one vector per token (and a pooled sentence vector) out."""

    def __init__(self, config: BertConfig, add_pooling_layer: bool = True):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.encoder = BertEncoder(config)
        self.pooler = BertPooler(config) if add_pooling_layer else None
        self.init_weights()

    def forward(
        self,
        input_ids: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        token_type_ids: torch.Tensor | None = None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> BertModelOutput:
        """input_ids (B, T); attention_mask (B, T) with 1 = real token and 0 = padding (or a
        full (B, T, T) matrix, 1 = may attend); token_type_ids (B, T) segment ids."""
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        self.check_inputs(input_ids, attention_mask, token_type_ids)
        x = self.embeddings(input_ids, token_type_ids)  # (B, T, H)
        additive_mask = self.additive_mask(attention_mask, input_ids.shape[1], x.dtype, x.device)
        hidden_states, attentions = [x], []
        for layer in self.encoder.layer:
            x, weights = layer(x, additive_mask, need_weights=output_attentions)
            hidden_states.append(x)
            attentions.append(weights)
        if self.config.layer_norm_position == "pre":
            x = self.encoder.LayerNorm(x)
        return BertModelOutput(
            last_hidden_state=x,
            pooler_output=self.pooler(x) if self.pooler is not None else None,
            hidden_states=tuple(hidden_states) if output_hidden_states else None,
            attentions=tuple(attentions) if output_attentions else None,
        )

    def check_inputs(self, input_ids, attention_mask, token_type_ids) -> None:
        """Name what is wrong with the inputs, rather than fail deep inside an embedding."""
        config = self.config
        if input_ids.dim() != 2:
            raise ValueError(f"input_ids must be (batch, seq_len), got shape {tuple(input_ids.shape)}")
        B, T = input_ids.shape
        if T > config.max_position_embeddings:
            raise ValueError(
                f"sequence length {T} exceeds max_position_embeddings "
                f"({config.max_position_embeddings}): truncate or split the input"
            )
        if input_ids.numel() and (input_ids.min() < 0 or input_ids.max() >= config.vocab_size):
            raise ValueError(
                f"input_ids must lie in [0, vocab_size={config.vocab_size}), got values in "
                f"[{int(input_ids.min())}, {int(input_ids.max())}]"
            )
        if token_type_ids.shape != input_ids.shape:
            raise ValueError(
                f"token_type_ids has shape {tuple(token_type_ids.shape)}, "
                f"input_ids has {tuple(input_ids.shape)}"
            )
        if token_type_ids.numel() and (
            token_type_ids.min() < 0 or token_type_ids.max() >= config.type_vocab_size
        ):
            raise ValueError(
                f"segment id {int(token_type_ids.max())} is beyond type_vocab_size "
                f"({config.type_vocab_size}): token_type_ids must lie in "
                f"[0, {config.type_vocab_size})"
            )
        if attention_mask is not None and tuple(attention_mask.shape) not in ((B, T), (B, T, T)):
            raise ValueError(
                f"attention_mask has shape {tuple(attention_mask.shape)}; expected "
                f"(batch, seq_len) = {(B, T)} or (batch, seq_len, seq_len) = {(B, T, T)}"
            )

    def additive_mask(self, attention_mask, T, dtype, device) -> torch.Tensor | None:
        """0 where attention is allowed, the dtype's most negative number where it is not.
        Shape (B, 1, 1, T) or (B, 1, T, T), broadcast over heads (and queries)."""
        allowed = None  # boolean, broadcastable to (B, 1, T, T)
        if attention_mask is not None:
            allowed = attention_mask.bool()
            allowed = allowed[:, None, None, :] if allowed.dim() == 2 else allowed[:, None]
        if self.config.attention_direction == "causal":
            causal = torch.ones(T, T, dtype=torch.bool, device=device).tril()
            allowed = causal if allowed is None else allowed & causal
        if self.config.mask_self_attention:
            not_self = ~torch.eye(T, dtype=torch.bool, device=device)
            allowed = not_self if allowed is None else allowed & not_self
        if allowed is None:
            return None
        return (~allowed).to(dtype) * torch.finfo(dtype).min


# ---------------------------------------------------------------- heads


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
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=-100)


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
                next_sentence_label=None, output_attentions=False, output_hidden_states=False):
        """labels (B, T): the original id where a token is to be predicted, -100 elsewhere.
        next_sentence_label (B,): 0 if segment B follows A, 1 if it is a random segment.

        Without labels, prediction_logits is (B, T, V) as in transformers. With labels it is
        (P, V) for the P positions to predict only: the decoder then skips the ~85% of tokens
        that carry no loss, which is most of a tiny model's training time."""
        out = self.bert(input_ids, attention_mask, token_type_ids, output_attentions,
                        output_hidden_states)
        if labels is not None:  # score only the positions to predict: saves a (B, T, V) product
            prediction_logits = self.cls.predictions(out.last_hidden_state[labels != -100])
        else:
            prediction_logits = self.cls.predictions(out.last_hidden_state)
        nsp_logits = self.cls.seq_relationship(out.pooler_output)  # (B, 2)
        mlm_loss = nsp_loss = loss = None
        if labels is not None:
            mlm_loss = F.cross_entropy(prediction_logits, labels[labels != -100])
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
