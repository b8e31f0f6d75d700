"""The shipped GPU catalog (catalog/gpus.yaml): coverage, consistency, lookup."""

from __future__ import annotations

import pytest

from catalog.loader import default_catalog, load_gpus
from engine.constants import FA_EFFICIENCY
from engine.specs import GpuSpec, normalize_name


@pytest.fixture(scope="module")
def gpus() -> list[GpuSpec]:
    return load_gpus()


def test_catalog_lists_at_least_25_cards(gpus: list[GpuSpec]) -> None:
    assert len(gpus) >= 25


def test_dense_bf16_never_exceeds_fp8(gpus: list[GpuSpec]) -> None:
    over = [
        g.id
        for g in gpus
        if g.bf16_tflops is not None and g.fp8_tflops is not None and g.bf16_tflops > g.fp8_tflops
    ]
    assert over == []


def test_every_price_has_a_source_and_an_as_of_date(gpus: list[GpuSpec]) -> None:
    unsourced = [
        g.id
        for g in gpus
        if g.price_per_gpu_hour is not None
        and (not g.price_source.strip() or g.price_as_of is None)
    ]
    assert unsourced == []


def test_names_and_aliases_are_unique_across_cards_after_normalization(
    gpus: list[GpuSpec],
) -> None:
    owner: dict[str, str] = {}
    clashes: list[tuple[str, str, str]] = []
    for g in gpus:
        for key in {normalize_name(n) for n in (g.id, g.name, *g.aliases)}:
            if key in owner:
                clashes.append((key, owner[key], g.id))
            owner[key] = g.id
    assert clashes == []


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("h100", "h100-sxm"), ("a100", "a100-80gb-sxm"), ("4090", "rtx-4090")],
)
def test_common_short_names_resolve_to_the_chosen_card(typed: str, expected: str) -> None:
    assert default_catalog().find_gpu(typed) == expected


def test_amd_instinct_cards_have_vendor_amd(gpus: list[GpuSpec]) -> None:
    instinct = [g for g in gpus if g.id.startswith("mi") or "AMD" in g.name]
    assert instinct, "expected AMD Instinct cards in the catalog"
    assert {g.vendor for g in instinct} == {"AMD"}


# --- Physical figures for the time model (issue 13) and prices (issue 15 item 6) ---

# Live NVIDIA cards for which no public rental price was found (see docs/gpus.md), and
# the cards added after the 2026-12-02 price snapshot was taken (their price_source says
# why). A card leaves this set once it gains a sourced price.
LIVE_NVIDIA_WITHOUT_PUBLIC_PRICE = {
    "b100", "h200-nvl",
    "h20", "a30", "l20", "rtx-pro-6000", "rtx-4080",
}  # fmt: skip

# The headroom over the rated dense figure a measured matmul rate may show: short
# benchmark bursts run above the rated boost clock on GeForce cards (RTX 3090/5090).
RATED_HEADROOM = 1.05


PROFESSIONAL_PCIE_CARDS = (
    "a40", "rtx-a6000", "rtx-6000-ada", "l40s", "rtx-a5000", "rtx-a4000", "rtx-pro-6000",
    "a30", "l20",
)  # fmt: skip
"""PCIe cards that are not GeForce: NVIDIA's stock driver gives them peer-to-peer."""


def _rated_dense(g: GpuSpec) -> float:
    """The rated dense tensor rate the matmul figure is measured against (TFLOPs)."""
    return g.bf16_tflops if g.bf16_tflops is not None else g.fp16_tflops


def _is_hbm_data_center_card(g: GpuSpec) -> bool:
    """An HBM accelerator (1.5 TB/s or more) that is not a GeForce card."""
    return "GeForce" not in g.name and (g.hbm_gbps or 0.0) >= 1500


def test_every_card_has_an_hbm_bandwidth(gpus: list[GpuSpec]) -> None:
    assert [g.id for g in gpus if g.hbm_gbps is None] == []


def test_every_card_has_an_achievable_matmul_rate(gpus: list[GpuSpec]) -> None:
    assert [g.id for g in gpus if g.matmul_tflops is None] == []


def test_every_matmul_rate_names_its_source(gpus: list[GpuSpec]) -> None:
    unsourced = [g.id for g in gpus if g.matmul_tflops is not None and not g.matmul_source.strip()]
    assert unsourced == []


def test_matmul_source_says_measured_or_derived(gpus: list[GpuSpec]) -> None:
    unclear = [g.id for g in gpus if not g.matmul_source.startswith(("measured", "derived"))]
    assert unclear == []


def test_matmul_rate_never_exceeds_the_rated_dense_figure_by_more_than_5_percent(
    gpus: list[GpuSpec],
) -> None:
    over = [
        (g.id, g.matmul_tflops, _rated_dense(g))
        for g in gpus
        if g.matmul_tflops is not None and g.matmul_tflops > _rated_dense(g) * RATED_HEADROOM
    ]
    assert over == []


def test_data_center_cards_reach_less_than_their_rated_matmul_rate(gpus: list[GpuSpec]) -> None:
    """HBM cards are power- or clock-bound below the datasheet (MAMF 51-97%)."""
    hbm = [g for g in gpus if _is_hbm_data_center_card(g)]
    assert hbm
    at_or_over = [
        g.id for g in hbm if g.matmul_tflops is not None and g.matmul_tflops >= _rated_dense(g)
    ]
    assert at_or_over == []


def test_every_card_has_an_intra_node_link(gpus: list[GpuSpec]) -> None:
    assert [g.id for g in gpus if g.link_gbps is None] == []


def test_nvswitch_cards_link_faster_than_any_pcie_slot(gpus: list[GpuSpec]) -> None:
    pcie5_x16_gbps = 63.0
    slow = [
        g.id
        for g in gpus
        if g.fabric == "nvlink" and g.link_gbps is not None and g.link_gbps <= pcie5_x16_gbps
    ]
    assert slow == []


def test_pcie_cards_link_at_no_more_than_a_pcie5_x16_slot(gpus: list[GpuSpec]) -> None:
    """PCIe-fabric cards are timed over the slot; NVLink bridges join only pairs or fours."""
    fast = [g.id for g in gpus if g.fabric == "pcie" and (g.link_gbps or 0.0) > 63.0]
    assert fast == []


@pytest.mark.parametrize(
    "card",
    ["rtx-3090", "rtx-4090", "rtx-5090", "rtx-4080", "rtx-3090-ti", "rtx-3080", "rtx-2080-ti"],
)
def test_geforce_cards_have_no_peer_to_peer(card: str) -> None:
    spec = default_catalog().gpus[card]
    assert spec.p2p is False


@pytest.mark.parametrize("card", PROFESSIONAL_PCIE_CARDS)
def test_professional_pcie_cards_keep_peer_to_peer(card: str) -> None:
    """NVIDIA's stock driver withholds PCIe peer access from GeForce cards only."""
    assert default_catalog().gpus[card].p2p is True


def test_data_center_cards_keep_peer_to_peer(gpus: list[GpuSpec]) -> None:
    assert [g.id for g in gpus if _is_hbm_data_center_card(g) and not g.p2p] == []


def test_every_live_nvidia_card_has_a_price_except_those_documented_without_one(
    gpus: list[GpuSpec],
) -> None:
    unpriced = {
        g.id
        for g in gpus
        if g.vendor == "NVIDIA" and g.status == "live" and g.price_per_gpu_hour is None
    }
    assert unpriced == LIVE_NVIDIA_WITHOUT_PUBLIC_PRICE


def test_a_card_without_a_price_says_how_to_give_it_one(gpus: list[GpuSpec]) -> None:
    unexplained = [
        g.id
        for g in gpus
        if g.id in LIVE_NVIDIA_WITHOUT_PUBLIC_PRICE and "$X/hr" not in g.price_source
    ]
    assert unexplained == []


@pytest.mark.parametrize("card", ["mi300x", "gb200"])
def test_cards_issue_15_found_unpriced_now_have_a_sourced_price(card: str) -> None:
    spec = default_catalog().gpus[card]
    assert spec.price_per_gpu_hour is not None
    assert "http" in spec.price_source or ".com" in spec.price_source


def test_every_flash_attention_rate_names_its_source_as_measured_or_derived(
    gpus: list[GpuSpec],
) -> None:
    unclear = [
        g.id
        for g in gpus
        if g.flash_attention_tflops is not None
        and not g.flash_attention_source.startswith(("measured", "derived"))
    ]
    assert unclear == []


def test_a_flash_attention_rate_is_only_given_where_it_is_below_the_default_share(
    gpus: list[GpuSpec],
) -> None:
    # The column exists for cards whose FlashAttention-2 falls behind their matmul rate
    # (Hopper); a figure at or above FA_EFFICIENCY x matmul would make the card faster.
    over = [
        g.id
        for g in gpus
        if g.flash_attention_tflops is not None
        and (g.matmul_tflops is None or g.flash_attention_tflops >= FA_EFFICIENCY * g.matmul_tflops)
    ]
    assert over == []


def test_every_hopper_and_sm100_card_has_a_flash_attention_2_rate(gpus: list[GpuSpec]) -> None:
    new_cores = [g for g in gpus if g.compute_capability in (9.0, 10.0)]
    assert len(new_cores) >= 9
    assert [g.id for g in new_cores if g.flash_attention_tflops is None] == []


def test_every_nvidia_card_states_its_compute_capability_and_no_other_does(
    gpus: list[GpuSpec],
) -> None:
    stated = [g.id for g in gpus if g.compute_capability is not None]
    assert stated == [g.id for g in gpus if g.vendor == "NVIDIA"]


def test_a_card_off_the_usual_machine_or_cluster_says_why() -> None:
    odd = [g for g in default_catalog().gpus.values()
           if (g.gpus_per_node != 8 and not g.gpus_per_node_source)
           or (g.max_nodes is not None and not g.max_nodes_source)]
    assert odd == []


def test_geforce_cards_rent_as_single_machines_and_gh200_one_per_machine() -> None:
    gpus = default_catalog().gpus
    geforce = [g.id for g in gpus.values() if "GeForce" in g.name]
    assert len(geforce) >= 7
    assert {gpus[c].max_nodes for c in geforce} == {1}
    assert gpus["gh200"].gpus_per_node == 1
