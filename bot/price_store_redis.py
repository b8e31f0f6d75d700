"""The price records of :class:`bot.price_store.PriceStore` in Redis: a mixin for
``bot.store_redis.RedisStore`` (its module docstring has the key layout), as
:mod:`bot.price_store_sqlite` is for the SQLite store.

A snapshot save (insert-if-absent), marking a record if it exists, an announcement claim
(insert-if-absent, or re-claim of a ``failed`` record with attempts left) and its finish
are Lua scripts (:data:`PRICE_SCRIPTS`), so replicas never both claim one channel.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any, cast

from redis.typing import EncodableT, FieldT

from bot.price_store import (
    AnnouncementRecord,
    AnnouncementState,
    StoredSnapshot,
    Subscription,
    UnreadableRecord,
    snapshot_record,
    subscription_record,
    warn_unreadable,
)


def hash_text(reply: Mapping[Any, Any]) -> dict[str, str]:
    """A hash reply as text. redis-py types every reply ``bytes | str`` whatever the client's
    ``decode_responses``; this store's client decodes (:meth:`RedisStore.open`), so replies are
    ``str`` and this only says so, once, for the type checker."""
    return cast(dict[str, str], reply)


def list_text(reply: list[Any]) -> list[str]:
    """A list reply (members without scores) as text; see :func:`hash_text`."""
    return cast(list[str], reply)


def num_text(value: float) -> str:
    """A float as the shortest string that reads back to the same float."""
    return repr(float(value))



# -- Lua scripts ------------------------------------------------------------------------------

_INSERT_SNAPSHOT = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('ZADD', KEYS[2], ARGV[1], ARGV[2])
return 1
"""

_SET_IF_EXISTS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

_CLAIM = """
local state = redis.call('HGET', KEYS[1], 'state')
if state == false then
  redis.call('HSET', KEYS[1], 'state', 'sending', 'attempts', 1, 'claimed_at', ARGV[1])
  redis.call('SADD', KEYS[2], ARGV[3])
elseif state == 'failed'
    and tonumber(redis.call('HGET', KEYS[1], 'attempts')) < tonumber(ARGV[2]) then
  redis.call('HINCRBY', KEYS[1], 'attempts', 1)
  redis.call('HSET', KEYS[1], 'state', 'sending', 'claimed_at', ARGV[1])
  redis.call('HDEL', KEYS[1], 'finished_at', 'detail')
else
  return false
end
return redis.call('HGETALL', KEYS[1])
"""

_FINISH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'finished_at', ARGV[2])
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'message_id', ARGV[4])
else redis.call('HDEL', KEYS[1], 'message_id') end
if ARGV[5] == '1' then redis.call('HSET', KEYS[1], 'detail', ARGV[6])
else redis.call('HDEL', KEYS[1], 'detail') end
return 1
"""

PRICE_SCRIPTS: dict[str, str] = {
    "insert_snapshot": _INSERT_SNAPSHOT,
    "set_if_exists": _SET_IF_EXISTS,
    "claim": _CLAIM,
    "finish": _FINISH,
}
"""Script name -> Lua source; ``RedisStore.open`` registers them with its own."""


class RedisPriceKeys:
    """Mixin for ``RedisStore``: the :class:`~bot.price_store.PriceStore` methods."""

    _r: Any
    _clock: Callable[[], float]
    _key: Callable[..., str]
    _errors: Callable[[], AbstractContextManager[None]]
    _script: Callable[[str, list[str], list[Any]], Awaitable[Any]]

    # -- price snapshots --------------------------------------------------------------------
    def _snapshot_key(self, snapshot_id: str) -> str:
        return self._key("price:snapshot", snapshot_id)

    async def save_price_snapshot(
        self, snapshot_id: str, taken_at: float, previous_id: str | None, document: str
    ) -> None:
        fields: list[str] = ["taken_at", num_text(taken_at), "document", document, "announced", "0"]
        if previous_id is not None:
            fields += ["previous_id", previous_id]
        await self._script("insert_snapshot",
                           [self._snapshot_key(snapshot_id), self._key("price", "snapshots")],
                           [num_text(taken_at), snapshot_id, *fields])  # fmt: skip

    def _snapshot(self, snapshot_id: str, row: dict[str, str]) -> StoredSnapshot | None:
        if not row:
            return None
        try:
            taken_at = float(row["taken_at"])
            document = row["document"]
        except (KeyError, ValueError):
            warn_unreadable(f"price snapshot {snapshot_id!r}",
                            UnreadableRecord("taken_at or the document is missing or bad"))
            return None
        return StoredSnapshot(snapshot_id, taken_at, row.get("previous_id"), document,
                              row.get("announced") == "1")  # fmt: skip

    async def latest_price_snapshot(self) -> StoredSnapshot | None:
        skipped = 0
        while True:  # newest first, past any unreadable record (kept as it is)
            with self._errors():
                newest = list_text(await self._r.zrevrange(
                    self._key("price", "snapshots"), skipped, skipped))  # fmt: skip
                if not newest:
                    return None
                row = hash_text(await self._r.hgetall(self._snapshot_key(newest[0])))
            if row:
                try:
                    return snapshot_record(newest[0], row.get("taken_at"), row.get("previous_id"),
                                           row.get("document"), row.get("announced") == "1")
                except UnreadableRecord as exc:
                    warn_unreadable(f"price snapshot {newest[0]!r}", exc)
            skipped += 1

    async def get_price_snapshot(self, snapshot_id: str) -> StoredSnapshot | None:
        with self._errors():
            row = hash_text(await self._r.hgetall(self._snapshot_key(snapshot_id)))
        return self._snapshot(snapshot_id, row)

    async def mark_snapshot_announced(self, snapshot_id: str) -> None:
        await self._script("set_if_exists", [self._snapshot_key(snapshot_id)],
                           ["announced", "1"])  # fmt: skip

    # -- subscriptions ----------------------------------------------------------------------
    def _subscription_key(self, platform: str, channel: str) -> str:
        return self._key("price:sub", platform, channel)

    async def save_subscription(self, subscription: Subscription) -> None:
        s = subscription
        fields: dict[FieldT, EncodableT] = {
            "workspace": s.workspace, "min_change_pct": num_text(s.min_change_pct),
            "cards": json.dumps(list(s.cards)), "created_at": num_text(s.created_at),
        }  # fmt: skip
        if s.created_by is not None:
            fields["created_by"] = s.created_by
        if s.gone is not None:
            fields["gone"] = s.gone
        key = self._subscription_key(s.platform, s.channel)
        with self._errors():
            async with self._r.pipeline(transaction=True) as tx:
                tx.delete(key)
                tx.hset(key, mapping=fields)
                tx.zadd(self._key("price", "subs"),
                        {json.dumps([s.platform, s.channel]): s.created_at})  # fmt: skip
                await tx.execute()

    async def remove_subscription(self, platform: str, channel: str) -> bool:
        with self._errors():
            async with self._r.pipeline(transaction=True) as tx:
                tx.delete(self._subscription_key(platform, channel))
                tx.zrem(self._key("price", "subs"), json.dumps([platform, channel]))
                deleted, _ = await tx.execute()
        return bool(deleted)

    @staticmethod
    def _subscription(platform: str, channel: str, row: dict[str, str]) -> Subscription:
        """Raises :class:`UnreadableRecord` for a hash that cannot be read."""
        return subscription_record(platform, channel, row.get("workspace"),
                                   row.get("min_change_pct"), row.get("cards"),
                                   row.get("created_by"), row.get("created_at"),
                                   row.get("gone"))  # fmt: skip

    async def get_subscription(self, platform: str, channel: str) -> Subscription | None:
        with self._errors():
            row = hash_text(await self._r.hgetall(self._subscription_key(platform, channel)))
        return self._subscription(platform, channel, row) if row else None

    @staticmethod
    def _member(member: str) -> tuple[str, str] | None:
        """A ``price:subs`` member (``["slack", "C1"]``), or None when it cannot be read."""
        try:
            platform, channel = json.loads(member)
        except (ValueError, TypeError, RecursionError):
            return None
        return (platform, channel) if isinstance(platform, str) and isinstance(channel, str) \
            else None

    async def list_subscriptions(self) -> list[Subscription]:
        with self._errors():
            members = list_text(await self._r.zrange(self._key("price", "subs"), 0, -1))
            ids = []
            for member in members:
                if (pair := self._member(member)) is None:
                    warn_unreadable("subscription index entry",
                                    UnreadableRecord("it is not a JSON [platform, channel]"))
                else:
                    ids.append(pair)
            async with self._r.pipeline(transaction=False) as p:
                for platform, channel in ids:
                    p.hgetall(self._subscription_key(platform, channel))
                rows = await p.execute()
        subs = []
        for (platform, channel), row in zip(ids, rows, strict=True):
            if not row:
                continue
            try:
                subs.append(self._subscription(platform, channel, row))
            except UnreadableRecord as exc:
                warn_unreadable(f"subscription of {platform} channel {channel!r}", exc)
        return sorted(subs, key=lambda s: (s.created_at, s.platform, s.channel))

    async def mark_subscription_gone(self, platform: str, channel: str, reason: str) -> None:
        await self._script("set_if_exists", [self._subscription_key(platform, channel)],
                           ["gone", reason])  # fmt: skip

    # -- announcements ----------------------------------------------------------------------
    def _announcement_key(self, snapshot_id: str, platform: str, channel: str) -> str:
        return self._key("price:ann", snapshot_id, platform, channel)

    @staticmethod
    def _announcement(
        snapshot_id: str, platform: str, channel: str, row: dict[str, str]
    ) -> AnnouncementRecord:
        """Raises :class:`UnreadableRecord` for a hash that cannot be read: a state this
        version does not know, attempts / times missing or not numbers."""
        finished = row.get("finished_at")
        try:
            return AnnouncementRecord(
                snapshot_id, platform, channel, AnnouncementState(row["state"]),
                int(row["attempts"]), float(row["claimed_at"]),
                None if finished is None else float(finished), row.get("message_id"),
                row.get("detail"),
            )  # fmt: skip
        except (KeyError, ValueError, TypeError):
            raise UnreadableRecord(
                "its state, attempts, claimed_at or finished_at is missing or bad"
            ) from None

    async def claim_announcement(
        self, snapshot_id: str, platform: str, channel: str, max_attempts: int
    ) -> AnnouncementRecord | None:
        reply = await self._script(
            "claim",
            [self._announcement_key(snapshot_id, platform, channel),
             self._key("price:anns", snapshot_id)],
            [num_text(self._clock()), max_attempts, json.dumps([platform, channel])],
        )  # fmt: skip
        if not reply:
            return None
        row = dict(zip(reply[::2], reply[1::2], strict=True))
        return self._announcement(snapshot_id, platform, channel, row)

    async def finish_announcement(
        self,
        snapshot_id: str,
        platform: str,
        channel: str,
        state: AnnouncementState,
        message_id: str | None = None,
        detail: str | None = None,
    ) -> None:
        await self._script(
            "finish", [self._announcement_key(snapshot_id, platform, channel)],
            [state.value, num_text(self._clock()), "0" if message_id is None else "1",
             message_id or "", "0" if detail is None else "1", detail or ""],
        )  # fmt: skip

    async def list_announcements(self, snapshot_id: str) -> list[AnnouncementRecord]:
        """The snapshot's announcement records; an unreadable index entry or record is
        skipped with a logged warning and kept (its channel is not re-claimed: the claim
        script re-claims only a ``failed`` record)."""
        with self._errors():
            members = list_text(list(await self._r.smembers(self._key("price:anns", snapshot_id))))
            ids = []
            for member in members:
                if (pair := self._member(member)) is None:
                    warn_unreadable(f"announcement index entry of snapshot {snapshot_id!r}",
                                    UnreadableRecord("it is not a JSON [platform, channel]"))
                else:
                    ids.append(pair)
            ids.sort()
            async with self._r.pipeline(transaction=False) as p:
                for platform, channel in ids:
                    p.hgetall(self._announcement_key(snapshot_id, platform, channel))
                rows = await p.execute()
        records = []
        for (platform, channel), row in zip(ids, rows, strict=True):
            if not row:
                continue
            try:
                records.append(self._announcement(snapshot_id, platform, channel, row))
            except UnreadableRecord as exc:
                warn_unreadable(f"announcement of snapshot {snapshot_id!r} to {platform} "
                                f"channel {channel!r}", exc)  # fmt: skip
        return records
