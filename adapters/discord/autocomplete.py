"""Autocomplete for ``/ftcost``'s ``model`` and ``gpu`` options: fuzzy, aliases included,
at most 25 choices, every name and value within Discord's 100 characters.

Matching works on normalized names (``Llama-3.1 8B`` ~ ``llama3.18b``, see
:func:`engine.specs.normalize_name`) of every id, display name, alias and bare size
(``70b``). A model or card scores by its best name: exact, then prefix, then substring,
then all-words matches, then a close ``difflib`` ratio; ties go to the catalog order
(models a bare size names first, then by family and size; cards by memory).

A choice's value is the catalog id (what the option parser resolves fastest); its name
shows the id, the display name, and the alias or size that matched when that is
neither. The GPU option keeps a typed count: ``8x h1`` offers ``8x h100-sxm``.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache

from adapters.discord.limits import MAX_CHOICE_NAME, MAX_CHOICE_VALUE, MAX_CHOICES, cut
from adapters.formats import fmt_params
from engine.specs import Catalog, normalize_name


@dataclass(frozen=True, slots=True)
class Pick:
    """One autocomplete choice."""

    name: str
    value: str


@dataclass(frozen=True, slots=True)
class _Entry:
    id: str
    label: str
    names: tuple[tuple[str, str], ...]
    """(normalized, as written) for every name that resolves to this entry."""


@lru_cache(maxsize=8)
def _model_entries(catalog: Catalog) -> tuple[_Entry, ...]:
    sizes: dict[str, list[str]] = {}
    for size, model_id in catalog.sizes.items():
        sizes.setdefault(model_id, []).append(size)
    entries = []
    # models a bare size names (8b, 70b) first: the ones people mean most often
    for m in sorted(
        catalog.models.values(), key=lambda m: (m.id not in sizes, m.family, m.params)
    ):
        params = fmt_params(m.params)
        if m.is_moe:
            params += f", {fmt_params(m.active_params)} active"
        written = [m.id, m.name, *m.aliases, *sizes.get(m.id, [])]
        names = tuple(dict.fromkeys((normalize_name(w), w) for w in written))
        entries.append(_Entry(m.id, f"{m.name} ({params})", names))
    return tuple(entries)


@lru_cache(maxsize=8)
def _gpu_entries(catalog: Catalog) -> tuple[_Entry, ...]:
    entries = []
    for g in sorted(catalog.gpus.values(), key=lambda g: (g.vendor != "NVIDIA", -g.memory_gb)):
        price = "" if g.price_per_gpu_hour is None else f", ${g.price_per_gpu_hour:.2f}/hr"
        written = [g.id, g.name, *g.aliases]
        names = tuple(dict.fromkeys((normalize_name(w), w) for w in written))
        entries.append(_Entry(g.id, f"{g.name} ({g.memory_gb:g} GB{price})", names))
    return tuple(entries)


def _score(query: str, words: list[str], entry: _Entry) -> tuple[float, str]:
    """(score, the name that matched) — higher is better, 0 is no match."""
    best, hit = 0.0, ""
    for norm, written in entry.names:
        if norm == query:
            score = 100.0
        elif norm.startswith(query):
            score = 80.0 - len(norm) / 100
        elif query in norm:
            score = 60.0 - len(norm) / 100
        elif words and all(w in norm for w in words):
            score = 50.0 - len(norm) / 100
        else:
            ratio = difflib.SequenceMatcher(None, query, norm).ratio()
            score = 40.0 * ratio if ratio >= 0.6 else 0.0
        if score > best:
            best, hit = score, written
    return best, hit


def _choice_name(entry: _Entry, hit: str, prefix: str) -> str:
    shown = entry.id
    if hit and normalize_name(hit) not in (normalize_name(entry.id), normalize_name(
            entry.label.split(" (")[0])):
        shown = f"{entry.id} ({hit})" if len(hit) <= 40 else entry.id
    return cut(f"{prefix}{shown} · {entry.label}", MAX_CHOICE_NAME)


def _complete(entries: tuple[_Entry, ...], current: str, prefix: str = "") -> list[Pick]:
    query = normalize_name(current)
    if not query:
        picks = [Pick(_choice_name(e, "", prefix), prefix + e.id) for e in entries]
        return picks[:MAX_CHOICES]
    words = [normalize_name(w) for w in re.split(r"[\s/]+", current) if normalize_name(w)]
    scored = []
    for order, entry in enumerate(entries):
        score, hit = _score(query, words, entry)
        if score > 0:
            scored.append((-score, order, entry, hit))
    scored.sort(key=lambda item: (item[0], item[1]))
    picks = [
        Pick(_choice_name(entry, hit, prefix), prefix + entry.id)
        for _, _, entry, hit in scored[:MAX_CHOICES]
    ]
    return [p for p in picks if len(p.value) <= MAX_CHOICE_VALUE]


def model_choices(catalog: Catalog, current: str) -> list[Pick]:
    """Models matching what the user has typed so far (all of them, by family, when
    nothing is typed yet), at most 25."""
    return _complete(_model_entries(catalog), current or "")


_COUNT = re.compile(r"^\s*(\d{1,6})\s*(?:x\s*|\*\s*|\s+)(?=\S)", re.IGNORECASE)


def gpu_choices(catalog: Catalog, current: str) -> list[Pick]:
    """Cards matching what the user has typed, keeping a leading count (``8x h1``)."""
    current = current or ""
    prefix = ""
    match = _COUNT.match(current)
    if match:
        prefix = f"{int(match.group(1))}x "
        current = current[match.end():]
    return _complete(_gpu_entries(catalog), current, prefix)
