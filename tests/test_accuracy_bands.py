"""The uncertainty band every reply states is the one cross-validation measures now."""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path
from typing import Any

from engine import Request
from engine.accuracy import BANDS, TIMED_CARDS, uncertainty
from engine.constants import ELEMENTWISE_PASSES, GEMM_EFFICIENCY, LAUNCH_S_PER_KERNEL

ROOT = Path(__file__).resolve().parents[1]


@functools.cache
def _benchmark():
    spec = importlib.util.spec_from_file_location("accuracy_benchmark", ROOT / "benchmarks" /
                                                  "accuracy.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@functools.cache
def _evaluated() -> dict[str, Any]:
    """The benchmark's evaluation of every run (one pass for every test here)."""
    bench = _benchmark()
    result: dict[str, Any] = bench.evaluate(bench.load_runs())
    return result


def test_the_bands_in_the_engine_are_the_benchmarks_current_output() -> None:
    bench = _benchmark()
    lines = bench.bands(_evaluated())
    for method, line in zip(("full", "lora", "qlora"), lines, strict=True):
        band = BANDS[method]
        assert f"memory={band.memory:.2f}" in line
        assert f"time={band.time:.2f}" in line
        assert f"memory_runs={band.memory_runs}" in line


def test_the_timed_cards_in_the_engine_are_the_benchmarks_current_ones() -> None:
    bench = _benchmark()
    line = bench.timed_cards(_evaluated())
    cards = ", ".join(map(repr, sorted(TIMED_CARDS)))
    assert line == f"TIMED_CARDS: Final = frozenset({{{cards}}})"


def test_a_named_card_no_timed_run_used_is_said_to_be_untimed() -> None:
    basis = uncertainty(Request(model="llama-3.1-8b", method="lora", gpu="h100-sxm")).basis
    assert basis.endswith(f"; timed on {', '.join(sorted(TIMED_CARDS))} only")


def test_a_named_card_the_timed_runs_used_carries_no_such_caveat() -> None:
    card = sorted(TIMED_CARDS)[0]
    assert "timed on" not in uncertainty(Request(model="llama-3.1-8b", gpu=card)).basis


def test_the_fitted_time_constants_are_the_benchmarks_fit() -> None:
    tuning = _evaluated()["tuning"]
    assert tuning.launch_s_per_kernel == LAUNCH_S_PER_KERNEL
    assert tuning.elementwise_passes == ELEMENTWISE_PASSES
    assert abs(tuning.gemm_efficiency - GEMM_EFFICIENCY) < 1e-9


class _FixedRun:
    """A timed run whose speed the fit cannot tie to the launch time or matmul share."""

    run_id = "fixed-01"
    tokens_measured = 1000.0


class _LaunchBlindTimer:
    def tokens_per_second(self, tuning: Any) -> float:
        return 900.0 + tuning.elementwise_passes


def test_a_launch_time_the_runs_cannot_tell_sits_at_its_published_midpoint() -> None:
    bench = _benchmark()
    tuning = bench.fit([(_FixedRun(), _LaunchBlindTimer())])
    assert abs(tuning.launch_s_per_kernel - bench.LAUNCH_PRIOR) <= 1e-6


def test_a_matmul_share_the_runs_cannot_tell_stays_at_the_catalogs_rate() -> None:
    bench = _benchmark()
    tuning = bench.fit([(_FixedRun(), _LaunchBlindTimer())])
    assert tuning.gemm_efficiency == max(bench.GEMM_GRID)


def test_the_matmul_share_is_fitted_only_between_60_and_100_percent() -> None:
    bench = _benchmark()
    assert min(bench.GEMM_GRID) >= 0.6 - 1e-12
    assert max(bench.GEMM_GRID) <= 1.0 + 1e-12


def test_the_launch_time_is_fitted_only_inside_eager_pytorchs_cost_per_op() -> None:
    bench = _benchmark()
    assert min(bench.LAUNCH_GRID) >= 5e-6 - 1e-12
    assert max(bench.LAUNCH_GRID) <= 25e-6 + 1e-12


def test_a_run_on_a_measured_host_is_timed_at_that_hosts_launch_time_whatever_the_fit() -> None:
    bench = _benchmark()
    run = next(r for r in bench.load_runs() if r.host_launch_s is not None)
    timer = bench.Timer(run)
    fast = bench.Tuning(5e-6, ELEMENTWISE_PASSES, GEMM_EFFICIENCY)
    slow = bench.Tuning(25e-6, ELEMENTWISE_PASSES, GEMM_EFFICIENCY)
    assert timer.tokens_per_second(fast) == timer.tokens_per_second(slow)


def test_a_published_run_is_timed_at_the_fitted_launch_time() -> None:
    bench = _benchmark()
    run = next(r for r in bench.load_runs() if r.run_id == "qwen-01")
    timer = bench.Timer(run)
    fast = bench.Tuning(5e-6, ELEMENTWISE_PASSES, GEMM_EFFICIENCY)
    slow = bench.Tuning(25e-6, ELEMENTWISE_PASSES, GEMM_EFFICIENCY)
    assert timer.tokens_per_second(fast) > timer.tokens_per_second(slow)


def test_the_elementwise_passes_are_fitted_only_above_what_eager_kernels_must_move() -> None:
    bench = _benchmark()
    assert min(bench.PASSES_GRID) >= 8.0
    assert max(bench.PASSES_GRID) <= 20.0


def test_a_mixture_of_experts_band_says_no_measured_run_used_one() -> None:
    band = uncertainty(Request(model="qwen3-30b-a3b", method="lora"), moe=True)
    assert "none of them used a mixture-of-experts model" in band.basis
    assert "mixture" not in uncertainty(Request(model="llama-3.1-8b", method="lora")).basis
