"""Fetching the price sources (SkyPilot's per-cloud ``vms.csv``, team price sheets) with
aiohttp, and turning one round of fetches into a
:class:`~catalog.price_snapshot.PriceSnapshot`.

Every source is fetched concurrently with its own timeout and size limit; a source that
fails (HTTP error, timeout, too large, not UTF-8, malformed) becomes a failed
:class:`~catalog.price_build.CloudFetch` / :class:`~catalog.price_build.TeamFetch` and
never an exception, so one bad source cannot break a refresh: its previous prices are kept
(``build_snapshot``) and the failure is logged and counted in the snapshot's statuses.

Downloads honour the standard proxy variables (``HTTPS_PROXY``, ``HTTP_PROXY``,
``NO_PROXY``: aiohttp's ``trust_env``). A file source is read in chunks up to
``max_bytes`` whatever its size claims to be, and must be a regular file (a FIFO or a
device is refused, never waited on).

On HTTP 429 from the primary location (GitHub rate-limits raw downloads) a cloud's
catalog is fetched once from ``mirror_url`` instead, as SkyPilot itself does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import BinaryIO
from urllib.parse import urlsplit, urlunsplit

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, field_validator

from catalog.price_build import CloudFetch, TeamFetch, build_snapshot
from catalog.price_snapshot import Limits, PriceChoice, PriceSnapshot
from catalog.prices import floor_prices
from catalog.proxy import PROXY_ERRORS
from catalog.skypilot import MalformedCatalog, parse_vms_csv
from catalog.team_sheets import MalformedSheet, parse_team_sheet
from engine.specs import Catalog

log = logging.getLogger("ftcost.prices")

DEFAULT_BASE_URL = "https://raw.githubusercontent.com/skypilot-org/skypilot-catalog/master/catalogs"
"""SkyPilot's public catalog (``{base}/{schema version}/{cloud}/vms.csv``)."""
DEFAULT_MIRROR_URL = "https://skypilot-catalog.s3.us-east-1.amazonaws.com/catalogs"
"""SkyPilot's own mirror of the same files, used when the primary answers 429."""
DEFAULT_SCHEMA_VERSION = "v8"
DEFAULT_CLOUDS: tuple[str, ...] = ("aws", "azure", "gcp", "lambda", "nebius", "runpod", "verda")
"""Clouds with published list prices. Marketplaces (``vast``, ``hyperbolic``) list
individual hosts' asking prices; add them to ``clouds`` to include them."""
MARKETPLACE_CLOUDS: tuple[str, ...] = ("vast", "hyperbolic")
"""Clouds whose rows are individual hosts' asking prices (off by default)."""
KNOWN_CLOUDS: tuple[str, ...] = (
    *DEFAULT_CLOUDS, *MARKETPLACE_CLOUDS,
    "cudo", "do", "fluidstack", "ibm", "oci", "paperspace", "scp",
)  # fmt: skip
"""The cloud directories of SkyPilot's public catalog (``{base}/{version}/{cloud}/vms.csv``)
that :func:`catalog.skypilot.parse_vms_csv` reads: the ones its ``ACCELERATOR_MAP`` names
and the rest of SkyPilot's hosted clouds, whose cards the cloud-free rules map. The bot's
config refuses another name in ``prices.clouds`` unless ``cloud_urls`` gives its file."""
USER_AGENT = "ftcost-price-refresh (+https://github.com/ftcost)"
READ_CHUNK = 1 << 16
"""Bytes read at a time from a price file or a download."""
PROXY_HINT = ("the proxy refused or could not be reached: check HTTPS_PROXY (or HTTP_PROXY "
              "for an http:// source), or list the source's host in NO_PROXY")  # fmt: skip


class TeamSheetSource(BaseModel):
    """Where one team's price sheet lives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    workspace: str = "*"
    """``slack:<team id>``, ``discord:<guild id>``, or ``*`` for every workspace."""
    location: str
    """An ``http(s)://`` URL or a file path (YAML or JSON)."""


class PriceSettings(BaseModel):
    """The price sources and how prices are chosen (the bot config's ``prices:`` section)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    clouds: tuple[str, ...] = DEFAULT_CLOUDS
    """SkyPilot clouds to read (directory names under the catalog version)."""
    base_url: str = DEFAULT_BASE_URL
    mirror_url: str | None = DEFAULT_MIRROR_URL
    """Fallback base URL on HTTP 429 (None: no fallback)."""
    schema_version: str = DEFAULT_SCHEMA_VERSION
    cloud_urls: dict[str, str] = Field(default_factory=dict)
    """Cloud -> full URL or file path of its ``vms.csv``, overriding ``base_url``."""
    team_sheets: tuple[TeamSheetSource, ...] = ()
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND
    """Which refreshed price estimates use (a team sheet always wins for its workspace)."""
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    """Whole-request timeout per source, seconds (AWS's file is about 3 MB)."""
    connect_timeout_s: float = Field(default=10.0, gt=0, le=600)
    max_bytes: int = Field(default=32 * 1024 * 1024, gt=0, le=1024 * 1024 * 1024)
    """A source larger than this is refused."""
    limits: Limits = Limits()

    @field_validator("base_url", "mirror_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/") if value else value

    def cloud_location(self, cloud: str) -> str:
        return self.cloud_urls.get(cloud) or (
            f"{self.base_url}/{self.schema_version}/{cloud}/vms.csv"
        )

    def mirror_location(self, cloud: str) -> str | None:
        if self.mirror_url is None or cloud in self.cloud_urls:
            return None
        return f"{self.mirror_url}/{self.schema_version}/{cloud}/vms.csv"


class FetchError(Exception):
    """A source could not be read; the message is safe to log and show."""


class RateLimited(FetchError):
    """HTTP 429."""


def redact(location: str) -> str:
    """A location safe to log and show: no user info, query or fragment (tokens)."""
    if not location.startswith(("http://", "https://")):
        return location
    parts = urlsplit(location)
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _is_url(location: str) -> bool:
    return location.startswith(("http://", "https://"))


async def _http_get(session: aiohttp.ClientSession, url: str, settings: PriceSettings) -> bytes:
    timeout = aiohttp.ClientTimeout(
        total=settings.timeout_s, sock_connect=settings.connect_timeout_s
    )
    try:
        async with session.get(url, timeout=timeout) as resp:
            if resp.status == 429:
                raise RateLimited("HTTP 429 (rate limited)")
            if resp.status != 200:
                raise FetchError(f"HTTP {resp.status}")
            if resp.content_length is not None and resp.content_length > settings.max_bytes:
                raise FetchError(f"larger than {settings.max_bytes:,} bytes")
            body = bytearray()
            async for chunk in resp.content.iter_chunked(READ_CHUNK):
                body += chunk
                if len(body) > settings.max_bytes:
                    raise FetchError(f"larger than {settings.max_bytes:,} bytes")
            return bytes(body)
    except TimeoutError as exc:
        raise FetchError(f"timed out after {settings.timeout_s:g} s") from exc
    except PROXY_ERRORS as exc:
        raise FetchError(f"{PROXY_HINT} ({type(exc).__name__})") from exc
    except aiohttp.ClientConnectorError as exc:
        raise FetchError(f"cannot connect ({exc.os_error.strerror or exc.os_error})") from exc
    except aiohttp.ClientError as exc:
        raise FetchError(f"{type(exc).__name__}") from exc


def _read_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of the regular file ``path``, read in chunks and refused past
    ``max_bytes`` (its size as ``stat`` says it is not trusted: 0 for a ``/proc`` file).
    Anything but a regular file (a FIFO, a device such as ``/dev/zero``, a directory) is
    refused: opened without blocking, so a FIFO with no writer cannot hang the refresh."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise FetchError(f"cannot read file ({exc.strerror})") from exc
    try:
        kind = _not_regular(os.fstat(fd).st_mode)
        if kind is not None:
            raise FetchError(f"{kind}, not a regular file: point the price source at a "
                             ".csv, .yaml or .json file")  # fmt: skip
        with os.fdopen(fd, "rb", buffering=0, closefd=False) as file:
            return _read_capped(file, max_bytes)
    except OSError as exc:
        raise FetchError(f"cannot read file ({exc.strerror})") from exc
    finally:
        os.close(fd)


def _not_regular(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file (``a directory``), else
    None."""
    if stat.S_ISREG(mode):
        return None
    kinds = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a pipe (FIFO)"),
             (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
             (stat.S_ISSOCK, "a socket"))  # fmt: skip
    return next((word for test, word in kinds if test(mode)), "a special file")


def _read_capped(file: BinaryIO, max_bytes: int) -> bytes:
    """Everything ``file`` holds, in :data:`READ_CHUNK` pieces; :class:`FetchError`, as for
    a download, once it holds more than ``max_bytes``."""
    body = bytearray()
    while chunk := file.read(min(READ_CHUNK, max_bytes + 1 - len(body))):
        body += chunk
        if len(body) > max_bytes:
            raise FetchError(f"larger than {max_bytes:,} bytes")
    return bytes(body)


async def read_location(
    session: aiohttp.ClientSession, location: str, settings: PriceSettings
) -> str:
    """The text at a URL or file path (``file://`` allowed). Raises :class:`FetchError`."""
    if _is_url(location):
        body = await _http_get(session, location, settings)
    else:
        path = Path(location.removeprefix("file://"))
        body = await asyncio.to_thread(_read_file, path, settings.max_bytes)
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FetchError("not UTF-8 text") from exc


async def fetch_cloud(
    session: aiohttp.ClientSession, cloud: str, settings: PriceSettings
) -> CloudFetch:
    """Fetch and parse one cloud's ``vms.csv``; a failure is returned, not raised."""
    location = settings.cloud_location(cloud)
    try:
        try:
            text = await read_location(session, location, settings)
        except RateLimited:
            mirror = settings.mirror_location(cloud)
            if mirror is None:
                raise
            log.info("price source rate-limited, using the mirror source=%s", cloud)
            location = mirror
            text = await read_location(session, mirror, settings)
        parsed = await asyncio.to_thread(parse_vms_csv, text, cloud)
    except (FetchError, MalformedCatalog) as exc:
        return CloudFetch(cloud, redact(location), error=str(exc))
    except Exception as exc:  # a parser bug: still this source's failure, not the refresh's
        log.exception("price source unreadable source=%s", cloud)
        return CloudFetch(cloud, redact(location), error=_unexpected(exc))
    return CloudFetch(cloud, redact(location), parsed)


async def fetch_team(
    session: aiohttp.ClientSession,
    source: TeamSheetSource,
    settings: PriceSettings,
    resolve: Callable[[str], str | None],
) -> TeamFetch:
    """Fetch and parse one team sheet; a failure is returned, not raised."""
    where = redact(source.location)
    try:
        text = await read_location(session, source.location, settings)
        # YAML parsing is CPU work: off the event loop, like the CSV parse.
        sheet = await asyncio.to_thread(parse_team_sheet, text, resolve, settings.limits)
    except (FetchError, MalformedSheet) as exc:
        return TeamFetch(source.workspace, where, error=str(exc))
    except Exception as exc:  # a parser bug: still this sheet's failure, not the refresh's
        log.exception("team sheet unreadable workspace=%s", source.workspace)
        return TeamFetch(source.workspace, where, error=_unexpected(exc))
    return TeamFetch(source.workspace, where, sheet)


def _unexpected(exc: Exception) -> str:
    return f"could not be read ({type(exc).__name__}); the log has the details"


async def fetch_all(
    settings: PriceSettings,
    resolve: Callable[[str], str | None],
    session: aiohttp.ClientSession | None = None,
) -> tuple[list[CloudFetch], list[TeamFetch]]:
    """Fetch every configured source concurrently."""
    own = session is None
    if session is None:
        session = aiohttp.ClientSession(headers={"User-Agent": USER_AGENT}, trust_env=True)
    try:
        clouds = await asyncio.gather(*(fetch_cloud(session, c, settings) for c in settings.clouds))
        teams = await asyncio.gather(
            *(fetch_team(session, t, settings, resolve) for t in settings.team_sheets)
        )
    finally:
        if own:
            await session.close()
    return list(clouds), list(teams)


async def refresh_prices(
    settings: PriceSettings,
    catalog: Catalog,
    previous: PriceSnapshot | None,
    now: datetime,
    session: aiohttp.ClientSession | None = None,
) -> PriceSnapshot:
    """One refresh: fetch everything, validate, and build the new snapshot (taken at
    ``now``, an aware UTC time). Never raises for a bad source."""
    clouds, teams = await fetch_all(settings, catalog.find_gpu, session)
    snapshot = build_snapshot(
        taken_at=now,
        clouds=clouds,
        teams=teams,
        previous=previous,
        floor=floor_prices(catalog),
        limits=settings.limits,
    )
    log_snapshot(snapshot)
    return snapshot


def log_snapshot(snapshot: PriceSnapshot) -> None:
    """One line per source, one per held-back card, one for rejections."""
    for s in snapshot.sources:
        if s.ok:
            log.info(
                "price source ok source=%s offers=%d unknown_rows=%d ignored_rows=%d "
                "bad_rows=%d rejected=%d",
                s.name, s.offers, sum(s.unknown.values()), s.ignored, s.bad_rows, s.rejected,
            )  # fmt: skip
            if s.unknown:
                names = ", ".join(f"{k} ({v})" for k, v in sorted(s.unknown.items()))
                log.warning("price source has unmapped names source=%s names=%r", s.name, names)
        else:
            log.warning(
                "price source failed source=%s location=%s error=%r consecutive_failures=%d "
                "total_failures=%d keeping_prices_from=%s",
                s.name, s.location, s.error, s.consecutive_failures, s.total_failures,
                s.last_success_at.isoformat() if s.last_success_at else "never",
            )  # fmt: skip
    for h in snapshot.held_back:
        log.warning(
            "price held back card=%s statistic=%r old=%.4f new=%.4f ratio=%.1f workspace=%s",
            h.card, h.statistic, h.old, h.new, h.ratio, h.workspace or "-",
        )  # fmt: skip
    for r in snapshot.rejected:
        where = (r.where,) if r.where else ()
        log.warning(
            "price rejected source=%s card=%s kind=%s price=%s reason=%r"
            + (" where=%r" if where else ""),
            r.source, r.card, r.kind, "-" if r.price is None else f"{r.price:.4f}", r.reason,
            *where,
        )  # fmt: skip
