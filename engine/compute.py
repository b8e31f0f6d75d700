"""Training compute: FLOPs, GPU-hours, wall-clock time and rental cost.

Two rules, one per mode:

* **napkin** (the specification's rule, kept exactly): FLOPs = 6·P·T (Kaplan et al.
  2020, §2.1), GPU-hours = FLOPs / (dense BF16 TFLOPs · 10^12 · 35%) / 3600, no
  communication overhead ("parallelism overhead not included").
* **detailed**: the physical time model of :mod:`engine.throughput` (matmuls by
  method, attention by sequence, memory-bound work, launch floor, communication over
  the actual link, offload), which gives tokens/s per GPU on each card; GPU-hours =
  trained tokens / (tokens/s · 3600) plus ``RUN_STARTUP_S`` per card. A user who states
  an MFU (``mfu 40%``) gets the flat rule at that MFU instead, plus the same start-up:
  a stated MFU is read as MFU is measured (PaLM, Chowdhery et al. 2022, App. B: model
  FLOPs 6·P·T over the run's time), so checkpoint recompute and communication are
  already in it, and the MFU a reply quotes, said back, gives the same time.

``P`` is the active parameter count (routed-active for MoE). The napkin GPU-hours
are carried beside the detailed ones so replies can show both.
"""

from __future__ import annotations

from dataclasses import field

from engine.architecture import Architecture
from engine.choices import Mode, Sharding
from engine.constants import (
    DEFAULT_MFU,
    FLOPS_PER_PARAM_TOKEN,
    RUN_STARTUP_S,
)
from engine.records import record
from engine.request import Request
from engine.specs import GpuSpec
from engine.throughput import step_time
from engine.workload import Workload, workload


@record
class Compute:
    """The compute side of an estimate (independent of the card)."""

    flops: float | None
    """Total training FLOPs (6·P·T), or None without a dataset size."""
    trained_tokens: float | None
    """Dataset tokens x epochs."""
    mfu_effective: float
    """The flat rule's MFU (a fraction, 0-1): napkin's 35% or the one stated; it times
    only napkin and stated-MFU requests (:func:`uses_flat_rule`)."""
    workload: Workload | None = None
    """The physical model's micro-batch (None: the flat rule applies)."""
    rates: dict[tuple[str, int, Sharding, bool, int | None], tuple[float, float]] = field(
        default_factory=dict, compare=False, repr=False
    )
    """Tokens/s and communication share already worked out per (card, count, sharding,
    offload, nodes): ranking and the options shown ask for the same ones."""


@record
class Timing:
    """Time and money for one card choice (None without a dataset size)."""

    gpu_hours: float | None
    wall_hours: float | None
    cost_usd: float | None
    comm_overhead: float
    """Share of each step spent waiting on communication (0-1)."""
    tokens_per_second: float | None = None
    """Tokens per second per GPU."""
    mfu: float | None = None
    """Achieved 6·P_active·tokens/s over the card's rated dense figure."""
    napkin_gpu_hours: float | None = None
    """The napkin rule's GPU-hours for the same run, for comparison."""
    billed_cards: int | None = None
    """Cards the cost pays for where clouds bill more than the run uses (whole nodes, the
    next machine size: ``engine.fit.rented_cards``); None: the count itself."""


def training_flops(active_params: float, trained_tokens: float) -> float:
    """FLOPs = 6 · active parameters · trained tokens (Kaplan et al. 2020)."""
    return FLOPS_PER_PARAM_TOKEN * active_params * trained_tokens


def uses_flat_rule(request: Request) -> bool:
    """Napkin mode, or a detailed request that states its own MFU."""
    return request.mode is Mode.NAPKIN or "mfu" in request.model_fields_set


def compute(
    active_params: float, request: Request, arch: Architecture | None = None
) -> Compute:
    """FLOPs and, with ``arch`` in detailed mode, the physical model's workload."""
    tokens = request.trained_tokens
    flops = None if tokens is None else training_flops(active_params, tokens)
    work = None if arch is None or uses_flat_rule(request) else workload(arch, request)
    return Compute(flops, tokens, request.mfu, work)


def napkin_gpu_hours(flops: float, gpu: GpuSpec) -> float:
    """The napkin rule: FLOPs / (dense TFLOPs · 10^12 · 35%) / 3600."""
    return flops / (gpu.train_tflops * 1e12 * DEFAULT_MFU) / 3600


def flat_gpu_seconds(work: Compute, gpu: GpuSpec, count: int, mode: Mode) -> float:
    """The flat rule: FLOPs / (TFLOPs · 10^12 · MFU), plus ``RUN_STARTUP_S`` per card in
    detailed mode (napkin mode keeps the specification's rule exactly)."""
    if work.flops is None:
        return 0.0
    startup = count * RUN_STARTUP_S if mode is Mode.DETAILED else 0.0
    return work.flops / (gpu.train_tflops * 1e12 * work.mfu_effective) + startup


def gpu_hours(work: Compute, gpu: GpuSpec, count: int, mode: Mode) -> float:
    """The flat rule's GPU-hours (:func:`flat_gpu_seconds` / 3600)."""
    return flat_gpu_seconds(work, gpu, count, mode) / 3600


def tokens_per_second(
    work: Compute,
    gpu: GpuSpec,
    count: int,
    stage: Sharding = Sharding.NONE,
    offload: bool = False,
    nodes: int | None = None,
) -> tuple[float, float]:
    """Tokens/s per GPU and the share of time lost to communication, by the rule
    that applies (the physical model when ``work.workload`` is set)."""
    if work.workload is None:
        rate = gpu.train_tflops * 1e12 * work.mfu_effective / FLOPS_PER_PARAM_TOKEN
        # 6·P per token: recover P from FLOPs/tokens when both are known.
        per_token = (
            work.flops / work.trained_tokens
            if work.flops is not None and work.trained_tokens
            else FLOPS_PER_PARAM_TOKEN
        )
        return rate * FLOPS_PER_PARAM_TOKEN / per_token, 0.0  # waiting is in the MFU
    key = (gpu.id, count, stage, offload, nodes)
    hit = work.rates.get(key)
    if hit is None:
        step = step_time(work.workload, gpu, count, stage, offload, nodes)
        # Waiting is what the step spends beyond its own work: the GPU's kernels or, where
        # the host cannot launch them fast enough, the launch floor (not the link's doing).
        busy = max(step.compute_s, step.launch_floor_s)
        waited = max(0.0, step.step_s - busy - step.optimizer_s - step.offload_s)
        hit = work.rates[key] = (step.tokens_per_second, min(1.0, waited / step.step_s))
    return hit


def timing(
    work: Compute,
    gpu: GpuSpec,
    count: int,
    price: float | None,
    mode: Mode,
    stage: Sharding = Sharding.NONE,
    offload: bool = False,
    nodes: int | None = None,
    billed_cards: int | None = None,
) -> Timing:
    """GPU-hours, wall-clock hours and cost of ``work`` on ``count`` cards of ``gpu``.

    Napkin and stated-MFU requests: the flat rule (module docstring). Otherwise
    GPU-hours = trained tokens / (tokens/s per GPU · 3600) + count · ``RUN_STARTUP_S``;
    wall-clock = GPU-hours / count; cost = GPU-hours · $/GPU-hour, or with
    ``billed_cards`` (more than ``count``: the machines clouds rent) wall-clock ·
    ``billed_cards`` · $/GPU-hour, the idle cards' hours included.
    """
    if work.flops is None or work.trained_tokens is None:
        # No dataset, so no hours; the share of a step spent waiting still holds.
        if work.workload is None:
            return Timing(None, None, None, 0.0)
        _, share = tokens_per_second(work, gpu, count, stage, offload, nodes)
        return Timing(None, None, None, share)
    napkin = napkin_gpu_hours(work.flops, gpu)
    if work.workload is None:
        overhead = 0.0  # a stated MFU has the waiting in it; napkin leaves it out
        hours = gpu_hours(work, gpu, count, mode)
        rate, _ = tokens_per_second(work, gpu, count)
    else:
        rate, overhead = tokens_per_second(work, gpu, count, stage, offload, nodes)
        hours = work.trained_tokens / (rate * 3600) + count * RUN_STARTUP_S / 3600
    billed = billed_cards if billed_cards is not None and billed_cards > count else None
    cost = None if price is None else hours * price * (billed or count) / count
    mfu = rate * work.flops / work.trained_tokens / (gpu.train_tflops * 1e12)
    return Timing(hours, hours / count, cost, overhead, rate, mfu, napkin, billed)
