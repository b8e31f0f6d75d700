"""One message for the bot as every front end hands it to :meth:`bot.service.Service.respond`:
the text, who and where, the estimate it follows, and how the platform answers the
questions only it can (may this user manage the channel?)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from engine import Request
from engine.specs import Catalog

RequestBuilder = Callable[[str, Request | None, Catalog], Request]
"""Builds the request of a message instead of the query parser: ``(text, previous
request or None, catalog)``; raises :class:`~adapters.parse.QueryError` (Discord's
structured ``/ftcost`` options, :mod:`adapters.discord.options`)."""

ManageCheck = Callable[[], Awaitable[bool | None]]
"""Asks the platform whether the asker may manage the channel (Slack's ``users.info``):
called only for ``subscribe`` / ``unsubscribe``; raises
:class:`~bot.price_service.PermissionUnchecked` when the platform can't answer."""


@dataclass(frozen=True, slots=True)
class Ask:
    """One message for the bot, once a front end has done its platform work (who, where,
    which estimate it answers): everything :meth:`Service.respond` needs."""

    text: str
    platform: str
    channel: str | None = None
    """Whose settings and price announcements apply: a thread's parent channel."""
    user: str | None = None
    workspace: str | None = None
    """``slack:<team id>`` / ``discord:<guild id>``: whose team price sheet applies."""
    previous: Request | None = None
    """The estimate a follow-up changes; None for a new question."""
    context_lost: bool = False
    """A follow-up whose estimate the store could not give (it is unreachable)."""
    context_expired: bool = False
    """A follow-up under one of the bot's own estimates whose stored request is gone:
    older than the store keeps threads (``store.thread_ttl_days``), lost (a store restarted
    without its data) or unreadable (written by another version)."""
    may_manage: bool | ManageCheck | None = None
    """Whether the asker may change the channel's price announcements: a known answer,
    a check to run only when it matters, or None (the platform can't tell: anyone may)."""
    build: RequestBuilder | None = None
    """Structured options instead of the parser (Discord): then the text is no command."""
    command: str = "/ftcost"
    """The slash command's name, for the examples replies give."""
