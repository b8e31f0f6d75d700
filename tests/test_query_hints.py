"""Known words that are not settings are refused with what to say instead: optimizers the
engine has no states for, sequence parallelism it models as context parallelism, a
framework without a profile."""

from __future__ import annotations

import pytest

from engine.choices import Framework, Method, Sharding, Solve
from tests.helpers import followup, parsed, refused


@pytest.mark.parametrize("word", ["muon", "sophia", "galore", "adam-mini", "schedule-free"])
def test_an_unmodeled_optimizer_is_refused_with_the_closest_ones(word: str) -> None:
    err = refused(f"8b full {word} 8x h100")
    assert "optimizer is not modeled" in err.message and "adamw-8bit" in err.message


def test_ulysses_is_refused_with_context_parallelism_to_say() -> None:
    err = refused("8b full DeepSpeed Ulysses 8x h100 seq 64k zero3")
    assert "cp 4" in err.message


def test_lightning_is_a_framework_without_a_profile() -> None:
    err = refused("8b lora Lightning 1x a100")
    assert "no profile for that framework" in err.message


@pytest.mark.parametrize("text", ["8b lora truncated at 2048 a100",
                                  "8b lora truncated to 2048 tokens a100"])
def test_a_cut_at_a_length_is_the_max_length(text: str) -> None:
    assert parsed(text).max_len == 2048


def test_free_colab_is_the_colab_card() -> None:
    assert parsed("8b qlora free colab t4").gpu == "t4"


def test_ring_attention_beside_its_degree_says_nothing_more() -> None:
    assert parsed("8b lora seq 128k cp 8 8x h100 ring attention").context_parallel == 8


def test_ring_attention_without_a_degree_asks_for_it() -> None:
    err = refused("8b full ring attention 8x h100 seq 128k")
    assert 'say its degree, e.g. "cp 8"' in err.message


def test_sequence_parallel_is_refused_with_tp_and_cp_to_say() -> None:
    err = refused("8b full sequence parallel 8x h100")
    assert '"tp 8"' in err.message and '"cp 8"' in err.message


def test_ring_attention_in_a_thread_with_a_cp_degree_says_nothing_more() -> None:
    request = followup("8b lora seq 128k cp 8 8x h100 50M tokens", "with ring attention and bs 2")
    assert (request.context_parallel, request.micro_batch) == (8, 2)


@pytest.mark.parametrize("text", ["8b full fsdp degree 0 8x h100", "8b full fsdp degree 8x h100"])
def test_an_fsdp_degree_that_is_no_count_of_cards_is_refused_with_one(text: str) -> None:
    assert "an FSDP degree is a whole number of cards" in refused(text).message


def test_truncation_as_a_switch_leaves_the_length_to_max_length() -> None:
    assert parsed("8b lora truncation=True max_length=2048 a100").max_len == 2048


@pytest.mark.parametrize("text", ["qwen2.5 0.5b full 3060 12gb", "8b qlora 4070 16gb"])
def test_a_geforce_the_catalog_lacks_beside_its_memory_is_no_card_count(text: str) -> None:
    assert "is not a card in the catalog" in refused(text).message


@pytest.mark.parametrize(("text", "cards"), [
    ("70b full 8x h100, 2 nodes, 1B tokens", 16),
    ("70b full 72x gb200 2 nodes", 144),
    ("70b full 16 h100s across 2 nodes", 16),
    ("70b full 8 h100s across 2 nodes", 8),
    ("70b full 4x h100 2 nodes", 4),
])
def test_a_whole_machine_said_before_the_nodes_is_per_node(text: str, cards: int) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes) == (cards, 2)


@pytest.mark.parametrize("text", [
    "quick q: is it feasible to qlora 70b on 2 4090s?",
    "any idea how long 8b lora 50M tokens on an a100 would take",
    "I'm planning to lora mistral 7b on 1B tokens, will it OOM on a 4090?",
])
def test_plain_english_around_a_question_is_read_as_nothing(text: str) -> None:
    assert parsed(text).gpu is not None


@pytest.mark.parametrize(("word", "says"), [
    ("tokens/sec", "a measured figure is not an input"),
    ("measured", "a measured figure is not an input"),
    ("vs", "ask about one run at a time"),
    ("macbook", "Apple silicon and TPUs are not in the catalog"),
    ("tpu", "Apple silicon and TPUs are not in the catalog"),
])
def test_a_word_for_what_ftcost_does_not_take_says_why(word: str, says: str) -> None:
    assert says in refused(f"8b lora {word} a100").message


def test_a_slashed_hint_word_is_never_looked_up_on_the_hub() -> None:
    assert refused("8b lora tokens/sec a100").word is None


@pytest.mark.parametrize("text", ["70b full 2 x 8 h100", "70b full 2 × 8 H100",
                                  "70b full 2 x 8 gpus h100"])
def test_nodes_times_cards_with_spaces_is_a_grid(text: str) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes) == (16, 2)


def test_my_budget_is_an_amount() -> None:
    assert parsed("8b lora my budget is $1000 a100 1B tokens").budget_usd == 1000


@pytest.mark.parametrize("text", ["8b lora within a week a100 1B tokens",
                                  "8b lora in under a week a100 1B tokens"])
def test_a_week_is_one_week(text: str) -> None:
    assert parsed(text).deadline_hours == 168


def test_a_global_batch_in_tokens_is_refused_with_how_to_say_it() -> None:
    err = refused("8b full global batch 4M tokens 8x h100")
    assert "a batch counted in tokens is not read" in err.message


@pytest.mark.parametrize(("text", "batch"), [
    ("8b lora SFTConfig(per_device_train_batch_size=4, max_seq_length=2048) a100", 4),
    ("8b lora FastLanguageModel.from_pretrained(max_seq_length=2048, load_in_4bit=True) t4",
     1),
])
def test_a_config_pasted_as_code_reads_its_arguments(text: str, batch: int) -> None:
    request = parsed(text)
    assert (request.micro_batch, request.seq_len) == (batch, 2048)


def test_a_configs_fsdp_config_key_says_fsdp() -> None:
    request = parsed("8b lora fsdp_config: fsdp_sharding_strategy FULL_SHARD 8x a100")
    assert request.sharding is Sharding.FSDP


def test_a_benchmark_line_reads_its_run() -> None:
    assert parsed("benchmark: 8b lora a100 seq 2048").seq_len == 2048


def test_largest_before_a_family_asks_for_its_largest_model() -> None:
    assert parsed("largest llama I can qlora on a 16gb card").solve is Solve.MODEL


def test_fewest_before_a_card_asks_for_the_fewest_of_it() -> None:
    request = parsed("fewest a100 40gb cards to full fine-tune 8b 50M tokens")
    assert (request.solve, request.gpu) == (Solve.GPU_COUNT, "a100-40gb-sxm")


@pytest.mark.parametrize(("text", "field", "value"), [
    ("8b full_finetuning=True unsloth 1x h100", "method", Method.FULL),
    ("8b lora use_unsloth: true a100", "framework", Framework.UNSLOTH),
    ("8b full compile.enable true 8x h100 torchtitan", "compile", True),
])
def test_a_configs_own_key_for_a_setting_sets_it(text: str, field: str, value: object) -> None:
    assert getattr(parsed(text), field) == value
