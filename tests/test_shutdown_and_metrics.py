"""Operating the bot: ``/metrics`` in Prometheus' format, ``/healthz`` while stopping,
and graceful shutdown (new work refused, replies in flight finished, locks released).

The real Runtime serves the real bolt app on 127.0.0.1 against the fake Slack Web API.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.config import Config
from bot.config_load import load_config
from bot.metrics import sample
from bot.price_store import PRICE_REFRESH_LOCK
from bot.runtime import Runtime
from bot.store_sqlite import SQLiteStore
from tests.fakes import FakeSlack, request_headers, slash_command_body

SECRET = "test-signing-secret-0123456789"


@pytest.fixture
def slack() -> Iterator[Any]:
    # In its own thread, so a handler can be slow without stalling the bot's loop.
    with FakeSlack.run_in_thread() as fake:
        yield fake


def config(slack: Any, tmp_path: Path, **top: Any) -> Config:
    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"slack": {"host": "127.0.0.1"}, "prices": {"enabled": False},
                               **top}))  # fmt: skip
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1-2-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_BASE_URL": slack.base_url,
        "PORT": "0",
        "FTCOST_STORE": str(tmp_path / "state.sqlite3"),
    }
    return load_config(yml, env)


async def post(session: aiohttp.ClientSession, port: int, body: str) -> int:
    async with session.post(
        f"http://127.0.0.1:{port}/slack/events", data=body.encode(),
        headers=request_headers(body, SECRET),
    ) as resp:  # fmt: skip
        return resp.status


def served_sample(text: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` with exactly ``labels`` in a ``/metrics`` body
    (Prometheus' text format), or None when it is not there."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and s.labels == labels:
                return float(s.value)
    return None


# -- /metrics --------------------------------------------------------------------------------
async def test_metrics_endpoint_counts_commands_in_prometheus_format(slack, tmp_path):
    before = sample(
        "ftcost_commands_total", platform="slack", trigger="command", kind="estimate",
        outcome="posted",
    )  # fmt: skip
    async with Runtime(config(slack, tmp_path)) as rt, aiohttp.ClientSession() as session:
        body = slash_command_body("8b qlora 10M tokens", response_url=slack.response_url("C1"))
        assert await post(session, rt.port, body) == 200
        await rt.runner("slack").bot.drain(10)
        async with session.get(f"http://127.0.0.1:{rt.port}/metrics") as resp:
            text = await resp.text()
            content_type = resp.headers["Content-Type"]
    assert content_type.startswith("text/plain") and "version=0.0.4" in content_type
    # The registry is the process's: other tests' series (e.g. platform="discord") are
    # served too, so read this one exactly, by all its labels.
    served = served_sample(
        text, "ftcost_commands_total", platform="slack", trigger="command", kind="estimate",
        outcome="posted",
    )  # fmt: skip
    assert served == before + 1
    assert "# TYPE ftcost_command_latency_seconds histogram" in text
    for name in ("ftcost_parse_errors", "ftcost_price_refresh", "ftcost_announcements"):
        assert f"# TYPE {name}_total counter" in text or f"# TYPE {name} counter" in text


async def test_parse_errors_are_counted_by_platform(slack, tmp_path):
    before = sample("ftcost_parse_errors_total", platform="slack")
    async with Runtime(config(slack, tmp_path)) as rt, aiohttp.ClientSession() as session:
        body = slash_command_body("70b qlorra", response_url=slack.response_url("C1"))
        assert await post(session, rt.port, body) == 200
        await rt.runner("slack").bot.drain(10)
    assert sample("ftcost_parse_errors_total", platform="slack") == before + 1


async def test_metrics_are_served_on_the_health_only_port_too(slack, tmp_path):
    cfg = config(slack, tmp_path)
    cfg = cfg.model_copy(update={"health_port": 0})
    async with Runtime(cfg) as rt, aiohttp.ClientSession() as session:
        assert rt.health_port is not None
        async with session.get(f"http://127.0.0.1:{rt.health_port}/metrics") as resp:
            assert resp.status == 200
            assert "# TYPE ftcost_commands_total counter" in await resp.text()


# -- rate limit end to end ---------------------------------------------------------------------
async def test_flooding_user_gets_a_polite_private_notice_after_the_limit(slack, tmp_path):
    async with Runtime(config(slack, tmp_path, rate_limit_per_minute=2)) as rt, \
            aiohttp.ClientSession() as session:  # fmt: skip
        for _ in range(3):
            body = slash_command_body("help", response_url=slack.response_url("C1"))
            assert await post(session, rt.port, body) == 200
        await rt.runner("slack").bot.drain(10)
    responses = slack.wait_for_responses_sync(3)
    assert [r["response_type"] for r in responses] == ["ephemeral"] * 3
    # The replies are posted concurrently, so they may land in any order: one of the
    # three (the third request) is the notice, the other two are answers.
    limited = ["requests in the last minute" in json.dumps(r["blocks"]) for r in responses]
    assert sorted(limited) == [False, False, True]


# -- graceful shutdown ---------------------------------------------------------------------
async def test_healthz_says_stopping_once_shutdown_begins(slack, tmp_path):
    async with Runtime(config(slack, tmp_path)) as rt, aiohttp.ClientSession() as session:
        rt.stopping = True
        async with session.get(f"http://127.0.0.1:{rt.port}/healthz") as resp:
            assert resp.status == 503
            assert (await resp.json())["status"] == "stopping"
        rt.stopping = False


async def test_stop_finishes_a_reply_in_flight_then_refuses_new_requests(slack, tmp_path):
    released = threading.Event()
    posted: list[float] = []

    def slow_post(args: dict[str, Any]) -> dict[str, Any]:
        released.wait(5)  # the reply is in flight until the test lets it land
        posted.append(time.time())
        return {"channel": args["channel"], "ts": "1700000000.000100"}

    slack.on("chat.postMessage", slow_post)
    rt = Runtime(config(slack, tmp_path))
    await rt.start()
    port = rt.port
    assert port is not None
    async with aiohttp.ClientSession() as session:
        body = slash_command_body("8b qlora", response_url=slack.response_url("C1"))
        assert await post(session, port, body) == 200  # acknowledged; reply in flight
        assert rt.runner("slack").bot.inflight == 1
        stopping = asyncio.create_task(rt.stop())
        await asyncio.sleep(0.2)
        assert not stopping.done()  # waiting for the reply
        with pytest.raises(aiohttp.ClientConnectionError):
            await post(session, port, body)  # the listener is closed: no new work
        released.set()
        await asyncio.wait_for(stopping, 10)
    assert len(posted) == 1


async def test_a_health_only_port_answers_stopping_while_replies_drain(slack, tmp_path):
    released = threading.Event()
    slack.on("chat.postMessage", lambda args: (
        released.wait(5), {"channel": args["channel"], "ts": "1700000000.000100"})[1])
    with socket.socket() as probe:  # a free port of its own (0 would mean PORT's)
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    rt = Runtime(config(slack, tmp_path).model_copy(update={"health_port": free}))
    await rt.start()
    assert rt.port is not None and rt.health_port == free != rt.port
    async with aiohttp.ClientSession() as session:
        body = slash_command_body("8b qlora", response_url=slack.response_url("C1"))
        assert await post(session, rt.port, body) == 200  # a reply in flight
        stopping = asyncio.create_task(rt.stop())
        await asyncio.sleep(0.2)
        assert not stopping.done()
        async with session.get(f"http://127.0.0.1:{rt.health_port}/healthz") as resp:
            assert resp.status == 503 and (await resp.json())["status"] == "stopping"
        released.set()
        await asyncio.wait_for(stopping, 10)
        with pytest.raises(aiohttp.ClientConnectionError):  # closed once drained
            await session.get(f"http://127.0.0.1:{rt.health_port}/healthz")


async def test_stop_releases_the_price_refresh_lock(slack, tmp_path):
    rt = Runtime(config(slack, tmp_path))
    await rt.start()
    assert await rt.store.acquire_lock(PRICE_REFRESH_LOCK, rt.price_job.owner, 900)
    await rt.stop()
    async with SQLiteStore(tmp_path / "state.sqlite3") as store:
        assert await store.acquire_lock(PRICE_REFRESH_LOCK, "another-replica", 900)


async def test_healthz_stays_up_but_degraded_while_the_store_is_unreachable(slack, tmp_path):
    async with Runtime(config(slack, tmp_path)) as rt, aiohttp.ClientSession() as session:
        await rt.store.close()  # ping() now answers False, as for a Redis that went away
        async with session.get(f"http://127.0.0.1:{rt.port}/healthz") as resp:
            status, body = resp.status, await resp.json()
    assert status == 200
    assert body["status"] == "degraded" and body["store"] is False


async def test_web_api_calls_share_one_http_session_closed_on_stop(slack, tmp_path):
    rt = Runtime(config(slack, tmp_path))
    await rt.start()
    bot = rt.runner("slack").bot
    session = bot.client.session
    assert isinstance(session, aiohttp.ClientSession) and not session.closed
    async with aiohttp.ClientSession() as client:
        for text in ("8b qlora", "70b qlora"):
            body = slash_command_body(text, response_url=slack.response_url("C1"))
            assert await post(client, rt.port, body) == 200
    await bot.drain(10)
    assert bot.client.session is session
    await rt.stop()
    assert session.closed


async def test_a_health_port_of_its_own_keeps_metrics_off_slacks_listener(slack, tmp_path):
    with socket.socket() as probe:  # a free port of its own (0 would mean PORT's)
        probe.bind(("127.0.0.1", 0))
        free = probe.getsockname()[1]
    rt = Runtime(config(slack, tmp_path).model_copy(update={"health_port": free}))
    await rt.start()
    try:
        async with aiohttp.ClientSession() as session:
            for path in ("/metrics", "/healthz"):
                async with session.get(f"http://127.0.0.1:{rt.port}{path}") as resp:
                    assert resp.status == 404, path
                async with session.get(f"http://127.0.0.1:{rt.health_port}{path}") as resp:
                    assert resp.status == 200, path
    finally:
        await rt.stop()
