"""A stored price snapshot is read back as outside data: a quote or team rate that is not
a finite price within the query's ``$X/hr`` bounds (written by an older version, or
edited by hand in the store) is dropped on load, so the built-in price stands in for
it; ``$-26.50``, ``$nan`` or ``$inf`` never reaches an estimate. A malformed document is
still refused whole."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from adapters.parse import parse_query
from adapters.report import build_report
from catalog.price_build import CloudFetch, TeamFetch, build_snapshot
from catalog.price_snapshot import Limits, PriceSnapshot, TeamPrice
from catalog.prices import effective_prices, priced_catalog
from catalog.skypilot import parse_vms_csv
from catalog.team_sheets import parse_team_sheet
from engine import estimate
from engine.constants import MAX_PRICE_PER_GPU_HOUR, MIN_PRICE_PER_GPU_HOUR
from engine.specs import Catalog

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
WORKSPACE = "slack:T1"
LAMBDA_CSV = """\
InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice
gpu_1x_h100_sxm5,H100,1.0,26.0,200.0,2.5,us-east-1,,
"""
UNUSABLE = ["-5", "0", "NaN", "Infinity", "-Infinity", "1e308", "1e-300",
            str(MAX_PRICE_PER_GPU_HOUR * 2), str(MIN_PRICE_PER_GPU_HOUR / 2)]  # fmt: skip


def stored(catalog: Catalog) -> str:
    """A snapshot with a refreshed H100 quote ($2.50) and a team H100 rate ($2.10), as
    the store holds it."""
    sheet = parse_team_sheet("prices: {h100: 2.10}", catalog.find_gpu)
    return build_snapshot(
        taken_at=T0,
        clouds=[CloudFetch("lambda", "lambda", parse_vms_csv(LAMBDA_CSV, "lambda"))],
        teams=[TeamFetch(WORKSPACE, "sheet.yaml", sheet)],
    ).to_json()


def test_a_stored_quote_outside_the_price_range_is_dropped_on_load(catalog: Catalog) -> None:
    for bad in UNUSABLE:
        s = PriceSnapshot.from_json(stored(catalog).replace('"price":2.5', f'"price":{bad}'))

        assert s.cards["h100-sxm"].lowest_on_demand is None, bad


def test_an_estimate_uses_the_built_in_price_for_a_dropped_stored_quote(
    catalog: Catalog,
) -> None:
    built_in = catalog.gpus["h100-sxm"].price_per_gpu_hour
    for bad in UNUSABLE:
        s = PriceSnapshot.from_json(stored(catalog).replace('"price":2.5', f'"price":{bad}'))
        priced = priced_catalog(catalog, s)

        report = build_report(estimate(parse_query("8b lora 50M tokens h100", priced), priced),
                              now=T0)

        assert priced.gpus["h100-sxm"].price_per_gpu_hour == built_in, bad
        assert report.price_line is not None and "built-in catalog price" in report.price_line
        assert "nan" not in (report.cost_line or "") and "inf" not in (report.cost_line or "")


def test_a_stored_team_rate_outside_the_price_range_is_dropped_on_load(
    catalog: Catalog,
) -> None:
    for bad in UNUSABLE:
        s = PriceSnapshot.from_json(stored(catalog).replace('"price":2.1', f'"price":{bad}'))

        assert s.team_sheets[WORKSPACE].prices == {}, bad
        assert effective_prices(s, catalog, workspace=WORKSPACE)["h100-sxm"].kind == "refreshed"


def test_a_stored_quote_within_the_range_survives_the_round_trip(catalog: Catalog) -> None:
    s = PriceSnapshot.from_json(stored(catalog))

    assert s.to_json() == stored(catalog)
    assert effective_prices(s, catalog, workspace=WORKSPACE)["h100-sxm"].price == 2.1


def test_a_stored_quote_missing_its_cloud_still_refuses_the_snapshot(catalog: Catalog) -> None:
    with pytest.raises(ValidationError):
        PriceSnapshot.from_json(stored(catalog).replace('"cloud":"lambda",', "", 1))


def test_a_stored_held_back_move_from_a_zero_price_is_dropped_on_load(
    catalog: Catalog,
) -> None:
    doc = json.loads(stored(catalog))
    doc["held_back"] = [{"card": "h100-sxm", "statistic": "lowest on-demand", "old": 0,
                         "new": 2.5},
                        {"card": "l40s", "statistic": "lowest on-demand", "old": 1.0,
                         "new": 9.0}]  # fmt: skip

    s = PriceSnapshot.from_json(json.dumps(doc))

    assert [(h.card, h.ratio) for h in s.held_back] == [("l40s", 9.0)]


def test_a_stored_rejected_price_that_is_not_finite_loads_as_unknown(catalog: Catalog) -> None:
    doc = json.loads(stored(catalog))
    doc["rejected"] = [{"source": "lambda", "card": "h100-sxm", "kind": "on-demand",
                        "price": math.inf, "reason": "not a finite number"}]  # fmt: skip

    assert PriceSnapshot.from_json(json.dumps(doc)).rejected[0].price is None


@pytest.mark.parametrize("price", [math.inf, math.nan, 1e308, 0.0, -2.0])
def test_a_team_price_must_be_finite_and_within_the_range(price: float) -> None:
    with pytest.raises(ValidationError):
        TeamPrice(price=price)


@pytest.mark.parametrize("field", ["max_price_per_gpu_hour", "max_change_ratio"])
def test_a_price_limit_must_be_finite(field: str) -> None:
    with pytest.raises(ValidationError):
        Limits.model_validate({field: math.inf})
