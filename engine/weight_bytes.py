"""Bytes per parameter: the base as the GPU stores it, a full fine-tune's gradient, LoRA's
adapters, and a unit ZeRO-3/FSDP gathers. Bytes, not GB; the memory model
(:mod:`engine.memory`) and the time model (:mod:`engine.throughput`) share them.
"""

from __future__ import annotations

from engine.architecture import Architecture
from engine.choices import Method, StatePrecision
from engine.constants import (
    ADAPTER_BYTES,
    GPTQ_BITS,
    NF4_BITS,
    NF4_BITS_DOUBLE_QUANT,
    PRECISION_BYTES,
    ZERO3_GATHERED_UNITS,
)
from engine.profiles import profile
from engine.request import Request


def quantized_bits(request: Request) -> float:
    """Bits per parameter of QLoRA's 4-bit linears: GPTQ's group-128 format, else NF4
    with or without double quantization."""
    if request.gptq:
        return GPTQ_BITS
    return NF4_BITS_DOUBLE_QUANT if request.double_quant else NF4_BITS


def full_gradient_bytes(request: Request) -> float:
    """Bytes of one gradient in a full fine-tune: the weights' precision, at least 16-bit
    (autograd keeps a parameter's gradient in its dtype; FP8 training keeps 16-bit
    weights and gradients, only its matmuls are FP8), 2 B in pure BF16."""
    if request.state_precision is StatePrecision.PURE_BF16:
        return PRECISION_BYTES["bf16"]
    return max(PRECISION_BYTES[request.precision.value], PRECISION_BYTES["bf16"])


def base_weight_bytes(arch: Architecture, request: Request) -> float:
    """Bytes of the frozen or trained base model as stored on the GPU.

    QLoRA: linear layers at 4.127 bits/param (4.5 without double quantization),
    everything else (embeddings, LM head, norms) in BF16 [QLoRA §2, detailed doc]; an
    untied LM head too at 4 bits where the framework quantizes it
    (``PROFILE_QUANTIZED_HEAD``).
    """
    if request.effective_method is Method.QLORA:
        quantized = arch.linear_params
        if profile(request.framework).quantized_head and not arch.tie_embeddings:
            quantized += arch.vocab_size * arch.hidden_size
        rest = arch.total_params - quantized
        return quantized * quantized_bits(request) / 8 + rest * PRECISION_BYTES["bf16"]
    return arch.total_params * PRECISION_BYTES[request.precision.value]


def lora_adapter_bytes(request: Request) -> float:
    """Bytes per LoRA weight, and per its gradient (and its optimizer's moments follow the
    weight's dtype, as torch's optimizers keep them): :data:`ADAPTER_BYTES` (FP32) where
    the adapters are FP32 (``fp32_adapters``: PEFT's autocast, whatever the regime) or
    the regime keeps trainable weights in FP32 (mixed precision); BF16 in pure BF16
    with 16-bit adapters (torchtune, litgpt)."""
    pure = request.state_precision is StatePrecision.PURE_BF16
    return PRECISION_BYTES["bf16"] if pure and not request.fp32_adapters else ADAPTER_BYTES


def gathered_unit_bytes(arch: Architecture, request: Request, bytes_per_param: float) -> float:
    """Bytes of one of the ``ZERO3_GATHERED_UNITS`` units ZeRO-3/FSDP holds gathered at
    once (the unit computing and the next, prefetched): the largest unit
    (``Architecture.largest_layer_params``) at ``bytes_per_param``.

    Under QLoRA the units differ in kind: the embedding and an LM head the framework
    does not quantize stay BF16 while a decoder layer's linears are 4-bit [QLoRA §2]. Where
    the 16-bit one is the larger, it is gathered beside a 4-bit layer (the head's matmul
    ends the forward, its backward starts the backward, next to the last layer), so one
    unit is the mean of the pair: 70B, a 2.1 GB BF16 head and a 0.44 GB NF4 layer, where the
    model's average bytes per parameter gave a 0.47 GB unit."""
    if request.effective_method is not Method.QLORA:
        return arch.largest_layer_params * bytes_per_param
    layer = arch.largest_decoder_layer_params * quantized_bits(request) / 8
    largest = max(layer, arch.vocab_size * arch.hidden_size * PRECISION_BYTES["bf16"])
    return (largest + (ZERO3_GATHERED_UNITS - 1) * layer) / ZERO3_GATHERED_UNITS
