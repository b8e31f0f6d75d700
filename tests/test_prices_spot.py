"""Spot prices (issue 15, item 6, the price side): the refresh carries each card's lowest
spot offer into the catalog, and a request with ``spot`` is priced at it, falling back
to on-demand with a note when a card has no spot price."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from adapters.report import build_report
from catalog.price_build import CloudFetch, build_snapshot
from catalog.price_snapshot import PriceSnapshot, TeamPrice, TeamSheet
from catalog.prices import priced_catalog, spot_prices
from catalog.skypilot import parse_vms_csv
from engine import Request, estimate
from engine.specs import Catalog

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "skypilot"
T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
H100_SPOT = 2.30
"""Lowest H100 SXM spot $/GPU-hour in the fixtures (aws; gcp and runpod 2.50)."""
H100_ON_DEMAND = 3.00
"""Lowest H100 SXM on-demand $/GPU-hour in the fixtures (lambda, no spot)."""


def snapshot() -> PriceSnapshot:
    clouds = []
    for cloud in ("aws", "gcp", "lambda", "runpod"):
        text = (FIXTURES / cloud / "vms.csv").read_text(encoding="utf-8")
        clouds.append(CloudFetch(cloud, cloud, parse_vms_csv(text, cloud)))
    return build_snapshot(taken_at=T0, clouds=clouds)


def request(**kw: object) -> Request:
    return Request.model_validate(
        {"model": "llama-3.1-8b", "method": "lora", "gpu": "h100-sxm",
         "dataset_tokens": 50_000_000, **kw}
    )  # fmt: skip


def test_the_refresh_carries_the_lowest_spot_price_into_the_catalog(catalog: Catalog) -> None:
    h100 = priced_catalog(catalog, snapshot()).gpu("h100-sxm")

    assert (h100.price_per_gpu_hour, h100.spot_price_per_gpu_hour) == (H100_ON_DEMAND, H100_SPOT)
    assert h100.spot_price_source.startswith("lowest spot across aws, gcp, runpod")


def test_cards_no_source_lists_at_spot_have_no_spot_price(catalog: Catalog) -> None:
    assert "h100-sxm" in spot_prices(snapshot(), catalog)
    assert catalog.gpu("h100-sxm").spot_price_per_gpu_hour is None
    assert spot_prices(None, catalog) == {}


def test_a_spot_request_is_priced_at_spot(catalog: Catalog) -> None:
    priced = priced_catalog(catalog, snapshot())

    lead = estimate(request(spot=True), priced).options[0]

    assert lead.price_per_gpu_hour == H100_SPOT


def test_an_on_demand_request_keeps_the_on_demand_price(catalog: Catalog) -> None:
    lead = estimate(request(), priced_catalog(catalog, snapshot())).options[0]

    assert lead.price_per_gpu_hour == H100_ON_DEMAND


def test_spot_costs_less_than_on_demand_for_the_same_run(catalog: Catalog) -> None:
    priced = priced_catalog(catalog, snapshot())

    spot_cost = estimate(request(spot=True), priced).options[0].timing.cost_usd
    on_demand_cost = estimate(request(), priced).options[0].timing.cost_usd

    assert spot_cost is not None and on_demand_cost is not None
    assert spot_cost < on_demand_cost


def test_a_given_price_wins_over_spot(catalog: Catalog) -> None:
    lead = estimate(request(spot=True, price_per_gpu_hour=1.25),
                    priced_catalog(catalog, snapshot())).options[0]

    assert lead.price_per_gpu_hour == 1.25


def test_without_a_spot_price_spot_falls_back_to_on_demand_and_says_so(catalog: Catalog) -> None:
    est = estimate(request(spot=True), catalog)

    assert est.options[0].price_per_gpu_hour == catalog.gpu("h100-sxm").price_per_gpu_hour
    (line,) = [a for a in est.assumptions if a.startswith("Price:")]
    assert "No spot price for h100-sxm" in line and "on-demand used" in line


def test_the_assumptions_name_the_spot_source(catalog: Catalog) -> None:
    est = estimate(request(spot=True), priced_catalog(catalog, snapshot()))

    (line,) = [a for a in est.assumptions if a.startswith("Price:")]
    assert f"${H100_SPOT:.2f}/GPU-hr at spot (lowest spot across" in line


def test_the_report_price_line_says_spot(catalog: Catalog) -> None:
    report = build_report(estimate(request(spot=True), priced_catalog(catalog, snapshot())))

    assert report.price_line is not None
    assert report.price_line.startswith(f"h100-sxm ${H100_SPOT:.2f}/hr at spot, lowest spot")


def test_a_team_rate_leaves_the_public_spot_price(catalog: Catalog) -> None:
    sheet = TeamSheet(workspace="*", location="sheet.yaml",
                      prices={"h100-sxm": TeamPrice(price=2.10)}, as_of=T0)
    snap = snapshot().model_copy(update={"team_sheets": {"*": sheet}})

    h100 = priced_catalog(catalog, snap).gpu("h100-sxm")

    assert (h100.price_per_gpu_hour, h100.spot_price_per_gpu_hour) == (2.10, H100_SPOT)


def test_spot_prices_choose_the_pick_not_only_its_cost() -> None:
    from engine import Request, estimate
    from tests.helpers import catalog_with, gpu

    steady = gpu("steady", 80, price_per_gpu_hour=2.0)
    spotty = gpu("spotty", 80, price_per_gpu_hour=3.0, spot_price_per_gpu_hour=0.5)
    cat = catalog_with(steady, spotty)
    request = Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7)
    assert estimate(request, cat).options[0].gpu.id == "steady"
    spot = estimate(request.model_copy(update={"spot": True}), cat)
    assert spot.options[0].gpu.id == "spotty"
    assert spot.options[0].price_per_gpu_hour == 0.5
