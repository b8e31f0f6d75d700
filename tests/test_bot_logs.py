"""Structured command lines and secret redaction."""

from __future__ import annotations

import io
import json
import logging

import pytest
from slack_sdk.web.async_client import AsyncWebClient

from bot.config_load import load_config
from bot.logs import (
    LIBRARY_LOGGERS,
    REDACTED,
    RedactingFilter,
    is_library_logger,
    log_command,
    parse_level,
    setup_logging,
)
from tests.fakes import FakeSlack

SECRET = "xoxb-12345-abcdef-secret"


@pytest.fixture
def restore_root():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    library_levels = {name: logging.getLogger(name).level for name in LIBRARY_LOGGERS}
    yield
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    root.setLevel(level)
    for name, saved in library_levels.items():
        logging.getLogger(name).setLevel(saved)


def test_kv_command_line(restore_root):
    out = io.StringIO()
    setup_logging("INFO", "kv", [], out)

    log_command(platform="slack", trigger="command", kind="estimate", outcome="posted",
                latency_ms=12.345)

    line = out.getvalue().strip()
    assert line.endswith(
        "INFO ftcost.command event=command platform=slack trigger=command kind=estimate "
        "outcome=posted latency_ms=12.3"
    )
    assert len(out.getvalue().splitlines()) == 1


def test_json_command_line(restore_root):
    out = io.StringIO()
    setup_logging("INFO", "json", [], out)

    log_command(platform="slack", trigger="button", kind="estimate", outcome="fallback",
                latency_ms=3.0)

    record = json.loads(out.getvalue())
    assert {k: record[k] for k in ("platform", "trigger", "kind", "outcome", "latency_ms")} == {
        "platform": "slack", "trigger": "button", "kind": "estimate", "outcome": "fallback",
        "latency_ms": 3.0,
    }
    assert record["level"] == "INFO" and record["logger"] == "ftcost.command"


def test_failed_commands_log_at_warning(restore_root):
    out = io.StringIO()
    setup_logging("WARNING", "kv", [], out)

    log_command(platform="slack", trigger="command", kind="estimate", outcome="posted",
                latency_ms=1)
    log_command(platform="slack", trigger="command", kind="estimate", outcome="failed",
                latency_ms=1)

    assert out.getvalue().count("\n") == 1 and "outcome=failed" in out.getvalue()


def test_secrets_are_redacted_from_messages_args_and_tracebacks(restore_root):
    out = io.StringIO()
    setup_logging("DEBUG", "kv", [SECRET, "signing-secret-xyz"], out)
    log = logging.getLogger("some.library")

    log.debug("token=%s", SECRET)
    log.info("headers {'Authorization': 'Bearer signing-secret-xyz'}")
    log.warning("stray token xapp-1-A0B1-999999-abcdef and xoxp-99999-abc")
    try:
        raise RuntimeError(f"boom {SECRET}")
    except RuntimeError:
        log.exception("failed")

    text = out.getvalue()
    assert SECRET not in text and "signing-secret-xyz" not in text
    assert "xapp-1-A0B1" not in text and "xoxp-99999" not in text
    assert text.count(REDACTED) >= 5


def test_filter_leaves_ordinary_text_alone():
    f = RedactingFilter(["abcd1234"])

    assert f.redact("70b qlora 50M tokens h100") == "70b qlora 50M tokens h100"
    assert f.redact("x abcd1234 y") == f"x {REDACTED} y"


# -- third-party libraries' debug lines (they print request bodies: what users type) ------------
USER_TEXT = "70b qlora on our secret-project-falcon data"
LIBRARY_NAMES = ("slack_sdk.web.async_base_client", "slack_bolt.RequestVerification",
                 "discord.http", "discord.gateway", "aiohttp.client", "urllib3.connectionpool",
                 "ftcost.slack.socket", "ftcost.slack.bolt", "ftcost", "ftcost:AsyncApp")


def test_debug_keeps_every_library_below_info_whatever_level_it_set_itself(restore_root):
    out = io.StringIO()
    setup_logging("DEBUG", "kv", [], out)
    # slack-bolt copies the root's level onto the loggers it makes: explicit DEBUG.
    logging.getLogger("slack_bolt.RequestVerification").setLevel(logging.DEBUG)

    for name in LIBRARY_NAMES:
        logging.getLogger(name).debug("%s body: %s", name, USER_TEXT)
        logging.getLogger(name).info("%s connected", name)
    logging.getLogger("ftcost.bot").debug("ftcost's own debug line")

    text = out.getvalue()
    assert USER_TEXT not in text
    assert all(f"{name} connected" in text for name in LIBRARY_NAMES)
    assert "ftcost's own debug line" in text
    assert logging.getLogger("discord").level == logging.INFO


def test_debug_all_lets_library_debug_lines_through(restore_root):
    out = io.StringIO()
    setup_logging("debug-all", "kv", [], out)

    for name in LIBRARY_NAMES:
        logging.getLogger(name).debug("%s body: %s", name, USER_TEXT)

    assert out.getvalue().count(USER_TEXT) == len(LIBRARY_NAMES)
    assert logging.getLogger("discord").level == logging.NOTSET


async def test_slack_sdk_request_bodies_stay_out_of_a_debug_log(restore_root):
    async def post(level: str) -> str:
        out = io.StringIO()
        setup_logging(level, "kv", [], out)
        async with FakeSlack() as slack:
            client = AsyncWebClient(token="xoxb-test", base_url=slack.base_url)
            await client.chat_postMessage(channel="C1", text=USER_TEXT)
        return out.getvalue()

    assert USER_TEXT not in await post("DEBUG")
    assert USER_TEXT in await post("DEBUG-ALL")  # slack_sdk does print it: the test bites


def test_library_loggers_are_told_apart_from_ftcosts_own():
    assert all(is_library_logger(name) for name in LIBRARY_NAMES)
    assert not any(is_library_logger(name) for name in (
        "ftcost.bot", "ftcost.slack", "ftcost.command", "adapters.discord.client",
        "discordian", "aiohttpx", "ftcost.slack.bolter"))


def test_levels_are_read_in_any_case_and_an_unknown_one_names_the_accepted_ones():
    assert parse_level("debug") == (logging.DEBUG, False)
    assert parse_level("Debug-All") == (logging.DEBUG, True)
    assert parse_level("WARNING") == (logging.WARNING, False)
    with pytest.raises(ValueError, match="use DEBUG, DEBUG-ALL, INFO, WARNING or ERROR"):
        parse_level("loud")


def test_the_configuration_accepts_debug_all(tmp_path):
    config = load_config(None, {"FTCOST_LOG_LEVEL": "debug-all",
                                "FTCOST_STORE": str(tmp_path / "s.sqlite3")})  # fmt: skip

    assert parse_level(config.log.level) == (logging.DEBUG, True)
