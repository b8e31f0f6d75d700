"""A torchtune full fine-tune on one card is counted with the AdamW the user did not name;
the reply says what torchtune's single-device recipes (8-bit paged AdamW stepped in
backward) would hold instead."""

from __future__ import annotations

from typing import Any

from catalog.loader import default_catalog
from engine import Request, estimate

RUN = {"model": "llama-3.1-8b", "method": "full", "framework": "torchtune",
       "gpu": "h100-sxm", "gpu_count": 1, "dataset_tokens": 10**7}


def _tips(**fields: Any) -> list[str]:
    result = estimate(Request(**{**RUN, **fields}), default_catalog())
    return [w for w in result.warnings if "single-device full recipes" in w]


def _per_gpu(**fields: Any) -> float:
    return estimate(Request(**{**RUN, **fields}), default_catalog()).options[0].per_gpu_gb


def test_a_torchtune_full_fine_tune_on_one_card_is_told_its_recipes_optimizer() -> None:
    (tip,) = _tips()
    assert "say `adamw-8bit optimizer-in-backward` if that is your run" in tip


def test_the_saving_it_names_is_what_those_words_take_off() -> None:
    (tip,) = _tips()
    saving = _per_gpu() - _per_gpu(optimizer="adamw-8bit", optimizer_in_backward=True)
    assert f"about {saving:,.0f} GB less" in tip


def test_no_tip_once_the_optimizer_is_said() -> None:
    assert not _tips(optimizer="adamw-8bit")
    assert not _tips(optimizer="adamw")
    assert not _tips(optimizer_in_backward=False)


def test_no_tip_on_several_cards_with_accumulation_or_for_other_frameworks() -> None:
    assert not _tips(gpu_count=2)
    assert not _tips(grad_accum=4)
    assert not _tips(framework="hf")
    assert not _tips(method="lora")
