"""A setting pair a framework refuses, and a remedy that would not hold the run, are not
offered as if they worked."""

from __future__ import annotations

from adapters.parse import parse_query
from engine import estimate

HSDP_REMEDY = "`hsdp` (its gathers stay inside a node)"


def warnings_of(query: str) -> list[str]:
    return estimate(parse_query(query)).warnings


def test_optimizer_in_backward_with_accumulation_is_said_to_be_refused() -> None:
    found = warnings_of("8b full torchtune optimizer-in-backward accum 8 50M tokens h100")

    assert any("cannot accumulate 8 micro-batches" in w and "`accum 1`" in w for w in found)


def test_optimizer_in_backward_without_accumulation_is_not_warned() -> None:
    found = warnings_of("8b full torchtune optimizer-in-backward 50M tokens h100")

    assert not any("cannot accumulate" in w for w in found)


def test_hsdp_is_suggested_for_traffic_between_nodes_where_it_holds_the_run() -> None:
    found = warnings_of("8b full 2 nodes of 8x h100-pcie 1B tokens")

    assert any(HSDP_REMEDY in w for w in found)


def test_hsdp_is_not_suggested_where_one_nodes_shard_does_not_fit() -> None:
    found = warnings_of("70b full 2 nodes of 8x h100-pcie 1B tokens")

    assert any("waits on communication" in w for w in found)
    assert not any(HSDP_REMEDY in w for w in found)
