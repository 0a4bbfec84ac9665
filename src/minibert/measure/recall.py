"""Associative recall: a task that attention solves and a dense token-mixing layer does not.

Each example is a small table of (key, value) pairs in random order, one pair per position,
followed by a query key at the last position; the answer is the value stored under that
key. Two one-block models of the same width and parameter count read it: one mixes its
positions with self-attention (weights computed from the input), the other with a fixed
matrix learned over positions, as MLP-Mixer does (weights that ignore the input).
Shapes: B = batch, T = positions (pairs + the query), d = width, V = number of values.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F
from torch import nn

from ..model import BertConfig, BertSelfAttention

MIXINGS = ("attention", "dense")


@dataclass(frozen=True)
class RecallTask:
    """Tables of `num_pairs` pairs with distinct keys drawn from `num_keys` keys and values
    drawn from `num_values`; the query asks for one of the stored keys, at random."""

    num_keys: int = 16
    num_values: int = 16
    num_pairs: int = 8

    def __post_init__(self) -> None:
        if not 1 <= self.num_pairs <= self.num_keys:
            raise ValueError(f"num_pairs must lie in [1, num_keys={self.num_keys}], "
                             f"got {self.num_pairs}")
        if self.num_values < 2:
            raise ValueError(f"num_values must be at least 2, got {self.num_values}")

    @property
    def seq_len(self) -> int:
        """Positions in an example: the pairs, then the query."""
        return self.num_pairs + 1

    @property
    def query_value(self) -> int:
        """The value id that marks the query position (a value no pair holds)."""
        return self.num_values

    @property
    def num_value_ids(self) -> int:
        """The ids a position's value slot takes: the values and the query marker."""
        return self.num_values + 1

    @property
    def num_answers(self) -> int:
        """The classes an answer is one of: the values."""
        return self.num_values

    def sample(self, batch_size: int, generator: torch.Generator
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """keys (B, T) and values (B, T), the query last; and the answers (B,)."""
        scores = torch.rand(batch_size, self.num_keys, generator=generator)
        pair_keys = scores.argsort(dim=1)[:, : self.num_pairs]  # (B, P) distinct, random order
        pair_values = torch.randint(self.num_values, (batch_size, self.num_pairs),
                                    generator=generator)  # (B, P)
        asked = torch.randint(self.num_pairs, (batch_size,), generator=generator)  # (B,)
        rows = torch.arange(batch_size)
        query = pair_keys[rows, asked]
        keys = torch.cat([pair_keys, query[:, None]], dim=1)  # (B, T)
        marker = torch.full((batch_size, 1), self.query_value)
        values = torch.cat([pair_values, marker], dim=1)  # (B, T)
        return keys, values, pair_values[rows, asked]


@dataclass(frozen=True)
class TwoKeyRecallTask(RecallTask):
    """Two look-ups at one position. The query names two distinct stored keys, the first
    as its key and the second in its value slot (value id num_values + 1 + that key); the
    answer is the ordered pair of their values, one of num_values² classes,
    v_first * num_values + v_second. One attention distribution at the query must serve
    both look-ups, where several heads can make one each."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.num_pairs < 2:
            raise ValueError(f"two look-ups need at least 2 pairs, got {self.num_pairs}")

    @property
    def num_value_ids(self) -> int:
        """The values, the (unused) query marker, and one id per key named second."""
        return self.num_values + 1 + self.num_keys

    @property
    def num_answers(self) -> int:
        return self.num_values**2

    def sample(self, batch_size: int, generator: torch.Generator
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """keys (B, T) and values (B, T), the query last; and the answers (B,)."""
        scores = torch.rand(batch_size, self.num_keys, generator=generator)
        pair_keys = scores.argsort(dim=1)[:, : self.num_pairs]  # (B, P) distinct, random order
        pair_values = torch.randint(self.num_values, (batch_size, self.num_pairs),
                                    generator=generator)  # (B, P)
        asked = torch.rand(batch_size, self.num_pairs, generator=generator).argsort(dim=1)
        first, second = asked[:, 0], asked[:, 1]  # (B,) two distinct pairs
        rows = torch.arange(batch_size)
        keys = torch.cat([pair_keys, pair_keys[rows, first][:, None]], dim=1)  # (B, T)
        named = self.num_values + 1 + pair_keys[rows, second]  # (B,) the second key's id
        values = torch.cat([pair_values, named[:, None]], dim=1)  # (B, T)
        answers = pair_values[rows, first] * self.num_values + pair_values[rows, second]
        return keys, values, answers


def bag_of_values_accuracy(task: RecallTask, num_examples: int = 20_000, seed: int = 0) -> float:
    """The best accuracy for a reader who sees which values the table holds, and how
    often, but not which key holds which: guess the most frequent value. This is what a
    fixed blend of the positions can keep of the table (see DenseTokenMixing)."""
    generator = torch.Generator().manual_seed(seed)
    _, values, _ = task.sample(num_examples, generator)
    counts = F.one_hot(values[:, :-1], task.num_values).sum(dim=1)  # (N, V)
    return (counts.max(dim=1).values.float() / task.num_pairs).mean().item()


class DenseTokenMixing(nn.Module):
    """A fully connected layer across positions: out = W (x W_v) W_o, with one learned
    (T, T) matrix W shared by every input. Position t's output is a fixed blend of all
    positions, whatever they hold."""

    def __init__(self, seq_len: int, width: int):
        super().__init__()
        self.value = nn.Linear(width, width)
        self.mixing = nn.Parameter(torch.randn(seq_len, seq_len) / seq_len**0.5)  # (T, T)
        self.output = nn.Linear(width, width)

    def mixing_matrix(self, x: torch.Tensor) -> torch.Tensor:
        """The (B, T, T) weights that blend the positions: the same matrix for every input
        (a copy, so it does not change when training goes on)."""
        return self.mixing.detach().expand(x.shape[0], -1, -1).clone()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.mixing @ self.value(x))  # (T, T) @ (B, T, d) -> (B, T, d)


class AttentionMixing(nn.Module):
    """minibert's multi-head self-attention (no mask, no positions), then an output projection."""

    def __init__(self, width: int, num_heads: int):
        super().__init__()
        config = BertConfig(vocab_size=1, hidden_size=width, num_attention_heads=num_heads,
                            intermediate_size=width, attention_probs_dropout_prob=0.0)
        self.attention = BertSelfAttention(config)
        self.output = nn.Linear(width, width)

    def mixing_matrix(self, x: torch.Tensor) -> torch.Tensor:
        """The (B, T, T) attention weights, averaged over heads: they depend on x."""
        return self.attention(x, None, need_weights=True)[1].mean(dim=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.output(self.attention(x, None, need_weights=False)[0])  # (B, T, d)


class RecallModel(nn.Module):
    """Embed each (key, value) pair, one pre-LN block (token mixing, then a feed-forward
    block, each with a residual), and read the answer at the query position.
    mixing="attention" or "dense"; no position embeddings (the table's order is random)."""

    def __init__(self, task: RecallTask, mixing: str, width: int = 64, num_heads: int = 1,
                 mlp_width: int = 256):
        super().__init__()
        if mixing not in MIXINGS:
            raise ValueError(f"mixing must be one of {MIXINGS}, got {mixing!r}")
        self.task, self.mixing_kind = task, mixing
        self.key_embeddings = nn.Embedding(task.num_keys, width)
        self.value_embeddings = nn.Embedding(task.num_value_ids, width)  # + the query marker
        self.mix_norm = nn.LayerNorm(width)
        self.mixing = (AttentionMixing(width, num_heads) if mixing == "attention"
                       else DenseTokenMixing(task.seq_len, width))
        self.mlp_norm = nn.LayerNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, mlp_width), nn.GELU(),
                                 nn.Linear(mlp_width, width))
        self.out_norm = nn.LayerNorm(width)
        self.readout = nn.Linear(width, task.num_answers)

    def embed(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """One vector per pair: key embedding + value embedding. (B, T, d)"""
        return self.key_embeddings(keys) + self.value_embeddings(values)

    def forward(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """Value logits at the query position. (B, V)"""
        x = self.embed(keys, values)
        x = x + self.mixing(self.mix_norm(x))
        x = x + self.mlp(self.mlp_norm(x))
        return self.readout(self.out_norm(x[:, -1]))

    def mixing_matrix(self, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
        """How the block blends positions for this input. (B, T, T)"""
        return self.mixing.mixing_matrix(self.mix_norm(self.embed(keys, values)))

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())


def build_pair(task: RecallTask, width: int = 64, num_heads: int = 1, mlp_width: int = 256
               ) -> tuple[RecallModel, RecallModel]:
    """An attention model and a dense-mixing model of the same width. The dense model's
    feed-forward block is widened by as many units as make up for the parameters its
    mixing layer lacks (attention's W_Q and W_K), so both have about as many parameters."""
    attention = RecallModel(task, "attention", width, num_heads, mlp_width)
    dense = RecallModel(task, "dense", width, num_heads, mlp_width)
    missing = attention.num_parameters() - dense.num_parameters()
    extra_units = max(0, round(missing / (2 * width + 1)))  # each unit: d in, d out, 1 bias
    dense = RecallModel(task, "dense", width, num_heads, mlp_width + extra_units)
    return attention, dense


@dataclass
class RecallHistory:
    """Held-out accuracy during training and, if a probe batch was given, the query
    position's mixing weights on it at each evaluation: one (probe size, T) tensor each."""

    steps: list[int] = field(default_factory=list)
    accuracy: list[float] = field(default_factory=list)
    query_weights: list[torch.Tensor] = field(default_factory=list)
    seconds: float = 0.0


@torch.no_grad()
def accuracy(model: RecallModel, keys: torch.Tensor, values: torch.Tensor,
             answers: torch.Tensor) -> float:
    """Share of examples whose most likely value is the stored one."""
    model.eval()
    correct = (model(keys, values).argmax(dim=-1) == answers).float().mean().item()
    model.train()
    return correct


def train_recall(model: RecallModel, steps: int = 200, batch_size: int = 64,
                 lr: float = 3e-3, seed: int = 0, eval_every: int = 25,
                 eval_size: int = 1000,
                 probe: tuple[torch.Tensor, torch.Tensor] | None = None) -> RecallHistory:
    """AdamW on fresh examples every step (nothing to memorise), with a fixed held-out set
    scored every `eval_every` steps. The data follow `seed`; the initial weights are the
    model's own. probe: (keys, values) whose query-row mixing weights are recorded at each
    evaluation. The model stays on its device."""
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(seed)
    held_out = [t.to(device) for t in model.task.sample(eval_size, generator)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    history = RecallHistory()
    started = time.perf_counter()
    model.train()
    for step in range(steps + 1):
        if step % eval_every == 0 or step == steps:
            history.steps.append(step)
            history.accuracy.append(accuracy(model, *held_out))
            if probe is not None:
                with torch.no_grad():
                    weights = model.mixing_matrix(*(t.to(device) for t in probe))
                history.query_weights.append(weights[:, -1].cpu().clone())  # (probe, T)
        if step == steps:
            break
        keys, values, answers = (t.to(device) for t in model.task.sample(batch_size, generator))
        loss = F.cross_entropy(model(keys, values), answers)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    history.seconds = time.perf_counter() - started
    return history


def query_row_spread(row: torch.Tensor) -> float:
    """How uneven a row of mixing weights is: standard deviation over mean size (0: one
    common weight for every position)."""
    return (row.std() / row.abs().mean()).item()


@torch.no_grad()
def weight_on_match(model: RecallModel, keys: torch.Tensor, values: torch.Tensor) -> float:
    """The mean mixing weight that the query position puts on the pair holding its key:
    near 1 for a model that fetches by content."""
    query_row = model.mixing_matrix(keys, values)[:, -1, :-1]  # (B, T-1) over the pairs
    is_match = keys[:, :-1] == keys[:, -1:]  # (B, T-1): one True per row
    return query_row[is_match].mean().item()


@torch.no_grad()
def hinted_accuracy(model: RecallModel, keys: torch.Tensor, values: torch.Tensor,
                    answers: torch.Tensor, share: float, seed: int = 0) -> float:
    """Accuracy when the model is handed the stored value on a random `share` of the
    tables: a reader known to do better by about share x (1 - its accuracy), to check
    that a comparison can see a gain of that size (a positive control)."""
    model.eval()
    guesses = model(keys, values).argmax(dim=-1)  # (B,)
    model.train()
    generator = torch.Generator().manual_seed(seed)
    hinted = (torch.rand(len(answers), generator=generator) < share).to(answers.device)
    guesses = torch.where(hinted, answers, guesses)  # (B,) the answer where hinted
    return (guesses == answers).float().mean().item()
