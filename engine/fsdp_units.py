"""FSDP1's root unit: what Accelerate's FSDP keeps gathered for the whole of forward and
backward beside the decoder layers it gathers in turn (``Footprint.root_unit``).

FSDP1 wraps each decoder layer as a unit; what is left (the embeddings, an untied LM
head, the final norm) is the root unit, which it never reshards between forward and
backward (PyTorch ``torch/distributed/fsdp/_runtime_utils.py`` ``_post_forward_reshard``:
``free_unsharded_flat_param = not state._is_root and ...``) and whose gradient it reduces
last, after the embedding's (``FSDP_ROOT_UNIT_GATHERED`` in ``engine.framework_facts``).
"""

from __future__ import annotations

from engine.architecture import Architecture
from engine.choices import Method
from engine.constants import ACTIVATION_BYTES
from engine.profiles import keeps_fsdp1_root
from engine.request import Request


def fsdp1_units(
    arch: Architecture, request: Request, base: float, unit_bytes: float
) -> tuple[float, float]:
    """Bytes of FSDP1's root unit and of the largest decoder layer gathered beside it,
    where the framework keeps the root gathered; ``(0, 0)`` elsewhere, and under tensor
    or context parallelism (Accelerate's FSDP2 with a tensor-parallel plan that splits the
    embeddings and head: not modelled).

    ``base`` is the whole base's bytes and ``unit_bytes`` a gathered parameter's (the
    weights' precision; LoRA's base average). Under QLoRA the root's embeddings and head
    stay 16-bit while the layers are 4-bit, so each is sized at its own bytes."""
    if not keeps_fsdp1_root(request):
        return 0.0, 0.0
    root = arch.embedding_params + arch.hidden_size
    layer = arch.largest_decoder_layer_params
    if request.effective_method is not Method.QLORA:
        return root * unit_bytes, layer * unit_bytes
    quantized = (base - ACTIVATION_BYTES * root) / (arch.total_params - root)
    return ACTIVATION_BYTES * root, layer * quantized
