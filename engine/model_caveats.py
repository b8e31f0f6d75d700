"""Models whose measured time the engine is known to miss, and why: the reply says so
where the estimate is timed, rather than leave the user to find it in docs/accuracy.md.

Each caveat is measured on this project's own H200 runs (``benchmarks/measurements.yaml``,
held out of the fit) and names the mechanism the time model does not count.
"""

from __future__ import annotations

from typing import Final

from engine.choices import Method
from engine.records import record
from engine.request import Request
from engine.specs import ModelSpec


@record
class TimeCaveat:
    """How a model family's measured time differs from the estimate."""

    family_prefix: str
    """Catalog ids it covers: ``<prefix>-...`` (``gemma-3`` covers ``gemma-3-27b``)."""
    methods: frozenset[Method]
    """The methods the measured runs trained (and the mechanism touches)."""
    text: str
    source: str
    """The measured runs (``benchmarks/measurements.yaml`` ids) the figure comes from."""


TIME_CAVEATS: Final = (
    TimeCaveat(
        "gemma-3",
        frozenset(Method),
        "Gemma 3 ran 15-16% slower than this model predicts on this project's own H200 "
        "runs (full and LoRA, held out of the fit): its sliding-window layers "
        "pass SDPA an explicit mask, so they miss the causal FlashAttention and cuDNN "
        "kernels, and the estimate times them as plain causal attention. Allow that much "
        "more time.",
        "ftcost-h200f-10 (gemma-3-1b full, -15%), ftcost-h200f-11 (LoRA, -16%)",
    ),
    TimeCaveat(
        "phi-3",
        frozenset({Method.LORA, Method.QLORA}),
        "Phi-3 ran 13-20% slower than this model predicts on this project's own H200 runs "
        "(LoRA and QLoRA, held out of the fit): its fused qkv and gate_up "
        "projections are one linear each, which PEFT adapts as one, and the estimate "
        "counts them as Llama's separate projections. Allow that much more time.",
        "ftcost-h200f-14 (phi-3-mini LoRA, -20%), ftcost-h200f-15 (QLoRA, -13%)",
    ),
)


def time_caveat(model: ModelSpec, request: Request) -> str | None:
    """The measured caveat on ``model``'s time for ``request``'s method, or None."""
    for caveat in TIME_CAVEATS:
        if model.id.startswith(caveat.family_prefix + "-") and (
                request.effective_method in caveat.methods):
            return caveat.text
    return None
