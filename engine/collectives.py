"""Bytes the parallel dimensions send inside one micro-batch: tensor parallelism's
per-layer all-gathers and reduce-scatters, context parallelism's key/value ring.

The time model (:mod:`engine.throughput`) puts them on the right link and decides
what overlaps. Units: bytes, per card, per micro-batch.
"""

from __future__ import annotations

from engine.architecture import Architecture
from engine.constants import CP_KV_PASSES, PRECISION_BYTES, TP_COLLECTIVES_PER_LAYER
from engine.request import Request


def tp_comm_bytes(arch: Architecture, request: Request, tokens: int) -> float:
    """Bytes each card of a tensor-parallel group sends in one micro-batch of ``tokens``:
    ``TP_COLLECTIVES_PER_LAYER`` ring collectives of ``tokens x hidden`` 16-bit values per
    layer and pass (forward, backward, and a fully recomputed forward), each sending
    ``(tp - 1) / tp`` of the tensor. 0 without tensor parallelism."""
    degree = request.tensor_parallel
    if degree <= 1:
        return 0.0
    recompute = request.grad_checkpointing and not request.selective_checkpointing
    passes = 3.0 if recompute else 2.0
    tensor = tokens * arch.hidden_size * PRECISION_BYTES["bf16"]
    share = (degree - 1) / degree
    return passes * TP_COLLECTIVES_PER_LAYER * arch.num_layers * tensor * share


def cp_comm_bytes(arch: Architecture, request: Request, tokens: int) -> float:
    """Bytes each card of a context-parallel ring sends in one micro-batch of ``tokens``:
    every layer's 16-bit keys and values (``2 x kv_width`` per token) go round the ring
    ``CP_KV_PASSES`` times per pass (forward, backward, a fully recomputed forward), each
    card sending ``(cp - 1) / cp`` of them. 0 without context parallelism."""
    degree = request.context_parallel
    if degree <= 1:
        return 0.0
    passes = CP_KV_PASSES["forward"] + CP_KV_PASSES["backward"]
    if request.grad_checkpointing and not request.selective_checkpointing:
        passes += CP_KV_PASSES["forward"]
    kv = tokens * 2 * arch.kv_width * PRECISION_BYTES["bf16"]
    return passes * arch.num_layers * kv * (degree - 1) / degree
