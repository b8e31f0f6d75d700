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
