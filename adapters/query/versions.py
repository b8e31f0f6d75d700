"""A family and a version with no size (``qwen 3``, ``qwen3``, ``llama 3.1``, ``phi-3``):
a generation, not one model. It is refused with the sizes that generation comes in,
read from the catalog, and an example that names one (``qwen3 8b lora``).

``llama 3`` names no generation the catalog lists by itself (Llama 3.1, 3.2, 3.3 are
its models), so a whole version says the catalog's generations under it. A number after
the family word that something after it claims (``qwen 2 h100s``, ``llama 2 epochs``) is
not a version, and a version the family has no model of (``llama 8``) is left as it reads.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from adapters.query import families
from adapters.query.errors import error, quoted
from adapters.query.names import resolve_gpu, resolve_model
from adapters.query.numbers import ALL_UNITS
from adapters.query.vocabulary import CARD_WORDS
from engine.specs import Catalog, ModelSpec, normalize_name

if TYPE_CHECKING:
    from adapters.query.state import State

_GLUED: Final = re.compile(r"^([a-z]+(?:-[a-z]+)*?)-?v?([0-9]+(?:\.[0-9]+)?)$")
"""A family word and its version in one word (``qwen3``, ``qwen2.5``, ``phi-3``)."""
_VERSION: Final = re.compile(r"^v?([0-9]+(?:\.[0-9]+)?)$")
"""A version said after the family word (``3``, ``2.5``, ``v3``)."""
_VERSION_IN_ID: Final = re.compile(r"^-?v?[0-9]+(?:\.[0-9]+)?(?![0-9.]*(?:b|m|x[0-9]))")
"""The version an id states right after its family word (``-3.1`` in ``llama-3.1-8b``),
not a size (``-7b``)."""
_TYPICAL_PARAMS: Final = 8e9
"""The size the example names where the generation has it (or the nearest): the size
most fine-tuned."""


def _generation(catalog: Catalog, word: str, version: float) -> list[ModelSpec]:
    """The family's models of that version, smallest first: those whose id states it
    (``qwen3-8b`` for 3) or, for a whole version none states, its point releases
    (``llama-3.1-8b`` for 3). Only ids that start with the family word count: an id that
    states another model's version (``deepseek-r1-distill-qwen-1.5b``) is not one."""
    members = [
        m for m in families.families(catalog).get(normalize_name(word), ())
        if normalize_name(families.lead_word(m.model.id)) == normalize_name(word)
    ]
    found = [m for m in members if m.generation == version]
    if not found and version.is_integer():
        found = [m for m in members if m.generation and int(m.generation) == version]
    return [m.model for m in sorted(found, key=lambda m: (m.generation,
                                                          m.model.official_params))]


def _size_word(model: ModelSpec) -> str:
    """What an id says after its family word and version (``qwen3-30b-a3b``: 30b-a3b,
    ``phi-3-mini``: mini; ``mistral-7b-v0.3``, whose version follows its size: nothing."""
    rest = model.id.lower()[len(families.lead_word(model.id)) :]
    version = _VERSION_IN_ID.match(rest)
    return rest[version.end() :].strip("-") if version else ""


def _title(models: list[ModelSpec]) -> str:
    """The generation as the catalog names it (``Qwen3``, ``Phi-3``, ``Llama 3.1``): the
    words its models' names share, less their sizes (``Llama 3.3 70B``: Llama 3.3)."""

    def unsized(model: ModelSpec) -> list[str]:
        size = normalize_name(_size_word(model))
        return [w for w in model.name.split() if normalize_name(w) != size]

    shared = unsized(models[0])
    for model in models[1:]:
        words = unsized(model)
        n = 0
        while n < min(len(shared), len(words)) and shared[n] == words[n]:
            n += 1
        shared = shared[:n]
    return " ".join(shared) or models[0].name


def _listed(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def _example(catalog: Catalog, said: str, glued: bool, models: list[ModelSpec]) -> str:
    """A query that names one of the generation's models as the user wrote the family
    (``qwen3 8b lora``), else by its id."""
    model = min(models, key=lambda m: abs(m.official_params - _TYPICAL_PARAMS))
    version = f"{families.generation(model.id):g}"
    name = f"{said}{version}" if glued else f"{said} {version}"
    phrase = f"{name} {_size_word(model)}"
    return f"{phrase if resolve_model(catalog, phrase) == model.id else model.id} lora"


def _claimed(s: State, j: int) -> bool:
    """Whether the words after a number at ``j - 1`` make it something else than a version:
    a unit (``llama 2 epochs``) or cards (``qwen 2 h100s``, ``qwen 2 x h100``)."""
    nxt = s.low(j + (s.low(j) in ("x", "*")))
    return s.low(j) in ALL_UNITS or nxt in CARD_WORDS or resolve_gpu(s.catalog, nxt) is not None


def family_version(s: State, i: int) -> int:
    """Refuse a family and a version with no size (``qwen 3 lora``, ``qwen3 lora``) with
    the sizes of that generation; 0 when the words at ``i`` are none."""
    glued = _GLUED.match(s.low(i))
    if glued:
        word, version, span = glued.group(1), glued.group(2), 1
        said = s.raw(i)[: len(word)]
    elif (nxt := _VERSION.match(s.low(i + 1))) and not _claimed(s, i + 2):
        word, version, span = s.low(i), nxt.group(1), 2
        said = s.raw(i)
    else:
        return 0
    if normalize_name(word) not in families.families(s.catalog):
        return 0
    models = _generation(s.catalog, word, float(version))
    if not models or not all(_size_word(m) for m in models):
        return 0  # none, or one whose id states no size (deepseek-v3): left as it reads
    phrase = s.raw(i, span)
    by_title: dict[str, list[ModelSpec]] = {}
    for model in models:
        by_title.setdefault(f"{families.generation(model.id):g}", []).append(model)
    only = " only" if len(models) == 1 else ""
    parts = [f"{_title(group)} comes in {_listed([_size_word(m) for m in group])}{only}"
             for group in by_title.values()]
    if len(models) == 1:  # the catalog's one model of it, not all the generation holds
        parts = [f"the catalog holds {models[0].name} only of that generation"]
    which = "which" if len(models) > 1 else "it"
    raise error(
        f'"{quoted(phrase)}" needs a size: {"; ".join(parts)}. Say {which}, e.g. '
        f'"{_example(s.catalog, said, bool(glued), models)}".', phrase,
        example=f"{_example(s.catalog, said, bool(glued), models)} 50M tokens",
    )
