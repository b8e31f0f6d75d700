"""The Slack endpoint and adapter against hostile or failing input, through the real bot:
its aiohttp server on 127.0.0.1 with the real bolt app behind it, the local Slack Web API
stand-in (``FakeSlack``) and properly signed requests (``tests.fakes.slack_signing``).

* A request with a bad signature is refused before bolt sees it: 401 and one log line
  naming the remote address, never the body or headers; bolt's own verifier, reached
  directly, prints no body either.
* Junk (not a form, not JSON, not UTF-8, too large) answers 400 or 413, never 500, and
  leaves no traceback in the log.
* ``users.info`` failing (rate-limited, any error but ``missing_scope``) refuses a
  subscription change and says to try again (fail closed).
* An exception in a listener is logged with its traceback, without the request's text.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from slack_bolt.request.async_request import AsyncBoltRequest

from adapters.slack.delivery import PERMISSION_UNCHECKED
from adapters.slack.runner import MAX_BODY_BYTES
from bot.config import Config
from bot.config_load import load_config
from tests.fakes import FakeSlack, request_headers, sign
from tests.fakes import slash_command_body as slash_body
from tests.slack_harness import BOT_TOKEN, SECRET, Harness, StartBot, bot_env, starting
from tests.test_slack_http import QUERY

MARKER = "zq-secret-user-text-7781"
"""User text in a request body: it must never reach the log."""
REJECTED = "rejected unsigned/badly signed request from 127.0.0.1"


def bot_config(slack: FakeSlack, tmp_path: Path, **slack_settings: Any) -> Config:
    """The bot at its default log level (INFO), as deployed; no scheduled price refresh
    (subscriptions still work), so nothing else writes to the log meanwhile."""
    yml = tmp_path / "bot.yml"
    yml.write_text(json.dumps({"slack": {"host": "127.0.0.1", **slack_settings},
                               "prices": {"enabled": False}}))  # fmt: skip
    return load_config(yml, bot_env(slack, tmp_path / "state.sqlite3"))


@pytest.fixture
async def start_bot(slack: FakeSlack, tmp_path: Path) -> AsyncIterator[StartBot]:
    """``await start_bot(**slack_settings)``: a bot with those ``slack:`` settings."""
    async with starting(lambda **settings: bot_config(slack, tmp_path, **settings)) as start:
        yield start


async def post_raw(
    bot: Harness, data: Any, headers: dict[str, str] | None = None
) -> tuple[int, str]:
    async with bot.session.post(bot.url, data=data, headers=headers or {}) as resp:
        return resp.status, await resp.text()


def logged(caplog: pytest.LogCaptureFixture) -> str:
    """Everything the log holds: messages, arguments and tracebacks."""
    return "\n".join(
        r.getMessage() + repr(r.args) + (r.exc_text or "")
        + (logging.Formatter().formatException(r.exc_info) if r.exc_info else "")
        for r in caplog.records
    )  # fmt: skip


HTTP_LOGGERS = ("ftcost.slack", "slack_bolt", "slack_sdk", "aiohttp")
"""Where a request's traceback would be logged: the adapter, bolt, the SDK, the server."""


def tracebacks(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name.startswith(HTTP_LOGGERS)
            and (r.exc_info or r.levelno >= logging.ERROR)]  # fmt: skip


# -- 1. bad signatures: refused before bolt, one line, no body --------------------------------
async def test_a_badly_signed_request_gets_401_and_one_line_without_its_body(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    body = slash_body(MARKER, response_url=slack.response_url("C1"))
    headers = request_headers(body, "not-the-signing-secret")

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, body.encode(), headers)
    await bot.settle()

    assert status == 401
    assert [r.getMessage() for r in caplog.records if "signed" in r.getMessage()] == [REJECTED]
    everything = logged(caplog)
    assert MARKER not in everything and headers["X-Slack-Signature"] not in everything
    assert slack.calls_to("chat.postMessage") == [] and slack.responses == []


async def test_an_unsigned_request_gets_401_and_the_same_line(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    body = slash_body(MARKER)

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, body.encode(), {
            "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip

    assert status == 401
    assert REJECTED in caplog.text and MARKER not in logged(caplog)


async def test_a_request_signed_too_long_ago_gets_401_without_its_body(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    body = slash_body(MARKER)
    headers = request_headers(body, SECRET, int(time.time()) - 6 * 60)

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, body.encode(), headers)

    assert status == 401
    assert REJECTED in caplog.text and MARKER not in logged(caplog)


async def test_bolts_own_signature_check_prints_no_body_at_the_default_level(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    body = slash_body(MARKER)
    request = AsyncBoltRequest(body=body, headers=request_headers(body, "wrong-secret"))

    with caplog.at_level(logging.INFO):
        response = await bot.bot.app.async_dispatch(request)  # past the runner: bolt alone

    assert response.status == 401
    assert MARKER not in logged(caplog)


async def test_slacks_certificate_check_is_answered_unsigned_as_bolt_does(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, b"ssl_check=1&token=verification_token", {
            "Content-Type": "application/x-www-form-urlencoded"})  # fmt: skip

    assert status == 200
    assert REJECTED not in caplog.text


async def test_a_properly_signed_request_still_reaches_bolt(bot: Harness, slack: FakeSlack) -> None:
    status, _ = await bot.post(slash_body(QUERY, response_url=slack.response_url("C1")))
    await bot.settle()

    assert status == 200
    assert len(slack.calls_to("chat.postMessage", ok=True)) == 1


# -- 2. junk: 400 or 413, never 500, no traceback ---------------------------------------------
JUNK: dict[str, tuple[str, str]] = {
    "plain text": ("text/plain", "hello there"),
    "no content type": ("", "token=t&text=hi"),
    "a form that is not one": ("application/x-www-form-urlencoded", "just some words"),
    "JSON that is not an object": ("application/json", "[1, 2, 3]"),
    "JSON that is not JSON": ("application/json", "{not json"),
    "deeply nested JSON": ("application/json", "{\"a\": " * 5000 + "1" + "}" * 5000),
    "a form whose payload is not JSON": ("application/x-www-form-urlencoded", "payload=%7Bnope"),
    "a form whose payload is a list": ("application/x-www-form-urlencoded", "payload=%5B1%5D"),
    "an empty body": ("application/json", ""),
    "an object bolt cannot read": ("application/json", '{"authorizations": 5}'),
}


@pytest.mark.parametrize("kind", sorted(JUNK))
async def test_a_signed_junk_body_gets_400_without_a_traceback(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture, kind: str
) -> None:
    content_type, body = JUNK[kind]
    headers = {**sign(body, SECRET), **({"Content-Type": content_type} if content_type else {})}

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, body.encode(), headers)
    await bot.settle()

    assert status == 400
    assert tracebacks(caplog) == []
    assert slack.calls_to("chat.postMessage") == []


async def test_a_body_that_is_not_utf8_gets_400_without_a_traceback(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    garbage = bytes(range(128, 256)) * 4
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(garbage, SECRET)}

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, garbage, headers)

    assert status == 400
    assert tracebacks(caplog) == []


async def test_a_body_over_the_limit_gets_413(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    body = b"text=" + b"a" * MAX_BODY_BYTES
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(body, SECRET)}

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, body, headers)

    assert status == 413
    assert tracebacks(caplog) == []


async def test_a_chunked_body_over_the_limit_gets_413(
    bot: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    async def chunks() -> AsyncIterator[bytes]:  # no Content-Length: read until the limit
        for _ in range(MAX_BODY_BYTES // 65536 + 2):
            yield b"a" * 65536

    with caplog.at_level(logging.INFO):
        status, _ = await post_raw(bot, chunks(), {"Content-Type": "text/plain"})

    assert status == 413
    assert tracebacks(caplog) == []


# -- 3. the permission check fails closed -----------------------------------------------------
async def subscribe(bot: Harness, slack: FakeSlack, user: str = "U1") -> dict[str, Any]:
    """``/ftcost subscribe`` in C1; the body of the private reply."""
    status, _ = await bot.post(slash_body("subscribe", user_id=user,
                                          response_url=slack.response_url("C1")))  # fmt: skip
    assert status == 200
    await bot.settle()
    (reply,) = await slack.wait_for_responses(1)
    return dict(reply.body)


async def test_a_rate_limited_permission_check_refuses_the_change(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    slack.set_admin("U1")  # an admin, but Slack won't say so right now
    slack.fail_next("users.info", "ratelimited")

    with caplog.at_level(logging.INFO):
        reply = await subscribe(bot, slack)

    assert reply["response_type"] == "ephemeral"
    assert "couldn't check" in reply["text"] and "try again" in reply["text"]
    assert await bot.store.get_subscription("slack", "C1") is None
    assert "cannot check admin status error=ratelimited" in caplog.text


async def test_a_permission_check_rate_limited_past_the_retries_refuses_the_change(
    start_bot: StartBot, slack: FakeSlack
) -> None:
    bot = await start_bot(rate_limit_retries=0)
    slack.set_admin("U1")
    slack.rate_limit_next("users.info")  # HTTP 429 with {"ok": false, "error": "ratelimited"}

    reply = await subscribe(bot, slack)

    assert PERMISSION_UNCHECKED.split(",")[0] in reply["text"]
    assert await bot.store.get_subscription("slack", "C1") is None


@pytest.mark.parametrize("error", ["internal_error", "fatal_error", "user_not_found"])
async def test_any_other_permission_check_error_refuses_the_change(
    bot: Harness, slack: FakeSlack, error: str
) -> None:
    slack.set_admin("U1")
    slack.fail_next("users.info", error)

    reply = await subscribe(bot, slack)

    assert "couldn't check" in reply["text"]
    assert await bot.store.get_subscription("slack", "C1") is None


async def test_without_users_read_anyone_may_still_subscribe(
    bot: Harness, slack: FakeSlack
) -> None:
    slack.fail_next("users.info", "missing_scope")  # documented: Slack can't tell

    await subscribe(bot, slack, user="U2")

    assert await bot.store.get_subscription("slack", "C1") is not None


async def test_a_checked_non_admin_is_still_refused(bot: Harness, slack: FakeSlack) -> None:
    reply = await subscribe(bot, slack, user="U2")

    assert "admins" in reply["text"]
    assert await bot.store.get_subscription("slack", "C1") is None


# -- 5. a listener's error is logged with its traceback, without the request -----------------
async def test_a_listener_error_is_logged_with_its_traceback_and_not_the_request(
    bot: Harness, slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(coro: Any) -> None:
        coro.close()
        raise RuntimeError("the reply queue is broken")

    bot.bot.spawn = broken  # type: ignore[method-assign]  # the bot's code, not bolt's

    with caplog.at_level(logging.INFO):
        await bot.post(slash_body(MARKER, response_url=slack.response_url("C1")))

    errors = [r for r in caplog.records if r.getMessage().startswith("unhandled error in a Slack")]
    assert errors and all(r.exc_info for r in errors)
    trace = logging.Formatter().formatException(errors[0].exc_info)  # type: ignore[arg-type]
    assert "the reply queue is broken" in trace and "on_command" in trace
    assert MARKER not in logged(caplog) and BOT_TOKEN not in logged(caplog)
