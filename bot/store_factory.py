"""Opening the configured store: the one place that knows both backends.

``bot/store.py`` holds the interface, ``bot/store_sqlite.py`` and ``bot/store_redis.py``
the two backends (each builds on the interface); choosing between them lives here so
neither backend module imports the other (no file-level import cycle).
"""

from __future__ import annotations

from bot.store import Store, store_kind
from bot.store_sqlite import SQLiteStore


def open_store_from(location: str, *, thread_ttl_s: float | None = None) -> Store:
    """The (unopened) store for a configured location (``STORE_URL`` / ``store.path``):
    ``redis://``, ``rediss://`` or ``unix://`` -> ``RedisStore``; ``sqlite:///path``, a
    plain path or ``:memory:`` -> :class:`SQLiteStore`. ``thread_ttl_s`` also expires
    Redis thread contexts natively (SQLite relies on :meth:`Store.purge_expired`)."""
    if store_kind(location) == "redis":
        from bot.store_redis import RedisStore  # imports redis only when it is used

        return RedisStore(location, thread_ttl_s=thread_ttl_s)
    for prefix in ("sqlite:///", "sqlite://"):
        if location.startswith(prefix):
            location = location[len(prefix) :]  # never empty: store_kind refused that
            break
    return SQLiteStore(location)
