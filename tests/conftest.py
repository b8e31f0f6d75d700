"""Shared fixtures: the packaged catalog and small request builders."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from bot.store import Store, redact_url
from bot.store_redis import RedisStore
from bot.store_sqlite import SQLiteStore
from catalog.loader import default_catalog
from engine.specs import Catalog
from tests.fakes import FakeSlack
from tests.fakes.clock import ManualClock
from tests.fakes.hub_server import FakeHub, support_model_hub
from tests.fakes.price_server import PriceServer
from tests.price_refresh import CLOUDS
from tests.redis_server import (
    RedisServer,
    delete_prefix,
    fast_forward,
    redis_server_path,
    redis_url_answers,
)

if TYPE_CHECKING:
    from tests.fakes.discord_server import FakeDiscord


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()


@pytest.fixture(autouse=True)
def _no_price_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Runtime never fetches real price sources in tests: its default fetch fails at
    once (a source failure the job logs); tests that want a refresh pass ``price_fetch``
    or point ``prices`` at ``tests/fakes/price_server.py``."""

    async def offline(*args: object) -> object:
        raise OSError("price sources are offline in tests")

    monkeypatch.setattr("bot.runtime.refresh_prices", offline)


@pytest.fixture(autouse=True)
def _no_ambient_hub_login(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own Hub login (``HF_TOKEN``, ``hf auth login``'s token file),
    endpoint and offline switch never reach a test: tests that want them set them
    (tests/test_hub_settings.py)."""
    monkeypatch.setenv("HF_TOKEN_PATH", str(Path(__file__).parent / "fakes" / "no-hf-token"))
    for name in ("HF_TOKEN", "HF_ENDPOINT", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)


# -- the Hugging Face Hub ---------------------------------------------------------------------
@pytest.fixture
async def hub() -> AsyncIterator[FakeHub]:
    """A started fake Hub (``tests/fakes/hub_server.py``) serving no repository yet: a
    module adds the ones it needs by overriding ``hub`` with a fixture that asks for this
    one."""
    async with FakeHub() as fake:
        yield fake


@pytest.fixture
async def support_hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeHub]:
    """A started fake Hub serving ``SUPPORT_REPO`` (``tests/fakes/hub_server.py``), where a
    bot started in the test reads it: ``HF_ENDPOINT`` names it, and no ``HF_TOKEN`` is set."""
    async with support_model_hub() as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.base_url)
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield fake


# -- the state store contract: one suite, every backend (tests/test_bot_store.py) ----------
STORE_T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis for the store tests: ``FTCOST_TEST_REDIS_URL`` (it must answer: a failure,
    not a skip), else a ``redis-server`` from PATH started for the session, else skip."""
    url = os.environ.get("FTCOST_TEST_REDIS_URL", "").strip()
    if url:
        problem = redis_url_answers(url)
        if problem is not None:
            pytest.fail(f"FTCOST_TEST_REDIS_URL={redact_url(url)} does not answer: {problem}")
        yield url
        return
    if redis_server_path() is None:
        pytest.skip("no Redis for the Redis store tests: set FTCOST_TEST_REDIS_URL or put "
                    "redis-server on PATH (Debian: apt-get install redis-server)")  # fmt: skip
    with RedisServer() as server:
        yield server.url


@pytest.fixture
def redis_prefix(redis_url: str) -> Iterator[str]:
    """A key prefix of this test's own (runs may share one server; no FLUSHALL), its keys
    deleted afterwards."""
    prefix = f"ftcost-test:{uuid.uuid4().hex[:16]}:"
    yield prefix
    delete_prefix(redis_url, prefix)


@pytest.fixture
def store_clock() -> ManualClock:
    """The stores' injected clock (a module may override it with its own)."""
    return ManualClock(STORE_T0)


@pytest.fixture(params=["sqlite", "redis"])
def store_backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(
    store_backend: str, store_clock: ManualClock, tmp_path: Path, request: pytest.FixtureRequest
) -> Callable[[], Store]:
    """A factory of unopened stores that share one backend's data (one SQLite file, or
    one Redis URL and key prefix), each timed by ``store_clock``: a second call is a
    second replica, or the same process after a restart."""
    if store_backend == "sqlite":
        path = tmp_path / "store.sqlite3"
        return lambda: SQLiteStore(path, clock=store_clock.time)
    if store_backend == "redis":
        url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
        return lambda: RedisStore(url, prefix=prefix, clock=store_clock.time)
    raise ValueError(f"no store backend {store_backend!r}")


@pytest.fixture
async def store(make_store: Callable[[], Store]) -> AsyncIterator[Store]:
    """An open store of each backend (``store_backend``)."""
    async with make_store() as opened:
        yield opened


@pytest.fixture
def elapse(
    store_backend: str, store_clock: ManualClock, request: pytest.FixtureRequest
) -> Callable[[float], Awaitable[None]]:
    """``await elapse(seconds)``: time passes for the store. Moves ``store_clock``; for
    Redis also ages the test's keys' TTLs by as much (``tests/redis_server.fast_forward``),
    since Redis expires keys by its own clock."""

    async def go(seconds: float) -> None:
        await store_clock.advance(seconds=seconds)
        if store_backend == "redis":
            url, prefix = (request.getfixturevalue("redis_url"),
                           request.getfixturevalue("redis_prefix"))  # fmt: skip
            await fast_forward(url, prefix, seconds)

    return go


# -- prices -----------------------------------------------------------------------------------
@pytest.fixture
async def price_server() -> AsyncIterator[PriceServer]:
    """The local SkyPilot-catalog stand-in (``tests/fakes/price_server.py``) serving every
    cloud the refresh job reads (``tests.price_refresh.CLOUDS``)."""
    async with PriceServer() as server:
        server.load(*CLOUDS)
        yield server


# -- Slack ------------------------------------------------------------------------------------
@pytest.fixture
async def slack() -> AsyncIterator[FakeSlack]:
    """A started fake Slack Web API (``tests/fakes/slack_api.py``)."""
    async with FakeSlack() as fake:
        yield fake


# -- Discord ----------------------------------------------------------------------------------
@pytest.fixture
async def socket_mode(slack: FakeSlack) -> AsyncIterator[Any]:
    """The Socket Mode stand-in (``tests.test_slack_socket.FakeSocketMode``), the URL
    ``apps.connections.open`` answers with."""
    from tests.test_slack_socket import FakeSocketMode

    fake = await FakeSocketMode().start()
    slack.on("apps.connections.open", lambda args: {"url": fake.url})
    yield fake
    await fake.stop()


@pytest.fixture
async def start_bot(slack: FakeSlack, tmp_path: Path) -> AsyncIterator[Any]:
    """``await start_bot()``: the bot in HTTP mode against ``slack``, on a SQLite store in
    ``tmp_path`` (``tests.slack_harness``); stopped after the test. A test module that
    needs other settings defines its own."""
    from tests.slack_harness import http_bot_config, starting

    async with starting(lambda: http_bot_config(slack, tmp_path)) as start:
        yield start


@pytest.fixture
async def bot(start_bot: Any) -> Any:
    """The started bot (``tests.slack_harness.Harness``)."""
    return await start_bot()


@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    """A started fake Discord gateway and REST API; discord.py's endpoints are restored
    after, and the fake must have seen no request it could not serve. (Imported here, not
    at the top: tests that check what the CLI imports must not find discord.py loaded.)"""
    from tests.fakes.discord_server import FakeDiscord, restore_discord_endpoints

    async with FakeDiscord() as server:
        try:
            yield server
        finally:
            restore_discord_endpoints()
        assert server.internal_errors == []


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    """An open SQLite store in the test's temporary directory."""
    async with SQLiteStore(tmp_path / "bot.sqlite3") as opened:
        yield opened
