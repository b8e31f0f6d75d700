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
from catalog.echo import shown
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

MAX_MIN_CHANGE_PCT = 1000.0
MAX_NUMBER = 100_000.0
"""The largest number a subscribe option reads: a minimum change is at most
:data:`MAX_MIN_CHANGE_PCT` and a card's memory a few hundred GB, so a larger one (or a
400-digit one, which is infinite as a float) is a typo, refused with an example."""
_PERCENT = re.compile(r"^(\d+(?:\.\d+)?)\s*%?$")
SUBSCRIBE_EXAMPLE = "subscribe 10% h100 a100"
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


def _card(word: str, catalog: Catalog) -> str:
    for candidate in (word, word.removesuffix("s")):
        card = catalog.find_gpu(candidate)
        if card is not None:
            return card
    close = difflib.get_close_matches(word.lower(), catalog.gpu_names(), n=3, cutoff=0.6)
    hint = f" Did you mean {', '.join(close)}?" if close else " `/ftcost gpus` lists them."
    raise CommandError(
        f'"{shown(word)}" is not a card I know.{hint} Example: `{SUBSCRIBE_EXAMPLE}`'
    )


def parse_subscribe(args: str, catalog: Catalog) -> SubscribeOptions:
    """``10% h100, a100`` -> 10% and those cards; ``""`` -> 5% and every live NVIDIA card.
    A number with ``%`` is the minimum change; one without, right after a card, is that
    card's memory (``h200 141``, ``a100 80``; ``a100 40`` picks the 40 GB card), else a
    card when it names one (``4090``), else the minimum change."""
    pct: float | None = None
    cards: list[str] = []
    previous: tuple[str, str, bool] | None = None  # the word before: (word, card, added)

    def add(card: str, word: str) -> None:
        nonlocal previous
        previous = (word, card, card not in cards)
        if card not in cards:
            cards.append(card)

    for word in re.split(r"[\s,]+", re.sub(r"(\d)\s+%", r"\1%", args.strip())):
        before, previous = previous, None
        if not word or word.lower() == "all":
            continue
        match = _PERCENT.match(word)
        if match and not _readable_number(float(match.group(1))):
            raise CommandError(
                f'"{shown(word, 24)}" is too large a number: give a minimum change up to '
                f"{MAX_MIN_CHANGE_PCT:g}% or a card's memory in GB. Example: "
                f"`{SUBSCRIBE_EXAMPLE}`, `subscribe a100 40`"
            )
        if match and not word.endswith("%"):
            if before and (memory := _memory_of(*before[:2], word, catalog)) is not None:
                if before[2]:  # the card the word before added: this is its memory
                    cards.remove(before[1])
                if memory not in cards:
                    cards.append(memory)
                continue
            if (card := catalog.find_gpu(word)) is not None:
                add(card, word)
                continue
        if match:
            if pct is not None:
                raise CommandError(
                    f"Give one minimum change, not {pct:g}% and {word}. "
                    f"Example: `{SUBSCRIBE_EXAMPLE}`"
                )
            pct = float(match.group(1))
            if pct > MAX_MIN_CHANGE_PCT:
                raise CommandError(
                    f"A minimum change of {pct:g}% would never be reached: give one up to "
                    f"{MAX_MIN_CHANGE_PCT:g}%. Example: `{SUBSCRIBE_EXAMPLE}`"
                )
            continue
        add(_card(word, catalog), word)
    return SubscribeOptions(DEFAULT_MIN_CHANGE_PCT if pct is None else pct, tuple(cards))


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


def prices_view(
    snapshot: PriceSnapshot | None,
    catalog: Catalog,
    now: datetime,
    choice: PriceChoice = PriceChoice.LOWEST_ON_DEMAND,
    workspace: str | None = None,
) -> PricesView:
    """The table ``/ftcost prices`` shows: per card the price in force and the lowest,
    median and spot prices with their clouds ($/GPU-hour), each source's state, and why
    entries of the asking ``workspace``'s own team sheet were rejected (at most
    :data:`MAX_REASONS_SHOWN` lines, then a count; never another workspace's)."""
    prices = effective_prices(snapshot, catalog, choice, workspace)
    shown = list(default_cards(catalog))
    if snapshot is not None:
        shown += [c for c in snapshot.cards if c not in shown and c in catalog.gpus]
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
        summary = "Built-in catalog prices (no refresh yet)."
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
    ]
    return PricesView("GPU prices", summary, table, sources, held)
