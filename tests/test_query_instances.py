"""Cloud instance types name their cards: ``p4d.24xlarge`` is 8 A100 40GB, two of them
are two nodes of 8, and a cloud's name beside one says nothing more."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from adapters.parse import parse_query
from catalog.loader import default_catalog
from tests.helpers import catalog_with, followup, gpu, parsed, refused


@pytest.mark.parametrize(("text", "card", "count"), [
    ("8b lora g5.2xlarge", "a10g", 1),
    ("8b lora on a ml.g5.2xlarge", "a10g", 1),
    ("8b lora g5.12xlarge", "a10g", 4),
    ("70b full p4d.24xlarge", "a100-40gb-sxm", 8),
    ("70b full p4de.24xlarge", "a100-80gb-sxm", 8),
    ("70b full p5.48xlarge", "h100-sxm", 8),
    ("70b qlora a2-highgpu-1g", "a100-40gb-sxm", 1),
    ("70b qlora a3-highgpu-8g", "h100-sxm", 8),
    ("70b qlora Standard_NC24ads_A100_v4", "a100-80gb-pcie", 1),
    ("70b full gpu_8x_h100_sxm5", "h100-sxm", 8),
])
def test_an_instance_type_names_its_card_and_count(text: str, card: str, count: int) -> None:
    request = parsed(text)
    assert (request.gpu, request.gpu_count) == (card, count)


def test_azure_sizes_may_leave_out_standard() -> None:
    assert parsed("70b qlora ND96asr_v4").gpu_count == 8


@pytest.mark.parametrize("text", [
    "70b full 2x p4d.24xlarge",
    "70b full 2 x p4d.24xlarge",
    "70b full 2 p4d.24xlarge instances",
    "70b full two p4d.24xlarge nodes",
    "70b full p4d.24xlarge x2",
    "70b full p4d.24xlarge 2 nodes",
])
def test_a_count_of_instances_is_that_many_nodes(text: str) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes) == (16, 2)


def test_single_card_instances_counted_are_separate_machines() -> None:
    request = parsed("8b lora 4x g5.xlarge")
    assert (request.gpu, request.gpu_count, request.nodes) == ("a10g", 4, 4)


def test_a_number_that_belongs_to_a_setting_is_not_a_count_of_instances() -> None:
    request = parsed("8b lora bs 4 p4d.24xlarge")
    assert (request.micro_batch, request.gpu_count, request.nodes) == (4, 8, None)


@pytest.mark.parametrize("text", [
    "8b lora aws p4d.24xlarge",
    "8b lora sagemaker --instance_type ml.p4d.24xlarge",
    "8b lora on gcp a2-highgpu-8g",
])
def test_a_cloud_named_beside_its_instance_says_nothing_more(text: str) -> None:
    assert parsed(text).gpu_count == 8


def test_a_cloud_named_alone_is_still_refused_with_how_to_price_it() -> None:
    err = refused("8b lora h100 on aws")
    assert "say your cloud's rate" in err.message


def test_a_follow_up_may_name_an_instance() -> None:
    request = followup("70b qlora 50M tokens h100", "p4de.24xlarge")
    assert (request.gpu, request.gpu_count) == ("a100-80gb-sxm", 8)


def test_an_instance_type_the_catalog_lacks_is_not_guessed() -> None:
    err = refused("8b lora g5.3xlarge")
    assert "g5.3xlarge" in err.message


def test_an_instance_type_listed_under_two_cards_is_a_catalog_error() -> None:
    twice = {"instances": {"x1.big": 8}, "instances_source": "test"}
    with pytest.raises(ValueError, match="listed twice"):
        catalog_with(gpu("one", 80, **twice), gpu("two", 40, **twice))


@pytest.mark.parametrize("count", [0, 1000])
def test_an_instance_carries_a_bounded_number_of_cards(count: int) -> None:
    with pytest.raises(ValidationError):
        gpu("one", 80, instances={"x1.big": count}, instances_source="test")


def test_instances_need_a_source() -> None:
    with pytest.raises(ValidationError, match="instances_source"):
        gpu("one", 80, instances={"x1.big": 8})


def test_the_parser_reads_instances_of_any_catalog() -> None:
    catalog = catalog_with(gpu("card", 80, instances={"big.metal": 4}, instances_source="t"))
    assert parse_query("8b lora big.metal", catalog).gpu_count == 4
    assert default_catalog().find_instance("big.metal") is None
