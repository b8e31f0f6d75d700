"""Team price sheets: a team's negotiated $/GPU-hour rates, read from YAML or JSON.

Pure: text in, :class:`ParsedSheet` out (``catalog.price_sources`` fetches the text and
parses it off the event loop). The parse lists every entry it cannot use in
:attr:`ParsedSheet.problems`, each with the card, the value as written and how to write it.
A rate must lie in :func:`price_range`: the bounds of a price typed in a query
(``$X/hr``, ``engine.request.Request.price_per_gpu_hour``), capped by the refresh's
``Limits.max_price_per_gpu_hour``. Applying the rates (the 5x hold-back, keeping a rejected
entry's previous rate) is :func:`catalog.price_build.build_snapshot`'s job.

Aliases (``*name``: a nine-line sheet of nested aliases expands to 10^8 items, the
"billion laughs") and nesting past :data:`MAX_SHEET_DEPTH` are refused before any node
is built, by the guard shared with the other YAML readers
(:func:`catalog.safe_yaml.check_events`; a bare anchor, which expands nothing, is read).

A rate is a plain decimal number: YAML 1.1's other spellings (``1:30`` is base 60, so
$90; ``010`` octal) are refused like text. A value YAML cannot build at all (a date past
the calendar, ``!!float 'abc'``, 5,000 digits) refuses the sheet as a
:class:`MalformedSheet` naming its line and key. The sheet's ``name`` and each ``note``
are read as one plain line (:func:`catalog.echo.one_line`): they reach every estimate's
price line and every chat reply that names the rate.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

import yaml

from catalog.echo import one_line, shown
from catalog.price_snapshot import (
    MAX_NAME_CHARS,
    MAX_NOTE_CHARS,
    PRICE_BOUNDS,
    Limits,
    TeamPrice,
)
from catalog.safe_yaml import Refusal, YamlRefused, check_events

MAX_SHEET_BYTES: Final = 256 * 1024
"""A team sheet longer than this (UTF-8) is refused unread: a sheet of every catalog
card with notes is a few KB."""
MAX_SHEET_DEPTH: Final = 16
"""Collections nested deeper than this refuse the sheet before any node is built (a sheet
nests three: ``prices: h100: {price: ...}``)."""
_PLAIN_NUMBER: Final = re.compile(r"[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
"""A rate as a person writes one: ``2.49``, ``12``, ``0.5``, ``2.5e+1``. Not the other
YAML 1.1 spellings of a number: ``1:30`` (base 60: 90), ``010`` (octal: 8), ``0x2``,
``1_5``."""
_OCTAL: Final = re.compile(r"[-+]?0[0-9]+")


def price_range(limits: Limits) -> tuple[float, float]:
    """The lowest and highest usable price, $/GPU-hour (inclusive): a query's own bounds
    (:data:`engine.constants.MIN_PRICE_PER_GPU_HOUR` and ``MAX_PRICE_PER_GPU_HOUR``, what
    ``$X/hr`` accepts), the top capped by ``limits.max_price_per_gpu_hour`` (a price above
    it is a data error). Refreshed (SkyPilot) and team prices are held to it alike."""
    low, high = PRICE_BOUNDS
    return low, min(high, limits.max_price_per_gpu_hour)


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
        return f"above the ${high:,g}/GPU-hr bound"
    return None


def rate_hint(key: str, limits: Limits) -> str:
    """How to write a team rate: the allowed range and an example entry for ``key``."""
    low, high = price_range(limits)
    return (f"a rate must be between ${low:g} and ${high:,g} per GPU-hour, in dollars, "
            f"e.g. `{key}: 2.49`")


class MalformedSheet(ValueError):
    """A team price sheet that cannot be read as a whole (the message says why)."""


class _Entry(NamedTuple):
    """One ``key: value`` pair of a YAML mapping, as written."""

    key: Any
    value: Any
    line: int
    """1-based line of the key."""
    text: str
    """The value as written when it is a scalar (``0.0001``, ``cheap``), else ``""``."""


class _Mapping(dict[Any, Any]):
    """A YAML mapping (the last of a repeated key's values, as any YAML reader) that also
    keeps every entry in order, so a repeated key is seen instead of silently merged."""

    __slots__ = ("entries",)

    def __init__(self) -> None:
        super().__init__()
        self.entries: list[_Entry] = []

    def repeated(self) -> dict[Any, list[_Entry]]:
        """Each key written more than once -> its entries."""
        groups: dict[Any, list[_Entry]] = {}
        for entry in self.entries:
            groups.setdefault(entry.key, []).append(entry)
        return {key: group for key, group in groups.items() if len(group) > 1}


class _SheetLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` for a sheet :func:`load_sheet` has checked (no aliases, bounded
    nesting). Mappings load as :class:`_Mapping`, which keeps a repeated key's every entry
    (PyYAML keeps the last one silently). A value YAML cannot build raises
    :class:`_Unbuildable` (never a bare ValueError or KeyError), and so does an integer of
    4,300+ digits (:func:`_construct_int`)."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (_Unbuildable, MalformedSheet, yaml.YAMLError, RecursionError):
            raise  # nesting too deep is reported by load_sheet
        except Exception as exc:  # any constructor's failure: ValueError, KeyError, ...
            raise _Unbuildable(node, exc) from exc


_TEXT_KEYS: Final = frozenset({"name", "note"})
_TOO_DEEP: Final = "nested too deeply to be a price sheet"


class _Unbuildable(Exception):
    """A node YAML cannot build (a date past the calendar, ``!!float 'abc'``, an integer
    of 4,300+ digits, ``!!bool maybe``): raised by the innermost node that failed,
    given the key it is the value of by the mapping that holds it, and turned into a
    :class:`MalformedSheet` by :func:`load_sheet`."""

    def __init__(self, node: yaml.Node, error: Exception) -> None:
        super().__init__(str(error))
        self.node, self.error = node, error
        self.key: Any = None

    def sheet_error(self) -> MalformedSheet:
        """What is wrong, where (line and key), and how to write it."""
        node, key, exc = self.node, self.key, self.error
        written = node.value if isinstance(node, yaml.ScalarNode) else node.tag
        if node.tag.endswith(":timestamp"):
            why = f"YAML reads it as a date, and it is not one ({one_line(str(exc))})"
        elif node.tag.endswith((":int", ":float")):
            digits = "digits" in str(exc)  # Python's 4,300-digit limit, or _construct_int's
            why = "a number of over 4,300 digits" if digits else "YAML cannot read it as a number"
        else:
            tag = node.tag.replace("tag:yaml.org,2002:", "!!")
            why = f"YAML cannot read it as {one_line(tag)} ({one_line(str(exc))})"
        where = f"line {node.start_mark.line + 1}"
        if key is not None:
            where += f", '{one_line(str(key))}:'"
        if isinstance(key, str) and key in _TEXT_KEYS:
            fix = f'write text in quotes, e.g. `{key}: "{one_line(written, 40)}"`'
        else:
            fix = ("write a rate as a plain number of dollars per GPU-hour, e.g. "
                   "`h100: 2.49`, and text in quotes")
        return MalformedSheet(f"{where}: {one_line(written)} cannot be read: {why}; {fix}")


def _construct_int(loader: _SheetLoader, node: yaml.ScalarNode) -> int:
    """A YAML integer, refused beyond 4,300 digits (``0x`` and ``0b`` integers skip
    Python's digit limit, and then cannot be written back as text)."""
    value = loader.construct_yaml_int(node)
    try:
        str(value)
    except ValueError as exc:
        raise ValueError("over 4,300 digits") from exc
    return value


def _construct_mapping(loader: _SheetLoader, node: yaml.MappingNode) -> _Mapping:
    loader.flatten_mapping(node)
    data = _Mapping()
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        try:
            hash(key)
        except TypeError as exc:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark, "found unhashable key",
                key_node.start_mark) from exc  # fmt: skip
        try:
            value = loader.construct_object(value_node, deep=True)
        except _Unbuildable as exc:
            exc.key = key if exc.key is None else exc.key
            raise
        text = value_node.value if isinstance(value_node, yaml.ScalarNode) else ""
        data.entries.append(_Entry(key, value, key_node.start_mark.line + 1, text))
        data[key] = value
    return data


_SheetLoader.add_constructor("tag:yaml.org,2002:map", _construct_mapping)
_SheetLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)


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
    ``true``, ``1.0e9`` which YAML reads as a string) or not a plain one (``1:30``, which
    YAML 1.1 reads as 90; ``0x2``; ``010``): rejected, the previous rate kept."""
    duplicates: dict[str, str] = field(default_factory=dict)
    """Catalog card id -> its entries as written, when the sheet lists the card more than
    once (a repeated key, or two aliases of one card): neither rate is used, the previous
    rate kept."""


def load_sheet(text: str) -> Any:
    """The YAML or JSON document of a sheet, refused when too long, aliased, nested
    deeper than :data:`MAX_SHEET_DEPTH`, not YAML or holding a value YAML cannot build (a
    date past the calendar: :class:`_Unbuildable`). Raises :class:`MalformedSheet`."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SHEET_BYTES:
        raise MalformedSheet(f"{size:,} bytes, over the {MAX_SHEET_BYTES:,}-byte limit")
    try:
        check_events(text, max_depth=MAX_SHEET_DEPTH, allow_anchors=True)
        return yaml.load(text, Loader=_SheetLoader)
    except YamlRefused as exc:
        if exc.kind is Refusal.ALIAS:
            line = exc.line if exc.line is not None else "?"
            raise MalformedSheet(
                f"YAML aliases (*{one_line(exc.name or '')}, line {line}) are not allowed "
                "in a price sheet: write each rate out"
            ) from exc
        raise MalformedSheet(_TOO_DEEP) from exc
    except yaml.YAMLError as exc:
        raise MalformedSheet(f"not YAML or JSON: {one_line(str(exc), 200)}") from exc
    except RecursionError as exc:  # a backstop: check_events has capped the nesting
        raise MalformedSheet(_TOO_DEEP) from exc
    except _Unbuildable as exc:
        raise exc.sheet_error() from exc.error


def parse_team_sheet(
    text: str, resolve: Callable[[str], str | None], limits: Limits | None = None
) -> ParsedSheet:
    """Read a team sheet (YAML or JSON)::

        name: Acme negotiated rates        # optional
        prices:
          h100-sxm: 2.10                   # card (id or alias) -> $/GPU-hour
          a100-80gb-sxm: {price: 1.40, note: "1-year reserved"}

    ``resolve`` maps a card name or alias to a catalog id (None when unknown). Unknown
    cards, unreadable entries, rates outside :func:`price_range` (``limits``: the default
    :class:`Limits` when None) and cards listed more than once (a repeated key, or two
    aliases of one card: neither rate is used) are listed in ``problems``; the rest are
    kept. A repeated top-level key (two ``prices:``) refuses the sheet. CPU bound (YAML):
    the refresh calls it in a worker thread.
    """
    limits = limits or Limits()
    doc = load_sheet(text)
    if not isinstance(doc, _Mapping) or not isinstance(doc.get("prices"), _Mapping):
        raise MalformedSheet("expected a mapping with a 'prices:' mapping of card -> $/GPU-hour")
    if doc.repeated():  # two 'prices:' mappings: which one the editor meant is unknown
        key, group = next(iter(doc.repeated().items()))
        lines = ", ".join(str(e.line) for e in group)
        raise MalformedSheet(
            f"'{one_line(str(key))}:' is written {len(group)} times (lines {lines}): "
            "a sheet has one of each; merge them into one"
        )
    name = one_line(str(doc.get("name") or ""), MAX_NAME_CHARS)
    raw: dict[str, float] = {}
    notes: dict[str, str] = {}
    unknown: dict[str, int] = {}
    unreadable: dict[str, str] = {}
    duplicates: dict[str, str] = {}
    problems: list[str] = []
    by_card: dict[str, list[_Entry]] = {}
    for entry in doc["prices"].entries:
        card = resolve(str(entry.key))
        if card is None:
            written = one_line(str(entry.key))
            if written not in unknown:
                unknown[written] = 1
                problems.append(f"{written}: unknown card")
            continue
        by_card.setdefault(card, []).append(entry)
    for card, group in by_card.items():
        repeats = group if len(group) > 1 else _flatten(_repeated(group[0].value))
        if repeats:
            duplicates[card] = ", ".join(
                f"{one_line(str(e.key))}: {_written(e)} (line {e.line})" for e in repeats)
            problems.append(
                f"{card} is listed more than once ({duplicates[card]}): neither rate is used, "
                f"the sheet's previous rate for {card} (if any) stays; keep one entry per card"
            )
            continue
        price, note, problem = _judge(group[0], card, limits)
        if problem is not None:
            problems.append(problem)
        if price is None:
            unreadable[card] = _written(group[0])
        else:
            raw[card], notes[card] = price, note
    prices = {
        c: TeamPrice(price=p, note=notes[c]) for c, p in raw.items()
        if price_problem(p, limits) is None
    }
    return ParsedSheet(name, prices, raw, unknown, tuple(problems), unreadable, duplicates)


def _judge(entry: _Entry, card: str, limits: Limits) -> tuple[float | None, str, str | None]:
    """A card's one entry: its rate ($/GPU-hour; None when not a number), its note, and
    the problem to report (None when the rate is usable)."""
    key = one_line(str(entry.key))
    price, note = _sheet_entry(entry.value)
    if price is None:
        return None, note, f"{key}: expected a number or {{price: N, note: ...}}"
    if math.isfinite(price) and not _plain(_price_text(entry)):
        return None, note, (f"{_named(str(entry.key), card)}: {_written(entry)} refused, not "
                            f"a plain number (YAML 1.1 reads it as {price:g}); "
                            f"{rate_hint(key, limits)}")
    reason = price_problem(price, limits)
    if reason is None:
        return price, note, None
    return price, note, (f"{_named(str(entry.key), card)}: {_written(entry)} refused, "
                         f"{reason}; {rate_hint(key, limits)}")


def _repeated(value: Any) -> dict[Any, list[_Entry]]:
    """A loaded mapping's repeated keys -> their entries (none for anything else)."""
    return value.repeated() if isinstance(value, _Mapping) else {}


def _flatten(groups: dict[Any, list[_Entry]]) -> list[_Entry]:
    return [entry for group in groups.values() for entry in group]


def _plain(text: str) -> bool:
    """Whether a rate is written as a plain decimal number (:data:`_PLAIN_NUMBER`)."""
    return bool(_PLAIN_NUMBER.fullmatch(text)) and not _OCTAL.fullmatch(text)


def _price_entry(entry: _Entry) -> _Entry | None:
    """The ``price:`` of a ``{price: N, note: ...}`` entry (None for anything else)."""
    if isinstance(entry.value, _Mapping):
        prices = [e for e in entry.value.entries if e.key == "price"]
        return prices[-1] if prices else None
    return None


def _price_text(entry: _Entry) -> str:
    """An entry's rate as written, uncut: the scalar's text, or the ``price:``'s."""
    price = _price_entry(entry)
    return entry.text if price is None else price.text


def _written(entry: _Entry) -> str:
    """An entry's rate as written (one line, cut): the scalar's text, or the ``price:``
    of a mapping."""
    if entry.text:
        return one_line(entry.text)
    price = _price_entry(entry)
    return _written(price) if price is not None else one_line(shown(entry.value))


def _named(key: str, card: str) -> str:
    """The entry's name as written, with the catalog card it means when that differs."""
    return one_line(key) if key == card else f"{one_line(key)} ({card})"


def _sheet_entry(value: Any) -> tuple[float | None, str]:
    note = ""
    if isinstance(value, dict):
        note = one_line(str(value.get("note") or ""), MAX_NOTE_CHARS)
        value = value.get("price")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None, note
    try:
        return float(value), note
    except OverflowError:  # an int beyond float range: infinite for the bounds check
        return math.inf, note

