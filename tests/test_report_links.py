"""The cards table's link column names every link a choice's collectives cross: the
card's own fabric inside a node, and the network once the run spans nodes."""

from __future__ import annotations

from adapters.report import build_report
from engine import Request, estimate
from tests.helpers import H100_LIKE, catalog_with

ONE_PER_MACHINE = H100_LIKE.model_copy(update={"id": "g80-solo", "gpus_per_node": 1})


def _link(gpu_id: str, count: int, **fields: object) -> str:
    request = Request(model="llama-3.1-8b", method="lora", gpu=gpu_id, gpu_count=count,
                      sharding="fsdp", **fields)
    report = build_report(estimate(request, catalog_with(H100_LIKE, ONE_PER_MACHINE)))
    header = report.cards.columns.index("link")
    return report.cards.rows[0][header]


def test_within_one_node_the_link_is_the_cards_fabric() -> None:
    assert _link("g80", 8) == "nvlink"


def test_across_nodes_the_network_joins_the_fabric() -> None:
    assert _link("g80", 16) == "nvlink+net"


def test_named_nodes_count_even_when_one_node_would_hold_the_cards() -> None:
    assert _link("g80", 8, nodes=2) == "nvlink+net"


def test_cards_rented_one_to_a_machine_talk_over_the_network_only() -> None:
    assert _link("g80-solo", 4) == "net"
