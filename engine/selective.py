"""Op-level selective activation checkpointing: what it keeps and what it recomputes.

torchtitan's default for Llama 3 8B (``mode = "selective"``, ``selective_ac_option =
"op"``; torchtune's ``ac_mode: selective`` is the same policy) checkpoints each decoder
layer but keeps, inside it, the output of every second matmul counting from the first
(``SAC_MATMUL_SAVE_PERIOD``) and attention's output, and recomputes everything else in
backward. In a Llama layer the matmuls run q, k, v, o, gate, up, down, so it keeps the
outputs of q, v, gate and down and recomputes k, o and up; a LoRA adapter adds its two
matmuls (A, then B) after its base projection's and shifts the count. Routed experts run
as grouped matmuls, which the policy does not keep.

Memory per token: the layer's input, as under full checkpointing, plus the kept outputs
(16-bit) and attention's output and FP32 log-sum-exp (FlashAttention/SDPA; eager
attention is recomputed). Time: the recomputed forward covers only the projections
whose output was not kept; attention is not recomputed.
"""

from __future__ import annotations

from engine.architecture import Architecture, Linear
from engine.choices import Method
from engine.constants import ACTIVATION_BYTES, FP32_BYTES, SAC_MATMUL_SAVE_PERIOD
from engine.request import Request


def _matmuls(arch: Architecture, request: Request) -> list[tuple[int, int, bool]]:
    """The dense matmuls of a layer in forward order, each as ``(output elements per
    token, weights)`` summed over the layers it appears in (weights 0 for an adapter's
    A and B, whose rerun the time model does not count), and whether its output is kept.
    Experts and routers are left out (grouped matmuls are never kept)."""
    adapted: set[Linear] = set()
    if request.effective_method is not Method.FULL:
        adapted = set(arch.targeted_linears(request.lora_targets.value))
    out: list[tuple[int, int, bool]] = []
    position = 0
    for lin in arch.linear_layers():
        if lin.group not in ("attention", "mlp"):
            continue
        steps = [(lin.d_out, lin.d_in * lin.d_out)]
        if lin in adapted:
            steps += [(request.lora_rank, 0), (lin.d_out, 0)]
        for width, weights in steps:
            position += 1
            kept = position % SAC_MATMUL_SAVE_PERIOD == 1
            out.append((width * lin.count, weights * lin.count, kept))
    return out


def saved_bytes_per_token(arch: Architecture, request: Request) -> float:
    """Bytes one token keeps across all layers under selective checkpointing, beyond
    each layer's input: the kept matmul outputs and attention's output (16-bit) and its
    FP32 log-sum-exp per head."""
    kept = sum(width for width, _, keep in _matmuls(arch, request) if keep)
    total = ACTIVATION_BYTES * kept
    if request.flash_attention:
        per_layer = ACTIVATION_BYTES * arch.q_width + FP32_BYTES * arch.num_heads
        total += per_layer * arch.num_layers
    return total


def recomputed_params(arch: Architecture, request: Request) -> int:
    """Weights whose matmul the backward reruns under selective checkpointing, per
    token: the dense projections whose output was not kept, and the routed experts."""
    dense = sum(weights for _, weights, keep in _matmuls(arch, request) if not keep)
    experts = sum(lin.active_params for lin in arch.linear_layers() if lin.group == "expert")
    return dense + experts
