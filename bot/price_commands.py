"""The price commands' words: ``subscribe [min change %] [cards...]`` options, and the
``prices`` view (the table in force, its sources and what is stale or held back).

Platform-neutral and pure: the service turns them into replies, the adapters render.
"""

from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass
from datetime import datetime

from adapters.formats import fmt_age
from adapters.report import Table
from bot.announce import DEFAULT_MIN_CHANGE_PCT, default_cards
from bot.price_store import Subscription
from bot.price_words import reads_as_number
from catalog.echo import quoted, shown
from catalog.price_snapshot import (
    ANY_WORKSPACE,
    CHOICE_LABELS,
    PriceChoice,
    PriceSnapshot,
    Rejection,
    SourceStatus,
)
from catalog.prices import effective_prices
from engine.specs import Catalog

BUILT_IN_SUMMARY = "Built-in catalog prices (no refresh yet)."
"""How the ``prices`` view opens before any snapshot (``bot.prices.noted_view`` words it
otherwise after a failed refresh)."""

MAX_MIN_CHANGE_PCT = 1000.0
MIN_MIN_CHANGE_PCT = 1.0
"""The smallest minimum change ``subscribe`` takes: below it nearly every refresh would
be announced (a cent on a $2.49 card is 0.4%), so ``0%`` is refused with the range."""
MAX_NUMBER = 100_000.0
"""The largest number a subscribe option reads: a minimum change is at most
:data:`MAX_MIN_CHANGE_PCT` and a card's memory a few hundred GB, so a larger one (or a
400-digit one, which is infinite as a float) is a typo, refused with an example."""
_NUMBER = re.compile(
    r"^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|nan|inf|infinity)%?$", re.IGNORECASE
)
"""Any word that reads as a number, signed, with an exponent, ``nan`` or ``inf`` and an
optional ``%``: each one is read as a number (and refused as one), never as a card."""
_CHANGE_RANGE = f"of {MIN_MIN_CHANGE_PCT:g}% up to {MAX_MIN_CHANGE_PCT:g}%"
SUBSCRIBE_EXAMPLE = "subscribe 10% h100 a100"
PRICES_EXAMPLE = "prices h100 a100"
_PRICES_FILLER = frozenset({
    "all", "list", "table", "please", "for", "of", "and", "the", "current", "now", "today",
    "gpu", "gpus", "card", "cards", "every", "each",
})  # fmt: skip
"""Words after ``prices`` that name no card and narrow nothing (``price list``)."""
MAX_REASONS_SHOWN = 3
"""Rejected entries of the asker's team sheet ``/ftcost prices`` lists with their reasons;
past these, ``and N more``."""
MAX_REASON_CHARS = 200
"""Each listed reason is cut to this many characters (a team rejection's full wording is
about 150), so three of them and the source lines stay within a Discord embed field
(1,024 characters) and a Slack section (3,000)."""


class CommandError(ValueError):
    """A command the bot can't read; the message says what was wrong and how to say it."""


@dataclass(frozen=True, slots=True)
class SubscribeOptions:
    min_change_pct: float = DEFAULT_MIN_CHANGE_PCT
    cards: tuple[str, ...] = ()
    """Catalog ids; empty means every live NVIDIA card."""


def _card(word: str, catalog: Catalog, example: str, command: str) -> str:
    """The catalog id ``word`` names (``h100``, ``a100s``), else a :class:`CommandError`
    with near spellings (or where the cards are listed) and ``example``."""
    for candidate in (word, word.removesuffix("s")):
        card = catalog.find_gpu(candidate)
        if card is not None:
            return card
    close = difflib.get_close_matches(word.lower(), catalog.gpu_names(), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(close)}?" if close else f" `{command} gpus` lists them."
    raise CommandError(f'"{quoted(word)}" is not a card I know.{hint} Example: `{example}`')


class _CardList:
    """The cards a command names, in order, each once. A plain number right after a card
    may be its memory (``a100 40`` is the 40 GB card), so the list remembers the card the
    word before named."""

    def __init__(self, catalog: Catalog, example: str, command: str) -> None:
        self.catalog = catalog
        self.example = example
        self.command = command
        self.ids: list[str] = []
        self._before: tuple[str, str, bool] | None = None
        """The word before, the card it named and whether it added it."""
        self._last: tuple[str, str, bool] | None = None

    def step(self) -> None:
        """Move to the next word: a number there may be the memory of the card before."""
        self._before, self._last = self._last, None

    def add(self, card: str, word: str) -> None:
        self._last = (word, card, card not in self.ids)
        if card not in self.ids:
            self.ids.append(card)

    def add_word(self, word: str) -> None:
        """The card ``word`` names; a :class:`CommandError` when it names none."""
        self.add(_card(word, self.catalog, self.example, self.command), word)

    def add_number(self, word: str) -> bool:
        """A plain number as the memory of the card just before it (``h200 141``, ``a100
        40`` for the 40 GB variant) or as a card (``4090``); False when it is neither."""
        before = self._before
        if before and (memory := _memory_of(before[0], before[1], word, self.catalog)):
            if before[2]:  # the card the word before added: this is its memory
                self.ids.remove(before[1])
            if memory not in self.ids:
                self.ids.append(memory)
            return True
        if (card := self.catalog.find_gpu(word)) is not None:
            self.add(card, word)
            return True
        return False


def _words(args: str) -> list[str]:
    """A command's option words, split at spaces and commas, ``10 %`` read as ``10%``."""
    return [w for w in re.split(r"[\s,]+", re.sub(r"(\d)\s+%", r"\1%", args.strip())) if w]


def _plain_number(word: str) -> bool:
    """A number without ``%`` (``80``, ``4090``): a card's memory, a card or a minimum
    change."""
    return bool(_NUMBER.match(word)) and not word.endswith("%")


def _number(word: str) -> float:
    """The value of a word that reads as a number (``10%``, ``80``, ``1e3``); a
    :class:`CommandError` naming it with the range when it is not a number (``nan``),
    below zero or past :data:`MAX_NUMBER` (``1e309`` included)."""
    value = float(word.rstrip("%"))
    if math.isnan(value):
        problem = "is not a number"
    elif value < 0:
        problem = "is below zero"
    elif not _readable_number(value):
        problem = "is too large a number"
    else:
        return value
    raise CommandError(
        f'"{quoted(word, 24)}" {problem}: give a minimum change {_CHANGE_RANGE} or a card\'s '
        f"memory in GB. Example: `{SUBSCRIBE_EXAMPLE}`, `subscribe a100 40`"
    )


def _min_change(value: float) -> float:
    """``value`` as the minimum change; a :class:`CommandError` with the range outside
    :data:`MIN_MIN_CHANGE_PCT` to :data:`MAX_MIN_CHANGE_PCT`."""
    if value > MAX_MIN_CHANGE_PCT:
        problem = "would never be reached"
    elif value < MIN_MIN_CHANGE_PCT:
        problem = "would announce nearly every refresh (a cent on a $2.49 card is 0.4%)"
    else:
        return value
    raise CommandError(
        f"A minimum change of {value:g}% {problem}: give one {_CHANGE_RANGE}. "
        f"Example: `{SUBSCRIBE_EXAMPLE}`"
    )


def parse_subscribe(args: str, catalog: Catalog, command: str = "/ftcost") -> SubscribeOptions:
    """``10% h100, a100`` -> 10% and those cards; ``""`` -> 5% and every live NVIDIA card.
    A number with ``%`` is the minimum change; one without, right after a card, is that
    card's memory (``h200 141``, ``a100 80``; ``a100 40`` picks the 40 GB card), else a
    card when it names one (``4090``), else the minimum change. Any word that reads as a
    number (``-5%``, ``1e309``, ``nan%``) is read as one and refused outside its range;
    ``command`` is the slash command the errors name."""
    pct: float | None = None
    cards = _CardList(catalog, SUBSCRIBE_EXAMPLE, command)
    for word in _words(args):
        cards.step()
        if word.lower() == "all":
            continue
        if not _NUMBER.match(word):
            cards.add_word(word)
            continue
        value = _number(word)
        if _plain_number(word) and cards.add_number(word):
            continue
        if pct is not None:
            raise CommandError(
                f"Give one minimum change, not {pct:g}% and {word}. "
                f"Example: `{SUBSCRIBE_EXAMPLE}`"
            )
        pct = _min_change(value)
    return SubscribeOptions(DEFAULT_MIN_CHANGE_PCT if pct is None else pct, tuple(cards.ids))


def parse_price_cards(args: str, catalog: Catalog, command: str = "/ftcost") -> tuple[str, ...]:
    """The cards ``prices h100, a100 40`` names, whose rows alone are shown; ``()`` for
    every card (``prices``, ``prices list``, ``prices all``). A card's memory may follow it
    as in ``subscribe``; a word that is no card is a :class:`CommandError`, and one that
    reads as a price (``3``, ``$2/hr``) says how to give an estimate a price instead."""
    cards = _CardList(catalog, f"{command} {PRICES_EXAMPLE}", command)
    for word in _words(args):
        cards.step()
        word = word.strip("?!.:;()")
        if not word or word.lower() in _PRICES_FILLER:
            continue
        if _plain_number(word):
            if cards.add_number(word):
                continue
        elif not reads_as_number(word) or catalog.find_gpu(word) is not None:
            cards.add_word(word)
            continue
        raise CommandError(
            f'"{quoted(word, 24)}" is not a card: `{command} prices` shows every card, '
            f"`{command} {PRICES_EXAMPLE}` only those. To price an estimate at your own rate, "
            f"say it in the question (`70b qlora h100 price 2.49`) or reply "
            f"`price {quoted(word, 24)}` in its thread."
        )
    return tuple(cards.ids)


def _readable_number(value: float) -> bool:
    return math.isfinite(value) and 0 <= value <= MAX_NUMBER


def _memory_of(name: str, card: str, number: str, catalog: Catalog) -> str | None:
    """The card ``name number`` means when the number is a memory size: ``card`` itself
    when it has that much (``h200 141``), the variant with it (``a100 40``), else None."""
    value = float(number)
    if not _readable_number(value):
        return None
    if round(catalog.gpu(card).memory_gb) == round(value):
        return card
    return catalog.find_gpu(f"{name} {number}gb")


def describe_subscription(sub: Subscription, catalog: Catalog) -> str:
    """``changes of 5% or more in every live NVIDIA card`` / ``... in h100-sxm, l40s``."""
    cards = ", ".join(sub.cards) if sub.cards else "every live NVIDIA card"
    text = f"price changes of {sub.min_change_pct:g}% or more in {cards}"
    if sub.gone:
        text += f" (paused: the bot could not post here: {sub.gone})"
    return text


# ------------------------------------------------------------------------------------------
# the prices view


@dataclass(frozen=True, slots=True)
class PricesView:
    title: str
    summary: str
    """How prices are chosen and when they were refreshed."""
    table: Table
    sources: list[str]
    """One line per source; stale ones say since when and why."""
    held_back: list[str]


def _money(value: float | None, cloud: str | None = None) -> str:
    if value is None:
        return "-"
    return f"${value:.2f}" + (f" {cloud}" if cloud else "")


def _source_line(s: SourceStatus, now: datetime) -> str:
    if s.ok:
        extra = []
        if s.unknown:
            extra.append(f"{sum(s.unknown.values())} rows with unmapped names")
        if s.rejected:
            extra.append(f"{s.rejected} prices rejected")
        if s.vanished:
            extra.append(f"{s.vanished} cards no longer listed, last price kept")
        more = f" ({'; '.join(extra)})" if extra else ""
        return f"{s.name}: ok, {s.offers} offers{more}"
    since = (
        f"prices from {fmt_age((now - s.last_success_at).total_seconds())} ago kept"
        if s.last_success_at
        else "never fetched"
    )
    times = "once" if s.consecutive_failures == 1 else f"{s.consecutive_failures} times in a row"
    return f"{s.name}: STALE, {s.error} (failed {times}); {since}"


def _reason_line(r: Rejection) -> str:
    """``↳ h100-sxm: 0.001 refused, below the $0.01/GPU-hr minimum; a rate must be ...``."""
    value = "" if r.price is None else f"{r.price:g} "
    return shown(f"↳ {r.card}: {value}refused, {r.reason}", MAX_REASON_CHARS)


def _own_sheet_sources(workspace: str | None) -> set[str]:
    """The team-sheet sources whose rejections the asker may see: its workspace's own
    sheet (``team:slack:T1``) and the sheet for every workspace (``team:*``), never
    another workspace's."""
    names = {f"team:{ANY_WORKSPACE}"}
    if workspace is not None and workspace != ANY_WORKSPACE:
        names.add(f"team:{workspace}")
    return names


def _sources_with_reasons(snapshot: PriceSnapshot, workspace: str | None, now: datetime
                          ) -> list[str]:  # fmt: skip
    """One line per source; under the asker's own team sheet, the reasons of its first
    :data:`MAX_REASONS_SHOWN` rejected entries and ``and N more`` past them (N counts
    every rejection the refresh made, including any the snapshot did not keep)."""
    own = _own_sheet_sources(workspace)
    lines: list[str] = []
    for s in snapshot.sources:
        lines.append(_source_line(s, now))
        if s.kind != "team" or s.name not in own or not s.ok:
            continue
        reasons = [r for r in snapshot.rejected if r.kind == "team" and r.source == s.name]
        lines += [_reason_line(r) for r in reasons[:MAX_REASONS_SHOWN]]
        more = max(s.rejected, len(reasons)) - min(len(reasons), MAX_REASONS_SHOWN)
        if more > 0:
            lines.append(f"↳ and {more} more rejected {'entry' if more == 1 else 'entries'}")
    return lines


def _every_card(snapshot: PriceSnapshot | None, catalog: Catalog) -> list[str]:
    """The rows of the whole table: the live NVIDIA cards, then any other card a refresh
    priced."""
    cards = list(default_cards(catalog))
    if snapshot is not None:
        cards += [c for c in snapshot.cards if c not in cards and c in catalog.gpus]
    return cards


def prices_view(
    snapshot: PriceSnapshot | None,
    catalog: Catalog,
    now: datetime,
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND,
    workspace: str | None = None,
    cards: tuple[str, ...] = (),
) -> PricesView:
    """The table ``/ftcost prices`` shows: per card the price in force and the lowest,
    median and spot prices with their clouds ($/GPU-hour), each source's state, and why
    entries of the asking ``workspace``'s own team sheet were rejected (at most
    :data:`MAX_REASONS_SHOWN` lines, then a count; never another workspace's). With
    ``cards``, only their rows and held-back lines (``prices h100``)."""
    prices = effective_prices(snapshot, catalog, choice, workspace)
    shown = list(cards) or _every_card(snapshot, catalog)
    rows = []
    for card in shown:
        p = prices.get(card)
        stats = snapshot.cards.get(card) if snapshot else None
        low = stats.lowest_on_demand if stats else None
        med = stats.median_on_demand if stats else None
        spot = stats.lowest_spot if stats else None
        if p is None:
            in_force, age = "n/a", ""
        else:
            in_force = f"${p.price:.2f}" + ("*" if p.kind == "team" else "")
            if p.kind == "catalog" or p.as_of is None:
                age = "built-in"
            else:
                age = fmt_age((now - p.as_of).total_seconds())
        rows.append([
            card, in_force,
            _money(low.price if low else None, low.cloud if low else None),
            _money(med.price if med else None, med.cloud if med else None),
            _money(spot.price if spot else None, spot.cloud if spot else None),
            age,
        ])  # fmt: skip
    table = Table(["card", "in use", "lowest", "median", "spot", "age"], rows, "lrllll")
    label = CHOICE_LABELS[choice]
    if snapshot is None:
        summary = BUILT_IN_SUMMARY
    else:
        age = fmt_age((now - snapshot.taken_at).total_seconds())
        refreshed = "just now" if age == "just now" else f"{age} ago"
        summary = (
            f"In use: the {label} price, $/GPU-hour; built-in catalog price where no "
            f"source lists the card. Refreshed {refreshed} "
            f"({snapshot.taken_at:%Y-%m-%d %H:%M} UTC)."
        )
        sheet = snapshot.team_sheet(workspace)
        if sheet is not None and sheet.prices:
            summary += f" * = your team rate ({sheet.name or 'team price sheet'})."
    sources = _sources_with_reasons(snapshot, workspace, now) if snapshot else []
    held = [
        f"{h.card}: {h.statistic} ${h.old:.2f} → ${h.new:.2f} ({h.ratio:.1f}x) held back, "
        "not applied"
        for h in (snapshot.held_back if snapshot else [])
        if not cards or h.card in cards
    ]
    return PricesView("GPU prices", summary, table, sources, held)
