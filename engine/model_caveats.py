"""Where the estimate's time is known to miss, and why: the reply says so where the
estimate is timed, rather than leave the user to find it in docs/accuracy.md.

* Models: each caveat is measured on this project's own H200 runs
  (``benchmarks/measurements.yaml``, held out of the fit) and names the mechanism the
  time model does not count.
* FP32 weights: timed with 16-bit matmuls under autocast (:func:`precision_caveat`).
"""

from __future__ import annotations

from typing import Final

from engine.choices import Method, Precision
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


FP32_TIME_CAVEAT: Final = (
    "FP32 weights are timed with 16-bit matmuls under autocast (mixed precision: HF's "
    "`bf16=True` on an FP32 model, accelerate's `--mixed_precision bf16`). Trained without "
    "autocast (`--mixed_precision no`), the matmuls run in TF32 at about half the BF16 "
    "rate where TF32 is enabled, and in plain FP32 (PyTorch's default for matmuls) up to "
    "about 15x slower on data-center cards, which this estimate does not time."
)
"""NVIDIA's dense rates: TF32 tensor cores at half of BF16 (A100 156 of 312 TFLOPs, H100
SXM 495 of 989); plain FP32 at 19.5 (A100) and 67 (H100 SXM) TFLOPs, 1/16 and 1/15 of
BF16 (the A100 and H100 datasheets). PyTorch leaves TF32 off for matmuls
(``torch.backends.cuda.matmul.allow_tf32 = False`` since 1.12)."""


def precision_caveat(request: Request) -> str | None:
    """:data:`FP32_TIME_CAVEAT` where the user said FP32 weights (the estimate times them
    under autocast, which they may not use), else None."""
    if request.precision is Precision.FP32 and "precision" in request.model_fields_set:
        return FP32_TIME_CAVEAT
    return None
