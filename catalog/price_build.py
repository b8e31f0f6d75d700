"""One refresh's fetches -> a :class:`~catalog.price_snapshot.PriceSnapshot` (pure: no
clock, no I/O; ``catalog.price_sources`` fetches and parses).

How a card's prices are derived (per refresh):

1. Every SkyPilot offer for the card (``catalog.skypilot.Offer``) is screened: a price
   must lie in :func:`catalog.team_sheets.price_range` (a query's ``$X/hr`` bounds, the
   top capped by ``Limits.max_price_per_gpu_hour``); others are rejected and reported
   (:class:`~catalog.price_snapshot.Rejection`). Team rates are held to the same range.
2. Per cloud, the card's lowest on-demand and lowest spot offer (any region, any
   instance size) are kept (:class:`~catalog.price_snapshot.CloudQuotes`).
3. Across the configured clouds: the **lowest** on-demand, the **median** on-demand
   (the lower median of the per-cloud lowest prices, so each cloud has one vote however
   many regions it lists, and the median is always a real offer with a cloud) and the
   **lowest spot** (:class:`~catalog.price_snapshot.CardPrices`).
4. A card whose lowest or median on-demand (or lowest spot) moved by more than
   ``Limits.max_change_ratio`` (5x) since the previous snapshot (or, with no previous
   snapshot, whose on-demand prices are 5x off the built-in catalog price) is **held
   back**: its previous prices stay, and the move is reported
   (:class:`~catalog.price_snapshot.HeldBack`).
5. A source that failed keeps its previous quotes (marked stale in
   :attr:`PriceSnapshot.sources`), so one bad download changes nothing. A source read
   well that no longer lists a card keeps that card's previous quote, with its fetch
   time, for ``Limits.keep_vanished_days`` (:func:`vanished_quotes`).

A team's price sheet (:mod:`catalog.team_sheets`) overrides these for its workspace.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from catalog.price_snapshot import (
    CHOICE_LABELS,
    MAX_REJECTIONS_KEPT,
    CardPrices,
    CloudQuotes,
    HeldBack,
    Limits,
    PriceChoice,
    PriceSnapshot,
    Quote,
    Rejection,
    SourceStatus,
    TeamPrice,
    TeamSheet,
    order,
    snapshot_id,
)
from catalog.skypilot import Offer, ParsedCatalog
from catalog.team_sheets import ParsedSheet, price_problem, rate_hint


@dataclass(frozen=True, slots=True)
class CloudFetch:
    """One SkyPilot cloud's outcome: its parsed catalog, or why there is none."""

    cloud: str
    location: str
    parsed: ParsedCatalog | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class TeamFetch:
    """One team sheet's outcome."""

    workspace: str
    location: str
    sheet: ParsedSheet | None = None
    error: str | None = None

    @property
    def name(self) -> str:
        return f"team:{self.workspace}"


def bad_price(price: float, limits: Limits) -> str | None:
    """Why ``price`` ($/GPU-hour) cannot be used, or None when it lies in
    :func:`catalog.team_sheets.price_range` (the bounds of a price typed in a query,
    capped by ``limits``)."""
    return price_problem(price, limits)


def screen_offers(
    offers: Iterable[Offer], limits: Limits
) -> tuple[list[Offer], list[Rejection]]:
    """Drop prices that are not positive or above the bound (the other price of the
    same offer stays); return the usable offers and the rejections."""
    kept: list[Offer] = []
    rejected: list[Rejection] = []
    for o in offers:
        price, spot = o.price, o.spot
        where = " ".join(p for p in (o.instance_type, o.region) if p)
        checks: tuple[tuple[Literal["on-demand", "spot"], float | None], ...] = (
            ("on-demand", price), ("spot", spot))
        for kind, value in checks:
            reason = None if value is None else bad_price(value, limits)
            if reason is None or value is None:
                continue
            rejected.append(Rejection(source=o.cloud, card=o.card, kind=kind, price=value,
                                      reason=reason, where=where))
            if kind == "on-demand":
                price = None
            else:
                spot = None
        if price is not None or spot is not None:
            kept.append(Offer(o.cloud, o.card, o.accelerator, o.instance_type, o.region,
                              o.zone, o.count, price, spot))
    return kept, rejected


def cloud_quotes(offers: Iterable[Offer], as_of: datetime) -> dict[str, CloudQuotes]:
    """Card -> the cheapest on-demand and spot offer among ``offers`` (one cloud)."""
    on_demand: dict[str, Quote] = {}
    spot: dict[str, Quote] = {}
    for o in offers:
        for value, best in ((o.price, on_demand), (o.spot, spot)):
            if value is None:
                continue
            quote = Quote(price=value, cloud=o.cloud, region=o.region,
                          instance_type=o.instance_type)
            if o.card not in best or order(quote) < order(best[o.card]):
                best[o.card] = quote
    return {
        card: CloudQuotes(on_demand=on_demand.get(card), spot=spot.get(card), as_of=as_of)
        for card in sorted(on_demand.keys() | spot.keys())
    }


def vanished_quotes(
    previous: PriceSnapshot | None,
    cloud: str,
    fresh: Mapping[str, CloudQuotes],
    now: datetime,
    limits: Limits,
) -> dict[str, CloudQuotes]:
    """Card -> ``cloud``'s previous quotes, for cards that cloud quoted before but not in
    this (successful) fetch: they keep their last price and its fetch time, so the report
    shows its age, instead of falling back to the built-in price and being announced as a
    market move. Kept up to ``Limits.keep_vanished_days`` after that fetch."""
    if previous is None:
        return {}
    oldest = now - timedelta(days=limits.keep_vanished_days)
    return {
        card: prices.clouds[cloud]
        for card, prices in previous.cards.items()
        if card not in fresh and cloud in prices.clouds and prices.clouds[cloud].as_of >= oldest
    }


def _moves(
    new: CardPrices, old: CardPrices | None, floor: float | None, ratio: float
) -> list[HeldBack]:
    """The statistics of ``new`` more than ``ratio`` away from the previous snapshot's
    (or, with no previous prices, the on-demand ones from the built-in ``floor``)."""
    pairs: list[tuple[str, Quote | None, float | None]] = []
    if old is not None:
        for choice in PriceChoice:
            prev = old.statistic(choice)
            pairs.append((CHOICE_LABELS[choice], new.statistic(choice),
                          prev.price if prev else None))
    elif floor is not None:
        for choice in (PriceChoice.LOWEST_ON_DEMAND, PriceChoice.MEDIAN_ON_DEMAND):
            pairs.append((CHOICE_LABELS[choice], new.statistic(choice), floor))
    out = []
    for label, quote, before in pairs:
        if quote is None or before is None or before <= 0:
            continue
        if max(quote.price / before, before / quote.price) > ratio:
            out.append(HeldBack(card=new.card, statistic=label, old=before, new=quote.price))
    return out


def hold_back(
    candidate: Mapping[str, CardPrices],
    previous: Mapping[str, CardPrices],
    floor: Mapping[str, float],
    limits: Limits,
) -> tuple[dict[str, CardPrices], list[HeldBack]]:
    """Apply the 5x rule: a card that moved too far keeps its previous entry (or none,
    so the built-in price stays in force)."""
    out: dict[str, CardPrices] = {}
    held: list[HeldBack] = []
    for card, prices in candidate.items():
        moves = _moves(prices, previous.get(card), floor.get(card), limits.max_change_ratio)
        if moves:
            held += moves
            if card in previous:
                out[card] = previous[card]
        else:
            out[card] = prices
    return out, held


def _status(
    name: str,
    kind: Literal["skypilot", "team"],
    location: str,
    now: datetime,
    error: str | None,
    before: SourceStatus | None,
    **counts: Any,
) -> SourceStatus:
    ok = error is None
    failures = 0 if ok else (before.consecutive_failures if before else 0) + 1
    return SourceStatus(
        name=name,
        kind=kind,
        location=location,
        ok=ok,
        checked_at=now,
        last_success_at=now if ok else (before.last_success_at if before else None),
        consecutive_failures=failures,
        total_failures=(before.total_failures if before else 0) + (0 if ok else 1),
        error=error,
        **counts,
    )


def _team_sheet(
    fetch: TeamFetch,
    now: datetime,
    before: TeamSheet | None,
    limits: Limits,
) -> tuple[TeamSheet, list[Rejection], list[HeldBack]]:
    """The sheet in force after this refresh. A rate that is rejected (not a number, not
    finite, outside :func:`~catalog.team_sheets.price_range`, or one of two entries for
    the same card) or moved more than the 5x rule allows keeps the sheet's previous rate
    for that card, so a typo never drops a team to public prices; a card the sheet no
    longer lists is dropped (the editor removed it)."""
    sheet = fetch.sheet
    assert sheet is not None
    prices: dict[str, TeamPrice] = {}
    rejected: list[Rejection] = []
    held: list[HeldBack] = []
    for card, text in sheet.unreadable.items():
        rejected.append(Rejection(source=fetch.name, card=card, kind="team", price=None,
                                  reason=f"not a number ({text}); {rate_hint(card, limits)}"))
    for card, entries in sheet.duplicates.items():
        rejected.append(Rejection(source=fetch.name, card=card, kind="team", price=None,
                                  reason=f"listed more than once ({entries}): neither rate "
                                  "used; keep one entry per card"))
    for card, value in sheet.raw_prices.items():
        reason = bad_price(value, limits)
        if reason is not None:
            rejected.append(Rejection(source=fetch.name, card=card, kind="team",
                                      price=value if math.isfinite(value) else None,
                                      reason=f"{reason}; {rate_hint(card, limits)}"))
            continue
        entry = sheet.prices[card]
        old = before.prices.get(card) if before else None
        if old is not None and max(value / old.price, old.price / value) > limits.max_change_ratio:
            held.append(HeldBack(card=card, statistic="team rate", old=old.price, new=value,
                                 workspace=fetch.workspace))
            entry = old
        prices[card] = entry
    if before is not None:
        for r in rejected:
            if r.card in before.prices:
                prices[r.card] = before.prices[r.card]
    result = TeamSheet(workspace=fetch.workspace, location=fetch.location, name=sheet.name,
                       prices=dict(sorted(prices.items())), as_of=now)
    return result, rejected, held


def build_snapshot(
    *,
    taken_at: datetime,
    clouds: Sequence[CloudFetch],
    teams: Sequence[TeamFetch] = (),
    previous: PriceSnapshot | None = None,
    floor: Mapping[str, float] | None = None,
    limits: Limits | None = None,
) -> PriceSnapshot:
    """Combine one refresh's fetches into a snapshot.

    ``floor`` is the built-in catalog price per card ($/GPU-hour; see
    :func:`floor_prices`), the baseline of the 5x rule before any snapshot exists.
    Failed sources keep their quotes (clouds) or sheets (teams) from ``previous``.
    """
    limits = limits or Limits()
    floor = floor or {}
    before = {s.name: s for s in previous.sources} if previous else {}
    per_card: dict[str, dict[str, CloudQuotes]] = {}
    statuses: list[SourceStatus] = []
    rejected: list[Rejection] = []
    for fetch in clouds:
        parsed = fetch.parsed
        if parsed is None:
            carried = {
                card: prices.clouds[fetch.cloud]
                for card, prices in (previous.cards.items() if previous else ())
                if fetch.cloud in prices.clouds
            }
            error = fetch.error or "no data"
            statuses.append(_status(fetch.cloud, "skypilot", fetch.location, taken_at, error,
                                    before.get(fetch.cloud)))
        else:
            kept, bad = screen_offers(parsed.offers, limits)
            rejected += bad
            fresh = cloud_quotes(kept, taken_at)
            vanished = vanished_quotes(previous, fetch.cloud, fresh, taken_at, limits)
            carried = {**vanished, **fresh}
            statuses.append(
                _status(fetch.cloud, "skypilot", fetch.location, taken_at, None,
                        before.get(fetch.cloud), offers=len(parsed.offers),
                        unknown=dict(parsed.unknown), ignored=parsed.ignored,
                        bad_rows=parsed.bad_rows, rejected=len(bad),
                        count_fixes=parsed.count_fixes, missing_host=parsed.missing_host,
                        vanished=len(vanished))
            )
        for card, quotes in carried.items():
            per_card.setdefault(card, {})[fetch.cloud] = quotes
    candidate = {
        card: CardPrices(card=card, clouds=dict(sorted(quotes.items())))
        for card, quotes in sorted(per_card.items())
    }
    cards, held = hold_back(candidate, previous.cards if previous else {}, floor, limits)

    sheets: dict[str, TeamSheet] = {}
    for team in teams:
        old_sheet = previous.team_sheets.get(team.workspace) if previous else None
        if team.sheet is None:
            statuses.append(_status(team.name, "team", team.location, taken_at,
                                    team.error or "no data", before.get(team.name)))
            if old_sheet is not None:
                sheets[team.workspace] = old_sheet
            continue
        sheet, bad, moved = _team_sheet(team, taken_at, old_sheet, limits)
        rejected += bad
        held += moved
        sheets[team.workspace] = sheet
        statuses.append(
            _status(team.name, "team", team.location, taken_at, None, before.get(team.name),
                    offers=len(team.sheet.raw_prices), unknown=dict(team.sheet.unknown),
                    bad_rows=len(team.sheet.unreadable),
                    rejected=len(bad))
        )
    return PriceSnapshot(
        id=snapshot_id(taken_at),
        taken_at=taken_at,
        cards=cards,
        team_sheets=sheets,
        sources=statuses,
        held_back=held,
        rejected=rejected[:MAX_REJECTIONS_KEPT],
    )
