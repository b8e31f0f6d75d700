"""Attention's FLOP rate: FlashAttention-2 below cuBLAS, and further below it on Hopper."""

from __future__ import annotations

import pytest

from engine import Request
from engine.constants import FA_EFFICIENCY
from engine.profiles import resolve
from engine.request import Sharding
from engine.specs import Catalog, GpuSpec
from engine.throughput import attention_rate, matmul_rate, step_time, workload
from tests.helpers import H100_LIKE, gpu

# The same card with the FlashAttention-2 rate the catalog gives Hopper cards (0.35 of
# its 1,000 TF peak), and one without the column.
HOPPER_LIKE = H100_LIKE.model_copy(update={"flash_attention_tflops": 350.0})
AMPERE_LIKE = gpu("a80", 80, bf16_tflops=312.0, matmul_tflops=270.0, hbm_gbps=2000.0,
                  link_gbps=300.0)


def tokens_per_s(catalog: Catalog, card: GpuSpec, **fields: object) -> float:
    request = resolve(Request(**{"model": "llama-3.1-8b", "method": "full", **fields}))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, card, 1, Sharding.NONE, False).tokens_per_second


def test_flash_attention_runs_at_the_cards_own_rate_where_the_catalog_has_one() -> None:
    assert attention_rate(HOPPER_LIKE, flash=True) == pytest.approx(350e12)


def test_flash_attention_elsewhere_runs_at_fa_efficiency_of_the_matmul_rate() -> None:
    assert attention_rate(AMPERE_LIKE, flash=True) == pytest.approx(
        FA_EFFICIENCY * matmul_rate(AMPERE_LIKE)
    )


def test_eager_attention_runs_at_the_matmul_rate_on_every_card() -> None:
    for card in (HOPPER_LIKE, AMPERE_LIKE):
        assert attention_rate(card, flash=False) == matmul_rate(card)


def test_a_hopper_card_gains_less_over_ampere_as_the_sequence_grows(catalog: Catalog) -> None:
    def speedup(seq: int, batch: int) -> float:
        fast = tokens_per_s(catalog, HOPPER_LIKE, seq_len=seq, micro_batch=batch)
        return fast / tokens_per_s(catalog, AMPERE_LIKE, seq_len=seq, micro_batch=batch)

    assert speedup(32768, 1) < speedup(2048, 16)


def test_the_hopper_rate_slows_long_sequences_against_the_same_card_without_it(
    catalog: Catalog,
) -> None:
    with_rate = tokens_per_s(catalog, HOPPER_LIKE, seq_len=16384, micro_batch=1)
    without = tokens_per_s(catalog, H100_LIKE, seq_len=16384, micro_batch=1)
    assert with_rate < 0.95 * without


def test_the_shipped_h100_runs_flash_attention_at_about_35_percent_of_its_peak(
    catalog: Catalog,
) -> None:
    h100 = catalog.gpu("h100-sxm")
    assert h100.flash_attention_tflops == pytest.approx(0.35 * h100.bf16_tflops, rel=0.01)
