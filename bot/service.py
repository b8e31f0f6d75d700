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
import copy
import dataclasses
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from adapters.help import EXAMPLES, QUERY_HELP
from adapters.listings import gpu_listing, model_listing
from adapters.parse import QueryError, apply_followup, parse_query
from adapters.report import METHOD_LABELS, Report, build_report, fmt_tokens
from bot.channel_settings import with_defaults
from bot.metrics import record_store_unavailable
from bot.price_service import PriceCommands, PriceContext, PriceReply
from bot.prices import PriceBook
from bot.ratelimit import RateLimiter, limited_message
from bot.scheduler import Clock, SystemClock
from bot.store import Store, StoreUnavailable, ThreadContext, ThreadKey
from catalog.hub import HubError, hub_ref_for_word, needs_hub
from catalog.hub.resolver import HubResolver
from catalog.hub.settings import HubSettings
from catalog.loader import default_catalog
from engine import Method, Request, estimate
from engine.specs import Catalog, ModelSpec

T = TypeVar("T")

MAX_HUB_MODELS = 3
"""Hub models one answer may resolve (each is one more parse attempt)."""

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
    CHART = "chart"
    """Only the chart of ``request`` (``chart`` alone in an estimate's thread)."""
    SETTINGS = "settings"
    """A channel-settings command's answer (``bot.channel_settings``), for the asker."""


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
    * ``chart``: ``request`` only; the platform posts its memory chart (``chart`` alone
      in an estimate's thread). An ``estimate`` with ``chart`` set wants it too.
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
    chart: bool = False
    """The query said ``chart``: the platform also posts the memory chart of ``request``
    (``adapters.chart``) where the estimate goes."""

    @property
    def is_public(self) -> bool:
        """Estimates go to the channel; help, listings and errors to the asker only."""
        return self.kind is ReplyKind.ESTIMATE


# ------------------------------------------------------------------------------------------
# the word "chart": a display wish, not part of the request

CHART_WORD = "chart"
CHART_NEEDS_QUERY = (
    "A chart of what? Add `chart` to a query (`70b qlora 50M tokens chart`), or say "
    "`chart` in an estimate's thread."
)


def split_chart_word(text: str) -> tuple[str, bool]:
    """``text`` without the word ``chart`` (any case), and whether it was there."""
    words = str(text).split()
    kept = [w for w in words if w.lower().strip("?!.,") != CHART_WORD]
    return " ".join(kept), len(kept) != len(words)


def chart_only(previous: Request | None) -> Reply:
    """``chart`` alone: the chart of the thread's estimate, or what to say instead."""
    if previous is None:
        return Reply(ReplyKind.ERROR, text=CHART_NEEDS_QUERY, word=CHART_WORD)
    return Reply(ReplyKind.CHART, request=previous, title="Memory chart")


def with_chart(reply: Reply) -> Reply:
    """``reply`` with its chart wanted (estimates only: an error stays an error)."""
    return dataclasses.replace(reply, chart=True) if reply.kind is ReplyKind.ESTIMATE else reply


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
    "hf_loss": "HF loss",
    "double_quant": "double quant",
    "sharding": "sharding",
    "gpu": "card",
    "gpu_count": "cards",
    "dataset_tokens": "tokens",
    "epochs": "epochs",
    "mfu": "MFU",
    "price_per_gpu_hour": "price",
    "mode": "mode",
    "framework": "framework",
    "activation_offload": "activation offload",
    "nodes": "nodes",
    "spot": "spot pricing",
    "budget_usd": "budget",
    "deadline_hours": "deadline",
    "samples": "samples",
    "sample_tokens": "sample length",
    "packing": "packing",
    "max_len": "max length",
    "solve": "solve for",
    "gpu_memory_gb": "card memory",
    "grad_accum": "accumulation",
    "lora_dropout": "LoRA dropout",
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


def _answer(service: Service, *args: Any) -> Reply:
    """``service.answer(*args)`` (through the instance: a view, or a test's stand-in)."""
    return service.answer(*args)


def _estimate(service: Service, *args: Any) -> Reply:
    return service.estimate(*args)


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
        hub: HubSettings | HubResolver | None = None,
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
        self.hub = hub if isinstance(hub, HubResolver) else HubResolver(
            hub, store, cache_errors=(StoreUnavailable,)
        )
        """Reads ``org/name`` models from the Hugging Face Hub, cached in the store."""
        self.hub_models: tuple[ModelSpec, ...] = ()
        """Hub models this service's catalogs hold too (set on views, :meth:`with_models`)."""

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
        """The catalog with the prices in force in ``workspace`` (plus :attr:`hub_models`)."""
        return self.book.catalog_for(workspace).with_models(self.hub_models)

    def with_models(self, models: Iterable[ModelSpec]) -> Service:
        """A view of this service whose catalogs also hold ``models`` (read from the Hub):
        same store, workers and prices; this service is unchanged."""
        view = copy.copy(self)
        view.hub_models = (*self.hub_models, *models)
        return view

    def answer(
        self, text: str, previous: Request | None = None, workspace: str | None = None,
        defaults: Mapping[str, object] | None = None,
    ) -> Reply:
        """Parse ``text`` (a follow-up of ``previous`` when given), estimate, report.
        The word ``chart`` is taken out first and asks for the chart too. ``defaults``
        (a channel's settings, :mod:`bot.channel_settings`) fill the fields a new
        question does not name."""
        text, chart = split_chart_word(text)
        if chart:
            return with_chart(self.answer(text, previous, workspace, defaults)) if text else (
                chart_only(previous))
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
                request = with_defaults(parse_query(words, catalog), defaults)
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
        try:
            est = estimate(request, self.catalog_for(workspace))
        except KeyError as exc:  # a Hub model not resolved first (see run_resolved)
            return Reply(
                ReplyKind.ERROR,
                text=f"I don't have {exc} at hand any more. Ask again with the whole query.",
            )
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
                word=reply.word,  # lets run_resolved find an org/name Hub word
            )
        return reply

    # -- with Hugging Face Hub models -------------------------------------------------------
    async def run_resolved(
        self, fn: Callable[..., Reply], *args: Any, models: Iterable[str | None] = ()
    ) -> Reply:
        """``fn(service, *args)`` through :meth:`run`, where ``service`` is this one or a
        view whose catalogs also hold the Hub models the answer needs: the ids in
        ``models`` (a thread's previous request, a clicked estimate) that the catalog
        lacks, and any ``org/name[@rev]`` word the parser did not know (each found by an
        attempt that failed on it, then resolved, then tried again). A Hub problem
        becomes an error reply naming it; the engine itself never waits on the Hub."""
        specs: dict[str, ModelSpec] = {}
        try:
            for model_id in models:
                ref = needs_hub(model_id, self.catalog)
                if ref is not None and ref.id not in specs:
                    specs[ref.id] = await self.hub.resolve(ref)
            for _ in range(MAX_HUB_MODELS):
                service = self.with_models(specs.values()) if specs else self
                reply = await self.run(fn, service, *args)
                if reply.kind is not ReplyKind.ERROR:
                    return reply
                ref = hub_ref_for_word(reply.word, service.catalog_for())
                if ref is None or ref.id in specs:
                    return reply
                specs[ref.id] = await self.hub.resolve(ref)
        except HubError as err:
            return Reply(ReplyKind.ERROR, text=str(err), word=err.ref)
        return await self.run(fn, self.with_models(specs.values()), *args)

    async def catalog_with(self, request: Request, workspace: str | None = None) -> Catalog:
        """The catalog of ``workspace`` holding ``request``'s model, a Hub model resolved
        (usually from the cache) when it is one; for code that runs the engine itself
        (the chart). Raises :class:`HubError` when the model cannot be resolved."""
        ref = needs_hub(request.model, self.catalog)
        if ref is None:
            return self.catalog_for(workspace)
        return self.with_models([await self.hub.resolve(ref)]).catalog_for(workspace)

    async def answer_async(
        self, text: str, previous: Request | None = None, workspace: str | None = None,
        defaults: Mapping[str, object] | None = None,
    ) -> Reply:
        """:meth:`answer` for async callers, with Hub models resolved first."""
        return await self.run_resolved(
            _answer, text, previous, workspace, defaults,
            models=[previous.model if previous is not None else None],
        )

    async def answer_without_context_async(
        self, text: str, workspace: str | None = None
    ) -> Reply:
        """:meth:`answer_without_context` for async callers, with Hub models resolved."""
        return await self.run_resolved(Service.answer_without_context, text, workspace)

    async def estimate_async(
        self, request: Request, previous: Request | None = None, workspace: str | None = None
    ) -> Reply:
        """:meth:`estimate` for async callers (a button click on a Hub model's estimate)."""
        return await self.run_resolved(
            _estimate, request, previous, workspace,
            models=[request.model, previous.model if previous is not None else None],
        )

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
                return await self.answer_without_context_async(text, ctx.workspace)
            if context is None:
                return None
            previous = context.request
        return await self.answer_async(text, previous, ctx.workspace)

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
