"""Redis goes away under a running bot and comes back: the real Slack app (HTTP mode) on
a real redis-server that the test stops and restarts.

While Redis is down: a slash command still gets its estimate, a follow-up in the
estimate's thread answers "context unavailable" with a fresh estimate (or says what is
missing), ``/healthz`` stays 200 ("degraded"), nothing crashes. When Redis is back the
same thread's follow-ups find their context again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from bot.config_load import load_config
from bot.runtime import Runtime
from tests.fakes import FakeSlack, event_body, message_event, request_headers, slash_command_body
from tests.fakes.slack_signing import BOT_USER_ID
from tests.redis_server import RedisServer, redis_server_path

pytestmark = pytest.mark.skipif(redis_server_path() is None, reason="redis-server not on PATH")

SECRET = "test-signing-secret-0123456789"


@pytest.fixture
def redis() -> Iterator[RedisServer]:
    with RedisServer() as server:
        yield server


@pytest.fixture
async def bot(slack: FakeSlack, redis: RedisServer, tmp_path: Path) -> AsyncIterator[Runtime]:
    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"slack": {"host": "127.0.0.1"}, "prices": {"enabled": False}}))
    env = {
        "SLACK_BOT_TOKEN": "xoxb-1-2-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_BASE_URL": slack.base_url,
        "PORT": "0",
        "STORE_URL": redis.url,
    }
    async with Runtime(load_config(yml, env)) as rt:
        yield rt


async def post(rt: Runtime, body: str) -> int:
    async with aiohttp.ClientSession() as session, session.post(
        f"http://127.0.0.1:{rt.port}/slack/events", data=body.encode(),
        headers=request_headers(body, SECRET),
    ) as resp:  # fmt: skip
        status = resp.status
    await rt.runner("slack").bot.drain(10)
    return status


async def estimate_thread(rt: Runtime, slack: FakeSlack) -> str:
    body = slash_command_body("70b qlora 50M tokens h100", response_url=slack.response_url("C1"))
    assert await post(rt, body) == 200
    return slack.calls_to("chat.postMessage", ok=True)[-1].response["ts"]


def reply_in(slack: FakeSlack, method: str, thread_ts: str) -> str:
    calls = [c for c in slack.calls_to(method) if c.args.get("thread_ts") == thread_ts]
    assert calls, f"no {method} in thread {thread_ts}"
    return json.dumps(calls[-1].args.get("blocks"), ensure_ascii=False)


def followup(thread_ts: str, text: str, event_id: str) -> str:
    event = message_event(text, channel="C1", ts=f"{thread_ts}9", thread_ts=thread_ts)
    event["parent_user_id"] = BOT_USER_ID
    return event_body(event, event_id=event_id)


async def test_slash_command_answers_while_redis_is_down(bot, slack, redis):
    redis.stop()
    body = slash_command_body("8b qlora 10M tokens", response_url=slack.response_url("C1"))
    assert await post(bot, body) == 200
    (call,) = slack.calls_to("chat.postMessage", ok=True)
    assert "Llama 3.1 8B" in json.dumps(call.args["blocks"])


async def test_followup_while_down_is_a_fresh_estimate_saying_context_unavailable(
    bot, slack, redis
):
    ts = await estimate_thread(bot, slack)
    redis.stop()
    assert await post(bot, followup(ts, "8b lora seq 8k", "Ev-down-1")) == 200
    text = reply_in(slack, "chat.postMessage", ts)
    assert "Context unavailable" in text and "Llama 3.1 8B" in text


async def test_partial_followup_while_down_explains_privately(bot, slack, redis):
    ts = await estimate_thread(bot, slack)
    redis.stop()
    assert await post(bot, followup(ts, "what if 8k seq?", "Ev-down-2")) == 200
    text = reply_in(slack, "chat.postEphemeral", ts)
    assert "Context unavailable" in text and "whole query" in text


async def test_healthz_is_degraded_not_down_while_redis_is_away(bot, slack, redis):
    redis.stop()
    async with aiohttp.ClientSession() as session, session.get(
        f"http://127.0.0.1:{bot.port}/healthz"
    ) as resp:
        status, body = resp.status, await resp.json()
    assert status == 200 and body["status"] == "degraded"


async def test_followups_find_their_context_again_when_redis_returns(bot, slack, redis):
    ts = await estimate_thread(bot, slack)
    redis.pause()  # hangs (timeouts) but keeps its data; the tests' servers don't persist
    try:
        await post(bot, followup(ts, "what if 8k seq?", "Ev-back-1"))
        assert "Context unavailable" in reply_in(slack, "chat.postEphemeral", ts)
    finally:
        redis.resume()
    assert await post(bot, followup(ts, "what if 8k seq?", "Ev-back-2")) == 200
    text = reply_in(slack, "chat.postMessage", ts)
    assert "Context unavailable" not in text
    assert "Llama 3.1 70B" in text and "8,192" in text
