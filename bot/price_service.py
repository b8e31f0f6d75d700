"""``/ftcost prices``, ``subscribe`` and ``unsubscribe``: platform-neutral handling over
the store and the prices in force. The shared service routes these words here; the
adapters say where the command came from and whether the user may manage the channel.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from bot.price_commands import (
    CommandError,
    PricesView,
    describe_subscription,
    parse_subscribe,
    prices_view,
)
from bot.price_store import PriceStore, Subscription, UnreadableRecord, warn_unreadable
from bot.price_words import price_command
from bot.prices import PriceBook
from bot.scheduler import Clock
from engine.specs import Catalog

DENIED = (
    "Only workspace admins can change this channel's price announcements on Slack, and "
    "members who can manage the channel (or the server) on Discord."
)
PERMISSION_UNCHECKED = (
    "I couldn't check whether you may change this channel's price announcements (the "
    "platform did not answer), so nothing was changed. Please try again in a minute."
)
"""The asker's reply when the platform's permission check failed (fail closed)."""
UNREADABLE_SUBSCRIPTION = (
    "This channel's announcement settings are stored but could not be read, so it gets no "
    "announcements until they are set again: `/ftcost subscribe [min change %] [cards...]` "
    "replaces them, `/ftcost unsubscribe` removes them."
)


class PermissionUnchecked(Exception):
    """A front end could not tell whether the asker may manage the channel (Slack's
    ``users.info`` rate-limited or down): the change is refused and the asker told
    :data:`PERMISSION_UNCHECKED`, never opened to everyone. The message is an error code,
    never a token."""


class PriceReplyKind(StrEnum):
    PRICES = "prices"
    SUBSCRIBED = "subscribed"
    UNSUBSCRIBED = "unsubscribed"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class PriceContext:
    platform: str
    channel: str | None
    workspace: str | None
    """``slack:<team id>`` / ``discord:<guild id>`` (None in a DM)."""
    user: str | None = None
    can_manage: bool | None = None
    """Whether the user may manage the channel's subscription; None when the platform
    can't tell (then anyone may, as documented)."""


@dataclass(frozen=True, slots=True)
class PriceReply:
    kind: PriceReplyKind
    text: str
    view: PricesView | None = None
    subscription: str | None = None
    """This channel's subscription in words (None: not subscribed)."""



class PriceCommands:
    def __init__(self, store: PriceStore | None, book: PriceBook, clock: Clock) -> None:
        self.store = store
        self.book = book
        self.clock = clock

    @property
    def catalog(self) -> Catalog:
        return self.book.base

    async def handle(self, text: str, ctx: PriceContext) -> PriceReply | None:
        """The reply to a price command, or None when ``text`` is not one."""
        parsed = price_command(text)
        if parsed is None:
            return None
        word, rest = parsed
        if word == "prices":
            return await self.prices(ctx)
        if ctx.channel is None:
            return PriceReply(PriceReplyKind.ERROR, "Price announcements need a channel: "
                              "subscribe in the channel that should get them.")
        if self.store is None:
            return PriceReply(PriceReplyKind.ERROR, "Price announcements need the bot's "
                              "store, and this bot runs without one.")
        if ctx.can_manage is False:
            return PriceReply(PriceReplyKind.ERROR, DENIED)
        if word == "unsubscribe":
            return await self.unsubscribe(ctx)
        return await self.subscribe(rest, ctx)

    async def _subscription(self, ctx: PriceContext) -> Subscription | None:
        """The channel's subscription; raises :class:`UnreadableRecord` for one the store
        has but cannot read."""
        if self.store is None or ctx.channel is None:
            return None
        return await self.store.get_subscription(ctx.platform, ctx.channel)

    async def prices(self, ctx: PriceContext) -> PriceReply:
        view = prices_view(
            self.book.snapshot, self.catalog, self.clock.now(), self.book.choice, ctx.workspace
        )
        try:
            sub = await self._subscription(ctx)
        except UnreadableRecord as exc:  # told to the asker, logged, the record kept
            warn_unreadable(f"subscription of {ctx.platform} channel {ctx.channel!r}", exc)
            view = replace(view, summary=f"{view.summary} {UNREADABLE_SUBSCRIPTION}")
            sub = None
        words = describe_subscription(sub, self.catalog) if sub else None
        return PriceReply(PriceReplyKind.PRICES, view.summary, view, words)

    async def subscribe(self, args: str, ctx: PriceContext) -> PriceReply:
        assert self.store is not None and ctx.channel is not None
        try:
            options = parse_subscribe(args, self.catalog)
        except CommandError as exc:
            return PriceReply(PriceReplyKind.ERROR, str(exc))
        sub = Subscription(
            platform=ctx.platform,
            channel=ctx.channel,
            workspace=ctx.workspace or f"{ctx.platform}:",
            min_change_pct=options.min_change_pct,
            cards=options.cards,
            created_by=ctx.user,
            created_at=self.clock.time(),
        )
        await self.store.save_subscription(sub)
        words = describe_subscription(sub, self.catalog)
        return PriceReply(
            PriceReplyKind.SUBSCRIBED,
            f"This channel will get an announcement after a price refresh with {words}. "
            "`/ftcost unsubscribe` stops them; `/ftcost prices` shows the current table.",
            subscription=words,
        )

    async def unsubscribe(self, ctx: PriceContext) -> PriceReply:
        assert self.store is not None and ctx.channel is not None
        removed = await self.store.remove_subscription(ctx.platform, ctx.channel)
        text = (
            "This channel will get no more price announcements."
            if removed
            else "This channel was not subscribed to price announcements."
        )
        return PriceReply(PriceReplyKind.UNSUBSCRIBED, text)
