"""Team price sheets: a team's negotiated $/GPU-hour rates, read from YAML or JSON.

Pure: text in, :class:`ParsedSheet` out (``catalog.price_sources`` fetches the text and
parses it off the event loop). The parse lists every entry it cannot use in
:attr:`ParsedSheet.problems`, each with the card, the value as written and how to write it.
A rate must lie in :func:`price_range`: the bounds of a price typed in a query
(``$X/hr``, ``engine.request.Request.price_per_gpu_hour``), capped by the refresh's
``Limits.max_price_per_gpu_hour``. Applying the rates (the 5x hold-back, keeping a rejected
entry's previous rate) is :func:`catalog.price_build.build_snapshot`'s job.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from catalog.echo import shown
from catalog.price_snapshot import Limits, TeamPrice
from engine.constants import MAX_PRICE_PER_GPU_HOUR, MIN_PRICE_PER_GPU_HOUR

MAX_SHEET_BYTES: Final = 256 * 1024
"""A team sheet longer than this (UTF-8) is refused unread: a sheet of every catalog
card with notes is a few KB."""
MAX_NAME_CHARS: Final = 80
"""The sheet's ``name`` and each ``note`` are cut to this many characters."""
MAX_NOTE_CHARS: Final = 200


def price_range(limits: Limits) -> tuple[float, float]:
    """The lowest and highest usable price, $/GPU-hour (inclusive): a query's own bounds
    (:data:`engine.constants.MIN_PRICE_PER_GPU_HOUR` and ``MAX_PRICE_PER_GPU_HOUR``, what
    ``$X/hr`` accepts), the top capped by ``limits.max_price_per_gpu_hour`` (a price above
    it is a data error). Refreshed (SkyPilot) and team prices are held to it alike."""
    return MIN_PRICE_PER_GPU_HOUR, min(MAX_PRICE_PER_GPU_HOUR, limits.max_price_per_gpu_hour)


def price_problem(price: float, limits: Limits) -> str | None:
    """Why ``price`` ($/GPU-hour) cannot be used, or None when it lies in
    :func:`price_range`."""
    low, high = price_range(limits)
    if not math.isfinite(price):
        return f"not a finite number ({price})"
    if price <= 0:
        return "not positive"
    if price < low:
        return f"below the ${low:g}/GPU-hr minimum"
    if price > high:
        return f"above the ${high:g}/GPU-hr bound"
    return None


def rate_hint(key: str, limits: Limits) -> str:
    """How to write a team rate: the allowed range and an example entry for ``key``."""
    low, high = price_range(limits)
    return (f"a rate must be between ${low:g} and ${high:,g} per GPU-hour, in dollars, "
            f"e.g. `{key}: 2.49`")


class MalformedSheet(ValueError):
    """A team price sheet that cannot be read as a whole (the message says why)."""


class _NoAliasLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses aliases (``*name``, and so ``<<: *name``): a
    nine-line sheet of nested aliases expands to 10^8 items ("billion laughs"), and a
    price sheet never needs one."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            line = event.start_mark.line + 1 if event.start_mark else "?"
            raise MalformedSheet(
                f"YAML aliases (*{shown(str(event.anchor))}, line {line}) are not allowed "
                "in a price sheet: write each rate out"
            )
        return super().compose_node(parent, index)


@dataclass(frozen=True, slots=True)
class ParsedSheet:
    name: str
    prices: dict[str, TeamPrice]
    """Catalog card id -> rate, for entries within :func:`price_range`."""
    raw_prices: dict[str, float]
    """Catalog card id -> the number as written (may be out of range, inf or nan: also
    listed in ``problems``, and rejected by :func:`catalog.price_build.build_snapshot`)."""
    unknown: dict[str, int]
    """Card names the catalog does not know -> 1."""
    problems: tuple[str, ...]
    unreadable: dict[str, str] = field(default_factory=dict)
    """Catalog card id -> the entry as written, when it is not a number (a string,
    ``true``, ``1.0e9`` which YAML reads as a string): rejected, the previous rate kept."""


def load_sheet(text: str) -> Any:
    """The YAML or JSON document of a sheet, refused when too long, aliased, nested
    beyond Python's recursion limit or not YAML. Raises :class:`MalformedSheet`."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SHEET_BYTES:
        raise MalformedSheet(f"{size:,} bytes, over the {MAX_SHEET_BYTES:,}-byte limit")
    try:
        return yaml.load(text, Loader=_NoAliasLoader)  # a SafeLoader without aliases
    except yaml.YAMLError as exc:
        raise MalformedSheet(f"not YAML or JSON: {shown(str(exc), 200)}") from exc
    except RecursionError as exc:
        raise MalformedSheet("nested too deeply to be a price sheet") from exc


def parse_team_sheet(
    text: str, resolve: Callable[[str], str | None], limits: Limits | None = None
) -> ParsedSheet:
    """Read a team sheet (YAML or JSON)::

        name: Acme negotiated rates        # optional
        prices:
          h100-sxm: 2.10                   # card (id or alias) -> $/GPU-hour
          a100-80gb-sxm: {price: 1.40, note: "1-year reserved"}

    ``resolve`` maps a card name or alias to a catalog id (None when unknown). Unknown
    cards, unreadable entries and rates outside :func:`price_range` (``limits``: the
    default :class:`Limits` when None) are listed in ``problems``; the rest are kept. CPU
    bound (YAML): the refresh calls it in a worker thread.
    """
    limits = limits or Limits()
    doc = load_sheet(text)
    if not isinstance(doc, dict) or not isinstance(doc.get("prices"), dict):
        raise MalformedSheet("expected a mapping with a 'prices:' mapping of card -> $/GPU-hour")
    name = shown(str(doc.get("name") or ""), MAX_NAME_CHARS)
    raw: dict[str, float] = {}
    notes: dict[str, str] = {}
    unknown: dict[str, int] = {}
    unreadable: dict[str, str] = {}
    problems: list[str] = []
    for key, value in doc["prices"].items():
        card = resolve(str(key))
        if card is None:
            unknown[shown(str(key))] = 1
            problems.append(f"{shown(str(key))}: unknown card")
            continue
        price, note = _sheet_entry(value)
        if price is None:
            unreadable[card] = shown(value.get("price") if isinstance(value, dict) else value)
            problems.append(f"{shown(str(key))}: expected a number or {{price: N, note: ...}}")
            continue
        raw[card], notes[card] = price, note
        reason = price_problem(price, limits)
        if reason is not None:
            written = shown(value.get("price") if isinstance(value, dict) else value)
            problems.append(f"{_named(str(key), card)}: {written} refused, {reason}; "
                            f"{rate_hint(shown(str(key)), limits)}")
    prices = {
        c: TeamPrice(price=p, note=notes[c]) for c, p in raw.items()
        if price_problem(p, limits) is None
    }
    return ParsedSheet(name, prices, raw, unknown, tuple(problems), unreadable)


def _named(key: str, card: str) -> str:
    """The entry's name as written, with the catalog card it means when that differs."""
    return shown(key) if key == card else f"{shown(key)} ({card})"


def _sheet_entry(value: Any) -> tuple[float | None, str]:
    note = ""
    if isinstance(value, dict):
        note = shown(str(value.get("note") or ""), MAX_NOTE_CHARS)
        value = value.get("price")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, note
    try:
        return float(value), note
    except OverflowError:  # an int beyond float range: infinite for the bounds check
        return math.inf, note

