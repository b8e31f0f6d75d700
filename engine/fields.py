"""Field metadata of the request model: how each :class:`~engine.request.Request` field
reads to a person and which tables of the front ends it feeds. Declared on the field
(``Annotated[int, FieldMeta(...)]``) so a new field is a one-place change; read with
:func:`engine.request.field_meta`.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Display(StrEnum):
    """How a field's value reads to a person; :mod:`adapters.values` writes it."""

    PLAIN = "plain"
    """Enum values and catalog ids as they are; switches as on/off."""
    METHOD = "method"
    """A :class:`Method` by its label (``LoRA``)."""
    COUNT = "count"
    """A whole number with thousands separators (``2,048``)."""
    NUMBER = "number"
    """A decimal as short as it goes (``0.05``, ``2.5``)."""
    TOKENS = "tokens"
    """A token count with k/M/B/T (``50M``)."""
    PERCENT = "percent"
    """A fraction as a percentage (0.35 is ``35%``)."""
    USD = "usd"
    """US dollars (``$500``)."""
    USD_PER_HOUR = "usd-per-hour"
    """US dollars per GPU-hour (``$2.50/hr``)."""
    HOURS = "hours"
    """Wall-clock hours (``48 hours``)."""
    GB = "gb"
    """Gigabytes, GB = 10^9 bytes (``24 GB``)."""


@dataclass(frozen=True, slots=True)
class FieldMeta:
    """What every front end needs to know about one :class:`Request` field, declared on
    the field (``Annotated[int, FieldMeta(...)]``) so a new field is a one-place change.
    Read it with :func:`field_meta`; the per-field tables of the front ends (change
    lines, Discord custom-id keys, option merges, parser messages) are built from it."""

    label: str | None
    """Short name in a follow-up's change line (``seq 2,048 → 8,192``); None for an
    internal field no change line names."""
    noun: str
    """The field in a sentence (``the sequence length must be ...``)."""
    key: str
    """One character naming the field in a Discord custom id; unique across fields."""
    example: str
    """A whole query that sets the field, shown when it was given wrongly."""
    display: Display = Display.PLAIN
    """How its value reads."""
    unset: str = "unset"
    """How its value reads when it is None (``auto``, ``any``)."""
    adapters_only: bool = False
    """It means something only to LoRA and QLoRA: no change line names it between two
    full fine-tunes."""
