"""The estimate under a price announcement.

A price announcement (:mod:`bot.announce`) ends with the effect on a reference estimate
(the channel's last, or ``70b qlora 50M tokens``). It is not an estimate the bot posted,
so its thread has no stored context; the fan-out keeps the reference request beside the
message instead (:func:`keep_announcement_request`), in the store's cache for as long as
the store keeps threads. A reply there that reads as a change of it ("what if h200?")
changes that estimate, as in any estimate's thread; chatter about the prices goes
unanswered. Kept in the cache, not as the thread's context: the channel's last estimate
(the next announcement's reference) stays one somebody asked for.
"""

from __future__ import annotations

import logging
from typing import Protocol

from bot.store_types import ThreadKey, request_json
from engine import Request

log = logging.getLogger("ftcost.announce")


class AnnouncementCache(Protocol):
    """The store's string cache (``bot.store.Store.cache_get`` / ``cache_put``)."""

    async def cache_get(self, key: str) -> str | None: ...

    async def cache_put(self, key: str, value: str, ttl_s: float) -> None: ...


def announcement_cache_key(key: ThreadKey) -> str:
    """The cache key of the reference request under the announcement ``key`` names (its
    thread is the announcement's message id)."""
    return f"announcement:{key.platform}:{key.channel}:{key.thread}"


async def keep_announcement_request(
    store: AnnouncementCache, key: ThreadKey, request: Request, ttl_s: float
) -> None:
    """Keep the reference ``request`` beside the announcement ``key`` names for ``ttl_s``
    seconds (the store's ``thread_ttl_days``). The announcement is posted already, so a
    store that fails here costs only the thread's follow-ups: logged, not raised."""
    try:
        await store.cache_put(announcement_cache_key(key), request_json(request), ttl_s)
    except Exception as exc:  # the post stands whatever the store does
        log.warning("announcement thread not kept channel=%s:%s error=%s", key.platform,
                    key.channel, type(exc).__name__)  # fmt: skip


async def announcement_request(store: AnnouncementCache | None, key: ThreadKey) -> Request | None:
    """The reference request kept beside the announcement whose thread ``key`` is; None
    for any other thread, past the store's ``thread_ttl_days``, with no store, or when the
    kept request no longer validates. Raises :class:`StoreUnavailable` when the store
    can't be reached (the caller answers as during any store outage)."""
    if store is None:
        return None
    kept = await store.cache_get(announcement_cache_key(key))
    if kept is None:
        return None
    try:
        return Request.model_validate_json(kept)
    except ValueError:
        log.warning("announcement thread unreadable channel=%s:%s", key.platform, key.channel)
        return None


__all__ = [
    "AnnouncementCache",
    "announcement_cache_key",
    "announcement_request",
    "keep_announcement_request",
]
