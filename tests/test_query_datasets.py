"""A dataset's name says what the data is, not how much: ``8b lora alpaca a100`` is
answered as a question without a size, and a count after the name is its samples."""

from __future__ import annotations

import pytest

from tests.helpers import followup, parsed


@pytest.mark.parametrize("text", [
    "8b lora alpaca a100",
    "8b lora on the alpaca dataset a100",
    "8b lora tatsu-lab/alpaca a100",
    "8b qlora timdettmers/openassistant-guanaco t4",
    "8b lora dolly-15k a100",
    "8b lora HuggingFaceH4/ultrachat_200k a100",
])
def test_a_named_dataset_sets_no_size(text: str) -> None:
    request = parsed(text)
    assert (request.dataset_tokens, request.samples) == (None, None)


def test_a_named_dataset_leaves_the_size_to_the_words_that_give_one() -> None:
    request = parsed("8b lora alpaca 52k samples of 300 tokens a100")
    assert (request.samples, request.sample_tokens) == (52_000, 300)


def test_a_count_after_a_dataset_name_is_its_samples() -> None:
    request = parsed("8b lora alpaca 52k of 300 tokens a100")
    assert (request.samples, request.sample_tokens) == (52_000, 300)


def test_a_count_of_samples_after_a_dataset_name_leaves_their_length_to_ask() -> None:
    request = parsed("8b lora alpaca 52k bs 4 a100")
    assert (request.samples, request.micro_batch, request.dataset_tokens) == (52_000, 4, None)


def test_a_number_a_unit_claims_is_not_the_datasets() -> None:
    request = parsed("8b lora alpaca 3 epochs 10M tokens a100")
    assert (request.epochs, request.samples, request.dataset_tokens) == (3, None, 10_000_000)


def test_a_follow_up_gives_the_samples_their_length() -> None:
    request = followup("8b lora alpaca 52k a100", "avg 300 tokens")
    assert request.dataset_tokens == 52_000 * 300


@pytest.mark.parametrize(("text", "card", "count"), [
    ("8b lora alpaca 4090", "rtx-4090", None),
    ("8b lora alpaca 2 h100", "h100-sxm", 2),
    ("qwen2.5 7b lora gsm8k 8 h100", "h100-sxm", 8),
    ("8b lora alpaca 1000 h100", "h100-sxm", 1000),
])
def test_a_card_or_its_count_after_a_dataset_name_stays_the_cards(
    text: str, card: str, count: int | None
) -> None:
    request = parsed(text)
    assert (request.samples, request.gpu, request.gpu_count) == (None, card, count)


@pytest.mark.parametrize("text", ["8b lora alpaca 52k a100", "8b lora alpaca 52002 a100",
                                  "8b lora alpaca 52k 4x a100"])
def test_a_count_in_thousands_before_a_card_is_the_samples(text: str) -> None:
    assert parsed(text).samples in (52_000, 52_002)


def test_a_model_size_after_a_dataset_name_is_the_model() -> None:
    assert parsed("alpaca 7b lora a100").model == "llama-2-7b"


@pytest.mark.parametrize("text", ["gpt2 full wikitext 103 4090", "8b lora dolly 15k a100"])
def test_a_number_in_the_datasets_own_name_is_no_size(text: str) -> None:
    request = parsed(text)
    assert (request.samples, request.dataset_tokens) == (None, None)


@pytest.mark.parametrize("text", ["8b lora alpaca 52k conversations of 300 tokens a100",
                                  "8b lora alpaca 52k x 300 tokens a100"])
def test_the_samples_rule_reads_a_count_with_its_own_words(text: str) -> None:
    request = parsed(text)
    assert (request.samples, request.sample_tokens) == (52_000, 300)


def test_a_bare_token_count_in_a_thread_of_samples_is_their_length() -> None:
    request = followup("8b lora 10k samples a100", "300 tokens")
    assert (request.samples, request.sample_tokens) == (10_000, 300)


def test_a_dataset_size_in_a_thread_of_samples_replaces_them() -> None:
    request = followup("8b lora 10k samples a100", "50M tokens")
    assert (request.samples, request.dataset_tokens) == (None, 50_000_000)
