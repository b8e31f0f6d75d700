"""Fetching price sources from a local aiohttp server on 127.0.0.1: SkyPilot-format CSVs
of several clouds, a team YAML sheet, a 500, a timeout, a malformed CSV, an absurd
price, a 429 with a mirror, and a source too large."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from catalog.price_snapshot import Limits, PriceSnapshot
from catalog.price_sources import (
    PriceSettings,
    TeamSheetSource,
    redact,
    refresh_prices,
)
from catalog.prices import effective_prices, price_changes
from engine.specs import Catalog

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"
T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
T1 = T0 + timedelta(days=1)
TEAM_YAML = """\
name: Acme
prices:
  h100-sxm: {price: 2.10, note: reserved}
  l40s: 0.95
"""


@dataclass
class Site:
    base: str
    hits: Counter[str] = field(default_factory=Counter)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    def settings(self, *clouds: str, **overrides: object) -> PriceSettings:
        fields: dict[str, object] = {
            "clouds": clouds,
            "base_url": f"{self.base}/catalogs",
            "mirror_url": f"{self.base}/mirror",
            "timeout_s": 5.0,
        }
        fields.update(overrides)
        return PriceSettings.model_validate(fields)


@pytest.fixture
async def site() -> AsyncIterator[Site]:
    state = Site(base="")

    async def catalog_file(request: web.Request) -> web.Response:
        state.hits[request.path] += 1
        path = FIXTURES / request.match_info["cloud"] / "vms.csv"
        if not path.is_file():
            raise web.HTTPNotFound()
        return web.Response(body=path.read_bytes(), content_type="text/csv")

    async def fixed(request: web.Request) -> web.Response:
        state.hits[request.path] += 1
        name = request.match_info["name"]
        if name == "500":
            return web.Response(status=500, text="internal error")
        if name == "429":
            return web.Response(status=429, text="slow down")
        if name == "hang":
            await state.release.wait()
            return web.Response(text="too late")
        if name == "malformed.csv":
            return web.Response(text="<!DOCTYPE html><html>not a catalog</html>")
        if name == "team.yaml":
            return web.Response(text=TEAM_YAML, content_type="application/yaml")
        raise web.HTTPNotFound()

    app = web.Application()
    app.router.add_get("/catalogs/v8/{cloud}/vms.csv", catalog_file)
    app.router.add_get("/mirror/v8/{cloud}/vms.csv", catalog_file)
    app.router.add_get("/x/{name}", fixed)
    server = TestServer(app, host="127.0.0.1")
    await server.start_server()
    state.base = str(server.make_url("")).rstrip("/")
    yield state
    state.release.set()
    await server.close()


async def refresh(
    site_settings: PriceSettings, catalog: Catalog, previous: PriceSnapshot | None = None,
    now: datetime = T0,
) -> PriceSnapshot:
    return await refresh_prices(site_settings, catalog, previous, now)


async def test_several_clouds_are_fetched_and_aggregated(site: Site, catalog: Catalog) -> None:
    s = await refresh(site.settings("aws", "gcp", "lambda", "runpod"), catalog)
    low = s.cards["h100-sxm"].lowest_on_demand
    assert low is not None and (low.price, low.cloud) == (3.0, "lambda")
    assert [x.name for x in s.sources if x.ok] == ["aws", "gcp", "lambda", "runpod"]


async def test_unknown_accelerator_names_are_counted_and_logged(
    site: Site, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ftcost.prices"):
        s = await refresh(site.settings("lambda"), catalog)
    assert s.source("lambda").unknown == {"H100 @ gpu_1x_h100_nvl": 1, "X900": 1}  # type: ignore[union-attr]
    assert "X900 (1)" in caplog.text


async def test_a_500_marks_the_source_failed_and_keeps_the_others(
    site: Site, catalog: Catalog
) -> None:
    settings = site.settings("aws", "lambda", cloud_urls={"aws": f"{site.base}/x/500"})
    s = await refresh(settings, catalog)
    aws, lam = s.source("aws"), s.source("lambda")
    assert aws is not None and (aws.ok, aws.error) == (False, "HTTP 500")
    assert lam is not None and lam.ok


async def test_a_timeout_marks_the_source_failed(site: Site, catalog: Catalog) -> None:
    settings = site.settings(
        "aws", cloud_urls={"aws": f"{site.base}/x/hang"}, timeout_s=0.05
    )
    s = await refresh(settings, catalog)
    assert s.source("aws").error == "timed out after 0.05 s"  # type: ignore[union-attr]


async def test_a_malformed_csv_marks_the_source_failed(site: Site, catalog: Catalog) -> None:
    settings = site.settings("aws", cloud_urls={"aws": f"{site.base}/x/malformed.csv"})
    s = await refresh(settings, catalog)
    assert "missing column" in (s.source("aws").error or "")  # type: ignore[union-attr]


async def test_a_missing_file_is_a_failure(site: Site, catalog: Catalog) -> None:
    s = await refresh(site.settings("nowhere"), catalog)
    assert s.source("nowhere").error == "HTTP 404"  # type: ignore[union-attr]


async def test_an_unreachable_host_is_a_failure(catalog: Catalog) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    settings = PriceSettings(clouds=("aws",), base_url=f"http://127.0.0.1:{port}", timeout_s=5)
    s = await refresh_prices(settings, catalog, None, T0)
    assert (s.source("aws").error or "").startswith("cannot connect")  # type: ignore[union-attr]


async def test_an_absurd_price_is_rejected(site: Site, catalog: Catalog) -> None:
    s = await refresh(site.settings("nebius"), catalog)
    assert "h100-sxm" not in s.cards and s.rejected[0].price == 100000.0


async def test_a_429_falls_back_to_the_mirror(site: Site, catalog: Catalog) -> None:
    async def limited(request: web.Request) -> web.Response:
        return web.Response(status=429)

    app = web.Application()
    app.router.add_get("/catalogs/v8/{cloud}/vms.csv", limited)
    primary = TestServer(app, host="127.0.0.1")
    await primary.start_server()
    try:
        base = str(primary.make_url("")).rstrip("/")
        settings = site.settings("aws", base_url=f"{base}/catalogs")
        s = await refresh(settings, catalog)
    finally:
        await primary.close()
    aws = s.source("aws")
    assert aws is not None and aws.ok and aws.location.endswith("/mirror/v8/aws/vms.csv")
    assert site.hits["/mirror/v8/aws/vms.csv"] == 1


async def test_a_429_without_a_mirror_is_a_failure(site: Site, catalog: Catalog) -> None:
    settings = site.settings("aws", cloud_urls={"aws": f"{site.base}/x/429"})
    s = await refresh(settings, catalog)
    assert s.source("aws").error == "HTTP 429 (rate limited)"  # type: ignore[union-attr]


async def test_a_source_over_the_size_limit_is_refused(site: Site, catalog: Catalog) -> None:
    s = await refresh(site.settings("aws", max_bytes=100), catalog)
    assert "larger than 100 bytes" in (s.source("aws").error or "")  # type: ignore[union-attr]


async def test_a_cloud_catalog_may_be_a_file(site: Site, catalog: Catalog) -> None:
    settings = site.settings("verda", cloud_urls={"verda": str(FIXTURES / "verda" / "vms.csv")})
    s = await refresh(settings, catalog)
    assert s.cards["a100-80gb-sxm"].lowest_on_demand.price == 1.2  # type: ignore[union-attr]


async def test_a_team_sheet_is_read_from_a_url(site: Site, catalog: Catalog) -> None:
    sheet = TeamSheetSource(workspace="slack:T1", location=f"{site.base}/x/team.yaml")
    s = await refresh(site.settings("lambda", team_sheets=(sheet,)), catalog)
    price = effective_prices(s, catalog, workspace="slack:T1")["h100-sxm"]
    assert (price.price, price.source) == (2.10, "team rate, Acme (reserved)")


async def test_a_team_sheet_is_read_from_a_file(
    site: Site, catalog: Catalog, tmp_path: Path
) -> None:
    path = tmp_path / "rates.json"
    path.write_text('{"prices": {"l4": 0.42}}', encoding="utf-8")
    sheet = TeamSheetSource(location=str(path))
    s = await refresh(site.settings(team_sheets=(sheet,)), catalog)
    assert effective_prices(s, catalog)["l4"].price == 0.42


async def test_a_failing_team_sheet_is_reported_stale(site: Site, catalog: Catalog) -> None:
    sheet = TeamSheetSource(workspace="slack:T1", location=f"{site.base}/x/500")
    s = await refresh(site.settings(team_sheets=(sheet,)), catalog)
    assert s.source("team:slack:T1").stale  # type: ignore[union-attr]


async def test_a_missing_team_file_is_reported(
    site: Site, catalog: Catalog, tmp_path: Path
) -> None:
    sheet = TeamSheetSource(location=str(tmp_path / "absent.yaml"))
    s = await refresh(site.settings(team_sheets=(sheet,)), catalog)
    assert (s.source("team:*").error or "").startswith("cannot read file")  # type: ignore[union-attr]


async def test_a_bad_source_keeps_the_last_good_prices(site: Site, catalog: Catalog) -> None:
    good = await refresh(site.settings("aws", "gcp", "lambda", "runpod"), catalog)
    broken = site.settings(
        "aws", "gcp", "lambda", "runpod",
        cloud_urls={"aws": f"{site.base}/x/500", "lambda": f"{site.base}/x/malformed.csv"},
    )  # fmt: skip
    after = await refresh(broken, catalog, previous=good, now=T1)
    assert price_changes(effective_prices(good, catalog), effective_prices(after, catalog)) == []
    assert {x.name for x in after.stale_sources} == {"aws", "lambda"}


async def test_locations_are_shown_without_credentials(site: Site, catalog: Catalog) -> None:
    sheet = TeamSheetSource(location=f"{site.base}/x/team.yaml?token=SECRET")
    s = await refresh(site.settings(team_sheets=(sheet,)), catalog)
    assert "SECRET" not in s.to_json()


def test_redact_drops_user_info_query_and_fragment() -> None:
    assert redact("https://u:p@h.example:8443/a/b.yaml?t=1#x") == "https://h.example:8443/a/b.yaml"


def test_the_default_location_is_the_versioned_public_catalog() -> None:
    assert PriceSettings().cloud_location("aws") == (
        "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs/v8/aws/vms.csv"
    )


def test_limits_are_part_of_the_settings() -> None:
    settings = PriceSettings.model_validate({"limits": {"max_price_per_gpu_hour": 40}})
    assert settings.limits == Limits(max_price_per_gpu_hour=40)
