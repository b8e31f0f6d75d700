"""Structured command lines and secret redaction."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.logs import REDACTED, RedactingFilter, log_command, setup_logging

SECRET = "xoxb-12345-abcdef-secret"


@pytest.fixture
def restore_root():
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        if h not in handlers:
            root.removeHandler(h)
    root.setLevel(level)


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
