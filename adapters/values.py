"""Request field values as a person writes them, for every front end.

How a value reads is declared on its field (:class:`engine.request.FieldMeta`'s
``display``); this module turns that into text, so a follow-up's change line
(``seq 2,048 → 8,192``), a Discord option conflict and a parser message all write
one value the same way.

>>> show_value("seq_len", 8192), show_value("mfu", 0.4), show_value("gpu_count", None)
('8,192', '40%', 'auto')
"""

from __future__ import annotations

from enum import Enum

from adapters.formats import METHOD_LABELS, fmt_tokens
from engine.choices import Method, Solve
from engine.fields import Display
from engine.request import field_meta


def show_number(display: Display, value: float) -> str:
    """``value`` written the way ``display`` says (units as in :class:`Display`)."""
    if display is Display.TOKENS:
        return fmt_tokens(value)
    if display is Display.PERCENT:
        return f"{value * 100:.3g}%"
    if display is Display.USD:
        return f"${value:,.2f}".removesuffix(".00")
    if display is Display.USD_PER_HOUR:
        return f"${value:,.2f}/hr"
    if display is Display.HOURS:
        return f"{value:,g} hours"
    if display is Display.GB:
        return f"{value:,g} GB"
    if display is Display.COUNT or (isinstance(value, int) and display is Display.PLAIN):
        return f"{value:,.0f}"
    return f"{value:g}"


SOLVE_LABELS = {
    Solve.SEQ_LEN: "max seq",
    Solve.MICRO_BATCH: "max batch",
    Solve.MODEL: "largest model",
    Solve.GPU_COUNT: "fewest cards",
}
"""A limit question as the user asks it (the first of its phrases)."""


def show_value(name: str, value: object) -> str:
    """The value of the :class:`~engine.request.Request` field ``name`` as text: its
    ``unset`` word for None, ``on``/``off`` for switches, a method by its label, an
    enum by its value, numbers by the field's :class:`~engine.request.Display`."""
    meta = field_meta(name)
    if value is None:
        return meta.unset
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, Solve):
        return SOLVE_LABELS[value]
    if meta.display is Display.METHOD:
        return METHOD_LABELS[Method(str(getattr(value, "value", value)))]
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, int | float):
        return show_number(meta.display, value)
    return str(value)


def show_change(name: str, old: object, new: object) -> str:
    """``seq 2,048 → 8,192``: one field's change, labelled."""
    return f"{field_meta(name).label or name} {show_value(name, old)} → {show_value(name, new)}"
