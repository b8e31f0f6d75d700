"""The memory advice a reply gives names only what the run has not already used."""

from __future__ import annotations

from typing import Any

from engine import Request, estimate
from tests.helpers import H100_LIKE, catalog_with, gpu

TINY = catalog_with(gpu("g4", 4))
"""A catalog whose one card holds no 70B run."""


def _no_card_warning(**fields: Any) -> str:
    est = estimate(Request(model="llama-3.1-70b", seq_len=2048, dataset_tokens=10**7,
                           **fields), TINY)
    return next(w for w in est.warnings if w.startswith("No card in the catalog holds"))


def _cp_tips(**fields: Any) -> list[str]:
    est = estimate(Request(model="llama-3.1-8b", gpu="g80", gpu_count=16,
                           dataset_tokens=10**7, **fields), catalog_with(H100_LIKE))
    return [w for w in est.warnings if "Context parallelism (" in w]


def test_a_full_fine_tune_no_card_holds_is_told_to_try_qlora_and_offload() -> None:
    said = _no_card_warning(method="full")
    assert "QLoRA" in said and "`offload`" in said


def test_a_qlora_run_with_offload_is_not_told_to_use_either() -> None:
    said = _no_card_warning(method="qlora", offload=True, grad_checkpointing=True)
    assert "QLoRA" not in said and "offload" not in said and "`ckpt`" not in said
    assert said.endswith("Try a shorter sequence.")


def test_a_run_without_checkpointing_is_told_to_try_it() -> None:
    assert "`ckpt`" in _no_card_warning(method="qlora", grad_checkpointing=False)


def test_a_short_sequence_at_a_small_batch_gets_no_context_parallel_tip() -> None:
    assert _cp_tips(method="qlora", seq_len=1024, micro_batch=4) == []


def test_a_large_micro_batch_tip_counts_its_sequences_and_offers_a_smaller_one() -> None:
    (tip,) = _cp_tips(method="lora", seq_len=8192, micro_batch=8)
    assert tip.startswith("A micro-batch's activations (8 x 8,192 tokens)")
    assert "of the card" in tip and "smaller micro-batch" in tip


def test_a_tight_named_card_with_checkpointing_on_is_not_told_to_checkpoint() -> None:
    card = gpu("g24", 24)
    for seq in range(1024, 16385, 512):
        est = estimate(Request(model="llama-3.1-8b", method="qlora", seq_len=seq,
                               grad_checkpointing=True, gpu="g24", gpu_count=1, sharding="none",
                               dataset_tokens=10**7), catalog_with(card))
        tight = [w for w in est.warnings if w.startswith("Tight:")]
        if tight:
            break
    assert tight, "no sequence length puts the run in the tight band"
    assert "checkpointing helps" not in tight[0]
    assert "a shorter sequence or a smaller micro-batch helps" in tight[0]


def _cannot_hold(**fields: Any) -> str:
    est = estimate(Request(model="llama-3.1-70b", method="full", offload=True, gpu="g80",
                           gpu_count=1, dataset_tokens=10**7, **fields),
                   catalog_with(H100_LIKE))
    return next(w for w in est.warnings if "cannot hold this run" in w)


def test_offload_on_one_card_that_does_not_hold_it_names_zero3_offload() -> None:
    said = _cannot_hold()
    assert "`zero3 offload`" in said and "on 1x at" in said


def test_offload_under_explicit_sharding_is_not_told_about_zero3() -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", offload=True, gpu="g80",
                           gpu_count=1, sharding="zero3", dataset_tokens=10**7),
                   catalog_with(H100_LIKE))
    assert not any("`zero3 offload`" in w for w in est.warnings)
