"""The engine's per-estimate records: frozen to the type checker, plain slots at run time.

One estimate builds about a hundred small records: a memory breakdown for each card
count it sizes, a step time for each card it times, an option and its timing for each
card it shows. A ``frozen=True`` dataclass sets every field in ``__init__`` through
``object.__setattr__``, which makes building one about five times slower than a plain
slots class (1.2 us against 0.26 us for seven floats, CPython 3.11): about a fifth of an
estimate (``benchmarks/engine.py``).

:func:`record` therefore makes a plain slots dataclass at run time and tells the type
checker it is frozen (PEP 681's ``dataclass_transform`` with ``frozen_default``). An
assignment to a field (``+=`` and nested ones included) fails ``mypy`` in the code it
checks, which CI runs on ``engine/``, ``adapters/``, ``catalog/`` and ``bot/``; tests and
benchmarks are not type-checked, and ``del`` of a field is not caught. A changed copy is
made with ``dataclasses.replace``, as for a frozen dataclass. Records are not hashable
(no record was hashed when they were frozen).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar, dataclass_transform

_T = TypeVar("_T")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: type[_T]) -> type[_T]:
    """``cls`` as a slots dataclass, frozen to the type checker only (see the module
    docstring)."""
    return dataclass(slots=True)(cls)
