"""Training compute: FLOPs, GPU-hours, wall-clock time and rental cost.

FLOPs follow the 6·P·T rule (Kaplan et al. 2020, §2.1; the napkin document):
2 FLOPs per parameter per token forward, 4 backward. ``P`` is the active
parameter count (all parameters for a dense model, the routed-active ones for
MoE). LoRA and QLoRA still run the full forward and backward through the base,
so the rule is the same for every method.

GPU-hours = FLOPs / (dense BF16 TFLOPs · 10^12 · MFU) / 3600, using dense FP16
on cards without BF16. In detailed mode gradient checkpointing reruns the
forward pass, so 8 FLOPs of work buy 6 useful ones: the effective MFU is
multiplied by 6/8. Several cards add a communication overhead by interconnect
(``COMM_OVERHEAD``: NVLink 10%, Infinity Fabric 15%, Ethernet/RoCE 20%, PCIe
30%), within the napkin document's 10-30% range. Napkin mode applies neither
(its rules are "parallelism overhead not included").
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.constants import COMM_OVERHEAD, FLOPS_PER_PARAM_TOKEN, RECOMPUTE_MFU_FACTOR
from engine.request import Mode, Request
from engine.specs import GpuSpec


@dataclass(frozen=True, slots=True)
class Compute:
    """The compute side of an estimate (independent of the card)."""

    flops: float | None
    """Total training FLOPs, or None without a dataset size."""
    trained_tokens: float | None
    """Dataset tokens x epochs."""
    mfu_effective: float
    """MFU after the recompute penalty (a fraction, 0-1)."""


@dataclass(frozen=True, slots=True)
class Timing:
    """Time and money for one card choice (None without a dataset size)."""

    gpu_hours: float | None
    wall_hours: float | None
    cost_usd: float | None
    comm_overhead: float
    """Fraction added to GPU-hours for multi-GPU communication."""


def training_flops(active_params: float, trained_tokens: float) -> float:
    """FLOPs = 6 · active parameters · trained tokens (Kaplan et al. 2020)."""
    return FLOPS_PER_PARAM_TOKEN * active_params * trained_tokens


def effective_mfu(request: Request) -> float:
    """The request's MFU, lowered by 6/8 for checkpoint recompute in detailed mode."""
    if request.grad_checkpointing and request.mode is Mode.DETAILED:
        return request.mfu * RECOMPUTE_MFU_FACTOR
    return request.mfu


def compute(active_params: float, request: Request) -> Compute:
    tokens = request.trained_tokens
    flops = None if tokens is None else training_flops(active_params, tokens)
    return Compute(flops, tokens, effective_mfu(request))


def comm_overhead(gpu: GpuSpec, count: int, mode: Mode) -> float:
    """Fraction of GPU-hours lost to communication on ``count`` cards of ``gpu``."""
    if count <= 1 or mode is Mode.NAPKIN:
        return 0.0
    return COMM_OVERHEAD[gpu.fabric]


def gpu_hours(work: Compute, gpu: GpuSpec, count: int, mode: Mode) -> float:
    """GPU-hours = FLOPs / (TFLOPs · 10^12 · MFU_eff) / 3600 · (1 + overhead); 0 without FLOPs."""
    if work.flops is None:
        return 0.0
    seconds = work.flops / (gpu.train_tflops * 1e12 * work.mfu_effective)
    return seconds / 3600 * (1 + comm_overhead(gpu, count, mode))


def timing(work: Compute, gpu: GpuSpec, count: int, price: float | None, mode: Mode) -> Timing:
    """GPU-hours, wall-clock hours and cost of ``work`` on ``count`` cards of ``gpu``.

    GPU-hours = FLOPs / (TFLOPs · 10^12 · MFU_eff) / 3600 · (1 + overhead);
    wall-clock = GPU-hours / count; cost = GPU-hours · $/GPU-hour.
    """
    overhead = comm_overhead(gpu, count, mode)
    if work.flops is None:
        return Timing(None, None, None, overhead)
    hours = gpu_hours(work, gpu, count, mode)
    cost = None if price is None else hours * price
    return Timing(hours, hours / count, cost, overhead)
