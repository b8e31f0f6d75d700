"""Phrasings engineers type that the query language reads as they mean them."""

from __future__ import annotations

import pytest

from adapters.parse import QueryError, apply_followup, parse_query
from catalog.loader import default_catalog
from engine.choices import LoraTargets, Method

CAT = default_catalog()


def test_flash_attn_2_names_flashattention_not_two_cards() -> None:
    r = parse_query("8b lora flash attn 2 h100 10M tokens", CAT)
    assert r.flash_attention is True and r.gpu_count is None and r.gpu is not None


def test_flash_attn_is_not_read_as_attention_lora_targets() -> None:
    r = parse_query("8b lora flash attn h100 10M tokens", CAT)
    assert r.lora_targets is not LoraTargets.ATTENTION


def test_n_card_nodes_counts_machines_of_eight() -> None:
    r = parse_query("70b full 10M tokens 8 h100 nodes", CAT)
    assert (r.nodes, r.gpu_count) == (8, 64)


def test_n_card_nodes_leaves_a_following_amount_to_its_unit() -> None:
    r = parse_query("70b full 2 h100 nodes 10M tokens", CAT)
    assert (r.nodes, r.gpu_count, r.dataset_tokens) == (2, 16, 10_000_000)


def test_a_count_with_x_before_a_card_stays_a_card_count() -> None:
    r = parse_query("70b full 16x h100 2 nodes 10M tokens", CAT)
    assert (r.nodes, r.gpu_count) == (2, 16)


def test_now_in_a_follow_up_is_plain_english() -> None:
    first = parse_query("8b full seq 65536 8x h100 10M tokens", CAT)
    assert apply_followup(first, "now with cp 4", CAT).context_parallel == 4


def test_trl_use_peft_means_lora_and_with_4bit_qlora() -> None:
    assert parse_query("8b 10M tokens --use_peft", CAT).method is Method.LORA
    both = parse_query("8b 10M tokens --use_peft --load_in_4bit", CAT)
    assert both.method is Method.QLORA


def test_a_superscript_digit_is_refused_not_read_as_a_digit() -> None:
    with pytest.raises(QueryError, match="not a digit I read"):
        parse_query("8b lora 10² tokens", CAT)  # NFKC would read 102


def test_fullwidth_digits_read_as_digits() -> None:
    assert parse_query("8b lora ５0M tokens", CAT).dataset_tokens == 50_000_000


def test_a_hexadecimal_count_says_decimal_not_nodes() -> None:
    with pytest.raises(QueryError, match="hexadecimal"):
        parse_query("8b lora 0x10 tokens", CAT)
