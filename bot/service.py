"""The conversation: text in, a :class:`~bot.replies.Reply` out, the same for every
front end (terminal, Slack, Discord).

A front end does only platform work: receive, acknowledge, say who asked where and which
estimate the message answers (an :class:`Ask`), call :meth:`Service.respond`, render the
:class:`~bot.replies.Reply`, post, and tell the service where the answer landed
(:meth:`Service.remember`). The service answers price and channel-settings commands and
its own words (:mod:`bot.words`: help, models, gpus, chart, new), fills a new question
with the channel's settings, parses (a new query or a follow-up on a thread's last
request), resolves Hugging Face Hub models the query names, runs the estimator, builds
the shared report, and keeps thread contexts in the store.

>>> svc = Service()
>>> svc.answer("8b qlora 10M tokens").kind
<ReplyKind.ESTIMATE: 'estimate'>
>>> svc.answer("help").kind
<ReplyKind.HELP: 'help'>

The estimator is synchronous and CPU-only (a few milliseconds), so :meth:`Service.answer`
is a plain function; the async methods add the Hub and the store around it. Price
sheets, price commands and the Hub client are built on first use, and the store is named
through :mod:`bot.store_types`, so a terminal query imports no HTTP client, no store
backend and no metrics library.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import logging
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from adapters.parse import QueryError, apply_followup, parse_query
from adapters.report import build_report
from bot.announcement_thread import announcement_request
from bot.ask import Ask, RequestBuilder
from bot.channel_settings import ChannelSettings, is_settings_command, with_defaults
from bot.clock import Clock, SystemClock
from bot.followups import NOTHING_CHANGED, nothing_changed, starts_afresh
from bot.price_words import price_command
from bot.ratelimit import RateLimiter, limited_message
from bot.replies import (
    Context,
    Reply,
    ReplyKind,
    Trigger,
    describe_changes,
    request_from_json,
    request_to_compact_json,
)
from bot.store_types import StoreUnavailable, ThreadContext, ThreadKey, count_unavailable
from bot.thread_context import STAND_IN_QUERY, without_context
from bot.turns import ThreadTurns
from bot.words import (
    CHART_NEEDS_QUERY,
    CHART_WORD,
    GPUS_WORDS,
    HELP_WORDS,
    MODELS_WORDS,
    NEW_PREFIXES,
    chart_only,
    command_reply,
    is_command_word,
    misplaced_word_hint,
    normalized,
    plain,
    split_chart_word,
    starts_over,
    with_chart,
    without_new,
)
from catalog.hub import HubError, HubErrorKind, hub_ref_for_word, needs_hub
from catalog.hub.settings import HubSettings
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.estimate import answered
from engine.specs import Catalog, ModelSpec, UnknownId

if TYPE_CHECKING:  # names only: the HTTP client (aiohttp) and the store load on first use
    from bot.price_service import PriceCommands
    from bot.prices import PriceBook
    from bot.store import Store
    from catalog.hub.resolver import HubResolver

__all__ = [
    "CHART_NEEDS_QUERY", "CHART_WORD", "GPUS_WORDS", "HELP_WORDS", "MODELS_WORDS",
    "NEW_PREFIXES", "Ask", "Context", "Reply", "ReplyKind", "RequestBuilder", "Service",
    "Trigger", "chart_only", "describe_changes",
    "request_from_json", "request_to_compact_json", "split_chart_word", "with_chart",
]

T = TypeVar("T")
MAX_HUB_MODELS = 3
"""Hub models one answer may resolve (each is one more parse attempt)."""
TRANSIENT_HUB_ERRORS = frozenset({HubErrorKind.TIMEOUT, HubErrorKind.UNAVAILABLE})
"""Hub failures that may be over in seconds: the error reply says ``retry``."""

log = logging.getLogger("ftcost.bot")

PRICES_TITLE = "GPU prices"
"""The title of a price command's replies, its own errors included: an error with a
title is not the query's (front ends then point to no query language)."""

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
        self._book = book
        self.clock: Clock = clock if clock is not None else SystemClock()
        self._prices: PriceCommands | None = None
        self._executor = (
            ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ftcost-estimate")
            if workers > 0
            else None
        )
        self._hub = hub
        self.channel_settings = ChannelSettings(store, lambda: self.catalog)
        """``set framework hf``: each channel's defaults for new questions."""
        self.hub_models: tuple[ModelSpec, ...] = ()
        """Hub models this service's catalogs hold too (set on views, :meth:`with_models`)."""
        self.turns = ThreadTurns(store)
        """One reply at a time in each thread (:meth:`thread_turn`)."""

    @property
    def book(self) -> PriceBook:
        """The prices in force (live sheets and team sheets), built on first use."""
        if self._book is None:
            from bot.prices import PriceBook

            self._book = PriceBook(self.catalog)
        return self._book

    @property
    def prices(self) -> PriceCommands:
        """``prices`` / ``subscribe`` / ``unsubscribe``, built on first use."""
        if self._prices is None:
            from bot.price_service import PriceCommands

            self._prices = PriceCommands(self.store, self.book, self.clock)
        return self._prices

    @property
    def hub(self) -> HubResolver:
        """Reads ``org/name`` models from the Hugging Face Hub, cached in the store (in
        this process's memory without one); built on first use."""
        if self._hub is None or isinstance(self._hub, HubSettings):
            from catalog.hub.resolver import HubResolver, MemoryCache

            cache = self.store if self.store is not None else MemoryCache()
            self._hub = HubResolver(self._hub, cache, cache_errors=(StoreUnavailable,))
        return self._hub

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a synchronous method (:meth:`answer`, :meth:`estimate`) for async callers:
        inline (``workers=0``, the default: it takes a few milliseconds of CPU, and a
        thread would only compete with the event loop for the GIL) or on the service's
        worker threads."""
        if self._executor is None:
            return fn(*args)
        import asyncio  # here, not at the top: the terminal answers without an event loop

        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)

    # -- synchronous core -------------------------------------------------------------------
    def catalog_for(self, workspace: str | None = None) -> Catalog:
        """The catalog with the prices in force in ``workspace`` (plus :attr:`hub_models`)."""
        base = self.catalog if self._book is None else self._book.catalog_for(workspace)
        return base.with_models(self.hub_models)

    def with_models(self, models: Iterable[ModelSpec]) -> Service:
        """A view of this service whose catalogs also hold ``models`` (read from the Hub):
        same store, workers and prices; this service is unchanged."""
        view = copy.copy(self)
        view.hub_models = (*self.hub_models, *models)
        return view

    def answer(
        self, text: str, previous: Request | None = None, workspace: str | None = None,
        defaults: Mapping[str, object] | None = None, build: RequestBuilder | None = None,
    ) -> Reply:
        """Answer ``text``: one of the conversation's own words (:mod:`bot.words`), or a
        query (a follow-up of ``previous`` when given) estimated and reported. The word
        ``chart`` is taken out first and asks for the chart too. ``defaults`` (a
        channel's settings, :mod:`bot.channel_settings`) fill the fields a new question
        does not name. ``build`` replaces the parser (structured options); with it, empty
        text is a question too."""
        text, chart = split_chart_word(plain(text))
        if chart:
            if not text and build is None:
                return chart_only(previous)
            reply = self.answer(text, previous, workspace, defaults, build)
            if reply.word == NOTHING_CHANGED and previous is not None:
                return chart_only(previous)  # `qlora chart` on a QLoRA estimate: its chart
            return with_chart(reply)
        catalog = self.catalog_for(workspace)
        words = " ".join(str(text).split())
        if words or build is None:
            special = command_reply(words, self.catalog, catalog)
            if special is not None:
                return special
        if starts_afresh(words, build):  # ``new 8b lora`` (or ``new`` beside options)
            words, previous = without_new(words), None
        try:
            if build is not None:
                request = build(words, previous, catalog)
            elif previous is None:
                request = parse_query(words, catalog)
            else:
                request = apply_followup(previous, words, catalog)
            if previous is None:
                request = with_defaults(request, defaults)
        except QueryError as err:
            hint = misplaced_word_hint(words, with_options=build is not None)
            if hint is not None:
                return Reply(ReplyKind.ERROR, text=hint, word=words.split()[0])
            return Reply(
                ReplyKind.ERROR, text=str(err), word=err.word, suggestions=list(err.suggestions)
            )
        reply = self.estimate(request, previous, workspace)
        if previous is not None and reply.kind is ReplyKind.ESTIMATE and not reply.changes:
            return nothing_changed(words, build)
        return reply

    def estimate(
        self, request: Request, previous: Request | None = None, workspace: str | None = None
    ) -> Reply:
        """Estimate an already-built request (a button click, a stored context)."""
        catalog = self.catalog_for(workspace)
        try:
            est = estimate(request, catalog)
        except UnknownId as exc:  # a Hub model not resolved first (see run_resolved)
            return Reply(
                ReplyKind.ERROR,
                text=f"I don't have {exc} at hand any more. Ask again with the whole query.",
            )
        report = build_report(est, now=self.clock.now())
        changes = [] if previous is None else describe_changes(
            answered(previous, catalog), est.request, catalog
        )
        # The estimate's request, which says what the engine sized from the user's words
        # (a dataset's sequence); a limit question stays the question (answered() finds
        # its answer again).
        kept = request if request.solve is not None else est.request
        return Reply(
            ReplyKind.ESTIMATE, report=report, request=kept, previous=previous,
            changes=changes, estimate=est,
        )

    def reads_as_question(
        self, text: str, previous: Request | None, workspace: str | None = None
    ) -> bool:
        """Whether a thread message is for the bot: a word of the conversation, a price or
        settings command, or a query that parses (as a follow-up of ``previous``), a Hub
        model counting as one. Chatter ("nice", "thanks") is not: where errors go
        unanswered it costs the asker no rate-limit allowance (nothing is estimated)."""
        text, chart = split_chart_word(plain(text))
        words = " ".join(str(text).split())
        if (chart and not words) or words in HELP_WORDS or is_command_word(words) or (
            price_command(words) or is_settings_command(words)
        ):
            return True
        catalog = self.catalog_for(workspace)
        if starts_over(words):
            words, previous = without_new(words), None
        if previous is not None and needs_hub(previous.model, catalog) is not None:
            return True  # a Hub model's thread: the parse needs it resolved first
        try:
            if previous is None:
                parse_query(words, catalog)
            else:
                apply_followup(previous, words, catalog)
        except QueryError as err:
            try:
                return hub_ref_for_word(err.word, catalog) is not None
            except HubError:  # org/name@ with a malformed revision: answered with why
                return True
        return True

    def reads_as_followup(self, text: str, workspace: str | None = None) -> bool:
        """Whether a reply in a thread whose estimate is gone (not kept, unreadable, the
        store unreachable) is for the bot: a question on its own (:meth:`reads_as_question`)
        or a change of any estimate ("what if 8k seq", then told how to ask in full)."""
        stand_in = parse_query(STAND_IN_QUERY, self.catalog_for(workspace))
        return any(self.reads_as_question(text, base, workspace) for base in (None, stand_in))

    def answer_without_context(
        self, text: str, workspace: str | None = None, expired: bool = False
    ) -> Reply:
        """A follow-up whose thread context can't be read (the store is unreachable, or
        ``expired``: it no longer keeps the thread): a fresh estimate from the text alone,
        saying so; or, when the text is not a whole query ("what if 8k seq?"), a message
        saying what is missing and how to ask."""
        return without_context(self.answer(text, None, workspace), text, expired)

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
            return Reply(ReplyKind.ERROR, text=str(err), word=err.ref,
                         retry=err.kind in TRANSIENT_HUB_ERRORS)
        return await self.run(fn, self.with_models(specs.values()), *args)

    async def catalog_with(self, request: Request, workspace: str | None = None) -> Catalog:
        """The catalog of ``workspace`` holding ``request``'s model, a Hub model resolved
        (usually from the cache) when it is one; for code that runs the engine itself
        (the chart). Raises :class:`HubError` when the model cannot be resolved."""
        ref = needs_hub(request.model, self.catalog)
        if ref is None:
            return self.catalog_for(workspace)
        return self.with_models([await self.hub.resolve(ref)]).catalog_for(workspace)

    def answer_offline(
        self, text: str, previous: Request | None = None,
        defaults: Mapping[str, object] | None = None,
    ) -> Reply | None:
        """:meth:`answer_async`'s reply where it needs no Hub model (none in ``previous``,
        no ``org/name`` word the catalog lacks), computed without an event loop; None
        where the Hub must be asked first (then call :meth:`answer_async`). The terminal
        answers most questions this way and never imports asyncio for them."""
        if previous is not None and needs_hub(previous.model, self.catalog) is not None:
            return None
        reply = self.answer(text, previous, None, defaults)
        if reply.kind is not ReplyKind.ERROR:
            return reply
        try:
            hub_word = hub_ref_for_word(reply.word, self.catalog_for()) is not None
        except HubError:  # a malformed org/name@rev: answer_async words the refusal
            return None
        return None if hub_word else reply

    async def answer_async(
        self, text: str, previous: Request | None = None, workspace: str | None = None,
        defaults: Mapping[str, object] | None = None, build: RequestBuilder | None = None,
    ) -> Reply:
        """:meth:`answer` for async callers, with Hub models resolved first."""
        return await self.run_resolved(
            _answer, text, previous, workspace, defaults, build,
            models=[previous.model if previous is not None else None],
        )

    async def answer_without_context_async(
        self, text: str, workspace: str | None = None, expired: bool = False
    ) -> Reply:
        """:meth:`answer_without_context` for async callers, with Hub models resolved."""
        return await self.run_resolved(Service.answer_without_context, text, workspace, expired)

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
        :attr:`ReplyKind.LIMITED` reply, for the asker only), :attr:`Reply.quiet` after
        the first one of the window."""
        if self.limiter is None:
            return None
        verdict = await self.limiter.check(platform, user)
        if verdict.allowed:
            return None
        return Reply(
            ReplyKind.LIMITED,
            text=limited_message(verdict, self.limiter.per_minute),
            title="One moment",
            quiet=not verdict.first_refused(self.limiter.per_minute),
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
            count_unavailable("get_thread")
            raise

    async def announcement(self, key: ThreadKey) -> Request | None:
        """The reference estimate's request under the price announcement whose thread
        ``key`` is (:func:`~bot.announcement_thread.announcement_request`); None for any
        other thread. Raises :class:`StoreUnavailable` when the store can't be reached."""
        try:
            return await announcement_request(self.store, key)
        except StoreUnavailable:
            count_unavailable("cache_get")
            raise

    def thread_turn(self, key: ThreadKey) -> contextlib.AbstractAsyncContextManager[None]:
        """Hold thread ``key`` while one reply in it is read, answered, posted and
        remembered, so a second quick reply builds on the estimate the first posted
        instead of on the same earlier one: in this process and, through the store's
        lock, across replicas (:mod:`bot.turns`)."""
        return self.turns.turn(key)

    async def first_seen(self, event_id: str, ttl_s: float) -> bool:
        """Retry de-duplication: False when ``event_id`` was already handled. Without a
        store, or while it is unreachable, every event counts as new (a rare duplicate
        reply beats a lost one)."""
        if self.store is None:
            return True
        try:
            return await self.store.first_seen(event_id, ttl_s)
        except StoreUnavailable:
            count_unavailable("first_seen")
            log.warning("store unavailable: cannot de-duplicate event %s", event_id)
            return True

    async def respond(self, ask: Ask) -> Reply:
        """The answer to ``ask``, the same on every front end: a price command
        (``prices``, ``subscribe ...``, ``unsubscribe``), a channel-settings command
        (``set framework hf``, ``unset``, ``settings``), else a question: a change of
        ``ask.previous``, or a new question filled in with the channel's settings, Hub
        models resolved first. The rate limit (:meth:`admit`) is the caller's, before any
        work of its own (reading a pasted config, the thread's context)."""
        ask = dataclasses.replace(ask, text=plain(ask.text))
        if ask.build is None:
            command = await self.price_reply(ask) or await self.settings_reply(ask)
            if command is not None:
                return command
        asks_afresh = starts_over(ask.text) or normalized(ask.text) == "new"
        gone = ask.context_lost or ask.context_expired
        if ask.previous is None and gone and not asks_afresh:
            return await self.answer_without_context_async(
                ask.text, ask.workspace, ask.context_expired
            )
        defaults = None
        if ask.previous is None or starts_afresh(ask.text, ask.build):  # `new ...`: a new one
            defaults = await self.channel_settings.defaults(ask.platform, ask.channel)
        return await self.answer_async(
            ask.text, ask.previous, ask.workspace, defaults, ask.build
        )

    async def handle(self, text: str, ctx: Context) -> Reply | None:
        """:meth:`respond` with the rate limit and the thread's context read from the
        store: for a follow-up (``ctx.followup``) the thread's stored request is the
        base; None when the thread has none (a thread the bot did not start: stay
        quiet); with the store unreachable, an answer from the text alone."""
        limited = await self.admit(ctx.platform, ctx.user)
        if limited is not None:
            return limited
        previous, lost = None, False
        if ctx.followup:
            try:
                context = await self.thread(ctx.key)
            except StoreUnavailable:
                lost = True
            else:
                if context is None:
                    return None
                previous = context.request
        return await self.respond(Ask(
            text, ctx.platform, channel=ctx.channel, user=ctx.user, workspace=ctx.workspace,
            previous=previous, context_lost=lost, may_manage=ctx.can_manage,
        ))

    async def price_reply(self, ask: Ask) -> Reply | None:
        """The reply to a price command, or None when ``ask.text`` is not one. The
        permission check runs only for a change (``subscribe`` / ``unsubscribe``) and
        fails closed."""
        parsed = price_command(ask.text)
        if parsed is None:
            return None
        from bot.price_service import PERMISSION_UNCHECKED, PermissionUnchecked, PriceContext
        from bot.prices import noted_view

        manage = ask.may_manage
        if callable(manage):
            try:
                manage = None if parsed[0] == "prices" else await manage()
            except PermissionUnchecked:
                return Reply(ReplyKind.ERROR, text=PERMISSION_UNCHECKED, title=PRICES_TITLE,
                             retry=True)
        pctx = PriceContext(ask.platform, ask.channel, ask.workspace, ask.user, manage)
        try:
            reply = await self.prices.handle(ask.text, pctx, ask.command)
        except StoreUnavailable:
            count_unavailable("prices")
            return Reply(
                ReplyKind.ERROR,
                text=(
                    "Price subscriptions are unavailable right now: I can't reach my store. "
                    "Estimates still work; try this again in a few minutes."
                ),
                title=PRICES_TITLE,
            )
        if reply is None:
            return None
        if reply.view is not None:  # a failed refresh is said in ``prices``
            view = noted_view(reply.view, self.book, self.clock.now())
            reply = dataclasses.replace(reply, text=view.summary, view=view)
        return Reply(ReplyKind.PRICES, text=reply.text, title=PRICES_TITLE, prices=reply)

    async def settings_reply(self, ask: Ask) -> Reply | None:
        """The reply to ``set NAME VALUE`` / ``unset NAME`` / ``settings`` for
        ``ask.channel`` (anyone in it may), or None when ``ask.text`` is not one."""
        answer = await self.channel_settings.handle(
            ask.text, ask.platform, ask.channel, ask.command, user=ask.user
        )
        if answer is None:
            return None
        kind = ReplyKind.SETTINGS if answer.ok else ReplyKind.ERROR
        return Reply(kind, text=answer.text, title="Channel settings")

    async def remember(self, key: ThreadKey, reply: Reply, message_id: str | None) -> None:
        """Make ``reply``'s request the context of thread ``key`` (no-op without a store
        or for replies that are not estimates)."""
        if self.store is None or reply.request is None or reply.kind is not ReplyKind.ESTIMATE:
            return
        try:
            await self.store.save_thread(key, reply.request, message_id)
        except StoreUnavailable:
            # The reply is out already; only its thread's follow-ups lose their base.
            count_unavailable("save_thread")
            log.warning("store unavailable: thread context not saved key=%s", key)
