"""The runtime: platform runners from the configuration, the HTTP and health servers."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest
from aiohttp import web

from bot.config_load import load_config
from bot.runtime import PLATFORMS, PlatformRunner, PlatformSpec, PlatformStartError, Runtime
from tests.fakes import FakeSlack


class DummyRunner:
    name = "dummy"

    def __init__(self, ok: bool = True, routes: list[web.RouteDef] | None = None) -> None:
        self.ok = ok
        self._routes = routes or []
        self.events: list[str] = []

    def routes(self) -> list[web.RouteDef]:
        return self._routes

    async def start(self) -> None:
        self.events.append("start")

    async def stop(self, timeout: float = 10.0) -> None:
        self.events.append("stop")

    async def health(self) -> dict[str, Any]:
        return {"ok": self.ok}


def config(tmp_path, **env: str):
    return load_config(None, {"FTCOST_STORE": str(tmp_path / "s.sqlite3"), **env})


async def get(port: int, path: str = "/healthz") -> tuple[int, dict[str, Any]]:
    async with aiohttp.ClientSession() as session, session.get(
        f"http://127.0.0.1:{port}{path}"
    ) as resp:
        return resp.status, await resp.json()


def test_slack_is_the_first_registered_platform():
    assert [p.name for p in PLATFORMS][:1] == ["slack"]
    assert isinstance(DummyRunner(), PlatformRunner)


async def test_only_configured_platforms_are_built(tmp_path):
    built: list[str] = []

    def build(name):
        def make(config, service):
            built.append(name)
            return DummyRunner()

        return make

    specs = [PlatformSpec("a", lambda c: True, build("a")),
             PlatformSpec("b", lambda c: False, build("b"))]
    async with Runtime(config(tmp_path), platforms=specs) as rt:
        assert [r.name for r in rt.runners] == ["dummy"]
    assert built == ["a"]


async def test_no_matching_platform_fails_to_start(tmp_path):
    rt = Runtime(config(tmp_path), platforms=[PlatformSpec("x", lambda c: False,
                                                           lambda c, s: DummyRunner())])
    with pytest.raises(PlatformStartError, match="no platform"):
        await rt.start()


async def test_health_only_server_on_health_port(tmp_path):
    runner = DummyRunner()
    cfg = config(tmp_path, HEALTH_PORT="0")
    cfg = cfg.model_copy(update={"slack": cfg.slack.model_copy(update={"host": "127.0.0.1"})})
    async with Runtime(cfg, runners=[runner]) as rt:
        assert rt.port is None and rt.health_port
        status, body = await get(rt.health_port)
        runner.ok = False
        bad_status, bad = await get(rt.health_port)

    assert status == 200 and body == {"status": "ok", "store": True,
                                      "platforms": {"dummy": {"ok": True}}}
    assert bad_status == 503 and bad["status"] == "unhealthy"
    assert runner.events == ["start", "stop"]


async def test_routes_and_healthz_share_the_main_server(tmp_path):
    async def hello(request):
        return web.json_response({"hi": True})

    runner = DummyRunner(routes=[web.get("/hello", hello)])
    cfg = config(tmp_path, PORT="0")
    cfg = cfg.model_copy(update={"slack": cfg.slack.model_copy(update={"host": "127.0.0.1"})})
    async with Runtime(cfg, runners=[runner]) as rt:
        assert (await get(rt.port, "/hello")) == (200, {"hi": True})
        assert (await get(rt.port))[0] == 200
        assert rt.health_port is None


async def test_a_bad_bot_token_stops_startup_with_a_clear_message(tmp_path):
    async with FakeSlack() as slack:
        cfg = config(tmp_path, SLACK_BOT_TOKEN="not-a-slack-token", SLACK_SIGNING_SECRET="s",
                     SLACK_API_BASE_URL=slack.base_url, PORT="0")
        with pytest.raises(PlatformStartError, match="invalid_auth"):
            await Runtime(cfg).start()


async def test_unreachable_slack_api_stops_startup(tmp_path):
    cfg = config(tmp_path, SLACK_BOT_TOKEN="xoxb-1", SLACK_SIGNING_SECRET="s",
                 SLACK_API_BASE_URL="http://127.0.0.1:9/api/", PORT="0")
    rt = Runtime(cfg)
    # no connection-error retries: fail fast
    with pytest.raises(PlatformStartError, match="cannot reach"):
        rt.runners.append(_slack_runner_without_retries(cfg, rt))
        await rt.start()


def _slack_runner_without_retries(cfg, rt):
    from slack_sdk.web.async_client import AsyncWebClient

    from adapters.slack.runner import SlackRunner

    client = AsyncWebClient(token="xoxb-1", base_url=cfg.slack_api_base_url, retry_handlers=[])
    return SlackRunner(cfg, rt.service, client)
