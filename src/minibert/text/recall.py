"""Associative recall, the data: each example is a small table of (key, value) pairs in
random order, one pair per position, followed by a query key at the last position; the
answer is the value stored under that key (or, in `TwoKeyRecallTask`, the values under two
keys). Examples are drawn fresh, so nothing can be memorised. Shapes: B = batch,
T = positions (pairs + the query).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


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

    def tables(self, batch_size: int, generator: torch.Generator
               ) -> tuple[torch.Tensor, torch.Tensor]:
        """The stored pairs: distinct keys in random order and their values, (B, P) each."""
        scores = torch.rand(batch_size, self.num_keys, generator=generator)
        pair_keys = scores.argsort(dim=1)[:, : self.num_pairs]  # (B, P)
        pair_values = torch.randint(self.num_values, (batch_size, self.num_pairs),
                                    generator=generator)  # (B, P)
        return pair_keys, pair_values

    def sample(self, batch_size: int, generator: torch.Generator
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """keys (B, T) and values (B, T), the query last; and the answers (B,)."""
        pair_keys, pair_values = self.tables(batch_size, generator)  # (B, P) each
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
        pair_keys, pair_values = self.tables(batch_size, generator)  # (B, P) each
        asked = torch.rand(batch_size, self.num_pairs, generator=generator).argsort(dim=1)
        first, second = asked[:, 0], asked[:, 1]  # (B,) two distinct pairs
        rows = torch.arange(batch_size)
        keys = torch.cat([pair_keys, pair_keys[rows, first][:, None]], dim=1)  # (B, T)
        named = self.num_values + 1 + pair_keys[rows, second]  # (B,) the second key's id
        values = torch.cat([pair_values, named[:, None]], dim=1)  # (B, T)
        answers = pair_values[rows, first] * self.num_values + pair_values[rows, second]
        return keys, values, answers
