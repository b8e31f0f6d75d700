"""Training time from the work a run does: the physical time model.

The napkin rule (``6·P·T`` at 35% of the dense figure) predicts the same tokens/s for
every run on a card. Real runs on one card span 10x with micro-batch x sequence, so
the detailed mode times one micro-batch on one GPU from what it actually executes:

* **matmuls**, by method: a forward of ``2`` FLOPs per weight per token; a backward of
  ``4`` for trained weights (input and weight gradients) but ``2`` for frozen ones
  (LoRA/QLoRA: a frozen linear's backward is one matmul, not two); the LM head's;
  the adapters' own ``6·r·(d_in + d_out)``; a second forward of the decoder layers
  under checkpointing (frameworks checkpoint the layers, not the LM head);
* **attention**: ``2·s·q_width`` FLOPs per token per layer forward with causal
  masking skipped (FlashAttention), ``4·s·q_width`` eager, and ``FA_BACKWARD_FLOPS``
  (2.5x) / ``EAGER_BACKWARD_FLOPS`` (2x) for backward, so time grows with sequence;
* attention at ``FA_EFFICIENCY`` of the matmul rate (FlashAttention runs below cuBLAS),
  or at the card's own FlashAttention-2 rate where the catalog has one (Hopper and sm_100
  Blackwell, whose new tensor-core instructions FlashAttention-2 does not use), unless
  the run uses the card's native kernels (``fa3``; torchtitan's cuDNN on Blackwell):
  ``attention_rate``;
* both at ``GEMM_EFFICIENCY`` of the card's **achievable** matmul rate
  (``GpuSpec.matmul_tflops``, the best shape in published matmul benchmarks; a step's
  own shapes reach less), with each pass's weight reads as a memory-bound floor
  (a roofline: small micro-batches are bound by bandwidth, not FLOPs);
* **memory-bound work** at the card's HBM bandwidth: NF4 dequantization of every
  quantized weight per pass (QLoRA), the elementwise kernels
  (``ELEMENTWISE_PASSES`` bytes per stored activation byte, scaled by the framework's
  fusion) and the optimizer step once per accumulation window (unfused AdamW moves
  about three times the bytes of a fused one: ``FOREACH_ADAMW_STEP_BYTES``);
* a **launch floor**: ``LAUNCH_S_PER_KERNEL`` per kernel, counted per layer
  (``KERNELS_PER_LAYER``, plus ``KERNELS_PER_ADAPTER`` per LoRA adapter) for forward,
  backward and recompute; the GPU cannot run faster than the host issues kernels;
  ``torch.compile`` and fused kernels (Unsloth) halve the count and the traffic;
  DeepSpeed ZeRO-3 adds its per-parameter hooks' host calls
  (``zero3_host_ops``), which dominate small models at short sequences;
* **communication** over the actual link (:mod:`engine.collectives`: NVLink, Infinity
  Fabric or PCIe inside a node, halved without peer-to-peer, the node's NICs between
  nodes; which collectives each sharding runs per micro-batch and per step).
  Frameworks overlap it with compute (FSDP prefetch, DeepSpeed ``overlap_comm``), so a
  micro-batch takes the longer of the two; a step-end reduction hides under the last
  micro-batch's backward;
* **CPU offload**: gradients down and weights up over PCIe (``HOST_LINK_GBPS``) and
  the host's CPU-Adam, bound by host memory bandwidth (``HOST_MEMORY_GBPS``), once
  per step;
* **float8 training** (``float8``): the decoder's linear matmuls run at the card's FP8
  rate (its rated FP8/BF16 ratio times the achievable BF16 rate), plus each operand's
  dynamic cast (``FLOAT8_CAST_BYTES``, ``FLOAT8_KERNELS_PER_LINEAR``); the LM head,
  adapters and attention stay 16-bit. Cards without FP8 tensor cores run it at BF16;
* **tensor parallelism** (``tp``): each card of a group computes and moves 1/tp of the
  micro-batch's work (of 1/cp of its tokens under context parallelism), and every layer
  adds ``TP_COLLECTIVES_PER_LAYER`` all-gathers and reduce-scatters of its activations
  per pass over the node's link, not overlapped;
  data-parallel traffic then runs between the groups.

Three free parameters (``GEMM_EFFICIENCY``, ``LAUNCH_S_PER_KERNEL``,
``ELEMENTWISE_PASSES``) are fitted on published runs by ``benchmarks/accuracy.py``;
everything else is a sourced constant or a catalog figure. Units: seconds, bytes,
FLOPs; bandwidths in the catalog are GB/s (10^9 bytes/s), matmul rates TFLOPs.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from engine import selective
from engine.activations import layer_activation_bytes, logits_bytes_per_token
from engine.architecture import Architecture
from engine.choices import Method, Optimizer, Sharding, StatePrecision
from engine.collectives import (
    cp_comm_bytes,
    data_parallel_seconds,
    group_nodes,
    link_bytes_per_s,
    tp_comm_bytes,
)
from engine.constants import (
    BACKWARD_KERNELS,
    BNB_DEQUANT_KERNELS,
    BNB_DOUBLE_QUANT_KERNELS,
    COMPILE_FUSION,
    EAGER_BACKWARD_FLOPS,
    ELEMENTWISE_PASSES,
    FA_BACKWARD_FLOPS,
    FOREACH_ADAMW_STEP_BYTES,
    FORWARD_SHARE,
    GB,
    GEMM_EFFICIENCY,
    GRADIENT_READ_BYTES,
    HBM_FALLBACK_GBPS,
    HOST_LINK_GBPS,
    HOST_MEMORY_GBPS,
    KERNELS_PER_ADAPTER,
    KERNELS_PER_LAYER,
    LAUNCH_S_PER_KERNEL,
    MASTER_WEIGHT_BYTES,
    NF4_DEQUANT_BYTES,
    OPTIMIZER_BYTES,
    OPTIMIZER_BYTES_PURE_BF16,
    PRECISION_BYTES,
    TORCHAO_NF4_EAGER_KERNELS,
    TORCHAO_NF4_EAGER_TRAFFIC_BYTES,
    WEIGHT_READ_BYTES,
    ZERO3_HOST_OPS_GATHER,
    ZERO3_HOST_OPS_GRADIENT,
    ZERO3_PERSISTENCE_HIDDEN_MULTIPLE,
)
from engine.profiles import (
    cudnn_attention_from,
    eager_nf4_dequant,
    fp32_residual_stream,
    profile,
    trained_architecture,
)
from engine.rates import attention_rate, framework_picks_native_attention, matmul_rate
from engine.records import record
from engine.request import Request
from engine.specs import GpuSpec
from engine.variant_work import (
    dora_work,
    expert_loop_kernels,
    float8_speedup,
    float8_work,
    fp32_adapter_work,
    launched,
)
from engine.weight_bytes import base_weight_bytes, full_gradient_bytes


@dataclass(frozen=True, slots=True)
class Tuning:
    """The time model's three fitted parameters (see the module docstring)."""

    launch_s_per_kernel: float = LAUNCH_S_PER_KERNEL
    elementwise_passes: float = ELEMENTWISE_PASSES
    gemm_efficiency: float = GEMM_EFFICIENCY


DEFAULT_TUNING = Tuning()


@record
class Workload:
    """The card-independent work of one micro-batch on one GPU, and of one step."""

    tokens: int
    """Tokens in one micro-batch (batch x the sequence it runs at, ``timed_seq_len``)."""
    matmul_flops: float
    """Linear-layer FLOPs of one micro-batch: forward, backward, recompute, adapters."""
    attention_flops: float
    """Score and value matmuls of one micro-batch, forward, backward and recompute."""
    flash_attention: bool
    """Attention runs as FlashAttention (``attention_rate``), not eager batched GEMMs."""
    native_attention: bool
    """FlashAttention on the card's own newest kernels (FlashAttention-3, cuDNN), not
    FlashAttention-2 (``Request.native_attention``)."""
    cudnn_attention_from: float | None
    """The compute capability from which the framework runs cuDNN's attention anyway
    (``Profile.cudnn_attention_from``)."""
    weight_bytes: float
    """16-bit weight reads of one micro-batch (the GEMMs' memory floor)."""
    dequant_bytes: float
    """Memory-bound traffic counted apart from the elementwise passes: NF4
    dequantization (QLoRA), DoRA's weight norms, PEFT's FP32 adapter casts."""
    elementwise_bytes: float
    """Activation bytes the forward stores (x passes is the elementwise traffic)."""
    elementwise_scale: float
    kernels: float
    """Kernel launches of one micro-batch (forward, backward, recompute), after fusion."""
    zero3_host_ops: float
    """Host calls DeepSpeed ZeRO-3's hooks add to one micro-batch (0 for other stacks)."""
    grad_accum: int
    trainable_params: float
    optimizer_bytes: float
    """HBM traffic of one optimizer step, whole model, bytes, as the framework runs it
    (unfused ``torch.optim.AdamW`` where its profile says so)."""
    fused_optimizer_bytes: float
    """The same step fused into one kernel (DeepSpeed's FusedAdam under ZeRO)."""
    stored_weight_bytes: float
    """Bytes of all weights as stored (what ZeRO-3 gathers per pass)."""
    grad_bytes: float
    """Bytes of the gradients reduced per step (trainable, plus frozen under FSDP1)."""
    useful_flops_per_token: float
    """``6·P_active``: the work MFU is quoted against."""
    sharded_elementwise_bytes: float | None = None
    """``elementwise_bytes`` on cards that shard the weights, where it differs: ``auto``
    sharding of ``hf`` QLoRA, whose FP32 residual stream only an unsharded run has
    (``engine.memory`` counts its activations the same way)."""
    tensor_parallel: int = 1
    """Cards each micro-batch's layers are split over. The FLOPs, bytes, states and
    collectives above are then one card's share; ``tokens`` stays the group's."""
    tp_comm_bytes: float = 0.0
    """Bytes each card of a tensor-parallel group sends per micro-batch (0 without)."""
    offload_weights: bool = True
    """Under offload with ZeRO-3/FSDP, the weight shards cross PCIe every micro-batch
    (``Request.offload_weights``); False: only the optimizer step's traffic."""
    float8_flops: float = 0.0
    """The part of ``matmul_flops`` that multiplies in FP8 (``float8``; 0 without)."""
    float8_cast_bytes: float = 0.0
    """HBM traffic of float8's dynamic casts in one micro-batch (0 without)."""
    context_parallel: int = 1
    """Cards each micro-batch's sequence is split over (ring attention). The token-wise
    work above is then one card's share; ``tokens`` stays the ring's."""
    cp_comm_bytes: float = 0.0
    """Bytes of keys, values and their gradients each card of a ring sends per
    micro-batch (0 without context parallelism)."""
    adapter_casts: tuple[float, float] = (0.0, 0.0)
    """``(bytes, kernels)`` of PEFT's FP32 adapter casts, already in ``dequant_bytes`` and
    ``kernels`` (what ``bf16 adapters`` would take off)."""
    fsdp_no_sync: bool = True
    """Its FSDP defers the gradient reduction of an accumulation window to its last
    micro-batch (``Profile.fsdp_accumulates_unsharded``); else every micro-batch's."""


def timed_seq_len(request: Request) -> int:
    """Tokens per sequence one micro-batch runs at, for time.

    ``seq_len`` when samples are packed or no average sample length was given. Without
    packing, a dataset given as samples of an average length runs each sample at about
    its own length, cut at the limit: the time follows the average while the memory
    peak follows the longest batch (``seq_len``). Padding to the longest sample of a
    micro-batch adds compute on top (``engine.datasets`` says how much it can)."""
    length = request.sample_tokens
    if request.packing or length is None:
        return request.seq_len
    return max(1, min(length, request.sample_limit))


def fused_step_bytes(request: Request) -> float:
    """HBM bytes one fused optimizer step moves per trainable parameter: the weight (the
    FP32 master, or the BF16 weight in pure BF16) and every optimizer state read and
    written once (``OPTIMIZER_BYTES``), the 16-bit gradient read, and with a master copy
    the 16-bit weight written. AdamW: 28 B with FP32 states, 14 B pure BF16; 8-bit Adam
    16 / 10; SGD without momentum 12 / 6."""
    optimizer = request.optimizer.value
    if request.state_precision is StatePrecision.PURE_BF16:
        weight = 2 * PRECISION_BYTES["bf16"]
        return weight + 2 * OPTIMIZER_BYTES_PURE_BF16[optimizer] + GRADIENT_READ_BYTES
    master = 2 * MASTER_WEIGHT_BYTES + PRECISION_BYTES["bf16"]  # read, write, 16-bit copy
    return master + 2 * OPTIMIZER_BYTES[optimizer] + GRADIENT_READ_BYTES


def zero3_host_ops(arch: Architecture, request: Request) -> float:
    """Host calls DeepSpeed ZeRO-3's hooks make in one micro-batch (see the constants).

    Every weight matrix is gathered and released; trained tensors also run the gradient
    hook. Norms and biases (and LoRA factors of at most
    ``ZERO3_PERSISTENCE_HIDDEN_MULTIPLE`` x hidden elements) stay whole, so only their
    gradient hook runs, and frozen ones cost nothing."""
    persistent = ZERO3_PERSISTENCE_HIDDEN_MULTIPLE * arch.hidden_size
    ops = ZERO3_HOST_OPS_GATHER * arch.weight_matrices
    if request.effective_method is Method.FULL:
        return ops + ZERO3_HOST_OPS_GRADIENT * (arch.weight_matrices + arch.small_tensors)
    for elements, copies in arch.lora_factors(request.lora_rank, request.lora_targets.value):
        gather = 0 if elements <= persistent else ZERO3_HOST_OPS_GATHER
        ops += copies * (gather + ZERO3_HOST_OPS_GRADIENT)
    return ops


def _flops(arch: Architecture, request: Request) -> tuple[float, float]:
    """``(matmul, attention)`` FLOPs of one micro-batch (see the module docstring)."""
    s, tokens = request.seq_len, request.seq_len * request.micro_batch
    linear = arch.active_linear_params + arch.hidden_size * arch.vocab_size
    trained = request.effective_method is Method.FULL
    ckpt = request.grad_checkpointing
    forward = 2.0 * linear
    backward = (4.0 if trained else 2.0) * linear
    # Checkpointing wraps the decoder layers: the LM head's forward is not rerun.
    recompute = 2.0 * arch.active_linear_params if ckpt else 0.0
    sac = ckpt and request.selective_checkpointing
    if sac:
        # Only the projections whose output was not kept are rerun; attention is kept.
        recompute = 2.0 * selective.recomputed_params(arch, request)
    adapters = 0.0
    if not trained:
        adapters = 6.0 * arch.lora_active_params(request.lora_rank, request.lora_targets.value)
    matmul = tokens * (forward + backward + recompute + adapters)
    if request.flash_attention:
        attn_fwd, attn_bwd = 2.0 * s * arch.q_width, FA_BACKWARD_FLOPS
    else:
        attn_fwd, attn_bwd = 4.0 * s * arch.q_width, EAGER_BACKWARD_FLOPS
    # Selective checkpointing keeps attention's output, so attention is not rerun.
    attn_rerun = ckpt and not (sac and request.flash_attention)
    attn_passes = 1.0 + attn_bwd + (1.0 if attn_rerun else 0.0)
    return matmul, tokens * arch.num_layers * attn_fwd * attn_passes


def _weight_passes(request: Request) -> float:
    """Times each weight is read per micro-batch: forward, backward, a recomputed forward,
    and for a full fine-tune the weight-gradient matmul's read of its gradient buffer."""
    passes = 3.0 if request.grad_checkpointing else 2.0
    return passes + (1.0 if request.effective_method is Method.FULL else 0.0)


def _dequant(arch: Architecture, request: Request) -> tuple[float, float]:
    """``(bytes, kernels)`` of one micro-batch's 4-bit dequantization (0 outside QLoRA)."""
    passes = _weight_passes(request)
    matrices = launched(arch, request, arch.linear_layers())  # each expert reached, if looped
    if eager_nf4_dequant(request):
        # Every quantized matrix is dequantized once per pass by an unfused chain.
        return (
            passes * TORCHAO_NF4_EAGER_TRAFFIC_BYTES * arch.linear_params,
            passes * TORCHAO_NF4_EAGER_KERNELS * matrices,
        )
    if request.effective_method is Method.QLORA:
        kernels = BNB_DEQUANT_KERNELS + BNB_DOUBLE_QUANT_KERNELS * request.double_quant
        return (
            passes * NF4_DEQUANT_BYTES * arch.linear_params,
            passes * kernels * matrices,
        )
    return 0.0, 0.0


def _kernels(arch: Architecture, request: Request, fusion: float) -> float:
    """Kernel launches of one micro-batch's layers (forward, backward, recompute)."""
    adapters_per_layer = 0.0
    if request.effective_method is not Method.FULL:
        targets = arch.targeted_linears(request.lora_targets.value)
        adapters_per_layer = launched(arch, request, targets) / arch.num_layers
    per_pass = KERNELS_PER_LAYER + KERNELS_PER_ADAPTER * adapters_per_layer
    passes = 1.0 + BACKWARD_KERNELS + (1.0 if request.grad_checkpointing else 0.0)
    return (arch.num_layers * per_pass + expert_loop_kernels(arch, request)) * passes * fusion


def _produced_bytes(arch: Architecture, request: Request) -> float:
    """Bytes the forward writes per token, every layer's tensors and the logits, with
    the recomputed forward's share of the layers' under checkpointing (the loss is not
    recomputed)."""
    recompute = FORWARD_SHARE if request.grad_checkpointing else 0.0
    return layer_activation_bytes(arch, request, produced=True) * (
        1.0 + recompute
    ) + logits_bytes_per_token(arch, request)


def workload(arch: Architecture, request: Request) -> Workload:
    """What one micro-batch of ``request`` computes and moves on one card (``request``
    resolved); under tensor parallelism, one card's share of its group's work."""
    arch = trained_architecture(arch, request)
    seq = timed_seq_len(request)
    if seq != request.seq_len:
        request = request.model_copy(update={"seq_len": seq})
    method = request.effective_method
    tokens = request.seq_len * request.micro_batch
    trained = method is Method.FULL
    matmul, attention = _flops(arch, request)
    head = arch.hidden_size * arch.vocab_size
    # The head is read forward and backward (and for its gradient), never recomputed.
    passes = _weight_passes(request)
    head_passes = passes - (1.0 if request.grad_checkpointing else 0.0)
    weight_bytes = WEIGHT_READ_BYTES * (passes * arch.linear_params + head_passes * head)
    dequant, dequant_kernels = _dequant(arch, request)
    elementwise = tokens * _produced_bytes(arch, request)
    sharded_elementwise = None
    if request.sharding is Sharding.AUTO and fp32_residual_stream(request):
        zero3 = request.model_copy(update={"sharding": Sharding.ZERO3})
        sharded_elementwise = tokens * _produced_bytes(arch, zero3)
    prof = profile(request.framework)
    fusion = prof.elementwise_scale * (COMPILE_FUSION if request.compile else 1.0)
    float8_flops, cast_bytes, cast_kernels = float8_work(arch, request, fusion)
    dora_flops, dora_bytes, dora_kernels = dora_work(arch, request)
    peft_bytes, peft_kernels = fp32_adapter_work(arch, request)
    if trained:
        trainable = float(arch.total_params)
    else:
        trainable = float(arch.lora_params(request.lora_rank, request.lora_targets.value))
    regime = "pure-bf16" if request.state_precision is StatePrecision.PURE_BF16 else "fp32"
    fused_optimizer = fused_step_bytes(request) * trainable
    optimizer = fused_optimizer
    if prof.foreach_adamw and request.optimizer is Optimizer.ADAMW:
        optimizer = FOREACH_ADAMW_STEP_BYTES[regime] * trainable
    stored = base_weight_bytes(arch, request)
    # The gradients the memory model holds (engine.memory.footprint); adapters' in FP32.
    adapter_grad = 2.0 if regime == "pure-bf16" else 4.0
    per_grad = full_gradient_bytes(request) if trained else adapter_grad
    grad_bytes = trainable * per_grad
    if request.sharding.is_fsdp and method is Method.LORA and prof.fsdp_frozen_grads:
        grad_bytes += stored
    t = float(request.tensor_parallel)  # each card's share of the group's work
    c = float(request.context_parallel)  # and of the ring's tokens
    return Workload(
        tokens=tokens,
        matmul_flops=(matmul + dora_flops) / t / c,
        attention_flops=attention / t / c,
        flash_attention=request.flash_attention,
        native_attention=request.native_attention,
        cudnn_attention_from=cudnn_attention_from(request),
        weight_bytes=weight_bytes / t,
        dequant_bytes=(dequant + dora_bytes) / t + peft_bytes / t / c,
        elementwise_bytes=elementwise / t / c,
        elementwise_scale=fusion,
        sharded_elementwise_bytes=(
            None if sharded_elementwise is None else sharded_elementwise / t / c
        ),
        kernels=(
            _kernels(arch, request, fusion) + dequant_kernels + cast_kernels + dora_kernels
            + peft_kernels
        ),
        zero3_host_ops=zero3_host_ops(arch, request) if prof.deepspeed_zero else 0.0,
        grad_accum=request.grad_accum,
        trainable_params=trainable / t,
        optimizer_bytes=optimizer / t,
        fused_optimizer_bytes=fused_optimizer / t,
        stored_weight_bytes=stored / t,
        grad_bytes=grad_bytes / t,
        useful_flops_per_token=6.0 * arch.active_params,
        tensor_parallel=request.tensor_parallel,
        tp_comm_bytes=tp_comm_bytes(arch, request, tokens) / c,
        float8_flops=float8_flops / t / c,
        float8_cast_bytes=cast_bytes / t / c,
        context_parallel=request.context_parallel,
        offload_weights=request.offload_weights,
        cp_comm_bytes=cp_comm_bytes(arch, request, tokens) / t,
        adapter_casts=(peft_bytes / t / c, peft_kernels),
        fsdp_no_sync=prof.fsdp_accumulates_unsharded,
    )


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
