"""Model and card names: resolving words against the catalog."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.families import lead_word
from adapters.query.numbers import ALL_UNITS, HF_PREFIX, SYNTHETIC_RE
from adapters.query.vocabulary import FLAGS, KEYWORDS, VARIANT_SUFFIXES
from engine.constants import SYNTHETIC_MAX_B, SYNTHETIC_MIN_B
from engine.specs import Catalog, normalize_name


@dataclass(frozen=True)
class Index:
    """Lookups derived from one catalog, built once."""

    gpu_prefixes: dict[str, frozenset[str]]
    families: frozenset[str]
    vocabulary: dict[str, str]
    """Known word → what it means (to suggest one word per meaning)."""


def _name_prefixes(name: str) -> list[str]:
    """``a100-80gb-sxm`` → ``a100``, ``a10080gb``, ``a10080gbsxm`` (normalized)."""
    parts = [p for p in re.split(r"[\s_\-/:]+", name.lower()) if p]
    return ["".join(parts[: k + 1]) for k in range(len(parts))]


def _vocabulary(catalog: Catalog) -> dict[str, str]:
    vocab: dict[str, str] = {}
    for word, (field, value) in KEYWORDS.items():
        vocab.setdefault(word, f"{field}={value}")
    for word, field in FLAGS.items():
        vocab.setdefault(word, f"{field}=on")
        vocab.setdefault(f"no-{word}", f"{field}=off")
    for word, unit in ALL_UNITS.items():
        vocab.setdefault(word, f"unit:{unit.field}")
    for model_id in catalog.models:
        vocab.setdefault(model_id.lower(), f"model:{model_id}")
    for size, model_id in catalog.sizes.items():
        vocab.setdefault(size.lower(), f"model:{model_id}")
    for gpu_id in catalog.gpus:
        vocab.setdefault(gpu_id.lower(), f"gpu:{gpu_id}")
    for name in catalog.model_names():
        vocab.setdefault(name.lower(), f"model:{catalog.find_model(name)}")
    for name in catalog.gpu_names():
        vocab.setdefault(name.lower(), f"gpu:{catalog.find_gpu(name)}")
    for word in _family_words(catalog):  # "lama": llama, the family (its flagship)
        vocab.setdefault(word, f"model:family:{word}")
    return vocab


def _family_words(catalog: Catalog) -> list[str]:
    """The family words a query may name a model by (``llama``, ``mixtral``, ``gpt-oss``):
    each catalog model's family and the words its id starts with."""
    words: list[str] = []
    for m in catalog.models.values():
        if not m.synthetic and m.hub is None:
            words += [m.family.lower(), lead_word(m.id)]
    return [w for w in dict.fromkeys(words) if w]


@lru_cache(maxsize=16)
def catalog_index(catalog: Catalog) -> Index:
    prefixes: dict[str, set[str]] = {}
    for gpu in catalog.gpus.values():
        for name in (gpu.id, gpu.name, *gpu.aliases):
            for prefix in _name_prefixes(name):
                prefixes.setdefault(prefix, set()).add(gpu.id)
    families = frozenset(
        normalize_name(m.family) for m in catalog.models.values() if not m.synthetic
    )
    return Index(
        gpu_prefixes={k: frozenset(v) for k, v in prefixes.items()},
        families=families,
        vocabulary=_vocabulary(catalog),
    )


_MEMORY_IN_NAME: Final = re.compile(r"(?:^|\s)([0-9]{1,4}) ?gb(?=\s|$)")
"""A card's memory written as part of its name (``80gb``, ``80 gb``)."""


def _gpu_variants(text: str) -> list[str]:
    """Spellings to try for a card: as written, singular, with ``gb`` appended (or ``b``
    after a size's ``g``: ``a100-80g``)."""
    variants = [text]
    if text.endswith("s") and len(text) > 1:
        variants.append(text[:-1])
    variants += [v + "gb" for v in list(variants) if v[-1:].isdigit()]
    variants += [v + "b" for v in list(variants) if re.search(r"[0-9]g$", v)]  # a100-80g
    return variants


def resolve_gpu(catalog: Catalog, text: str) -> str | None:
    """A GPU id for ``text``: exact name or alias first, then a unique name prefix."""
    variants = _gpu_variants(text)
    for variant in variants:
        found = catalog.find_gpu(variant)
        if found:
            return found
    prefixes = catalog_index(catalog).gpu_prefixes
    for variant in variants:
        ids = prefixes.get(normalize_name(variant), frozenset())
        if len(ids) == 1:
            return next(iter(ids))
    # "h100 80 gb pcie", "rtx 4090 24 gb": the memory said inside or after the name is
    # the card's when the name without it is a card of that memory.
    size = _MEMORY_IN_NAME.search(text)
    rest = _MEMORY_IN_NAME.sub(" ", text, count=1).strip()
    if size is not None and rest:
        found = resolve_gpu(catalog, rest)
        if found is not None and round(catalog.gpu(found).memory_gb) == int(size.group(1)):
            return found
        if found is not None:
            return _variant_of_memory(catalog, rest, int(size.group(1)))
    return None


def _variant_of_memory(catalog: Catalog, name: str, memory_gb: int) -> str | None:
    """The card ``name`` names in its variant of ``memory_gb`` (``a100`` and 40: the A100
    40GB), read as the memory said right after the name reads it (``a100 40gb``,
    ``a100 40gb pcie``), whichever side of the name it was said on (``40gb a100``,
    ``40GB A100s``); None when the card has no variant of that memory."""
    words = name.split()
    for k in range(1, len(words) + 1):
        for head in dict.fromkeys((words[k - 1], words[k - 1].removesuffix("s"))):
            if not head:
                continue
            said = " ".join([*words[: k - 1], head, f"{memory_gb}gb", *words[k:]])
            found = catalog.find_gpu(said) or _unique_prefix(catalog, said)
            if found is not None and round(catalog.gpu(found).memory_gb) == memory_gb:
                return found
    return None


def _unique_prefix(catalog: Catalog, text: str) -> str | None:
    ids = catalog_index(catalog).gpu_prefixes.get(normalize_name(text), frozenset())
    return next(iter(ids)) if len(ids) == 1 else None


def size_model(catalog: Catalog, size: str, word: str) -> str:
    """The model for a bare size such as ``70b``: canonical, else synthetic."""
    billions = float(size[:-1])
    canonical = f"{billions:g}b"
    found = catalog.model_for_size(size) or catalog.model_for_size(canonical)
    if found:
        return found
    if not SYNTHETIC_MIN_B <= billions <= SYNTHETIC_MAX_B:
        raise error(
            f'"{quoted(word)}" is out of range: a model size must be between '
            f"{SYNTHETIC_MIN_B:g}b and {SYNTHETIC_MAX_B:g}b.",
            word,
        )
    return f"synthetic-{canonical}"


def names_another_checkpoint(catalog: Catalog, text: str, model_id: str) -> bool:
    """Whether ``text``, which resolved to ``model_id``, names another checkpoint of that
    architecture (one of the catalog's ``stand_ins``: ``llama-3-8b``, ``qwen2-72b``,
    ``deepseek-r1`` for Llama 3.1 8B, Qwen2.5 72B, DeepSeek-V3, an ``-instruct`` variant
    included) rather than the model itself under another spelling."""
    model = catalog.model(model_id)
    if _mirror_of(catalog, HF_PREFIX.sub("", text)) == model_id:
        return True  # another owner's copy of a catalog repository
    stand_ins = {normalize_name(n) for n in model.stand_ins}
    stand_ins |= {normalize_name(n.rsplit("/", 1)[1]) for n in model.stand_ins if "/" in n}
    text = HF_PREFIX.sub("", text)
    return any(
        normalize_name(text.removesuffix(suffix)) in stand_ins
        for suffix in ("", *VARIANT_SUFFIXES)
    )


def resolve_model(catalog: Catalog, text: str) -> str | None:
    """A model id for ``text`` (name, alias, Hugging Face URL, ``synthetic-20b``)."""
    text = HF_PREFIX.sub("", text)
    found = catalog.find_model(text)
    if found:
        return found
    stem = without_variants(text)  # llama-3-70b-instruct(-bnb-4bit): the same architecture
    if stem != text and (found := catalog.find_model(stem)):
        return found
    match = SYNTHETIC_RE.match(text)
    if match and SYNTHETIC_MIN_B <= float(match.group(1)) <= SYNTHETIC_MAX_B:
        return f"synthetic-{float(match.group(1)):g}b"
    return _mirror_of(catalog, text)


_HUB_COPY: Final = re.compile(r"^[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*$")
"""One Hub repository id, ``org/name`` (no revision, no spaces)."""


def _mirror_of(catalog: Catalog, text: str) -> str | None:
    """The catalog model whose Hub repository ``text`` copies under another owner
    (``NousResearch/Meta-Llama-3.1-8B``, ``unsloth/Qwen2.5-7B-Instruct``: the same
    repository name, so the same architecture), or None. A pinned revision
    (``org/name@main``) is left to the Hub, which sizes it from its own config."""
    if not _HUB_COPY.match(text) or catalog.find_model(text):
        return None  # one org/name word only: a span of words ("h100 org/name") is not one
    name = text.split("/")[1]
    return catalog.find_model(name) or catalog.find_model(without_variants(name))


def without_variants(name: str) -> str:
    """``Meta-Llama-3.1-8B-Instruct-bnb-4bit`` → ``Meta-Llama-3.1-8B``: every checkpoint
    variant suffix (``VARIANT_SUFFIXES``) taken off its end, however many."""
    stem = name
    while True:
        shorter = next((stem[: -len(x)] for x in VARIANT_SUFFIXES
                        if stem.lower().endswith(x) and len(stem) > len(x)), stem)
        if shorter == stem:
            return stem
        stem = shorter

