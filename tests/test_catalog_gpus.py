"""The shipped GPU catalog (catalog/gpus.yaml): coverage, consistency, lookup."""

from __future__ import annotations

import pytest

from catalog.loader import default_catalog, load_gpus
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
