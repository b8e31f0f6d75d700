"""Reading SkyPilot ``vms.csv`` files: columns by header, per-GPU prices, cloud quirks,
and the accelerator-name table (unknown names counted, never guessed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from catalog.skypilot import (
    ACCELERATOR_MAP,
    NOT_IN_CATALOG,
    MalformedCatalog,
    Offer,
    ParsedCatalog,
    map_accelerator,
    parse_vms_csv,
)
from engine.specs import Catalog

FIXTURES = Path(__file__).parent / "fixtures" / "skypilot"


def parsed(cloud: str) -> ParsedCatalog:
    return parse_vms_csv((FIXTURES / cloud / "vms.csv").read_text(encoding="utf-8"), cloud)


def offers(cloud: str, card: str) -> list[Offer]:
    return [o for o in parsed(cloud).offers if o.card == card]


def test_price_is_divided_by_the_accelerator_count() -> None:
    [east, _, west] = offers("aws", "h100-sxm")
    assert (east.price, west.price) == (pytest.approx(7.0), pytest.approx(8.0))


def test_spot_is_read_per_availability_zone() -> None:
    assert sorted(o.spot for o in offers("aws", "h100-sxm")) == pytest.approx([2.3, 2.5, 3.0])


def test_columns_are_read_by_name_whatever_their_order() -> None:
    # RunPod puts Price last and SpotPrice before it.
    big = next(o for o in offers("runpod", "h100-sxm") if o.count == 8)
    assert (big.price, big.spot, big.region) == (pytest.approx(3.5), pytest.approx(2.5), "CA")


def test_a_blank_price_means_no_on_demand_offer() -> None:
    no_price = next(o for o in offers("aws", "a100-80gb-sxm") if o.region == "us-east-2")
    assert no_price.price is None and no_price.spot == pytest.approx(1.5)


def test_a_zero_spot_price_means_no_spot_offer() -> None:
    assert all(o.spot is None for o in parsed("vast").offers)


def test_spot_at_or_above_on_demand_is_dropped() -> None:
    assert [o.spot for o in parsed("azure").offers] == [None, None]


def test_a_known_wrong_gpu_count_is_corrected() -> None:
    cat = parsed("azure")
    nd = next(o for o in cat.offers if o.instance_type == "Standard_ND96isr_H100_v5")
    assert (nd.count, nd.price, cat.count_fixes) == (8.0, pytest.approx(12.0), 1)


def test_gcp_adds_the_host_vm_of_the_same_zone() -> None:
    [h100] = offers("gcp", "h100-sxm")
    assert h100.instance_type == "a3-highgpu-8g"
    assert (h100.price, h100.spot) == (pytest.approx((40 + 10) / 8), pytest.approx((16 + 4) / 8))


def test_gcp_l4_adds_its_g2_host() -> None:
    [l4] = offers("gcp", "l4")
    assert (l4.instance_type, l4.price) == ("g2-standard-4", pytest.approx(0.8))


def test_gcp_t4_is_priced_gpu_only() -> None:
    [t4] = offers("gcp", "t4")
    assert (t4.instance_type, t4.price) == ("", pytest.approx(0.35))


def test_gcp_accelerator_without_its_host_row_is_skipped_and_counted() -> None:
    cat = parsed("gcp")
    assert not offers("gcp", "a100-80gb-sxm") and cat.missing_host == 1


def test_cpu_and_host_rows_are_not_gpu_rows() -> None:
    assert (parsed("gcp").rows, parsed("gcp").gpu_rows) == (8, 5)


def test_tpu_rows_are_ignored_not_unknown() -> None:
    cat = parsed("gcp")
    assert cat.ignored == 1 and cat.unknown == {}


def test_an_unknown_accelerator_name_is_counted() -> None:
    assert parsed("aws").unknown == {"Trainium": 1}


def test_a_known_name_on_an_unknown_instance_type_is_counted_not_guessed() -> None:
    assert parsed("lambda").unknown == {"H100 @ gpu_1x_h100_nvl": 1, "X900": 1}


def test_cards_outside_the_catalog_are_ignored() -> None:
    assert (parsed("azure").ignored, parsed("runpod").ignored) == (1, 1)


def test_lambda_tells_h100_pcie_from_sxm_by_instance_type() -> None:
    cards = {o.instance_type: o.card for o in parsed("lambda").offers}
    assert cards["gpu_1x_h100_pcie"] == "h100-pcie"
    assert cards["gpu_8x_h100_sxm5"] == "h100-sxm"


def test_vast_tells_h100_nvl_by_instance_type() -> None:
    assert [o.card for o in parsed("vast").offers if o.accelerator == "H100"] == ["h100-nvl"]


def test_vast_a100_size_comes_from_per_gpu_memory() -> None:
    cards = {o.instance_type: o.card for o in parsed("vast").offers}
    assert cards["2x-A100_SXM4-32-65536"] == "a100-40gb-sxm"  # 80 GiB over 2 GPUs
    assert cards["1x-A100_SXM4-32-65536"] == "a100-80gb-sxm"


def test_vast_a100_without_memory_is_unknown() -> None:
    assert parsed("vast").unknown == {"A100 @ 1x-A100_PCIE-32-65536": 1}


def test_verda_multi_gpu_a100_name_maps_to_the_80gb_card() -> None:
    [a100] = offers("verda", "a100-80gb-sxm")
    assert (a100.accelerator, a100.price, a100.spot) == (
        "A100-80GB-160GB",
        pytest.approx(1.2),
        pytest.approx(0.5),
    )


def test_azure_h100_v5_sizes_are_sxm_and_nvl() -> None:
    assert [o.card for o in parsed("azure").offers] == ["h100-sxm", "h100-nvl"]


def test_h100_on_an_unlisted_cloud_is_not_guessed() -> None:
    assert map_accelerator("newcloud", "H100", "h100.8x") is None


def test_a_single_meaning_name_maps_on_any_cloud() -> None:
    assert map_accelerator("newcloud", "L40S", "anything") == "l40s"


def test_every_mapped_card_is_in_the_catalog(catalog: Catalog) -> None:
    assert {r.card for r in ACCELERATOR_MAP} <= set(catalog.gpus)


def test_no_ignored_name_has_a_mapping_rule() -> None:
    assert not NOT_IN_CATALOG & {r.accelerator for r in ACCELERATOR_MAP}


def test_a_missing_required_column_is_malformed() -> None:
    with pytest.raises(MalformedCatalog, match="AcceleratorCount"):
        parse_vms_csv("InstanceType,AcceleratorName,Price,Region\np5,H100,1.0,x\n", "aws")


def test_an_html_page_is_malformed() -> None:
    with pytest.raises(MalformedCatalog, match="missing column"):
        parse_vms_csv("<!DOCTYPE html><html><body>429 Too Many Requests</body></html>", "aws")


def test_a_file_without_gpu_rows_is_malformed() -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
    with pytest.raises(MalformedCatalog, match="no GPU rows"):
        parse_vms_csv(header + "m7i.large,,,0.1,us-east-1\n", "aws")


def test_mostly_unreadable_rows_are_malformed() -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
    rows = "g6e.xlarge,L40S,1,two dollars,us-east-1\ng6e.xlarge,L40S,one,2.0,us-east-1\n"
    with pytest.raises(MalformedCatalog, match="unreadable"):
        parse_vms_csv(header + rows, "aws")


def test_a_few_unreadable_rows_are_counted_and_skipped() -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
    good = "g6e.xlarge,L40S,1,2.0,us-east-1\n" * 3
    cat = parse_vms_csv(header + good + "g6e.xlarge,L40S,1,nan,us-east-1\n", "aws")
    assert (len(cat.offers), cat.bad_rows) == (3, 1)


def test_a_row_with_extra_cells_is_unreadable() -> None:
    header = "InstanceType,AcceleratorName,AcceleratorCount,Price,Region\n"
    good = "g6e.xlarge,L40S,1,2.0,us-east-1\n" * 3
    cat = parse_vms_csv(header + good + "g6e.xlarge,L40S,1,2.0,us-east-1,extra\n", "aws")
    assert cat.bad_rows == 1


def test_a_byte_order_mark_is_tolerated() -> None:
    text = "\ufeffInstanceType,AcceleratorName,AcceleratorCount,Price,Region\ng,L4,1,0.8,r\n"
    assert parse_vms_csv(text, "aws").offers[0].card == "l4"
