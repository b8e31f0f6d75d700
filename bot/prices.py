"""The bot's price refresh: the ``prices:`` configuration, the prices in force
(:class:`PriceBook`) and the scheduled job (:class:`PriceJob`).

A refresh (one per cron time, whatever the number of replicas):

1. take the store lock ``price-refresh`` (with an expiry, so a crashed holder blocks
   nobody for long); a replica that can't, or that finds a snapshot already taken for
   this scheduled time, does nothing;
2. fetch every source (``catalog.price_sources.refresh_prices``: bad sources keep their
   last good prices and are marked stale), store the new snapshot with the id of the one
   it follows, and put it in force. A refresh in which every source failed stores nothing
   and counts as failed: the previous snapshot stays in force, and the scheduler tries
   again with back-off before the next scheduled time (``bot.scheduler``: 1, 2, 4 ...
   minutes, at most an hour apart), as after any failure. A store that can't be reached
   (taking the lock, reading or saving the snapshot) fails the refresh the same way,
   counted in ``ftcost_price_refresh_runs_total{status="failed"}`` and in
   ``ftcost_store_unavailable_total{operation="price_refresh"}``. The prices in force
   remember the last failed try (:attr:`PriceBook.failed_try`), which ``/ftcost prices``
   then names (:func:`noted_view`);
3. announce the changes to subscribed channels (``bot.announce``) and mark the snapshot
   announced once every channel is settled. An unfinished fan-out (a crash) is resumed
   at start-up, before the next refresh and every ``reload_interval_s``: so a process
   for another platform (Slack and Discord run apart on one store) posts its channels
   of a snapshot the other took. Each process remembers the snapshots it has served,
   so channels of a platform no process runs cost one look per start, not one per
   interval.

A stored snapshot that no longer validates as a :class:`PriceSnapshot` (a later version
changed the model, a hand edit) never stops the job: it is logged once, kept in the store
as it is, and not used: the prices in force stay (the built-in ones at start-up), it is
not announced, and a refresh after it compares with nothing, as the first one does.
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from pydantic import Field, ValidationError, field_validator

from adapters.formats import fmt_age
from bot.announce import Fanout, FanoutResult, Poster, Target, plan_announcement
from bot.clock import Clock
from bot.cron import DEFAULT_SCHEDULE, CronSchedule
from bot.metrics import record_announcement, record_refresh_run, record_refresh_source
from bot.price_commands import BUILT_IN_SUMMARY, PricesView
from bot.price_store import PRICE_REFRESH_LOCK, PriceStore, StoredSnapshot
from bot.store_types import DEFAULT_THREAD_TTL_DAYS, StoreUnavailable, count_unavailable
from catalog.echo import shown
from catalog.price_snapshot import PriceSnapshot
from catalog.price_sources import PriceSettings, refresh_prices
from catalog.prices import priced_catalog
from engine.specs import Catalog

log = logging.getLogger("ftcost.prices")

STORE_OPERATION = "price_refresh"
"""The ``operation`` label a refresh that found the store unreachable is counted under in
``ftcost_store_unavailable_total``."""
STORE_WAS_UNAVAILABLE = "the store could not be reached"
MAX_FAILURES_SHOWN = 3
"""Failed sources ``/ftcost prices`` names after a failed refresh; past these, ``and N
more`` (each source's own line, under a stored snapshot, says the rest)."""
MAX_FAILURE_CHARS = 80
"""Each named failure (``aws: cannot connect (...)``) is cut to this many characters."""
NONE_SUCCEEDED = "Built-in catalog prices: no refresh has succeeded yet."
"""How :func:`noted_view` opens the built-in view's summary (``BUILT_IN_SUMMARY``) after a
failed refresh."""

Fetch = Callable[[PriceSettings, Catalog, PriceSnapshot | None, datetime], Awaitable[PriceSnapshot]]


class PricesConfig(PriceSettings):
    """The ``prices:`` section of the bot's YAML (sources and choice: see
    :class:`~catalog.price_sources.PriceSettings`)."""

    enabled: bool = True
    """Refresh on a schedule (False: the built-in catalog prices only)."""
    schedule: str = DEFAULT_SCHEDULE
    """Cron expression, UTC (default daily at 06:00)."""
    refresh_on_start: bool = True
    """Refresh at start-up when a scheduled time passed since the last snapshot."""
    lock_ttl_s: float = Field(default=900.0, ge=60, le=86_400)
    """How long a replica's refresh lock lasts if it never releases it (a crash): 60 s to
    a day. Shorter would expire while a refresh still fetches (each source may take
    ``timeout_s``, 60 s by default), letting a second replica refresh at once."""
    announce_interval_s: float = Field(default=1.0, ge=0, le=60)
    """Pause between two announcement posts (rate limits)."""
    announce_max_attempts: int = Field(default=3, ge=1, le=100)
    """Posts to a channel that failed (not "gone") are retried this often in all."""
    reload_interval_s: float = Field(default=300.0, ge=1, le=86_400)
    """How often a replica looks for a snapshot another replica stored: 1 s to a day
    (each look reads the store, so less would keep it busy)."""

    @field_validator("schedule")
    @classmethod
    def _cron(cls, value: str) -> str:
        CronSchedule.parse(value).next_after(datetime(2000, 1, 1, tzinfo=UTC))
        return value


def instance_id() -> str:
    """This process among the replicas: host, pid and a random suffix."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


def _time(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


FIRST_SLOT = _time(0)
"""The slot of the start-up refresh when no snapshot is stored yet: any snapshot covers it."""


def _slot_label(slot: datetime) -> str:
    """A slot as log lines show it: its ISO time, or ``start-up`` for the first refresh."""
    return "start-up" if slot == FIRST_SLOT else slot.isoformat()


def every_source_failed(snapshot: PriceSnapshot) -> bool:
    """Whether the refresh that made ``snapshot`` got nothing new: it had sources and every
    one failed (the snapshot only repeats the previous prices, all stale)."""
    return bool(snapshot.sources) and not any(s.ok for s in snapshot.sources)


def _why_invalid(exc: ValueError) -> str:
    """Where a stored snapshot fails validation, in one line without the stored values."""
    if isinstance(exc, ValidationError) and exc.errors():
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "the document"
        return f"{where}: {first['msg']} ({exc.error_count()} errors)"
    return type(exc).__name__


@dataclass(frozen=True, slots=True)
class FailedTry:
    """A refresh that failed: when it was tried and why (each failed source with its
    error, or that the store could not be reached)."""

    at: datetime
    reasons: tuple[str, ...]


def source_failures(snapshot: PriceSnapshot) -> tuple[str, ...]:
    """``aws: cannot connect (...)``, one per failed source of a refresh, each cut to
    :data:`MAX_FAILURE_CHARS`."""
    return tuple(shown(f"{s.name}: {s.error or 'failed'}", MAX_FAILURE_CHARS)
                 for s in snapshot.sources if not s.ok)


class PriceBook:
    """The prices in force: the latest snapshot applied to the catalog, one catalog per
    workspace with its own team sheet (shared by all others), and the last refresh this
    process tried that failed (:attr:`failed_try`)."""

    def __init__(self, catalog: Catalog, config: PriceSettings | None = None) -> None:
        self.base = catalog
        self.choice = (config or PriceSettings()).choice
        self.snapshot: PriceSnapshot | None = None
        self._catalogs: dict[str | None, Catalog] = {}
        self.failed_try: FailedTry | None = None
        """The last failed refresh (None: none, or one succeeded since)."""

    def update(self, snapshot: PriceSnapshot | None) -> None:
        if snapshot is None or (self.snapshot is not None and snapshot.id == self.snapshot.id):
            return
        self.snapshot = snapshot
        self._catalogs = {}

    def catalog_for(self, workspace: str | None = None) -> Catalog:
        """The catalog estimates in ``workspace`` use."""
        if self.snapshot is None:
            return self.base
        key = workspace if workspace in self.snapshot.team_sheets else None
        if key not in self._catalogs:
            self._catalogs[key] = priced_catalog(self.base, self.snapshot, self.choice, key)
        return self._catalogs[key]


def refresh_note(book: PriceBook, now: datetime) -> str | None:
    """What ``/ftcost prices`` adds after a failed refresh newer than the prices in force:
    when it was tried, what failed, which prices stay and where to look; None otherwise."""
    tried = book.failed_try
    if tried is None or (book.snapshot is not None and book.snapshot.taken_at >= tried.at):
        return None
    age = fmt_age((now - tried.at).total_seconds())
    when = "just now" if age == "just now" else f"{age} ago"
    reasons = list(tried.reasons[:MAX_FAILURES_SHOWN])
    if len(tried.reasons) > MAX_FAILURES_SHOWN:
        reasons.append(f"and {len(tried.reasons) - MAX_FAILURES_SHOWN} more")
    kept = ("the built-in prices stay in use" if book.snapshot is None
            else "the prices of the refresh before it stay in use")
    return (f"The last refresh, tried {when} ({tried.at:%Y-%m-%d %H:%M} UTC), failed: "
            f"{'; '.join(reasons) or 'no reason given'}; {kept}. It is retried within the "
            "hour; if it keeps failing, check that the bot can reach its price sources "
            "(its log says more).")


def noted_view(view: PricesView, book: PriceBook, now: datetime) -> PricesView:
    """The ``prices`` view with :func:`refresh_note` in its summary (the built-in opening
    then says no refresh has succeeded, rather than that none was tried); ``view`` itself
    when there is no note."""
    note = refresh_note(book, now)
    if note is None:
        return view
    summary = view.summary
    if summary.startswith(BUILT_IN_SUMMARY):
        summary = NONE_SUCCEEDED + summary[len(BUILT_IN_SUMMARY):]
    return replace(view, summary=f"{summary} {note}")


@dataclass(frozen=True, slots=True)
class RefreshOutcome:
    status: str
    """``refreshed``, ``locked`` (another replica is at it), ``done`` (this scheduled
    time already has a snapshot) or ``failed`` (every source failed, or the store could
    not be reached: nothing stored)."""
    snapshot: PriceSnapshot | None = None
    """The new snapshot; for ``done`` the one stored, for ``failed`` the one still in
    force (None: the built-in prices)."""
    announcements: FanoutResult | None = None
    previous: PriceSnapshot | None = None
    """For ``refreshed``: the snapshot it follows (what the announcements compare with)."""
    slot: datetime | None = None
    """The scheduled time it ran for: what a retry of a failed one runs for again
    (``Scheduler.start(retry=...)`` for the start-up refresh)."""

    @property
    def failed(self) -> bool:
        """The refresh failed: the scheduler retries it (``bot.scheduler``)."""
        return self.status == "failed"


class PriceJob:
    """Refresh, store, put in force, announce. ``run`` is the scheduler's job."""

    def __init__(
        self,
        store: PriceStore,
        book: PriceBook,
        config: PricesConfig,
        clock: Clock,
        *,
        owner: str | None = None,
        posters: Mapping[str, Poster] | None = None,
        fetch: Fetch = refresh_prices,
        thread_ttl_s: float = DEFAULT_THREAD_TTL_DAYS * 86400,
    ) -> None:
        self.store = store
        self.book = book
        self.config = config
        self.clock = clock
        self.owner = owner or instance_id()
        self.posters = dict(posters or {})
        self.fetch = fetch
        self.thread_ttl_s = thread_ttl_s
        """How long an announcement's thread keeps its reference estimate."""
        self.schedule = CronSchedule.parse(config.schedule)
        self._served: set[str] = set()
        """Snapshots whose channels on this process's platforms are all settled."""
        self._invalid: set[str] = set()
        """Stored snapshots that no longer validate (each logged once)."""

    @property
    def catalog(self) -> Catalog:
        return self.book.base

    def _readable(self, stored: StoredSnapshot | None) -> PriceSnapshot | None:
        """``stored`` as a :class:`PriceSnapshot`; None without one, or when it no longer
        validates: then a warning (once per snapshot) and the record is kept as it is."""
        if stored is None:
            return None
        try:
            return stored.snapshot()
        except ValueError as exc:  # pydantic's ValidationError
            if stored.id not in self._invalid:
                self._invalid.add(stored.id)
                log.warning("stored price snapshot %r no longer validates, not used (kept in "
                            "the store as it is): %s", stored.id, _why_invalid(exc))  # fmt: skip
            return None

    async def load(self) -> PriceSnapshot | None:
        """Put the stored latest snapshot in force (start-up, and on other replicas); one
        that no longer validates leaves the prices in force as they are."""
        snapshot = self._readable(await self.store.latest_price_snapshot())
        self.book.update(snapshot)
        return snapshot

    async def follow(self) -> None:
        """Forever: put in force the snapshots other replicas store (every
        ``reload_interval_s``); errors are logged, never raised."""
        while True:
            await self.clock.sleep(self.config.reload_interval_s)
            try:
                await self.load()
            except Exception:
                log.exception("loading the latest price snapshot failed")
                continue
            try:
                await self.resume_announcements()
            except Exception:
                log.exception("resuming announcements failed")

    async def startup(self) -> RefreshOutcome | None:
        """Load the prices in force, finish an interrupted fan-out, and refresh now when
        a scheduled time passed since the last snapshot (or there is none). A store that
        can't be reached (the bot starting beside its Redis) fails the start-up refresh,
        counted and remembered like any, so the scheduler retries it."""
        try:
            await self.load()
            await self.resume_announcements()
            if not (self.config.enabled and self.config.refresh_on_start):
                return None
            latest = await self.store.latest_price_snapshot()
        except StoreUnavailable as exc:
            count_unavailable(STORE_OPERATION)
            log.warning("price start-up failed: the store is unavailable (%s)", exc)
            if not self.config.enabled:
                return None
            return replace(self._failed((STORE_WAS_UNAVAILABLE,)), slot=FIRST_SLOT)
        if latest is None:
            return await self.run(FIRST_SLOT)
        missed = self.schedule.next_after(_time(latest.taken_at))
        if missed <= self.clock.now():
            return await self.run(missed)
        return None

    async def run(self, slot: datetime) -> RefreshOutcome:
        """The refresh for the scheduled time ``slot``, then its announcements. A store
        that can't be reached fails the refresh (counted, remembered for ``prices``, and
        retried by the scheduler); while announcing, it leaves them to be resumed."""
        return replace(await self._run(slot), slot=slot)

    async def _run(self, slot: datetime) -> RefreshOutcome:
        """:meth:`run` without the slot in its outcome."""
        try:
            outcome = await self._refresh(slot)
        except StoreUnavailable as exc:
            count_unavailable(STORE_OPERATION)
            log.warning("price refresh failed: the store is unavailable slot=%s (%s)",
                        _slot_label(slot), exc)  # fmt: skip
            return self._failed((STORE_WAS_UNAVAILABLE,))
        if outcome.status != "refreshed" or outcome.snapshot is None:
            return outcome
        try:
            result = await self.announce(outcome.snapshot, outcome.previous)
        except StoreUnavailable as exc:
            count_unavailable(STORE_OPERATION)
            log.warning("price announcements postponed: the store is unavailable "
                        "snapshot=%s (%s); resumed once it answers", outcome.snapshot.id,
                        exc)  # fmt: skip
            result = None
        return replace(outcome, announcements=result)

    def _failed(self, reasons: tuple[str, ...]) -> RefreshOutcome:
        """A failed refresh: counted, remembered with its ``reasons`` (for ``prices``)."""
        record_refresh_run("failed")
        self.book.failed_try = FailedTry(self.clock.now(), reasons)
        return RefreshOutcome("failed", self.book.snapshot)

    async def _refresh(self, slot: datetime) -> RefreshOutcome:
        """Take the lock, fetch, store and put in force the snapshot for ``slot``; raises
        :class:`StoreUnavailable` when the store can't be reached."""
        ttl = self.config.lock_ttl_s
        if not await self.store.acquire_lock(PRICE_REFRESH_LOCK, self.owner, ttl):
            log.info("price refresh skipped: another replica holds the lock slot=%s",
                     _slot_label(slot))  # fmt: skip
            record_refresh_run("locked")
            await self.load()
            return RefreshOutcome("locked")
        try:
            latest = await self.store.latest_price_snapshot()
            if latest is not None and latest.taken_at >= slot.timestamp():
                log.info("price refresh skipped: already done for slot=%s", _slot_label(slot))
                record_refresh_run("done")
                done = self._readable(latest)
                self.book.update(done)
                return RefreshOutcome("done", done)
            await self._resume(latest)
            previous = self._readable(latest)
            try:
                snapshot = await self.fetch(self.config, self.catalog, previous, self.clock.now())
            except Exception:
                record_refresh_run("failed")
                raise
            for source in snapshot.sources:
                record_refresh_source(source.name, source.ok)
            if every_source_failed(snapshot):
                # Nothing new: storing it would cover this slot and announce nothing
                # anyway. Counted as any failure, and retried by the scheduler.
                log.warning("price refresh failed: every source failed (%d) slot=%s; keeping "
                            "snapshot=%s", len(snapshot.sources), _slot_label(slot),
                            previous.id if previous else "none (built-in prices)")  # fmt: skip
                return self._failed(source_failures(snapshot))
            await self.store.save_price_snapshot(
                snapshot.id, snapshot.taken_at.timestamp(),
                previous.id if previous else None, snapshot.to_json(),
            )  # fmt: skip
            self.book.update(snapshot)
            self.book.failed_try = None
            log.info("price snapshot stored id=%s cards=%d stale_sources=%d held_back=%d",
                     snapshot.id, len(snapshot.cards), len(snapshot.stale_sources),
                     len(snapshot.held_back))  # fmt: skip
        finally:
            await self._release()
        record_refresh_run("refreshed")
        return RefreshOutcome("refreshed", snapshot, previous=previous)

    async def _release(self) -> None:
        """Release the refresh lock; with the store unreachable it is counted and left to
        expire (``lock_ttl_s``) rather than failing a refresh that may have been stored."""
        try:
            await self.store.release_lock(PRICE_REFRESH_LOCK, self.owner)
        except StoreUnavailable:
            count_unavailable(STORE_OPERATION)
            log.warning("price refresh lock not released: the store is unavailable; it "
                        "expires by itself (lock_ttl_s)")

    async def resume_announcements(self) -> FanoutResult | None:
        """Finish the latest snapshot's fan-out if a crash interrupted it."""
        return await self._resume(await self.store.latest_price_snapshot())

    async def _resume(self, latest: StoredSnapshot | None) -> FanoutResult | None:
        """Announce ``latest`` when its fan-out is unfinished; one that no longer validates
        is not announced (it is logged and kept), and one whose previous snapshot no longer
        validates is settled as a baseline (nothing to compare with)."""
        if latest is None or latest.announced or latest.id in self._served:
            return None
        snapshot = self._readable(latest)
        if snapshot is None:
            return None
        previous = (
            await self.store.get_price_snapshot(latest.previous_id) if latest.previous_id else None
        )
        log.info("resuming announcements snapshot=%s", latest.id)
        return await self.announce(snapshot, self._readable(previous))

    async def announce(
        self, snapshot: PriceSnapshot, previous: PriceSnapshot | None
    ) -> FanoutResult | None:
        """Plan and post ``previous`` -> ``snapshot`` to every subscribed channel; mark the
        snapshot announced when all are settled."""
        if previous is None:
            await self.store.mark_snapshot_announced(snapshot.id)
            return None
        targets = await self._targets(snapshot, previous)
        fanout = Fanout(
            self.store, self.posters, self.clock, owner=self.owner,
            interval_s=self.config.announce_interval_s,
            max_attempts=self.config.announce_max_attempts, thread_ttl_s=self.thread_ttl_s,
        )  # fmt: skip
        result = await fanout.run(snapshot.id, targets)
        for platform, outcome in result.outcomes():
            record_announcement(platform, outcome)
        if result.done_here:
            self._served.add(snapshot.id)
        if result.complete:
            await self.store.mark_snapshot_announced(snapshot.id)
        return result

    async def _targets(self, snapshot: PriceSnapshot, previous: PriceSnapshot) -> list[Target]:
        taken = snapshot.taken_at.timestamp()
        targets = []
        for sub in await self.store.list_subscriptions():
            if sub.gone is not None or sub.created_at > taken:
                continue
            last = await self.store.latest_channel_request(sub.platform, sub.channel)
            announcement = await asyncio.to_thread(
                plan_announcement, sub, previous, snapshot, self.catalog, self.book.choice, last
            )
            if announcement is not None:
                targets.append(Target(sub, announcement))
        return targets
