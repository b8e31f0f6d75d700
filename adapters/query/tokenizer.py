"""Text to words: checked, normalized, split, spelled numbers joined, glued words
split (``8xa100`` → ``8x a100``)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final

from adapters.query.errors import MAX_QUERY_CHARS, error
from adapters.query.hints import CLOUDS
from adapters.query.multiword import PHRASE_LENGTHS, PHRASES, SECTION_PREFIXES
from adapters.query.names import resolve_gpu, resolve_model
from adapters.query.numbers import (
    ALL_UNITS,
    COUNT_RE,
    COUNT_X_RE,
    GLUE_PREFIXES,
    GLUE_SUFFIXES,
    SIZE_RE,
    read_number,
)
from adapters.query.vocabulary import (
    CARD_WORDS,
    FILLER,
    FLAGS,
    FOUR_BIT_WORDS,
    HOUR_WORDS,
    KEYWORDS,
    NEGATIONS,
    NUMBER_WORDS,
    SCALE_LETTERS,
    SPELLED_SCALE,
    VARIANT_SUFFIXES,
)
from engine.request import Request
from engine.specs import Catalog


@dataclass(frozen=True)
class Word:
    raw: str
    """As the user typed it (for messages)."""
    low: str
    """Lower-cased, ``_`` read as ``-`` (for matching)."""
    origin: int
    """Index of the typed word this came from (glued words split into several)."""


_SEPARATORS: Final = re.compile(r"[\s,;?!()\[\]{}\"`=“”‘’|]+")
_THOUSANDS: Final = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")
_DECIMAL_COMMA: Final = re.compile(r"([0-9]+),([0-9]{1,2})([kmbt]?)", re.IGNORECASE)
"""``0,5``, ``1,5b``: a number with a decimal comma (one or two digits after it, so never
a thousands separator), as one whitespace-separated word."""


def _clean(text: object) -> str:
    """Check the raw input and return it normalized; QueryError if it is unusable."""
    if not isinstance(text, str):
        raise error("A query must be text.")
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise error(
            f"That query is {len(text):,} characters long; keep it under {MAX_QUERY_CHARS:,}."
        )
    for char in text:
        category = unicodedata.category(char)
        if 0xDC80 <= ord(char) <= 0xDCFF:  # a byte a terminal passed on undecoded
            byte = ord(char) - 0xDC00
            raise error(f"That query holds a byte that is not UTF-8 text (0x{byte:02X}): type "
                        "it again as plain text.")
        if category in ("Cc", "Cs") and char not in "\t\n\r":
            raise error(f"That query contains a control character (U+{ord(char):04X}).")
        if category == "No" and unicodedata.numeric(char, None) is not None:
            # NFKC would make "10²" read 102 and "½" read 1⁄2: a digit that is not one
            raise error(f'"{char}" is not a digit I read: write the number out (`10² tokens` '
                        "as `100 tokens`, `½M tokens` as `0.5M tokens`).",
                        example="8b lora 100M tokens")
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", text).replace("×", "x")


_GIGS: Final = re.compile(r"^([0-9]+(?:\.[0-9]+)?)g$")
"""``80g``: a card's memory as people shorten it (``a100 80g``), read as ``80gb``."""
ZERO_STAGES: Final = frozenset({"1", "2", "3"})
"""After ``zero``, the word that makes it DeepSpeed's stage (``zero 3``), not the number 0."""
_MEMORY: Final = re.compile(r"^[0-9]+(?:\.[0-9]+)?gb$")
"""``24gb``: a card named by its memory."""
_OPTION_DASHES: Final = re.compile(r"^-+(?=[a-z])")
"""``--tensor-parallel-size``: a command-line option's dashes (never a negative number's)."""
FILE_NAME: Final = re.compile(r"\.(py|sh|json|ya?ml|toml)$")
"""A script's or config's name (``train.py``): never read as a section's key."""


def _key(low: str) -> str:
    """A word as a setting's key: command-line dashes dropped, and a config section's
    prefix read as ``SECTION_PREFIXES`` says (``training.local_batch_size`` →
    ``local-batch-size``)."""
    low = _OPTION_DASHES.sub("", low)
    if FILE_NAME.search(low):
        return low
    for prefix, replacement in SECTION_PREFIXES.items():
        if low.startswith(prefix) and len(low) > len(prefix):
            return replacement + low[len(prefix) :]
    return low


_DEVICE_LIST: Final = re.compile(
    r"(cuda_visible_devices)\s*=?\s*([0-9]+(?:\s*,\s*[0-9]+)*)(?![0-9a-z_.])",
    re.IGNORECASE,
)
"""``CUDA_VISIBLE_DEVICES=0,1,2,3``: the card ids stay one word (``0,1,2,3``), their
commas never separating phrases."""


def _split(text: str) -> list[tuple[str, str]]:
    """(raw, low) words: separators and trailing sentence punctuation dropped."""
    words: list[tuple[str, str]] = []
    start = 0
    for found in _DEVICE_LIST.finditer(text):
        ids = re.sub(r"\s+", "", found.group(2))
        words += [*_split_words(text[start : found.start()]),
                  (found.group(1), "cuda-visible-devices"), (ids, ids)]
        start = found.end()
    return words + _split_words(text[start:])


def _refuse_decimal_comma(text: str) -> None:
    """Raise a QueryError for a number with a comma that is no thousands separator beside
    a unit (``0,5 epochs``, ``1,5B tokens``, ``dropout 0,05``, ``bs 4,8``), rather than
    split it into two numbers: a decimal comma gets the dotted form, a list for a whole
    number (``bs 4,8``) one value at a time. Card ids (``--gpu_ids 0,1``,
    ``localhost:0,1``) have no unit beside them and pass."""
    words = re.split(r"[\s=]+", text)
    for k, word in enumerate(words):
        found = _DECIMAL_COMMA.fullmatch(word)
        if found is None:
            continue
        beside = (words[k - 1] if k else "", words[k + 1] if k + 1 < len(words) else "")
        units = [ALL_UNITS[w] for w in (b.lower().replace("_", "-").strip(",-") for b in beside)
                 if w in ALL_UNITS]
        if not found.group(3) and not units:
            continue
        whole, part, scale = found.groups()
        written = f"{whole},{part}{scale}"
        if not scale and Request.model_fields[units[0].field].annotation is int:
            raise error(f'"{written}": give one value at a time, e.g. "{whole}" (a comma '
                        "separates thousands, as in 50,000,000).", written)
        raise error(f'"{written}": write a decimal with a dot, "{whole}.{part}{scale}" (a '
                    "comma separates thousands, as in 50,000,000).", written)


_SHORTHANDS: Final = {"w/o": "without", "w/out": "without", "w/": "with"}
"""Shorthands written with a slash, which would otherwise read as a Hub ``org/name``."""
_PLAIN_WORDS: Final = frozenset(
    {*KEYWORDS, *FLAGS, *FILLER, *NEGATIONS, *ALL_UNITS, *FOUR_BIT_WORDS,
     *(word for phrase in PHRASES for word in phrase)}
)
"""Words of the language that need no catalog: two of them joined by a slash
(``q_proj/v_proj``, ``bf16/fp32``) are two words, never a Hub model's ``org/name``."""
_SETTING_WORDS: Final = frozenset({*KEYWORDS, *FLAGS, *ALL_UNITS})
"""Words that each set something alone (``seq``, ``lora``, ``ckpt``)."""


def _joinable(part: str, first: bool) -> bool:
    """A word that, joined to another by a slash, is read apart: a setting's word, not a
    filler or negation (``with/without`` says neither), and a number only before the
    slash (``2/device`` is 2 per device; ``seq/2`` is no sequence of 2)."""
    if read_number(part) is not None:
        return first
    if part in CARD_WORDS:  # "4/gpu": per card
        return True
    return part in _PLAIN_WORDS and part not in FILLER and part not in NEGATIONS


def settings_joined(low: str) -> bool:
    """Whether a slashed word the parser could not read is settings joined (``seq/2``,
    ``on/off``), never a Hub ``org/name``: its name is a number, its first part a filler
    or negation, or both parts settings' words (``unsloth/Llama-3.2-1B`` and
    ``acme/quantized`` are repositories)."""
    org, _, name = low.partition("/")
    return bool(name) and "/" not in name and (
        read_number(name) is not None or org in FILLER or org in NEGATIONS
        or (org in _SETTING_WORDS and name in _SETTING_WORDS)
    )


def _slashed(raw: str, low: str) -> list[tuple[str, str]]:
    """``w/o`` → ``without``; ``q_proj/v_proj`` → ``q_proj`` ``v_proj``; any other word
    (``Qwen/Qwen2.5-7B``) as it is."""
    if low in _SHORTHANDS:
        return [(raw, _SHORTHANDS[low])]
    parts = low.split("/")
    if low not in _PLAIN_WORDS and read_number(low) is None and len(parts) > 1 and all(
        _joinable(p, k == 0) for k, p in enumerate(parts)
    ):
        return list(zip(raw.split("/"), parts, strict=True))
    return [(raw, low)]


def _split_words(text: str) -> list[tuple[str, str]]:
    """(raw, low) words of text holding no card-id list."""
    _refuse_decimal_comma(text)
    words = []
    for piece in _SEPARATORS.split(_THOUSANDS.sub("", text)):
        raw = piece.strip("'").rstrip(".:").strip("'").lstrip("~≈")  # ~800: about 800
        if raw:
            low = _key(raw.lower().replace("_", "-"))
            words += _slashed(raw, _GIGS.sub(r"\1gb", low))
    return words


_GLUED_SCALE: Final = re.compile(
    r"^([0-9]+(?:\.[0-9]+)?)(thousand|million|mil|mln|billion|bn|trillion)$"
)
"""``50mil``, ``1.2billion``: a number glued to its scale word, read as ``50m``."""


def _glued_scale(low: str) -> str:
    """``50mil`` → ``50m``; any other word as it is."""
    glued = _GLUED_SCALE.match(low)
    return glued.group(1) + SPELLED_SCALE[glued.group(2)] if glued else low


_SPANS: Final = frozenset({"day", "week"})
"""After ``a``, a span that is one of it (``within a week``); ``an hour`` is a rate."""


def _merge_spelled(words: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Read number words (``two`` → ``2``), join ``50 million`` (and ``50mil``, ``50 M``)
    into ``50m`` and ``a million`` into ``1m``, ``per hour`` / ``an hour`` into ``/hr``,
    and ``$ 500`` into ``$500``."""
    out: list[tuple[str, str]] = []
    for k, (raw, low) in enumerate(words):
        nxt = words[k + 1][1] if k + 1 < len(words) else ""
        stage = low == "zero" and NUMBER_WORDS.get(nxt, nxt) in ZERO_STAGES
        # "zero 3" is DeepSpeed's stage, not the number 0
        low = low if stage else _glued_scale(NUMBER_WORDS.get(low, low))
        prev = out[-1][1] if out else ""
        if prev in ("a", "an") and low in SPELLED_SCALE:
            prev = "1"
        if low == "hundred" and re.fullmatch(r"[0-9]+", prev):
            merged = prev + "00"
        elif low in SPELLED_SCALE and low != "hundred" and COUNT_RE.match(prev):
            merged = prev + SPELLED_SCALE[low]
        elif (low in SCALE_LETTERS and re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", prev)
              and not raw.startswith("-")):  # `8 -m module`: a launcher's flag
            merged = prev + low  # "50 M tokens"
        elif prev == "$" and (num := read_number(low)) is not None and not num.is_price:
            merged = "$" + low  # "$ 500": one amount, read as "$500" is
        elif (prev == "per" and low in HOUR_WORDS | {"h"}) or (
            prev in ("a", "an") and low in HOUR_WORDS
        ):
            merged = "/hr"
        elif prev in ("a", "an") and low in _SPANS:
            merged = "1" + low  # "within a week": one week, as "within 1week" reads
        else:
            out.append((raw, low))
            continue
        out[-1] = (f"{out[-1][0]} {raw}", merged)
    return out


def _merge_phrases(words: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Join a phrase typed as several words into the one word it means (``batch size``
    → ``batch-size``, ``flash attention`` → ``flash-attention``; see ``PHRASES``)."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(words):
        for n in PHRASE_LENGTHS:
            key = tuple(low for _, low in words[i : i + n])
            if len(key) == n and key in PHRASES:
                out.append((" ".join(raw for raw, _ in words[i : i + n]), PHRASES[key]))
                i += n
                break
        else:
            out.append(words[i])
            i += 1
    return out


BOOLEAN_WORDS: Final = frozenset({"true", "false"})


def _read_booleans(words: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Read a setting's ``True``/``False`` as configs and HF's arguments write them
    (``bf16=True``, ``gradient_checkpointing=False``): ``true`` keeps the word before it;
    ``false`` turns a switch off (``no-`` it) and drops any other word with it
    (``fp16=False``, ``load_in_4bit=False`` say nothing to estimate). A lone ``true``
    stays a word."""
    out: list[tuple[str, str]] = []
    for raw, low in words:
        prev = out[-1][1] if out else ""
        if low not in BOOLEAN_WORDS or not prev or prev in BOOLEAN_WORDS:
            out.append((raw, low))
        elif low == "true":
            out[-1] = (f"{out[-1][0]} {raw}", prev)
        elif prev in FLAGS:
            out[-1] = (f"{out[-1][0]} {raw}", f"no-{prev}")
        else:
            out.pop()
    return out


def _is_known(catalog: Catalog, low: str) -> bool:
    """Whether a single word means something as it stands (so is never unglued)."""
    return bool(
        low in KEYWORDS
        or low in FOUR_BIT_WORDS
        or low in FLAGS
        or (low.startswith("no-") and low[3:] in FLAGS)
        or low in ALL_UNITS
        or low in FILLER
        or read_number(low)
        or COUNT_X_RE.match(low)
        or resolve_model(catalog, low)
        or resolve_gpu(catalog, low)
    )


def _unglue(catalog: Catalog, low: str) -> list[str]:
    """Split a glued word: ``8xa100`` → ``8x a100``, ``h100x8`` → ``h100 x8``,
    ``r64`` → ``r 64``, ``1ep`` → ``1 ep``. Unknown words come back whole."""
    if _is_known(catalog, low):
        return [low]
    for suffix in VARIANT_SUFFIXES:
        stem = low.removesuffix(suffix)
        if stem != low and SIZE_RE.match(stem):
            return [stem]  # 70b-instruct: the same architecture as 70b
    grid = re.match(r"^([0-9]+[x*][0-9]+)[x*](.+)$", low)
    if grid and resolve_gpu(catalog, grid.group(2)):
        return [grid.group(1), grid.group(2)]  # "2x8xh100": 2 nodes of 8, then the card
    count_first = re.match(r"^(-?[0-9]+(?:\.[0-9]+)?)[x*](.+)$", low)
    if count_first and resolve_gpu(catalog, count_first.group(2)):
        return [count_first.group(1) + "x", count_first.group(2)]
    if count_first and _MEMORY.match(count_first.group(2)):  # "2x24gb": cards of 24 GB
        return [count_first.group(1) + "x", *_unglue(catalog, count_first.group(2))]
    cut = max(low.rfind("x"), low.rfind("*"))
    if cut > 0 and COUNT_RE.match(low[cut + 1 :]) and resolve_gpu(catalog, low[:cut]):
        return [low[:cut], "x" + low[cut + 1 :]]
    for unit in GLUE_PREFIXES:  # "tp-8", "seq-8k": a hyphen between a unit and its number
        rest = low[len(unit) + 1 :]
        if low.startswith(unit + "-") and not rest.startswith("-") and read_number(rest):
            return [unit, rest]
    for unit in GLUE_PREFIXES:
        if low.startswith(unit) and read_number(low[len(unit) :]):
            return [unit, low[len(unit) :]]
    for unit in GLUE_SUFFIXES:
        rest = low[: -len(unit)]
        if low.endswith(unit) and (num := read_number(rest)) and not num.is_price:
            return [rest, unit]
    return [low]


INSTANCE_MARK: Final = "instance@"
"""The low form of a word that names a cloud instance type (``instance@p4d.24xlarge``),
read by :func:`adapters.query.instances.instance`."""
_INSTANCE_KEYS: Final = frozenset({"instance-type", "instance", "machine-type", "vm-size",
                                   "vm"})
"""A word that introduces an instance type (``--instance_type ml.g5.2xlarge``)."""


def mark_instances(words: list[tuple[str, str]], catalog: Catalog) -> list[tuple[str, str]]:
    """``words`` (raw, low) with each cloud instance type marked (:data:`INSTANCE_MARK`),
    the word that introduces it and any cloud's name dropped (the instance says which
    cloud); ``words`` itself when none is named. Counts are left to the scanner, where
    each number is read once, by the rule that owns it."""
    named = [catalog.find_instance(low) is not None for _, low in words]
    if not any(named):
        return words
    out: list[tuple[str, str]] = []
    for (raw, low), is_instance in zip(words, named, strict=True):
        if is_instance:
            while out and out[-1][1] in _INSTANCE_KEYS:
                out.pop()
            out.append((raw, INSTANCE_MARK + low))
        elif low not in CLOUDS:
            out.append((raw, low))
    return out


def tokenize(text: str, catalog: Catalog) -> list[Word]:
    words: list[Word] = []
    merged = _read_booleans(_merge_phrases(_merge_spelled(_split(_clean(text)))))
    merged = mark_instances(merged, catalog)
    for origin, (raw, low) in enumerate(merged):
        pieces = [low] if low.startswith(INSTANCE_MARK) else _unglue(catalog, low)
        words += [Word(raw, piece, origin) for piece in pieces]
    return words

