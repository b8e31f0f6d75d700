"""Misreads a QA pass by an ML engineer found in the query language, one behaviour per
test, against the shipped catalog: a bare dollar amount, DeepSeek-R1, QLoRA beside an FP8
base, questions as people ask them, half an epoch, cards the catalog lacks, card counts in
a thread, and DoRA's method."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.parse import parse_fields, parse_query
from adapters.query.parser import Said
from catalog.hub.ref import hub_ref_for_word
from catalog.loader import default_catalog
from engine.choices import Method, Mode, ModelPick, Precision
from tests.helpers import example, fields, followup, refused, refused_followup

CAT = default_catalog()




# --- 1. a bare dollar amount is asked about, never read as a rate --------------------

@pytest.mark.parametrize("text", ["8b lora 50M tokens $500", "8b lora 50M tokens $ 500",
                                  "8b lora 50M tokens h100 $2.49", "8b lora $2k 50M tokens"])
def test_a_bare_dollar_amount_asks_whether_it_is_a_budget_or_a_rate(text: str) -> None:
    err = refused(text)
    assert "a budget (say \"under $" in err.message
    assert "or a rate per GPU-hour (say \"$" in err.message and '/hr")?' in err.message


def test_the_bare_dollar_question_quotes_the_amount_in_both_readings() -> None:
    err = refused("8b lora 50M tokens $500")
    assert err.word == "$500"
    assert err.message.startswith(
        '"$500": a budget (say "under $500") or a rate per GPU-hour (say "$500/hr")?')


def test_the_bare_dollar_questions_example_parses() -> None:
    parse_query(example(refused("8b lora 50M tokens $500")), CAT)


def test_a_bare_dollar_amount_in_a_follow_up_is_asked_about_too() -> None:
    err = refused_followup("8b lora 50M tokens", "what if $3")
    assert '"$3": a budget' in err.message


@pytest.mark.parametrize(("text", "rate"), [
    ("8b lora 50M tokens $2.49/hr", 2.49), ("8b lora 50M tokens $2.49/h", 2.49),
    ("8b lora 50M tokens $2.49 per hour", 2.49), ("8b lora 50M tokens $2.49 an hour", 2.49),
    ("8b lora 50M tokens $2.49 hourly", 2.49), ("8b lora 50M tokens $2.49/gpu-hr", 2.49),
    ("8b lora 50M tokens $2.49 per gpu hour", 2.49), ("8b lora 50M tokens price 3", 3.0),
    ("8b lora 50M tokens price $3", 3.0), ("8b lora 50M tokens 2.5/hr", 2.5),
    ("8b lora 50M tokens h100 spot price $1.20", 1.2),
])
def test_a_dollar_amount_said_per_hour_is_the_rate(text: str, rate: float) -> None:
    assert parse_query(text, CAT).price_per_gpu_hour == rate


@pytest.mark.parametrize(("text", "budget"), [
    ("8b lora 50M tokens under $500", 500.0), ("8b lora 50M tokens budget $2k", 2000.0),
    ("8b lora 50M tokens $500 budget", 500.0), ("8b lora 50M tokens max $100", 100.0),
    ("budget of $500 8b lora 50M tokens", 500.0),
    ("8b lora 50M tokens less than $500", 500.0),
    ("8b lora 50M tokens max budget of $500", 500.0),
    ("8b lora 50M tokens a cap of $2k", 2000.0),
    ("8b lora 50M tokens $500 or less", 500.0), ("8b lora 50M tokens at most $500", 500.0),
    ("8b lora 50M tokens $500 total", 500.0),
])
def test_a_dollar_amount_said_as_a_limit_is_the_budget(text: str, budget: float) -> None:
    request = parse_query(text, CAT)
    assert request.budget_usd == budget and request.price_per_gpu_hour is None


def test_less_than_a_plain_number_asks_what_the_limit_is_in() -> None:
    err = refused("8b lora 50M tokens less than 500")
    assert "(under $500)" in err.message and "(less than 500 hours)" in err.message


# --- 2. DeepSeek-R1 is DeepSeek-V3's architecture, never rank 1 ----------------------

@pytest.mark.parametrize("text", ["deepseek r1 lora", "deepseek-r1 lora", "DeepSeek R1 lora",
                                  "deepseek-ai/DeepSeek-R1 lora",
                                  "deepseek-ai/DeepSeek-R1-0528 lora"])
def test_deepseek_r1_is_the_v3_architecture(text: str) -> None:
    request = parse_query(text, CAT)
    assert request.model == "deepseek-v3" and request.model_pick is ModelPick.STAND_IN


def test_r1_after_deepseek_is_never_a_lora_rank() -> None:
    assert parse_query("deepseek r1 lora", CAT).lora_rank == parse_query("8b lora", CAT).lora_rank
    assert parse_query("deepseek r1 lora r 16", CAT).lora_rank == 16


def test_the_reply_names_the_architecture_r1_is_counted_as() -> None:
    assert CAT.models[parse_query("deepseek-r1 lora", CAT).model].name == "DeepSeek-V3"


# --- 3. QLoRA's base is 4-bit: an FP8 base beside it is refused ------------------------

@pytest.mark.parametrize("text", ["qwen2.5-7b qlora fp8 a100", "qwen2.5-7b nf4 fp8 a100",
                                  "qwen2.5-7b fp8 4-bit lora a100"])
def test_qlora_beside_an_fp8_base_is_refused(text: str) -> None:
    message = refused(text).message
    assert "keeps the base in 4 bits" in message
    for instead in ('"qlora" alone', '"lora fp8"', '"full fp8"', '"lora float8"'):
        assert instead in message


def test_qlora_beside_fp8_says_the_ways_to_say_it_that_parse() -> None:
    for text in ("qwen2.5-7b qlora 50M tokens a100", "qwen2.5-7b lora fp8 a100",
                 "qwen2.5-7b full fp8 a100", "qwen2.5-7b lora float8 a100"):
        parse_query(text, CAT)
    parse_query(example(refused("qwen2.5-7b qlora fp8 a100")), CAT)


@pytest.mark.parametrize(("previous", "text"), [("8b lora fp8", "what if qlora"),
                                                ("8b qlora", "fp8")])
def test_a_follow_up_that_puts_qlora_on_an_fp8_base_is_refused(previous: str, text: str) -> None:
    err = refused_followup(previous, text)
    assert "keeps the base in 4 bits" in err.message and '"qlora bf16"' in err.message
    assert followup(previous, example(err)).method is Method.QLORA


def test_qlora_with_a_16_bit_compute_dtype_is_still_read() -> None:
    assert parse_query("8b qlora bf16", CAT).precision is Precision.BF16


# --- 4. questions as people ask them ----------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("will 8b full fit on a 4090", {"method": Method.FULL, "gpu": "rtx-4090"}),
    ("does 8b full fit on a 4090", {"method": Method.FULL, "gpu": "rtx-4090"}),
    ("is it possible to lora 8b on a 3090", {"method": Method.LORA, "gpu": "rtx-3090"}),
    ("is a 4090 enough for 8b lora", {"method": Method.LORA, "gpu": "rtx-4090"}),
    ("cheapest way to lora 8b on 1B tokens", {"dataset_tokens": 1_000_000_000}),
    ("8b lora dual 4090", {"gpu": "rtx-4090", "gpu_count": 2}),
    ("8b lora a pair of 4090s", {"gpu": "rtx-4090", "gpu_count": 2}),
    ("8b lora quad a100", {"gpu": "a100-80gb-sxm", "gpu_count": 4}),
    ("8b lora h100 on spot instances", {"spot": True}),
    ("8b lora h100 spot pricing", {"spot": True}),
    ("8b lora napkin math", {"mode": Mode.NAPKIN}),
    ("8b lora 50mil tokens", {"dataset_tokens": 50_000_000}),
    ("8b lora 50 M tokens", {"dataset_tokens": 50_000_000}),
    ("8b lora 1.2billion tokens", {"dataset_tokens": 1_200_000_000}),
    ("8b lora seq 8 k", {"seq_len": 8192}),
])
def test_a_question_as_people_ask_it_is_read_as_meant(text: str, expected: dict[str, Any]) -> None:
    assert expected.items() <= fields(text).items()


def test_on_demand_in_two_words_says_on_demand_prices() -> None:
    request = parse_query("8b lora h100 on demand", CAT)
    assert request.spot is False and "spot" in request.model_fields_set


@pytest.mark.parametrize("text", ["8b lora rough estimate", "8b lora quick estimate",
                                  "ballpark 8b lora"])
def test_how_rough_an_estimate_is_wanted_changes_nothing(text: str) -> None:
    assert parse_query(text, CAT) == parse_query("8b lora", CAT)


def test_way_after_a_count_is_still_tensor_parallelism() -> None:
    assert parse_query("70b full 8 way tp 8x h100", CAT).tensor_parallel == 8


def test_a_count_of_instances_is_still_a_sample_count() -> None:
    assert fields("8b lora 10k instances of 512 tokens")["samples"] == 10_000


# --- 5. half an epoch -----------------------------------------------------------------

def test_half_an_epoch_is_half_of_one_epoch() -> None:
    assert parse_query("8b lora 50M tokens half an epoch", CAT).epochs == 0.5


def test_half_an_epoch_in_a_follow_up_is_the_value_too() -> None:
    assert followup("8b lora 50M tokens 4 epochs", "half an epoch").epochs == 0.5


def test_half_the_epochs_in_a_new_question_suggests_the_fraction_of_one_epoch() -> None:
    err = refused("8b lora 50M tokens half the epochs")
    assert '(or say the value: "0.5 epochs")' in err.message


def test_half_the_epochs_in_a_follow_up_still_halves_the_earlier_epochs() -> None:
    assert followup("8b lora 50M tokens 4 epochs", "half the epochs").epochs == 2.0


# --- 6. cards the catalog lacks are named, with the nearest -----------------------------

@pytest.mark.parametrize(("text", "word", "nearest"), [
    ("8b lora 4070", "4070", "rtx-4080"),
    ("8b lora 4070s", "4070s", "rtx-4080"),
    ("8b lora 2x 4070", "4070", "rtx-4080"),
    ("8b lora 2 4070s", "4070s", "rtx-4080"),
    ("8b lora rtx a4500", "rtx a4500", "rtx-a4000"),
    ("8b lora geforce rtx 4070", "geforce rtx 4070", "rtx-4080"),
    ("8b lora 3080 ti", "3080 ti", "rtx-3080"),
    ("8b lora 4090 super", "4090 super", "rtx-4090"),
])
def test_a_card_the_catalog_lacks_is_named_with_the_nearest(
    text: str, word: str, nearest: str
) -> None:
    err = refused(text)
    assert err.word == word
    assert f'"{word}" is not a card in the catalog' in err.message
    assert err.suggestions[0] == nearest
    parse_query(example(err), CAT)


@pytest.mark.parametrize(("text", "gpu"), [
    ("8b lora quadro rtx a6000", "rtx-a6000"), ("8b lora geforce 4090", "rtx-4090"),
    ("8b lora 2x geforce 4090", "rtx-4090"), ("8b lora tesla v100", "v100-16gb"),
    ("8b lora rtx 6000 ada", "rtx-6000-ada"),
])
def test_a_makers_word_before_a_catalog_card_is_read_as_nothing(text: str, gpu: str) -> None:
    assert parse_query(text, CAT).gpu == gpu


@pytest.mark.parametrize(("name", "gpu"), [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"), ("NVIDIA A100-SXM4-40GB", "a100-40gb-sxm"),
    ("NVIDIA A100 80GB PCIe", "a100-80gb-pcie"), ("NVIDIA A100-PCIE-40GB", "a100-40gb-pcie"),
    ("Tesla V100-SXM2-32GB", "v100-32gb"), ("Tesla V100-PCIE-16GB", "v100-16gb"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"), ("NVIDIA RTX 6000 Ada Generation", "rtx-6000-ada"),
    ("NVIDIA GH200 480GB", "gh200"), ("NVIDIA L40S", "l40s"), ("AMD Instinct MI300X", "mi300x"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000"),
    ("AMD Instinct MI250X/MI250", "mi250x"),
])
def test_a_card_named_as_nvidia_smi_prints_it_is_that_card(name: str, gpu: str) -> None:
    """What ``nvidia-smi`` (or ``rocm-smi``) prints, pasted after a count or alone."""
    assert parse_query(f"8b lora 50M tokens 8x {name}", CAT).gpu == gpu
    assert parse_query(f"8b lora 50M tokens on {name}", CAT).gpu == gpu


@pytest.mark.parametrize(("name", "gpu"), [("A100-80G", "a100-80gb-sxm"),
                                         ("a100-40g", "a100-40gb-sxm"),
                                         ("h100-80g", "h100-sxm")])
def test_a_cards_memory_glued_with_a_bare_g_is_its_gb(name: str, gpu: str) -> None:
    assert parse_query(f"8b lora 50M tokens 8x {name}", CAT).gpu == gpu


@pytest.mark.parametrize(("text", "value"), [("8b lora 1080 tokens", 1080),
                                             ("8b lora seq 2080", 2080)])
def test_a_card_shaped_number_with_a_unit_is_still_the_number(text: str, value: int) -> None:
    assert value in fields(text).values()


@pytest.mark.parametrize(("word", "family"), [("lama", "llama"), ("gemmma", "gemma"),
                                              ("mistrall", "mistral")])
def test_a_typo_of_a_family_word_suggests_the_family(word: str, family: str) -> None:
    assert family in refused(f"{word} 8b lora").suggestions


# --- 7. card counts in an estimate's thread ----------------------------------------------

@pytest.mark.parametrize(("text", "count"), [("use 2 of them", 2), ("what about 4 of them", 4),
                                             ("8 of those", 8), ("a pair of them", 2)])
def test_n_of_them_counts_the_earlier_card(text: str, count: int) -> None:
    after = followup("8b lora 50M tokens h100", text)
    assert (after.gpu, after.gpu_count) == ("h100-sxm", count)


def test_n_of_them_counts_cards_of_the_earlier_memory() -> None:
    after = followup("8b lora 50M tokens 24gb", "use 2 of them")
    assert (after.gpu_memory_gb, after.gpu_count) == (24.0, 2)


def test_n_of_them_after_an_estimate_that_picked_its_card_says_to_name_it() -> None:
    err = refused_followup("8b lora 50M tokens", "use 2 of them")
    assert "picked its cards itself" in err.message and example(err) == "on 2x h100"


def test_n_of_them_in_a_new_question_counts_the_card_it_names() -> None:
    assert parse_query("8b lora h100 2 of them", CAT).gpu_count == 2
    assert "no card is named" in refused("8b lora 2 of them").message


@pytest.mark.parametrize(("text", "count"), [
    ("add a second 4090", 2), ("one more gpu", 2), ("another 4090", 2), ("add a gpu", 2),
    ("add 2 gpus", 3), ("2 more 4090s", 3), ("add 3 more cards", 4), ("an extra gpu", 2),
])
def test_cards_added_in_a_follow_up_add_to_the_earlier_count(text: str, count: int) -> None:
    after = followup("8b lora 50M tokens 1x 4090", text)
    assert (after.gpu, after.gpu_count) == ("rtx-4090", count)


def test_a_card_added_to_an_estimate_that_picked_its_count_says_the_count() -> None:
    err = refused_followup("8b lora 50M tokens 4090", "add a second 4090")
    assert "named no card count" in err.message and example(err) == "on 2x 4090"


def test_a_card_added_of_another_kind_is_refused_naming_both() -> None:
    err = refused_followup("8b lora 50M tokens 1x 4090", "add an a100")
    assert "ran on the 4090, not the a100" in err.message and '"1 more gpu"' in err.message


def test_a_card_added_in_a_new_question_is_refused_as_a_change() -> None:
    assert "changes an earlier estimate" in refused("8b lora one more gpu").message


def test_a_card_added_beside_a_count_is_refused_naming_both() -> None:
    err = refused_followup("8b lora 50M tokens 1x 4090", "one more gpu on 4x h100")
    assert "Pick one" in err.message


@pytest.mark.parametrize(("text", "seq"), [("8k?", 8192), ("what if 8k?", 8192),
                                           ("32k", 32768), ("how about 128k", 131072)])
def test_a_bare_k_in_a_follow_up_is_the_sequence_length(text: str, seq: int) -> None:
    assert followup("8b lora 50M tokens", text).seq_len == seq


def test_a_bare_k_is_the_sequence_only_alone_in_a_follow_up() -> None:
    assert "needs a unit" in refused("8b lora 8k").message
    assert "needs a unit" in refused_followup("8b lora 50M tokens", "what if 100k").message
    assert followup("8b lora 50M tokens", "what if 10k tokens").dataset_tokens == 10_000


@pytest.mark.parametrize(("text", "seq"), [
    ("8b lora 8k tokens h100", 8192), ("8b lora 8192 tokens h100", 8192),
    ("8b lora tokens 8192 h100", 8192), ("8b qlora 4090 16k tokens", 16384),
    ("8b lora 128k tokens h100", 131072),
])
def test_a_power_of_two_token_count_said_without_a_sequence_is_the_sequence(
    text: str, seq: int
) -> None:
    """Nobody fine-tunes on a dataset of four sequences: ``8k tokens`` is the length."""
    request = parse_query(text, CAT)
    assert (request.seq_len, request.dataset_tokens) == (seq, None)


@pytest.mark.parametrize(("text", "tokens"), [
    ("8b lora 10k tokens h100", 10_000), ("8b lora 256k tokens h100", 256_000),
    ("8b lora 8k tokens seq 2048 h100", 8000), ("8b lora 50M tokens h100", 50_000_000),
])
def test_other_token_counts_and_any_beside_a_sequence_stay_the_dataset(
    text: str, tokens: int
) -> None:
    assert parse_query(text, CAT).dataset_tokens == tokens


def test_a_power_of_two_token_count_in_a_follow_up_is_the_new_sequence() -> None:
    after = followup("8b lora 50M tokens", "what if 8k tokens")
    assert (after.seq_len, after.dataset_tokens) == (8192, 50_000_000)


# --- 8. DoRA is LoRA as said ----------------------------------------------------------------

def test_dora_alone_says_the_method_lora() -> None:
    request = parse_query("8b dora h100", CAT)
    assert request.method is Method.LORA and request.dora is True
    assert "method" in request.model_fields_set


def test_dora_keeps_qlora_as_qdora() -> None:
    assert parse_query("8b qlora dora", CAT).method is Method.QLORA
    assert parse_query("8b nf4 dora", CAT).method is Method.QLORA


def test_dora_beside_full_is_still_refused() -> None:
    assert "full fine-tune has none" in refused("8b full dora").message


def test_dora_with_full_checkpointing_is_lora() -> None:
    request = parse_query("8b dora full ac", CAT)
    assert request.method is Method.LORA and request.grad_checkpointing is True


@pytest.mark.parametrize(("previous", "method"), [("8b", Method.LORA),
                                                  ("8b full", Method.LORA),
                                                  ("8b qlora", Method.QLORA)])
def test_dora_in_a_follow_up_is_lora_unless_the_estimate_was_qlora(
    previous: str, method: Method
) -> None:
    after = followup(previous, "with dora")
    assert after.dora is True and after.method is method


def test_dora_said_alone_as_a_field_names_only_the_switch() -> None:
    assert parse_fields("dora", CAT) == {"dora": True}


@pytest.mark.parametrize("text", ["llama 3 8b", "meta-llama/Meta-Llama-3-8B-Instruct",
                                  "deepseek r1", "qwen2-72b", "microsoft/Phi-3.5-mini-instruct"])
def test_another_checkpoint_of_the_architecture_is_counted_and_said(text: str) -> None:
    assert parse_query(f"{text} lora", CAT).model_pick is ModelPick.STAND_IN


@pytest.mark.parametrize("text", ["llama-3.1-8b", "Qwen/Qwen2.5-72B-Instruct",
                                  "meta-llama/Meta-Llama-3.1-8B", "mistral-nemo"])
def test_another_spelling_of_the_model_itself_is_exact(text: str) -> None:
    assert parse_query(f"{text} lora", CAT).model_pick is ModelPick.EXACT


@pytest.mark.parametrize(("text", "model"), [
    ("NousResearch/Meta-Llama-3.1-8B", "llama-3.1-8b"),
    ("unsloth/Qwen2.5-7B-Instruct", "qwen2.5-7b"),
])
def test_another_owners_copy_of_a_catalog_repository_is_that_model_and_said(
    text: str, model: str
) -> None:
    request = parse_query(f"{text} lora", CAT)

    assert request.model == model and request.model_pick is ModelPick.STAND_IN


def test_a_pinned_revision_of_a_copy_is_left_to_the_hub() -> None:
    assert refused("NousResearch/Meta-Llama-3.1-8B@main lora").word == (
        "NousResearch/Meta-Llama-3.1-8B@main"
    )


@pytest.mark.parametrize("text", ["h100 NousResearch/Meta-Llama-3.1-8B lora",
                                  "h100 meta-llama/Llama-3.1-8B full"])
def test_a_card_before_a_hub_id_stays_the_card(text: str) -> None:
    request = parse_query(text, CAT)

    assert request.gpu == "h100-sxm" and request.model == "llama-3.1-8b"


# --- slashes: shorthands and known words joined are never a Hub model -------------------

@pytest.mark.parametrize(("text", "ckpt"), [
    ("8b lora w/o ckpt a100", False), ("8b lora w/ ckpt a100", True),
    ("8b lora w/out grad ckpt a100", False),
])
def test_w_slash_and_w_slash_o_are_with_and_without(text: str, ckpt: bool) -> None:
    assert parse_query(text, CAT).grad_checkpointing is ckpt


def test_known_words_joined_by_a_slash_are_read_apart() -> None:
    assert parse_query("8b lora q_proj/v_proj a100", CAT).lora_targets.value == "qv"
    assert "conflicts" in refused("8b lora bf16/fp32 a100").message


@pytest.mark.parametrize("word", ["w/o", "n/a", "W/O"])
def test_a_written_shorthand_is_not_a_hub_model_id(word: str) -> None:
    assert hub_ref_for_word(word, CAT) is None


def test_an_org_slash_name_word_still_names_a_hub_model() -> None:
    ref = hub_ref_for_word("Qwen/Qwen3-Coder-480B", CAT)
    assert ref is not None and ref.repo == "Qwen/Qwen3-Coder-480B"


@pytest.mark.parametrize(("name", "model"), [
    ("Qwen/Qwen2.5-Coder-7B-Instruct", "qwen2.5-7b"), ("qwen2.5-coder-1.5b", "qwen2.5-1.5b"),
    ("huggyllama/llama-7b", "llama-2-7b"), ("lmsys/vicuna-13b-v1.5", "llama-2-13b"),
    ("HuggingFaceH4/zephyr-7b-beta", "mistral-7b"),
])
def test_a_checkpoint_of_a_catalog_models_shapes_is_counted_as_it(name: str, model: str) -> None:
    assert parse_query(f"{name} lora 10M tokens h100", CAT).model == model


@pytest.mark.parametrize("word", ["blackwell", "pro"])
def test_a_word_of_a_cards_name_alone_names_no_card(word: str) -> None:
    assert refused(f"8b lora 50M tokens {word}").word == word


def test_a_makers_word_before_gpus_is_read_as_nothing() -> None:
    assert parse_query("8b lora 50M tokens 8 nvidia gpus h100", CAT).gpu_count == 8


@pytest.mark.parametrize("text", ["8b lora 50M tokens h100 seq/2", "8b lora on/off ckpt"])
def test_settings_joined_by_a_slash_are_refused_without_a_hub_lookup(text: str) -> None:
    err = refused(text)
    assert "write its words apart" in err.message and err.word is None


@pytest.mark.parametrize("text", [
    "8b lora dataset of 8k tokens h100", "8b lora 4k tokens 2 epochs h100",
    "8b lora 4k tokens under $10", "8b lora 0.125M tokens h100",
])
def test_a_token_count_said_as_data_stays_the_dataset(text: str) -> None:
    assert parse_query(text, CAT).dataset_tokens is not None


def test_a_token_count_beside_a_sequence_option_stays_the_dataset() -> None:
    said = Said({"seq_len": 4096}, {"seq_len": "the seq option"})
    request = parse_query("8b lora 8k tokens h100", CAT, said)
    assert (request.seq_len, request.dataset_tokens) == (4096, 8000)


def test_a_token_count_after_an_estimate_that_said_its_sequence_stays_the_dataset() -> None:
    after = followup("8b lora 50M tokens seq 4096", "8k tokens")
    assert (after.seq_len, after.dataset_tokens) == (4096, 8000)
