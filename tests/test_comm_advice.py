"""A run that waits on communication is told what amortizes its stage's traffic."""

from __future__ import annotations

from typing import Any

from engine import Request, estimate
from tests.helpers import catalog_with, gpu

SLOW_LINK = gpu("g24", 24, bf16_tflops=160.0, matmul_tflops=160.0, hbm_gbps=1000.0,
                fabric="pcie", p2p=False)


def _comm_warning(**fields: Any) -> str:
    fields = {"model": "llama-3.1-8b", **fields}
    est = estimate(Request(gpu="g24", gpu_count=8, dataset_tokens=10**7, **fields),
                   catalog_with(SLOW_LINK))
    return next(w for w in est.warnings if "waits on communication" in w)


def test_sharded_weights_are_told_a_larger_micro_batch_sends_less() -> None:
    assert "a larger micro-batch" in _comm_warning(method="lora", sharding="fsdp")


def test_a_replicated_run_is_told_more_accumulation_sends_less() -> None:
    said = _comm_warning(model="qwen2.5-0.5b", method="full", sharding="zero1", seq_len=512)
    assert "more accumulation" in said
