"""Follow-ups as people type them in an estimate's thread, one behaviour per test, against
the shipped catalog: changes by a factor (``double the batch``), comparatives with a value
(``bigger batch: 8``), the value ``instead of`` replaces, switches turned on and off, and
``cheaper?`` alone."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.parse import QueryError, apply_followup, parse_fields, parse_query
from catalog.loader import default_catalog
from engine.choices import Method, Sharding
from engine.request import Request

CAT = default_catalog()
PREVIOUS_QUERY = "8b lora 50M tokens 2x a100 seq 2048 bs 4"
PREVIOUS = parse_query(PREVIOUS_QUERY, CAT)


def changed(text: str, previous: Request = PREVIOUS) -> dict[str, Any]:
    """The fields the follow-up ``text`` changed from ``previous``."""
    before, after = previous.model_dump(), apply_followup(previous, text, CAT).model_dump()
    return {k: v for k, v in after.items() if before[k] != v}


def refused(text: str, previous: Request = PREVIOUS) -> QueryError:
    with pytest.raises(QueryError) as caught:
        apply_followup(previous, text, CAT)
    return caught.value


def refused_new(text: str) -> QueryError:
    with pytest.raises(QueryError) as caught:
        parse_query(text, CAT)
    return caught.value


def example(err: QueryError) -> str:
    return err.message.split("Example: ", 1)[1]


# --- changes by a factor -----------------------------------------------------------

@pytest.mark.parametrize("text", ["double the batch", "twice the batch", "2x the batch",
                                  "double the bs", "double the micro-batch", "2x bigger batch"])
def test_a_factor_word_multiplies_the_earlier_batch(text: str) -> None:
    assert changed(text) == {"micro_batch": 8}


@pytest.mark.parametrize("text", ["half the seq", "halve the sequence length", "half the ctx",
                                  "half the context", "0.5x the seq"])
def test_half_divides_the_earlier_sequence_length(text: str) -> None:
    assert changed(text) == {"seq_len": 1024}


def test_longer_sequences_by_a_factor_multiply_the_sequence_length() -> None:
    assert changed("2x longer sequences") == {"seq_len": 4096}


@pytest.mark.parametrize(("text", "tokens"), [
    ("4x the data", 200_000_000), ("twice the tokens", 100_000_000),
    ("double the dataset", 100_000_000), ("3 times the data", 150_000_000),
    ("half as much data", 25_000_000), ("2x more data", 100_000_000),
])
def test_a_factor_of_the_data_multiplies_the_dataset_tokens(text: str, tokens: int) -> None:
    assert changed(text) == {"dataset_tokens": tokens}


@pytest.mark.parametrize(("text", "count"), [
    ("double the gpus", 4), ("half the cards", 1), ("twice as many gpus", 4),
    ("double the number of cards", 4), ("2x the gpus", 4), ("double the a100s", 4),
])
def test_a_factor_of_the_cards_multiplies_the_card_count(text: str, count: int) -> None:
    assert changed(text) == {"gpu_count": count}


def test_triple_the_epochs_multiplies_the_default_three_epochs() -> None:
    assert changed("triple the epochs") == {"epochs": 9.0}


def test_a_factor_of_epochs_may_give_a_fraction() -> None:
    assert changed("0.5x the epochs") == {"epochs": 1.5}


def test_double_the_accum_multiplies_the_default_accumulation() -> None:
    assert changed("double the accum") == {"grad_accum": 2}


def test_quadruple_the_rank_multiplies_the_default_rank() -> None:
    assert changed("quadruple the rank") == {"lora_rank": 64}


def test_a_whole_field_rounds_to_a_whole_number() -> None:
    previous = parse_query("8b lora 50M tokens 3x a100 bs 3", CAT)
    assert changed("half the batch and half the gpus", previous) == {
        "micro_batch": 2, "gpu_count": 2}


def test_two_factors_of_different_fields_both_apply() -> None:
    assert changed("double the batch and half the seq") == {"micro_batch": 8, "seq_len": 1024}


def test_a_factor_reads_inside_a_what_if_question() -> None:
    assert changed("what if double the batch?") == {"micro_batch": 8}


def test_a_factor_beside_another_setting_changes_both() -> None:
    assert changed("qlora instead of lora, double the batch") == {
        "method": Method.QLORA, "micro_batch": 8}


def test_a_factor_of_the_cards_keeps_the_card_named_in_the_same_reply() -> None:
    assert changed("double the gpus on h100") == {"gpu": "h100-sxm", "gpu_count": 4}


def test_a_factor_of_the_cards_lets_the_nodes_follow_the_count() -> None:
    previous = parse_query("70b full 2 nodes of 8x h100 50M tokens", CAT)
    assert changed("double the gpus", previous) == {"gpu_count": 32, "nodes": None}


def test_a_factor_of_the_data_drops_a_sample_count() -> None:
    previous = parse_query("8b lora 10k samples of 512 tokens", CAT)
    assert changed("double the data", previous) == {
        "dataset_tokens": 10_240_000, "samples": None, "sample_tokens": None}


def test_a_factor_of_the_data_replaces_a_run_counted_in_steps() -> None:
    previous = parse_query("8b lora 1000 steps bs 8 4x a100", CAT)
    after = apply_followup(previous, "double the data", CAT)
    assert after.steps is None
    assert after.dataset_tokens == 2 * (previous.dataset_tokens or 0)


def test_2x_before_a_card_stays_a_card_count() -> None:
    assert changed("4x h100") == {"gpu": "h100-sxm", "gpu_count": 4}


def test_2x_before_gpus_stays_a_card_count() -> None:
    assert changed("8x gpus") == {"gpu_count": 8}


def test_a_factor_past_the_fields_bound_is_out_of_range() -> None:
    previous = parse_query("8b lora 50M tokens bs 2048", CAT)
    err = refused("quadruple the batch", previous)
    assert err.message.startswith('"quadruple the batch (8,192)" is out of range: the '
                                  "micro-batch must be between 1 and 4,096")


def test_half_of_a_batch_of_one_is_out_of_range() -> None:
    previous = parse_query("8b lora 50M tokens a100 bs 1", CAT)
    err = refused("half the batch", previous)
    assert err.message.startswith('"half the batch (0.5)" is out of range')


def test_a_factor_of_cards_the_earlier_estimate_picked_is_refused() -> None:
    previous = parse_query("8b lora 50M tokens a100", CAT)
    err = refused("double the gpus", previous)
    assert "named no card count" in err.message
    assert example(err) == "on 4x a100"


def test_a_factor_of_a_dataset_the_earlier_estimate_did_not_size_is_refused() -> None:
    previous = parse_query("8b lora", CAT)
    err = refused("double the data", previous)
    assert "named no token count" in err.message


def test_a_factor_of_other_cards_than_the_earlier_ones_is_refused() -> None:
    err = refused("double the h100s")
    assert "ran on the a100, not the h100" in err.message
    assert example(err) == "on 4x h100"


def test_a_factor_and_a_value_of_one_field_are_refused_naming_both() -> None:
    err = refused("double the batch bs 8")
    assert '"double the batch" conflicts with "bs 8"' in err.message
    assert "Pick one" in err.message


def test_a_value_before_a_factor_of_the_same_field_is_refused() -> None:
    assert "Pick one" in refused("bs 8 double the batch").message


def test_a_factor_to_a_value_is_refused_naming_both() -> None:
    err = refused("double the batch to 8")
    assert '"double the batch" conflicts with "8"' in err.message


def test_two_different_factors_of_one_field_are_refused() -> None:
    err = refused("double the batch, triple the batch")
    assert '"triple the batch" conflicts with "double the batch"' in err.message


def test_a_factor_word_alone_says_what_it_can_change() -> None:
    err = refused("double")
    assert "the batch, seq, tokens, gpus, epochs, accum or rank" in err.message
    assert example(err) == "double the batch"


def test_a_factor_of_a_shrinking_comparative_is_refused() -> None:
    err = refused("2x smaller batch")
    assert 'say "half the batch"' in err.message


@pytest.mark.parametrize("text", ["0x the batch", "-1x the batch"])
def test_a_factor_not_above_zero_is_refused(text: str) -> None:
    assert "a factor must be above 0" in refused(text).message


def test_a_factor_in_a_new_question_is_refused() -> None:
    err = refused_new("8b lora 50M tokens double the batch")
    assert "changes an earlier estimate, and this is a new question" in err.message
    assert example(err) == "8b lora bs 4 50M tokens"


def test_a_factor_is_refused_by_parse_fields() -> None:
    with pytest.raises(QueryError, match="changes an earlier estimate"):
        parse_fields("twice the tokens", CAT)


# --- comparatives ----------------------------------------------------------------

def test_a_comparative_with_a_value_takes_the_value() -> None:
    assert changed("bigger batch: 8") == {"micro_batch": 8}


@pytest.mark.parametrize(("text", "expected"), [
    ("more gpus: 8", {"gpu_count": 8}),
    ("more data: 200M", {"dataset_tokens": 200_000_000}),
    ("more data 200M tokens", {"dataset_tokens": 200_000_000}),
    ("longer sequences: 8k", {"seq_len": 8192}),
    ("smaller batch: 2", {"micro_batch": 2}),
    ("more gpus 8x h100", {"gpu": "h100-sxm", "gpu_count": 8}),
])
def test_a_comparative_before_a_value_reads_the_value(text: str, expected: dict[str, Any]) -> None:
    assert changed(text) == expected


def test_a_comparative_with_a_value_parses_in_a_new_question() -> None:
    assert parse_query("8b lora 50M tokens bigger batch: 8", CAT).micro_batch == 8


@pytest.mark.parametrize("text", ["more gpus", "fewer cards", "bigger batch", "longer sequences",
                                  "more epochs", "less data"])
def test_a_comparative_without_a_value_is_refused(text: str) -> None:
    assert "say how m" in refused(text).message


def test_more_gpus_says_how_to_name_the_count() -> None:
    err = refused("more gpus")
    assert '"on 8x h100"' in err.message
    assert '"double the gpus"' in err.message


# --- instead of ------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("h100 instead of a100", {"gpu": "h100-sxm", "gpu_count": None}),
    ("instead of a100, h100", {"gpu": "h100-sxm", "gpu_count": None}),
    ("h100 rather than a100", {"gpu": "h100-sxm", "gpu_count": None}),
    ("zero3 instead of fsdp", {"sharding": Sharding.ZERO3}),
    ("use qlora instead of lora", {"method": Method.QLORA}),
    ("4x h100 instead of 2x a100", {"gpu": "h100-sxm", "gpu_count": 4}),
    ("instead of the a100 use 4x h100", {"gpu": "h100-sxm", "gpu_count": 4}),
    ("3 epochs instead of 1 epoch", {}),
    ("2 epochs instead of 3 epochs", {"epochs": 2.0}),
    ("70b instead of 8b", {"model": "llama-3.1-70b"}),
])
def test_the_phrase_after_instead_of_is_not_a_setting(
    text: str, expected: dict[str, Any]
) -> None:
    assert {k: v for k, v in changed(text).items() if k != "model_pick"} == expected


def test_instead_of_in_a_new_question_drops_the_replaced_card() -> None:
    assert parse_query("8b lora 50M tokens h100 instead of a100", CAT).gpu == "h100-sxm"


def test_instead_of_alone_changes_nothing() -> None:
    assert "didn't find anything to change" in refused("instead of a100").message


def test_trailing_instead_is_still_filler() -> None:
    assert changed("h100 instead") == {"gpu": "h100-sxm", "gpu_count": None}


# --- switches turned on and off --------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("turn on offload", {"offload": True}),
    ("turn off checkpointing", {"grad_checkpointing": False}),
    ("switch off flash attention", {"flash_attention": False}),
    ("turn checkpointing off", {"grad_checkpointing": False}),
    ("turn offload on", {"offload": True}),
    ("enable packing", {"packing": True}),
    ("disable flash", {"flash_attention": False}),
    ("switch on packing", {"packing": True}),
    ("turn off tp", {}),
])
def test_on_turns_a_switch_on_and_off_turns_it_off(text: str, expected: dict[str, Any]) -> None:
    assert changed(text) == expected


def test_off_before_a_word_that_is_no_switch_is_refused() -> None:
    err = refused("turn off zero3")
    assert '"off" must come before a switch' in err.message


# --- what every estimate already shows -------------------------------------------

@pytest.mark.parametrize("text", ["cheaper?", "faster?", "cheapest", "fastest", "quicker?"])
def test_cheaper_alone_says_how_to_ask_for_a_plan(text: str) -> None:
    err = refused(text)
    assert "already picks the cheapest cards that fit" in err.message
    assert '"under $500"' in err.message and '"within 2 days"' in err.message


def test_cheaper_beside_a_setting_is_filler() -> None:
    assert changed("faster on h100?") == {"gpu": "h100-sxm", "gpu_count": None}


def test_cheapest_in_a_new_question_beside_a_model_is_filler() -> None:
    assert parse_query("cheapest 8b lora 50M tokens", CAT).dataset_tokens == 50_000_000


def test_cheapest_alone_in_a_new_question_is_refused_with_a_whole_question() -> None:
    assert example(refused_new("cheapest")) == "8b lora 50M tokens under $500"


# --- every refusal's example parses ------------------------------------------------

FOLLOWUP_REFUSALS = [
    "double", "2x smaller batch", "0x the batch", "double the batch bs 8", "more gpus",
    "bigger batch", "double the h100s", "cheaper?", "double the batch to 8",
]


@pytest.mark.parametrize("text", FOLLOWUP_REFUSALS)
def test_a_follow_up_refusal_shows_examples_that_parse(text: str) -> None:
    for sample in example(refused(text)).split(" | "):
        apply_followup(PREVIOUS, sample, CAT)


@pytest.mark.parametrize("text", ["double the batch", "8b lora 2x the data", "cheapest"])
def test_a_new_question_refusal_shows_a_question_that_parses(text: str) -> None:
    parse_query(example(refused_new(text)), CAT)


def test_a_follow_up_naming_only_what_costs_nothing_says_so() -> None:
    message = refused("alpha 32").message
    assert 'Nothing to change: "alpha" changes neither memory nor time' in message


@pytest.mark.parametrize("text", ["add a flux capacitor", "use the big one", "x4"])
def test_a_followup_error_shows_a_followup_example_not_a_new_question(text: str) -> None:
    assert example(refused(text)) == "what if 8k seq? | on 4x h100 | with full and zero3"


def test_a_new_questions_error_keeps_the_new_question_example() -> None:
    assert example(refused_new("8b lora add")) == "70b qlora 50M tokens h100"
