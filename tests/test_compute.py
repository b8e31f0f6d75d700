"""Compute, time and cost: the 6·P·T rule and its adjustments."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from engine import Request, estimate
from engine.choices import Mode
from engine.compute import compute, timing, training_flops
from engine.constants import RUN_STARTUP_S
from tests.helpers import catalog_with, gpu


def test_flops_are_six_times_params_times_tokens() -> None:
    assert training_flops(8e9, 150e6) == 6 * 8e9 * 150e6


def test_trained_tokens_are_dataset_tokens_times_epochs() -> None:
    assert Request(model="x", dataset_tokens=50_000_000, epochs=3).trained_tokens == 150_000_000


def test_epochs_default_to_three() -> None:
    assert Request(model="x").epochs == 3


def test_a_stated_mfu_is_read_as_measured_with_recompute_in_it() -> None:
    assert compute(1e9, Request(model="x", mfu=0.4)).mfu_effective == 0.4


def test_napkin_mode_times_at_thirty_five_percent() -> None:
    assert compute(1e9, Request(model="x", mode="napkin")).mfu_effective == 0.35


def test_gpu_hours_divide_flops_by_dense_throughput_times_mfu() -> None:
    card = gpu("g", 80, bf16_tflops=1000.0)
    req = Request(model="x", dataset_tokens=1_000_000, epochs=1, grad_checkpointing=False)
    work = compute(1e9, req)
    t = timing(work, card, 1, 2.0, Mode.DETAILED)
    expected = 6 * 1e9 * 1e6 / (1000e12 * 0.35) / 3600 + RUN_STARTUP_S / 3600
    assert t.gpu_hours == pytest.approx(expected)
    assert t.cost_usd == pytest.approx(expected * 2.0)


def test_saying_back_the_quoted_mfu_gives_the_same_time() -> None:
    for query in ("8b lora 100M tokens h100", "8b full 100M tokens 8x h100"):
        quoted = estimate(parse_query(query)).options[0]
        assert quoted.timing.mfu is not None
        again = estimate(parse_query(f"{query} mfu {quoted.timing.mfu:.6f}")).options[0]
        assert again.timing.gpu_hours == pytest.approx(quoted.timing.gpu_hours, rel=1e-4)


def test_cards_without_bf16_use_dense_fp16() -> None:
    card = gpu("v", 16, bf16=False, bf16_tflops=None, fp16_tflops=125.0)
    assert card.train_tflops == 125.0


def test_wall_clock_is_gpu_hours_over_card_count() -> None:
    card = gpu("g", 80)
    work = compute(1e9, Request(model="x", dataset_tokens=10**7))
    t = timing(work, card, 4, 1.0, Mode.DETAILED)
    assert t.wall_hours == pytest.approx(t.gpu_hours / 4)


def test_a_stated_mfu_on_several_cards_adds_no_communication_on_top() -> None:
    card = gpu("g", 80, bf16_tflops=1000.0, fabric="pcie")
    req = Request(model="x", dataset_tokens=10**6, epochs=1, mfu=0.35)
    one, four = (timing(compute(1e9, req), card, n, None, Mode.DETAILED) for n in (1, 4))
    startup_h = RUN_STARTUP_S / 3600
    assert four.gpu_hours - 4 * startup_h == pytest.approx(one.gpu_hours - startup_h)
    assert four.mfu == pytest.approx(0.35)


def test_moe_flops_use_active_parameters(catalog) -> None:
    moe = next((m for m in catalog.models.values() if m.is_moe), None)
    if moe is None:
        pytest.skip("no MoE model in the catalog yet")
    est = estimate(Request(model=moe.id, dataset_tokens=10**6, epochs=1), catalog)
    assert est.compute.flops == pytest.approx(6 * moe.active_params * 1e6)


def test_time_and_cost_are_absent_without_a_dataset_size() -> None:
    cat = catalog_with(gpu("g", 80))
    est = estimate(Request(model="llama-3.1-8b", method="qlora"), cat)
    assert est.options[0].timing.gpu_hours is None
    assert est.options[0].timing.cost_usd is None


def test_price_override_sets_the_cost() -> None:
    cat = catalog_with(gpu("g", 80, price_per_gpu_hour=9.0))
    req = Request(
        model="llama-3.1-8b", method="qlora", dataset_tokens=10**7, price_per_gpu_hour=1.5
    )
    opt = estimate(req, cat).options[0]
    assert opt.price_per_gpu_hour == 1.5
    assert opt.timing.cost_usd == pytest.approx(opt.timing.gpu_hours * 1.5)


def test_the_compute_line_states_the_start_up_inside_the_gpu_hours() -> None:
    est = estimate(parse_query("8b lora 1M tokens 4x h100-sxm"))
    startup = 4 * RUN_STARTUP_S / 3600
    share = startup / (est.options[0].timing.gpu_hours or 1)

    line = next(a for a in est.assumptions if a.startswith("Compute:"))

    assert f"start-up per card (loading, set-up, warm-up): {startup:,.1f} GPU-hours" in line
    assert f"({share:.0%} of them)" in line


def test_the_compute_line_times_the_count_the_reply_prices() -> None:
    est = estimate(parse_query("qwen 72b qlora 2x rtx 3090 seq 1024 5M tokens"))
    priced = est.options[1]  # the named 2x does not fit; the count that does follows it
    assert not est.options[0].fits and priced.fits and priced.count != 2

    line = next(a for a in est.assumptions if a.startswith("Compute:"))

    assert f"modeled per micro-batch on {priced.count}x rtx-3090" in line
