"""What the state store keeps for channel settings (``/ftcost set framework hf``), and
both backends' implementations, mixed into ``bot.store_sqlite.SQLiteStore`` and
``bot.store_redis.RedisStore``.

A channel's settings are a small map of names to strings (``framework`` -> ``hf``,
``prices`` -> ``spot``), per ``(platform, channel)``. The store keeps the strings as
given; :mod:`bot.channel_settings` validates them on the way in and again on the way
out (a value a later version no longer knows is ignored, not fatal). Settings never
expire.

* SQLite: table ``channel_settings`` (migration :data:`SETTINGS_MIGRATION`).
* Redis: a hash ``<prefix>settings:<platform>:<channel>`` (field: setting name).
"""

from __future__ import annotations

import sqlite3
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from contextlib import AbstractContextManager
from typing import Any

SETTINGS_MIGRATION = (
    4,
    "per-channel settings",
    """
        CREATE TABLE channel_settings (
            platform   TEXT NOT NULL,
            channel    TEXT NOT NULL,
            name       TEXT NOT NULL,
            value      TEXT NOT NULL,
            updated_at REAL NOT NULL,
            PRIMARY KEY (platform, channel, name)
        );
    """,
)
"""Append to ``bot.store_sqlite.MIGRATIONS``."""


class SettingsStore(ABC):
    """The channel-settings methods of :class:`bot.store.Store`."""

    @abstractmethod
    async def channel_settings(self, platform: str, channel: str) -> dict[str, str]:
        """Every setting of the channel (empty when none was set)."""

    @abstractmethod
    async def set_channel_setting(
        self, platform: str, channel: str, name: str, value: str | None
    ) -> None:
        """Set ``name`` to ``value`` for the channel; ``None`` removes it (back to the
        default)."""


class SQLiteSettingsTables:
    """Mixin for ``SQLiteStore``: the :class:`SettingsStore` methods."""

    _clock: Callable[[], float]
    _run: Callable[[Callable[[sqlite3.Connection], Any]], Awaitable[Any]]

    async def channel_settings(self, platform: str, channel: str) -> dict[str, str]:
        def q(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
            return conn.execute(
                "SELECT name, value FROM channel_settings WHERE platform = ? AND channel = ?",
                (platform, channel),
            ).fetchall()

        return {str(name): str(value) for name, value in await self._run(q)}

    async def set_channel_setting(
        self, platform: str, channel: str, name: str, value: str | None
    ) -> None:
        now = self._clock()

        def q(conn: sqlite3.Connection) -> None:
            if value is None:
                conn.execute(
                    "DELETE FROM channel_settings WHERE platform = ? AND channel = ?"
                    " AND name = ?",
                    (platform, channel, name),
                )
                return
            conn.execute(
                "INSERT INTO channel_settings (platform, channel, name, value, updated_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (platform, channel, name)"
                " DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                (platform, channel, name, value, now),
            )

        await self._run(q)


class RedisSettingsKeys:
    """Mixin for ``RedisStore``: the :class:`SettingsStore` methods over one hash per
    channel."""

    _r: Any
    _key: Callable[..., str]
    _errors: Callable[[], AbstractContextManager[None]]

    def _settings_key(self, platform: str, channel: str) -> str:
        return self._key("settings", platform, channel)

    async def channel_settings(self, platform: str, channel: str) -> dict[str, str]:
        with self._errors():
            row = await self._r.hgetall(self._settings_key(platform, channel))
        return {str(k): str(v) for k, v in (row or {}).items()}

    async def set_channel_setting(
        self, platform: str, channel: str, name: str, value: str | None
    ) -> None:
        key = self._settings_key(platform, channel)
        with self._errors():
            if value is None:
                await self._r.hdel(key, name)
            else:
                await self._r.hset(key, name, value)


__all__ = [
    "SETTINGS_MIGRATION",
    "RedisSettingsKeys",
    "SQLiteSettingsTables",
    "SettingsStore",
]
