"""The bot's state store: a small async interface its backends implement.

What is kept:

* **thread contexts**: ``(platform, channel, thread id)`` -> the last :class:`Request`
  answered in that thread and the id/ts of the message that answered it. A
  follow-up in the thread is applied to that request, then replaces it.
* **seen event ids**, each with an expiry: :meth:`Store.first_seen` is an atomic
  "is this the first time?" used to drop Slack's retries of an event already handled.
* **locks** with an expiry (:meth:`Store.acquire_lock`): at most one holder per name
  until it releases or the lock expires, e.g. for a periodic job run by one of several
  replicas.
* a **string cache** with expiry (:meth:`Store.cache_get` / :meth:`Store.cache_put`),
  e.g. Hugging Face Hub config lookups shared by replicas;
* **fixed-window counters** (:meth:`Store.hit`), e.g. a per-user rate limit shared by
  replicas;
* the price records of :class:`bot.price_store.PriceStore`.

Backends: ``bot.store_sqlite.SQLiteStore`` (the default) and ``bot.store_redis.RedisStore``;
:func:`bot.store_factory.open_store_from` picks one from a location (``STORE_URL``). A
backend that cannot be reached raises :class:`StoreUnavailable` (a :class:`StoreError`),
which callers catch to degrade gracefully.

The interface is backend-neutral (keys are strings, values JSON, times are epoch
seconds): the Redis backend maps threads to hashes, ``first_seen`` to ``SET NX PX``
and locks to ``SET NX PX`` + compare-and-delete (its module docstring has the key layout).

Extending it:

1. add an abstract ``async`` method group to :class:`Store` below with backend-neutral
   arguments;
2. append a migration to ``bot.store_sqlite.MIGRATIONS`` (never edit an applied one)
   that creates the tables, and implement the methods in ``SQLiteStore`` through
   ``self._run``;
3. implement them in ``bot/store_redis.py`` with the same atomicity;
4. add a contract test to ``tests/test_bot_store.py`` (the ``store`` fixture runs it
   against both backends).
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from urllib.parse import parse_qsl, urlencode, urlsplit

from pydantic import ValidationError

from bot.price_store import PriceStore
from bot.settings_store import SettingsStore
from bot.store_types import (
    StoreError,
    StoreUnavailable,
    ThreadContext,
    ThreadKey,
    request_json,
)
from engine import Request

log = logging.getLogger("ftcost.store")


def why_unreadable(exc: Exception) -> str:
    """Where a stored value fails validation, in one line that holds none of the stored
    values (``schema_v99_field: extra_forbidden (1 error)``): for logs."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        count = exc.error_count()
        return f"{where}: {first['type']} ({count} error{'s' if count != 1 else ''})"
    return type(exc).__name__


def warn_unreadable_context(key: ThreadKey, exc: Exception) -> None:
    """The warning for a stored thread context that no longer validates (a request field
    a later or earlier version does not know, a hand edit): the store then reads it as
    missing, and the thread's follow-ups are answered as for an estimate no longer kept.
    Names the thread, never the stored request (user words)."""
    log.warning("stored thread context no longer validates, read as missing platform=%s "
                "channel=%s thread=%s: %s", key.platform, key.channel, key.thread,
                why_unreadable(exc))  # fmt: skip


class Store(PriceStore, SettingsStore, ABC):
    """Async state store. Open it once (``await store.open()``), close it on shutdown;
    ``async with store:`` does both."""

    async def __aenter__(self) -> Store:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @abstractmethod
    async def open(self) -> None:
        """Connect, create the schema on first start, apply pending migrations."""

    @abstractmethod
    async def close(self) -> None: ...

    @abstractmethod
    async def ping(self) -> bool:
        """True when the backend answers (for ``/healthz``)."""

    # -- thread contexts --------------------------------------------------------------------
    @abstractmethod
    async def get_thread(self, key: ThreadKey) -> ThreadContext | None: ...

    @abstractmethod
    async def save_thread(
        self, key: ThreadKey, request: Request, message_id: str | None = None
    ) -> None:
        """Insert or replace the context of ``key``."""

    # -- retry de-duplication ---------------------------------------------------------------
    @abstractmethod
    async def first_seen(self, event_id: str, ttl_s: float) -> bool:
        """Atomically record ``event_id``; True only for the first caller within ``ttl_s``
        seconds (an expired record counts as unseen)."""

    # -- locks ------------------------------------------------------------------------------
    @abstractmethod
    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool:
        """Take (or renew, if ``owner`` already holds it) the lock ``name`` for ``ttl_s``
        seconds. False while another owner holds an unexpired lock."""

    @abstractmethod
    async def release_lock(self, name: str, owner: str) -> bool:
        """Release ``name`` if ``owner`` holds it; True when something was released."""

    # -- a string cache with expiry ---------------------------------------------------------
    @abstractmethod
    async def cache_get(self, key: str) -> str | None:
        """The value last put under ``key``; None when absent or expired."""

    @abstractmethod
    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        """Store ``value`` under ``key`` for ``ttl_s`` seconds (replacing any value; a
        ``ttl_s`` of zero or less stores nothing and drops the old value)."""

    # -- fixed-window counters --------------------------------------------------------------
    @abstractmethod
    async def hit(self, key: str, window_s: float) -> int:
        """Count one hit of ``key`` in the current window (window index
        ``floor(now / window_s)``, ``now`` in epoch seconds) and return the window's count
        including this hit. A new window starts from 1; old windows expire. For a rate limit
        shared by replicas."""

    # -- housekeeping -----------------------------------------------------------------------
    @abstractmethod
    async def purge_expired(self, thread_ttl_s: float | None = None) -> int:
        """Delete expired event ids, locks, cache entries and counter windows, and thread
        contexts untouched for ``thread_ttl_s``; return how many records went (a backend
        whose records expire by themselves counts only what it deleted)."""


STORE_LOCATION_FORMS = (
    "a SQLite file path, sqlite:///path or :memory:; or a Redis URL: redis://[:password@]host"
    "[:port][/db], rediss://... (TLS) or unix:///path/redis.sock[?db=N]"
)
REDIS_SCHEMES = ("redis", "rediss", "unix")


def store_kind(location: str) -> str:
    """``"redis"`` or ``"sqlite"`` for a store location (``STORE_URL`` / ``store.path``);
    :class:`StoreError` naming the accepted forms for anything else. Never echoes the
    location (it may hold a password)."""
    if "://" not in location:
        if not location.strip():
            raise StoreError(f"the store location is empty (use {STORE_LOCATION_FORMS})")
        return "sqlite"
    scheme, rest = location.split("://", 1)
    scheme = scheme.lower()
    if scheme in REDIS_SCHEMES:
        if scheme != "unix" and not _db_path_ok(location):
            raise StoreError(f"the Redis URL's database (after the host's '/') is not a whole "
                             f"number: write redis://host:6379/1 (use {STORE_LOCATION_FORMS})")
        return "redis"
    if scheme == "sqlite":
        if not rest.lstrip("/").strip():
            raise StoreError("the sqlite:// URL names no file (an unset $DB_PATH?): write "
                             "sqlite:////data/ftcost.db, or :memory: for a store that keeps "
                             "nothing across restarts")
        return "sqlite"
    raise StoreError(f"unsupported store scheme {scheme}:// (use {STORE_LOCATION_FORMS})")


def _db_path_ok(location: str) -> bool:
    """A Redis URL's path is empty or a whole database number (redis-py reads ``/1x``
    as database 0)."""
    try:
        path = urlsplit(location).path.strip("/")
    except ValueError:
        return True  # the client's own parse reports it
    return not path or path.isdigit()


def redact_url(location: str) -> str:
    """``location`` with any password (``user:password@`` or ``?password=``) shown as
    ``***``, for logs and ``check-config``."""
    if "://" not in location:
        return location
    try:
        parts = urlsplit(location)
    except ValueError:
        return location.split("://", 1)[0] + "://<unparseable>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        netloc = f"{userinfo.split(':', 1)[0]}:***@{host}" if ":" in userinfo else f"***@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode(
            [(k, "***" if k.lower() == "password" else v) for k, v in pairs], safe="*"
        )
    # Built by hand: urlunsplit drops the "//" of unix:///path.
    return (f"{parts.scheme}://{netloc}{parts.path}" + (f"?{query}" if query else "")
            + (f"#{parts.fragment}" if parts.fragment else ""))  # fmt: skip


__all__ = [
    "REDIS_SCHEMES",
    "STORE_LOCATION_FORMS",
    "Store",
    "StoreError",
    "StoreUnavailable",
    "ThreadContext",
    "ThreadKey",
    "redact_url",
    "request_json",
    "store_kind",
    "warn_unreadable_context",
    "why_unreadable",
]
