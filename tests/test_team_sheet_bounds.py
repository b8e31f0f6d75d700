"""A team price sheet's rates are bounded like a price typed in a query, and a card is
priced by one entry only.

A sheet entry outside the query's ``$X/hr`` range (``engine.request.Request``'s
``price_per_gpu_hour`` bounds) is refused: it never reaches an estimate, the sheet's
``problems`` name the card, the value as written, the range and how to write it, and the
refresh's rejection (logged, counted in ``/ftcost prices``) says the same. SkyPilot
offers are held to the same range.

A card listed twice (two aliases of one card, or a repeated YAML key, which PyYAML would
silently resolve to the last value) is refused whole: neither rate is used, the sheet's
previous rate for the card stays, and both entries are named with their lines.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import annotated_types
import pytest

from adapters.parse import QueryError, parse_query
from adapters.report import build_report
from bot.price_commands import prices_view
from catalog.price_build import CloudFetch, TeamFetch, build_snapshot
from catalog.price_snapshot import Limits, PriceSnapshot
from catalog.price_sources import PriceSettings, TeamSheetSource, refresh_prices
from catalog.prices import effective_prices, priced_catalog
from catalog.skypilot import parse_vms_csv
from catalog.team_sheets import MalformedSheet, ParsedSheet, parse_team_sheet
from engine import estimate
from engine.request import Request
from engine.specs import Catalog

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=1)
WORKSPACE = "slack:T1"
QUERY = "8b lora 50M tokens h100"


def query_bounds() -> tuple[float, float]:
    """The lowest and highest $/GPU-hour a query's ``$X/hr`` accepts, from the field."""
    low = high = None
    for bound in Request.model_fields["price_per_gpu_hour"].metadata:
        if isinstance(bound, annotated_types.Ge):
            low = float(bound.ge)  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Le):
            high = float(bound.le)  # type: ignore[arg-type]
    assert low is not None and high is not None
    return low, high


LOW, HIGH = query_bounds()


def sheet(catalog: Catalog, text: str, limits: Limits | None = None) -> ParsedSheet:
    return parse_team_sheet(text, catalog.find_gpu, limits)


def snapshot(catalog: Catalog, text: str, previous: PriceSnapshot | None = None,
             at: datetime = T0, limits: Limits | None = None) -> PriceSnapshot:  # fmt: skip
    team = TeamFetch(WORKSPACE, "sheet.yaml", sheet(catalog, text, limits))
    return build_snapshot(taken_at=at, clouds=[], teams=[team], previous=previous,
                          limits=limits)  # fmt: skip


def team_h100(s: PriceSnapshot, catalog: Catalog) -> tuple[float, str]:
    price = effective_prices(s, catalog, workspace=WORKSPACE)["h100-sxm"]
    return price.price, price.kind


# -- the lower bound --------------------------------------------------------------------


def test_a_rate_below_the_query_minimum_is_not_a_team_price(catalog: Catalog) -> None:
    assert "h100-sxm" not in sheet(catalog, "prices: {h100: 0.0001}").prices


def test_a_rate_below_the_minimum_is_listed_with_card_value_range_and_example(
    catalog: Catalog,
) -> None:
    problems = sheet(catalog, "prices: {h100: 0.0001}").problems

    assert problems == (
        "h100 (h100-sxm): 0.0001 refused, below the $0.01/GPU-hr minimum; a rate must be "
        "between $0.01 and $100 per GPU-hour, in dollars, e.g. `h100: 2.49`",
    )


def test_a_rate_below_the_minimum_in_a_price_note_entry_is_refused(catalog: Catalog) -> None:
    parsed = sheet(catalog, 'prices: {l4: {price: 0.001, note: "promo"}}')

    assert "l4" not in parsed.prices and "0.001 refused" in parsed.problems[0]


def test_a_rate_at_the_query_minimum_is_kept(catalog: Catalog) -> None:
    assert sheet(catalog, f"prices: {{h100: {LOW}}}").prices["h100-sxm"].price == LOW


def test_a_sub_cent_sheet_rate_is_refused_exactly_where_a_query_price_is(
    catalog: Catalog,
) -> None:
    below = LOW * 0.99
    with pytest.raises(QueryError):
        parse_query(f"{QUERY} ${below}/hr", catalog)

    assert "h100-sxm" not in sheet(catalog, f"prices: {{h100: {below}}}").prices


def test_a_refused_sub_cent_rate_leaves_estimates_on_the_public_price(catalog: Catalog) -> None:
    priced = priced_catalog(catalog, snapshot(catalog, "prices: {h100: 0.0001}"),
                            workspace=WORKSPACE)  # fmt: skip
    line = build_report(estimate(parse_query(QUERY, priced), priced), now=T0).price_line

    built_in = catalog.gpus["h100-sxm"].price_per_gpu_hour
    assert line is not None and line.startswith(f"h100-sxm ${built_in:.2f}/hr, built-in")


def test_a_refused_sub_cent_rate_is_not_shown_as_the_team_rate(catalog: Catalog) -> None:
    view = prices_view(snapshot(catalog, "prices: {h100: 0.0001}"), catalog, T0,
                       workspace=WORKSPACE)  # fmt: skip

    row = next(r for r in view.table.rows if r[0] == "h100-sxm")
    assert row[1] == f"${catalog.gpus['h100-sxm'].price_per_gpu_hour:.2f}"


def test_the_prices_view_counts_a_refused_rate_in_the_sheets_status(catalog: Catalog) -> None:
    view = prices_view(snapshot(catalog, "prices: {h100: 0.0001, l4: 0.5}"), catalog, T0,
                       workspace=WORKSPACE)  # fmt: skip

    assert f"team:{WORKSPACE}: ok, 2 offers (1 prices rejected)" in view.sources


def test_the_refresh_rejection_of_a_sub_cent_rate_says_how_to_write_it(
    catalog: Catalog,
) -> None:
    rejected = snapshot(catalog, "prices: {h100: 0.0001}").rejected

    assert [(r.card, r.kind, r.price) for r in rejected] == [("h100-sxm", "team", 0.0001)]
    assert rejected[0].reason == (
        "below the $0.01/GPU-hr minimum; a rate must be between $0.01 and $100 per "
        "GPU-hour, in dollars, e.g. `h100-sxm: 2.49`"
    )


def test_a_sub_cent_rate_keeps_the_previous_team_rate(catalog: Catalog) -> None:
    first = snapshot(catalog, "prices: {h100: 2.10}")

    second = snapshot(catalog, "prices: {h100: 0.001}", previous=first, at=T1)

    assert team_h100(second, catalog) == (2.10, "team")


# -- the upper bound --------------------------------------------------------------------


def test_a_rate_above_the_bound_is_listed_with_the_range(catalog: Catalog) -> None:
    parsed = sheet(catalog, "prices: {h100-sxm: 150}")

    assert "h100-sxm" not in parsed.prices
    assert parsed.problems == (
        "h100-sxm: 150 refused, above the $100/GPU-hr bound; a rate must be between $0.01 "
        "and $100 per GPU-hour, in dollars, e.g. `h100-sxm: 2.49`",
    )


def test_a_cap_configured_above_the_query_maximum_still_refuses_what_a_query_would(
    catalog: Catalog,
) -> None:
    loose = Limits(max_price_per_gpu_hour=HIGH * 10)
    over = HIGH * 2
    with pytest.raises(QueryError):
        parse_query(f"{QUERY} ${over:g}/hr", catalog)

    s = snapshot(catalog, f"prices: {{h100: {over:g}}}", limits=loose)

    assert s.team_sheets[WORKSPACE].prices == {}
    assert [r.card for r in s.rejected] == ["h100-sxm"]


def test_a_configured_cap_below_the_query_maximum_bounds_the_sheet(catalog: Catalog) -> None:
    parsed = sheet(catalog, "prices: {h100: 50}", Limits(max_price_per_gpu_hour=40))

    assert "h100-sxm" not in parsed.prices and "between $0.01 and $40" in parsed.problems[0]


# -- SkyPilot offers are held to the same range -----------------------------------------

SUB_CENT_CSV = """\
InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice
gpu_1x_h100_pcie,H100,1.0,26.0,200.0,0.004,us-east-1,,
gpu_1x_a10,A10,1.0,30.0,200.0,0.75,us-east-1,,
"""


def test_a_skypilot_offer_below_the_query_minimum_is_rejected(catalog: Catalog) -> None:
    fetch = CloudFetch("lambda", "lambda", parse_vms_csv(SUB_CENT_CSV, "lambda"))

    s = build_snapshot(taken_at=T0, clouds=[fetch])

    assert [(r.source, r.kind, r.price) for r in s.rejected] == [("lambda", "on-demand", 0.004)]
    assert s.rejected[0].reason == "below the $0.01/GPU-hr minimum"
    assert all(c.lowest_on_demand is None or c.lowest_on_demand.price >= LOW
               for c in s.cards.values())  # fmt: skip


# -- one entry per card -----------------------------------------------------------------

ALIASES = "prices:\n  h100: 2\n  l4: 0.5\n  h100-sxm: 2.5\n"
REPEATED_KEY = "prices:\n  h100: 2\n  l4: 0.5\n  h100: 3\n"


def test_two_aliases_of_one_card_price_it_with_neither_rate(catalog: Catalog) -> None:
    assert "h100-sxm" not in sheet(catalog, ALIASES).prices


def test_two_aliases_of_one_card_are_named_in_the_problems_with_their_lines(
    catalog: Catalog,
) -> None:
    assert sheet(catalog, ALIASES).problems == (
        "h100-sxm is listed more than once (h100: 2 (line 2), h100-sxm: 2.5 (line 4)): "
        "neither rate is used, the sheet's previous rate for h100-sxm (if any) stays; keep "
        "one entry per card",
    )


def test_a_duplicated_card_leaves_the_sheets_other_cards_in_force(catalog: Catalog) -> None:
    assert sheet(catalog, ALIASES).prices["l4"].price == 0.5


def test_a_repeated_yaml_key_is_a_problem_not_the_last_value(catalog: Catalog) -> None:
    parsed = sheet(catalog, REPEATED_KEY)

    assert "h100-sxm" not in parsed.prices
    assert parsed.problems[0].startswith(
        "h100-sxm is listed more than once (h100: 2 (line 2), h100: 3 (line 4))")


def test_a_repeated_key_in_a_json_sheet_is_a_problem(catalog: Catalog) -> None:
    parsed = sheet(catalog, '{"prices": {"l4": 0.4, "l4": 0.5}}')

    assert "l4" not in parsed.prices and "l4: 0.4" in parsed.problems[0]


def test_a_price_written_twice_in_one_entry_is_a_problem(catalog: Catalog) -> None:
    parsed = sheet(catalog, "prices:\n  l4:\n    price: 0.4\n    price: 0.5\n")

    assert "l4" not in parsed.prices
    assert parsed.problems[0].startswith(
        "l4 is listed more than once (price: 0.4 (line 3), price: 0.5 (line 4))")


def test_two_prices_mappings_refuse_the_whole_sheet(catalog: Catalog) -> None:
    with pytest.raises(MalformedSheet, match=r"'prices:' is written 2 times \(lines 1, 2\)"):
        sheet(catalog, "prices: {l4: 0.4}\nprices: {h100: 2}\n")


def test_a_duplicated_card_keeps_the_previous_team_rate(catalog: Catalog) -> None:
    first = snapshot(catalog, "prices: {h100: 2.10}")

    second = snapshot(catalog, ALIASES, previous=first, at=T1)

    assert team_h100(second, catalog) == (2.10, "team")


def test_a_duplicated_card_in_a_first_sheet_leaves_estimates_on_the_public_price(
    catalog: Catalog,
) -> None:
    priced = priced_catalog(catalog, snapshot(catalog, ALIASES), workspace=WORKSPACE)
    line = build_report(estimate(parse_query(QUERY, priced), priced), now=T0).price_line

    built_in = catalog.gpus["h100-sxm"].price_per_gpu_hour
    assert line is not None and line.startswith(f"h100-sxm ${built_in:.2f}/hr, built-in")


def test_the_refresh_rejection_of_a_duplicated_card_names_both_entries(
    catalog: Catalog,
) -> None:
    rejected = snapshot(catalog, ALIASES).rejected

    assert [(r.card, r.kind, r.price, r.reason) for r in rejected] == [(
        "h100-sxm", "team", None,
        "listed more than once (h100: 2 (line 2), h100-sxm: 2.5 (line 4)): neither rate "
        "used; keep one entry per card",
    )]  # fmt: skip


def test_the_prices_view_counts_a_duplicated_card_as_rejected(catalog: Catalog) -> None:
    view = prices_view(snapshot(catalog, ALIASES), catalog, T0, workspace=WORKSPACE)

    assert f"team:{WORKSPACE}: ok, 1 offers (1 prices rejected)" in view.sources


# -- through the refresh: a sheet file read, parsed and logged ---------------------------


async def test_a_refresh_logs_each_refused_sheet_entry_with_its_reason(
    catalog: Catalog, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "rates.yaml"
    path.write_text(REPEATED_KEY.replace("l4: 0.5", "l4: 0.0001"), encoding="utf-8")
    settings = PriceSettings(
        clouds=(), team_sheets=(TeamSheetSource(workspace=WORKSPACE, location=str(path)),))

    with caplog.at_level(logging.WARNING):
        s = await refresh_prices(settings, catalog, None, T0)

    assert s.team_sheets[WORKSPACE].prices == {}
    logged = [r.getMessage() for r in caplog.records if "price rejected" in r.getMessage()]
    assert len(logged) == 2
    assert "card=h100-sxm" in logged[0] and "h100: 2 (line 2), h100: 3 (line 4)" in logged[0]
    assert "card=l4" in logged[1] and "below the $0.01/GPU-hr minimum" in logged[1]
