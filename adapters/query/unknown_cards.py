"""Cards the catalog does not have, named as people name them: a GeForce model number
(``4070``), a maker and a model (``rtx a4500``), a suffix after a catalog card (``3080
ti``). Each gets an error that names the card and the catalog's nearest ones, rather than
blaming a word of its name."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from adapters.query.errors import QueryError, error, quoted
from adapters.query.names import resolve_gpu
from adapters.query.numbers import COUNT_RE, COUNT_X_RE
from adapters.query.spelling import distance
from adapters.query.state import State
from engine.specs import Catalog, normalize_name

_GEFORCE: Final = re.compile(r"^([1-5]0[5-9]0)(?:ti)?s?$")
"""A GeForce model number alone (``4070``, ``3060``, ``3080ti``): a card, never a count."""
CARD_MAKERS: Final = frozenset(
    {"nvidia", "amd", "rtx", "geforce", "quadro", "tesla", "radeon", "instinct"}
)
"""Words that start a card's name (``rtx a4500``, ``nvidia h100``, as ``nvidia-smi``
names cards): with the word after it, a card."""
_CARD_SUFFIXES: Final = frozenset({"ti", "super", "laptop", "mobile", "max-q"})
"""Words that end a card's name (``3080 ti``): with the card before it, another card."""


def near_cards(catalog: Catalog, text: str) -> list[str]:
    """Up to three catalog cards nearest ``text`` (``rtx a4500``: rtx-a4000), by
    their ids, names and aliases with separators dropped, at most 2 edits away."""
    key = normalize_name(text)
    scored: dict[str, float] = {}
    for gpu in catalog.gpus.values():
        for name in (gpu.id, *gpu.aliases):
            if len(name) < 3:
                continue
            d = distance(key, normalize_name(name))
            if d <= 2:
                scored[gpu.id] = min(d, scored.get(gpu.id, d))
    return sorted(scored, key=lambda gpu_id: (scored[gpu_id], gpu_id))[:3]


def _no_card(
    s: State, phrase: str, text: str, near: Sequence[str] = (), tail: str = ""
) -> QueryError:
    """``4070``, ``rtx a4500``, ``3080 ti``: a card's name the catalog does not have,
    with the catalog's nearest cards (``near`` first) and ``tail`` after the advice."""
    found = list(dict.fromkeys([*near, *near_cards(s.catalog, text)]))[:3]
    return error(
        f'"{quoted(phrase)}" is not a card in the catalog: name one it has (the gpus '
        f"command lists them), or its memory instead (16gb for a 16 GB card){tail}.", phrase,
        found, example=f"8b lora 50M tokens {found[0] if found else 'rtx-4090'}",
    )


def _nearest_geforce(catalog: Catalog, number: int) -> list[str]:
    """The catalog's cards named by a model number (``4090``), nearest ``number`` first."""
    numbered = {
        gpu.id: int(alias) for gpu in catalog.gpus.values() for alias in gpu.aliases
        if alias.isdigit()
    }
    return sorted(numbered, key=lambda gpu_id: (abs(numbered[gpu_id] - number), gpu_id))


def unknown_card(s: State, i: int) -> QueryError | None:
    """The card error for an unknown word that is part of a card's name: a maker before
    a model (``rtx a4500``, ``geforce rtx 4070``), a suffix after a catalog card (``3080
    ti``), a GeForce model number (``4070s``); None when the word is none of these."""
    low = s.low(i)
    if low in CARD_MAKERS and i + 1 < len(s.words):
        end = i
        while s.low(end) in CARD_MAKERS and end + 1 < len(s.words):
            end += 1
        text = " ".join(w.low for w in s.words[i : end + 1])
        return _no_card(s, s.raw(i, end - i + 1), text)
    if low in _CARD_SUFFIXES and i > 0 and (card := resolve_gpu(s.catalog, s.low(i - 1))):
        return _no_card(s, s.raw(i - 1, 2), f"{s.low(i - 1)} {low}", [card])
    if (number := _GEFORCE.match(low)) is not None:
        counted = bool(COUNT_RE.match(s.low(i - 1)) or COUNT_X_RE.match(s.low(i - 1)))
        maybe_number = low.isdigit() and not counted  # "4070" alone: a count, perhaps
        tail = "; if it is a number, say what it counts (tokens, seq, bs...)"
        return _no_card(s, s.raw(i), low, _nearest_geforce(s.catalog, int(number.group(1))),
                        tail=tail if maybe_number else "")
    return None
