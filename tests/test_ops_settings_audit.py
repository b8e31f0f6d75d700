"""Channel settings leave an audit trail, and a stored value this version does not know is
said, not hidden: through the shared service (``set``, ``unset``, ``settings`` as every
front end sends them) on a real SQLite store, the bad value written behind its back."""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

import pytest

from bot.ask import Ask
from bot.service import Service
from bot.store_sqlite import SQLiteStore
from engine.choices import Framework

AUDIT = "ftcost.settings"
BOGUS = "bogus-framework"


async def say(store: SQLiteStore, text: str, user: str = "U7") -> str:
    """``text`` sent in Slack channel C1 by ``user``; the reply's text."""
    reply = await Service(store).respond(Ask(text, "slack", channel="C1", user=user))
    return reply.text


def audit_lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == AUDIT and r.levelno == level]


def write_behind(path: Path, value: str) -> None:
    """The channel's framework setting as another version (or a hand edit) left it."""
    conn = sqlite3.connect(path)
    try:
        with conn:
            conn.execute("INSERT INTO channel_settings (platform, channel, name, value, "
                         "updated_at) VALUES ('slack', 'C1', 'framework', ?, 0) ON CONFLICT "
                         "DO UPDATE SET value = excluded.value", (value,))  # fmt: skip
    finally:
        conn.close()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "bot.sqlite3"  # the ``sqlite_store`` fixture's file


# -- the audit trail ----------------------------------------------------------------------------
async def test_a_set_is_logged_with_channel_setting_old_and_new_value_and_user(
    sqlite_store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=AUDIT):
        await say(sqlite_store, "set framework hf")

    assert audit_lines(caplog, logging.INFO) == [
        "channel setting changed platform=slack channel=C1 setting=framework old=default "
        "new='hf' user=U7"
    ]


async def test_a_change_logs_the_value_it_replaced(
    sqlite_store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    await say(sqlite_store, "set framework hf")

    with caplog.at_level(logging.INFO, logger=AUDIT):
        await say(sqlite_store, "set framework unsloth", user="U8")

    [line] = audit_lines(caplog, logging.INFO)
    assert "old='hf' new='unsloth' user=U8" in line


async def test_an_unset_is_logged_back_to_the_default(
    sqlite_store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    await say(sqlite_store, "set prices spot")

    with caplog.at_level(logging.INFO, logger=AUDIT):
        await say(sqlite_store, "unset prices")

    [line] = audit_lines(caplog, logging.INFO)
    assert "setting=prices old='spot' new=default user=U7" in line


async def test_a_refused_set_changes_nothing_and_logs_nothing(
    sqlite_store: SQLiteStore, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger=AUDIT):
        await say(sqlite_store, "set framework nonsense")

    assert audit_lines(caplog, logging.INFO) == []


# -- a stored value this version does not know --------------------------------------------------
async def test_settings_shows_an_unknown_stored_value_as_ignored(
    sqlite_store: SQLiteStore, path: Path
) -> None:
    write_behind(path, BOGUS)

    text = await say(sqlite_store, "settings")

    assert f'framework: generic (default: the stored value "{BOGUS}" is not one I know, so ' \
           "it is ignored;" in text
    assert "`/ftcost unset framework` clears it" in text


async def test_an_unknown_stored_value_is_warned_about_naming_channel_and_setting(
    sqlite_store: SQLiteStore, path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_behind(path, BOGUS)

    with caplog.at_level(logging.WARNING, logger=AUDIT):
        await say(sqlite_store, "settings")

    assert audit_lines(caplog, logging.WARNING) == [
        "stored channel setting ignored, not a value this version knows platform=slack "
        f"channel=C1 setting=framework value='{BOGUS}'"
    ]


async def test_an_unknown_stored_value_is_warned_about_once_per_process(
    sqlite_store: SQLiteStore, path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_behind(path, BOGUS)
    service = Service(sqlite_store)

    with caplog.at_level(logging.WARNING, logger=AUDIT):
        for _ in range(3):
            await service.respond(Ask("8b lora", "slack", channel="C1"))

    assert len(audit_lines(caplog, logging.WARNING)) == 1


async def test_a_question_in_a_channel_with_an_unknown_stored_value_gets_the_default(
    sqlite_store: SQLiteStore, path: Path
) -> None:
    write_behind(path, BOGUS)

    reply = await Service(sqlite_store).respond(Ask("8b lora", "slack", channel="C1"))

    assert reply.request is not None and reply.request.framework is Framework.GENERIC


async def test_a_long_unknown_stored_value_is_cut_in_the_log(
    sqlite_store: SQLiteStore, path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    write_behind(path, "x" * 100_000)

    with caplog.at_level(logging.WARNING, logger=AUDIT):
        await say(sqlite_store, "settings")

    [line] = audit_lines(caplog, logging.WARNING)
    assert len(line) < 300
