"""Request fields as the parser names them: labels, examples, bounds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import annotated_types
from pydantic import ValidationError

from adapters.query.errors import QueryError, error, quoted
from engine.request import Display, FieldMeta, Request, field_metas


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


def range_text(field: str) -> str:
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
    show = FIELDS[field].show
    if low is None or high is None:
        return "a valid value"
    if strict_high:
        return f"at least {show(low)} and less than {show(high)}"
    if strict:
        return f"more than {show(low)} and at most {show(high)}"
    return f"between {show(low)} and {show(high)}"


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

