"""A careless price-sheet editor and a damaged download (issue 14, items 4, 6, 7, 10):
a bad entry never stops a refresh, never drops a team's rate, never gets announced as a
market move; aliases are refused; a half-broken CSV keeps the previous snapshot; a card
that vanishes keeps its last price with its age."""

from __future__ import annotations

import threading
from datetime import timedelta
from pathlib import Path

import aiohttp
import pytest

from bot.price_store import Subscription
from bot.prices import PriceBook, PriceJob
from catalog.price_build import CloudFetch, TeamFetch, build_snapshot
from catalog.price_snapshot import Limits
from catalog.price_sources import PriceSettings, TeamSheetSource, fetch_team
from catalog.prices import effective_prices
from catalog.skypilot import MalformedCatalog, parse_vms_csv
from catalog.team_sheets import MAX_SHEET_BYTES, MalformedSheet, parse_team_sheet
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.poster import FakePoster
from tests.fakes.price_server import PriceServer
from tests.fakes.price_store import MemoryPriceStore
from tests.price_refresh import DAY0, DAY1, prices_config

GOOD_SHEET = "name: Acme\nprices:\n  h100-sxm: 2.10\n  l4: 0.50\n"
HEADER = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"

ALIAS_BOMB = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g,*g]
prices: {h100-sxm: 2.10, junk: *h}
"""


def sheet_with_h100(rate: str) -> str:
    return f"name: Acme\nprices:\n  h100-sxm: {rate}\n  l4: 0.50\n"


def team(catalog: Catalog, text: str) -> TeamFetch:
    return TeamFetch("slack:T1", "sheet.yaml", parse_team_sheet(text, catalog.find_gpu))


def h100_for_team(snapshot, catalog: Catalog) -> float:
    return effective_prices(snapshot, catalog, workspace="slack:T1")["h100-sxm"].price


# -- item 4: a .nan in a team sheet ------------------------------------------------------


def test_a_nan_rate_is_rejected_and_the_refresh_completes(catalog: Catalog) -> None:
    s = build_snapshot(taken_at=DAY0, clouds=[], teams=[team(catalog, sheet_with_h100(".nan"))])

    assert "h100-sxm" not in s.team_sheets["slack:T1"].prices
    assert s.team_sheets["slack:T1"].prices["l4"].price == 0.50
    assert [(r.card, r.price) for r in s.rejected] == [("h100-sxm", None)]
    assert "not a finite number" in s.rejected[0].reason


def test_a_snapshot_with_a_rejected_nan_round_trips_through_json(catalog: Catalog) -> None:
    s = build_snapshot(taken_at=DAY0, clouds=[], teams=[team(catalog, sheet_with_h100(".nan"))])

    assert type(s).from_json(s.to_json()) == s


@pytest.fixture
def server(price_server: PriceServer) -> PriceServer:
    return price_server


def job_for(server: PriceServer, clock: ManualClock, catalog: Catalog, sheet: Path,
            poster: FakePoster) -> tuple[PriceJob, MemoryPriceStore]:  # fmt: skip
    cfg = prices_config(server, team_sheets=[{"workspace": "slack:T1", "location": str(sheet)}])
    store = MemoryPriceStore(clock.time)
    return PriceJob(store, PriceBook(catalog, cfg), cfg, clock, owner="a",
                    posters={"slack": poster}), store  # fmt: skip


async def test_the_price_job_stores_a_snapshot_despite_a_nan_rate(
    server: PriceServer, catalog: Catalog, tmp_path: Path
) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(sheet_with_h100(".nan"))
    job, store = job_for(server, ManualClock(DAY0), catalog, sheet, FakePoster())

    outcome = await job.run(DAY0)

    assert outcome.status == "refreshed" and await store.latest_price_snapshot() is not None
    assert all(s.ok for s in outcome.snapshot.sources)  # type: ignore[union-attr]


# -- item 6: a rejected rate keeps the previous one --------------------------------------


@pytest.mark.parametrize("rate", [".inf", "-2", "0", "100.01", "cheap", "true", "1.0e9", ".nan"])
def test_a_rejected_team_rate_keeps_the_previous_rate(rate: str, catalog: Catalog) -> None:
    first = build_snapshot(taken_at=DAY0, clouds=[], teams=[team(catalog, GOOD_SHEET)])

    second = build_snapshot(taken_at=DAY1, clouds=[], previous=first,
                            teams=[team(catalog, sheet_with_h100(rate))])

    assert h100_for_team(second, catalog) == 2.10
    assert [r.card for r in second.rejected] == ["h100-sxm"]


def test_a_card_removed_from_the_sheet_is_dropped(catalog: Catalog) -> None:
    first = build_snapshot(taken_at=DAY0, clouds=[], teams=[team(catalog, GOOD_SHEET)])

    second = build_snapshot(taken_at=DAY1, clouds=[], previous=first,
                            teams=[team(catalog, "prices: {l4: 0.5}")])

    assert "h100-sxm" not in second.team_sheets["slack:T1"].prices


async def test_a_rejected_team_rate_is_not_announced(
    server: PriceServer, catalog: Catalog, tmp_path: Path
) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(GOOD_SHEET)
    clock, poster = ManualClock(DAY0), FakePoster()
    job, store = job_for(server, clock, catalog, sheet, poster)
    await job.run(DAY0)
    await clock.advance_to(DAY1)
    await store.save_subscription(Subscription("slack", "C1", "slack:T1", 5.0))
    sheet.write_text(sheet_with_h100("1.0e9"))

    await job.run(DAY1)

    assert poster.posted == []
    assert job.book.catalog_for("slack:T1").gpu("h100-sxm").price_per_gpu_hour == 2.10


# -- item 7: YAML aliases ----------------------------------------------------------------


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(catalog: Catalog) -> None:
    with pytest.raises(MalformedSheet, match=r"aliases \(\*a, line 2\) are not allowed"):
        parse_team_sheet(ALIAS_BOMB, catalog.find_gpu)


def test_a_merge_key_alias_is_refused_too(catalog: Catalog) -> None:
    text = "base: &b {price: 2.0}\nprices:\n  h100-sxm: {<<: *b, note: x}\n"
    with pytest.raises(MalformedSheet, match="aliases"):
        parse_team_sheet(text, catalog.find_gpu)


def test_an_oversized_sheet_is_refused_unread(catalog: Catalog) -> None:
    text = "prices:\n" + "  h100-sxm: 2.10\n" * (MAX_SHEET_BYTES // 16 + 1)
    with pytest.raises(MalformedSheet, match="over the 262,144-byte limit"):
        parse_team_sheet(text, catalog.find_gpu)


def test_a_deeply_nested_sheet_is_malformed_not_a_crash(catalog: Catalog) -> None:
    with pytest.raises(MalformedSheet):
        parse_team_sheet("prices: " + "[" * 50_000 + "]" * 50_000, catalog.find_gpu)


def test_an_alias_bomb_keeps_the_previous_sheet(catalog: Catalog) -> None:
    first = build_snapshot(taken_at=DAY0, clouds=[], teams=[team(catalog, GOOD_SHEET)])
    with pytest.raises(MalformedSheet) as refused:
        parse_team_sheet(ALIAS_BOMB, catalog.find_gpu)
    failed = TeamFetch("slack:T1", "sheet.yaml", error=str(refused.value))

    second = build_snapshot(taken_at=DAY1, clouds=[], teams=[failed], previous=first)

    assert second.team_sheets == first.team_sheets
    assert "aliases" in (second.source("team:slack:T1").error or "")  # type: ignore[union-attr]


async def test_a_team_sheet_is_parsed_off_the_event_loop(
    catalog: Catalog, tmp_path: Path
) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(GOOD_SHEET)
    threads: set[str] = set()

    def resolve(name: str) -> str | None:
        threads.add(threading.current_thread().name)
        return catalog.find_gpu(name)

    async with aiohttp.ClientSession() as session:
        fetched = await fetch_team(session, TeamSheetSource(location=str(sheet)),
                                   PriceSettings(), resolve)

    assert fetched.sheet is not None and threads
    assert threading.main_thread().name not in threads


# -- item 10: a half-broken CSV, and cards that vanish -----------------------------------


def test_a_csv_with_a_tenth_of_its_gpu_rows_unreadable_fails_as_a_whole() -> None:
    good = "g6e.xlarge,L40S,1,2.0,us-east-1\n" * 18
    bad = "g6e.xlarge,L40S,one,2.0,us-east-1\n" * 2
    with pytest.raises(MalformedCatalog, match="2 of 20 GPU rows unreadable"):
        parse_vms_csv(HEADER + good + bad, "aws")


def test_ragged_rows_count_towards_the_share() -> None:
    good = "g6e.xlarge,L40S,1,2.0,us-east-1\n" * 10
    with pytest.raises(MalformedCatalog, match="unreadable"):
        parse_vms_csv(HEADER + good + "g6e.xlarge,L40S\n" * 3, "aws")


def test_one_unreadable_row_in_a_large_file_is_tolerated() -> None:
    good = "g6e.xlarge,L40S,1,2.0,us-east-1\n" * 40
    parsed = parse_vms_csv(HEADER + good + "g6e.xlarge,L40S,1,abc,us-east-1\n", "aws")
    assert parsed.bad_rows == 1 and len(parsed.offers) == 40


async def test_a_half_broken_csv_keeps_the_previous_snapshot_and_announces_nothing(
    server: PriceServer, catalog: Catalog, tmp_path: Path
) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("prices: {}\n")
    clock, poster = ManualClock(DAY0), FakePoster()
    job, store = job_for(server, clock, catalog, sheet, poster)
    await job.run(DAY0)
    await clock.advance_to(DAY1)
    await store.save_subscription(Subscription("slack", "C1", "slack:T1", 5.0))
    lines = server.files["lambda"].splitlines()
    server.files["lambda"] = "\n".join(
        [lines[0], *(ln.replace(",", ",x", 3) if i % 2 else ln for i, ln in enumerate(lines[1:]))]
    )

    outcome = await job.run(DAY1)

    assert poster.posted == []
    assert outcome.snapshot is not None and outcome.snapshot.source("lambda").stale  # type: ignore[union-attr]
    assert job.book.catalog_for().gpu("h100-sxm").price_per_gpu_hour == 3.0


def fetch(cloud: str, rows: str) -> CloudFetch:
    return CloudFetch(cloud, f"{cloud}.csv", parse_vms_csv(HEADER + rows, cloud))


L4_AND_L40S = "g6.xlarge,L4,1,0.80,us-east-1\ng6e.xlarge,L40S,1,2.00,us-east-1\n"


def test_a_card_the_source_stops_listing_keeps_its_last_price_and_its_age(
    catalog: Catalog,
) -> None:
    first = build_snapshot(taken_at=DAY0, clouds=[fetch("aws", L4_AND_L40S)])

    second = build_snapshot(taken_at=DAY1, previous=first,
                            clouds=[fetch("aws", "g6.xlarge,L4,1,0.70,us-east-1\n")])

    prices = effective_prices(second, catalog)
    assert (prices["l40s"].price, prices["l40s"].as_of) == (2.00, DAY0)
    assert (prices["l4"].price, prices["l4"].as_of) == (0.70, DAY1)
    assert second.source("aws").vanished == 1  # type: ignore[union-attr]


def test_a_vanished_card_is_not_a_price_change(catalog: Catalog) -> None:
    from catalog.prices import price_changes

    first = build_snapshot(taken_at=DAY0, clouds=[fetch("aws", L4_AND_L40S)])
    second = build_snapshot(taken_at=DAY1, previous=first,
                            clouds=[fetch("aws", "g6.xlarge,L4,1,0.80,us-east-1\n")])

    assert price_changes(effective_prices(first, catalog), effective_prices(second, catalog)) == []


def test_a_vanished_card_is_dropped_after_the_keep_limit(catalog: Catalog) -> None:
    limits = Limits(keep_vanished_days=3)
    snapshot = build_snapshot(taken_at=DAY0, clouds=[fetch("aws", L4_AND_L40S)], limits=limits)
    for day in range(1, 5):
        snapshot = build_snapshot(taken_at=DAY0 + timedelta(days=day), previous=snapshot,
                                  clouds=[fetch("aws", "g6.xlarge,L4,1,0.80,us-east-1\n")],
                                  limits=limits)

    assert "l40s" not in snapshot.cards
