"""Taking one option out of the terminal's words."""

from __future__ import annotations

import pytest

from adapters.argv import MissingValue, take_option


def test_both_spellings_are_taken_out_and_the_rest_kept_in_order() -> None:
    rest, values = take_option(["8b", "--x", "a", "lora", "--x=b"], "--x")
    assert rest == ["8b", "lora"] and values == ["a", "b"]


def test_an_option_without_a_value_is_refused() -> None:
    for args in (["8b", "--x"], ["--x", "--json"]):
        with pytest.raises(MissingValue):
            take_option(args, "--x")


def test_a_similar_longer_option_is_left_alone() -> None:
    assert take_option(["--xy", "1"], "--x") == (["--xy", "1"], [])


def test_a_blank_value_is_refused_as_a_missing_one() -> None:
    for args in (["8b", "--x="], ["--x", ""], ["--x", "  ", "8b"]):
        with pytest.raises(MissingValue):
            take_option(args, "--x")
