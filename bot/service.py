"""The platform-neutral bot: text in, a :class:`Reply` out.

Every chat front end (Slack now, Discord next) does only platform work: receive,
acknowledge, render a :class:`Reply`, post, and tell the service where the answer
landed. The service parses (a new query or a follow-up on a thread's last request),
runs the estimator, builds the shared report and keeps thread contexts in the store.

>>> svc = Service()
>>> svc.answer("8b qlora 10M tokens").kind
<ReplyKind.ESTIMATE: 'estimate'>
>>> svc.answer("help").kind
<ReplyKind.HELP: 'help'>

The estimator is synchronous and CPU-only (a few milliseconds), so :meth:`Service.answer`
is a plain function; the async methods add the store around it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from adapters.help import EXAMPLES, QUERY_HELP
from adapters.listings import gpu_listing, model_listing
from adapters.parse import QueryError, apply_followup, parse_query
from adapters.report import METHOD_LABELS, Report, build_report, fmt_tokens
from bot.metrics import record_store_unavailable
from bot.price_service import PriceCommands, PriceContext, PriceReply
from bot.prices import PriceBook
from bot.ratelimit import RateLimiter, limited_message
from bot.scheduler import Clock, SystemClock
from bot.store import Store, StoreUnavailable, ThreadContext, ThreadKey
from catalog.loader import default_catalog
from engine import Method, Request, estimate
from engine.specs import Catalog

T = TypeVar("T")

log = logging.getLogger("ftcost.bot")

CONTEXT_UNAVAILABLE_NOTE = (
    "Context unavailable: I can't reach my store right now, so this is a fresh estimate "
    "from your message alone, not a change to the estimate above."
)

HELP_WORDS = frozenset({"", "help", "?", "-h", "--help", "usage"})
MODELS_WORDS = frozenset({"models", "model", "list models", "models list"})
GPUS_WORDS = frozenset({"gpus", "gpu", "cards", "list gpus", "gpus list"})
NEW_PREFIXES = ("new ", "new:")
"""In a thread, ``new 8b lora`` starts over instead of changing the last request."""


class ReplyKind(StrEnum):
    ESTIMATE = "estimate"
    HELP = "help"
    MODELS = "models"
    GPUS = "gpus"
    ERROR = "error"
    PRICES = "prices"
    """``prices`` / ``subscribe`` / ``unsubscribe``: see :attr:`Reply.prices`."""
    LIMITED = "limited"
    """The per-user rate limit refused this one (``text`` says when to retry)."""


class Trigger(StrEnum):
    """What made the bot answer (for logs and for where the answer goes)."""

    COMMAND = "command"
    MENTION = "mention"
    FOLLOWUP = "followup"
    BUTTON = "button"


@dataclass(frozen=True, slots=True)
class Context:
    """Where a message came from. ``thread`` is set for messages inside a thread; with
    ``followup=True`` the text changes that thread's last request."""

    platform: str
    channel: str | None = None
    thread: str | None = None
    user: str | None = None
    followup: bool = False
    workspace: str | None = None
    """``slack:<team id>`` / ``discord:<guild id>``: whose team price sheet applies."""
    can_manage: bool | None = None
    """Whether the user may change the channel's price announcements (None: unknown,
    anyone may)."""

    @property
    def key(self) -> ThreadKey | None:
        if self.channel is None or self.thread is None:
            return None
        return ThreadKey(self.platform, self.channel, self.thread)


@dataclass(frozen=True, slots=True)
class Reply:
    """What to show. Renderers escape every string themselves: nothing here is
    pre-formatted for a platform.

    * ``estimate``: ``report`` and ``request`` (the new thread context); for a
      follow-up or button also ``previous`` and ``changes`` (``"seq 2,048 → 8,192"``).
    * ``help`` / ``models`` / ``gpus``: ``text`` (monospace-friendly plain text) and
      ``title``; ``examples`` for help.
    * ``error``: ``text`` is the user-facing message (names the bad word, the nearest
      known ones and one example); ``word`` and ``suggestions`` as the parser gave them.
    """

    kind: ReplyKind
    text: str = ""
    title: str = ""
    report: Report | None = None
    request: Request | None = None
    previous: Request | None = None
    changes: list[str] = field(default_factory=list)
    word: str | None = None
    suggestions: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    prices: PriceReply | None = None
    """For ``prices`` replies: the price command's reply (view, subscription)."""

    @property
    def is_public(self) -> bool:
        """Estimates go to the channel; help, listings and errors to the asker only."""
        return self.kind is ReplyKind.ESTIMATE


# ------------------------------------------------------------------------------------------
# describing what a follow-up changed

_FIELD_LABELS: dict[str, str] = {
    "model": "model",
    "method": "method",
    "precision": "precision",
    "lora_rank": "rank",
    "lora_targets": "LoRA targets",
    "optimizer": "optimizer",
    "state_precision": "states",
    "offload": "offload",
    "seq_len": "seq",
    "micro_batch": "batch",
    "grad_checkpointing": "checkpointing",
    "flash_attention": "flash attention",
    "fused_ce": "fused CE",
    "double_quant": "double quant",
    "sharding": "sharding",
    "gpu": "card",
    "gpu_count": "cards",
    "dataset_tokens": "tokens",
    "epochs": "epochs",
    "mfu": "MFU",
    "price_per_gpu_hour": "price",
    "mode": "mode",
}


def _show_value(name: str, value: Any) -> str:
    if value is None:
        return {"method": "default (LoRA)", "gpu_count": "auto", "gpu": "any"}.get(name, "unset")
    if isinstance(value, bool):
        return "on" if value else "off"
    if name == "method":
        return METHOD_LABELS[Method(value)]
    if name == "dataset_tokens":
        return fmt_tokens(value)
    if name == "mfu":
        return f"{value:.0%}"
    if name == "price_per_gpu_hour":
        return f"${value:.2f}/hr"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:g}"
    return str(getattr(value, "value", value))


def describe_changes(previous: Request, new: Request) -> list[str]:
    """``["seq 2,048 → 8,192", "method LoRA → Full"]``: the fields that differ."""
    out = []
    for name, label in _FIELD_LABELS.items():
        old, cur = getattr(previous, name), getattr(new, name)
        if old != cur:
            out.append(f"{label} {_show_value(name, old)} → {_show_value(name, cur)}")
    return out


# ------------------------------------------------------------------------------------------


def request_to_compact_json(request: Request) -> str:
    """The request's non-default fields as compact JSON (for button values)."""
    return json.dumps(
        request.model_dump(mode="json", exclude_defaults=True), separators=(",", ":")
    )


def request_from_json(text: str) -> Request:
    return Request.model_validate_json(text)


class Service:
    """The bot's brain, shared by every platform.

    ``store`` may be None for stateless use (no follow-ups); ``catalog`` defaults to
    the shipped one; ``workers`` > 0 runs estimates on that many threads (see :meth:`run`).
    """

    def __init__(
        self,
        store: Store | None = None,
        catalog: Catalog | None = None,
        *,
        workers: int = 0,
        book: PriceBook | None = None,
        clock: Clock | None = None,
        limiter: RateLimiter | None = None,
    ) -> None:
        self.store = store
        self.limiter = limiter
        """The per-user rate limit (None: no limit, e.g. the terminal and most tests)."""
        if catalog is None:
            catalog = book.base if book is not None else default_catalog()
        self.catalog = catalog
        self.book = book if book is not None else PriceBook(catalog)
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.prices = PriceCommands(store, self.book, self.clock)
        self._executor = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ftcost-estimate")
            if workers > 0
            else None
        )

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a synchronous method (:meth:`answer`, :meth:`estimate`) for async callers:
        inline (``workers=0``, the default: it takes a few milliseconds of CPU, and a
        thread would only compete with the event loop for the GIL) or on the service's
        worker threads."""
        if self._executor is None:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    # -- synchronous core -------------------------------------------------------------------
    def catalog_for(self, workspace: str | None = None) -> Catalog:
        """The catalog with the prices in force in ``workspace``."""
        return self.book.catalog_for(workspace)

    def answer(
        self, text: str, previous: Request | None = None, workspace: str | None = None
    ) -> Reply:
        """Parse ``text`` (a follow-up of ``previous`` when given), estimate, report."""
        catalog = self.catalog_for(workspace)
        words = " ".join(str(text).split())
        low = words.lower().rstrip("?!. ")
        if low in HELP_WORDS:
            return Reply(ReplyKind.HELP, text=QUERY_HELP, title="ftcost help",
                         examples=list(EXAMPLES))
        if low in MODELS_WORDS:
            return Reply(ReplyKind.MODELS, text=model_listing(self.catalog), title="Models")
        if low in GPUS_WORDS:
            return Reply(ReplyKind.GPUS, text=gpu_listing(catalog), title="GPUs")
        if previous is not None and low.startswith(NEW_PREFIXES):
            words, previous = words[4:].strip(), None
        try:
            if previous is None:
                request = parse_query(words, catalog)
            else:
                request = apply_followup(previous, words, catalog)
        except QueryError as err:
            return Reply(
                ReplyKind.ERROR, text=str(err), word=err.word, suggestions=list(err.suggestions)
            )
        return self.estimate(request, previous, workspace)

    def estimate(
        self, request: Request, previous: Request | None = None, workspace: str | None = None
    ) -> Reply:
        """Estimate an already-built request (a button click, a stored context)."""
        est = estimate(request, self.catalog_for(workspace))
        report = build_report(est, now=self.clock.now())
        changes = describe_changes(previous, request) if previous is not None else []
        return Reply(
            ReplyKind.ESTIMATE, report=report, request=request, previous=previous,
            changes=changes,
        )

    def answer_without_context(self, text: str, workspace: str | None = None) -> Reply:
        """A follow-up whose thread context can't be read (the store is unreachable):
        a fresh estimate from the text alone, saying so; or, when the text is not a whole
        query ("what if 8k seq?"), a message saying what is missing and how to ask."""
        reply = self.answer(text, None, workspace)
        if reply.kind is ReplyKind.ESTIMATE and reply.report is not None:
            report = dataclasses.replace(
                reply.report, notes=[CONTEXT_UNAVAILABLE_NOTE, *reply.report.notes]
            )
            return dataclasses.replace(reply, report=report)
        if reply.kind is ReplyKind.ERROR:
            quoted = " ".join(str(text).split())[:200]
            return Reply(
                ReplyKind.ERROR,
                text=(
                    "Context unavailable: I can't reach my store right now, so I don't "
                    f"know which estimate “{quoted}” should change. Ask again with the whole "
                    "query, e.g. `70b qlora 50M tokens seq 8k`."
                ),
            )
        return reply

    # -- with the store ---------------------------------------------------------------------
    async def admit(self, platform: str, user: str | None) -> Reply | None:
        """None when ``user`` may run a command now; otherwise the polite refusal (a
        :attr:`ReplyKind.LIMITED` reply, for the asker only)."""
        if self.limiter is None:
            return None
        verdict = await self.limiter.check(platform, user)
        if verdict.allowed:
            return None
        return Reply(
            ReplyKind.LIMITED,
            text=limited_message(verdict, self.limiter.per_minute),
            title="One moment",
        )

    async def thread(self, key: ThreadKey | None) -> ThreadContext | None:
        """The thread's stored context (None: none, or no store). Raises
        :class:`StoreUnavailable` when the store can't be reached: callers decide between
        silence and :meth:`answer_without_context`."""
        if key is None or self.store is None:
            return None
        try:
            return await self.store.get_thread(key)
        except StoreUnavailable:
            record_store_unavailable("get_thread")
            raise

    async def first_seen(self, event_id: str, ttl_s: float) -> bool:
        """Retry de-duplication: False when ``event_id`` was already handled. Without a
        store, or while it is unreachable, every event counts as new (a rare duplicate
        reply beats a lost one)."""
        if self.store is None:
            return True
        try:
            return await self.store.first_seen(event_id, ttl_s)
        except StoreUnavailable:
            record_store_unavailable("first_seen")
            log.warning("store unavailable: cannot de-duplicate event %s", event_id)
            return True

    async def handle(self, text: str, ctx: Context) -> Reply | None:
        """Answer ``text`` from ``ctx``. For a follow-up (``ctx.followup``) the thread's
        stored request is the base; None when the thread has no context (a thread the
        bot did not start: stay quiet). The estimate runs through :meth:`run`.
        ``prices`` / ``subscribe`` / ``unsubscribe`` go to the price commands. The rate
        limit applies first; with the store unreachable a follow-up gets
        :meth:`answer_without_context`."""
        limited = await self.admit(ctx.platform, ctx.user)
        if limited is not None:
            return limited
        if not ctx.followup:
            price_reply = await self.price_reply(text, ctx)
            if price_reply is not None:
                return price_reply
        previous = None
        if ctx.followup:
            try:
                context = await self.thread(ctx.key)
            except StoreUnavailable:
                return await self.run(self.answer_without_context, text, ctx.workspace)
            if context is None:
                return None
            previous = context.request
        return await self.run(self.answer, text, previous, ctx.workspace)

    async def price_reply(self, text: str, ctx: Context) -> Reply | None:
        """The reply to a price command (``prices``, ``subscribe ...``, ``unsubscribe``),
        or None when ``text`` is not one."""
        pctx = PriceContext(ctx.platform, ctx.channel, ctx.workspace, ctx.user, ctx.can_manage)
        try:
            reply = await self.prices.handle(text, pctx)
        except StoreUnavailable:
            record_store_unavailable("prices")
            return Reply(
                ReplyKind.ERROR,
                text=(
                    "Price subscriptions are unavailable right now: I can't reach my store. "
                    "Estimates still work; try this again in a few minutes."
                ),
            )
        if reply is None:
            return None
        return Reply(ReplyKind.PRICES, text=reply.text, title="GPU prices", prices=reply)

    async def remember(self, key: ThreadKey, reply: Reply, message_id: str | None) -> None:
        """Make ``reply``'s request the context of thread ``key`` (no-op without a store
        or for replies that are not estimates)."""
        if self.store is None or reply.request is None or reply.kind is not ReplyKind.ESTIMATE:
            return
        try:
            await self.store.save_thread(key, reply.request, message_id)
        except StoreUnavailable:
            # The reply is out already; only its thread's follow-ups lose their base.
            record_store_unavailable("save_thread")
            log.warning("store unavailable: thread context not saved key=%s", key)
