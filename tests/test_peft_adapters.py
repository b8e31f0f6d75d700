"""PEFT's FP32 adapters on a BF16 base (the ``hf`` profile): the casts around every adapted
linear cost time, and bitsandbytes' dequantization costs kernels."""

from __future__ import annotations

import pytest

from adapters.query import parse_query
from engine import Request, estimate
from engine.constants import (
    BNB_DOUBLE_QUANT_KERNELS,
    KERNELS_PER_ADAPTER,
    PEFT_ADAPTER_CAST_BYTES,
    PEFT_ADAPTER_KERNELS,
)
from engine.profiles import resolve
from engine.specs import Catalog
from engine.variant_work import fp32_adapter_work
from engine.workload import workload
from tests.helpers import resolved_footprint


def _run(**fields: object) -> Request:
    return resolve(Request(**{"model": "llama-3.1-8b", "method": "lora", "lora_dropout": 0.0,
                              "seq_len": 2048, "micro_batch": 4, **fields}))


def test_only_frameworks_with_fp32_adapters_move_their_casts(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    for framework in ("generic", "torchtune", "litgpt", "unsloth"):
        assert fp32_adapter_work(arch, _run(framework=framework)) == (0, 0)
    moved, kernels = fp32_adapter_work(arch, _run(framework="hf"))
    assert moved > 0 and kernels > 0


def test_a_full_fine_tune_has_no_adapter_casts(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    full = _run(framework="hf", method="full")
    assert fp32_adapter_work(arch, full) == (0, 0)


def test_the_casts_move_their_bytes_per_element_of_every_adapted_input_and_output(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    run = _run(framework="hf")
    width = sum((d_in + d_out) * k for d_in, d_out, _, k in arch.adapted_shapes("all-linear"))
    passes = 3  # forward, checkpointing's recomputed forward, backward
    moved, _ = fp32_adapter_work(arch, run)
    per_element = PEFT_ADAPTER_CAST_BYTES[("lora", "autocast")]
    assert moved == pytest.approx(2048 * 4 * per_element * width * passes)


def test_training_plainly_in_bf16_moves_more_than_under_autocast(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    autocast = _run(framework="hf")
    plain = _run(framework="hf", state_precision="pure-bf16")
    assert (
        fp32_adapter_work(arch, plain)[0]
        > fp32_adapter_work(arch, autocast)[0]
    )


def test_the_adapter_kernels_replace_the_generic_count_per_forward_and_backward(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    _, kernels = fp32_adapter_work(arch, _run(framework="hf"))
    extra = PEFT_ADAPTER_KERNELS[("lora", "autocast")] - KERNELS_PER_ADAPTER
    passes = 4  # forward, recomputed forward, and a backward of twice the kernels
    adapted = sum(lin.count for lin in arch.targeted_linears("all-linear"))  # dense: all run
    assert kernels == pytest.approx(extra * adapted * passes)


def test_hf_lora_moves_more_memory_bound_bytes_than_the_same_run_in_generic(
    catalog: Catalog,
) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    hf, generic = workload(arch, _run(framework="hf")), workload(arch, _run())
    assert hf.dequant_bytes > generic.dequant_bytes == 0


def test_double_quantization_adds_the_absmax_dequantization_kernels(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    single = workload(arch, _run(method="qlora", double_quant=False))
    double = workload(arch, _run(method="qlora", double_quant=True))
    passes = 3
    assert double.kernels - single.kernels == pytest.approx(
        passes * BNB_DOUBLE_QUANT_KERNELS * arch.decoder_matrices
    )


def test_hf_keeps_peft_adapters_in_fp32_unless_told_otherwise() -> None:
    assert resolve(Request(model="x", method="lora", framework="hf")).fp32_adapters
    assert not resolve(Request(model="x", method="lora")).fp32_adapters
    said = Request(model="x", method="lora", framework="hf", fp32_adapters=False)
    assert not resolve(said).fp32_adapters


def test_bf16_adapters_said_outright_move_no_casts(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    bf16 = _run(framework="hf", fp32_adapters=False)
    assert fp32_adapter_work(arch, bf16) == (0, 0)


def test_fp32_adapters_said_under_another_framework_cost_their_casts(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    said = _run(framework="torchtune", fp32_adapters=True)
    assert fp32_adapter_work(arch, said)[0] > 0


def _tip(text: str) -> list[str]:
    est = estimate(parse_query(text))
    return [w for w in est.warnings if "autocast_adapter_dtype=False" in w]


def test_a_long_hf_lora_micro_batch_on_a_fast_card_is_told_bf16_adapters_would_be_faster() -> None:
    (tip,) = _tip("8b lora trl seq 8192 1x h200 20M tokens")
    assert "`bf16 adapters`" in tip and "of the time on 1x h200-sxm" in tip


def test_no_bf16_adapters_tip_once_the_adapters_are_bf16() -> None:
    assert _tip("8b lora trl seq 8192 1x h200 20M tokens bf16 adapters") == []


def test_no_bf16_adapters_tip_on_trls_qlora_path_whose_adapters_are_bf16_already() -> None:
    assert _tip("8b qlora trl seq 8192 1x h200 20M tokens") == []


def test_the_framework_line_names_the_fp32_adapters_only_when_they_are_on() -> None:
    on = estimate(parse_query("8b lora trl 20M tokens"))
    off = estimate(parse_query("8b lora trl bf16 adapters 20M tokens"))
    assert any("FP32 LoRA adapters (PEFT)" in a for a in on.assumptions)
    assert not any("FP32 LoRA adapters (PEFT)" in a for a in off.assumptions)


def test_fp32_adapters_keep_4_byte_weights_even_in_pure_bf16(catalog: Catalog) -> None:
    """PEFT's autocast makes the adapters FP32 whatever the regime: `hf pure bf16`."""
    fp32 = resolved_footprint(catalog, model="llama-3.1-8b", method="lora",
                              state_precision="pure-bf16", fp32_adapters=True)
    bf16 = resolved_footprint(catalog, model="llama-3.1-8b", method="lora",
                              state_precision="pure-bf16", fp32_adapters=False)
    assert fp32.adapter == pytest.approx(2 * bf16.adapter)
