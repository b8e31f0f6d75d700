"""Price-change announcements: what to tell each subscribed channel, and telling each of
them exactly once.

* :func:`plan_announcement` (pure): for one subscription, the cards that moved by at least
  its threshold between two snapshots (old -> new $/GPU-hour, %, source) and the effect on
  a reference estimate (the channel's last estimate, or ``70b qlora 50M tokens``):
  "cheapest plan now $X on Y, was $Z". The plan runs on the card the channel's question
  named, else on the subscription's cards (:func:`plan_cards`), at spot rates when the
  question said ``spot``: a channel watching ``h100`` hears about H100 plans, not the
  cheapest card of the catalog. None when nothing the channel cares about moved.
* :class:`Fanout`: posts the planned announcements through one :class:`Poster` per
  platform. Each ``(snapshot, channel)`` is claimed in the store before the post and
  finished after it, under a store lock so one replica fans out at a time:

  - a channel already ``sent`` / ``gone`` / ``unconfirmed`` is skipped, so a restart
    after a crash serves only the channels not yet served;
  - a record left ``sending`` by a crash is in doubt: the poster is asked whether the
    message is there (:meth:`Poster.was_posted`); yes -> ``sent``, no -> posted again,
    can't tell -> ``unconfirmed`` (never a second post);
  - a gone channel (Slack ``channel_not_found`` / ``not_in_channel`` / ``is_archived``,
    Discord 404 / 403) is recorded ``gone``, its subscription marked, and never retried;
  - other definite failures are ``failed`` and retried on the next pass, at most
    ``max_attempts`` times;
  - rate limits: posts are paced (``interval_s``) and a :class:`RateLimited` post waits
    its ``retry_after`` on the clock, then retries.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from adapters.formats import METHOD_LABELS, fmt_money, fmt_tokens
from adapters.parse import parse_query
from bot.announcement_thread import keep_announcement_request
from bot.clock import Clock
from bot.price_store import (
    FINAL_STATES,
    PRICE_ANNOUNCE_LOCK,
    AnnouncementRecord,
    AnnouncementState,
    PriceStore,
    Subscription,
)
from bot.store_types import DEFAULT_THREAD_TTL_DAYS, ThreadKey
from catalog.price_snapshot import PriceChoice, PriceSnapshot
from catalog.prices import effective_prices, price_changes, priced_catalog
from engine import Request, estimate
from engine.specs import Catalog, UnknownId

log = logging.getLogger("ftcost.announce")

DEFAULT_MIN_CHANGE_PCT = 5.0
DEFAULT_REFERENCE_QUERY = "70b qlora 50M tokens"


# ------------------------------------------------------------------------------------------
# content


@dataclass(frozen=True, slots=True)
class CardMove:
    """One card's price in force before and after ($/GPU-hour)."""

    card: str
    old: float
    new: float
    source: str
    """Where the new price comes from (``lowest on-demand across aws, gcp (gcp)``)."""
    old_source: str = ""

    @property
    def percent(self) -> float:
        return (self.new - self.old) / self.old * 100.0

    def line(self) -> str:
        """``h100-sxm $3.00 → $2.49/hr (-17.0%), lowest on-demand across ...``"""
        return (
            f"{self.card} ${self.old:.2f} → ${self.new:.2f}/hr ({self.percent:+.1f}%), "
            f"{self.source}"
        )


@dataclass(frozen=True, slots=True)
class Plan:
    """The cheapest way to run the reference estimate."""

    cost_usd: float
    cards: str
    """``2x h100-sxm``."""
    gpu: str = ""
    """The card's catalog id (``h100-sxm``)."""


@dataclass(frozen=True, slots=True)
class ReferenceEffect:
    label: str
    """``Llama 3.1 70B · QLoRA, 50M tokens`` (``, on h100-sxm``, ``, spot`` when the plan
    keeps to cards or is priced at spot)."""
    from_channel: bool
    """The channel's last estimate (else the default reference)."""
    now: Plan | None
    was: Plan | None
    cards: tuple[str, ...] = ()
    """The cards the plan keeps to (empty: any card in the catalog)."""
    request: Request | None = None
    """The reference estimate's request, on the card its plan found: kept beside the
    posted announcement, so a reply in its thread changes it
    (:mod:`bot.announcement_thread`)."""

    def sentence(self) -> str:
        """``cheapest plan now $X on Y, was $Z`` (``on W`` when the card changed)."""
        if self.now is None:
            if self.cards:
                return f"no plan on {', '.join(self.cards)} can run it"
            return "no card in the catalog can run it"
        text = f"cheapest plan now {fmt_money(self.now.cost_usd)} on {self.now.cards}"
        if self.was is not None:
            text += f", was {fmt_money(self.was.cost_usd)}"
            if self.was.cards != self.now.cards:
                text += f" on {self.was.cards}"
        return text

    @property
    def title(self) -> str:
        who = "this channel's last estimate" if self.from_channel else "reference estimate"
        return f"{who} ({self.label})"


@dataclass(frozen=True, slots=True)
class Announcement:
    """Everything a renderer shows, already worded (platform-neutral)."""

    snapshot_id: str
    refreshed_at: datetime
    moves: tuple[CardMove, ...]
    reference: ReferenceEffect | None
    min_change_pct: float
    stale_sources: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Names this announcement on the platform (a Slack block id, a Discord footer),
        so a restart can check whether it was posted."""
        return f"ftcost-prices-{self.snapshot_id}"

    @property
    def title(self) -> str:
        n = len(self.moves)
        return f"GPU prices changed: {n} card{'s' if n != 1 else ''}"

    def footer(self, command: str = "/ftcost") -> str:
        """When, which changes, and the commands (``command``: the platform's slash
        command, as its config names it) for the table and for stopping."""
        text = (
            f"Prices refreshed {self.refreshed_at:%Y-%m-%d %H:%M} UTC · changes of "
            f"{self.min_change_pct:g}% or more · {command} prices for the table · "
            f"{command} unsubscribe to stop"
        )
        if self.stale_sources:
            text += " · stale: " + ", ".join(self.stale_sources)
        return text

    def text(self, command: str = "/ftcost") -> str:
        """Plain-text fallback (notifications, screen readers)."""
        lines = [self.title, *(f"• {m.line()}" for m in self.moves)]
        if self.reference is not None:
            lines.append(f"{self.reference.title}: {self.reference.sentence()}")
        lines.append(self.footer(command))
        return "\n".join(lines)


def default_cards(catalog: Catalog) -> tuple[str, ...]:
    """Every live NVIDIA card: what a subscription without cards watches."""
    return tuple(
        g.id for g in catalog.gpus.values() if g.vendor == "NVIDIA" and g.status == "live"
    )


def plan_cards(request: Request, subscription: Subscription) -> tuple[str, ...]:
    """The cards the reference plan may run on: the card the channel's question named,
    else the subscription's cards; empty (any card) when neither names one."""
    return (request.gpu,) if request.gpu else subscription.cards


def _asked_on(request: Request, cards: tuple[str, ...]) -> list[Request]:
    """``request`` asked on each of ``cards`` (an estimate names only its best few cards
    otherwise); ``request`` itself when it names its card, or no cards are given."""
    if not cards or request.gpu in cards:
        return [request]
    said = request.model_dump(exclude_unset=True)
    return [Request.model_validate({**said, "gpu": card}) for card in cards]


def cheapest_plan(
    request: Request, catalog: Catalog, cards: tuple[str, ...] = ()
) -> Plan | None:
    """The lowest-cost option that fits, on one of ``cards`` when given (a card the
    catalog no longer has is passed over), priced as the request says (spot where it says
    ``spot``); None without a dataset size or a fitting card."""
    options = []
    try:
        asked_on = _asked_on(request, cards)
    except ValueError:  # a request no longer valid on the subscription's cards
        return None
    for asked in asked_on:
        try:
            options += estimate(asked, catalog).options
        except (UnknownId, ValueError):  # a card gone from the catalog, or refused there
            continue
    priced = [o for o in options if o.fits and o.timing.cost_usd is not None
              and (not cards or o.gpu.id in cards)]
    if not priced:
        return None
    best = min(priced, key=lambda o: (o.timing.cost_usd, o.count, o.gpu.id))
    assert best.timing.cost_usd is not None
    return Plan(best.timing.cost_usd, f"{best.count}x {best.gpu.id}", best.gpu.id)


def _label(request: Request, catalog: Catalog, cards: tuple[str, ...] = ()) -> str:
    """``Llama 3.1 70B · QLoRA, 50M tokens, on h100-sxm, spot``."""
    model = catalog.model(request.model)
    method = METHOD_LABELS[request.effective_method]
    tokens = f", {fmt_tokens(request.dataset_tokens)} tokens" if request.dataset_tokens else ""
    on = f", on {', '.join(cards)}" if cards else ""
    spot = ", spot" if request.spot else ""
    return f"{model.name} · {method}{tokens}{on}{spot}"


def reference_request(last: Request | None, catalog: Catalog) -> tuple[Request, bool]:
    """The channel's last request when it has a dataset size (else there is no cost to
    compare), otherwise ``70b qlora 50M tokens``; and whether it was the channel's."""
    if last is not None and last.dataset_tokens and last.price_per_gpu_hour is None:
        try:
            catalog.model(last.model)
        except UnknownId:
            pass
        else:
            return last, True
    return parse_query(DEFAULT_REFERENCE_QUERY, catalog), False


def plan_announcement(
    subscription: Subscription,
    old: PriceSnapshot,
    new: PriceSnapshot,
    catalog: Catalog,
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND,
    last_request: Request | None = None,
) -> Announcement | None:
    """What to tell ``subscription``'s channel about ``old`` -> ``new`` (None: nothing)."""
    workspace = subscription.workspace
    watched = set(subscription.cards or default_cards(catalog))
    changes = price_changes(
        effective_prices(old, catalog, choice, workspace),
        effective_prices(new, catalog, choice, workspace),
    )
    moves = tuple(
        CardMove(c.card, c.old.price, c.new.price, c.new.source, c.old.source)
        for c in changes
        if c.card in watched and round(abs(c.percent), 6) >= subscription.min_change_pct
    )
    if not moves:
        return None
    request, from_channel = reference_request(last_request, catalog)
    cards = plan_cards(request, subscription)
    now = cheapest_plan(request, priced_catalog(catalog, new, choice, workspace), cards)
    # The thread's estimate is the one announced: on the plan's card where the plan kept
    # to the subscription's cards (any card otherwise, as the plan chose among them).
    kept = request if not cards or request.gpu or now is None else (
        request.model_copy(update={"gpu": now.gpu}))
    reference = ReferenceEffect(
        label=_label(request, catalog, cards),
        from_channel=from_channel,
        now=now,
        was=cheapest_plan(request, priced_catalog(catalog, old, choice, workspace), cards),
        cards=cards,
        request=kept,
    )
    return Announcement(
        snapshot_id=new.id,
        refreshed_at=new.taken_at,
        moves=moves,
        reference=reference,
        min_change_pct=subscription.min_change_pct,
        stale_sources=tuple(s.name for s in new.stale_sources),
    )


# ------------------------------------------------------------------------------------------
# delivery


class ChannelGone(Exception):
    """The channel no longer exists or the bot can't post there; ``reason`` is the
    platform's word for it (``channel_not_found``, ``Discord 404``)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RateLimited(Exception):
    """The platform said "slow down" (HTTP 429) after its client's own retries."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"rate limited, retry after {retry_after:g} s")
        self.retry_after = retry_after


class SendFailed(Exception):
    """A definite failure: the message was not posted (safe to try again later)."""


class Poster(Protocol):
    """Posts announcements on one platform."""

    platform: str
    threads: bool
    """Whether the platform's bot answers replies under an announcement: the fan-out
    keeps each one's reference request for them (:mod:`bot.announcement_thread`)."""

    async def post(self, channel: str, announcement: Announcement) -> str:
        """Post; return the message id. Raises :class:`ChannelGone`, :class:`RateLimited`
        or :class:`SendFailed`; any other exception leaves the outcome in doubt."""
        ...

    async def was_posted(
        self, channel: str, announcement: Announcement, since: float
    ) -> bool | None:
        """Whether ``announcement`` (by its :attr:`~Announcement.key`) was posted to
        ``channel`` at or after ``since`` (epoch s); None when the platform can't tell."""
        ...


@dataclass(frozen=True, slots=True)
class Target:
    subscription: Subscription
    announcement: Announcement

    @property
    def key(self) -> tuple[str, str]:
        return (self.subscription.platform, self.subscription.channel)


@dataclass
class FanoutResult:
    snapshot_id: str
    locked_out: bool = False
    """Another replica holds the fan-out lock: nothing was done."""
    sent: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    unconfirmed: list[str] = field(default_factory=list)
    in_doubt: list[str] = field(default_factory=list)
    """Left ``sending`` by an unexpected error in this run (settled next run)."""
    skipped: list[str] = field(default_factory=list)
    """Already settled by an earlier run (or another replica)."""
    elsewhere: list[str] = field(default_factory=list)
    """Not settled, on a platform this process has no poster for: a process running
    that platform (Slack and Discord run apart, sharing the store) posts them."""

    @property
    def done_here(self) -> bool:
        """Nothing left that this process can post for this snapshot."""
        return not self.locked_out and not self.failed and not self.in_doubt

    @property
    def complete(self) -> bool:
        """Nothing left to do for this snapshot, on any platform."""
        return self.done_here and not self.elsewhere

    def outcomes(self) -> list[tuple[str, str]]:
        """``(platform, outcome)`` for every channel this run settled or left in doubt
        (``skipped`` ones are not counted: an earlier run or another replica did them)."""
        out = []
        for outcome in ("sent", "gone", "failed", "unconfirmed", "in_doubt"):
            for name in getattr(self, outcome):
                out.append((name.split(":", 1)[0], outcome))
        return out


def _name(key: tuple[str, str]) -> str:
    return f"{key[0]}:{key[1]}"


class Fanout:
    """Exactly-once delivery of one snapshot's announcements (see the module docs)."""

    def __init__(
        self,
        store: PriceStore,
        posters: Mapping[str, Poster],
        clock: Clock,
        *,
        owner: str,
        interval_s: float = 1.0,
        max_attempts: int = 3,
        max_rate_limit_waits: int = 5,
        lock_ttl_s: float = 600.0,
        thread_ttl_s: float = DEFAULT_THREAD_TTL_DAYS * 86400,
    ) -> None:
        self.store = store
        self.posters = posters
        self.clock = clock
        self.owner = owner
        self.interval_s = interval_s
        self.max_attempts = max_attempts
        self.max_rate_limit_waits = max_rate_limit_waits
        self.lock_ttl_s = lock_ttl_s
        self.thread_ttl_s = thread_ttl_s
        """How long an announcement's reference request is kept for its thread (the
        store's ``thread_ttl_days``)."""

    async def run(self, snapshot_id: str, targets: Sequence[Target]) -> FanoutResult:
        result = FanoutResult(snapshot_id)
        if not await self.store.acquire_lock(PRICE_ANNOUNCE_LOCK, self.owner, self.lock_ttl_s):
            result.locked_out = True
            log.info("announcements: another replica is posting snapshot=%s", snapshot_id)
            return result
        try:
            records = {
                (r.platform, r.channel): r for r in await self.store.list_announcements(snapshot_id)
            }
            for target in sorted(targets, key=lambda t: t.key):
                await self._serve(target, records.get(target.key), result)
        finally:
            await self.store.release_lock(PRICE_ANNOUNCE_LOCK, self.owner)
        log.info(
            "announcements snapshot=%s sent=%d gone=%d failed=%d unconfirmed=%d in_doubt=%d "
            "skipped=%d elsewhere=%d", snapshot_id, len(result.sent), len(result.gone),
            len(result.failed), len(result.unconfirmed), len(result.in_doubt),
            len(result.skipped), len(result.elsewhere),
        )  # fmt: skip
        return result

    async def _serve(
        self, target: Target, record: AnnouncementRecord | None, result: FanoutResult
    ) -> None:
        sub, ann = target.subscription, target.announcement
        name = _name(target.key)
        poster = self.posters.get(sub.platform)
        if record is not None and record.state in FINAL_STATES:
            result.skipped.append(name)
            return
        if poster is None:
            result.elsewhere.append(name)
            return
        if (
            record is not None
            and record.state is AnnouncementState.SENDING
            and await self._settle_in_doubt(poster, target, record, result)
        ):
            return
        claimed = await self.store.claim_announcement(
            ann.snapshot_id, sub.platform, sub.channel, self.max_attempts
        )
        if claimed is None:
            result.skipped.append(name)
            return
        await self.store.acquire_lock(PRICE_ANNOUNCE_LOCK, self.owner, self.lock_ttl_s)
        await self._post(poster, target, result)
        await self.clock.sleep(self.interval_s)

    async def _settle_in_doubt(
        self, poster: Poster, target: Target, record: AnnouncementRecord, result: FanoutResult
    ) -> bool:
        """A post interrupted by a crash: True when settled without posting again."""
        sub, ann = target.subscription, target.announcement
        name = _name(target.key)
        try:
            posted = await poster.was_posted(sub.channel, ann, record.claimed_at)
        except Exception:
            log.exception("announcements: cannot check channel=%s", name)
            posted = None
        if posted is None:
            await self._finish(target, AnnouncementState.UNCONFIRMED,
                               detail="interrupted; the platform can't tell if it was posted")
            result.unconfirmed.append(name)
            log.warning("announcement unconfirmed channel=%s snapshot=%s (not re-sent)",
                        name, ann.snapshot_id)  # fmt: skip
            return True
        if posted:
            await self._finish(target, AnnouncementState.SENT, detail="found after a restart")
            result.sent.append(name)
            return True
        await self._finish(target, AnnouncementState.FAILED, detail="interrupted before posting")
        return False

    async def _finish(
        self,
        target: Target,
        state: AnnouncementState,
        message_id: str | None = None,
        detail: str | None = None,
    ) -> None:
        sub = target.subscription
        await self.store.finish_announcement(
            target.announcement.snapshot_id, sub.platform, sub.channel, state, message_id, detail
        )

    async def _post(self, poster: Poster, target: Target, result: FanoutResult) -> None:
        sub, ann = target.subscription, target.announcement
        name = _name(target.key)
        waits = 0
        while True:
            try:
                message_id = await poster.post(sub.channel, ann)
            except RateLimited as exc:
                if waits >= self.max_rate_limit_waits:
                    await self._finish(target, AnnouncementState.FAILED, detail=str(exc))
                    result.failed.append(name)
                    return
                waits += 1
                log.info("announcement rate-limited channel=%s retry_after=%.1f", name,
                         exc.retry_after)  # fmt: skip
                # Hold the fan-out lock through the wait (renewed, the wait capped at half
                # its life): were it to expire, another replica would find this channel in
                # doubt, not posted, and post it; this one would then post it again.
                if not await self.store.acquire_lock(
                    PRICE_ANNOUNCE_LOCK, self.owner, self.lock_ttl_s
                ):
                    result.in_doubt.append(name)
                    log.warning("announcement lock lost while rate-limited channel=%s", name)
                    return
                await self.clock.sleep(min(exc.retry_after, self.lock_ttl_s / 2))
                continue
            except ChannelGone as exc:
                await self._finish(target, AnnouncementState.GONE, detail=exc.reason)
                await self.store.mark_subscription_gone(sub.platform, sub.channel, exc.reason)
                result.gone.append(name)
                log.warning("announcement channel gone channel=%s reason=%s (subscription "
                            "marked, not retried)", name, exc.reason)  # fmt: skip
                return
            except SendFailed as exc:
                await self._finish(target, AnnouncementState.FAILED, detail=str(exc))
                result.failed.append(name)
                log.warning("announcement failed channel=%s error=%r", name, str(exc))
                return
            except Exception:
                # The post may or may not have landed: leave the claim in doubt for the
                # next run to settle, never post it again blindly.
                result.in_doubt.append(name)
                log.exception("announcement in doubt channel=%s", name)
                return
            await self._finish(target, AnnouncementState.SENT, message_id=message_id)
            result.sent.append(name)
            reference = ann.reference.request if ann.reference is not None else None
            if reference is not None and message_id and poster.threads:
                key = ThreadKey(sub.platform, sub.channel, message_id)
                await keep_announcement_request(self.store, key, reference, self.thread_ttl_s)
            return
