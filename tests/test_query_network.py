"""Readings an ML engineer's review found missing, one behaviour per test: the network
between nodes (``infiniband`` is the fabric assumed; ``ethernet`` is refused where it
would be slower than what is timed), clusters said as ``a 2-node h100 cluster``,
deadlines said ``in 3 days or less``, and axolotl's own LoRA dropout default."""

from __future__ import annotations

import pytest

from adapters.trainconfig import read_config
from engine.choices import Method
from tests.helpers import example, fields, parsed, refusal, refused, refused_followup

TWO_NODES = "70b full 2 nodes of 8x h100 1B tokens"


# --- the network between nodes -------------------------------------------------------------


@pytest.mark.parametrize("word", ["infiniband", "ib", "roce", "roce v2", "efa", "rdma",
                                  "400gbe", "InfiniBand"])
def test_the_assumed_fabric_is_read_as_nothing(word: str) -> None:
    assert parsed(f"{TWO_NODES} {word}") == parsed(TWO_NODES)


@pytest.mark.parametrize("word", ["ethernet", "100gbe", "tcp", "no infiniband",
                                  "without ib", "w/o rdma", "no-infiniband"])
def test_a_slower_network_on_a_data_center_card_is_refused(word: str) -> None:
    message = refusal(f"{TWO_NODES} {word}")
    assert "400 Gb/s per GPU" in message and "InfiniBand/RoCE" in message
    assert "slower network is not modeled" in message


def test_the_refusal_names_the_cards_pcie_version_and_its_nic() -> None:
    err = refused(f"{TWO_NODES} ethernet")
    assert 'its PCIe version, "h100-pcie"' in err.message
    assert "one 100 Gb/s NIC" in err.message
    assert err.word == "ethernet"
    assert "h100-pcie" in example(err)
    parsed(example(err))  # the example given parses


def test_the_refusal_without_a_pcie_version_names_another_pcie_card() -> None:
    assert 'a PCIe card, such as "h100-pcie"' in refusal(
        "70b full 2 nodes of 8x b200 1B tokens ethernet")


def test_a_slower_network_with_no_card_named_asks_for_a_pcie_card() -> None:
    assert '"h100-pcie" or "l40s"' in refusal("70b full 2 nodes 1B tokens ethernet")


def test_ethernet_on_a_pcie_card_says_nothing_new() -> None:
    pcie = "70b full 2 nodes of 8x h100-pcie 1B tokens"
    assert parsed(f"{pcie} ethernet") == parsed(pcie)


def test_a_network_under_100_gbps_is_refused_on_a_pcie_card_too() -> None:
    message = refusal("70b full 2 nodes of 8x l40s 1B tokens 25gbe")
    assert "one 100 Gb/s NIC" in message and "not modeled" in message


def test_ethernet_on_one_machine_says_nothing() -> None:
    assert parsed("70b full 8x h100 1B tokens ethernet") == parsed("70b full 8x h100 1B tokens")


def test_ethernet_on_geforce_cards_says_nothing() -> None:
    assert parsed("8b lora 2x 4090 50M tokens ethernet") == parsed("8b lora 2x 4090 50M tokens")


def test_a_follow_up_on_a_data_center_thread_is_refused_too() -> None:
    err = refused_followup(TWO_NODES, "what if ethernet")
    assert "slower network is not modeled" in err.message


# --- nodes said as an adjective: a 2-node h100 cluster ----------------------------------------


def test_a_2_node_cluster_is_2_nodes() -> None:
    assert parsed("70b full a 2-node h100 cluster 1B tokens") == parsed(
        "70b full 2 nodes h100 1B tokens")


def test_a_number_word_node_setup_is_that_many_nodes() -> None:
    got = fields("70b full two-node h100 setup 1B tokens")
    assert (got["nodes"], got["gpu_count"]) == (2, 16)


def test_a_count_after_2_node_is_per_node() -> None:
    assert fields("70b full 2-node 8x h100 cluster 1B tokens")["gpu_count"] == 16


def test_a_count_a_node_cannot_hold_after_2_node_is_the_total() -> None:
    assert fields("70b full 2-node 16x h100 1B tokens")["gpu_count"] == 16


def test_single_node_is_one_node() -> None:
    got = fields("70b full single-node 8x h100 1B tokens")
    assert (got["nodes"], got["gpu_count"]) == (1, 8)


def test_cluster_without_a_node_count_is_still_unknown() -> None:
    assert 'I don\'t know "cluster"' in refusal("70b full h100 cluster 1B tokens")


# --- deadlines said "or less" ------------------------------------------------------------------


@pytest.mark.parametrize("tail", ["in 3 days or less", "in 3 days or under",
                                  "within 3 days at most", "in 3 days max",
                                  "3 days or less"])
def test_or_less_after_a_deadline_says_the_deadline(tail: str) -> None:
    assert fields(f"70b qlora 50M tokens {tail}")["deadline_hours"] == 72.0


@pytest.mark.parametrize("tail", ["under $500 or less", "$500 or under", "$500 at most"])
def test_or_less_after_a_budget_says_the_budget(tail: str) -> None:
    assert fields(f"70b qlora 50M tokens {tail}")["budget_usd"] == 500.0


def test_max_before_a_number_after_a_deadline_starts_the_budget() -> None:
    got = fields("70b qlora 50M tokens within 3 days max $500")
    assert (got["deadline_hours"], got["budget_usd"]) == (72.0, 500.0)


@pytest.mark.parametrize("text, field, value", [
    ("8b lora 50M tokens $500 max 3 epochs", "budget_usd", 500.0),
    ("8b lora 50M tokens 2 days max 3 epochs", "deadline_hours", 48.0),
    ("8b lora $500 max 50M tokens", "budget_usd", 500.0),
])
def test_max_before_an_amount_that_is_no_limit_ends_the_limit_before_it(
    text: str, field: str, value: float
) -> None:
    assert fields(text)[field] == value


def test_or_less_after_a_deadline_and_a_budget_each() -> None:
    got = fields("70b qlora 50M tokens by 48h or less $500 or less")
    assert (got["deadline_hours"], got["budget_usd"]) == (48.0, 500.0)


# --- axolotl's LoRA dropout --------------------------------------------------------------------


def test_an_axolotl_config_without_lora_dropout_takes_axolotls_zero() -> None:
    config = read_config("base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n", "ax.yml")
    assert config.fields["method"] is Method.LORA
    assert config.fields["lora_dropout"] == 0.0
    read = {k.key: k.meaning for k in config.read}
    assert read["lora_dropout"] == "LoRA dropout 0 (axolotl's default)"


def test_an_axolotl_full_fine_tune_takes_no_dropout_default() -> None:
    config = read_config("base_model: meta-llama/Llama-3.1-8B\n", "ax.yml")
    assert "lora_dropout" not in config.fields


def test_an_axolotl_configs_own_lora_dropout_wins() -> None:
    config = read_config(
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\nlora_dropout: 0.1\n", "ax.yml")
    assert config.fields["lora_dropout"] == 0.1
