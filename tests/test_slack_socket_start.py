"""Socket Mode start-up faults, through the real slack_sdk / slack-bolt code against the
local Slack stand-in: a refused ``SLACK_APP_TOKEN`` stops the start with one line (exit 1
for ``python -m bot``), a websocket that never connects fails the start after a bound, and
SIGTERM while the start hangs stops the process at once."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

import adapters.slack.runner as slack_runner
from bot.runtime import PlatformStartError, Runtime, StartInterrupted
from tests.bot_process import BotProcess
from tests.fakes import FakeSlack
from tests.test_slack_socket import APP_TOKEN, BOT_TOKEN, socket_config


class SilentEndpoint:
    """A TCP server that accepts connections and never answers: a websocket handshake
    to it hangs (a firewall that swallows packets, a proxy that never replies)."""

    def __init__(self) -> None:
        self.connected = asyncio.Event()
        self._writers: list[asyncio.StreamWriter] = []
        self._server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> SilentEndpoint:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"ws://127.0.0.1:{port}/link"
        return self

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        self.connected.set()

    async def __aexit__(self, *exc: object) -> None:
        for writer in self._writers:
            writer.close()
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


@pytest.fixture
async def silent() -> AsyncIterator[SilentEndpoint]:
    async with SilentEndpoint() as endpoint:
        yield endpoint


def closed_port_url() -> str:
    """A ``ws://`` URL on a loopback port nothing listens on (connection refused)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"ws://127.0.0.1:{port}/link"


# -- in process: Runtime.start ----------------------------------------------------------------
@pytest.mark.parametrize("error", ["invalid_auth", "token_revoked", "account_inactive"])
async def test_a_refused_app_token_stops_the_start_with_one_line(slack, tmp_path, error):
    slack.on("apps.connections.open", lambda args: {"url": "ws://127.0.0.1:1/never"})
    slack.refuse("apps.connections.open", error)
    runtime = Runtime(socket_config(slack, tmp_path))

    began = time.monotonic()
    with pytest.raises(PlatformStartError) as err:
        await asyncio.wait_for(runtime.start(), 10)

    assert time.monotonic() - began < 5
    assert str(err.value).startswith(
        f"Slack refused the Socket Mode connection ({error}): check SLACK_APP_TOKEN"
    )
    assert "connections:write" in str(err.value) and "\n" not in str(err.value)
    (opened,) = slack.calls_to("apps.connections.open")  # asked once, never retried
    assert opened.headers["authorization"] == f"Bearer {APP_TOKEN}"
    assert runtime.stopping and runtime.runner("slack").bot.inflight == 0


async def test_an_unknown_method_answer_is_a_refusal_too(slack, tmp_path):
    # No handler: the stand-in answers apps.connections.open with unknown_method.
    with pytest.raises(
        PlatformStartError,
        match=r"refused the Socket Mode connection "
        r"\(unknown_method\)",
    ):
        await asyncio.wait_for(Runtime(socket_config(slack, tmp_path)).start(), 10)


async def test_a_bot_token_given_as_the_app_token_is_refused(slack, tmp_path):
    slack.on("apps.connections.open", lambda args: {"url": "ws://127.0.0.1:1/never"})
    config = socket_config(slack, tmp_path)
    config = config.model_copy(
        update={
            "secrets": config.secrets.model_copy(
                update={"slack_app_token": config.secrets.slack_bot_token}
            )
        }
    )

    with pytest.raises(
        PlatformStartError,
        match=r"\(not_allowed_token_type\): check "
        r"SLACK_APP_TOKEN",
    ):
        await asyncio.wait_for(Runtime(config).start(), 10)


async def test_a_rate_limited_connection_open_says_to_start_again(slack, tmp_path):
    slack.refuse("apps.connections.open", "ratelimited")

    with pytest.raises(PlatformStartError, match=r"rate-limited .* start the bot again"):
        await asyncio.wait_for(Runtime(socket_config(slack, tmp_path)).start(), 10)


async def test_a_websocket_that_never_connects_fails_the_start_after_the_bound(
    slack, tmp_path, monkeypatch
):
    monkeypatch.setattr(slack_runner, "SOCKET_CONNECT_TIMEOUT_S", 0.5)
    url = closed_port_url()
    slack.on("apps.connections.open", lambda args: {"url": url})
    runtime = Runtime(socket_config(slack, tmp_path))

    with pytest.raises(PlatformStartError, match=r"websocket did not connect within 0\.5 s"):
        await asyncio.wait_for(runtime.start(), 10)

    assert len(slack.calls_to("apps.connections.open")) == 1
    handler = runtime.runner("slack").socket_handler
    assert handler is not None and handler.client.closed


# -- in process: a signal while the start hangs ------------------------------------------------
async def test_sigterm_while_the_socket_connect_hangs_cancels_the_start(slack, tmp_path, silent):
    slack.on("apps.connections.open", lambda args: {"url": silent.url})
    runtime = Runtime(socket_config(slack, tmp_path))
    running = asyncio.create_task(runtime.run_until_stopped())
    await asyncio.wait_for(silent.connected.wait(), 10)

    began = time.monotonic()
    signal.raise_signal(signal.SIGTERM)
    with pytest.raises(StartInterrupted, match="stopped by SIGTERM during start-up"):
        await asyncio.wait_for(running, 10)

    assert time.monotonic() - began < 5
    handler = runtime.runner("slack").socket_handler
    assert handler is not None and handler.client.closed
    assert runtime.runner("slack").bot.client.session is None or (
        runtime.runner("slack").bot.client.session.closed
    )


# -- the real process ---------------------------------------------------------------------------
def bot_process(slack: FakeSlack, workdir: Path, app_token: str = APP_TOKEN) -> BotProcess:
    env = {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": app_token,
        "SLACK_API_BASE_URL": slack.base_url,
        "STORE_URL": f"sqlite:///{workdir / 's.sqlite3'}",
    }
    return BotProcess("socket", workdir, env=env, settings={})


async def wait_until_connected(silent: SilentEndpoint, bot: BotProcess) -> None:
    """Until the bot's websocket handshake reaches ``silent`` (its log if it never does)."""
    try:
        await asyncio.wait_for(silent.connected.wait(), 60)  # a cold start imports a lot
    except TimeoutError:
        raise AssertionError(f"the bot never reached the websocket:\n{bot.log_text()}") from None


async def test_the_bot_exits_1_with_one_line_when_slack_refuses_the_app_token(slack, tmp_path):
    slack.refuse("apps.connections.open", "invalid_auth")
    bot = bot_process(slack, tmp_path)
    bot.start()
    try:
        code = await bot.wait_exit(60)
    finally:
        await bot.aclose()

    log = bot.log_text()
    assert code == 1, log
    assert (
        "ftcost-bot: Slack refused the Socket Mode connection (invalid_auth): check SLACK_APP_TOKEN"
    ) in log
    assert "Traceback" not in log and "Failed to connect" not in log
    assert "ftcost-bot stopped shutdown_s=" in log
    assert len(slack.calls_to("apps.connections.open")) == 1


async def test_sigterm_during_a_hanging_start_stops_the_bot_at_once(slack, tmp_path, silent):
    slack.on("apps.connections.open", lambda args: {"url": silent.url})
    bot = bot_process(slack, tmp_path)
    bot.start()
    try:
        await wait_until_connected(silent, bot)
        began = time.monotonic()
        bot.signal(signal.SIGTERM)
        code = await bot.wait_exit(10)
        took = time.monotonic() - began
    finally:
        with contextlib.suppress(Exception):
            await bot.aclose()

    log = bot.log_text()
    assert code == 1 and took < 5, log
    assert "ftcost-bot stopping during start-up signal=SIGTERM" in log
    assert "ftcost-bot: stopped by SIGTERM during start-up" in log
    assert "ftcost-bot stopped shutdown_s=" in log
    assert "Traceback" not in log
