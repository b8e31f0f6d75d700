"""The headline's "fastest" names another choice only where it can be weighed."""

from __future__ import annotations

from adapters.report import build_report
from engine import Request, estimate
from tests.helpers import catalog_with, gpu

SLOW = gpu("slow", 80, matmul_tflops=200.0, hbm_gbps=2000.0, price_per_gpu_hour=1.0)
FAST = gpu("fast", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0)


def _cost_line(fast_price: float | None) -> str:
    cat = catalog_with(SLOW, FAST.model_copy(update={"price_per_gpu_hour": fast_price}))
    est = estimate(Request(model="llama-3.1-8b", method="lora", gpu="slow",
                           dataset_tokens=10**7), cat)
    line = build_report(est).cost_line
    assert line is not None
    return line


def test_a_faster_priced_card_is_named_as_fastest() -> None:
    assert "fastest: 1x fast" in _cost_line(2.0)


def test_an_unpriced_card_is_not_named_fastest_beside_a_priced_pick() -> None:
    assert "fastest" not in _cost_line(None)


def test_no_card_slower_than_a_tight_named_pick_is_named_fastest() -> None:
    """A named count in the tight band is the pick though not among the options that fit
    within the planning line; the choice after it may be slower."""
    from catalog.loader import default_catalog

    est = estimate(Request(model="llama-3.2-1b", method="lora", framework="torchtitan",
                           gpu="h100-sxm", gpu_count=16, seq_len=32768,
                           dataset_tokens=50_000_000), default_catalog())
    pick = est.options[0]
    assert pick.band == "tight" and pick.timing.wall_hours is not None
    line = build_report(est).cost_line or ""
    others = [o.timing.wall_hours for o in est.options[1:] if o.fits and o.timing.wall_hours]
    assert others and min(others) > pick.timing.wall_hours
    assert "fastest" not in line
