"""What float8 training, DoRA, FP32 PEFT adapters and experts run one by one add to one
micro-batch's work.

Each returns the FLOPs, HBM bytes and kernel launches the time model
(:mod:`engine.throughput`) adds to its matmuls, memory-bound traffic and launch floor;
each is zero when the request does not use it. Units: FLOPs, bytes, launches.
"""

from __future__ import annotations

from collections.abc import Iterable

from engine import selective
from engine.activations import adapter_path, uses_dora, uses_fp32_adapters
from engine.architecture import Architecture, Linear
from engine.choices import Method
from engine.constants import (
    DENSE_MLP_KERNELS,
    DORA_KERNELS_PER_ADAPTER,
    DORA_WEIGHT_BYTES,
    FLOAT8_CAST_BYTES,
    FLOAT8_KERNELS_PER_LINEAR,
    KERNELS_PER_ADAPTER,
    KERNELS_PER_EXPERT,
    MOE_ROUTER_KERNELS,
    NF4_DEQUANT_BYTES,
    PEFT_ADAPTER_CAST_BYTES,
    PEFT_ADAPTER_KERNELS,
)
from engine.profiles import profile
from engine.request import Request
from engine.specs import GpuSpec


def uses_float8(request: Request) -> bool:
    """Whether the decoder's linears multiply in FP8: ``float8`` on a 16-bit base (a
    QLoRA base is NF4, which torchao's float8 does not take)."""
    return request.float8 and request.effective_method is not Method.QLORA


def float8_speedup(gpu: GpuSpec) -> float:
    """How much faster ``gpu`` multiplies in FP8 than in BF16: its rated dense FP8 over
    BF16 figure (2 on Ada, Hopper and Blackwell), taken at the same achievable share; 1
    for a card without FP8 tensor cores."""
    if not gpu.fp8_tflops:
        return 1.0
    return max(1.0, gpu.fp8_tflops / gpu.train_tflops)


def float8_work(arch: Architecture, request: Request, fusion: float) -> tuple[float, float, float]:
    """``(FP8 FLOPs, cast bytes, cast kernels)`` of one micro-batch (zeros without float8).

    The FP8 FLOPs are the decoder linears' share of the matmuls: forward, backward (2 or
    4 per weight) and a recomputed forward. Casts: each linear's input in forward (again
    when the forward is fully recomputed), its output gradient in backward, and its
    weight once per pass."""
    if not uses_float8(request):
        return 0.0, 0.0, 0.0
    tokens, dec = request.seq_len * request.micro_batch, float(arch.active_linear_params)
    trained = request.effective_method is Method.FULL
    ckpt, sac = request.grad_checkpointing, request.selective_checkpointing
    recompute = 0.0
    if ckpt:
        recompute = 2.0 * selective.recomputed_params(arch, request) if sac else 2.0 * dec
    flops = tokens * ((2.0 + (4.0 if trained else 2.0)) * dec + recompute)
    again = 1.0 if ckpt and not sac else 0.0
    inputs = sum(lin.active * lin.d_in for lin in arch.linear_layers())
    outputs = sum(lin.active * lin.d_out for lin in arch.linear_layers())
    elements = tokens * (inputs * (1.0 + again) + outputs) + arch.linear_params * (2.0 + again)
    kernels = FLOAT8_KERNELS_PER_LINEAR * launched(arch, request, arch.linear_layers()) * fusion
    return flops, elements * FLOAT8_CAST_BYTES, kernels


def dora_work(arch: Architecture, request: Request) -> tuple[float, float, float]:
    """``(matmul FLOPs, weight-norm bytes, kernels)`` DoRA adds to one micro-batch.

    Every forward of an adapted linear (again when checkpointing recomputes it) builds
    ``lora_weight`` through the adapters from a d_in x d_in identity (``2·d_in·r·(d_in +
    d_out)`` FLOPs) and the column norm of the weight plus it (``DORA_WEIGHT_BYTES`` per
    weight); with LoRA dropout PEFT cannot reuse the base output and runs the base
    matmul again, forward and input-gradient (4 FLOPs per weight per token). A 4-bit
    base is dequantized once more for the norm (``dequantize_module_weight``). Zeros
    without DoRA."""
    if not uses_dora(request):
        return 0.0, 0.0, 0.0
    r, targets = request.lora_rank, request.lora_targets.value
    forwards = 2.0 if request.grad_checkpointing else 1.0
    shapes = arch.adapted_shapes(targets)
    flops = forwards * sum(2.0 * d_in * r * (d_in + d_out) * n for d_in, d_out, n, _ in shapes)
    weights = float(sum(d_in * d_out * n for d_in, d_out, n, _ in shapes))
    if request.lora_dropout > 0:
        tokens = request.seq_len * request.micro_batch
        active = sum(d_in * d_out * k for d_in, d_out, _, k in shapes)
        flops += tokens * (2.0 * forwards + 2.0) * active
    kernels = DORA_KERNELS_PER_ADAPTER * launched(arch, request, arch.targeted_linears(targets))
    per_weight = DORA_WEIGHT_BYTES
    if request.effective_method is Method.QLORA:
        per_weight += NF4_DEQUANT_BYTES
    return flops, forwards * per_weight * weights, kernels


def fp32_adapter_work(arch: Architecture, request: Request) -> tuple[float, float]:
    """``(bytes, kernels)`` PEFT's FP32 adapters add to one micro-batch beyond the
    ``KERNELS_PER_ADAPTER`` the time model counts for any adapter (zeros otherwise).

    Each adapted linear moves ``PEFT_ADAPTER_CAST_BYTES`` per element of its input and
    output per forward, under autocast or plainly in BF16 (:func:`adapter_path`); the
    backward moves about as much again and checkpointing's recomputed forward once more.
    Kernels: ``PEFT_ADAPTER_KERNELS`` (plus dropout's) per forward in place of
    ``KERNELS_PER_ADAPTER``, with the backward's twice as many."""
    if not uses_fp32_adapters(request):
        return 0.0, 0.0
    key = (request.effective_method.value, adapter_path(request))
    targets = request.lora_targets.value
    tokens = request.seq_len * request.micro_batch
    forwards = 2.0 if request.grad_checkpointing else 1.0
    width = sum((d_in + d_out) * k for d_in, d_out, _, k in arch.adapted_shapes(targets))
    moved = tokens * PEFT_ADAPTER_CAST_BYTES[key] * width * (forwards + 1.0)
    extra = PEFT_ADAPTER_KERNELS[key] + (request.lora_dropout > 0) - KERNELS_PER_ADAPTER
    adapters = launched(arch, request, arch.targeted_linears(targets))
    kernels = max(0.0, extra) * adapters * (forwards + 2.0)
    return moved, kernels


def experts_reached(arch: Architecture, request: Request) -> float:
    """Experts of one mixture-of-experts layer that a micro-batch reaches: of ``E`` experts
    each token picking ``k``, ``T`` tokens reach ``E·(1 − (1 − k/E)^T)`` on average (all of
    them at fine-tuning sizes: 128 of 128 at 2,048 tokens for Qwen3-30B-A3B)."""
    moe = arch.moe
    if moe is None:
        return 0.0
    tokens = max(1.0, request.seq_len * request.micro_batch / request.context_parallel)
    e, k = moe.num_experts, moe.experts_per_token
    return e * (1.0 - float((1.0 - k / e) ** tokens))


def launched(arch: Architecture, request: Request, linears: Iterable[Linear]) -> float:
    """Copies of ``linears`` that launch their own kernels in one pass over the layers
    (each adapter, float8 cast or DoRA norm launches per copy): every copy of a dense
    linear; of an expert's, each expert a micro-batch reaches where the framework runs
    the experts one after another (``Profile.expert_loop``), else one grouped launch per
    layer."""
    total = 0.0
    for lin in linears:
        if lin.group != "expert":
            total += lin.count
        elif profile(request.framework).expert_loop:
            total += arch.moe_layers * experts_reached(arch, request)
        else:
            total += arch.moe_layers
    return total


def expert_loop_kernels(arch: Architecture, request: Request) -> float:
    """Kernels one forward adds, over all layers, where a mixture-of-experts layer runs its
    experts one after another (``Profile.expert_loop``): the router, then every expert
    a micro-batch reaches (:func:`experts_reached`) running its own MLP
    (``KERNELS_PER_EXPERT``), in place of one dense MLP. Their adapters are counted with
    the others (:func:`launched`)."""
    if arch.moe is None or not profile(request.framework).expert_loop:
        return 0.0
    per_layer = (MOE_ROUTER_KERNELS - DENSE_MLP_KERNELS
                 + experts_reached(arch, request) * KERNELS_PER_EXPERT)
    return arch.moe_layers * per_layer
