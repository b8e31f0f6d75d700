"""Building price snapshots: aggregation arithmetic, validation, the 5x hold-back,
failed sources, team sheets, and applying a snapshot to the catalog."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from catalog.price_build import CloudFetch, TeamFetch, build_snapshot, screen_offers
from catalog.price_snapshot import (
    CardPrices,
    CloudQuotes,
    Limits,
    PriceChoice,
    PriceSnapshot,
    Quote,
)
from catalog.prices import (
    apply_prices,
    effective_prices,
    floor_prices,
    price_changes,
    priced_catalog,
)
from catalog.skypilot import Offer, ParsedCatalog, parse_vms_csv
from catalog.team_sheets import MalformedSheet, parse_team_sheet
from engine import estimate
from engine.specs import Catalog
from tests.helpers import catalog_with, gpu

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"
T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=1)
H100_CLOUDS = ("aws", "gcp", "lambda", "runpod")


def fetch(cloud: str) -> CloudFetch:
    text = (FIXTURES / cloud / "vms.csv").read_text(encoding="utf-8")
    return CloudFetch(cloud, f"fixtures/{cloud}", parse_vms_csv(text, cloud))


def failed(cloud: str, error: str = "HTTP 500") -> CloudFetch:
    return CloudFetch(cloud, f"fixtures/{cloud}", error=error)


def offer(cloud: str, price: float | None, spot: float | None = None, card: str = "l40s") -> Offer:
    return Offer(cloud, card, "L40S", "x1", "r1", "", 1.0, price, spot)


def one_cloud(cloud: str, *offers: Offer) -> CloudFetch:
    parsed = ParsedCatalog(cloud, offers, rows=len(offers), gpu_rows=len(offers))
    return CloudFetch(cloud, cloud, parsed)


def snap(*clouds: str, previous: PriceSnapshot | None = None, at: datetime = T0) -> PriceSnapshot:
    return build_snapshot(taken_at=at, clouds=[fetch(c) for c in clouds], previous=previous)


@pytest.fixture
def h100() -> CardPrices:
    return snap(*H100_CLOUDS).cards["h100-sxm"]


# -- aggregation --------------------------------------------------------------------------


def test_lowest_on_demand_is_the_cheapest_offer_of_any_cloud(h100: CardPrices) -> None:
    low = h100.lowest_on_demand
    assert low is not None
    assert (low.price, low.cloud, low.instance_type) == (3.0, "lambda", "gpu_8x_h100_sxm5")


def test_each_cloud_keeps_its_cheapest_region(h100: CardPrices) -> None:
    aws = h100.clouds["aws"].on_demand
    assert aws is not None and (aws.price, aws.region) == (7.0, "us-east-1")


def test_median_is_the_lower_middle_of_per_cloud_lowest_prices(h100: CardPrices) -> None:
    # per cloud: lambda 3.00, runpod 3.50, gcp 6.25, aws 7.00
    median = h100.median_on_demand
    assert median is not None and (median.price, median.cloud) == (3.5, "runpod")


def test_median_of_an_odd_number_of_clouds_is_the_middle_one() -> None:
    prices = snap("aws", "gcp", "lambda").cards["h100-sxm"]
    median = prices.median_on_demand
    assert median is not None and (median.price, median.cloud) == (6.25, "gcp")


def test_lowest_spot_is_the_cheapest_spot_offer(h100: CardPrices) -> None:
    spot = h100.lowest_spot
    assert spot is not None and (spot.price, spot.cloud, spot.region) == (
        pytest.approx(2.3),
        "aws",
        "us-east-1",
    )


def test_statistics_name_the_clouds_they_were_taken_over(h100: CardPrices) -> None:
    assert h100.across(PriceChoice.LOWEST_ON_DEMAND) == H100_CLOUDS
    assert h100.across(PriceChoice.LOWEST_SPOT) == ("aws", "gcp", "runpod")


def test_one_region_per_cloud_gets_one_vote_in_the_median() -> None:
    many = one_cloud("aws", *(offer("aws", 9.0) for _ in range(5)))
    few = one_cloud("lambda", offer("lambda", 1.0))
    third = one_cloud("runpod", offer("runpod", 2.0))
    card = build_snapshot(taken_at=T0, clouds=[many, few, third]).cards["l40s"]
    assert card.median_on_demand is not None and card.median_on_demand.price == 2.0


# -- validation -----------------------------------------------------------------------------


def test_an_absurd_price_is_rejected_and_reported() -> None:
    s = snap("nebius")
    assert "h100-sxm" not in s.cards
    [r] = s.rejected
    assert (r.card, r.kind, r.price, r.source) == ("h100-sxm", "on-demand", 100000.0, "nebius")


def test_an_absurd_price_is_counted_in_its_source_status() -> None:
    status = snap("nebius").source("nebius")
    assert status is not None and status.ok and status.rejected == 1


def test_the_other_cards_of_a_source_with_an_absurd_price_stay() -> None:
    l40s = snap("nebius").cards["l40s"].lowest_on_demand
    assert l40s is not None and l40s.price == 1.5


def test_a_non_positive_price_is_rejected() -> None:
    kept, rejected = screen_offers([offer("aws", -1.0)], Limits())
    assert kept == [] and rejected[0].reason == "not positive"


def test_a_bad_spot_price_keeps_the_on_demand_one() -> None:
    kept, rejected = screen_offers([offer("aws", 2.0, spot=500.0)], Limits())
    assert (kept[0].price, kept[0].spot, rejected[0].kind) == (2.0, None, "spot")


def test_the_price_bound_is_configurable() -> None:
    kept, _ = screen_offers([offer("aws", 20.0)], Limits(max_price_per_gpu_hour=10))
    assert kept == []


def test_a_five_fold_move_is_held_back_and_the_old_prices_stay() -> None:
    first = build_snapshot(taken_at=T0, clouds=[one_cloud("aws", offer("aws", 2.0))])
    second = build_snapshot(
        taken_at=T1, clouds=[one_cloud("aws", offer("aws", 0.3))], previous=first
    )
    assert second.cards["l40s"] == first.cards["l40s"]
    [held] = [h for h in second.held_back if h.statistic == "lowest on-demand"]
    assert (held.card, held.old, held.new) == ("l40s", 2.0, 0.3)
    assert held.ratio == pytest.approx(2.0 / 0.3)


def test_a_move_under_five_fold_is_applied() -> None:
    first = build_snapshot(taken_at=T0, clouds=[one_cloud("aws", offer("aws", 2.0))])
    second = build_snapshot(
        taken_at=T1, clouds=[one_cloud("aws", offer("aws", 0.5))], previous=first
    )
    assert second.held_back == [] and second.cards["l40s"].lowest_on_demand.price == 0.5  # type: ignore[union-attr]


def test_the_first_snapshot_is_checked_against_the_built_in_price() -> None:
    s = build_snapshot(
        taken_at=T0, clouds=[one_cloud("aws", offer("aws", 9.0))], floor={"l40s": 1.0}
    )
    assert "l40s" not in s.cards and s.held_back[0].old == 1.0


def test_the_change_ratio_is_configurable() -> None:
    first = build_snapshot(taken_at=T0, clouds=[one_cloud("aws", offer("aws", 2.0))])
    second = build_snapshot(
        taken_at=T1,
        clouds=[one_cloud("aws", offer("aws", 3.0))],
        previous=first,
        limits=Limits(max_change_ratio=1.2),
    )
    assert second.cards["l40s"] == first.cards["l40s"]


# -- failed sources -------------------------------------------------------------------------


def test_a_failed_source_keeps_its_previous_quotes() -> None:
    first = snap(*H100_CLOUDS)
    second = build_snapshot(
        taken_at=T1,
        clouds=[failed("aws"), fetch("gcp"), fetch("lambda"), fetch("runpod")],
        previous=first,
    )
    assert second.cards["h100-sxm"].clouds["aws"] == first.cards["h100-sxm"].clouds["aws"]
    assert second.cards["a100-80gb-sxm"].clouds == first.cards["a100-80gb-sxm"].clouds


def test_a_failed_source_changes_no_price(catalog: Catalog) -> None:
    first = snap(*H100_CLOUDS)
    second = build_snapshot(
        taken_at=T1,
        clouds=[failed("aws"), fetch("gcp"), fetch("lambda"), fetch("runpod")],
        previous=first,
    )
    before, after = effective_prices(first, catalog), effective_prices(second, catalog)
    assert price_changes(before, after) == []


def test_a_failed_source_is_marked_stale_with_its_error() -> None:
    second = build_snapshot(taken_at=T1, clouds=[failed("aws")], previous=snap("aws"))
    status = second.source("aws")
    assert status is not None
    assert (status.stale, status.error, status.last_success_at) == (True, "HTTP 500", T0)


def test_failures_are_counted_across_refreshes() -> None:
    s = snap("aws")
    for day in (1, 2):
        s = build_snapshot(taken_at=T0 + timedelta(days=day), clouds=[failed("aws")], previous=s)
    status = s.source("aws")
    assert status is not None and (status.consecutive_failures, status.total_failures) == (2, 2)


def test_a_recovered_source_resets_its_consecutive_failures() -> None:
    s = build_snapshot(taken_at=T1, clouds=[failed("aws")], previous=snap("aws"))
    s = snap("aws", previous=s, at=T1 + timedelta(days=1))
    status = s.source("aws")
    assert status is not None and (status.ok, status.consecutive_failures) == (True, 0)
    assert status.total_failures == 1


def test_a_carried_quote_keeps_its_own_fetch_time() -> None:
    second = build_snapshot(taken_at=T1, clouds=[failed("aws")], previous=snap("aws"))
    assert second.cards["h100-sxm"].clouds["aws"].as_of == T0


def test_a_source_that_never_worked_contributes_nothing() -> None:
    s = build_snapshot(taken_at=T0, clouds=[failed("aws", "timed out after 5 s")])
    assert s.cards == {} and s.stale_sources[0].last_success_at is None


# -- team sheets ----------------------------------------------------------------------------

SHEET = """\
name: Acme negotiated
prices:
  h100: 2.10
  a100-80gb-sxm: {price: 1.40, note: "1-year reserved"}
  warp-drive: 9.0
  l40s: cheap
"""


def test_a_team_sheet_resolves_aliases_and_keeps_notes(catalog: Catalog) -> None:
    sheet = parse_team_sheet(SHEET, catalog.find_gpu)
    assert sheet.prices["h100-sxm"].price == 2.10
    assert sheet.prices["a100-80gb-sxm"].note == "1-year reserved"


def test_a_team_sheet_lists_unknown_cards_and_bad_entries(catalog: Catalog) -> None:
    sheet = parse_team_sheet(SHEET, catalog.find_gpu)
    assert sheet.unknown == {"warp-drive": 1}
    assert len(sheet.problems) == 2 and "l40s" not in sheet.prices


def test_a_team_sheet_may_be_json(catalog: Catalog) -> None:
    sheet = parse_team_sheet('{"prices": {"l4": {"price": 0.5}}}', catalog.find_gpu)
    assert sheet.prices["l4"].price == 0.5


@pytest.mark.parametrize("text", ["- just\n- a list\n", "prices: 3\n", "prices: [\n"])
def test_a_team_sheet_without_a_prices_mapping_is_malformed(text: str, catalog: Catalog) -> None:
    with pytest.raises(MalformedSheet):
        parse_team_sheet(text, catalog.find_gpu)


def team(catalog: Catalog, workspace: str, text: str = SHEET) -> TeamFetch:
    return TeamFetch(workspace, "sheet.yaml", parse_team_sheet(text, catalog.find_gpu))


def test_a_team_rate_overrides_public_prices_in_its_workspace(catalog: Catalog) -> None:
    s = build_snapshot(taken_at=T0, clouds=[fetch("lambda")], teams=[team(catalog, "slack:T1")])
    price = effective_prices(s, catalog, workspace="slack:T1")["h100-sxm"]
    assert (price.price, price.kind, price.source) == (2.10, "team", "team rate, Acme negotiated")


def test_a_team_rate_does_not_apply_to_other_workspaces(catalog: Catalog) -> None:
    s = build_snapshot(taken_at=T0, clouds=[fetch("lambda")], teams=[team(catalog, "slack:T1")])
    assert effective_prices(s, catalog, workspace="slack:T2")["h100-sxm"].price == 3.0


def test_a_sheet_for_every_workspace_applies_everywhere(catalog: Catalog) -> None:
    s = build_snapshot(taken_at=T0, clouds=[], teams=[team(catalog, "*")])
    assert effective_prices(s, catalog, workspace="discord:9")["h100-sxm"].price == 2.10


def test_an_absurd_team_rate_is_rejected(catalog: Catalog) -> None:
    s = build_snapshot(
        taken_at=T0, clouds=[], teams=[team(catalog, "*", "prices: {h100: 5000}")]
    )
    assert s.team_sheets["*"].prices == {} and s.rejected[0].kind == "team"


def test_a_failed_team_sheet_keeps_the_previous_one(catalog: Catalog) -> None:
    first = build_snapshot(taken_at=T0, clouds=[], teams=[team(catalog, "*")])
    second = build_snapshot(
        taken_at=T1, clouds=[], teams=[TeamFetch("*", "sheet.yaml", error="HTTP 500")],
        previous=first,
    )
    assert second.team_sheets == first.team_sheets
    assert second.source("team:*").stale  # type: ignore[union-attr]


def test_a_five_fold_team_rate_change_is_held_back(catalog: Catalog) -> None:
    first = build_snapshot(taken_at=T0, clouds=[], teams=[team(catalog, "*", "prices: {l4: 0.5}")])
    second = build_snapshot(
        taken_at=T1, clouds=[], teams=[team(catalog, "*", "prices: {l4: 5.0}")], previous=first
    )
    assert second.team_sheets["*"].prices["l4"].price == 0.5
    assert second.held_back[0].workspace == "*"


# -- choosing and applying ------------------------------------------------------------------


def test_lowest_on_demand_is_the_default_choice(catalog: Catalog) -> None:
    price = effective_prices(snap(*H100_CLOUDS), catalog)["h100-sxm"]
    assert (price.price, price.cloud, price.kind) == (3.0, "lambda", "refreshed")


@pytest.mark.parametrize(
    ("choice", "expected"),
    [(PriceChoice.MEDIAN_ON_DEMAND, 3.5), (PriceChoice.LOWEST_SPOT, pytest.approx(2.3))],
)
def test_the_choice_is_configurable(catalog: Catalog, choice: PriceChoice, expected: float) -> None:
    assert effective_prices(snap(*H100_CLOUDS), catalog, choice)["h100-sxm"].price == expected


def test_the_source_names_the_statistic_and_the_clouds(catalog: Catalog) -> None:
    price = effective_prices(snap(*H100_CLOUDS), catalog)["h100-sxm"]
    assert price.source == "lowest on-demand across aws, gcp, lambda, runpod (lambda)"


def test_cards_without_refreshed_prices_keep_the_built_in_price(catalog: Catalog) -> None:
    price = effective_prices(snap(*H100_CLOUDS), catalog)["rtx-3090"]
    assert (price.kind, price.price) == ("catalog", catalog.gpu("rtx-3090").price_per_gpu_hour)


def test_no_snapshot_means_built_in_prices(catalog: Catalog) -> None:
    assert priced_catalog(catalog, None) is catalog


def test_applying_a_snapshot_sets_price_source_and_refresh_time(catalog: Catalog) -> None:
    g = priced_catalog(catalog, snap(*H100_CLOUDS)).gpu("h100-sxm")
    assert (g.price_per_gpu_hour, g.price_refreshed_at, g.price_as_of) == (3.0, T0, T0.date())
    assert g.price_source.startswith("lowest on-demand across aws")


def test_applying_a_snapshot_leaves_the_input_catalog_alone(catalog: Catalog) -> None:
    priced_catalog(catalog, snap(*H100_CLOUDS))
    assert catalog.gpu("h100-sxm").price_refreshed_at is None


def test_estimates_use_the_applied_price(catalog: Catalog) -> None:
    from adapters.parse import parse_query

    request = parse_query("70b qlora 50M tokens h100", catalog)
    lead = estimate(request, priced_catalog(catalog, snap(*H100_CLOUDS))).options[0]
    assert lead.price_per_gpu_hour == 3.0


def test_apply_prices_with_only_built_in_prices_changes_nothing() -> None:
    small = catalog_with(gpu("x1", 24))
    again = apply_prices(small, effective_prices(None, small))
    assert again.gpu("x1") == small.gpu("x1")


def test_floor_prices_skip_cards_without_a_price(catalog: Catalog) -> None:
    floor = floor_prices(catalog)
    assert floor["h100-sxm"] == 2.97 and "b100" not in floor


# -- storage and comparison -----------------------------------------------------------------


def test_a_snapshot_round_trips_through_json(catalog: Catalog) -> None:
    s = build_snapshot(
        taken_at=T0,
        clouds=[fetch(c) for c in (*H100_CLOUDS, "nebius")] + [failed("azure")],
        teams=[team(catalog, "slack:T1")],
        floor=floor_prices(catalog),
    )
    assert PriceSnapshot.from_json(s.to_json()) == s


def test_snapshot_ids_follow_the_time() -> None:
    assert snap("aws").id == "20261201T060000.000000Z"


def test_price_changes_list_moved_cards_largest_first(catalog: Catalog) -> None:
    def cards(**prices: float) -> dict[str, CardPrices]:
        return {
            card: CardPrices(card=card, clouds={"aws": CloudQuotes(
                on_demand=Quote(price=p, cloud="aws"), as_of=T0)})
            for card, p in prices.items()
        }  # fmt: skip

    old = PriceSnapshot(id="a", taken_at=T0, cards=cards(l4=1.0, l40s=2.0, t4=0.5))
    new = PriceSnapshot(id="b", taken_at=T1, cards=cards(l4=1.1, l40s=1.0, t4=0.5))
    changes = price_changes(effective_prices(old, catalog), effective_prices(new, catalog))
    assert [(c.card, round(c.percent)) for c in changes] == [("l40s", -50), ("l4", 10)]
