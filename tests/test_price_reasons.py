"""``/ftcost prices`` says why entries of the asker's own team sheet were rejected.

The view lists, under the sheet's source line, each rejected entry's card, the value and
the refresh's full reason (range, how to write it), at most three lines then ``and N
more``; it never lists another workspace's entries. The refresh parses a fetched sheet
with the deployment's configured limits, so the sheet's problems quote the configured
cap, not the default one.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import aiohttp

from adapters.discord.announce import prices_embed
from adapters.discord.limits import MAX_FIELD_VALUE
from adapters.slack.announce import prices_blocks
from bot.price_commands import MAX_REASON_CHARS, MAX_REASONS_SHOWN, prices_view
from catalog.price_build import CloudFetch, TeamFetch, build_snapshot
from catalog.price_snapshot import Limits, PriceSnapshot
from catalog.price_sources import PriceSettings, TeamSheetSource, fetch_team
from catalog.skypilot import parse_vms_csv
from catalog.team_sheets import parse_team_sheet
from engine.specs import Catalog

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"
T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
OURS = "slack:T1"
THEIRS = "slack:T2"
BELOW_MINIMUM = (
    "↳ h100-sxm: 0.001 refused, below the $0.01/GPU-hr minimum; a rate must be between "
    "$0.01 and $100 per GPU-hour, in dollars, e.g. `h100-sxm: 2.49`"
)
FIVE_BAD = "prices: {h100: 0.001, l4: 0.002, l40s: 0.003, a10: 0.004, t4: 0.005, a100: 1.2}"


def team(catalog: Catalog, workspace: str, text: str) -> TeamFetch:
    return TeamFetch(workspace, "sheet.yaml", parse_team_sheet(text, catalog.find_gpu))


def snapshot(catalog: Catalog, *teams: tuple[str, str], clouds: tuple[str, ...] = ()
             ) -> PriceSnapshot:  # fmt: skip
    fetches = [
        CloudFetch(c, c, parse_vms_csv((FIXTURES / c / "vms.csv").read_text("utf-8"), c))
        for c in clouds
    ]
    return build_snapshot(taken_at=T0, clouds=fetches,
                          teams=[team(catalog, w, text) for w, text in teams])  # fmt: skip


def sources(s: PriceSnapshot, catalog: Catalog, workspace: str | None = OURS) -> list[str]:
    return prices_view(s, catalog, T0 + timedelta(hours=1), workspace=workspace).sources


def test_prices_lists_the_reason_under_the_askers_own_sheet(catalog: Catalog) -> None:
    s = snapshot(catalog, (OURS, "prices: {h100: 0.001, l4: 0.5}"))

    assert sources(s, catalog) == [
        "team:slack:T1: ok, 2 offers (1 prices rejected)",
        BELOW_MINIMUM,
    ]


def test_prices_never_lists_another_workspaces_rejected_entries(catalog: Catalog) -> None:
    s = snapshot(catalog, (OURS, "prices: {l4: 0.5}"), (THEIRS, "prices: {h100: 0.001}"))

    assert sources(s, catalog) == [
        "team:slack:T1: ok, 1 offers",
        "team:slack:T2: ok, 1 offers (1 prices rejected)",
    ]


def test_prices_without_a_workspace_lists_no_workspaces_reasons(catalog: Catalog) -> None:
    s = snapshot(catalog, (OURS, "prices: {h100: 0.001}"))

    assert sources(s, catalog, workspace=None) == [
        "team:slack:T1: ok, 1 offers (1 prices rejected)",
    ]


def test_prices_lists_the_reasons_of_the_sheet_for_every_workspace(catalog: Catalog) -> None:
    s = snapshot(catalog, ("*", "prices: {h100: 0.001}"))

    assert sources(s, catalog)[1] == BELOW_MINIMUM


def test_prices_lists_at_most_three_reasons_then_how_many_more(catalog: Catalog) -> None:
    lines = sources(snapshot(catalog, (OURS, FIVE_BAD)), catalog)

    assert MAX_REASONS_SHOWN == 3
    assert [line.split(":")[0] for line in lines[1:]] == [
        "↳ h100-sxm", "↳ l4", "↳ l40s", "↳ and 2 more rejected entries",
    ]  # fmt: skip


def test_prices_lists_a_card_listed_twice_as_refused_with_both_entries(
    catalog: Catalog,
) -> None:
    s = snapshot(catalog, (OURS, "prices:\n  h100: 2\n  h100-sxm: 2.5\n"))

    assert sources(s, catalog)[1] == (
        "↳ h100-sxm: refused, listed more than once (h100: 2 (line 2), h100-sxm: 2.5 "
        "(line 3)): neither rate used; keep one entry per card"
    )


def test_prices_quotes_an_unreadable_rate_as_written(catalog: Catalog) -> None:
    s = snapshot(catalog, (OURS, "prices: {h100: cheap}"))

    assert sources(s, catalog)[1].startswith("↳ h100-sxm: refused, not a number (cheap); ")


def test_each_listed_reason_is_cut_to_the_reason_limit(catalog: Catalog) -> None:
    long_alias = "prices:\n  h100: " + "1" * 70 + "\n  h100-sxm: " + "2" * 70 + "\n"

    line = sources(snapshot(catalog, (OURS, long_alias)), catalog)[1]

    assert len(line) == MAX_REASON_CHARS and line.endswith("…")


def test_the_reasons_fit_the_discord_sources_field_with_three_clouds(catalog: Catalog) -> None:
    s = snapshot(catalog, (OURS, FIVE_BAD), clouds=("aws", "lambda", "nebius"))
    view = prices_view(s, catalog, T0, workspace=OURS)

    [field] = [f for f in prices_embed(view).fields if f.name == "Sources"]

    assert field.value is not None and len(field.value) <= MAX_FIELD_VALUE
    assert field.value.endswith("↳ and 2 more rejected entries")


def test_the_slack_prices_reply_shows_the_reasons_as_bullets(catalog: Catalog) -> None:
    view = prices_view(snapshot(catalog, (OURS, "prices: {h100: 0.001}")), catalog, T0,
                       workspace=OURS)  # fmt: skip

    texts = [b["text"]["text"] for b in prices_blocks(view) if b["type"] == "section"]

    assert any("• ↳ h100-sxm: 0.001 refused, below the $0.01/GPU-hr minimum" in t for t in texts)


async def test_a_fetched_sheets_problems_quote_the_configured_cap(
    catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "sheet.yaml"
    path.write_text("prices: {h100-sxm: 50}\n", encoding="utf-8")
    settings = PriceSettings(limits=Limits(max_price_per_gpu_hour=40))

    async with aiohttp.ClientSession() as session:
        fetched = await fetch_team(session, TeamSheetSource(workspace=OURS, location=str(path)),
                                   settings, catalog.find_gpu)  # fmt: skip

    assert fetched.sheet is not None
    assert fetched.sheet.problems == (
        "h100-sxm: 50 refused, above the $40/GPU-hr bound; a rate must be between $0.01 "
        "and $40 per GPU-hour, in dollars, e.g. `h100-sxm: 2.49`",
    )
