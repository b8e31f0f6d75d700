"""Model families: a family word alone (``mixtral``) and a family with a size (``qwen 72b``).

A family word is a catalog model's ``family`` (``llama``, ``qwen``, ``mistral``) or the
words its id starts with before the first digit (``mixtral``, ``codellama``,
``gpt-oss``). A model's generation is the version its id states after that word
(``qwen2.5-72b``: 2.5, ``llama-3.3-70b``: 3.3, ``mistral-7b-v0.3``: 0.3, none: 0); a size
(``opt-125m``, ``bloom-7b1``) is not a version.

* Family + size means the newest generation of that size: ``qwen 72b`` is Qwen2.5 72B,
  not the 2023 Qwen 72B (whose exact id ``qwen-72b`` still names it).
* A family word alone means its flagship: the largest model of its newest generation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from engine.specs import Catalog, ModelSpec, normalize_name

_LEAD_RE: Final = re.compile(r"^([a-z]+(?:-[a-z]+)*?)(?:-v)?(?=-?[0-9]|$)")
_VERSION_RE: Final = re.compile(r"^-?v?([0-9]+(?:\.[0-9]+)?)(?![0-9.]*(?:b|m|x[0-9]))")
_SIZE_IN_ID: Final = "(?:^|-)({size})(?:$|-)"


@dataclass(frozen=True)
class Member:
    model: ModelSpec
    generation: float


def lead_word(model_id: str) -> str:
    """The words an id starts with before its first number (``gpt-oss-20b`` → gpt-oss)."""
    match = _LEAD_RE.match(model_id.lower())
    return match.group(1) if match else ""


def generation(model_id: str) -> float:
    """The version an id states after its family word (0 when it states none)."""
    rest = model_id.lower()[len(lead_word(model_id)) :]
    version = _VERSION_RE.match(rest)
    if version:
        return float(version.group(1))
    suffix = re.search(r"-v([0-9]+(?:\.[0-9]+)?)$", rest)  # mistral-7b-v0.3
    return float(suffix.group(1)) if suffix else 0.0


@lru_cache(maxsize=16)
def families(catalog: Catalog) -> dict[str, tuple[Member, ...]]:
    """Family word (normalized) → its catalog models with their generations."""
    out: dict[str, list[Member]] = {}
    for m in catalog.models.values():
        if m.synthetic or m.hub is not None:
            continue
        member = Member(m, generation(m.id))
        for word in {normalize_name(m.family), normalize_name(lead_word(m.id))} - {""}:
            out.setdefault(word, []).append(member)
    return {word: tuple(members) for word, members in out.items()}


def flagship(catalog: Catalog, word: str) -> str | None:
    """The model a family word alone means: the largest of its newest generation."""
    members = families(catalog).get(normalize_name(word))
    if not members:
        return None
    newest = max(m.generation for m in members)
    return max(
        (m.model for m in members if m.generation == newest), key=lambda m: m.official_params
    ).id


def newest_of_size(catalog: Catalog, word: str, size: str) -> list[str]:
    """The models of a family at a size (``72b``), newest generation first; ties keep
    the catalog's own model for that bare size first."""
    members = families(catalog).get(normalize_name(word), ())
    pattern = re.compile(_SIZE_IN_ID.format(size=re.escape(size)))
    fits = [m for m in members if size in m.model.sizes or pattern.search(m.model.id.lower())]
    if not fits:
        return []
    newest = max(m.generation for m in fits)
    best = [m.model.id for m in fits if m.generation == newest]
    preferred = catalog.model_for_size(size)
    return [preferred] if preferred in best else best
