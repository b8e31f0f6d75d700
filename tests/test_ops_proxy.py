"""An outbound proxy from the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``) is
used by the price sources, the Hugging Face Hub client, the Discord client and the Slack
clients (whose SDK reads the proxy but not ``NO_PROXY``: the bot applies it).

The proxy is a real HTTP forward proxy on 127.0.0.1 (:class:`ForwardProxy`): it records
each request line as the client sent it (an absolute URI for ``http://``, ``CONNECT
host:443`` for ``https://``), forwards plain-HTTP requests to their target and refuses
``CONNECT`` (it has no tunnels), so an ``https://`` source shows the proxy was asked
without any network. The upstreams are the project's fakes (price server, Hub, Discord).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Self

import aiohttp
import pytest
from aiohttp import web
from slack_sdk.web.async_client import AsyncWebClient

from adapters.discord.client import ClientSettings
from adapters.discord.runner import DiscordRunner, sync_commands
from bot.platform_api import PlatformStartError
from bot.runtime import Runtime
from bot.service import Service
from catalog.hub.errors import HubError, HubErrorKind
from catalog.hub.resolver import HubResolver, MemoryCache
from catalog.hub.settings import HubSettings
from catalog.price_sources import PriceSettings, fetch_all
from tests.fakes import FakeSlack
from tests.fakes.discord_server import FakeDiscord, restore_discord_endpoints
from tests.fakes.hub_configs import QWEN2_5_7B_INSTRUCT
from tests.fakes.hub_server import TOKEN, FakeHub
from tests.fakes.price_server import PriceServer
from tests.slack_harness import http_bot_config
from tests.test_slack_socket import FakeSocketMode, socket_config

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY",
                   "no_proxy", "ALL_PROXY", "all_proxy")  # fmt: skip
HOP_BY_HOP = frozenset(("connection", "keep-alive", "proxy-connection", "proxy-authorization",
                        "te", "trailer", "transfer-encoding", "upgrade", "host",
                        "content-length", "content-encoding"))  # fmt: skip
UNREACHABLE_HTTPS = "https://prices.example.invalid/aws/vms.csv"
"""A source only a proxy could reach (``.invalid`` never resolves)."""


class ForwardProxy:
    """An HTTP forward proxy on 127.0.0.1 recording ``METHOD target`` of every request
    in ``seen``; plain-HTTP requests are forwarded, ``CONNECT`` is answered 403."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self._runner: web.AppRunner | None = None
        self._upstream: aiohttp.ClientSession | None = None
        self.url = ""

    async def __aenter__(self) -> Self:
        app = web.Application(middlewares=[self._handle])
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{self._runner.addresses[0][1]}"
        self._upstream = aiohttp.ClientSession(auto_decompress=False)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._upstream is not None:
            await self._upstream.close()
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def _handle(self, request: web.Request, handler: object) -> web.StreamResponse:
        """Every request, whatever the router made of its target."""
        self.seen.append(f"{request.method} {request.raw_path}")
        if request.method == "CONNECT":
            return web.Response(status=403, text="this proxy opens no tunnels")
        return await self._forward(request)

    async def _forward(self, request: web.Request) -> web.Response:
        """The absolute-URI request sent on to its target, and the target's answer."""
        assert self._upstream is not None
        headers = {k: v for k, v in request.headers.items() if k.lower() not in HOP_BY_HOP}
        async with self._upstream.request(
            request.method, request.url, headers=headers, data=await request.read(),
            allow_redirects=False,
        ) as upstream:
            body = await upstream.read()
            answer = {k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP}
            return web.Response(status=upstream.status, body=body, headers=answer)

    def saw(self, prefix: str) -> list[str]:
        """The recorded request lines that start with ``prefix``."""
        return [line for line in self.seen if line.startswith(prefix)]


@pytest.fixture
def proxy_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """No proxy variable of the developer's own; tests set theirs."""
    for name in PROXY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    async with ForwardProxy() as started:
        yield started


@pytest.fixture
async def prices() -> AsyncIterator[PriceServer]:
    async with PriceServer() as server:
        server.load("aws")
        yield server


def aws_from(base_url: str) -> PriceSettings:
    return PriceSettings(clouds=("aws",), base_url=base_url, mirror_url=None)


# -- price sources ---------------------------------------------------------------------------
async def test_a_price_download_goes_through_http_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, prices: PriceServer
) -> None:
    proxy_env.setenv("HTTP_PROXY", proxy.url)

    [aws], _ = await fetch_all(aws_from(prices.base_url), lambda name: None)

    assert aws.error is None and aws.parsed is not None
    assert proxy.saw(f"GET {prices.base_url}/v8/aws/vms.csv")


async def test_a_price_host_in_no_proxy_is_fetched_directly(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, prices: PriceServer
) -> None:
    proxy_env.setenv("HTTP_PROXY", proxy.url)
    proxy_env.setenv("NO_PROXY", "127.0.0.1")

    [aws], _ = await fetch_all(aws_from(prices.base_url), lambda name: None)

    assert aws.error is None
    assert proxy.seen == []
    assert prices.hits["aws"] == 1


async def test_an_https_price_source_is_tunnelled_through_https_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)
    settings = PriceSettings(clouds=("aws",), cloud_urls={"aws": UNREACHABLE_HTTPS})

    await fetch_all(settings, lambda name: None)

    assert proxy.seen == ["CONNECT prices.example.invalid:443"]


async def test_a_proxy_that_refuses_fails_the_source_naming_https_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)
    settings = PriceSettings(clouds=("aws",), cloud_urls={"aws": UNREACHABLE_HTTPS})

    [aws], _ = await fetch_all(settings, lambda name: None)

    assert aws.error is not None
    assert "HTTPS_PROXY" in aws.error and "NO_PROXY" in aws.error


# -- the Hugging Face Hub --------------------------------------------------------------------
async def test_a_hub_model_is_read_through_http_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, hub: FakeHub
) -> None:
    hub.add_all_real()
    proxy_env.setenv("HTTP_PROXY", proxy.url)
    resolver = HubResolver(HubSettings(endpoint=hub.base_url, timeout_s=5), MemoryCache())

    spec = await resolver.resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert spec.hub is not None and spec.hub.model_type == "qwen2"
    assert proxy.saw(f"GET {hub.base_url}/{QWEN2_5_7B_INSTRUCT.repo}/resolve/main/config.json")


async def test_a_hub_proxy_that_refuses_is_named_in_the_error(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)
    resolver = HubResolver(HubSettings(endpoint="https://hub.example.invalid", timeout_s=5),
                           MemoryCache())  # fmt: skip

    with pytest.raises(HubError) as info:
        await resolver.resolve("acme/model")

    assert info.value.kind is HubErrorKind.UNAVAILABLE
    assert "through the proxy" in str(info.value) and "HTTPS_PROXY" in str(info.value)
    assert proxy.seen == ["CONNECT hub.example.invalid:443"]


async def test_a_netrc_entry_for_the_hub_does_not_clash_with_hf_token(
    proxy_env: pytest.MonkeyPatch, hub: FakeHub, tmp_path: Path
) -> None:
    hub.add_all_real()
    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login git password hf_from_netrc\n")
    netrc.chmod(0o600)
    proxy_env.setenv("NETRC", str(netrc))
    resolver = HubResolver(HubSettings(endpoint=hub.base_url, timeout_s=5), MemoryCache(),
                           token=TOKEN)  # fmt: skip

    spec = await resolver.resolve(QWEN2_5_7B_INSTRUCT.repo)

    assert spec.hub is not None
    assert {h.authorization for h in hub.requests} == {f"Bearer {TOKEN}"}


# -- Discord ---------------------------------------------------------------------------------
async def test_discord_rest_calls_go_through_http_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, discord_fake: FakeDiscord
) -> None:
    proxy_env.setenv("HTTP_PROXY", proxy.url)

    names = await sync_commands("fake-token", ClientSettings(api_base_url=discord_fake.base_url))

    assert names == ["ftcost", "ftcost-help"]
    assert proxy.saw(f"GET {discord_fake.base_url}/users/@me")
    assert proxy.saw(f"PUT {discord_fake.base_url}/applications/")


async def test_a_discord_host_in_no_proxy_is_reached_directly(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, discord_fake: FakeDiscord
) -> None:
    proxy_env.setenv("HTTP_PROXY", proxy.url)
    proxy_env.setenv("NO_PROXY", "127.0.0.1")

    await sync_commands("fake-token", ClientSettings(api_base_url=discord_fake.base_url))

    assert proxy.seen == []


async def test_a_discord_proxy_that_refuses_stops_the_start_naming_https_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)
    settings = ClientSettings(api_base_url="https://discord.example.invalid/api/v10")
    runner = DiscordRunner(None, Service(workers=0), settings=settings, token="fake-token")

    try:
        with pytest.raises(PlatformStartError, match=r"through the proxy.*HTTPS_PROXY"):
            await runner.start(ready_timeout=5)
    finally:
        restore_discord_endpoints()

    assert proxy.seen == ["CONNECT discord.example.invalid:443"]


# -- Slack -----------------------------------------------------------------------------------
def slack_client(slack: FakeSlack, tmp_path: Path) -> AsyncWebClient:
    from adapters.slack.wiring import build_client

    return build_client(http_bot_config(slack, tmp_path))


async def test_slack_web_api_calls_go_through_https_proxy(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, slack: FakeSlack, tmp_path: Path
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)  # slack_sdk reads it for every URL

    await slack_client(slack, tmp_path).auth_test()

    assert proxy.saw(f"POST {slack.base_url}auth.test")


async def test_a_slack_host_in_no_proxy_is_reached_directly(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, slack: FakeSlack, tmp_path: Path
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)
    proxy_env.setenv("NO_PROXY", "localhost,127.0.0.1")

    await slack_client(slack, tmp_path).auth_test()

    assert proxy.seen == []
    assert slack.calls_to("auth.test")


async def test_a_socket_mode_host_in_no_proxy_is_reached_directly(
    proxy_env: pytest.MonkeyPatch, proxy: ForwardProxy, slack: FakeSlack,
    socket_mode: FakeSocketMode, tmp_path: Path,
) -> None:
    proxy_env.setenv("HTTPS_PROXY", proxy.url)
    proxy_env.setenv("NO_PROXY", "127.0.0.1")
    runtime = Runtime(socket_config(slack, tmp_path))

    await runtime.start()
    try:
        handler = runtime.runner("slack").socket_handler
        connected = handler.client.current_session is not None
    finally:
        await runtime.stop()

    assert connected and handler.client.proxy is None
    assert proxy.seen == []
