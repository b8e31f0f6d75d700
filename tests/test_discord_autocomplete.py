"""Autocomplete choices for ``/ftcost model:`` and ``gpu:``."""

from __future__ import annotations

import pytest

from adapters.discord.autocomplete import gpu_choices, model_choices
from adapters.parse import parse_fields
from catalog.loader import default_catalog
from tests.fakes.discord_server import validate_autocomplete

CATALOG = default_catalog()


def names_values(picks):
    return [{"name": p.name, "value": p.value} for p in picks]


@pytest.mark.parametrize("typed", ["", "l", "llama", "70", "qwen", "x" * 100, "8x", "-", "é"])
def test_choices_respect_discords_limits(typed: str) -> None:
    for picks in (model_choices(CATALOG, typed), gpu_choices(CATALOG, typed)):
        assert validate_autocomplete(names_values(picks)) == []
        assert len(picks) <= 25
        assert len({p.value for p in picks}) == len(picks)


def test_nothing_typed_offers_25_models_canonical_sizes_first() -> None:
    picks = model_choices(CATALOG, "")
    assert len(picks) == 25
    sized = set(CATALOG.sizes.values())
    first = [p.value for p in picks[: min(len(sized), 25)]]
    assert first and all(value in sized for value in first)


@pytest.mark.parametrize(
    ("typed", "best"),
    [
        ("70b", "llama-3.1-70b"),
        ("llama-3.1-70b", "llama-3.1-70b"),
        ("meta-llama/Llama-3.1-70B", "llama-3.1-70b"),  # an alias (Hugging Face id)
        ("Llama 3.1 70B", "llama-3.1-70b"),
        ("qwen2.5 7", "qwen2.5-7b"),
        ("mixtral", "mixtral-8x7b"),
        ("lama 3.1 8", "llama-3.1-8b"),  # a typo
    ],
)
def test_models_match_fuzzily_best_first(typed: str, best: str) -> None:
    assert model_choices(CATALOG, typed)[0].value == best


def test_an_alias_that_matched_is_shown() -> None:
    pick = model_choices(CATALOG, "meta-llama/Llama-3.1-70B")[0]
    assert "meta-llama/Llama-3.1-70B" in pick.name and "Llama 3.1 70B" in pick.name


@pytest.mark.parametrize(
    ("typed", "best"),
    [("h100", "h100-sxm"), ("H1", "h100-sxm"), ("4090", "rtx-4090"), ("a100 80", "a100-80gb-sxm"),
     ("8x h1", "8x h100-sxm"), ("8 a100", "8x a100-80gb-sxm"), ("mi3", "mi300x")],
)
def test_gpus_match_and_keep_a_count(typed: str, best: str) -> None:
    assert gpu_choices(CATALOG, typed)[0].value == best


def test_every_choice_value_parses() -> None:
    for pick in model_choices(CATALOG, "") + model_choices(CATALOG, "qwen"):
        assert parse_fields(pick.value, CATALOG) == {"model": pick.value}
    for pick in gpu_choices(CATALOG, "") + gpu_choices(CATALOG, "4x a"):
        fields = parse_fields(pick.value, CATALOG)
        assert fields["gpu"] in CATALOG.gpus


def test_nonsense_matches_nothing() -> None:
    assert model_choices(CATALOG, "xyzzy") == []
    assert gpu_choices(CATALOG, "qqqq") == []
