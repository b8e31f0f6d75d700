"""The Redis backend of :class:`bot.store.Store`, for several bot replicas sharing state.

``RedisStore("redis://[:password@]host:6379/0")`` (also ``rediss://`` for TLS and
``unix:///path/redis.sock?db=0``) keeps everything under one key prefix (default
``ftcost:``). Key layout (``<p>`` is the prefix; ``:`` and ``%`` inside an id that is
not the last part of a key are written ``%3A`` / ``%25``):

====================================================  ========  ============================
key                                                   type      expiry
====================================================  ========  ============================
``<p>thread:<platform>:<channel>:<thread>``           hash      ``thread_ttl_s`` if set [1]
``<p>threads:channel:<platform>:<channel>``           zset      as its newest thread [1]
``<p>threads:by-time``                                zset      none (pruned by purge)
``<p>seen:<event id>``                                string    ``ttl_s`` (``SET NX PX``)
``<p>lock:<name>``                                    string    ``ttl_s`` (owner as value)
``<p>cache:<key>``                                    string    ``ttl_s``
``<p>hit:<window_s>:<window index>:<key>``            integer   window end + 1 s
``<p>price:snapshot:<id>``                            hash      none
``<p>price:snapshots``                                zset      none
``<p>price:sub:<platform>:<channel>``                 hash      none
``<p>price:subs``                                     zset      none
``<p>price:ann:<snapshot>:<platform>:<channel>``      hash      none
``<p>price:anns:<snapshot>``                          set       none
``<p>settings:<platform>:<channel>``                   hash      none (``bot.settings_store``)
====================================================  ========  ============================

[1] Thread contexts: a hash (``request`` JSON, ``message_id``, ``updated_at``) indexed by
two sorted sets scored by ``updated_at``: per channel (for
:meth:`~bot.price_store.PriceStore.latest_channel_request`) and global (for
:meth:`RedisStore.purge_expired`, which deletes contexts untouched for ``thread_ttl_s``
exactly as the SQLite store does). With ``thread_ttl_s`` given to the constructor, each
save also sets that native TTL on the hash and its channel index, a backstop should no
replica run the purge; index entries left by a natively expired hash are skipped on read
and pruned by the purge.

Expiry: event ids, locks, cache entries and counter windows use Redis' own TTLs (server
time, millisecond precision), so :meth:`purge_expired` has nothing to do for them and
counts only the thread contexts it deleted. ``clock`` (epoch seconds) stamps
``updated_at``/``claimed_at``/``finished_at`` and picks the counter window, as in the
SQLite store.

Atomicity matches the SQLite store: ``first_seen`` is ``SET NX PX``; a lock is taken or
renewed by its owner and released by compare-and-delete in Lua scripts; an announcement
claim (insert-if-absent, or re-claim of a ``failed`` record with attempts left) and a
snapshot save (insert-if-absent) are Lua scripts; ``hit`` is ``INCR`` + ``PEXPIRE`` in one
``MULTI``. Commands are never retried by the client (a retried ``first_seen`` or claim
whose first reply was lost would answer "already done"): a connection error or timeout
raises :class:`~bot.store.StoreUnavailable` at once, and the connection pool reconnects on
the next call, so the store recovers by itself when Redis comes back.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from redis import exceptions as rexc
from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.connection import parse_url
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.commands.core import AsyncScript
from redis.typing import EncodableT, FieldT

from bot.price_store_redis import PRICE_SCRIPTS, RedisPriceKeys
from bot.price_store_redis import hash_text as _row
from bot.price_store_redis import list_text as _texts
from bot.price_store_redis import num_text as _num
from bot.settings_store import RedisSettingsKeys
from bot.store import (
    Store,
    StoreError,
    StoreUnavailable,
    ThreadContext,
    ThreadKey,
    redact_url,
    request_json,
    warn_unreadable_context,
)
from engine import Request

DEFAULT_PREFIX = "ftcost:"
DEFAULT_TIMEOUT_S = 1.0
"""Socket connect and read timeout: a dead Redis costs a reply at most about this long."""
HIT_GRACE_MS = 1000
"""A counter window outlives its end by this much (replicas' clocks differ a little)."""
_PURGE_BATCH = 500

log = logging.getLogger("ftcost.store")

_TRANSIENT_REPLIES = ("OOM", "READONLY", "LOADING", "MASTERDOWN", "NOREPLICAS", "BUSY",
                      "TRYAGAIN", "CLUSTERDOWN")  # fmt: skip
"""Error replies that mean "not now" rather than "wrong": raised as StoreUnavailable."""


def _secrets_of(url: str) -> list[str]:
    """The password(s) in ``url``, to scrub from error messages."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query) if k.lower() == "password" and v]
    return found


def _part(text: str) -> str:
    return text.replace("%", "%25").replace(":", "%3A")


def _index_member(member: str) -> tuple[str, str, str] | None:
    """A ``threads:by-time`` member (the JSON ``[platform, channel, thread]``) as its
    three parts, or None when it is not that."""
    try:
        parts = json.loads(member)
    except ValueError:
        return None
    if not (isinstance(parts, list) and len(parts) == 3
            and all(isinstance(p, str) for p in parts)):  # fmt: skip
        return None
    return parts[0], parts[1], parts[2]


def _clip(text: str, limit: int = 80) -> str:
    """``text`` for a log line: its repr, cut to about ``limit`` characters."""
    return repr(text) if len(text) <= limit else f"{text[:limit]!r}... ({len(text)} chars)"


def _ms(seconds: float) -> int:
    """A positive whole number of milliseconds (Redis refuses ``PX 0``)."""
    return max(1, math.ceil(seconds * 1000))


# -- Lua scripts ------------------------------------------------------------------------------

_ACQUIRE_LOCK = """
local cur = redis.call('GET', KEYS[1])
if cur == false or cur == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
return 0
"""

_RELEASE_LOCK = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""





_PURGE_THREADS = """
-- KEYS[1]: the by-time index; then per thread: its hash, its channel index.
-- ARGV[1]: cutoff; then per thread: its by-time member, its thread id.
local cutoff = tonumber(ARGV[1])
local removed = 0
for i = 1, (#ARGV - 1) / 2 do
  local member, thread = ARGV[2 * i], ARGV[2 * i + 1]
  local hash, channel = KEYS[2 * i], KEYS[2 * i + 1]
  local score = redis.call('ZSCORE', KEYS[1], member)
  if score and tonumber(score) <= cutoff then
    redis.call('ZREM', KEYS[1], member)
    local cs = redis.call('ZSCORE', channel, thread)
    if cs and tonumber(cs) <= cutoff then redis.call('ZREM', channel, thread) end
    removed = removed + redis.call('DEL', hash)
  end
end
return removed
"""


class RedisStore(RedisPriceKeys, RedisSettingsKeys, Store):
    """The state store in Redis. ``url``: ``redis://``, ``rediss://`` or ``unix://`` (the
    password, if any, never appears in a message). ``prefix`` namespaces every key (tests
    use one per test). ``socket_timeout`` (seconds) bounds connecting and every command.
    ``thread_ttl_s``: also expire thread contexts natively (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        clock: Callable[[], float] = time.time,
        socket_timeout: float = DEFAULT_TIMEOUT_S,
        thread_ttl_s: float | None = None,
    ) -> None:
        self.url = url
        self.location = redact_url(url)
        self.prefix = prefix
        self._clock = clock
        self._timeout = socket_timeout
        self._thread_ttl_ms = _ms(thread_ttl_s) if thread_ttl_s else None
        self._secrets = _secrets_of(url)
        try:
            # Validates the URL now (a bad port or db number is a configuration error).
            parse_url(url)
        except (ValueError, TypeError) as exc:
            raise StoreError(f"invalid Redis URL {self.location}: {self._scrub(exc)}") from None
        self._client: Redis | None = None
        self._scripts: dict[str, AsyncScript] = {}

    # -- plumbing ---------------------------------------------------------------------------
    def _scrub(self, exc: BaseException | str) -> str:
        text = str(exc)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """Redis errors as store errors: unreachable -> StoreUnavailable."""
        try:
            yield
        except rexc.AuthenticationError as exc:
            raise StoreUnavailable(
                f"the Redis store at {self.location} refused the credentials "
                f"({self._scrub(exc)}); check the password in STORE_URL"
            ) from None
        except (rexc.ConnectionError, rexc.TimeoutError, TimeoutError, OSError) as exc:
            reason = self._scrub(exc) or type(exc).__name__
            raise StoreUnavailable(
                f"the Redis store at {self.location} is unreachable ({reason}); "
                "check that Redis is running and STORE_URL points at it"
            ) from None
        except rexc.ResponseError as exc:
            text = self._scrub(exc)
            if text.startswith(_TRANSIENT_REPLIES) or isinstance(exc, rexc.ReadOnlyError):
                raise StoreUnavailable(
                    f"the Redis store at {self.location} cannot serve now: {text}"
                ) from None
            raise StoreError(f"the Redis store at {self.location} answered: {text}") from None
        except rexc.RedisError as exc:
            raise StoreError(
                f"the Redis store at {self.location} failed: {self._scrub(exc)}"
            ) from None

    @property
    def _r(self) -> Redis:
        if self._client is None:
            raise StoreError("the store is not open")
        return self._client

    def _key(self, kind: str, *parts: str) -> str:
        """``<prefix><kind>:<part>:...``; every part but the last escaped."""
        escaped = [_part(p) for p in parts[:-1]] + list(parts[-1:])
        return ":".join([self.prefix + kind, *escaped])

    async def _script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        client = self._r
        with self._errors():
            return await self._scripts[name](keys=keys, args=args, client=client)

    async def open(self) -> None:
        if self._client is not None:
            return
        pool = ConnectionPool.from_url(
            self.url,
            decode_responses=True,
            socket_timeout=self._timeout,
            socket_connect_timeout=self._timeout,
            retry=Retry(NoBackoff(), 0),
        )
        client = Redis(connection_pool=pool, retry=Retry(NoBackoff(), 0))
        try:
            with self._errors():
                await client.ping()
        except BaseException:
            await client.aclose()
            raise
        self._client = client
        self._scripts = {
            name: client.register_script(source)
            for name, source in (
                ("acquire_lock", _ACQUIRE_LOCK), ("release_lock", _RELEASE_LOCK),
                ("purge_threads", _PURGE_THREADS), *PRICE_SCRIPTS.items(),
            )
        }  # fmt: skip

    async def close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with suppress(rexc.RedisError, OSError):
                await client.aclose()

    async def ping(self) -> bool:
        if self._client is None:
            return False
        try:
            return bool(await self._client.ping())
        except Exception:  # a health check answers, it never raises
            return False

    # -- threads ----------------------------------------------------------------------------
    def _thread_key(self, key: ThreadKey) -> str:
        return self._key("thread", key.platform, key.channel, key.thread)

    def _channel_index(self, platform: str, channel: str) -> str:
        return self._key("threads:channel", platform, channel)

    async def get_thread(self, key: ThreadKey) -> ThreadContext | None:
        with self._errors():
            row = _row(await self._r.hgetall(self._thread_key(key)))
        if not row:
            return None
        try:
            request = Request.model_validate_json(row["request"])
            updated_at = float(row["updated_at"])
        except (KeyError, ValueError) as exc:
            # Written by another schema (or by hand): read as missing, said in a warning,
            # as in SQLite.
            warn_unreadable_context(key, exc)
            return None
        return ThreadContext(key, request, row.get("message_id"), updated_at)

    async def save_thread(
        self, key: ThreadKey, request: Request, message_id: str | None = None
    ) -> None:
        now = _num(self._clock())
        fields: dict[FieldT, EncodableT] = {
            "request": request_json(request),
            "updated_at": now,
        }
        if message_id is not None:
            fields["message_id"] = message_id
        hash_key = self._thread_key(key)
        channel_index = self._channel_index(key.platform, key.channel)
        member = json.dumps([key.platform, key.channel, key.thread])
        with self._errors():
            async with self._r.pipeline(transaction=True) as tx:
                tx.delete(hash_key)
                tx.hset(hash_key, mapping=fields)
                tx.zadd(channel_index, {key.thread: now})
                tx.zadd(self._key("threads", "by-time"), {member: now})
                if self._thread_ttl_ms is not None:
                    tx.pexpire(hash_key, self._thread_ttl_ms)
                    tx.pexpire(channel_index, self._thread_ttl_ms)
                await tx.execute()

    async def latest_channel_request(self, platform: str, channel: str) -> Request | None:
        index = self._channel_index(platform, channel)
        with self._errors():
            while True:
                newest = _texts(await self._r.zrevrange(index, 0, 0))
                if not newest:
                    return None
                raw = await self._r.hget(self._thread_key(ThreadKey(platform, channel,
                                                                    newest[0])), "request")
                if raw is not None:
                    break
                # The context expired natively: drop its index entry and look again.
                await self._r.zrem(index, newest[0])
        try:
            return Request.model_validate_json(raw)
        except ValueError:
            return None

    # -- events -----------------------------------------------------------------------------
    async def first_seen(self, event_id: str, ttl_s: float) -> bool:
        with self._errors():
            return bool(await self._r.set(self._key("seen", event_id), "1", nx=True,
                                          px=_ms(ttl_s)))  # fmt: skip

    # -- locks ------------------------------------------------------------------------------
    async def acquire_lock(self, name: str, owner: str, ttl_s: float) -> bool:
        got = await self._script("acquire_lock", [self._key("lock", name)], [owner, _ms(ttl_s)])
        return got == 1

    async def release_lock(self, name: str, owner: str) -> bool:
        return await self._script("release_lock", [self._key("lock", name)], [owner]) == 1

    # -- cache ------------------------------------------------------------------------------
    async def cache_get(self, key: str) -> str | None:
        with self._errors():
            value = await self._r.get(self._key("cache", key))
        return None if value is None else str(value)

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None:
        with self._errors():
            if ttl_s <= 0:
                await self._r.delete(self._key("cache", key))
            else:
                await self._r.set(self._key("cache", key), value, px=_ms(ttl_s))

    # -- counters ---------------------------------------------------------------------------
    async def hit(self, key: str, window_s: float) -> int:
        if window_s <= 0:
            raise ValueError(f"window_s must be positive, not {window_s}")
        now = self._clock()
        window = math.floor(now / window_s)
        counter = self._key("hit", _num(window_s), str(window), key)
        with self._errors():
            async with self._r.pipeline(transaction=True) as tx:
                tx.incr(counter)
                tx.pexpire(counter, _ms((window + 1) * window_s - now) + HIT_GRACE_MS)
                count, _ = await tx.execute()
        return int(count)

    # -- housekeeping -----------------------------------------------------------------------
    async def purge_expired(self, thread_ttl_s: float | None = None) -> int:
        """Delete thread contexts untouched for ``thread_ttl_s`` (everything else expires
        natively); return how many contexts went."""
        if thread_ttl_s is None:
            return 0
        cutoff = _num(self._clock() - thread_ttl_s)
        by_time = self._key("threads", "by-time")
        removed = 0
        with self._errors():
            while True:
                members = _texts(
                    await self._r.zrangebyscore(by_time, "-inf", cutoff, 0, _PURGE_BATCH)
                )
                if not members:
                    return removed
                keys, args, corrupt = [by_time], [cutoff], []
                for member in members:
                    parts = _index_member(member)
                    if parts is None:
                        corrupt.append(member)
                        continue
                    platform, channel, thread = parts
                    keys += [self._thread_key(ThreadKey(platform, channel, thread)),
                             self._channel_index(platform, channel)]  # fmt: skip
                    args += [member, thread]
                if corrupt:
                    # Dropped, or every later purge would read (and choke on) them again.
                    for member in corrupt:
                        log.warning("corrupt member of %s dropped: %s", by_time,
                                    _clip(member))  # fmt: skip
                    await self._r.zrem(by_time, *corrupt)
                if len(keys) > 1:
                    removed += int(await self._script("purge_threads", keys, args))
