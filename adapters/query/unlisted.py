"""Models the catalog lacks, said as people name them: the message says so, and how to
name any Hugging Face model (by its repository, ``org/name``), instead of asking for a
unit or saying only "I don't know".

* A family word and a version the family has no model of (``llama 4 scout``, ``qwen
  3.5``, ``mistral v0.4``): that generation is not in the catalog; the family's newest
  catalog model is named.
* A word shaped like a model's name (``llama-4-scout``, ``llama4``, ``codestral-22b``):
  it starts with or holds a family word, or states a size.
* Any other word the parser does not know, in a query that names no model (``codestral
  lora 8x h100``): if it is the model, it is not in the catalog (said with the usual
  example, which a follow-up, naming no model either, swaps for its own).

Near spellings are still suggested (``mistrall``: mistral).
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query import families
from adapters.query.errors import QueryError, error, quoted
from adapters.query.names import resolve_model
from adapters.query.numbers import SIZE_RE
from adapters.query.spelling import suggest
from adapters.query.state import State
from engine.choices import ModelPick
from engine.specs import Catalog, normalize_name

_VERSION: Final = re.compile(r"^v?[0-9]+(?:\.[0-9]+)?$")
"""A version said after a family word (``4``, ``3.5``, ``v0.4``)."""
_SIZE_PART: Final = re.compile(r"(?:^|[-.])[0-9]+(?:\.[0-9]+)?[bm](?:$|[-.])")
"""A size stated inside a name (``codestral-22b``, ``foo-350m-chat``)."""
_HELD_FAMILY: Final = 5
"""A family word at least this long names a model wherever it sits in a word
(``tinyllama``, ``mistralai``); a shorter one (``opt``, ``phi``, ``yi``) only first."""
HUB_HOW: Final = "any Hugging Face model can be named by its repository (org/name)"


def _hub_example(catalog: Catalog, model_id: str | None) -> str:
    """A query that names ``model_id`` (else the catalog's 8B) by its Hub repository."""
    model_id = model_id or catalog.model_for_size("8b") or next(iter(catalog.models))
    model = catalog.model(model_id)
    repo = next((a for a in model.aliases if "/" in a), model.id)
    return f"{repo} lora 50M tokens"


def _family_of(catalog: Catalog, low: str) -> str | None:
    """The family word (normalized) a word is shaped after, or None."""
    known = families.families(catalog)
    lead = normalize_name(families.lead_word(low))
    if lead in known:
        return lead
    word = normalize_name(low)
    return next((f for f in sorted(known, key=len, reverse=True)
                 if len(f) >= _HELD_FAMILY and f in word), None)


def unlisted_version(s: State, i: int) -> QueryError | None:
    """The error for a version at ``i`` after a family word that named the family's
    flagship (``llama 4``): that generation is not in the catalog. None otherwise."""
    low = s.low(i)
    if i == 0 or not _VERSION.match(low) or s.model_pick is not ModelPick.FAMILY:
        return None
    family = s.low(i - 1)
    if s.sources.get("model") != s.raw(i - 1):
        return None
    phrase = s.raw(i - 1, 2)
    newest = s.catalog.model(str(s.fields["model"]))
    number = low.removeprefix("v")
    sized = f"{family} {number}b"
    near = [sized] if resolve_model(s.catalog, sized) or families.newest_of_size(
        s.catalog, family, f"{float(number):g}b") else []
    return error(f'"{quoted(phrase)}" is not in the catalog (its newest {newest.family.title()}'
                 f" is {newest.name}): {HUB_HOW}.", phrase, near,
                 example=_hub_example(s.catalog, newest.id))


def _names_no_model(s: State, i: int) -> bool:
    """Whether no word of the query names a model (so the unknown word at ``i`` may)."""
    if "model" in s.fields:
        return False
    known = families.families(s.catalog)
    return not any(SIZE_RE.match(w.low) or normalize_name(w.low) in known
                   or resolve_model(s.catalog, w.low) for w in s.words[i + 1 :])


def unlisted_model(s: State, i: int) -> QueryError | None:
    """The error for an unknown word at ``i`` that may be a model the catalog lacks: one
    shaped like a model's name, or any in a query that names no model. None otherwise
    (a Hub ``org/name`` the parser reached is left to its own message)."""
    low, word = s.low(i), s.raw(i)
    if "/" in low:
        return None
    near = suggest(low, s.catalog)
    family = _family_of(s.catalog, low)
    if family is not None or _SIZE_PART.search(low):
        flagship = families.flagship(s.catalog, family) if family else None
        return error(f'"{quoted(word)}" is not in the catalog: {HUB_HOW}.', word, near,
                     example=_hub_example(s.catalog, flagship))
    if _names_no_model(s, i):
        # the usual example, which a follow-up's error swaps for its own (errors.as_followup)
        return error(f'I don\'t know "{quoted(word)}"; if it is a model, it is not in the '
                     f"catalog: {HUB_HOW}.", word, near)
    return None
