"""A step's sequences count data-parallel ranks, not cards: a tensor-parallel group and a
context-parallel ring share one micro-batch."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from adapters.query.errors import QueryError
from engine.request import data_parallel_ranks


def test_data_parallel_ranks_are_cards_over_tp_and_cp() -> None:
    assert data_parallel_ranks(32, 8) == 4
    assert data_parallel_ranks(8, 1, 8) == 1
    assert data_parallel_ranks(16, 2, 2) == 4
    assert data_parallel_ranks(8) == 8


def test_steps_under_tensor_parallelism_count_one_micro_batch_per_group() -> None:
    request = parse_query("70b full 1000 steps 32x h100 tp 8")
    assert request.dataset_tokens == 1000 * 4 * 2048


def test_steps_under_context_parallelism_count_one_sequence_per_ring() -> None:
    request = parse_query("8b full 1000 steps 8x h100 cp 8 seq 128k")
    assert request.dataset_tokens == 1000 * 131072


def test_global_batch_under_tensor_parallelism_divides_by_data_parallel_ranks() -> None:
    request = parse_query("70b full global batch size 64 32x h100 tp 8 100M tokens")
    assert request.grad_accum == 16


def test_global_batch_that_does_not_divide_the_data_parallel_ranks_is_refused() -> None:
    with pytest.raises(QueryError, match="data-parallel ranks"):
        parse_query("70b full global batch size 6 32x h100 tp 8 100M tokens")
