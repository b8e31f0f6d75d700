"""What a card achieves: its dense matmul rate and its attention kernels' rate.

FLOP/s figures from the catalog (``GpuSpec``): ``matmul_tflops``, the best shape in
published matmul benchmarks, and ``flash_attention_tflops``, FlashAttention-2's own rate on
cards whose newest tensor-core instructions it cannot use. Used by :mod:`engine.throughput`
and the warnings that compare attention kernels.
"""

from __future__ import annotations

from engine.constants import FA_EFFICIENCY, MATMUL_FALLBACK_FRACTION
from engine.specs import GpuSpec


def matmul_rate(gpu: GpuSpec) -> float:
    """Achievable dense 16-bit matmul FLOP/s of ``gpu``: the catalog's ``matmul_tflops``
    (the best large-GEMM rate published matmul benchmarks measured on that card, each
    sourced in catalog/gpus.yaml ``matmul_source``), else ``MATMUL_FALLBACK_FRACTION`` of
    its rated dense BF16 figure."""
    if gpu.matmul_tflops is not None:
        return gpu.matmul_tflops * 1e12
    return gpu.train_tflops * 1e12 * MATMUL_FALLBACK_FRACTION


def attention_rate(
    gpu: GpuSpec, flash: bool, native: bool = False, matmul: float | None = None
) -> float:
    """Achievable FLOP/s of attention's score and value matmuls on ``gpu``.

    Eager attention runs as batched GEMMs at the matmul rate. FlashAttention-2 runs at the
    card's own rate where the catalog has one (``flash_attention_tflops``: Hopper and
    sm_100 Blackwell, whose new tensor-core paths its Ampere-style ``mma.sync`` tiles
    cannot use: about 35% of the H100's peak, Shah et al. 2024, arXiv:2407.08608; 15% of
    the B200's), else at ``FA_EFFICIENCY`` of the matmul rate (its share on the A100, Dao
    2023, arXiv:2307.08691). ``native`` kernels (FlashAttention-3, cuDNN) reach that share
    on every card. These are long-sequence rates (measured on an H200, FlashAttention-2
    reaches 34% of its 32K-token rate at 512 tokens and 67% at 2,048; not counted: the
    scored runs fit worse with it, docs/accuracy.md). ``matmul``: ``matmul_rate(gpu)``
    when the caller has it."""
    if matmul is None:
        matmul = matmul_rate(gpu)
    if not flash:
        return matmul
    if gpu.flash_attention_tflops is not None and not native:
        return gpu.flash_attention_tflops * 1e12
    return matmul * FA_EFFICIENCY


def framework_picks_native_attention(gpu: GpuSpec, cudnn_from: float | None) -> bool:
    """Whether the framework runs cuDNN's attention on ``gpu`` unasked: from compute
    capability ``cudnn_from`` on (``Profile.cudnn_attention_from``; None: never)."""
    return (
        cudnn_from is not None
        and gpu.compute_capability is not None
        and gpu.compute_capability >= cudnn_from
    )
