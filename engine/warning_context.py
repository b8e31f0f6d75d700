"""What the warnings, assumptions and notes of one estimate read (:mod:`engine.warnings`,
:mod:`engine.card_tips`): the resolved request, its model, memory, card choices and
compute."""

from __future__ import annotations

from dataclasses import dataclass

from engine.compute import Compute
from engine.fit import Option
from engine.memory import Footprint
from engine.request import Request
from engine.specs import ModelSpec


@dataclass(frozen=True, slots=True)
class Context:
    """One estimate, as its caveats read it."""

    request: Request
    model: ModelSpec
    footprint: Footprint
    options: list[Option]
    compute: Compute
    mfu_effective: float
    fits_anywhere: bool
