"""``subscribe`` options and the ``prices`` view."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from bot.price_commands import (
    MIN_MIN_CHANGE_PCT,
    CommandError,
    SubscribeOptions,
    describe_subscription,
    parse_price_cards,
    parse_subscribe,
    prices_view,
)
from bot.price_store import Subscription
from catalog.price_build import CloudFetch, build_snapshot
from catalog.price_snapshot import PriceSnapshot
from catalog.skypilot import parse_vms_csv
from engine.specs import Catalog

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"
T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


def fetch(cloud: str) -> CloudFetch:
    text = (FIXTURES / cloud / "vms.csv").read_text(encoding="utf-8")
    return CloudFetch(cloud, cloud, parse_vms_csv(text, cloud))


def snapshots() -> tuple[PriceSnapshot, PriceSnapshot]:
    first = build_snapshot(taken_at=T0, clouds=[fetch(c) for c in ("aws", "lambda", "nebius")])
    second = build_snapshot(
        taken_at=T0 + timedelta(days=1),
        clouds=[CloudFetch("aws", "aws", error="HTTP 500"), fetch("lambda"), fetch("nebius")],
        previous=first,
    )
    return first, second


def test_subscribe_defaults_to_five_percent_and_every_card(catalog: Catalog) -> None:
    opts = parse_subscribe("", catalog)
    assert (opts.min_change_pct, opts.cards) == (5.0, ())


@pytest.mark.parametrize("text", ["10%", "10", "10 %"])
def test_subscribe_reads_a_minimum_change(catalog: Catalog, text: str) -> None:
    assert parse_subscribe(text, catalog).min_change_pct == 10.0


def test_subscribe_reads_cards_by_alias_in_any_order(catalog: Catalog) -> None:
    opts = parse_subscribe("h100, l40s 2.5% a100s", catalog)
    assert opts == type(opts)(2.5, ("h100-sxm", "l40s", "a100-80gb-sxm"))


def test_a_bare_number_that_names_a_card_is_the_card(catalog: Catalog) -> None:
    assert parse_subscribe("4090", catalog) == SubscribeOptions(5.0, ("rtx-4090",))


def test_a_bare_number_after_a_card_can_be_its_memory(catalog: Catalog) -> None:
    assert parse_subscribe("a100 80 10%", catalog) == SubscribeOptions(10.0, ("a100-80gb-sxm",))
    assert parse_subscribe("h200 141", catalog) == SubscribeOptions(5.0, ("h200-sxm",))


def test_each_memory_number_belongs_to_the_card_just_before_it(catalog: Catalog) -> None:
    assert parse_subscribe("a100 80, h100 80", catalog).cards == ("a100-80gb-sxm", "h100-sxm")
    assert parse_subscribe("a100 80 a100 40", catalog).cards == (
        "a100-80gb-sxm", "a100-40gb-sxm")


def test_a_bare_number_that_is_no_card_is_the_minimum_change(catalog: Catalog) -> None:
    assert parse_subscribe("h100 10", catalog) == SubscribeOptions(10.0, ("h100-sxm",))


def test_subscribe_all_means_every_card(catalog: Catalog) -> None:
    assert parse_subscribe("all 3%", catalog).cards == ()


def test_an_unknown_card_is_named_with_suggestions(catalog: Catalog) -> None:
    with pytest.raises(CommandError, match=r'"h1000" is not a card I know\. Did you mean'):
        parse_subscribe("h1000", catalog)


def test_two_thresholds_are_an_error(catalog: Catalog) -> None:
    with pytest.raises(CommandError, match="one minimum change"):
        parse_subscribe("5% 10%", catalog)


def test_an_unreachable_threshold_is_an_error(catalog: Catalog) -> None:
    with pytest.raises(CommandError, match="never be reached"):
        parse_subscribe("5000%", catalog)


@pytest.mark.parametrize("text", ["0%", "0", "h100 0", "0.5%"])
def test_a_minimum_change_under_one_percent_is_refused_with_the_range(
    catalog: Catalog, text: str
) -> None:
    with pytest.raises(CommandError, match=r"every refresh.*of 1% up to 1000%"):
        parse_subscribe(text, catalog)


def test_the_smallest_minimum_change_is_accepted(catalog: Catalog) -> None:
    assert parse_subscribe(f"{MIN_MIN_CHANGE_PCT:g}%", catalog).min_change_pct == 1.0


def test_a_number_in_exponent_form_is_read_as_a_number(catalog: Catalog) -> None:
    assert parse_subscribe("1e1% h100", catalog) == SubscribeOptions(10.0, ("h100-sxm",))


def test_an_unknown_card_names_the_configured_slash_command(catalog: Catalog) -> None:
    with pytest.raises(CommandError, match="`/cost gpus` lists them"):
        parse_subscribe("zzzzzzzz", catalog, "/cost")


@pytest.mark.parametrize("text", ["", "list", "all", "please", "table?"])
def test_prices_without_a_card_shows_every_card(catalog: Catalog, text: str) -> None:
    assert parse_price_cards(text, catalog) == ()


def test_prices_reads_cards_as_subscribe_does(catalog: Catalog) -> None:
    assert parse_price_cards("h100, a100 40 4090 l40s?", catalog) == (
        "h100-sxm", "a100-40gb-sxm", "rtx-4090", "l40s")  # fmt: skip


@pytest.mark.parametrize("text", ["3", "$2/hr", "h100 2.49", "three"])
def test_prices_with_a_price_says_how_to_price_an_estimate(catalog: Catalog, text: str) -> None:
    with pytest.raises(CommandError, match=r"is not a card: `/cost prices` shows every card.*"
                       r"reply `price "):  # fmt: skip
        parse_price_cards(text, catalog, "/cost")


def test_prices_with_an_unknown_card_names_it_with_an_example(catalog: Catalog) -> None:
    with pytest.raises(CommandError, match=r'"h1000" is not a card I know.*`/cost prices h100'):
        parse_price_cards("h1000", catalog, "/cost")


def test_the_view_of_named_cards_shows_only_their_rows(catalog: Catalog) -> None:
    view = prices_view(snapshots()[1], catalog, T0, cards=("l40s", "h100-sxm"))
    assert [row[0] for row in view.table.rows] == ["l40s", "h100-sxm"]


def test_a_subscription_is_described_in_words(catalog: Catalog) -> None:
    sub = Subscription("slack", "C1", "slack:T1", 10.0, ("h100-sxm",))
    assert describe_subscription(sub, catalog) == "price changes of 10% or more in h100-sxm"


def test_the_view_shows_the_price_in_use_and_the_statistics(catalog: Catalog) -> None:
    _, second = snapshots()
    view = prices_view(second, catalog, T0 + timedelta(days=1, hours=3))
    row = next(r for r in view.table.rows if r[0] == "h100-sxm")
    assert row == ["h100-sxm", "$3.00", "$3.00 lambda", "$3.00 lambda", "$2.30 aws", "3 h"]


def test_the_view_marks_cards_on_the_built_in_price(catalog: Catalog) -> None:
    view = prices_view(snapshots()[1], catalog, T0)
    row = next(r for r in view.table.rows if r[0] == "a10g")
    assert row[1:] == ["$1.01", "-", "-", "-", "built-in"]


def test_the_view_says_which_sources_are_stale_and_since_when(catalog: Catalog) -> None:
    view = prices_view(snapshots()[1], catalog, T0 + timedelta(days=1, hours=1))
    assert view.sources[0] == (
        "aws: STALE, HTTP 500 (failed once); prices from 25 h ago kept"
    )
    assert view.sources[2] == "nebius: ok, 2 offers (1 prices rejected)"


def test_the_view_without_a_snapshot_uses_built_in_prices(catalog: Catalog) -> None:
    view = prices_view(None, catalog, T0)
    assert view.summary.startswith("Built-in") and view.sources == []
