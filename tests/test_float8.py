"""Float8 training (``float8``): the decoder's linears multiply in FP8 on cards that
have FP8 tensor cores; weights, states and saved activations are unchanged."""

from __future__ import annotations

import pytest

from engine import Request, estimate
from engine.choices import Sharding
from engine.constants import GEMM_EFFICIENCY
from engine.memory import footprint
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.variant_work import float8_speedup
from engine.workload import workload
from tests.helpers import catalog_with, gpu

FP8_CARD = gpu("f8", 80, bf16_tflops=1000.0, fp8_tflops=2000.0, matmul_tflops=800.0,
               hbm_gbps=3000.0, link_gbps=450.0)
BF16_CARD = gpu("b16", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0)
RUN = {"model": "llama-3.1-8b", "method": "full", "seq_len": 4096, "micro_batch": 2}


def _step(catalog: Catalog, card, **fields) -> float:
    request = resolve(Request(**{**RUN, **fields}))
    work = workload(catalog.model(request.model).architecture, request)
    return step_time(work, card, 1, Sharding.NONE, offload=False).step_s


def test_fp8_tensor_cores_save_most_of_half_the_linears_matmul_time(catalog: Catalog) -> None:
    request = resolve(Request(**RUN, float8=True))
    work = workload(catalog.model(request.model).architecture, request)
    rate = 800e12 * GEMM_EFFICIENCY  # FP8_CARD's achievable BF16 rate, as a step reaches it
    halved = work.float8_flops / rate / 2  # the FP8 rate is twice the BF16 one
    saving = _step(catalog, FP8_CARD) - _step(catalog, FP8_CARD, float8=True)
    assert 0.6 * halved < saving < halved  # less the operands' casts


def test_a_card_without_fp8_gains_nothing_and_pays_the_casts(catalog: Catalog) -> None:
    assert _step(catalog, BF16_CARD, float8=True) > _step(catalog, BF16_CARD)


def test_the_speedup_is_the_rated_fp8_over_bf16_ratio() -> None:
    assert float8_speedup(FP8_CARD) == pytest.approx(2.0)
    assert float8_speedup(BF16_CARD) == 1.0


def test_only_the_decoder_linears_multiply_in_fp8(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    work = workload(arch, resolve(Request(**RUN, float8=True, grad_checkpointing=False)))
    head = 6.0 * arch.hidden_size * arch.vocab_size * work.tokens  # forward + backward
    assert work.float8_flops == pytest.approx(work.matmul_flops - head)


def test_float8_changes_no_memory(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    plain = footprint(arch, resolve(Request(**RUN)))
    fp8 = footprint(arch, resolve(Request(**RUN, float8=True)))
    assert fp8.total == pytest.approx(plain.total)


def test_a_qlora_base_is_not_float8(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    work = workload(arch, resolve(Request(**{**RUN, "method": "qlora"}, float8=True)))
    assert work.float8_flops == 0.0 and work.float8_cast_bytes == 0.0
    est = estimate(Request(**{**RUN, "method": "qlora"}, float8=True), catalog_with(FP8_CARD))
    assert any("does not apply to QLoRA" in w for w in est.warnings)


def test_a_named_card_without_fp8_is_warned_about() -> None:
    est = estimate(Request(**RUN, float8=True, gpu="b16"), catalog_with(BF16_CARD))
    assert any("no FP8 tensor cores" in w for w in est.warnings)


def test_the_reply_says_float8_is_not_fitted() -> None:
    est = estimate(Request(**RUN, float8=True, gpu="f8"), catalog_with(FP8_CARD))
    assert any("not fitted on measured float8 runs" in w for w in est.warnings)


def test_the_band_says_no_published_run_used_float8() -> None:
    est = estimate(Request(**RUN, float8=True, gpu="f8"), catalog_with(FP8_CARD))
    assert est.uncertainty is not None and "used float8" in est.uncertainty.basis
