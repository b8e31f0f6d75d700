"""The work one micro-batch does on one card, counted apart from any card's speed.

:func:`workload` counts what :mod:`engine.throughput` then times on a card:

* **matmul FLOPs** by method: ``2`` per weight per token forward; backward ``4`` for
  trained weights (input and weight gradients) but ``2`` for frozen ones (a frozen
  linear's backward is one matmul); the LM head's; the adapters' own
  ``6·r·(d_in + d_out)``; a recomputed forward of the decoder layers under
  checkpointing (frameworks checkpoint the layers, not the LM head);
* **attention FLOPs**, which grow with the sequence: ``2·s·q_width`` per token per layer
  forward with causal masking skipped (FlashAttention), ``4·s·q_width`` eager, times
  ``FA_BACKWARD_FLOPS`` / ``EAGER_BACKWARD_FLOPS`` for backward;
* **memory-bound bytes**: each pass's 16-bit weight reads (the GEMMs' floor), NF4
  dequantization (QLoRA; torchao's eager chain where the profile runs it), DoRA's norms
  and PEFT's FP32 adapter casts, and the activation bytes the forward stores (the
  elementwise kernels' traffic is a fitted multiple of them);
* **kernel launches** per layer and per adapter, forward, backward and recompute, after
  the framework's fusion and ``torch.compile``; DeepSpeed ZeRO-3's hook calls;
* **the optimizer step's bytes** (unfused AdamW where the profile runs it:
  ``FOREACH_ADAMW_STEP_BYTES``), and the weights and gradients that sharding moves.

Under tensor and context parallelism each count is one card's share. Units: FLOPs,
bytes, kernels, tokens.
"""

from __future__ import annotations

from engine import selective
from engine.activations import layer_activation_bytes, logits_bytes_per_token
from engine.architecture import Architecture
from engine.choices import Method, Optimizer, Sharding, StatePrecision
from engine.collectives import (
    cp_comm_bytes,
    tp_comm_bytes,
)
from engine.constants import (
    BACKWARD_KERNELS,
    BNB_DEQUANT_KERNELS,
    BNB_DOUBLE_QUANT_KERNELS,
    COMPILE_FUSION,
    EAGER_BACKWARD_FLOPS,
    FA_BACKWARD_FLOPS,
    FOREACH_ADAMW_STEP_BYTES,
    FORWARD_SHARE,
    GRADIENT_READ_BYTES,
    KERNELS_PER_ADAPTER,
    KERNELS_PER_LAYER,
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
from engine.records import record
from engine.request import Request
from engine.variant_work import (
    dora_work,
    expert_loop_kernels,
    float8_work,
    fp32_adapter_work,
    launched,
)
from engine.weight_bytes import base_weight_bytes, full_gradient_bytes


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


