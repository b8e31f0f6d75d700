"""Numbers as written (``50m``, ``8k``, ``40%``, ``$2.50/hr``) and the units that
say which field a number sets."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from adapters.query.errors import QueryError, error, quoted
from adapters.query.fields import (
    FIELDS,
    check_field,
    field_bounds,
    out_of_range,
    range_text,
)
from adapters.query.vocabulary import HOURLY

_NUM_BODY: Final = r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:e[+-]?[0-9]+)?"
_NUM_RE: Final = re.compile(
    rf"^(?P<dollar>\$)?(?P<num>{_NUM_BODY})(?P<suffix>[kmbt])?(?P<pct>%)?"
    r"(?P<hourly>/(?:gpu[-/]?)?(?:hr|h|hour)(?:/gpu)?)?$"
)
SIZE_RE: Final = re.compile(r"^[0-9]+(?:\.[0-9]+)?b$")
COUNT_RE: Final = re.compile(r"^-?[0-9]+(?:\.[0-9]+)?$")
COUNT_X_RE: Final = re.compile(r"^(-?[0-9]+(?:\.[0-9]+)?)[x*]$")
X_COUNT_RE: Final = re.compile(r"^[x*](-?[0-9]+(?:\.[0-9]+)?)$")
SYNTHETIC_RE: Final = re.compile(r"^synthetic-([0-9]+(?:\.[0-9]+)?)b$")
HF_PREFIX: Final = re.compile(r"^(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/")
_SCALE_POWER: Final = {"": 0, "k": 1, "m": 2, "b": 3, "t": 4}


@dataclass(frozen=True)
class Num:
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


def read_number(word: str) -> Num | None:
    """Read a number word (``50m``, ``2e9``, ``40%``, ``$2.50/hr``); None if not one."""
    match = _NUM_RE.match(word)
    if match is None:
        return None
    return Num(
        value=float(match["num"]),
        suffix=match["suffix"] or "",
        percent=bool(match["pct"]),
        dollar=bool(match["dollar"]),
        hourly=bool(match["hourly"]),
    )



def _plain(num: Num, word: str, field: str, percent_ok: bool = False) -> None:
    """Reject a price or percentage written where a plain number belongs."""
    example = FIELDS[field].example
    if num.is_price:
        raise error(f'"{quoted(word)}" looks like a price, not a {FIELDS[field].label}.',
                     word, example=example)
    if num.percent and not percent_ok:
        raise error(f'"{quoted(word)}": only mfu and dropout take a percentage.', word,
                     example=example)


def finite(value: float, word: str, field: str) -> float:
    if not math.isfinite(value):
        raise out_of_range(field, word)
    return value


def whole(value: float, word: str, field: str) -> int:
    value = finite(value, word, field)
    rounded = round(value)
    if abs(value - rounded) > 1e-9 * max(1.0, abs(value)):
        raise error(
            f'"{quoted(word)}" must be a whole number for the {FIELDS[field].label}.',
            word,
            example=FIELDS[field].example,
        )
    return int(rounded)


def _to_tokens(num: Num, word: str) -> int:
    _plain(num, word, "dataset_tokens")
    return round(finite(num.scaled(), word, "dataset_tokens"))


def _to_epochs(num: Num, word: str) -> float:
    _plain(num, word, "epochs")
    return finite(num.scaled(), word, "epochs")


def _to_seq(num: Num, word: str) -> int:
    _plain(num, word, "seq_len")
    return whole(num.scaled(binary=True), word, "seq_len")


def _integer_binary(field: str) -> Callable[[Num, str], int]:
    """A whole count where ``k`` is 1,024 (lengths in tokens: ``max-len 2k``)."""

    def convert(num: Num, word: str) -> int:
        _plain(num, word, field)
        return whole(num.scaled(binary=True), word, field)

    return convert


def _memory(num: Num, word: str) -> float:
    """A card's memory in GB (``24gb``)."""
    _plain(num, word, "gpu_memory_gb")
    return finite(num.scaled(), word, "gpu_memory_gb")


def _budget(num: Num, word: str) -> float:
    """A whole run's cost in USD (``budget $2k``); a rate per hour is a price instead."""
    if num.hourly or num.percent:
        raise error(f'"{quoted(word)}" is a rate; a budget is the whole run\'s cost.', word,
                    example=FIELDS["budget_usd"].example)
    return finite(num.scaled(), word, "budget_usd")


def _integer(field: str) -> Callable[[Num, str], int]:
    def convert(num: Num, word: str) -> int:
        _plain(num, word, field)
        return whole(num.scaled(), word, field)

    return convert


def _fraction(field: str, unit: str, shown: tuple[str, str]) -> Callable[[Num, str], float]:
    """A share written as ``40%``, ``0.4`` or ``40`` (below 1: a fraction; above 1: a
    percentage). A bare ``1`` is both 1% and 100%, so it is refused: say which."""

    def convert(num: Num, word: str) -> float:
        _plain(num, word, field, percent_ok=True)
        value = finite(num.scaled(), word, field)
        if value == 1 and not num.percent:
            raise _one_or_all(field, unit, word, shown)
        return value / 100 if num.percent or value > 1 else value

    return convert


def _one_or_all(field: str, unit: str, word: str, shown: tuple[str, str]) -> QueryError:
    """``mfu 1``: 1% or 100%? A bare number below 1 is a fraction, above 1 a percentage,
    so 1 itself could be either; the message names the readings the field allows.
    ``shown``: a fraction and a percentage to show as examples (``0.4``, ``40``)."""
    readings, bound = [f'"{unit} 1%"'], ""
    if field_bounds(field).high >= 1:
        readings.append(f'"{unit} 100%"')
    else:  # "dropout 1": 100% is past its bound, so only 1% is left to say
        bound = f", which must be {range_text(field)}"
    return error(
        f'"{quoted(word)}" could be 1% or 100% for the {FIELDS[field].label}{bound}: say '
        f"{' or '.join(readings)} (a bare number below 1 is a fraction, e.g. {unit} "
        f"{shown[0]}; above 1 a percentage, e.g. {unit} {shown[1]}).", word,
        example=FIELDS[field].example,
    )


def to_price(num: Num, word: str) -> float:
    if num.percent:
        raise error(f'"{quoted(word)}": only mfu and dropout take a percentage.', word,
                     example=FIELDS["price_per_gpu_hour"].example)
    return finite(num.scaled(), word, "price_per_gpu_hour")


TP_WORDS: Final = (
    "tp", "tp-size", "tp-degree", "tensor-parallel", "tensor-parallelism",
    # torchtitan's [parallelism] tensor_parallel_degree, vLLM's and axolotl's
    # tensor_parallel_size, torchtune's tensor_parallel_dim, Megatron's and NeMo's
    # tensor_model_parallel_size
    "tensor-parallel-degree", "tensor-parallel-size", "tensor-parallel-dim",
    "tensor-model-parallel-size",
)
"""Words for the tensor-parallel degree (``tp 8``, ``tensor_parallel_degree 8``)."""
CP_WORDS: Final = (
    "cp", "cp-size", "cp-degree", "context-parallel", "context-parallelism",
    # torchtitan's [parallelism] context_parallel_degree, Megatron's and NeMo's
    # context_parallel_size, accelerate's ParallelismConfig cp_size, axolotl's
    # sequence_parallel_degree (ring-flash-attn) and context_parallel_size
    "context-parallel-degree", "context-parallel-size", "sequence-parallel-degree",
    # DeepSpeed-Ulysses splits the sequence too (all-to-all instead of a ring; the
    # memory is the same): its sequence_parallel_size
    "sequence-parallel-size", "ulysses-degree",
)
"""Words for the context-parallel degree (``cp 8``, ``context_parallel_degree 8``)."""


@dataclass(frozen=True)
class Unit:
    """A word that names what a neighbouring number counts."""

    field: str
    words: tuple[str, ...]
    convert: Callable[[Num, str], object]
    prefix: bool = True
    postfix: bool = True


UNITS: Final = (
    Unit("dataset_tokens", ("tokens", "token", "tok", "toks", "tokens/epoch"), _to_tokens),
    Unit("epochs", ("epochs", "epoch", "ep", "eps", "num-train-epochs", "num-epochs"),
         _to_epochs),  # HF's num_train_epochs, axolotl's num_epochs
    Unit(
        "seq_len",
        ("seq", "seqlen", "seq-len", "sequence", "sequence-length", "ctx", "ctx-len", "context",
         "context-length", "max-seq", "max-seq-len", "max-seq-length", "max-length-seq",
         # the same setting as axolotl, LLaMA-Factory, HF's run_clm and the alpaca scripts
         # name it
         "sequence-len", "seq-length", "cutoff-len", "block-size", "model-max-length",
         "cutoff"),  # LLaMA-Factory's cutoff_len, said short
        _to_seq,
    ),
    Unit(
        "micro_batch",
        ("bs", "bsz", "batch", "batch-size", "micro-batch", "microbatch", "micro-bs", "mbs",
         "per-device-batch", "per-device-batch-size", "per-device-train-batch-size",
         # axolotl and litgpt, torchtitan, DeepSpeed's config
         "micro-batch-size", "local-batch-size", "train-micro-batch-size-per-gpu",
         "per-gpu-batch-size", "batch-size-per-gpu"),
        _integer("micro_batch"),
    ),
    Unit(
        "grad_accum",
        ("accum", "grad-accum", "ga", "gas", "accumulation", "grad-accumulation",
         "gradient-accumulation", "accumulation-steps", "accum-steps",
         "gradient-accumulation-steps"),
        _integer("grad_accum"),
    ),
    Unit("lora_rank", ("r", "rank", "lora-r", "lora-rank"), _integer("lora_rank")),
    Unit("lora_dropout", ("dropout", "lora-dropout", "lora_dropout"),
         _fraction("lora_dropout", "dropout", ("0.05", "5"))),
    Unit("mfu", ("mfu", "utilization"), _fraction("mfu", "mfu", ("0.4", "40"))),
    Unit("max_len", ("max-len", "max-length", "maxlen", "pad-to", "truncate", "truncation"),
         _integer_binary("max_len")),
    Unit("gpu_memory_gb", ("gb",), _memory, prefix=False),
    Unit("nodes", ("nodes", "node", "machines", "machine", "hosts", "servers",
                   # torchrun's --nnodes, Lightning's --num_nodes, accelerate's --num_machines
                   "nnodes", "num-nodes", "num-machines"),
         _integer("nodes")),
    Unit("tensor_parallel", TP_WORDS, _integer("tensor_parallel")),
    Unit("context_parallel", CP_WORDS, _integer("context_parallel")),
    Unit("budget_usd", ("budget", "max-budget"), _budget),
    Unit("price_per_gpu_hour", ("price", "$"), to_price, postfix=False),
    Unit("price_per_gpu_hour", HOURLY, to_price, prefix=False),
)
PREFIX_UNITS: Final = {w: u for u in UNITS if u.prefix for w in u.words}
POSTFIX_UNITS: Final = {w: u for u in UNITS if u.postfix for w in u.words}
ALL_UNITS: Final = {**PREFIX_UNITS, **POSTFIX_UNITS}
GLUE_PREFIXES: Final = sorted((w for w in PREFIX_UNITS if w != "$"), key=len, reverse=True)
GLUE_SUFFIXES: Final = sorted((w for w in POSTFIX_UNITS if len(w) > 1), key=len, reverse=True)


def fits(unit: Unit, word: str) -> bool:
    """Whether the number ``word`` reads as a value of ``unit`` in its field's range (``8k``
    is no MFU): a unit between two numbers takes the one after it when the one before
    does not fit (``8k mfu 40%``: ``mfu 40%``, and ``8k`` is left to say its unit)."""
    num = read_number(word.lower())
    if num is None:
        return False
    try:
        check_field(unit.field, unit.convert(num, word), word, word)
    except QueryError:
        return False
    return True
