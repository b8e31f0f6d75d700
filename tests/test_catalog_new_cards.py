"""Cards people named that the catalog lacked (RTX A5000, RTX 4080, H800, B300...): each
resolves by the names people and ``nvidia-smi`` use, and carries the figures its sources
give (export variants: H100/A100 compute with the NVLink cut)."""

from __future__ import annotations

import pytest

from adapters.query.names import resolve_gpu
from catalog.loader import default_catalog
from catalog.skypilot import NOT_IN_CATALOG, map_accelerator
from engine.specs import GpuSpec

NEW_CARDS = (
    "b300", "h800-sxm", "h20", "a800-80gb-sxm", "a30", "l20", "rtx-pro-6000", "rtx-a5000",
    "rtx-a4000", "rtx-4080", "rtx-3090-ti", "rtx-3080", "rtx-2080-ti", "p100", "mi250",
    "mi210",
)  # fmt: skip


def _gpu(card: str) -> GpuSpec:
    return default_catalog().gpus[card]


@pytest.mark.parametrize("card", NEW_CARDS)
def test_the_card_is_in_the_catalog_with_sourced_figures(card: str) -> None:
    g = _gpu(card)
    assert g.spec_source.strip() and g.matmul_source.startswith(("measured", "derived"))
    assert g.hbm_gbps is not None and g.link_gbps is not None


@pytest.mark.parametrize(("typed", "card"), [
    ("rtx a5000", "rtx-a5000"), ("a5000", "rtx-a5000"), ("NVIDIA RTX A5000", "rtx-a5000"),
    ("a4000", "rtx-a4000"), ("NVIDIA RTX A4000", "rtx-a4000"),
    ("4080", "rtx-4080"), ("rtx 4080", "rtx-4080"), ("NVIDIA GeForce RTX 4080", "rtx-4080"),
    ("3080", "rtx-3080"), ("NVIDIA GeForce RTX 3080", "rtx-3080"),
    ("3090 ti", "rtx-3090-ti"), ("3090ti", "rtx-3090-ti"),
    ("NVIDIA GeForce RTX 3090 Ti", "rtx-3090-ti"), ("2080 ti", "rtx-2080-ti"),
    ("h800", "h800-sxm"), ("NVIDIA H800", "h800-sxm"),
    ("a800", "a800-80gb-sxm"), ("NVIDIA A800-SXM4-80GB", "a800-80gb-sxm"),
    ("h20", "h20"), ("NVIDIA H20", "h20"), ("l20", "l20"), ("a30", "a30"),
    ("rtx pro 6000", "rtx-pro-6000"), ("b300", "b300"), ("NVIDIA B300 SXM6 AC", "b300"),
    ("mi250", "mi250"), ("mi210", "mi210"), ("AMD Instinct MI210", "mi210"),
    ("p100", "p100"), ("Tesla P100-PCIE-16GB", "p100"),
])  # fmt: skip
def test_people_and_nvidia_smi_names_resolve_to_the_card(typed: str, card: str) -> None:
    from adapters.query import parse_query

    assert parse_query(f"8b lora 50M tokens 2x {typed}", default_catalog()).gpu == card


@pytest.mark.parametrize(("typed", "card"), [
    ("h200", "h200-sxm"), ("h100", "h100-sxm"), ("a100", "a100-80gb-sxm"),
    ("mi250x", "mi250x"), ("3090", "rtx-3090"), ("4090", "rtx-4090"), ("l40", "l40"),
    ("a10", "a10"), ("l4", "l4"), ("a6000", "rtx-a6000"), ("gb200", "gb200"),
])  # fmt: skip
def test_the_new_names_take_no_existing_card_s_name(typed: str, card: str) -> None:
    assert resolve_gpu(default_catalog(), typed) == card


def test_export_variants_keep_the_compute_and_cut_the_nvlink() -> None:
    h800, h100 = _gpu("h800-sxm"), _gpu("h100-sxm")
    a800, a100 = _gpu("a800-80gb-sxm"), _gpu("a100-80gb-sxm")
    assert (h800.bf16_tflops, h800.hbm_gbps) == (h100.bf16_tflops, h100.hbm_gbps)
    assert (a800.bf16_tflops, a800.hbm_gbps) == (a100.bf16_tflops, a100.hbm_gbps)
    assert h800.link_gbps == 200 < h100.link_gbps
    assert a800.link_gbps == 200 < a100.link_gbps


def test_the_h20_is_a_cut_down_hopper() -> None:
    h20 = _gpu("h20")
    assert (h20.bf16_tflops, h20.memory_gb, h20.hbm_gbps) == (148, 96, 4000)
    assert h20.compute_capability == 9.0 and h20.flash_attention_tflops is not None


def test_the_b300_holds_what_nvidia_smi_reports_not_the_decimal_label() -> None:
    """Sold as 288 GB (decimal); nvidia-smi reports 275,040 MiB = 268.6 GiB."""
    b300 = _gpu("b300")
    assert b300.memory_gb == 268 and b300.capacity_gb < 288.5
    assert b300.bf16_tflops == _gpu("b200").bf16_tflops


@pytest.mark.parametrize("card", ["rtx-2080-ti", "p100"])
def test_cards_without_bf16_train_in_fp16_without_flash_attention_2(card: str) -> None:
    g = _gpu(card)
    assert (g.bf16, g.bf16_tflops, g.flash_attention_2) == (False, None, "no")


@pytest.mark.parametrize(("cloud", "accelerator", "instance", "gib", "card"), [
    ("runpod", "RTXA5000", "1x_RTXA5000_SECURE", None, "rtx-a5000"),
    ("runpod", "RTXA4000", "1x_RTXA4000_SECURE", None, "rtx-a4000"),
    ("lambda", "A4000", "gpu_1x_a4000", None, "rtx-a4000"),
    ("vast", "RTXPRO6000S", "1x-RTX_PRO_6000_S-32-65536", None, "rtx-pro-6000"),
    ("runpod", "RTXPRO6000WS", "1x_RTXPRO6000WS_SECURE", None, "rtx-pro-6000"),
    ("newcloud", "B300", "b300.8x", None, "b300"),
    ("gcp", "P100", "", None, "p100"),
    ("vast", "RTX3080", "4x-RTX_3080-32-65536", 10.0, "rtx-3080"),
])  # fmt: skip
def test_skypilot_names_of_the_new_cards_map_to_them(
    cloud: str, accelerator: str, instance: str, gib: float | None, card: str
) -> None:
    assert accelerator not in NOT_IN_CATALOG
    assert map_accelerator(cloud, accelerator, instance, gib) == card


@pytest.mark.parametrize(("instance", "gib"), [
    ("1x-RTX_3080_Ti-32-65536", 12.0), ("4x-RTX_3080-32-65536", 12.0),
    ("1x-RTX_3080-32-65536", None),
])  # fmt: skip
def test_an_rtx3080_row_that_may_be_another_3080_is_not_guessed(
    instance: str, gib: float | None
) -> None:
    """Vast writes ``RTX3080`` for the 10 GB card, the 12 GB card and the 3080 Ti."""
    assert map_accelerator("vast", "RTX3080", instance, gib) is None


@pytest.mark.parametrize("card", ["rtx-a5000", "rtx-a4000"])
def test_workstation_cards_rented_as_single_machines_plan_one_machine(card: str) -> None:
    assert _gpu(card).max_nodes == 1
