"""Cloud instance types name their cards: ``p4d.24xlarge`` is 8 A100 40GB, two of them
are two nodes of 8, and a cloud's name beside one says nothing more."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from adapters.parse import parse_query
from catalog.loader import default_catalog
from catalog.skypilot import COUNT_FIXES, GCP_HOSTS, map_accelerator
from engine.choices import Sharding
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
    "70b full p4d.24xlarge x 2",
    "70b full p4d.24xlarge 2 nodes",
])
def test_a_count_of_instances_is_that_many_nodes(text: str) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes) == (16, 2)


def test_single_card_instances_counted_are_separate_machines() -> None:
    request = parsed("8b lora 4x g5.xlarge")
    assert (request.gpu, request.gpu_count, request.nodes) == ("a10g", 4, 4)


@pytest.mark.parametrize(("text", "field", "value"), [
    ("8b lora bs 4 p4d.24xlarge", "micro_batch", 4),
    ("8b full steps 500 p4d.24xlarge", "steps", 500),
    ("8b full fsdp 8 p4d.24xlarge", "sharding", Sharding.FSDP),
    ("8b full fsdp degree 8 p4d.24xlarge", "sharding", Sharding.FSDP),
    ("8b full deepspeed stage 3 p4d.24xlarge", "sharding", Sharding.ZERO3),
])
def test_a_number_that_belongs_to_a_setting_is_not_a_count_of_instances(
    text: str, field: str, value: object
) -> None:
    request = parsed(text)
    assert (getattr(request, field), request.gpu_count, request.nodes) == (value, 8, 1)


@pytest.mark.parametrize("text", ["8b full 2 nodes p4d.24xlarge", "8b full --nnodes 2 p4d.24xlarge",
                                  "8b full p4d.24xlarge --nnodes 2"])
def test_nodes_said_beside_an_instance_count_instances(text: str) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes) == (16, 2)


def test_an_instance_type_is_one_machine() -> None:
    assert parsed("8b lora p4d.24xlarge").nodes == 1


def test_an_instance_larger_than_the_cards_machines_leaves_the_nodes_unsaid() -> None:
    request = parsed("8b lora a2-megagpu-16g")
    assert (request.gpu_count, request.nodes) == (16, None)


def test_a_follow_up_naming_one_instance_leaves_the_threads_nodes_behind() -> None:
    request = followup("8b full 2x p4d.24xlarge 50M tokens", "g5.48xlarge")
    assert (request.gpu, request.gpu_count, request.nodes) == ("a10g", 8, 1)


def test_samples_counted_as_instances_stay_samples() -> None:
    request = parsed("8b lora p4d.24xlarge 5000 instances of 512 tokens")
    assert (request.samples, request.gpu_count, request.nodes) == (5_000, 8, 1)


@pytest.mark.parametrize(("text", "quoted"), [
    ("8b lora 0x p4d.24xlarge", '"0x" is out of range'),
    ("8b lora 1000000x p5.48xlarge", '"1000000x" is out of range'),
    ("8b lora 4x h100 p4d.24xlarge", '"p4d.24xlarge" conflicts with "h100"'),
])
def test_a_refusal_quotes_the_words_as_typed(text: str, quoted: str) -> None:
    assert quoted in refused(text).message


def test_an_instances_rate_is_asked_for_per_card() -> None:
    err = refused("8b lora p4d.24xlarge $32.77/hr")
    assert 'say "$4.10/hr" ($32.77 / 8)' in err.message


def test_a_per_card_rate_beside_an_instance_is_read() -> None:
    assert parsed("8b lora p4d.24xlarge $4.10/hr").price_per_gpu_hour == 4.10


@pytest.mark.parametrize("text", [
    "8b lora aws p4d.24xlarge",
    "8b lora sagemaker --instance_type ml.p4d.24xlarge",
    "8b lora on gcp a2-highgpu-8g",
])
def test_a_cloud_named_beside_its_instance_says_nothing_more(text: str) -> None:
    assert parsed(text).gpu_count == 8


@pytest.mark.parametrize("cloud", ["aws", "sagemaker", "gcp"])
def test_a_cloud_named_alone_is_still_refused_with_how_to_price_it(cloud: str) -> None:
    err = refused(f"8b lora h100 on {cloud}")
    assert "say your cloud's rate" in err.message and "p4d.24xlarge" in err.message


def test_a_follow_up_may_name_an_instance() -> None:
    request = followup("70b qlora 50M tokens h100", "p4de.24xlarge")
    assert (request.gpu, request.gpu_count) == ("a100-80gb-sxm", 8)


@pytest.mark.parametrize("word", ["g5.3xlarge", "ml.g6.8xlarge", "a3-edgegpu-8g",
                                  "Standard_ND96isr_H200_v5", "gpu_8x_a10"])
def test_an_instance_type_the_catalog_lacks_is_not_guessed(word: str) -> None:
    err = refused(f"8b lora {word}")
    assert f'"{word}" looks like a cloud instance type' in err.message
    assert "name its cards instead" in err.message


def test_every_gcp_machine_skypilot_prices_is_a_catalog_instance() -> None:
    catalog = default_catalog()
    for accelerator, machines in GCP_HOSTS.items():
        card = map_accelerator("gcp", accelerator, "")
        for count, machine in machines.items():
            assert catalog.find_instance(machine) == (card, count), machine


def test_an_instance_skypilot_miscounts_has_its_real_count() -> None:
    catalog = default_catalog()
    for (_, instance), count in COUNT_FIXES.items():
        found = catalog.find_instance(instance)
        assert found is not None and found[1] == count


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
