"""What the parallel dimensions send, and over which link.

* Bytes inside one micro-batch: tensor parallelism's per-layer all-gathers and
  reduce-scatters, context parallelism's key/value ring (bytes, per card).
* The link a ring collective runs on (:func:`link_bytes_per_s`: NVLink, Infinity
  Fabric or PCIe inside a node, halved without peer-to-peer; between nodes the NICs of
  the ring's cards on each node, one per GPU on data-center boards) and how many nodes
  a run spans (:func:`nodes_for`).
* Data-parallel time (:func:`data_parallel_seconds`): ZeRO-3/FSDP gather the weights
  every micro-batch and reduce-scatter the gradients (FSDP and HSDP under ``no_sync()``
  once per accumulation window), DDP and ZeRO-1 reduce once per step, ZeRO-2 every
  micro-batch and gathers the updated weights once per step ([zero2-reduce]: DeepSpeed's
  ``stage_1_and_2.py`` ``reduce_ready_partitions_and_remove_grads`` reduces when
  ``partition_gradients``, true at stage 2, or at the accumulation boundary); HSDP
  gathers within its shard group (:func:`hsdp_group`) and all-reduces its gradient shard
  across the groups once per step.

The time model (:mod:`engine.throughput`) decides what overlaps with compute. Units:
bytes, seconds; bandwidths in the catalog are GB/s (10^9 bytes/s).
"""

from __future__ import annotations

import math

from engine.architecture import Architecture
from engine.choices import Sharding
from engine.constants import (
    CP_KV_PASSES,
    GPUS_PER_NODE,
    INTERNODE_GBPS,
    LINK_GBPS_BY_FABRIC,
    NO_P2P_FACTOR,
    PRECISION_BYTES,
    RAIL_FABRICS,
    TP_COLLECTIVES_PER_LAYER,
)
from engine.records import record
from engine.request import Request
from engine.specs import GpuSpec


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


def nodes_for(count: int, nodes: int | None = None, per_node: int = GPUS_PER_NODE) -> int:
    """Nodes a run of ``count`` cards spans: as given, else ``per_node`` (the card's
    ``gpus_per_node``) per node; never fewer than ``per_node`` cards a node allows."""
    least = max(1, math.ceil(count / per_node))
    if nodes is not None:
        return max(least, min(nodes, count))
    return least


def group_nodes(size: int, count: int, per_node: int) -> int:
    """Nodes the worst of the ``count / size`` groups of ``size`` consecutive cards (a
    tensor-parallel group, a context-parallel ring) spans on nodes of ``per_node``: one
    where groups tile the nodes, two where one straddles a boundary (72-card GB200 racks
    with groups of 16), more for a group past one node."""
    if size >= per_node:
        return nodes_for(size, None, per_node)
    return 2 if count > per_node and per_node % size else 1


def link_bytes_per_s(gpu: GpuSpec, count: int, nodes: int) -> float:
    """Per-GPU bandwidth of a ring collective among ``count`` ranks spread evenly over
    ``nodes`` nodes, bytes/s: the card's own link inside a node (halved without
    peer-to-peer); between nodes the NICs the ring's cards on one node bring
    (``RAIL_FABRICS``: one each, so 8 cards a node cross at 8 x 50 GB/s; elsewhere the
    node's one NIC), at most the link inside the node."""
    intra = (gpu.link_gbps or LINK_GBPS_BY_FABRIC[gpu.fabric]) * 1e9
    if not gpu.p2p:
        intra *= NO_P2P_FACTOR
    if nodes > 1:
        nics = math.ceil(count / nodes) if gpu.fabric in RAIL_FABRICS else 1
        return min(intra, nics * INTERNODE_GBPS[gpu.fabric] * 1e9)
    return intra


def named_node_cards(request: Request) -> int | None:
    """Cards on each node the request names (``2 nodes of 4x h100``: 4), or None where it
    names no nodes or no count."""
    if request.nodes and request.gpu_count:
        return max(1, request.gpu_count // request.nodes)
    return None


def hsdp_group(count: int, node_cards: int, nodes: int | None = None) -> int:
    """Cards in each ``hsdp`` shard group of a ``count``-card run: over the ``nodes`` the
    request names (its mesh, whatever machines hold it), else split evenly over the nodes
    of ``node_cards`` it spans, as HYBRID_SHARD's two-dimensional mesh (replicas x
    shards) needs (12 cards on 8-card nodes: two groups of 6)."""
    if nodes:
        return max(1, count // nodes)
    return max(1, count // max(1, math.ceil(count / max(1, node_cards))))


@record
class DataParallelTime:
    """Data-parallel collectives of one step on one GPU, before any overlap."""

    per_micro_s: float
    """Seconds in every micro-batch (weight gathers, per-micro-batch reductions)."""
    per_step_s: float
    """Seconds once per optimizer step (reductions deferred to the window's end)."""
    shards: int
    """Ranks the sharded state spreads over (one shard group's under ``hsdp``)."""
    link_busy_s: float = 0.0
    """Seconds of each micro-batch that the link carrying :attr:`per_step_s` already
    spends on :attr:`per_micro_s` (FSDP's gathers before its deferred reduce-scatter);
    0 where the per-step traffic has a link of its own (``hsdp``'s replicas across
    nodes) or there is none per micro-batch (DDP)."""


def data_parallel_seconds(
    gpu: GpuSpec,
    count: int,
    stage: Sharding,
    *,
    tp: int,
    weight_bytes: float,
    grad_bytes: float,
    accumulates: bool,
    nodes: int | None = None,
) -> DataParallelTime:
    """The collectives among ``count`` cards of ``gpu`` under ``stage``, one rank per
    tensor-parallel group of ``tp`` cards: ``weight_bytes`` of stored weights gathered,
    ``grad_bytes`` of gradients reduced, with gradient accumulation when ``accumulates``
    (see the module docstring for when each runs)."""
    per_node = gpu.gpus_per_node
    ranks = max(1, count // tp if tp > 1 else count)
    if ranks <= 1:
        return DataParallelTime(0.0, 0.0, ranks)
    if stage is Sharding.HSDP:
        # Sharded within a group (a node, or the nodes the request names: its mesh),
        # replicated across groups: gathers and reduce-scatters stay on the group's own
        # links; the replicas all-reduce their gradient shards once per step.
        group = hsdp_group(count, per_node, nodes)
        shards = min(ranks, max(1, group // tp))
        replicas = ranks // shards
        local = link_bytes_per_s(gpu, shards * tp, nodes_for(shards * tp, None, per_node))
        micro = 2 * weight_bytes * (shards - 1) / shards / local
        reduce = grad_bytes * (shards - 1) / shards / local
        step = reduce if accumulates else 0.0  # no_sync(), as under fsdp below
        if not accumulates:
            micro += reduce
        if replicas > 1:
            # One rank of each group per ring: a card per node, on its own NIC.
            across = link_bytes_per_s(gpu, replicas, nodes_for(count, nodes, per_node))
            step += 2 * grad_bytes / shards * (replicas - 1) / replicas / across
        # The replicas' all-reduce crosses nodes on the NICs, which the group's gathers
        # within its node do not use.
        return DataParallelTime(micro, step, shards, 0.0 if replicas > 1 else micro)
    share = (ranks - 1) / ranks
    link = link_bytes_per_s(gpu, ranks, nodes_for(count, nodes, per_node))
    if stage.shards_weights:
        # All-gather for forward and backward every micro-batch, reduce-scatter grads;
        # FSDP accumulating under no_sync() reduces them once a step (as the memory
        # model keeps them whole until then), DeepSpeed every micro-batch.
        reduce = grad_bytes * share / link
        micro = 2 * weight_bytes * share / link
        if stage.is_fsdp and accumulates:
            return DataParallelTime(micro, reduce, ranks, micro)
        return DataParallelTime(micro + reduce, 0.0, ranks)
    if stage is Sharding.ZERO2 and accumulates:
        # ZeRO-2 partitions the gradients, so it reduces them every micro-batch during
        # backward ([zero2-reduce]); the updated weights are gathered once per step.
        reduce = grad_bytes * share / link
        return DataParallelTime(reduce, reduce, ranks, reduce)
    # DDP all-reduce, or ZeRO-1/2 reduce-scatter + all-gather: 2x the gradients.
    return DataParallelTime(0.0, 2 * grad_bytes * share / link, ranks)
