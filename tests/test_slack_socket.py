"""Socket Mode: bolt's aiohttp AsyncSocketModeHandler over the same app and listeners,
driven end to end through a local Socket Mode endpoint (websocket) beside the fake
Web API: ``apps.connections.open`` hands out its ``ws://127.0.0.1`` URL."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import aiohttp
from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler

from adapters.slack.runner import SlackRunner
from bot.config import SlackMode
from bot.config_load import load_config
from bot.runtime import Runtime
from bot.store import ThreadKey
from tests.fakes import (
    FakeSlack,
    app_mention_event,
    event_body,
    message_event,
    slash_command_body,
    validate_blocks,
)
from tests.fakes.slack_signing import BOT_USER_ID

APP_TOKEN = "xapp-1-A1-socket-test-token"
BOT_TOKEN = "xoxb-socket-test-token"


class FakeSocketMode:
    """A Socket Mode endpoint: sends ``hello``, pushes envelopes, records the acks."""

    def __init__(self) -> None:
        self.acks: dict[str, dict[str, Any]] = {}
        self.connected = asyncio.Event()
        self._ws: web.WebSocketResponse | None = None
        self._ack_event = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    async def start(self) -> FakeSocketMode:
        app = web.Application()
        app.add_routes([web.get("/link", self._handle)])
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"ws://127.0.0.1:{self._runner.addresses[0][1]}/link"
        return self

    async def stop(self) -> None:
        if self._ws is not None:
            await self._ws.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def _handle(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True)
        await ws.prepare(request)
        self._ws = ws
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1}))
        self.connected.set()
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                data = json.loads(msg.data)
                if "envelope_id" in data:
                    self.acks[data["envelope_id"]] = data
                    self._ack_event.set()
        return ws

    async def push(self, envelope_id: str, kind: str, payload: dict[str, Any],
                   **extra: Any) -> dict[str, Any]:
        """Send one envelope and wait for its acknowledgement."""
        await asyncio.wait_for(self.connected.wait(), 5)
        assert self._ws is not None
        await self._ws.send_str(json.dumps({"envelope_id": envelope_id, "type": kind,
                                            "payload": payload,
                                            "accepts_response_payload": kind != "events_api",
                                            **extra}))
        while envelope_id not in self.acks:
            self._ack_event.clear()
            await asyncio.wait_for(self._ack_event.wait(), 5)
        return self.acks[envelope_id]


def socket_config(slack: FakeSlack, tmp_path: Path):
    return load_config(None, {
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_APP_TOKEN": APP_TOKEN,
        "SLACK_API_BASE_URL": slack.base_url,
        "FTCOST_STORE": str(tmp_path / "s.sqlite3"),
        "HEALTH_PORT": "0",
    })


async def test_socket_mode_handler_is_built_over_the_same_app_and_listeners(tmp_path):
    config = load_config(None, {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN,
                                "FTCOST_STORE": str(tmp_path / "s.sqlite3")})
    from bot.service import Service

    runner = SlackRunner(config, Service(workers=0))  # needs a running loop (aiohttp session)

    handler = runner.socket_handler
    await runner.stop()
    assert runner.mode is SlackMode.SOCKET and runner.routes() == []
    assert isinstance(handler, AsyncSocketModeHandler)
    assert handler.app is runner.bot.app and handler.app_token == APP_TOKEN
    assert handler.client.web_client is runner.bot.client
    assert handler.handle in handler.client.socket_mode_request_listeners
    names = {listener.ack_function.__name__ for listener in runner.bot.app._async_listeners}
    assert names == {"on_command", "on_mention", "on_message", "on_file_shared", "on_action"}


async def test_socket_mode_end_to_end(slack, socket_mode, tmp_path):
    socket = socket_mode
    runtime = Runtime(socket_config(slack, tmp_path))
    await runtime.start()
    try:
        bot = runtime.runner("slack").bot
        (opened,) = await slack.wait_for("apps.connections.open")
        assert opened.headers["authorization"] == f"Bearer {APP_TOKEN}"

        command = dict(parse_qsl(slash_command_body(
            "70b qlora 50M tokens h100", response_url=slack.response_url("C1"))))
        ack = await socket.push("env-1", "slash_commands", command)
        await bot.drain(10)
        (posted,) = slack.calls_to("chat.postMessage", ok=True)
        ts = posted.response["ts"]

        event = json.loads(event_body(message_event("what if 8k seq", ts="1700000700.000001",
                                                    thread_ts=ts), event_id="EvS1"))
        await socket.push("env-2", "events_api", event)
        # Slack redelivers an event it thinks was missed: still one reply.
        await socket.push("env-3", "events_api", event, retry_attempt=1,
                          retry_reason="timeout")
        mention = json.loads(event_body(app_mention_event(f"<@{BOT_USER_ID}> 8b lora",
                                                          ts="1700000700.000002"),
                                        event_id="EvS2"))
        await socket.push("env-4", "events_api", mention)
        await bot.drain(10)

        async with aiohttp.ClientSession() as session, session.get(
            f"http://127.0.0.1:{runtime.health_port}/healthz"
        ) as resp:
            health = await resp.json()
    finally:
        await runtime.stop()

    assert ack["envelope_id"] == "env-1"
    assert validate_blocks(posted.args["blocks"]) == []
    _, *replies = slack.calls_to("chat.postMessage", ok=True)
    by_thread = {c.args["thread_ts"]: c for c in replies}
    followup, mentioned = by_thread[ts], by_thread["1700000700.000002"]
    assert "seq 2,048 → 8,192" in json.dumps(followup.args["blocks"], ensure_ascii=False)
    assert "Llama 3.1 8B" in mentioned.args["blocks"][0]["text"]["text"]
    assert len(slack.calls_to("chat.postMessage")) == 3
    assert set(socket.acks) == {"env-1", "env-2", "env-3", "env-4"}
    assert health["platforms"]["slack"] == {"mode": "socket", "inflight": 0, "ok": True,
                                            "connected": True}
    async with runtime.store:
        context = await runtime.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context.request.seq_len == 8192
