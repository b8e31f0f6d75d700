"""Team price sheets: a team's negotiated $/GPU-hour rates, read from YAML or JSON.

Pure: text in, :class:`ParsedSheet` out (``catalog.price_sources`` fetches the text and
parses it off the event loop). Judging the rates (bounds, the 5x hold-back, keeping a
rejected entry's previous rate) is :func:`catalog.price_build.build_snapshot`'s job.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from catalog.price_snapshot import TeamPrice


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
