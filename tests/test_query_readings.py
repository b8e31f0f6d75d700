"""Readings a QA pass found wrong, one behaviour per test, against the shipped catalog:
a bare ``1`` for a share (1% or 100%?), a card's memory said before its name, a bare
``8k`` beside ``mfu`` and its number, and a family's version said without a size."""

from __future__ import annotations

import pytest

from adapters.parse import QueryError, parse_query
from catalog.loader import default_catalog
from engine.specs import Catalog
from tests.helpers import example, fields, followup, parsed, refused, refused_followup

CAT = default_catalog()




def quoted_example(err: QueryError) -> str:
    """The query the message itself quotes after ``e.g.``."""
    return err.message.split('e.g. "', 1)[1].split('"', 1)[0]


# --- 1. a bare 1 for a share is 1% or 100%: refused, never guessed ---------------------

@pytest.mark.parametrize("text", ["8b lora 50M tokens h100 mfu 1", "8b lora mfu 1.0",
                                  "8b lora 1 mfu", "8b lora mfu=1", "8b lora utilization 1"])
def test_a_bare_1_for_the_mfu_is_refused(text: str) -> None:
    assert "could be 1% or 100% for the MFU" in refused(text).message


def test_the_bare_1_refusal_names_the_word_and_both_ways_to_say_it() -> None:
    err = refused("8b lora 50M tokens h100 mfu 1")
    assert err.word == "1"
    assert 'say "mfu 1%" or "mfu 100%"' in err.message


def test_both_readings_the_refusal_offers_parse_as_written() -> None:
    assert parsed("8b lora 50M tokens h100 mfu 1%").mfu == 0.01
    assert parsed("8b lora 50M tokens h100 mfu 100%").mfu == 1.0


@pytest.mark.parametrize(("text", "mfu"), [("mfu 0.4", 0.4), ("mfu 0.99", 0.99),
                                           ("mfu 40%", 0.4), ("mfu 40", 0.4),
                                           ("mfu 1.5", 0.015), ("mfu 2", 0.02)])
def test_a_bare_number_below_1_is_a_fraction_and_above_1_a_percentage(
    text: str, mfu: float
) -> None:
    assert parsed(f"8b lora {text}").mfu == pytest.approx(mfu)


def test_a_bare_1_for_the_mfu_in_a_follow_up_is_refused_too() -> None:
    err = refused_followup("8b lora 50M tokens h100", "what if mfu 1")
    assert 'say "mfu 1%" or "mfu 100%"' in err.message


def test_a_bare_1_for_the_dropout_is_refused_with_the_one_reading_in_range() -> None:
    err = refused("8b lora dropout 1")
    assert err.word == "1"
    assert 'say "dropout 1%"' in err.message and "dropout 100%" not in err.message
    assert "between 0 and 0.9" in err.message


def test_a_dropout_below_1_stays_a_fraction_and_above_1_a_percentage() -> None:
    assert parsed("8b lora dropout 0.05").lora_dropout == 0.05
    assert parsed("8b lora dropout 5").lora_dropout == 0.05


# --- 2. a card's memory before its name picks that variant, as after it does ---------

@pytest.mark.parametrize(("text", "gpu"), [
    ("8b lora 40gb a100", "a100-40gb-sxm"),
    ("8b lora 40GB A100s", "a100-40gb-sxm"),
    ("8b lora 94gb h100", "h100-nvl"),
    ("8b lora 32gb v100", "v100-32gb"),
    ("8b lora 40gb a100 pcie", "a100-40gb-pcie"),
])
def test_a_memory_before_the_card_picks_its_variant_of_that_memory(text: str, gpu: str) -> None:
    assert parsed(text).gpu == gpu


@pytest.mark.parametrize(("before", "after"), [
    ("40gb a100", "a100 40gb"), ("94gb h100", "h100 94gb"), ("32gb v100", "v100 32gb"),
    ("40gb a100 pcie", "a100 40gb pcie"), ("4x 40gb a100", "4x a100 40gb"),
])
def test_memory_before_the_name_reads_as_memory_after_it(before: str, after: str) -> None:
    assert fields(f"8b lora {before}") == fields(f"8b lora {after}")


def test_a_count_before_the_memory_and_the_card_counts_that_variant() -> None:
    request = parsed("8b lora 4x 40gb a100")
    assert (request.gpu_count, request.gpu) == (4, "a100-40gb-sxm")


def test_a_memory_said_with_its_card_is_no_memory_of_its_own() -> None:
    assert "gpu_memory_gb" not in fields("8b lora 40gb a100")


def test_a_plural_card_before_its_memory_picks_the_variant_too() -> None:
    assert parsed("8b lora a100s 40gb").gpu == "a100-40gb-sxm"


def test_a_memory_the_card_comes_in_no_variant_of_is_still_refused() -> None:
    err = refused("8b lora 48gb 4090")
    assert err.word == "48gb"
    assert "is not the memory of the NVIDIA GeForce RTX 4090" in err.message


def test_a_memory_alone_still_names_cards_by_their_memory() -> None:
    assert fields("8b lora 2x 24gb")["gpu_memory_gb"] == 24.0


# --- 3. a bare 8k beside mfu and its number asks for its unit -------------------------

def test_a_bare_8k_before_mfu_and_its_number_asks_for_its_unit() -> None:
    err = refused("8b lora 8k mfu 40%")
    assert err.word == "8k"
    assert '"8k" needs a unit' in err.message and '"seq 8k"' in err.message


def test_a_bare_8k_alone_asks_for_its_unit_the_same_way() -> None:
    err = refused("8b lora 8k")
    assert err.word == "8k" and '"seq 8k" for the sequence length' in err.message


def test_the_bare_8k_refusals_example_parses_with_8k_as_the_sequence() -> None:
    assert parsed(example(refused("8b lora 8k mfu 40%"))).seq_len == 8192


def test_in_a_thread_8k_beside_mfu_asks_for_its_unit() -> None:
    err = refused_followup("8b lora 50M tokens h100", "8k? mfu 1%")
    assert err.word == "8k" and '"seq 8k"' in err.message


def test_in_a_thread_8k_alone_is_still_the_sequence() -> None:
    assert followup("8b lora 50M tokens h100", "what if 8k?").seq_len == 8192


def test_a_number_that_fits_the_unit_after_it_keeps_it() -> None:
    with pytest.raises(QueryError, match='"40%" needs a unit'):
        parsed("8b lora 30 mfu 40%")


# --- 4. a family and a version without a size is refused with its sizes ---------------

@pytest.mark.parametrize("text", ["qwen 3 lora", "llama 3 lora", "gemma 3 lora",
                                  "phi 3 lora", "qwen 2.5 lora", "llama 3.1 lora",
                                  "qwen3 lora", "phi3 lora", "phi-3 lora", "Qwen3 lora"])
def test_a_family_and_a_version_without_a_size_asks_for_the_size(text: str) -> None:
    err = refused(text)
    assert "needs a size" in err.message and "Did you mean" not in err.message


def test_the_refusal_names_every_size_of_that_generation_in_the_catalog() -> None:
    message = refused("qwen 3 lora").message
    sizes = [m.id.removeprefix("qwen3-") for m in CAT.models.values()
             if m.id.startswith("qwen3-")]
    assert sizes and all(f" {size}" in message for size in sizes)
    assert message.startswith('"qwen 3" needs a size: Qwen3 comes in 0.6b, 1.7b, 4b, 8b,')


def test_the_sizes_are_read_from_the_catalog_not_a_list() -> None:
    models = [m for m in CAT.models.values() if m.id != "qwen3-4b"]
    smaller = Catalog(models, list(CAT.gpus.values()))
    with pytest.raises(QueryError) as caught:
        parse_query("qwen3 lora", smaller)
    assert "Qwen3 comes in 0.6b, 1.7b, 8b," in caught.value.message


def test_phi3_names_phi_3s_sizes_rather_than_other_phi_models() -> None:
    message = refused("phi3 lora").message
    assert "Phi-3 comes in mini and medium" in message and "phi2" not in message


def test_a_whole_version_names_its_point_releases_sizes() -> None:
    message = refused("llama 3 lora").message
    assert "Llama 3.1 comes in 8b, 70b and 405b; Llama 3.2 comes in 1b and 3b" in message


@pytest.mark.parametrize(("text", "generation"), [
    ("qwen 3 lora", "qwen3-"), ("qwen3 lora", "qwen3-"), ("phi3 lora", "phi-3-"),
    ("llama 3 lora", "llama-3."), ("gemma 3 lora", "gemma-3-"), ("qwen 2.5 lora", "qwen2.5-"),
])
def test_the_refusals_example_names_a_model_of_that_generation(
    text: str, generation: str
) -> None:
    err = refused(text)
    assert parsed(quoted_example(err)).model.startswith(generation)
    assert parsed(example(err)).model.startswith(generation)


def test_the_refusal_quotes_the_family_and_version_as_said() -> None:
    err = refused("qwen3 lora")
    assert err.word == "qwen3" and quoted_example(err) == "qwen3 8b lora"


@pytest.mark.parametrize(("text", "model"), [("qwen 3 8b lora", "qwen3-8b"),
                                             ("qwen3 8b lora", "qwen3-8b"),
                                             ("phi 3 mini lora", "phi-3-mini")])
def test_a_family_version_and_size_still_names_the_model(text: str, model: str) -> None:
    assert parsed(text).model == model


def test_a_number_after_a_family_word_that_counts_cards_is_still_a_count() -> None:
    assert parsed("qwen 2 h100s lora").gpu_count == 2


def test_a_number_after_a_family_word_before_a_unit_is_still_the_units() -> None:
    assert parsed("llama 2 epochs lora").epochs == 2


def test_a_number_that_misfits_its_unit_stays_its_when_the_next_number_has_a_unit() -> None:
    err = refused("8b lora 5000 epochs 50M tokens")
    assert err.word == "5000" and "is out of range" in err.message


def test_a_generation_the_catalog_holds_one_model_of_names_that_model() -> None:
    message = refused("deepseek-v2 qlora").message
    assert "the catalog holds DeepSeek-V2-Lite only of that generation" in message
