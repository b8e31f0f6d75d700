"""Models named as ML engineers name them, against the shipped catalog, one behaviour per
test: a model the catalog lacks is said to be missing (with how to name a Hub model as
org/name) instead of a unit being asked for, and a variant word (``instruct``) after a
family and size never changes the generation picked."""

from __future__ import annotations

import pytest

from catalog.loader import default_catalog
from engine.choices import ModelPick
from engine.estimate import estimate
from tests.helpers import example, parsed, refused, refused_followup

CAT = default_catalog()
HUB = "any Hugging Face model can be named by its repository (org/name)"


# --- a family and a version the catalog lacks ---------------------------------------------

def test_a_family_and_a_version_the_catalog_lacks_is_not_in_the_catalog() -> None:
    err = refused("llama 4 scout lora 8x h100 10M tokens")
    assert err.message.startswith('"llama 4" is not in the catalog (its newest Llama is '
                                  "Llama 3.3 70B)")
    assert HUB in err.message and "needs a unit" not in err.message


def test_a_missing_version_shows_a_hub_id_of_the_family() -> None:
    err = refused("llama 4 scout lora 8x h100 10M tokens")
    assert example(err) == "meta-llama/Llama-3.3-70B-Instruct lora 50M tokens"


@pytest.mark.parametrize(("text", "phrase"), [("qwen 3.5 lora h100", "qwen 3.5"),
                                              ("mistral v0.4 lora h100", "mistral v0.4"),
                                              ("llama 4 8x h100", "llama 4")])
def test_any_version_the_family_lacks_is_not_in_the_catalog(text: str, phrase: str) -> None:
    assert refused(text).message.startswith(f'"{phrase}" is not in the catalog')


def test_a_number_that_is_a_size_of_the_family_suggests_the_size() -> None:
    assert "Did you mean mistral 7b?" in refused("mistral 7 lora h100").message


def test_a_number_a_unit_claims_after_a_family_word_is_still_the_units() -> None:
    request = parsed("llama 4 epochs h100")
    assert (request.epochs, request.model_pick) == (4.0, ModelPick.FAMILY)


def test_a_number_after_a_size_still_asks_for_its_unit() -> None:
    assert '"4" needs a unit' in refused("8b lora 4 h100s on it 4").message


# --- a word shaped like a model's name -------------------------------------------------------

@pytest.mark.parametrize("word", ["llama-4-scout", "llama4", "codestral-22b", "tinyllama-2"])
def test_a_word_shaped_like_a_model_name_is_not_in_the_catalog(word: str) -> None:
    err = refused(f"{word} lora 8x h100 10M tokens")
    assert err.message.startswith(f'"{word}" is not in the catalog: {HUB}.')


def test_a_model_name_of_a_family_shows_a_hub_id_of_that_family() -> None:
    assert example(refused("llama-4-scout lora 8x h100")).startswith("meta-llama/")


def test_a_misspelt_model_name_still_suggests_near_spellings() -> None:
    assert "Did you mean mistral, mixtral?" in refused("mistrall lora h100").message


def test_an_unknown_word_in_a_query_naming_no_model_may_be_the_model() -> None:
    err = refused("codestral lora 8x h100 10M tokens")
    assert err.message.startswith(
        f'I don\'t know "codestral"; if it is a model, it is not in the catalog: {HUB}.')


def test_an_unknown_word_beside_a_named_model_is_only_unknown() -> None:
    assert refused("8b lora on runpodd").message.startswith('I don\'t know "runpodd". Example')


def test_an_unknown_word_before_a_model_named_later_is_only_unknown() -> None:
    assert refused("lora foo 8b").message.startswith('I don\'t know "foo". Example')


def test_a_followup_unknown_word_keeps_the_followup_example() -> None:
    err = refused_followup("8b lora 50M tokens 1x 4090", "use the flux capacitor")
    assert example(err) == "what if 8k seq? | on 4x h100 | with full and zero3"


# --- a variant word after a family and size ----------------------------------------------

def test_instruct_after_a_family_and_size_picks_the_newest_generation() -> None:
    request = parsed("mistral 7b instruct lora h100 10M tokens")
    assert (request.model, request.model_pick) == ("mistral-7b-v0.3", ModelPick.FAMILY_SIZE)


def test_instruct_picks_what_the_family_and_size_alone_pick() -> None:
    plain, instruct = parsed("mistral 7b lora h100"), parsed("mistral 7b instruct lora h100")
    assert (plain.model, plain.model_pick) == (instruct.model, instruct.model_pick)


def test_instruct_after_a_family_and_size_keeps_the_newest_generation_note() -> None:
    notes = estimate(parsed("mistral 7b instruct lora h100 10M tokens"), CAT).notes
    assert "That means Mistral 7B v0.3, the newest generation of that size; name another " \
           "version to change it." in notes


@pytest.mark.parametrize("text", ["qwen 72b chat lora", "llama 70b instruct lora",
                                  "mistral 7b base lora"])
def test_any_variant_word_leaves_the_family_and_size_pick(text: str) -> None:
    assert parsed(text).model_pick is ModelPick.FAMILY_SIZE


def test_a_version_after_the_variant_word_still_names_that_version() -> None:
    request = parsed("mistral 7b instruct v0.1 lora")
    assert (request.model, request.model_pick) == ("mistral-7b", ModelPick.EXACT)


def test_the_hyphenated_id_still_names_the_exact_model() -> None:
    assert parsed("mistral-7b-instruct lora").model == "mistral-7b"
