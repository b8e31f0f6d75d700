"""Price snapshots: refreshed $/GPU-hour prices, how they were chosen, and their sources.

Pure (no clock, no I/O): the refresh job (``catalog.price_sources``) fetches and parses,
then :func:`build_snapshot` turns what it got into a :class:`PriceSnapshot`, and
:func:`effective_prices` + :func:`apply_prices` give the engine a catalog with those
prices. Every price here is USD per GPU-hour.

How a card's prices are derived (per refresh):

1. Every SkyPilot offer for the card (``catalog.skypilot.Offer``) is screened: a price
   must be positive and at most ``Limits.max_price_per_gpu_hour``; others are rejected
   and reported (:class:`Rejection`).
2. Per cloud, the card's lowest on-demand and lowest spot offer (any region, any
   instance size) are kept (:class:`CloudQuotes`).
3. Across the configured clouds: the **lowest** on-demand, the **median** on-demand
   (the lower median of the per-cloud lowest prices, so each cloud has one vote however
   many regions it lists, and the median is always a real offer with a cloud) and the
   **lowest spot** (:class:`CardPrices`).
4. A card whose lowest or median on-demand (or lowest spot) moved by more than
   ``Limits.max_change_ratio`` (5x) since the previous snapshot (or, with no previous
   snapshot, whose on-demand prices are 5x off the built-in catalog price) is **held
   back**: its previous prices stay, and the move is reported (:class:`HeldBack`).
5. A source that failed keeps its previous quotes (marked stale in
   :attr:`PriceSnapshot.sources`), so one bad download changes nothing.

A team's price sheet (:func:`parse_team_sheet`) overrides these for its workspace.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time
from enum import StrEnum
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

from catalog.skypilot import Offer, ParsedCatalog
from engine.specs import Catalog, GpuSpec

DEFAULT_MAX_PRICE = 100.0
"""$/GPU-hour above which a price is taken for a data error (the dearest real offers are
about $15)."""
DEFAULT_MAX_CHANGE = 5.0
"""A card whose price moves by more than this factor in one refresh is held back."""
MAX_REJECTIONS_KEPT = 50
ANY_WORKSPACE = "*"
"""A team sheet for every workspace (single-team deployments)."""


class PriceChoice(StrEnum):
    """Which refreshed price an estimate uses."""

    LOWEST_ON_DEMAND = "lowest-on-demand"
    MEDIAN_ON_DEMAND = "median-on-demand"
    LOWEST_SPOT = "lowest-spot"


CHOICE_LABELS = {
    PriceChoice.LOWEST_ON_DEMAND: "lowest on-demand",
    PriceChoice.MEDIAN_ON_DEMAND: "median on-demand",
    PriceChoice.LOWEST_SPOT: "lowest spot",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Limits(_Model):
    """Validation bounds for refreshed prices."""

    max_price_per_gpu_hour: float = Field(default=DEFAULT_MAX_PRICE, gt=0)
    """A price (on-demand, spot or team) above this $/GPU-hour is rejected."""
    max_change_ratio: float = Field(default=DEFAULT_MAX_CHANGE, gt=1)
    """A card moving by more than this factor in one refresh is held back."""


# ------------------------------------------------------------------------------------------
# the snapshot model


class Quote(_Model):
    """One offer: $/GPU-hour and where it is."""

    price: float
    """USD per GPU-hour."""
    cloud: str
    region: str = ""
    instance_type: str = ""

    @property
    def where(self) -> str:
        return " ".join(p for p in (self.cloud, self.instance_type, self.region) if p)


def _cheapest(quotes: Iterable[Quote | None]) -> Quote | None:
    present = [q for q in quotes if q is not None]
    return min(present, key=_order) if present else None


def _order(q: Quote) -> tuple[float, str, str, str]:
    return (q.price, q.cloud, q.region, q.instance_type)


class CloudQuotes(_Model):
    """A card's cheapest on-demand and spot offer on one cloud."""

    on_demand: Quote | None = None
    spot: Quote | None = None
    as_of: datetime
    """When this cloud's catalog was fetched."""


class CardPrices(_Model):
    """A card's quotes per cloud, and the statistics the bot chooses from."""

    card: str
    clouds: dict[str, CloudQuotes]

    @property
    def lowest_on_demand(self) -> Quote | None:
        return _cheapest(c.on_demand for c in self.clouds.values())

    @property
    def median_on_demand(self) -> Quote | None:
        """The lower median of the per-cloud lowest on-demand prices."""
        per_cloud = sorted((c.on_demand for c in self.clouds.values() if c.on_demand), key=_order)
        return per_cloud[(len(per_cloud) - 1) // 2] if per_cloud else None

    @property
    def lowest_spot(self) -> Quote | None:
        return _cheapest(c.spot for c in self.clouds.values())

    def statistic(self, choice: PriceChoice) -> Quote | None:
        if choice is PriceChoice.MEDIAN_ON_DEMAND:
            return self.median_on_demand
        if choice is PriceChoice.LOWEST_SPOT:
            return self.lowest_spot
        return self.lowest_on_demand

    def across(self, choice: PriceChoice) -> tuple[str, ...]:
        """The clouds the statistic was taken over (with an offer of that kind)."""
        spot = choice is PriceChoice.LOWEST_SPOT
        return tuple(
            sorted(
                name
                for name, c in self.clouds.items()
                if (c.spot if spot else c.on_demand) is not None
            )
        )


class Rejection(_Model):
    """A price that failed validation (not applied)."""

    source: str
    card: str
    kind: Literal["on-demand", "spot", "team"]
    price: float
    """The rejected $/GPU-hour."""
    reason: str
    where: str = ""


class HeldBack(_Model):
    """A card whose price moved too far in one refresh: the old prices stay."""

    card: str
    statistic: str
    """``lowest on-demand``, ``median on-demand``, ``lowest spot`` or ``team rate``."""
    old: float
    new: float
    """$/GPU-hour before and as fetched."""
    workspace: str | None = None
    """For a team rate: the workspace whose sheet it is in."""

    @property
    def ratio(self) -> float:
        return max(self.new / self.old, self.old / self.new)


class SourceStatus(_Model):
    """How one source fared in the refresh that made the snapshot."""

    name: str
    """``aws``, ``gcp``, ... for SkyPilot clouds; ``team:<workspace>`` for a team sheet."""
    kind: Literal["skypilot", "team"]
    location: str
    """URL or file path."""
    ok: bool
    checked_at: datetime
    last_success_at: datetime | None = None
    """When the prices in force from this source were fetched (None: never)."""
    consecutive_failures: int = 0
    total_failures: int = 0
    error: str | None = None
    offers: int = 0
    """Offers (rows mapped to a catalog card) read; team sheets: prices read."""
    unknown: dict[str, int] = Field(default_factory=dict)
    """Accelerator names no rule maps -> rows (SkyPilot); unknown card names (team)."""
    ignored: int = 0
    bad_rows: int = 0
    rejected: int = 0
    count_fixes: int = 0
    missing_host: int = 0

    @property
    def stale(self) -> bool:
        """The last fetch failed: the prices in force from it are older than the snapshot."""
        return not self.ok


class TeamPrice(_Model):
    price: float = Field(gt=0)
    """USD per GPU-hour."""
    note: str = ""


class TeamSheet(_Model):
    """A team's negotiated rates, in force for one workspace (or ``*`` for all)."""

    workspace: str
    location: str
    name: str = ""
    prices: dict[str, TeamPrice]
    """Catalog card id -> rate."""
    as_of: datetime
    """When the sheet was read."""


class PriceSnapshot(_Model):
    """The prices one refresh produced, with their sources; stored as JSON."""

    id: str
    taken_at: datetime
    cards: dict[str, CardPrices] = Field(default_factory=dict)
    team_sheets: dict[str, TeamSheet] = Field(default_factory=dict)
    """Workspace key (``slack:T123``, ``discord:456`` or ``*``) -> sheet."""
    sources: list[SourceStatus] = Field(default_factory=list)
    held_back: list[HeldBack] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    """The first :data:`MAX_REJECTIONS_KEPT` rejections (each source's status counts all)."""

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> PriceSnapshot:
        return cls.model_validate_json(text)

    def source(self, name: str) -> SourceStatus | None:
        return next((s for s in self.sources if s.name == name), None)

    @property
    def stale_sources(self) -> list[SourceStatus]:
        return [s for s in self.sources if s.stale]

    def team_sheet(self, workspace: str | None) -> TeamSheet | None:
        """The sheet for ``workspace``, else the one for every workspace."""
        if workspace is not None and workspace in self.team_sheets:
            return self.team_sheets[workspace]
        return self.team_sheets.get(ANY_WORKSPACE)


def snapshot_id(taken_at: datetime) -> str:
    """A sortable id from the snapshot's time, to the microsecond (two refreshes in one
    second must not share an id)."""
    return taken_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")


# ------------------------------------------------------------------------------------------
# team sheets


class MalformedSheet(ValueError):
    """A team price sheet that is not a mapping with a ``prices:`` mapping."""


@dataclass(frozen=True, slots=True)
class ParsedSheet:
    name: str
    prices: dict[str, TeamPrice]
    """Catalog card id -> rate (unvalidated beyond "a number")."""
    raw_prices: dict[str, float]
    unknown: dict[str, int]
    """Card names the catalog does not know -> 1."""
    problems: tuple[str, ...]


def parse_team_sheet(text: str, resolve: Callable[[str], str | None]) -> ParsedSheet:
    """Read a team sheet (YAML or JSON)::

        name: Acme negotiated rates        # optional
        prices:
          h100-sxm: 2.10                   # card (id or alias) -> $/GPU-hour
          a100-80gb-sxm: {price: 1.40, note: "1-year reserved"}

    ``resolve`` maps a card name or alias to a catalog id (None when unknown). Unknown
    cards and unreadable entries are listed in ``problems``; the rest are kept.
    """
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise MalformedSheet(f"not YAML or JSON: {exc}") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("prices"), dict):
        raise MalformedSheet("expected a mapping with a 'prices:' mapping of card -> $/GPU-hour")
    name = str(doc.get("name") or "")
    raw: dict[str, float] = {}
    notes: dict[str, str] = {}
    unknown: dict[str, int] = {}
    problems: list[str] = []
    for key, value in doc["prices"].items():
        card = resolve(str(key))
        if card is None:
            unknown[str(key)] = 1
            problems.append(f"{key}: unknown card")
            continue
        price, note = _sheet_entry(value)
        if price is None:
            problems.append(f"{key}: expected a number or {{price: N, note: ...}}")
            continue
        raw[card], notes[card] = price, note
    prices = {c: TeamPrice(price=p, note=notes[c]) for c, p in raw.items() if p > 0}
    return ParsedSheet(name, prices, raw, unknown, tuple(problems))


def _sheet_entry(value: Any) -> tuple[float | None, str]:
    note = ""
    if isinstance(value, dict):
        note = str(value.get("note") or "")
        value = value.get("price")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, note
    return float(value), note


# ------------------------------------------------------------------------------------------
# building a snapshot


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


def _bad_price(price: float, limits: Limits) -> str | None:
    if price <= 0:
        return "not positive"
    if price > limits.max_price_per_gpu_hour:
        return f"above the ${limits.max_price_per_gpu_hour:g}/GPU-hr bound"
    return None


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
            reason = None if value is None else _bad_price(value, limits)
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
            if o.card not in best or _order(quote) < _order(best[o.card]):
                best[o.card] = quote
    return {
        card: CloudQuotes(on_demand=on_demand.get(card), spot=spot.get(card), as_of=as_of)
        for card in sorted(on_demand.keys() | spot.keys())
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
) -> tuple[TeamSheet | None, list[Rejection], list[HeldBack]]:
    sheet = fetch.sheet
    assert sheet is not None
    prices: dict[str, TeamPrice] = {}
    rejected: list[Rejection] = []
    held: list[HeldBack] = []
    for card, value in sheet.raw_prices.items():
        reason = _bad_price(value, limits)
        if reason is not None:
            rejected.append(Rejection(source=fetch.name, card=card, kind="team", price=value,
                                      reason=reason))
            continue
        entry = sheet.prices[card]
        old = before.prices.get(card) if before else None
        if old is not None and max(value / old.price, old.price / value) > limits.max_change_ratio:
            held.append(HeldBack(card=card, statistic="team rate", old=old.price, new=value,
                                 workspace=fetch.workspace))
            entry = old
        prices[card] = entry
    result = TeamSheet(workspace=fetch.workspace, location=fetch.location, name=sheet.name,
                       prices=prices, as_of=now)
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
            carried = cloud_quotes(kept, taken_at)
            statuses.append(
                _status(fetch.cloud, "skypilot", fetch.location, taken_at, None,
                        before.get(fetch.cloud), offers=len(parsed.offers),
                        unknown=dict(parsed.unknown), ignored=parsed.ignored,
                        bad_rows=parsed.bad_rows, rejected=len(bad),
                        count_fixes=parsed.count_fixes, missing_host=parsed.missing_host)
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
        if sheet is not None:
            sheets[team.workspace] = sheet
        statuses.append(
            _status(team.name, "team", team.location, taken_at, None, before.get(team.name),
                    offers=len(team.sheet.raw_prices), unknown=dict(team.sheet.unknown),
                    bad_rows=len(team.sheet.problems) - len(team.sheet.unknown),
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


# ------------------------------------------------------------------------------------------
# using a snapshot


PriceKind = Literal["refreshed", "team", "catalog"]


@dataclass(frozen=True, slots=True)
class EffectivePrice:
    """The price an estimate uses for a card, and where it came from."""

    card: str
    price: float
    """USD per GPU-hour."""
    kind: PriceKind
    """``refreshed`` (a public source), ``team`` (a team sheet) or ``catalog`` (built in)."""
    basis: str
    """``lowest on-demand``, ``median on-demand``, ``lowest spot``, ``team rate`` or
    ``built-in catalog price``."""
    as_of: datetime | None
    """When the price was fetched (the catalog's as-of date for built-in prices)."""
    cloud: str | None = None
    """The cloud of the chosen quote."""
    across: tuple[str, ...] = ()
    """The clouds the statistic was taken over."""
    note: str = ""

    @property
    def source(self) -> str:
        """``lowest on-demand across aws, gcp, lambda, runpod (lambda)``."""
        if self.kind == "team":
            return self.basis + (f" ({self.note})" if self.note else "")
        if self.kind == "catalog":
            return self.basis
        text = self.basis
        if self.across:
            text += " across " + ", ".join(self.across)
        if self.cloud and len(self.across) > 1:
            text += f" ({self.cloud})"
        return text


def floor_prices(catalog: Catalog) -> dict[str, float]:
    """Card -> the built-in catalog price ($/GPU-hour), for cards that have one."""
    return {
        g.id: g.price_per_gpu_hour
        for g in catalog.gpus.values()
        if g.price_per_gpu_hour is not None
    }


def _catalog_price(g: GpuSpec) -> EffectivePrice | None:
    if g.price_per_gpu_hour is None:
        return None
    as_of = datetime.combine(g.price_as_of, time(), UTC) if g.price_as_of else None
    return EffectivePrice(g.id, g.price_per_gpu_hour, "catalog", "built-in catalog price", as_of)


def effective_prices(
    snapshot: PriceSnapshot | None,
    catalog: Catalog,
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND,
    workspace: str | None = None,
) -> dict[str, EffectivePrice]:
    """Card -> the price in force: the team sheet's for ``workspace`` if it has the card,
    else the snapshot's statistic named by ``choice``, else the built-in catalog price.
    Cards without any price are absent."""
    out: dict[str, EffectivePrice] = {}
    for g in catalog.gpus.values():
        built_in = _catalog_price(g)
        if built_in is not None:
            out[g.id] = built_in
    if snapshot is None:
        return out
    for card, prices in snapshot.cards.items():
        quote = prices.statistic(choice)
        if quote is None or card not in catalog.gpus:
            continue
        out[card] = EffectivePrice(
            card=card,
            price=quote.price,
            kind="refreshed",
            basis=CHOICE_LABELS[choice],
            as_of=prices.clouds[quote.cloud].as_of,
            cloud=quote.cloud,
            across=prices.across(choice),
        )
    sheet = snapshot.team_sheet(workspace)
    if sheet is not None:
        label = f"team rate, {sheet.name}" if sheet.name else "team rate"
        for card, rate in sheet.prices.items():
            if card in catalog.gpus:
                out[card] = EffectivePrice(card, rate.price, "team", label, sheet.as_of,
                                           note=rate.note)
    return out


def apply_prices(catalog: Catalog, prices: Mapping[str, EffectivePrice]) -> Catalog:
    """A copy of ``catalog`` whose cards carry ``prices`` (source, as-of, refresh time)."""
    gpus: list[GpuSpec] = []
    for g in catalog.gpus.values():
        p = prices.get(g.id)
        if p is None or p.kind == "catalog":
            gpus.append(g)
            continue
        assert p.as_of is not None
        gpus.append(
            g.model_copy(
                update={
                    "price_per_gpu_hour": p.price,
                    "price_source": p.source,
                    "price_as_of": p.as_of.date(),
                    "price_refreshed_at": p.as_of,
                }
            )
        )
    return Catalog(list(catalog.models.values()), gpus)


def priced_catalog(
    catalog: Catalog,
    snapshot: PriceSnapshot | None,
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND,
    workspace: str | None = None,
) -> Catalog:
    """``catalog`` with the prices in force for ``workspace`` applied."""
    if snapshot is None:
        return catalog
    return apply_prices(catalog, effective_prices(snapshot, catalog, choice, workspace))


# ------------------------------------------------------------------------------------------
# comparing two snapshots


@dataclass(frozen=True, slots=True)
class PriceChange:
    """A card's price in force before and after a refresh ($/GPU-hour)."""

    card: str
    old: EffectivePrice
    new: EffectivePrice

    @property
    def percent(self) -> float:
        """Signed change in percent of the old price."""
        return (self.new.price - self.old.price) / self.old.price * 100.0


def price_changes(
    old: Mapping[str, EffectivePrice], new: Mapping[str, EffectivePrice]
) -> list[PriceChange]:
    """Cards priced before and after whose price differs, largest move first."""
    out = [
        PriceChange(card, old[card], new[card])
        for card in old.keys() & new.keys()
        if round(old[card].price, 4) != round(new[card].price, 4)
    ]
    return sorted(out, key=lambda c: (-abs(c.percent), c.card))
