"""Structured logging: one line per handled command, secrets never written.

``log_command(platform="slack", trigger="command", kind="estimate", outcome="posted",
latency_ms=12.3)`` writes, with the ``kv`` format::

    2026-01-01T12:00:00Z INFO ftcost.command platform=slack trigger=command kind=estimate
    outcome=posted latency_ms=12.3

and with ``json`` one object per line. User text is never logged (only kinds and
outcomes), and :class:`RedactingFilter` replaces every configured secret value that
might still reach a handler (a library's debug line, an exception) with ``[redacted]``.

Third-party libraries (slack_sdk, slack-bolt, discord.py, aiohttp...) print request and
event bodies, so what users type, in their DEBUG lines: at ``DEBUG`` they stay at INFO
(:data:`LIBRARY_LOGGERS`, :class:`LibraryDebugFilter`); only :data:`DEBUG_ALL`
(``FTCOST_LOG_LEVEL=debug-all``) lets their debug lines through.
"""

from __future__ import annotations

import json
import logging
import re
import sys
import time
from collections.abc import Iterable
from typing import Any, TextIO

from bot.metrics import record_command

COMMAND_LOGGER = "ftcost.command"
REDACTED = "[redacted]"
DEBUG_ALL = "DEBUG-ALL"
"""The level that also lets third-party libraries' DEBUG lines through (they print request
bodies: what users type). ``DEBUG`` is ftcost's own debug lines only."""
LIBRARY_LOGGERS = (
    "slack_sdk", "slack_bolt", "discord", "aiohttp", "urllib3", "websockets", "redis",
    "asyncio", "matplotlib", "PIL",
)  # fmt: skip
"""Third-party loggers kept at INFO or above unless the level is :data:`DEBUG_ALL`."""
LIBRARY_LOGGERS_UNDER_FTCOST = ("ftcost.slack.bolt", "ftcost.slack.socket")
"""Loggers ftcost names but slack-bolt and slack_sdk's Socket Mode client write through
(``adapters/slack``): library lines, held back the same way. Bolt also logs through a
logger named after the app (``ftcost``) and ``ftcost:<class>`` ones, matched too."""
# Slack tokens and the like, even ones the config does not know about.
_TOKEN_RE = re.compile(r"\bx(?:ox[abposr]|app)-[A-Za-z0-9-]{6,}")


def _kv_value(value: Any) -> str:
    text = f"{value:.1f}" if isinstance(value, float) else str(value)
    if text == "" or any(c in text for c in ' ="\n'):
        return json.dumps(text)
    return text


class RedactingFilter(logging.Filter):
    """Replaces secret values (and anything shaped like a Slack token) in a record's
    final message, its arguments and its exception text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return _TOKEN_RE.sub(REDACTED, text)

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a broken format string: keep the raw template
            message = str(record.msg)
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            record.fields = {
                k: self.redact(v) if isinstance(v, str) else v for k, v in fields.items()
            }
        return True


def is_library_logger(name: str) -> bool:
    """Whether records of the logger ``name`` come from a third-party library's code."""
    if name == "ftcost" or name.startswith("ftcost:"):  # bolt's per-request app loggers
        return True
    return any(
        name == prefix or name.startswith(prefix + ".")
        for prefix in (*LIBRARY_LOGGERS, *LIBRARY_LOGGERS_UNDER_FTCOST)
    )


class LibraryDebugFilter(logging.Filter):
    """Drops third-party libraries' records below INFO (their debug lines print request
    and event bodies, so what users type), whatever level a library set on its own
    loggers (slack-bolt copies the root's level onto loggers it makes)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= logging.INFO or not is_library_logger(record.name)


def parse_level(level: str) -> tuple[int, bool]:
    """``(the root level, whether libraries may log below INFO)`` for a configured level
    (``DEBUG``, :data:`DEBUG_ALL`, ``INFO``, ``WARNING``, ``ERROR``; any case)."""
    name = level.strip().upper().replace("_", "-")
    if name == DEBUG_ALL:
        return logging.DEBUG, True
    number = logging.getLevelName(name)
    if not isinstance(number, int):
        raise ValueError(
            f"unknown log level {level!r}: use DEBUG, {DEBUG_ALL}, INFO, WARNING or ERROR"
        )
    return number, False


def _set_library_levels(root_level: int, library_debug: bool) -> None:
    """At DEBUG, hold the third-party loggers at INFO (their debug lines are never even
    formatted); otherwise let them follow the root."""
    quiet = root_level < logging.INFO and not library_debug
    for name in LIBRARY_LOGGERS:
        logging.getLogger(name).setLevel(logging.INFO if quiet else logging.NOTSET)


def _traceback(formatter: logging.Formatter, record: logging.LogRecord) -> str:
    """The record's exception text ("" when it carries none)."""
    if record.exc_text:
        return record.exc_text
    return formatter.formatException(record.exc_info) if record.exc_info else ""


class KeyValueFormatter(logging.Formatter):
    converter = staticmethod(time.gmtime)  # UTC stamps; staticmethod: not bound as a method

    def format(self, record: logging.LogRecord) -> str:
        stamp = self.formatTime(record, "%Y-%m-%dT%H:%M:%SZ")
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            body = " ".join(f"{k}={_kv_value(v)}" for k, v in fields.items())
        else:
            body = record.getMessage()
        line = f"{stamp} {record.levelname} {record.name} {body}"
        trace = _traceback(self, record)
        if trace:
            line += "\n" + trace
        return line


class JsonFormatter(logging.Formatter):
    converter = staticmethod(time.gmtime)  # UTC stamps; staticmethod: not bound as a method

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%SZ"),
            "level": record.levelname,
            "logger": record.name,
        }
        fields = getattr(record, "fields", None)
        if isinstance(fields, dict):
            out.update(fields)
        else:
            out["message"] = record.getMessage()
        trace = _traceback(self, record)
        if trace:
            out["exception"] = trace
        return json.dumps(out, default=str)


def setup_logging(
    level: str = "INFO",
    fmt: str = "kv",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
) -> logging.Handler:
    """Route every logger through one handler on ``stream`` (stderr) with redaction.
    ``level`` is one of :func:`parse_level`'s; below INFO, third-party libraries stay at
    INFO unless it is :data:`DEBUG_ALL`. Returns the handler (tests attach it to a
    buffer)."""
    root_level, library_debug = parse_level(level)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else KeyValueFormatter())
    if not library_debug:
        handler.addFilter(LibraryDebugFilter())
    handler.addFilter(RedactingFilter(secrets))
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_ftcost", False):
            root.removeHandler(old)
    handler._ftcost = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(root_level)
    _set_library_levels(root_level, library_debug)
    # aiohttp's access log is one line per request: noise next to the command lines.
    logging.getLogger("aiohttp.access").setLevel(max(logging.WARNING, root.level))
    return handler


def log_command(
    *,
    platform: str,
    trigger: str,
    kind: str,
    outcome: str,
    latency_ms: float,
    **extra: Any,
) -> None:
    """The one structured line per handled command (and its metrics)."""
    record_command(platform, trigger, kind, outcome, latency_ms / 1000)
    fields: dict[str, Any] = {
        "event": "command",
        "platform": platform,
        "trigger": trigger,
        "kind": kind,
        "outcome": outcome,
        "latency_ms": round(latency_ms, 1),
    }
    fields.update(extra)
    level = logging.WARNING if outcome == "failed" else logging.INFO
    logging.getLogger(COMMAND_LOGGER).log(
        level,
        " ".join(f"{k}={_kv_value(v)}" for k, v in fields.items()),
        extra={"fields": fields},
    )
