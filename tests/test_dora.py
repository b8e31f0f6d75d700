"""DoRA (PEFT's ``use_dora``): magnitude vectors trained with the adapters, two more
output-sized tensors kept per adapted linear, and the weight norm recomputed on every
forward."""

from __future__ import annotations

import pytest

from adapters.parse import QueryError, parse_query
from adapters.trainconfig import read_config
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.activations import activation_bytes, dora_workspace_bytes
from engine.choices import Sharding
from engine.constants import DORA_SAVED_BYTES, DORA_WEIGHT_BYTES
from engine.memory import footprint
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.variant_work import dora_work
from engine.workload import workload
from tests.helpers import gpu

CAT = default_catalog()
CARD = gpu("g80", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0)
RUN = {"model": "llama-3.1-8b", "method": "lora", "grad_checkpointing": False,
       "seq_len": 1024}


def _arch(catalog: Catalog):
    return catalog.model("llama-3.1-8b").architecture


def test_dora_keeps_two_outputs_per_adapted_linear(catalog: Catalog) -> None:
    arch = _arch(catalog)
    plain = activation_bytes(arch, Request(**RUN))
    dora = activation_bytes(arch, Request(**RUN, dora=True))
    outputs = arch.lora_output_width("all-linear")
    assert dora - plain == pytest.approx(1024 * DORA_SAVED_BYTES * outputs)


def test_dora_trains_a_magnitude_per_output(catalog: Catalog) -> None:
    arch = _arch(catalog)
    plain = footprint(arch, Request(**RUN))
    dora = footprint(arch, Request(**RUN, dora=True))
    magnitudes = arch.lora_magnitudes("all-linear")
    assert (dora.adapter - plain.adapter) * 1e9 == pytest.approx(4 * magnitudes)


def test_the_largest_linears_norm_workspace_is_counted(catalog: Catalog) -> None:
    arch = _arch(catalog)
    d_in, d_out = 14336, 4096  # the down projection: the widest input
    assert dora_workspace_bytes(arch, Request(**RUN, dora=True)) == pytest.approx(
        6 * d_in * d_out + 2 * d_in * d_in
    )
    assert dora_workspace_bytes(arch, Request(**RUN)) == 0.0


def test_the_weight_norm_is_recomputed_on_every_forward(catalog: Catalog) -> None:
    arch = _arch(catalog)
    _, once, _ = dora_work(arch, Request(**RUN, dora=True))
    _, twice, _ = dora_work(arch, Request(**{**RUN, "grad_checkpointing": True}, dora=True))
    weights = sum(d_in * d_out * n for d_in, d_out, n, _ in arch.adapted_shapes("all-linear"))
    assert once == pytest.approx(DORA_WEIGHT_BYTES * weights)
    assert twice == pytest.approx(2 * once)


def test_with_lora_dropout_the_base_matmul_runs_again(catalog: Catalog) -> None:
    arch = _arch(catalog)
    without, _, _ = dora_work(arch, Request(**RUN, dora=True))
    with_dropout, _, _ = dora_work(arch, Request(**RUN, dora=True, lora_dropout=0.05))
    active = sum(d_in * d_out * k for d_in, d_out, _, k in arch.adapted_shapes("all-linear"))
    assert with_dropout - without == pytest.approx(1024 * 4 * active)


def test_dora_is_slower_than_lora(catalog: Catalog) -> None:
    arch = _arch(catalog)
    lora = workload(arch, resolve(Request(**RUN)))
    dora = workload(arch, resolve(Request(**RUN, dora=True)))
    assert (step_time(dora, CARD, 1, Sharding.NONE, False).step_s
            > 1.1 * step_time(lora, CARD, 1, Sharding.NONE, False).step_s)


def test_a_full_fine_tune_ignores_dora(catalog: Catalog) -> None:
    arch = _arch(catalog)
    full = {**RUN, "method": "full"}
    assert footprint(arch, Request(**full, dora=True)).total == pytest.approx(
        footprint(arch, Request(**full)).total
    )


@pytest.mark.parametrize("text", ["8b lora dora", "8b lora use_dora", "8b lora use_dora=True"])
def test_dora_words_turn_it_on(text: str) -> None:
    assert parse_query(text, CAT).dora is True


def test_dora_beside_full_is_refused() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b full dora", CAT)
    assert "say lora or qlora" in caught.value.message


@pytest.mark.parametrize("config", [
    "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\npeft_use_dora: true\n",
    "model_name_or_path: meta-llama/Llama-3.1-8B\nfinetuning_type: lora\nuse_dora: true\n",
    "model:\n  _component_: torchtune.models.llama3_1.lora_llama3_1_8b\n  use_dora: True\n",
])
def test_configs_say_dora_as_their_frameworks_do(config: str) -> None:
    assert read_config(config).fields["dora"] is True


def test_an_estimate_with_dora_runs_through() -> None:
    est = estimate(Request(model="llama-3.1-70b", method="qlora", dora=True,
                           dataset_tokens=10**7, framework="hf"))
    assert est.options and est.options[0].timing.gpu_hours


def test_the_reply_names_dora_and_says_no_published_run_used_it() -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", dora=True))
    assert any("DoRA (magnitudes" in a for a in est.assumptions)
    assert est.uncertainty is not None and "used DoRA" in est.uncertainty.basis


@pytest.mark.parametrize("text", [
    "8b lora rslora h100", "8b lora use_rslora=True h100", "8b lora+ h100",
    "8b lora loraplus_lr_ratio 16 h100",
])
def test_rslora_and_lora_plus_change_nothing(text: str) -> None:
    request = parse_query(text, CAT)
    assert request.dora is False and request.gpu_count is None
    assert request.effective_method.value == "lora"
