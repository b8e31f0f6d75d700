"""A stored thread context that no longer validates (written by another version, or by
hand) reads as missing and is warned about, naming the thread and never what it held:
every backend (``store`` in ``tests/conftest.py``: SQLite and Redis), the record written
behind the store's back as a hand edit or another version would."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest
import redis

from bot.store import Store, ThreadKey
from engine import Request

KEY = ThreadKey("slack", "C1", "1700000000.000100")
FOREIGN_FIELD = "schema_v99_field"
STORED_WORDS = "private-words-of-the-asker"
OTHER_VERSION = json.dumps({"model": STORED_WORDS, "method": "lora", FOREIGN_FIELD: 1})


def overwrite(store_backend: str, request: pytest.FixtureRequest, text: str) -> None:
    """Replace the stored request of :data:`KEY` with ``text`` behind the store's back (the
    key layout of ``bot/store_sqlite.py`` and ``bot/store_redis.py``)."""
    if store_backend == "sqlite":
        path: Path = request.getfixturevalue("tmp_path") / "store.sqlite3"
        conn = sqlite3.connect(path)
        try:
            with conn:
                conn.execute("UPDATE threads SET request = ? WHERE thread = ?", (text, KEY.thread))
        finally:
            conn.close()
        return
    url, prefix = request.getfixturevalue("redis_url"), request.getfixturevalue("redis_prefix")
    client = redis.Redis.from_url(url, decode_responses=True)
    try:
        client.hset(f"{prefix}thread:{KEY.platform}:{KEY.channel}:{KEY.thread}", "request", text)
    finally:
        client.close()


async def test_a_context_written_by_another_version_reads_as_missing(
    store: Store, store_backend: str, request: pytest.FixtureRequest
) -> None:
    await store.save_thread(KEY, Request(model="llama-3.1-8b"), "1")
    overwrite(store_backend, request, OTHER_VERSION)

    assert await store.get_thread(KEY) is None


async def test_a_context_that_no_longer_validates_is_warned_about_by_its_thread(
    store: Store, store_backend: str, request: pytest.FixtureRequest,
    caplog: pytest.LogCaptureFixture,
) -> None:  # fmt: skip
    await store.save_thread(KEY, Request(model="llama-3.1-8b"), "1")
    overwrite(store_backend, request, OTHER_VERSION)

    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        await store.get_thread(KEY)

    [record] = caplog.records
    assert record.levelno == logging.WARNING
    assert f"channel=C1 thread={KEY.thread}" in record.getMessage()
    assert f"{FOREIGN_FIELD}: extra_forbidden (1 error)" in record.getMessage()
    assert STORED_WORDS not in caplog.text


async def test_a_missing_context_is_not_warned_about(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="ftcost.store"):
        assert await store.get_thread(KEY) is None

    assert caplog.records == []
