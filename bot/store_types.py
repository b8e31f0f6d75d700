"""The store's value types and errors (thread keys and contexts, ``StoreUnavailable``),
apart from :class:`bot.store.Store` itself so the conversation can name them without
importing a backend, the price records or their models (the terminal's start-up).
``bot.store`` re-exports every name here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Final

from engine import Request

DEFAULT_THREAD_TTL_DAYS: Final = 90.0
"""How long a thread's context is kept untouched (``store.thread_ttl_days``'s default)."""


@dataclass(frozen=True, slots=True)
class ThreadKey:
    """Where a conversation lives: ``("slack", channel id, thread ts)`` or
    ``("discord", channel id, thread/message id)``."""

    platform: str
    channel: str
    thread: str


@dataclass(frozen=True, slots=True)
class ThreadContext:
    key: ThreadKey
    request: Request
    message_id: str | None
    """The platform id of the message holding the thread's latest estimate."""
    updated_at: float


class StoreError(Exception):
    """The store cannot be opened or used (a message for the operator)."""


class StoreUnavailable(StoreError):
    """The backend cannot be reached right now (connection refused or reset, timeout,
    a server still loading). Transient: callers catch it to degrade gracefully (answer
    without a thread context, skip a rate limit, ...), and the next call tries again."""


def request_json(request: Request) -> str:
    """``request`` as compact JSON that reads back with the same fields said: what the
    user said (even a default, which a framework profile must not then override) plus
    anything else not at its default. A full dump would read back with every field said,
    so no framework default could apply to a follow-up on a stored thread."""
    return json.dumps(
        {
            **request.model_dump(mode="json", exclude_defaults=True),
            **request.model_dump(mode="json", exclude_unset=True, exclude_none=True),
        },
        separators=(",", ":"),
    )


def count_unavailable(operation: str) -> None:
    """Count a store call that found the store unreachable
    (``ftcost_store_unavailable_total`` by ``operation``). :mod:`bot.metrics` is imported
    on first use, so the terminal, which has no store, never loads prometheus-client."""
    from bot.metrics import record_store_unavailable

    record_store_unavailable(operation)
