"""A card without a public price says so and how to give it one."""

from __future__ import annotations

from adapters.report import build_report
from engine import Request, estimate
from tests.helpers import catalog_with, gpu


def test_a_card_without_a_price_says_how_to_add_one() -> None:
    cat = catalog_with(gpu("unpriced", 80, price_per_gpu_hour=None))
    est = estimate(Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7,
                           gpu="unpriced"), cat)
    report = build_report(est)
    assert report.cost_line is not None
    assert report.cost_line.startswith("no listed price")
    assert "`$4/hr`" in report.cost_line
    assert "no price" in report.cards.render()


def test_unpriced_cards_rank_after_priced_ones_when_a_dataset_is_given() -> None:
    cat = catalog_with(gpu("unpriced", 80, price_per_gpu_hour=None), gpu("priced", 80))
    est = estimate(Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7), cat)
    assert [o.gpu.id for o in est.options] == ["priced", "unpriced"]
