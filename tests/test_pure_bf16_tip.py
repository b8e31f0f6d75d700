"""An ``hf`` full fine-tune is counted with FP32 weights and moments (transformers 4 with
the Trainer's autocast); the reply says what transformers 5's BF16 loading would hold."""

from __future__ import annotations

from typing import Any

from catalog.loader import default_catalog
from engine import Request, estimate

RUN = {"model": "qwen2.5-1.5b", "method": "full", "seq_len": 2048, "micro_batch": 4,
       "gpu": "h100-sxm", "gpu_count": 1, "dataset_tokens": 10**7}


def _tips(**fields: Any) -> list[str]:
    result = estimate(Request(**{**RUN, **fields}), default_catalog())
    return [w for w in result.warnings if "transformers 5 loads" in w]


def _per_gpu(**fields: Any) -> float:
    return estimate(Request(**{**RUN, **fields}), default_catalog()).options[0].per_gpu_gb


def test_an_hf_full_fine_tune_is_told_what_pure_bf16_would_take_off() -> None:
    (tip,) = _tips(framework="hf")
    assert "say `pure bf16` if that is your run" in tip


def test_the_saving_it_names_is_what_pure_bf16_takes_off() -> None:
    (tip,) = _tips(framework="hf")
    saving = _per_gpu(framework="hf") - _per_gpu(framework="hf", state_precision="pure-bf16")
    assert f"about {saving:,.0f} GB less" in tip


def test_no_tip_once_the_states_are_said() -> None:
    assert not _tips(framework="hf", state_precision="pure-bf16")
    assert not _tips(framework="hf", state_precision="fp32")


def test_no_tip_for_adapters_other_frameworks_or_deepspeed() -> None:
    assert not _tips(framework="hf", method="lora")
    assert not _tips(framework="generic")
    assert not _tips(framework="hf", sharding="zero3", gpu_count=2)


def test_a_stateless_optimizer_is_told_only_the_weights_saving() -> None:
    (tip,) = _tips(framework="hf", optimizer="sgd")
    saving = (_per_gpu(framework="hf", optimizer="sgd")
              - _per_gpu(framework="hf", optimizer="sgd", state_precision="pure-bf16"))
    assert f"about {saving:,.0f} GB less" in tip


def test_a_stateless_optimizer_is_not_told_of_moments() -> None:
    (tip,) = _tips(framework="hf", optimizer="sgd")
    assert "optimizer states" not in tip and "BF16 states" not in tip
