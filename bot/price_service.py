"""``/ftcost prices``, ``subscribe`` and ``unsubscribe``: platform-neutral handling over
the store and the prices in force. The shared service routes these words here; the
adapters say where the command came from and whether the user may manage the channel.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from bot.clock import Clock
from bot.price_commands import (
    CommandError,
    PricesView,
    describe_subscription,
    parse_price_cards,
    parse_subscribe,
    prices_view,
)
from bot.price_store import PriceStore, Subscription, UnreadableRecord, warn_unreadable
from bot.price_words import price_command
from bot.prices import PriceBook
from catalog.echo import shown
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
DEFAULT_COMMAND = "/ftcost"
"""The slash command replies name when the front end names none (Slack may configure
another, e.g. ``/cost``)."""
UNSUBSCRIBE_FILLER = frozenset({"all", "everything", "please"})
"""Words after ``unsubscribe`` that narrow nothing: it always removes the whole
subscription."""


def unreadable_subscription(command: str = DEFAULT_COMMAND) -> str:
    """What ``prices`` says in a channel whose stored subscription can't be read."""
    return (
        "This channel's announcement settings are stored but could not be read, so it gets "
        f"no announcements until they are set again: `{command} subscribe [min change %] "
        f"[cards...]` replaces them, `{command} unsubscribe` removes them."
    )


def unsubscribe_refusal(args: str, command: str = DEFAULT_COMMAND) -> str | None:
    """Why ``unsubscribe h100`` changes nothing (it would drop the whole subscription, not
    the card), with what to send instead; None when nothing narrows it (``unsubscribe``,
    ``unsubscribe all``)."""
    words = [w.strip("?!.,") for w in args.lower().split()]
    if not [w for w in words if w and w not in UNSUBSCRIBE_FILLER]:
        return None
    return (
        f'Nothing was changed: `{command} unsubscribe` stops every price announcement in this '
        f'channel and takes no words after it ("{shown(args, 40)}"). Send `{command} '
        f"unsubscribe` alone to stop them all; to be told about fewer cards, subscribe again "
        f"with the ones to keep (`{command} subscribe 10% a100`), which replaces the options."
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

    async def handle(
        self, text: str, ctx: PriceContext, command: str = DEFAULT_COMMAND
    ) -> PriceReply | None:
        """The reply to a price command, or None when ``text`` is not one. ``command`` is
        the slash command the replies name (``/ftcost``; a Slack app may use ``/cost``)."""
        parsed = price_command(text)
        if parsed is None:
            return None
        word, rest = parsed
        if word == "prices":
            return await self.prices(ctx, rest, command)
        if ctx.channel is None:
            return PriceReply(PriceReplyKind.ERROR, "Price announcements need a channel: "
                              "subscribe in the channel that should get them.")
        if self.store is None:
            return PriceReply(PriceReplyKind.ERROR, "Price announcements need the bot's "
                              "store, and this bot runs without one.")
        if ctx.can_manage is False:
            return PriceReply(PriceReplyKind.ERROR, DENIED)
        if word == "unsubscribe":
            return await self.unsubscribe(ctx, rest, command)
        return await self.subscribe(rest, ctx, command)

    async def _subscription(self, ctx: PriceContext) -> Subscription | None:
        """The channel's subscription; raises :class:`UnreadableRecord` for one the store
        has but cannot read."""
        if self.store is None or ctx.channel is None:
            return None
        return await self.store.get_subscription(ctx.platform, ctx.channel)

    async def prices(
        self, ctx: PriceContext, args: str = "", command: str = DEFAULT_COMMAND
    ) -> PriceReply:
        """The table in force, only the rows of the cards ``args`` names (``h100 a100``)
        when it names some, with this channel's subscription."""
        try:
            cards = parse_price_cards(args, self.catalog, command)
        except CommandError as exc:
            return PriceReply(PriceReplyKind.ERROR, str(exc))
        view = prices_view(self.book.snapshot, self.catalog, self.clock.now(),
                           self.book.choice, ctx.workspace, cards)  # fmt: skip
        if cards:
            view = replace(view, summary=f"{view.summary} Only {', '.join(cards)} shown: "
                           f"`{command} prices` shows every card.")  # fmt: skip
        try:
            sub = await self._subscription(ctx)
        except UnreadableRecord as exc:  # told to the asker, logged, the record kept
            warn_unreadable(f"subscription of {ctx.platform} channel {ctx.channel!r}", exc)
            view = replace(view, summary=f"{view.summary} {unreadable_subscription(command)}")
            sub = None
        words = describe_subscription(sub, self.catalog) if sub else None
        return PriceReply(PriceReplyKind.PRICES, view.summary, view, words)

    async def subscribe(
        self, args: str, ctx: PriceContext, command: str = DEFAULT_COMMAND
    ) -> PriceReply:
        assert self.store is not None and ctx.channel is not None
        try:
            options = parse_subscribe(args, self.catalog, command)
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
            f"`{command} unsubscribe` stops them; `{command} prices` shows the current table.",
            subscription=words,
        )

    async def unsubscribe(
        self, ctx: PriceContext, args: str = "", command: str = DEFAULT_COMMAND
    ) -> PriceReply:
        """Removes this channel's subscription; words after ``unsubscribe`` that would
        narrow it (``h100``) are refused and nothing is changed."""
        assert self.store is not None and ctx.channel is not None
        if (refusal := unsubscribe_refusal(args, command)) is not None:
            return PriceReply(PriceReplyKind.ERROR, refusal)
        removed = await self.store.remove_subscription(ctx.platform, ctx.channel)
        text = (
            "This channel will get no more price announcements."
            if removed
            else "This channel was not subscribed to price announcements."
        )
        return PriceReply(PriceReplyKind.UNSUBSCRIBED, text)
