"""The prices an estimate uses: a snapshot's statistic, a team's rate or the built-in
price per card (:func:`effective_prices`), applied to a copy of the catalog
(:func:`apply_prices`), and what changed between two refreshes (:func:`price_changes`).

Pure (no clock, no I/O). The snapshot itself is :mod:`catalog.price_snapshot`; how a
refresh builds it is :mod:`catalog.price_build`. Every price here is USD per GPU-hour.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time
from typing import Literal

from catalog.price_snapshot import CHOICE_LABELS, PriceChoice, PriceSnapshot
from engine.specs import Catalog, GpuSpec

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


def spot_prices(snapshot: PriceSnapshot | None, catalog: Catalog) -> dict[str, EffectivePrice]:
    """Card -> its lowest refreshed spot (interruptible) price across the clouds, for
    cards some source lists at spot. A team sheet does not change these: it holds the
    team's own (on-demand or reserved) rates, not the public clouds' spot market."""
    out: dict[str, EffectivePrice] = {}
    if snapshot is None:
        return out
    choice = PriceChoice.LOWEST_SPOT
    for card, prices in snapshot.cards.items():
        quote = prices.lowest_spot
        if quote is None or card not in catalog.gpus:
            continue
        out[card] = EffectivePrice(card, quote.price, "refreshed", CHOICE_LABELS[choice],
                                   prices.clouds[quote.cloud].as_of, cloud=quote.cloud,
                                   across=prices.across(choice))
    return out


def apply_prices(
    catalog: Catalog,
    prices: Mapping[str, EffectivePrice],
    spot: Mapping[str, EffectivePrice] | None = None,
) -> Catalog:
    """A copy of ``catalog`` whose cards carry ``prices`` (source, as-of, refresh time)
    and, when given, their ``spot`` prices (:func:`spot_prices`)."""
    gpus: list[GpuSpec] = []
    for g in catalog.gpus.values():
        update: dict[str, object] = {}
        p = prices.get(g.id)
        if p is not None and p.kind != "catalog":
            assert p.as_of is not None
            update = {
                "price_per_gpu_hour": p.price,
                "price_source": p.source,
                "price_as_of": p.as_of.date(),
                "price_refreshed_at": p.as_of,
            }
        s = (spot or {}).get(g.id)
        if s is not None:
            update |= {"spot_price_per_gpu_hour": s.price, "spot_price_source": s.source}
        gpus.append(g.model_copy(update=update) if update else g)
    return Catalog(list(catalog.models.values()), gpus)


def priced_catalog(
    catalog: Catalog,
    snapshot: PriceSnapshot | None,
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND,
    workspace: str | None = None,
) -> Catalog:
    """``catalog`` with the prices in force for ``workspace`` applied, spot prices too."""
    if snapshot is None:
        return catalog
    return apply_prices(catalog, effective_prices(snapshot, catalog, choice, workspace),
                        spot_prices(snapshot, catalog))


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
