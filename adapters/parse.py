"""The ftcost query language: one line of words in, a :class:`Request` out.

Every platform (terminal, Slack, Discord) shares this parser. A query is a bag
of *phrases* in any order, case-insensitive::

    70b qlora 50M tokens h100
    llama 3.1 8b lora 200M tokens 2 epochs seq 8k 4x a100 $1.80/hr

Grammar (``|`` separates alternatives, ``[]`` is optional)::

    query    := phrase*
    phrase   := filler | keyword | flag | number unit | unit number | price
              | [count ["x"]] card ["x" count] | count ("gpus" | "cards")
              | model | family size | size
    number   := ["-"] digits ["." digits] ["e" digits] [k | m | b | t] ["%"]
    size     := digits ["." digits] "b"                       (8b, 0.5b, 70b)
    price    := "$" number ["/hr"] | number "/hr" | "price" number
    count    := digits | digits "x"                           (8 h100, 8x h100)
    card     := a GPU id, name or alias, plural allowed (a100s), or glued to its
                count (8xa100-80, h100x8)
    model    := a model id, name or alias, possibly spread over up to three
                words (llama 3.1 8b, qwen2.5 7b); ``synthetic-20b``
    flag     := ckpt | flash | fused-ce | offload | double-quant, negated by a
                ``no-`` prefix or a preceding ``no`` / ``without``

Units, with the Request field each one sets::

    tokens tok token         dataset_tokens   decimal: 500k = 500,000
    epochs epoch ep          epochs           1ep, epochs 2, 0.5 epochs
    seq ctx context seqlen   seq_len          binary: 8k = 8192
    bs batch micro-batch     micro_batch
    accum grad-accum ga      grad_accum       accum 8, 8 accum, ga=8
    dropout lora-dropout     lora_dropout     dropout 0.05, dropout 5%
    r rank                   lora_rank        r64, rank 64, r=64
    mfu                      mfu              mfu 40%, mfu 0.4, 40% mfu
    price, $ / /hr           price_per_gpu_hour

A unit may come before or after its number (``seq 8k`` = ``8k seq``) and may be
glued to it (``r64``, ``1ep``); ``key=value`` is the same as ``key value``.

Ambiguities and how they resolve:

* ``8b`` alone is a model size; before a unit it is a number (``8B tokens``).
  In a run like ``70b tokens 50M`` where numbers and units alternate and the
  numbers outnumber the units, the leading size is the model.
* A bare size maps through ``Catalog.model_for_size``; one with no canonical
  model (``20b``) becomes ``synthetic-20b`` (0.1b to 2000b).
* ``mfu 40`` and ``dropout 5`` (no ``%``, above 1) are read as percentages.
* Numbers for tokens round to a whole count; sequence length, batch, rank and
  GPU count must be whole.

Errors are :class:`QueryError`: the message names the offending word, suggests
the nearest known words and shows an example. No other exception escapes
:func:`parse_query`, :func:`apply_followup` or :func:`parse_fields` for any
input string.
"""

from __future__ import annotations

import difflib
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

import annotated_types
from pydantic import ValidationError

from catalog.loader import default_catalog
from engine.request import (
    LoraTargets,
    Method,
    Mode,
    Optimizer,
    Precision,
    Request,
    Sharding,
    StatePrecision,
)
from engine.specs import Catalog, normalize_name

__all__ = ["EXAMPLE", "MAX_QUERY_CHARS", "QueryError", "apply_followup", "parse_fields",
           "parse_query"]

MAX_QUERY_CHARS: Final = 500
EXAMPLE: Final = "70b qlora 50M tokens h100"
SYNTHETIC_MIN_B: Final = 0.1
SYNTHETIC_MAX_B: Final = 2000.0
_MAX_SHOWN: Final = 40  # characters of an offending word quoted back


class QueryError(ValueError):
    """A query the parser cannot turn into a request, with a message for the user."""

    def __init__(
        self, message: str, word: str | None = None, suggestions: Iterable[str] = ()
    ) -> None:
        super().__init__(message)
        self.message: str = message
        self.word: str | None = word
        self.suggestions: list[str] = list(suggestions)[:3]

    def __str__(self) -> str:
        return self.message


def _error(
    problem: str,
    word: str | None = None,
    suggestions: Sequence[str] = (),
    example: str = EXAMPLE,
) -> QueryError:
    """A QueryError whose message is the problem, the suggestions and an example."""
    parts = [problem]
    if suggestions:
        parts.append(f"Did you mean {', '.join(suggestions[:3])}?")
    parts.append(f"Example: {example}")
    return QueryError(" ".join(parts), word, suggestions)


def _show(word: str) -> str:
    """The word as quoted in a message, cut short if it is long."""
    return word if len(word) <= _MAX_SHOWN else word[: _MAX_SHOWN - 1] + "…"


# --- vocabulary ----------------------------------------------------------------


def _table(groups: dict[tuple[str, object], tuple[str, ...]]) -> dict[str, tuple[str, object]]:
    """Invert ``{(field, value): words}`` into ``{word: (field, value)}``."""
    return {word: key for key, words in groups.items() for word in words}


_KEYWORDS: Final = _table(
    {
        ("method", Method.FULL): ("full", "fft", "full-ft", "full-finetune", "full-fine-tune"),
        ("method", Method.LORA): ("lora",),
        ("method", Method.QLORA): ("qlora",),
        ("lora_targets", LoraTargets.ALL_LINEAR): ("all-linear", "alllinear"),
        ("lora_targets", LoraTargets.ATTENTION): ("attn", "attention", "attn-only", "qkvo"),
        ("lora_targets", LoraTargets.QV): ("qv", "qv-only", "q-v"),
        ("optimizer", Optimizer.ADAMW): ("adamw", "adam"),
        ("optimizer", Optimizer.ADAMW_8BIT): (
            "adamw-8bit", "adamw8bit", "adam8bit", "adam-8bit", "8bit-adam", "8bit-adamw",
            "paged-adamw-8bit",
        ),
        ("optimizer", Optimizer.SGD): ("sgd",),
        ("optimizer", Optimizer.ADAFACTOR): ("adafactor",),
        ("optimizer", Optimizer.LION): ("lion",),
        ("precision", Precision.BF16): ("bf16", "bfloat16"),
        ("precision", Precision.FP16): ("fp16", "float16"),
        ("precision", Precision.FP8): ("fp8",),
        ("precision", Precision.FP32): ("fp32", "float32"),
        ("state_precision", StatePrecision.PURE_BF16): ("pure-bf16", "bf16-true"),
        ("state_precision", StatePrecision.FP32): ("fp32-states", "mixed-precision", "amp"),
        ("sharding", Sharding.ZERO1): ("zero1", "zero-1"),
        ("sharding", Sharding.ZERO2): ("zero2", "zero-2"),
        ("sharding", Sharding.ZERO3): ("zero3", "zero-3"),
        ("sharding", Sharding.FSDP): ("fsdp", "fsdp1"),
        ("sharding", Sharding.NONE): ("ddp", "no-sharding"),
        ("mode", Mode.NAPKIN): ("napkin",),
        ("mode", Mode.DETAILED): ("detailed",),
    }
)
"""Words that set one field to one value."""

_FLAGS: Final = {
    **dict.fromkeys(
        ("ckpt", "checkpointing", "grad-ckpt", "gradient-checkpointing",
         "activation-checkpointing"),
        "grad_checkpointing",
    ),
    **dict.fromkeys(
        ("flash", "flash-attn", "flash-attention", "flashattention", "fa2"), "flash_attention"
    ),
    **dict.fromkeys(("fused-ce", "fused-cross-entropy"), "fused_ce"),
    **dict.fromkeys(("hf-loss", "hf-ce", "unfused-ce"), "hf_loss"),
    **dict.fromkeys(("double-quant", "double-quantization"), "double_quant"),
    **dict.fromkeys(("offload", "cpu-offload"), "offload"),
}
"""Boolean switches: the word turns the field on; ``no-word`` turns it off."""

_NEGATIONS: Final = frozenset({"no", "without"})

_FILLER: Final = frozenset(
    {
        "what", "what's", "whats", "if", "with", "on", "at", "and", "for", "using", "a", "an",
        "the", "to", "of", "in", "how", "about", "instead", "use", "try", "then", "it", "is",
        "would", "will", "does", "cost", "costs", "much", "me", "please", "via", "over",
        "fine-tune", "finetune", "fine-tuning", "finetuning", "train", "training",
        "gpu", "gpus", "card", "cards", "nvidia", "amd", "steps", "+", "&", "-", "–", "—",
    }
)
"""Words that carry no meaning for the estimate."""

_CARD_WORDS: Final = frozenset({"gpu", "gpus", "card", "cards"})
_HOURLY: Final = (
    "/hr", "/h", "/hour", "/gpu-hr", "/gpu-hour", "/gpuh", "/gpu/hr", "/gpu/h", "/hr/gpu",
    "hourly", "per-hour", "per-gpu-hour",
)
_HOUR_WORDS: Final = frozenset({"hour", "hr", "gpu-hour", "gpu-hr"})
_SPELLED_SCALE: Final = {
    "thousand": "k", "million": "m", "mil": "m", "billion": "b", "bn": "b", "trillion": "t",
}


# --- numbers -------------------------------------------------------------------

_NUM_BODY: Final = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?"
_NUM_RE: Final = re.compile(
    rf"^(?P<dollar>\$)?(?P<num>{_NUM_BODY})(?P<suffix>[kmbt])?(?P<pct>%)?"
    r"(?P<hourly>/(?:gpu[-/]?)?(?:hr|h|hour)(?:/gpu)?)?$"
)
_SIZE_RE: Final = re.compile(r"^[0-9]+(?:\.[0-9]+)?b$")
_COUNT_RE: Final = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?$")
_COUNT_X_RE: Final = re.compile(r"^(-?[0-9]+(?:\.[0-9]+)?)[x*]$")
_X_COUNT_RE: Final = re.compile(r"^[x*](-?[0-9]+(?:\.[0-9]+)?)$")
_SYNTHETIC_RE: Final = re.compile(r"^synthetic-([0-9]+(?:\.[0-9]+)?)b$")
_HF_PREFIX: Final = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/")
_SCALE_POWER: Final = {"": 0, "k": 1, "m": 2, "b": 3, "t": 4}


@dataclass(frozen=True)
class _Num:
    """A number as written: its digits, scale suffix and decorations."""

    value: float
    suffix: str
    percent: bool
    dollar: bool
    hourly: bool

    def scaled(self, binary: bool = False) -> float:
        base = 1024 if binary else 1000
        return self.value * base ** _SCALE_POWER[self.suffix]

    @property
    def is_price(self) -> bool:
        return self.dollar or self.hourly


def _number(word: str) -> _Num | None:
    """Read a number word (``50m``, ``2e9``, ``40%``, ``$2.50/hr``); None if not one."""
    match = _NUM_RE.match(word)
    if match is None:
        return None
    return _Num(
        value=float(match["num"]),
        suffix=match["suffix"] or "",
        percent=bool(match["pct"]),
        dollar=bool(match["dollar"]),
        hourly=bool(match["hourly"]),
    )


# --- fields: labels, examples, bounds ------------------------------------------


@dataclass(frozen=True)
class _FieldInfo:
    label: str
    example: str
    show: Callable[[float], str] = lambda v: f"{v:,g}" if v < 1e6 else f"{v:,.0f}"


def _human_tokens(value: float) -> str:
    for power, suffix in ((4, "T"), (3, "B"), (2, "M"), (1, "k")):
        if value >= 1000**power:
            return f"{value / 1000**power:g}{suffix}"
    return f"{value:g}"


_FIELDS: Final = {
    "model": _FieldInfo("model", EXAMPLE),
    "method": _FieldInfo("method", EXAMPLE),
    "precision": _FieldInfo("precision", "8b lora fp16 50M tokens"),
    "lora_rank": _FieldInfo("LoRA rank", "8b lora r64 50M tokens"),
    "lora_targets": _FieldInfo("LoRA targets", "8b lora attn 50M tokens"),
    "optimizer": _FieldInfo("optimizer", "8b full adamw-8bit 50M tokens"),
    "state_precision": _FieldInfo("state precision", "8b full pure-bf16 50M tokens"),
    "offload": _FieldInfo("offload switch", "70b full offload 50M tokens"),
    "seq_len": _FieldInfo("sequence length", "8b lora seq 8k 50M tokens"),
    "micro_batch": _FieldInfo("micro-batch", "8b lora bs 4 50M tokens"),
    "grad_accum": _FieldInfo("gradient accumulation", "8b full fsdp 4x a10g accum 8"),
    "lora_dropout": _FieldInfo(
        "LoRA dropout", "8b lora dropout 0.05 50M tokens", lambda v: f"{v:g}"
    ),
    "grad_checkpointing": _FieldInfo("checkpointing switch", "8b lora no-ckpt 50M tokens"),
    "flash_attention": _FieldInfo("FlashAttention switch", "8b lora no-flash 50M tokens"),
    "fused_ce": _FieldInfo("fused cross-entropy switch", "8b lora fused-ce 50M tokens"),
    "hf_loss": _FieldInfo("Hugging Face loss-path switch", "8b lora hf-loss 50M tokens"),
    "double_quant": _FieldInfo("double quantization switch", "70b qlora no-double-quant"),
    "sharding": _FieldInfo("sharding", "70b full zero3 8x h100"),
    "gpu": _FieldInfo("GPU", EXAMPLE),
    "gpu_count": _FieldInfo("GPU count", "70b full 50M tokens 8x h100"),
    "dataset_tokens": _FieldInfo("token count", EXAMPLE, _human_tokens),
    "epochs": _FieldInfo("epoch count", "8b lora 50M tokens 2 epochs"),
    "mfu": _FieldInfo("MFU", "8b lora 50M tokens mfu 40%", lambda v: f"{v * 100:g}%"),
    "price_per_gpu_hour": _FieldInfo(
        "price per GPU-hour", "70b qlora 50M tokens h100 $2.50/hr", lambda v: f"${v:,g}"
    ),
    "mode": _FieldInfo("mode", "70b qlora 50M tokens napkin"),
}


def _range_text(field: str) -> str:
    """The allowed range of a Request field, read from its pydantic bounds."""
    low: float | None = None
    high: float | None = None
    strict = strict_high = False
    for bound in Request.model_fields[field].metadata:
        if isinstance(bound, annotated_types.Ge):
            low = float(bound.ge)  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Gt):
            low, strict = float(bound.gt), True  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Le):
            high = float(bound.le)  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Lt):
            high, strict_high = float(bound.lt), True  # type: ignore[arg-type]
    show = _FIELDS[field].show
    if low is None or high is None:
        return "a valid value"
    if strict_high:
        return f"at least {show(low)} and less than {show(high)}"
    if strict:
        return f"more than {show(low)} and at most {show(high)}"
    return f"between {show(low)} and {show(high)}"


def _out_of_range(field: str, word: str) -> QueryError:
    info = _FIELDS[field]
    return _error(
        f'"{_show(word)}" is out of range: the {info.label} must be {_range_text(field)}.',
        word,
        example=info.example,
    )


def _check_field(field: str, value: object, phrase: str, word: str | None) -> None:
    """Raise a QueryError naming the word when ``value`` breaks the field's bounds."""
    probe: dict[str, object] = {"model": "probe", field: value}
    try:
        Request.model_validate(probe)
    except ValidationError as exc:
        raise _out_of_range(field, word or phrase) from exc


# --- converting numbers to field values ----------------------------------------


def _plain(num: _Num, word: str, field: str, percent_ok: bool = False) -> None:
    """Reject a price or percentage written where a plain number belongs."""
    example = _FIELDS[field].example
    if num.is_price:
        raise _error(f'"{_show(word)}" looks like a price, not a {_FIELDS[field].label}.',
                     word, example=example)
    if num.percent and not percent_ok:
        raise _error(f'"{_show(word)}": only mfu and dropout take a percentage.', word,
                     example=example)


def _finite(value: float, word: str, field: str) -> float:
    if not math.isfinite(value):
        raise _out_of_range(field, word)
    return value


def _whole(value: float, word: str, field: str) -> int:
    value = _finite(value, word, field)
    rounded = round(value)
    if abs(value - rounded) > 1e-9 * max(1.0, abs(value)):
        raise _error(
            f'"{_show(word)}" must be a whole number for the {_FIELDS[field].label}.',
            word,
            example=_FIELDS[field].example,
        )
    return int(rounded)


def _to_tokens(num: _Num, word: str) -> int:
    _plain(num, word, "dataset_tokens")
    return round(_finite(num.scaled(), word, "dataset_tokens"))


def _to_epochs(num: _Num, word: str) -> float:
    _plain(num, word, "epochs")
    return _finite(num.scaled(), word, "epochs")


def _to_seq(num: _Num, word: str) -> int:
    _plain(num, word, "seq_len")
    return _whole(num.scaled(binary=True), word, "seq_len")


def _integer(field: str) -> Callable[[_Num, str], int]:
    def convert(num: _Num, word: str) -> int:
        _plain(num, word, field)
        return _whole(num.scaled(), word, field)

    return convert


def _fraction(field: str) -> Callable[[_Num, str], float]:
    """A share written as ``40%``, ``0.4`` or ``40`` (above 1: a percentage)."""

    def convert(num: _Num, word: str) -> float:
        _plain(num, word, field, percent_ok=True)
        value = _finite(num.scaled(), word, field)
        return value / 100 if num.percent or value > 1 else value

    return convert


def _to_price(num: _Num, word: str) -> float:
    if num.percent:
        raise _error(f'"{_show(word)}": only mfu and dropout take a percentage.', word,
                     example=_FIELDS["price_per_gpu_hour"].example)
    return _finite(num.scaled(), word, "price_per_gpu_hour")


@dataclass(frozen=True)
class _Unit:
    """A word that names what a neighbouring number counts."""

    field: str
    words: tuple[str, ...]
    convert: Callable[[_Num, str], object]
    prefix: bool = True
    postfix: bool = True


_UNITS: Final = (
    _Unit("dataset_tokens", ("tokens", "token", "tok", "toks"), _to_tokens),
    _Unit("epochs", ("epochs", "epoch", "ep", "eps"), _to_epochs),
    _Unit(
        "seq_len",
        ("seq", "seqlen", "seq-len", "sequence", "sequence-length", "ctx", "ctx-len", "context",
         "context-length", "max-len"),
        _to_seq,
    ),
    _Unit(
        "micro_batch",
        ("bs", "batch", "batch-size", "micro-batch", "microbatch", "micro-bs", "mbs"),
        _integer("micro_batch"),
    ),
    _Unit(
        "grad_accum",
        ("accum", "grad-accum", "ga", "gas", "accumulation", "grad-accumulation",
         "gradient-accumulation", "accumulation-steps", "accum-steps"),
        _integer("grad_accum"),
    ),
    _Unit("lora_rank", ("r", "rank", "lora-r", "lora-rank"), _integer("lora_rank")),
    _Unit("lora_dropout", ("dropout", "lora-dropout", "lora_dropout"), _fraction("lora_dropout")),
    _Unit("mfu", ("mfu", "utilization"), _fraction("mfu")),
    _Unit("price_per_gpu_hour", ("price", "$"), _to_price, postfix=False),
    _Unit("price_per_gpu_hour", _HOURLY, _to_price, prefix=False),
)
_PREFIX_UNITS: Final = {w: u for u in _UNITS if u.prefix for w in u.words}
_POSTFIX_UNITS: Final = {w: u for u in _UNITS if u.postfix for w in u.words}
_ALL_UNITS: Final = {**_PREFIX_UNITS, **_POSTFIX_UNITS}
_GLUE_PREFIXES: Final = sorted((w for w in _PREFIX_UNITS if w != "$"), key=len, reverse=True)
_GLUE_SUFFIXES: Final = sorted((w for w in _POSTFIX_UNITS if len(w) > 1), key=len, reverse=True)


# --- catalog lookups -----------------------------------------------------------


@dataclass(frozen=True)
class _Index:
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
    for word, (field, value) in _KEYWORDS.items():
        vocab.setdefault(word, f"{field}={value}")
    for word, field in _FLAGS.items():
        vocab.setdefault(word, f"{field}=on")
        vocab.setdefault(f"no-{word}", f"{field}=off")
    for word, unit in _ALL_UNITS.items():
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
    return vocab


@lru_cache(maxsize=16)
def _index(catalog: Catalog) -> _Index:
    prefixes: dict[str, set[str]] = {}
    for gpu in catalog.gpus.values():
        for name in (gpu.id, gpu.name, *gpu.aliases):
            for prefix in _name_prefixes(name):
                prefixes.setdefault(prefix, set()).add(gpu.id)
    families = frozenset(
        normalize_name(m.family) for m in catalog.models.values() if not m.synthetic
    )
    return _Index(
        gpu_prefixes={k: frozenset(v) for k, v in prefixes.items()},
        families=families,
        vocabulary=_vocabulary(catalog),
    )


def _gpu_variants(text: str) -> list[str]:
    """Spellings to try for a card: as written, singular, with ``gb`` appended."""
    variants = [text]
    if text.endswith("s") and len(text) > 1:
        variants.append(text[:-1])
    variants += [v + "gb" for v in list(variants) if v[-1:].isdigit()]
    return variants


def _resolve_gpu(catalog: Catalog, text: str) -> str | None:
    """A GPU id for ``text``: exact name or alias first, then a unique name prefix."""
    variants = _gpu_variants(text)
    for variant in variants:
        found = catalog.find_gpu(variant)
        if found:
            return found
    prefixes = _index(catalog).gpu_prefixes
    for variant in variants:
        ids = prefixes.get(normalize_name(variant), frozenset())
        if len(ids) == 1:
            return next(iter(ids))
    return None


def _size_model(catalog: Catalog, size: str, word: str) -> str:
    """The model for a bare size such as ``70b``: canonical, else synthetic."""
    billions = float(size[:-1])
    canonical = f"{billions:g}b"
    found = catalog.model_for_size(size) or catalog.model_for_size(canonical)
    if found:
        return found
    if not SYNTHETIC_MIN_B <= billions <= SYNTHETIC_MAX_B:
        raise _error(
            f'"{_show(word)}" is out of range: a model size must be between '
            f"{SYNTHETIC_MIN_B:g}b and {SYNTHETIC_MAX_B:g}b.",
            word,
        )
    return f"synthetic-{canonical}"


def _resolve_model(catalog: Catalog, text: str) -> str | None:
    """A model id for ``text`` (name, alias, Hugging Face URL, ``synthetic-20b``)."""
    text = _HF_PREFIX.sub("", text)
    found = catalog.find_model(text)
    if found:
        return found
    match = _SYNTHETIC_RE.match(text)
    if match and SYNTHETIC_MIN_B <= float(match.group(1)) <= SYNTHETIC_MAX_B:
        return f"synthetic-{float(match.group(1)):g}b"
    return None


# --- words ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Word:
    raw: str
    """As the user typed it (for messages)."""
    low: str
    """Lower-cased, ``_`` read as ``-`` (for matching)."""
    origin: int
    """Index of the typed word this came from (glued words split into several)."""


_SEPARATORS: Final = re.compile(r"[\s,;?!()\[\]{}\"`=“”‘’]+")
_THOUSANDS: Final = re.compile(r"(?<=[0-9]),(?=[0-9]{3}(?![0-9]))")


def _clean(text: object) -> str:
    """Check the raw input and return it normalized; QueryError if it is unusable."""
    if not isinstance(text, str):
        raise _error("A query must be text.")
    text = text.strip()
    if len(text) > MAX_QUERY_CHARS:
        raise _error(
            f"That query is {len(text):,} characters long; keep it under {MAX_QUERY_CHARS}."
        )
    for char in text:
        category = unicodedata.category(char)
        if category in ("Cc", "Cs") and char not in "\t\n\r":
            raise _error(f"That query contains a control character (U+{ord(char):04X}).")
    text = "".join(c for c in text if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFKC", text).replace("×", "x")


def _split(text: str) -> list[tuple[str, str]]:
    """(raw, low) words: separators and trailing sentence punctuation dropped."""
    words = []
    for piece in _SEPARATORS.split(_THOUSANDS.sub("", text)):
        raw = piece.strip("'").rstrip(".:").strip("'")
        if raw:
            words.append((raw, raw.lower().replace("_", "-")))
    return words


def _merge_spelled(words: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Join ``50 million`` into ``50m`` and ``per hour`` / ``an hour`` into ``/hr``."""
    out: list[tuple[str, str]] = []
    for raw, low in words:
        prev = out[-1][1] if out else ""
        if low in _SPELLED_SCALE and _COUNT_RE.match(prev):
            merged = prev + _SPELLED_SCALE[low]
        elif (prev == "per" and low in _HOUR_WORDS | {"h"}) or (
            prev in ("a", "an") and low in _HOUR_WORDS
        ):
            merged = "/hr"
        else:
            out.append((raw, low))
            continue
        out[-1] = (f"{out[-1][0]} {raw}", merged)
    return out


def _is_known(catalog: Catalog, low: str) -> bool:
    """Whether a single word means something as it stands (so is never unglued)."""
    return bool(
        low in _KEYWORDS
        or low in _FLAGS
        or (low.startswith("no-") and low[3:] in _FLAGS)
        or low in _ALL_UNITS
        or low in _FILLER
        or _number(low)
        or _COUNT_X_RE.match(low)
        or _resolve_model(catalog, low)
        or _resolve_gpu(catalog, low)
    )


def _unglue(catalog: Catalog, low: str) -> list[str]:
    """Split a glued word: ``8xa100`` → ``8x a100``, ``h100x8`` → ``h100 x8``,
    ``r64`` → ``r 64``, ``1ep`` → ``1 ep``. Unknown words come back whole."""
    if _is_known(catalog, low):
        return [low]
    count_first = re.match(r"^(-?[0-9]+(?:\.[0-9]+)?)[x*](.+)$", low)
    if count_first and _resolve_gpu(catalog, count_first.group(2)):
        return [count_first.group(1) + "x", count_first.group(2)]
    cut = max(low.rfind("x"), low.rfind("*"))
    if cut > 0 and _COUNT_RE.match(low[cut + 1 :]) and _resolve_gpu(catalog, low[:cut]):
        return [low[:cut], "x" + low[cut + 1 :]]
    for unit in _GLUE_PREFIXES:
        if low.startswith(unit) and _number(low[len(unit) :]):
            return [unit, low[len(unit) :]]
    for unit in _GLUE_SUFFIXES:
        rest = low[: -len(unit)]
        if low.endswith(unit) and (num := _number(rest)) and not num.is_price:
            return [rest, unit]
    return [low]


def _tokenize(text: str, catalog: Catalog) -> list[_Word]:
    words: list[_Word] = []
    for origin, (raw, low) in enumerate(_merge_spelled(_split(_clean(text)))):
        words += [_Word(raw, piece, origin) for piece in _unglue(catalog, low)]
    return words


# --- the scanner ---------------------------------------------------------------


class _State:
    """Words being scanned and the fields found so far, with the words that set them."""

    def __init__(self, words: list[_Word], catalog: Catalog) -> None:
        self.words = words
        self.catalog = catalog
        self.fields: dict[str, object] = {}
        self.sources: dict[str, str] = {}

    def low(self, i: int) -> str:
        return self.words[i].low if 0 <= i < len(self.words) else ""

    def raw(self, i: int, n: int = 1) -> str:
        """The typed text of words ``i .. i+n`` (glued pieces shown once)."""
        parts: list[str] = []
        last = -1
        for word in self.words[i : i + n]:
            if word.origin != last:
                parts.append(word.raw)
                last = word.origin
        return " ".join(parts)

    def set(self, field: str, value: object, phrase: str, word: str | None = None) -> None:
        """Record a field; QueryError if out of range or already set differently."""
        _check_field(field, value, phrase, word)
        if field in self.fields and self.fields[field] != value:
            label = _FIELDS[field].label
            raise _error(
                f'"{_show(phrase)}" conflicts with "{_show(self.sources[field])}": '
                f"both set the {label}. Pick one.",
                phrase,
                example=_FIELDS[field].example,
            )
        self.fields[field] = value
        self.sources.setdefault(field, phrase)

    def set_number(self, unit: _Unit, num_at: int, phrase_at: int) -> int:
        """Set ``unit``'s field from the number at ``num_at``; the phrase is 2 words."""
        word = self.raw(num_at)
        value = unit.convert(_require(_number(self.low(num_at))), word)
        self.set(unit.field, value, self.raw(phrase_at, 2), word)
        return 2


def _require(num: _Num | None) -> _Num:
    """The number a handler has already matched (a QueryError, never a crash, if not)."""
    if num is None:
        raise _error("I couldn't read a number in that query.")
    return num


Handler = Callable[[_State, int], int]
"""Try to read a phrase at word ``i``; return the words consumed (0: no match)."""


def _filler(s: _State, i: int) -> int:
    return 1 if s.low(i) in _FILLER else 0


def _keyword(s: _State, i: int) -> int:
    hit = _KEYWORDS.get(s.low(i))
    if hit is None:
        return 0
    s.set(hit[0], hit[1], s.raw(i))
    return 1


def _flag(s: _State, i: int) -> int:
    low = s.low(i)
    if low in _FLAGS:
        s.set(_FLAGS[low], True, s.raw(i))
        return 1
    for stem in (low.removeprefix("no-"), low.removeprefix("no")):
        if stem != low and stem in _FLAGS:
            s.set(_FLAGS[stem], False, s.raw(i))
            return 1
    if low not in _NEGATIONS:
        return 0
    nxt = s.low(i + 1)
    if nxt in _FLAGS:
        s.set(_FLAGS[nxt], False, s.raw(i, 2))
        return 2
    if f"no-{nxt}" in _KEYWORDS:
        field, value = _KEYWORDS[f"no-{nxt}"]
        s.set(field, value, s.raw(i, 2))
        return 2
    raise _error(f'"{_show(s.raw(i, 2))}": "{low}" must come before a switch such as ckpt, '
                 "flash, fused-ce, offload or double-quant.", s.raw(i),
                 example="8b lora no-ckpt 50M tokens")


def _price(s: _State, i: int) -> int:
    num = _number(s.low(i))
    if num is None or not num.is_price:
        return 0
    tail = 1 if s.low(i + 1) in _HOURLY else 0
    value = _to_price(num, s.raw(i))
    s.set("price_per_gpu_hour", value, s.raw(i, 1 + tail), s.raw(i))
    return 1 + tail


def _alternating_run(s: _State, i: int) -> int:
    """Length of the number, unit, number, unit... run starting at ``i``."""
    j = i
    while _number(s.low(j)) if (j - i) % 2 == 0 else s.low(j) in _POSTFIX_UNITS:
        j += 1
    return j - i


def _number_then_unit(s: _State, i: int) -> int:
    unit = _POSTFIX_UNITS.get(s.low(i + 1))
    if unit is None or _number(s.low(i)) is None:
        return 0
    if _SIZE_RE.match(s.low(i)) and _alternating_run(s, i) % 2 == 1:
        return 0  # "70b tokens 50M": the size is the model, "tokens 50M" the data
    return s.set_number(unit, i, i)


def _unit_then_number(s: _State, i: int) -> int:
    unit = _PREFIX_UNITS.get(s.low(i))
    if unit is None or _number(s.low(i + 1)) is None:
        return 0
    return s.set_number(unit, i + 1, i)


def _match_span(
    s: _State, i: int, resolve: Callable[[Catalog, str], str | None]
) -> tuple[str, int] | None:
    """A catalog id for the longest run of up to three words at ``i`` that names one."""
    if i >= len(s.words):
        return None
    for n in (3, 2, 1):
        if i + n > len(s.words) or (n > 1 and s.low(i) in _FILLER):
            continue
        found = resolve(s.catalog, " ".join(w.low for w in s.words[i : i + n]))
        if found:
            return found, n
    return None


def _count(s: _State, text: str, phrase: str, word: str) -> None:
    num = _require(_number(text))
    s.set("gpu_count", _whole(num.value, word, "gpu_count"), phrase, word)


def _count_tail(s: _State, j: int, card_at: int) -> int:
    """An ``x8`` or ``x 8`` after a card: set the count, return words consumed."""
    glued = _X_COUNT_RE.match(s.low(j))
    if glued:
        _count(s, glued.group(1), s.raw(card_at, j - card_at + 1), s.raw(j))
        return 1
    if s.low(j) in ("x", "*") and _COUNT_RE.match(s.low(j + 1)):
        _count(s, s.low(j + 1), s.raw(card_at, j - card_at + 2), s.raw(j + 1))
        return 2
    return 0


def _named(s: _State, i: int) -> int:
    model = _match_span(s, i, _resolve_model)
    if model:
        s.set("model", model[0], s.raw(i, model[1]))
        return model[1]
    gpu = _match_span(s, i, _resolve_gpu)
    if gpu is None:
        return 0
    s.set("gpu", gpu[0], s.raw(i, gpu[1]))
    return gpu[1] + _count_tail(s, i + gpu[1], i)


def _count_then_card(s: _State, i: int) -> int:
    low = s.low(i)
    glued = _COUNT_X_RE.match(low)
    if glued:
        count, j = glued.group(1), i + 1
    elif _COUNT_RE.match(low):
        count, j = low, i + 1 + (s.low(i + 1) in ("x", "*"))
    else:
        return 0
    card = _match_span(s, j, _resolve_gpu)
    if card:
        _count(s, count, s.raw(i, j - i + card[1]), s.raw(i))
        s.set("gpu", card[0], s.raw(j, card[1]))
        return j - i + card[1]
    if s.low(j) in _CARD_WORDS:
        _count(s, count, s.raw(i, j - i + 1), s.raw(i))
        return j - i + 1
    if glued or j > i + 1:
        raise _error(f'"{_show(s.raw(i, j - i))}" needs a card after it.', s.raw(i),
                     example="70b full 50M tokens 4x h100")
    return 0


def _family_size(s: _State, i: int) -> int:
    family, size = normalize_name(s.low(i)), s.low(i + 1)
    if not _SIZE_RE.match(size) or family not in _index(s.catalog).families:
        return 0
    canonical = f"{float(size[:-1]):g}b"
    members = [m for m in s.catalog.models.values() if normalize_name(m.family) == family]
    fits = [m.id for m in members if canonical in m.sizes or m.id.endswith(f"-{canonical}")]
    if len(fits) > 1:
        preferred = s.catalog.model_for_size(canonical)
        fits = [preferred] if preferred in fits else fits
    if len(fits) != 1:
        names = fits or [m.id for m in members]
        raise _error(f'Which model is "{_show(s.raw(i, 2))}"?', s.raw(i, 2), names,
                     example=f"{names[0]} lora 50M tokens")
    s.set("model", fits[0], s.raw(i, 2))
    return 2


def _bare_size(s: _State, i: int) -> int:
    low = s.low(i)
    if not _SIZE_RE.match(low):
        return 0
    s.set("model", _size_model(s.catalog, low, s.raw(i)), s.raw(i))
    return 1


def _dangling(s: _State, i: int) -> int:
    """Explain a unit without a number or a number without a unit."""
    low, word = s.low(i), s.raw(i)
    unit = _ALL_UNITS.get(low)
    if unit is not None:
        raise _error(f'"{_show(word)}" needs a number.', word,
                     example=_FIELDS[unit.field].example)
    if _number(low) or _COUNT_X_RE.match(low) or low in ("x", "*"):
        raise _error(
            f'"{_show(word)}" needs a unit: say what it counts '
            "(tokens, epochs, seq, bs, accum, r, dropout, mfu, or a GPU after a count).",
            word,
        )
    return 0


_HANDLERS: Final[tuple[Handler, ...]] = (
    _filler,
    _keyword,
    _flag,
    _price,
    _number_then_unit,
    _unit_then_number,
    _named,
    _count_then_card,
    _family_size,
    _bare_size,
    _dangling,
)
"""Tried in order at each word; the first that matches consumes its phrase."""


def _suggest(word: str, catalog: Catalog) -> list[str]:
    """Up to three known words nearest ``word``, one per meaning."""
    vocab = _index(catalog).vocabulary
    key = word.lower()[:_MAX_SHOWN]
    matches = difflib.get_close_matches(key, vocab, n=12, cutoff=0.6)
    if len(key) >= 3:
        matches += [name for name in vocab if key in name]
    out: list[str] = []
    seen: set[str] = set()
    for name in matches:
        if vocab[name] not in seen:
            seen.add(vocab[name])
            out.append(name)
    return out[:3]


def _unknown(s: _State, i: int) -> QueryError:
    word = s.raw(i)
    return _error(f'I don\'t know "{_show(word)}".', word, _suggest(s.low(i), s.catalog))


def _scan(text: str, catalog: Catalog) -> _State:
    state = _State(_tokenize(text, catalog), catalog)
    i = 0
    while i < len(state.words):
        for handler in _HANDLERS:
            consumed = handler(state, i)
            if consumed:
                i += consumed
                break
        else:
            raise _unknown(state, i)
    return state


# --- public API ----------------------------------------------------------------


def parse_fields(text: str, catalog: Catalog | None = None) -> dict[str, object]:
    """The Request fields ``text`` names, each checked against its bounds."""
    return dict(_scan(text, catalog if catalog is not None else default_catalog()).fields)


def _build(fields: dict[str, object]) -> Request:
    try:
        return Request.model_validate(fields)
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        field = str(loc[0]) if loc else ""
        if field in _FIELDS:
            raise _out_of_range(field, str(fields.get(field))) from exc
        raise _error(f"That request is not valid ({exc.errors()[0]['msg']}).") from exc


def _which_model(catalog: Catalog) -> QueryError:
    favourites = [size for size in ("8b", "70b") if catalog.model_for_size(size)]
    names = [*(favourites or list(catalog.sizes)[:2]), *list(catalog.models)[:1]] or ["70b"]
    return _error(
        f"Which model? Name one, e.g. {', '.join(names)}, or any size such as 20b.",
        None,
        example=EXAMPLE,
    )


def parse_query(text: str, catalog: Catalog | None = None) -> Request:
    """Parse a one-line query; QueryError (with a message for the user) if it can't."""
    catalog = catalog if catalog is not None else default_catalog()
    fields = parse_fields(text, catalog)
    if "model" not in fields:
        raise _which_model(catalog)
    return _build(fields)


def apply_followup(previous: Request, text: str, catalog: Catalog | None = None) -> Request:
    """``previous`` with only the fields ``text`` names changed ("what if 8k seq?").

    Naming a card without a count clears the count; naming a model switches model.
    """
    changes = parse_fields(text, catalog)
    if not changes:
        raise _error(
            f'I didn\'t find anything to change in "{_show(str(text).strip())}".',
            None,
            example="what if 8k seq? | on 4x h100 | with full and zero3",
        )
    if "gpu" in changes and "gpu_count" not in changes:
        changes["gpu_count"] = None
    return _build({**previous.model_dump(), **changes})
