"""Request fields as the parser names them: labels, examples, bounds."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Final

import annotated_types
from pydantic import ValidationError

from adapters.query.errors import QueryError, error, quoted
from engine.fields import Display, FieldMeta
from engine.request import Request, field_metas


def _plain(value: float) -> str:
    """A bound as a person writes it: ``0.01``, ``2,048``, ``1,000,000,000`` (no exponent)."""
    return f"{value:,g}" if value < 1e6 else f"{value:,.0f}"


@dataclass(frozen=True)
class FieldInfo:
    label: str
    example: str
    show: Callable[[float], str] = _plain


def human_tokens(value: float) -> str:
    for power, suffix in ((4, "T"), (3, "B"), (2, "M"), (1, "k")):
        if value >= 1000**power:
            return f"{value / 1000**power:g}{suffix}"
    return f"{value:g}"


_BOUND_TEXT: Final[dict[Display, Callable[[float], str]]] = {
    Display.TOKENS: human_tokens,
    Display.PERCENT: lambda v: f"{v * 100:g}%",
    Display.USD: lambda v: f"${_plain(v)}",
    Display.USD_PER_HOUR: lambda v: f"${_plain(v)}",
    Display.HOURS: lambda v: f"{_plain(v)} hours",
    Display.GB: lambda v: f"{_plain(v)} GB",
}
"""How a bound reads in a range message, by the field's display (default: a number)."""


def _info(meta: FieldMeta) -> FieldInfo:
    show = _BOUND_TEXT.get(meta.display)
    return FieldInfo(meta.noun, meta.example) if show is None else FieldInfo(
        meta.noun, meta.example, show)


FIELDS: Final = {name: _info(meta) for name, meta in field_metas().items()}
"""Each Request field as the parser names it, from the metadata declared on the field
(:class:`engine.request.FieldMeta`: ``noun``, ``example``, ``display``)."""


@dataclass(frozen=True)
class Bounds:
    """A Request field's range from its pydantic ``Field(ge/gt/le/lt)``; infinite where
    the field sets none, ``open_low``/``open_high`` for ``gt``/``lt``."""

    low: float = -math.inf
    high: float = math.inf
    open_low: bool = False
    open_high: bool = False


def field_bounds(field: str) -> Bounds:
    """The bounds of the :class:`engine.request.Request` field ``field``: the one copy of
    every limit, which the parser and the config reader both quote."""
    b = Bounds()
    for bound in Request.model_fields[field].metadata:
        if isinstance(bound, annotated_types.Ge):
            b = replace(b, low=float(bound.ge))  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Gt):
            b = replace(b, low=float(bound.gt), open_low=True)  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Le):
            b = replace(b, high=float(bound.le))  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Lt):
            b = replace(b, high=float(bound.lt), open_high=True)  # type: ignore[arg-type]
    return b


def range_text(field: str) -> str:
    """The allowed range of a Request field, read from its pydantic bounds."""
    b = field_bounds(field)
    show = FIELDS[field].show
    if not (math.isfinite(b.low) and math.isfinite(b.high)):
        return "a valid value"
    if b.open_high:
        return f"at least {show(b.low)} and less than {show(b.high)}"
    if b.open_low:
        return f"more than {show(b.low)} and at most {show(b.high)}"
    return f"between {show(b.low)} and {show(b.high)}"


def out_of_range(field: str, word: str) -> QueryError:
    info = FIELDS[field]
    return error(
        f'"{quoted(word)}" is out of range: the {info.label} must be {range_text(field)}.',
        word,
        example=info.example,
    )


def check_field(field: str, value: object, phrase: str, word: str | None) -> None:
    """Raise a QueryError naming the word when ``value`` breaks the field's bounds."""
    probe: dict[str, object] = {"model": "probe", field: value}
    try:
        Request.model_validate(probe)
    except ValidationError as exc:
        raise out_of_range(field, word or phrase) from exc

