"""A price the user gives is the rent of the card they name: other cards, the fastest card
and a what-if row on another card are priced from the catalog. Said without a card, it
is every card's."""

from __future__ import annotations

import pytest

from adapters.parse import apply_followup, parse_query
from adapters.report import build_report
from engine import Request, estimate
from engine.ranking import user_price
from engine.specs import Catalog

GIVEN = 1.5


def qlora_70b(**kw: object) -> Request:
    return Request(model="llama-3.1-70b", method="qlora", dataset_tokens=50_000_000,
                   price_per_gpu_hour=GIVEN, **kw)


def test_a_price_said_with_a_card_is_that_cards(catalog: Catalog) -> None:
    est = estimate(qlora_70b(gpu="a100-80gb-sxm", gpu_count=4), catalog)

    assert est.options[0].price_per_gpu_hour == GIVEN


def test_other_cards_keep_their_catalog_price_beside_a_named_card(catalog: Catalog) -> None:
    est = estimate(qlora_70b(gpu="a100-80gb-sxm", gpu_count=4), catalog)

    others = [o for o in est.options[1:] if o.price_per_gpu_hour is not None]
    assert others
    assert all(o.price_per_gpu_hour == o.gpu.price_per_gpu_hour for o in others)


def test_the_fastest_card_is_priced_from_the_catalog(catalog: Catalog) -> None:
    est = estimate(qlora_70b(gpu="a100-80gb-sxm", gpu_count=4), catalog)

    assert est.fastest is not None and est.fastest.gpu.id != "a100-80gb-sxm"
    assert est.fastest.price_per_gpu_hour == est.fastest.gpu.price_per_gpu_hour


def test_a_price_said_without_a_card_is_every_cards(catalog: Catalog) -> None:
    est = estimate(qlora_70b(), catalog)

    assert {o.price_per_gpu_hour for o in est.options} == {GIVEN}


def test_the_named_card_at_its_given_price_pays_for_its_own_cards_only(
    catalog: Catalog,
) -> None:
    est = estimate(qlora_70b(gpu="a100-80gb-sxm", gpu_count=5), catalog)

    assert est.options[0].timing.billed_cards is None


def test_the_price_line_says_the_named_cards_price_was_given(catalog: Catalog) -> None:
    est = estimate(qlora_70b(gpu="a100-80gb-sxm", gpu_count=4), catalog)

    assert build_report(est).price_line == "$1.50/hr as given"


@pytest.mark.parametrize("gpu, expected", [("a100-80gb-sxm", GIVEN), ("b200", None)])
def test_user_price_applies_to_the_named_card_alone(
    catalog: Catalog, gpu: str, expected: float | None
) -> None:
    request = qlora_70b(gpu="a100-80gb-sxm")

    assert user_price(request, catalog.gpu(gpu)) == expected


def test_a_budget_beside_a_named_card_prices_the_other_cards_from_the_catalog(
    catalog: Catalog,
) -> None:
    est = estimate(qlora_70b(gpu="a100-80gb-sxm", budget_usd=150.0), catalog)

    assert all(o.price_per_gpu_hour == (GIVEN if o.gpu.id == "a100-80gb-sxm"
                                        else o.gpu.price_per_gpu_hour) for o in est.options)


def test_a_followup_on_another_card_drops_the_price_said_for_the_first() -> None:
    first = parse_query("70b qlora 50M tokens 4x h100 $1.50/hr")

    assert apply_followup(first, "on 4x a100").price_per_gpu_hour is None


def test_a_followup_on_another_card_with_its_own_price_keeps_that_price() -> None:
    first = parse_query("70b qlora 50M tokens 4x h100 $1.50/hr")

    assert apply_followup(first, "on 4x a100 $1.20/hr").price_per_gpu_hour == 1.2


def test_a_followup_that_keeps_the_card_keeps_its_price() -> None:
    first = parse_query("70b qlora 50M tokens 4x h100 $1.50/hr")

    assert apply_followup(first, "what if 8k seq").price_per_gpu_hour == 1.5
