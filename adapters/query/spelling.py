"""Near spellings: the known words a typo was probably meant as (``suggest``), by edit
distance with swaps (``distance``)."""

from __future__ import annotations

import re
from typing import Final

from adapters.query.errors import MAX_SHOWN
from adapters.query.names import catalog_index
from engine.specs import Catalog


def distance(a: str, b: str) -> int:
    """Edits (insert, delete, substitute, swap two neighbours) from ``a`` to ``b``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        row = [i]
        for j, cb in enumerate(b, 1):
            cost = min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (ca != cb))
            if i > 1 and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, prev2[j - 2] + 1)
            row.append(cost)
        prev2, prev = prev, row
    return prev[-1]


_CARD_LIKE: Final = re.compile(r"^(?:[abhlvt][0-9]|rtx|mi[0-9]|gaudi|gb[0-9]|gh[0-9])")
_MODEL_LIKE: Final = re.compile(r"[0-9](?:\.[0-9]+)?b$|/")


def suggest(word: str, catalog: Catalog) -> list[str]:
    """Up to three known words that are near spellings of ``word``, one per meaning.

    Only typos: one edit for words up to 6 letters, two for longer ones, none for
    words under 4 letters (``sft`` is not ``fft``). A word shaped like a model name
    (``llama-4-8b``) is matched only against models, one shaped like a card (``h900``)
    only against cards, so a suggestion never swaps the method, model or card class."""
    vocab = catalog_index(catalog).vocabulary
    key = word.lower()[:MAX_SHOWN]
    if len(key) < 4:
        return []
    kind = "model:" if _MODEL_LIKE.search(key) else "gpu:" if _CARD_LIKE.match(key) else ""
    limit = 1 if len(key) <= 6 and not kind else 2
    scored = sorted(  # nearest first; at one distance, the same first letter first
        (d + 0.5 * (name[0] != key[0]), name)
        for name, meaning in vocab.items()
        if meaning.startswith(kind) and abs(len(name) - len(key)) <= limit
        and (d := distance(key, name)) <= limit
    )
    if kind == "model:":  # 8x7b: a whole part of a model's name (mixtral-8x7b)
        scored += [(limit + 1.0, name) for name, meaning in vocab.items()
                   if meaning.startswith(kind) and key in name.split("-")]
    out: list[str] = []
    seen: set[str] = set()
    for _, name in scored:
        if vocab[name] not in seen:
            seen.add(vocab[name])
            out.append(name)
    return out[:3]
