"""Training time from the work a run does: the physical time model.

The napkin rule (``6·P·T`` at 35% of the dense figure) predicts the same tokens/s for
every run on a card. Real runs on one card span 10x with micro-batch x sequence, so
the detailed mode times one micro-batch on one GPU from what it actually executes
(:func:`engine.workload.workload` counts its FLOPs, bytes and kernels by method):

* **matmuls** at ``GEMM_EFFICIENCY`` of the card's **achievable** matmul rate
  (``GpuSpec.matmul_tflops``, the best shape in published matmul benchmarks; a step's
  own shapes reach less), with each pass's weight reads as a memory-bound floor
  (a roofline: small micro-batches are bound by bandwidth, not FLOPs);
* **attention** at ``FA_EFFICIENCY`` of the matmul rate (FlashAttention runs below
  cuBLAS), or at the card's own FlashAttention-2 rate where the catalog has one (Hopper
  and sm_100 Blackwell, whose new tensor-core instructions FlashAttention-2 does not
  use), unless the run uses the card's native kernels (``fa3``; cuDNN where the
  framework picks it): ``engine.rates.attention_rate``;
* **memory-bound work** at the card's HBM bandwidth: NF4 dequantization, the elementwise
  kernels (``ELEMENTWISE_PASSES`` bytes per stored activation byte, scaled by the
  framework's fusion) and the optimizer step once per accumulation window;
* a **launch floor**: ``LAUNCH_S_PER_KERNEL`` per kernel; the GPU cannot run faster than
  the host issues kernels (DeepSpeed ZeRO-3's hook calls count too, and dominate small
  models at short sequences);
* **communication** over the actual link (:mod:`engine.collectives`: NVLink, Infinity
  Fabric or PCIe inside a node, halved without peer-to-peer, the node's NICs between
  nodes; which collectives each sharding runs per micro-batch and per step).
  Frameworks overlap it with compute (FSDP prefetch, DeepSpeed ``overlap_comm``), so a
  micro-batch takes the longer of the two; a step-end reduction hides under the last
  micro-batch's backward;
* **CPU offload**: gradients down and weights up over PCIe (``HOST_LINK_GBPS``) and
  the host's CPU-Adam, bound by host memory bandwidth (``HOST_MEMORY_GBPS``), once
  per step;
* **float8 training** (``float8``): the decoder's linear matmuls at the card's FP8 rate
  (its rated FP8/BF16 ratio times the achievable BF16 rate); cards without FP8 tensor
  cores run it at BF16;
* **tensor and context parallelism** (``tp``, ``cp``): each card computes its share, and
  waits on its group's activation collectives and its ring's keys and values, not
  overlapped; data-parallel traffic then runs between the groups.

Three free parameters (``GEMM_EFFICIENCY``, ``LAUNCH_S_PER_KERNEL``,
``ELEMENTWISE_PASSES``) are fitted on published runs by ``benchmarks/accuracy.py``;
everything else is a sourced constant or a catalog figure. Units: seconds, bytes,
FLOPs; bandwidths in the catalog are GB/s (10^9 bytes/s), matmul rates TFLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine.choices import Sharding
from engine.collectives import data_parallel_seconds, group_nodes, link_bytes_per_s
from engine.constants import (
    ELEMENTWISE_PASSES,
    GB,
    GEMM_EFFICIENCY,
    HBM_FALLBACK_GBPS,
    HOST_LINK_GBPS,
    HOST_MEMORY_GBPS,
    LAUNCH_S_PER_KERNEL,
)
from engine.rates import attention_rate, framework_picks_native_attention, matmul_rate
from engine.records import record
from engine.specs import GpuSpec
from engine.variant_work import float8_speedup
from engine.workload import Workload


@dataclass(frozen=True, slots=True)
class Tuning:
    """The time model's three fitted parameters (see the module docstring)."""

    launch_s_per_kernel: float = LAUNCH_S_PER_KERNEL
    elementwise_passes: float = ELEMENTWISE_PASSES
    gemm_efficiency: float = GEMM_EFFICIENCY


DEFAULT_TUNING = Tuning()


@record
class StepTime:
    """Seconds of one optimizer step on one GPU, by part, and the rate it gives."""

    compute_s: float
    """Micro-batches' GPU time: matmuls, attention, memory-bound kernels."""
    launch_floor_s: float
    comm_s: float
    """Collective time per step before overlap."""
    optimizer_s: float
    offload_s: float
    step_s: float
    tokens_per_step: float
    """Tokens each GPU trains per step: its data-parallel rank's, over the
    tensor-parallel degree."""

    @property
    def tokens_per_second(self) -> float:
        """Tokens per second per GPU."""
        return self.tokens_per_step / self.step_s


def step_time(
    work: Workload,
    gpu: GpuSpec,
    count: int,
    stage: Sharding,
    offload: bool,
    nodes: int | None = None,
    tuning: Tuning = DEFAULT_TUNING,
) -> StepTime:
    """Seconds of one optimizer step (``grad_accum`` micro-batches) on each GPU.

    ``count`` is every card of the run; data-parallel traffic runs over ``count /
    tensor_parallel`` ranks, the tensor-parallel collectives inside each group. A
    micro-batch lasts as long as its kernels or their launches (:func:`_kernel_seconds`),
    plus the tensor- and context-parallel waits (:func:`_model_parallel_seconds`), and
    never less than its data-parallel traffic; the step adds the last reduction's exposed
    part, the optimizer and the offload traffic (:func:`_optimizer_seconds`)."""
    tp = work.tensor_parallel
    dp_ranks = max(1, count // tp if tp > 1 else count)
    hbm = (gpu.hbm_gbps or HBM_FALLBACK_GBPS) * GB
    gpu_s, attention_s, launch = _kernel_seconds(work, gpu, stage, tuning, hbm)
    micro = max(gpu_s, launch)
    if tp > 1 or work.cp_comm_bytes:
        micro += _model_parallel_seconds(work, gpu, attention_s, count)
    dp = data_parallel_seconds(
        gpu, count, stage, tp=tp, weight_bytes=work.stored_weight_bytes,
        grad_bytes=work.grad_bytes,
        accumulates=work.grad_accum > 1 and (work.fsdp_no_sync or not stage.is_fsdp),
        nodes=nodes,
    )
    micro = max(micro, dp.per_micro_s)
    optimizer_s, offload_s = _optimizer_seconds(work, gpu, stage, offload, dp_ranks, dp.shards,
                                                hbm)
    accum = work.grad_accum
    # DDP reduces during the last micro-batch's backward (about 2/3 of its time), which
    # lasts as long as the micro-batch's kernels or, host-bound, their launches, less the
    # time the link already spends on that micro-batch's own traffic (FSDP's gathers).
    idle_link = max(0.0, max(gpu_s, launch) - dp.link_busy_s)
    exposed = max(0.0, dp.per_step_s - idle_link * 2 / 3)
    return StepTime(
        compute_s=accum * gpu_s,
        launch_floor_s=accum * launch,
        comm_s=accum * dp.per_micro_s + dp.per_step_s,
        optimizer_s=optimizer_s,
        offload_s=offload_s,
        step_s=accum * micro + exposed + optimizer_s + offload_s,
        tokens_per_step=accum * work.tokens / (tp * work.context_parallel),
    )


def _kernel_seconds(
    work: Workload, gpu: GpuSpec, stage: Sharding, tuning: Tuning, hbm: float
) -> tuple[float, float, float]:
    """``(gpu_s, attention_s, launch_s)`` of one micro-batch: its kernels' time on the GPU
    (matmuls at the achievable rate or their weight reads, attention, memory-bound work at
    HBM bandwidth ``hbm`` bytes/s), attention's share of it, and the host's time to
    launch them (``launch_s_per_kernel`` each, DeepSpeed ZeRO-3's hooks included)."""
    achievable = matmul_rate(gpu)
    gemm = max(_matmul_seconds(work, gpu, achievable * tuning.gemm_efficiency),
               work.weight_bytes / hbm)
    elementwise = work.elementwise_bytes
    if stage.shards_weights and work.sharded_elementwise_bytes is not None:
        elementwise = work.sharded_elementwise_bytes
    memory_bound = (
        work.dequant_bytes
        + tuning.elementwise_passes * work.elementwise_scale * elementwise
        + work.elementwise_scale * work.float8_cast_bytes
    ) / hbm
    native = work.native_attention or (
        work.cudnn_attention_from is not None
        and framework_picks_native_attention(gpu, work.cudnn_attention_from)
    )
    attention_s = work.attention_flops / (
        attention_rate(gpu, work.flash_attention, native, achievable) * tuning.gemm_efficiency
    )
    return gemm + attention_s + memory_bound, attention_s, _launch_seconds(work, stage, tuning)


def _matmul_seconds(work: Workload, gpu: GpuSpec, rate: float) -> float:
    """Seconds of one micro-batch's linear-layer matmuls at ``rate`` FLOP/s, the FP8
    share at that rate times the card's FP8 speed-up."""
    seconds = work.matmul_flops / rate
    if work.float8_flops:
        fp8 = work.float8_flops
        seconds += fp8 / (rate * float8_speedup(gpu)) - fp8 / rate
    return seconds


def _launch_seconds(work: Workload, stage: Sharding, tuning: Tuning) -> float:
    """The host's seconds to launch one micro-batch's kernels (``launch_s_per_kernel``
    each, DeepSpeed ZeRO-3's hooks included)."""
    host_ops = work.kernels + (work.zero3_host_ops if stage is Sharding.ZERO3 else 0.0)
    return host_ops * tuning.launch_s_per_kernel


def seconds_per_token_floor(work: Workload, gpu: GpuSpec, stage: Sharding) -> float:
    """A lower bound of ``1 / step_time(work, gpu, ...).tokens_per_second`` (seconds per
    token per GPU, default tuning) that costs two divisions: every micro-batch lasts at
    least its matmuls at the achievable rate, and at least its kernels' launches
    (:func:`step_time`'s ``max(gpu_s, launch)``; communication, attention, memory-bound
    work and the optimizer only add). Ranking uses it to skip timing a card that cannot
    be among the best."""
    rate = matmul_rate(gpu) * DEFAULT_TUNING.gemm_efficiency
    micro = max(_matmul_seconds(work, gpu, rate), _launch_seconds(work, stage, DEFAULT_TUNING))
    return micro * work.tensor_parallel * work.context_parallel / work.tokens


def _model_parallel_seconds(
    work: Workload, gpu: GpuSpec, attention_s: float, count: int
) -> float:
    """What one micro-batch waits on its tensor-parallel collectives and, beyond
    attention's own ``attention_s`` (which the ring's passes overlap), its
    context-parallel ring; 0 without either. Every group waits for the slowest: one that
    crosses a node boundary of the ``count`` cards (:func:`group_nodes`) sets the pace."""
    tp, per_node = work.tensor_parallel, gpu.gpus_per_node
    waited = 0.0
    if tp > 1:
        spans = group_nodes(tp, count, per_node)
        waited += work.tp_comm_bytes / link_bytes_per_s(gpu, tp, spans)
    if work.cp_comm_bytes:
        ring = tp * work.context_parallel
        ring_link = link_bytes_per_s(gpu, ring, group_nodes(ring, count, per_node))
        waited += max(0.0, work.cp_comm_bytes / ring_link - attention_s)
    return waited


def _optimizer_seconds(
    work: Workload, gpu: GpuSpec, stage: Sharding, offload: bool, dp_ranks: int,
    shards: int, hbm: float,
) -> tuple[float, float]:
    """``(optimizer_s, offload_s)`` of one step: the optimizer's pass over its state at HBM
    bandwidth ``hbm`` (its shard of it under ZeRO/FSDP over ``shards`` ranks), or under
    ``offload`` the host link's traffic (gradients down, weights up, and per micro-batch
    the weight shards where they live on the host) and the node's CPUs stepping every
    local shard."""
    sharded = stage is not Sharding.NONE and shards > 1
    share = shards if sharded else 1
    if not offload:
        # DeepSpeed steps its partition with FusedAdam whatever the framework's own optimizer.
        step_bytes = work.fused_optimizer_bytes if stage.is_zero else work.optimizer_bytes
        return step_bytes / share / hbm, 0.0
    shard = work.trainable_params / share
    host = HOST_LINK_GBPS * GB
    # Gradients down and weights up (2 + 2 B); a host's CPUs step its cards' shards.
    per_param = work.fused_optimizer_bytes / max(work.trainable_params, 1.0)
    cpu_bytes = per_param * shard * min(dp_ranks, gpu.host_cards)
    offload_s = 4.0 * shard / host + cpu_bytes / (HOST_MEMORY_GBPS * GB)
    if stage.shards_weights and work.offload_weights:
        offload_s += work.grad_accum * 2 * work.stored_weight_bytes / shards / host
    return 0.0, offload_s


def zero3_hook_share(
    work: Workload, gpu: GpuSpec, count: int, offload: bool, nodes: int | None = None
) -> float:
    """Share of a ZeRO-3 step (0-1) that DeepSpeed's per-parameter hooks add: the step
    with their host calls against the same step without them."""
    if work.zero3_host_ops <= 0:
        return 0.0
    stage = Sharding.ZERO3
    hooked = step_time(work, gpu, count, stage, offload, nodes).step_s
    bare = step_time(replace(work, zero3_host_ops=0.0), gpu, count, stage, offload, nodes).step_s
    return max(0.0, 1.0 - bare / hooked)
