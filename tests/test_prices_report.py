"""Every estimate says where its price comes from and how old it is."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from adapters.formats import fmt_age
from adapters.parse import parse_query
from adapters.report import build_report
from adapters.terminal import render_text
from catalog.price_build import CloudFetch, TeamFetch, build_snapshot
from catalog.prices import priced_catalog
from catalog.skypilot import parse_vms_csv
from catalog.team_sheets import parse_team_sheet
from engine import estimate
from engine.specs import Catalog

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"
T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
QUERY = "70b qlora 50M tokens h100"


def refreshed(catalog: Catalog, workspace: str | None = None) -> Catalog:
    clouds = []
    for cloud in ("aws", "gcp", "lambda", "runpod"):
        text = (FIXTURES / cloud / "vms.csv").read_text(encoding="utf-8")
        clouds.append(CloudFetch(cloud, cloud, parse_vms_csv(text, cloud)))
    sheet = parse_team_sheet("prices: {h100: {price: 2.2, note: reserved}}", catalog.find_gpu)
    snapshot = build_snapshot(
        taken_at=T0, clouds=clouds, teams=[TeamFetch("slack:T1", "sheet", sheet)]
    )
    return priced_catalog(catalog, snapshot, workspace=workspace)


def line(catalog: Catalog, query: str = QUERY, now: datetime | None = None) -> str | None:
    est = estimate(parse_query(query, catalog), catalog)
    return build_report(est, now=now).price_line


def test_a_built_in_price_says_its_as_of_date(catalog: Catalog) -> None:
    assert line(catalog) == "h100-sxm $2.97/hr, built-in catalog price as of 2026-12-02"


def test_a_refreshed_price_says_its_source_and_age(catalog: Catalog) -> None:
    assert line(refreshed(catalog), now=T0 + timedelta(hours=3, minutes=20)) == (
        "h100-sxm $3.00/hr, lowest on-demand across aws, gcp, lambda, runpod (lambda), "
        "refreshed 3 h ago"
    )


def test_a_fresh_price_says_just_now(catalog: Catalog) -> None:
    assert (line(refreshed(catalog), now=T0 + timedelta(seconds=5)) or "").endswith(
        "refreshed just now"
    )


def test_without_a_clock_the_refresh_time_is_shown(catalog: Catalog) -> None:
    assert (line(refreshed(catalog)) or "").endswith("refreshed 2026-12-01 06:00 UTC")


def test_a_team_rate_says_so(catalog: Catalog) -> None:
    assert line(refreshed(catalog, "slack:T1"), now=T0 + timedelta(days=3)) == (
        "h100-sxm $2.20/hr, team rate (reserved), refreshed 3 d ago"
    )


def test_a_price_given_in_the_query_says_so(catalog: Catalog) -> None:
    assert line(refreshed(catalog), QUERY + " $2.50/hr") == "$2.50/hr as given"


def test_the_terminal_shows_the_price_line(catalog: Catalog) -> None:
    est = estimate(parse_query(QUERY, catalog), catalog)
    assert "prices: h100-sxm $2.97/hr, built-in" in render_text(build_report(est))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(30, "just now"), (600, "10 min"), (3 * 3600 + 59, "3 h"), (47 * 3600, "47 h"),
     (3 * 86400, "3 d")],
)  # fmt: skip
def test_ages_are_worded_in_the_largest_sensible_unit(seconds: float, text: str) -> None:
    assert fmt_age(seconds) == text
