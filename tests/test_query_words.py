"""The words issues 13, 15 and 16 add to the query language, one behaviour per test,
against the shipped catalog."""

from __future__ import annotations

from typing import Any

import pytest

from adapters.parse import QueryError, apply_followup, parse_query
from catalog.loader import default_catalog
from engine.choices import Framework, LoraTargets, Method, ModelPick, Optimizer, Sharding, Solve
from engine.estimate import estimate
from engine.request import Request
from tests.helpers import fields, followup, refused

CAT = default_catalog()


# --- framework (issue 13) ---------------------------------------------------------

FRAMEWORK_WORDS = [
    ("hf", Framework.HF), ("transformers", Framework.HF), ("trl", Framework.HF),
    ("peft", Framework.HF), ("axolotl", Framework.HF), ("llama-factory", Framework.HF),
    ("swift", Framework.HF), ("unsloth", Framework.UNSLOTH),
    ("torchtune", Framework.TORCHTUNE), ("litgpt", Framework.LITGPT),
    ("torchtitan", Framework.TORCHTITAN), ("generic", Framework.GENERIC),
]


@pytest.mark.parametrize(("word", "framework"), FRAMEWORK_WORDS)
def test_framework_word_sets_the_framework(word: str, framework: Framework) -> None:
    assert parse_query(f"8b lora {word}", CAT).framework is framework


def test_two_frameworks_conflict() -> None:
    assert "Pick one" in refused("8b lora trl unsloth").message


# --- spot ------------------------------------------------------------------------


def test_spot_asks_for_spot_prices() -> None:
    assert parse_query("70b qlora h100 spot", CAT).spot is True


def test_on_demand_asks_for_on_demand_prices() -> None:
    assert parse_query("70b qlora h100 on-demand", CAT).spot is False


# --- budget and deadline (issue 16 item 2) ------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("8b lora 50M tokens under $500", {"budget_usd": 500.0}),
    ("8b lora 50M tokens budget $2k", {"budget_usd": 2000.0}),
    ("8b lora 50M tokens $500 budget", {"budget_usd": 500.0}),
    ("8b lora 50M tokens within 2 days", {"deadline_hours": 48.0}),
    ("8b lora 50M tokens in 12 hours", {"deadline_hours": 12.0}),
    ("8b lora 50M tokens by 48h", {"deadline_hours": 48.0}),
    ("8b lora 50M tokens under $500 within 1 week", {"budget_usd": 500.0,
                                                      "deadline_hours": 168.0}),
])
def test_budget_and_deadline_words(text: str, expected: dict[str, float]) -> None:
    assert expected.items() <= fields(text).items()


def test_a_limit_without_a_unit_asks_for_dollars_or_hours() -> None:
    err = refused("8b lora 50M tokens under 500")
    assert "under $500" in err.message and "500 hours" in err.message


def test_a_budget_out_of_bounds_is_refused_with_the_bound() -> None:
    assert "between $1 and $1,000,000,000" in refused("8b lora budget $0.5").message


def test_a_deadline_out_of_bounds_is_refused() -> None:
    assert "deadline" in refused("8b lora within 300 weeks").message


# --- datasets counted in samples (issue 16 item 3) -----------------------------------

@pytest.mark.parametrize(("text", "count", "length"), [
    ("8b lora 10k samples of 512 tokens", 10_000, 512),
    ("8b lora 20k examples avg 800 tokens", 20_000, 800),
    ("8b lora 50k rows x 1.2k tok", 50_000, 1_200),
    ("8b lora 10k samples avg 512 tokens", 10_000, 512),
])
def test_samples_times_average_length_is_the_dataset(text: str, count: int, length: int) -> None:
    request = parse_query(text, CAT)
    assert (request.samples, request.sample_tokens) == (count, length)
    assert request.dataset_tokens == count * length


def test_a_sample_count_without_a_length_sets_no_size() -> None:
    request = parse_query("8b lora 10k samples a100", CAT)
    assert (request.samples, request.sample_tokens, request.dataset_tokens) == (10_000, None,
                                                                             None)


def test_a_sample_count_without_a_length_is_answered_with_a_request_for_the_length() -> None:
    est = estimate(parse_query("8b lora 10k samples a100", CAT), CAT)
    line = next(a for a in est.assumptions if a.startswith("Compute"))
    assert "how long is a sample?" in line and "10,000 samples of 512 tokens" in line


def test_packing_and_max_len_are_read() -> None:
    request = parse_query("8b lora 10k samples of 512 tokens packing max-len 2048", CAT)
    assert request.packing is True and request.max_len == 2048


def test_a_followup_changes_the_sample_count_and_keeps_the_length() -> None:
    first = parse_query("8b lora 10k samples of 512 tokens", CAT)
    second = apply_followup(first, "what if 20k samples", CAT)
    assert (second.samples, second.dataset_tokens) == (20_000, 20_000 * 512)


def test_a_followup_in_tokens_drops_the_sample_count() -> None:
    first = parse_query("8b lora 10k samples of 512 tokens", CAT)
    second = apply_followup(first, "what if 1B tokens", CAT)
    assert (second.samples, second.dataset_tokens) == (None, 10**9)


# --- nodes (issue 15 item 3) ---------------------------------------------------------

@pytest.mark.parametrize("text", [
    "70b full 2 nodes of 8x h100", "70b full 2x8 h100", "70b full 16 h100s across 2 nodes",
    "70b full 8 h100 per node 2 nodes", "70b full 2 nodes 8x h100",
    "70b full 2 nodes, 8x h100 each", "70b full 2 nodes 16x h100",
])
def test_node_layouts_give_the_total_count_and_the_nodes(text: str) -> None:
    request = parse_query(text, CAT)
    assert (request.gpu, request.gpu_count, request.nodes) == ("h100-sxm", 16, 2)


@pytest.mark.parametrize(("text", "count"), [
    ("70b full 2 nodes 4x h100", 8), ("8b full 4 nodes 8 gpus each h100", 32),
    ("70b full 2 nodes 2x gh200", 2),  # a GH200 machine holds one: 2 is the total
    ("70b full nodes 2 8x h100", 8),  # "nodes 2", as --nnodes: a count beside it is the total
])
def test_a_count_right_after_the_nodes_is_per_node_when_a_node_holds_it(
    text: str, count: int
) -> None:
    assert parse_query(text, CAT).gpu_count == count


def test_nodes_alone_are_whole_nodes_of_eight() -> None:
    request = parse_query("8b lora 1B tokens 2 nodes", CAT)
    assert (request.gpu_count, request.nodes) == (16, 2)


@pytest.mark.parametrize("text", [
    "8b lora 1B tokens 8 gpus", "8b lora 1B tokens 8 h100", "8b lora 1B tokens 8x h100",
    "8b lora 1B tokens 2 epochs 8 gpus", "1B tokens 8 gpus 8b lora",
])
def test_billions_of_tokens_before_a_card_count_are_the_data(text: str) -> None:
    request = parse_query(text, CAT)
    assert (request.model, request.dataset_tokens, request.gpu_count) == (
        "llama-3.1-8b", 1_000_000_000, 8
    )


def test_a_size_before_tokens_and_a_number_is_still_the_model() -> None:
    request = parse_query("70b tokens 50M 8 gpus", CAT)
    assert (request.model, request.dataset_tokens) == ("llama-3.1-70b", 50_000_000)


@pytest.mark.parametrize("text", ["8b lora 1M tokens under $-50%", "8b lora 1M tokens within 1e-9"])
def test_a_limit_without_a_unit_gives_valid_examples_for_a_bad_number(text: str) -> None:
    message = refused(text).message
    assert "(under $500)" in message and "48 hours" in message


def test_a_named_card_count_is_kept() -> None:
    assert parse_query("8b full 8 gpus 10M tokens", CAT).gpu_count == 8


def test_cards_that_do_not_split_over_the_nodes_are_refused() -> None:
    assert "split evenly" in refused("70b full 10 h100 across 3 nodes").message


# --- solve words (issue 16 item 1) ---------------------------------------------------

@pytest.mark.parametrize(("text", "goal"), [
    ("max seq 8b qlora rtx-4090", Solve.SEQ_LEN),
    ("longest context 8b qlora rtx-4090", Solve.SEQ_LEN),
    ("max batch 8b lora seq 4096 h100", Solve.MICRO_BATCH),
    ("largest model qlora 24gb", Solve.MODEL),
    ("biggest model qlora on a 4090", Solve.MODEL),
    ("largest model full 8x h100", Solve.MODEL),
    ("fewest cards 70b qlora h100", Solve.GPU_COUNT),
])
def test_solve_words(text: str, goal: Solve) -> None:
    assert parse_query(text, CAT).solve is goal


def test_max_seq_with_a_number_is_the_sequence_length() -> None:
    request = parse_query("8b lora max seq 8k", CAT)
    assert (request.seq_len, request.solve) == (8192, None)


def test_a_memory_size_names_a_card_capacity() -> None:
    request = parse_query("largest model qlora 24gb", CAT)
    assert (request.gpu_memory_gb, request.gpu) == (24.0, None)


def test_largest_model_without_a_model_marks_the_placeholder() -> None:
    assert parse_query("largest model qlora 24gb", CAT).model_pick is ModelPick.NONE


def test_largest_model_keeps_a_named_family() -> None:
    request = parse_query("largest model llama qlora on a 4090", CAT)
    assert request.model_pick is ModelPick.FAMILY and request.gpu == "rtx-4090"


# --- plain English (issue 15 item 4) --------------------------------------------------

def test_a_plain_english_question_parses() -> None:
    request = parse_query(
        "how much to fine tune llama 3 70b with qlora on 50 million tokens using h100s?", CAT
    )
    assert (request.model, request.method, request.dataset_tokens, request.gpu) == (
        "llama-3.1-70b", Method.QLORA, 50_000_000, "h100-sxm")


@pytest.mark.parametrize(("text", "expected"), [
    ("8b lora two epochs", {"epochs": 2.0}),
    ("8b lora a million tokens", {"dataset_tokens": 1_000_000}),
    ("8b lora five hundred thousand tokens", {"dataset_tokens": 500_000}),
    ("8b full eight h100", {"gpu_count": 8}),
])
def test_number_words_are_read(text: str, expected: dict[str, Any]) -> None:
    assert expected.items() <= fields(text).items()


@pytest.mark.parametrize(("word", "wrong"), [
    ("sft", "fft"), ("deepspeed", "deepseek"), ("alpha", "stablelm"), ("tow", "tok"),
])
def test_no_suggestion_changes_the_method_model_or_card(word: str, wrong: str) -> None:
    try:
        parse_query(f"8b lora {word}", CAT)
    except QueryError as err:
        assert not any(wrong in s for s in err.suggestions)


def test_deepspeed_is_answered_with_the_zero_stages() -> None:
    assert "zero3" in refused("70b full deepspeed").message


def test_deepspeed_with_its_stage_is_the_hf_stack_at_that_stage() -> None:
    request = parse_query("70b lora deepspeed zero3 8x a100", CAT)
    assert request.sharding is Sharding.ZERO3 and request.framework is Framework.HF


def test_deepspeed_keeps_a_named_hf_alias() -> None:
    request = parse_query("70b lora trl deepspeed zero2 8x a100", CAT)
    assert request.framework is Framework.HF


def test_deepspeed_with_a_framework_that_never_runs_it_is_refused() -> None:
    err = refused("8b full torchtune deepspeed zero3 8x h100")
    assert "does not run DeepSpeed" in err.message


def test_deepspeed_keeps_unsloth_whose_multi_card_runs_go_through_the_hf_trainer() -> None:
    request = parse_query("8b lora unsloth deepspeed zero3 2x a100", CAT)
    assert (request.framework, request.sharding) == (Framework.UNSLOTH, Sharding.ZERO3)


def test_accelerate_is_the_hf_stack() -> None:
    assert parse_query("8b full fsdp accelerate 8x h100", CAT).framework is Framework.HF


def test_lora_alpha_with_a_value_is_read_and_changes_nothing() -> None:
    assert parse_query("8b lora alpha 32 lr 2e-4", CAT) == parse_query("8b lora", CAT)


def test_an_unknown_model_shaped_word_is_still_refused_with_models_only() -> None:
    err = refused("llama-4-8b lora")
    assert err.suggestions and all(s.startswith("llama") for s in err.suggestions)


def test_a_typo_of_a_method_is_suggested() -> None:
    assert refused("8b qlroa").suggestions == ["qlora"]


# --- model names (issue 15 item 5) -----------------------------------------------------

@pytest.mark.parametrize(("text", "model"), [
    ("llama-3-70b-instruct qlora", "llama-3.1-70b"),
    ("meta-llama/Llama-3.1-70B-Instruct qlora", "llama-3.1-70b"),
    ("70B-instruct qlora", "llama-3.1-70b"),
    ("llama-2-7b-chat lora", "llama-2-7b"),
    ("qwen 72b lora", "qwen2.5-72b"),
    ("qwen 7b lora", "qwen2.5-7b"),
    ("qwen-72b lora", "qwen-72b"),
])
def test_model_names_resolve(text: str, model: str) -> None:
    assert parse_query(text, CAT).model == model


@pytest.mark.parametrize(("word", "model"), [
    ("mixtral", "mixtral-8x22b"), ("llama", "llama-3.3-70b"), ("qwen", "qwen3-235b-a22b"),
])
def test_a_family_alone_means_its_flagship(word: str, model: str) -> None:
    request = parse_query(f"{word} lora", CAT)
    assert (request.model, request.model_pick) == (model, ModelPick.FAMILY)


def test_family_and_size_records_the_pick() -> None:
    assert parse_query("qwen 72b lora", CAT).model_pick is ModelPick.FAMILY_SIZE


def test_an_exact_name_records_no_bare_size() -> None:
    assert parse_query("llama-3.1-8b lora", CAT).model_pick is ModelPick.EXACT


def test_a_bare_size_equals_the_request_for_its_model() -> None:
    assert parse_query("8b lora", CAT) == Request(model="llama-3.1-8b", method=Method.LORA)


def test_a_followup_naming_a_size_clears_the_family_pick() -> None:
    first = parse_query("mixtral lora", CAT)
    assert apply_followup(first, "what about 8b", CAT).model_pick is None


@pytest.mark.parametrize(("text", "expected"), [
    ("8b full fsdp2 8x h100", {"sharding": Sharding.FSDP}),
    ("8b lora sdpa", {"flash_attention": True}),
    ("8b lora flash-attention-2", {"flash_attention": True}),
    ("8b lora liger", {"fused_ce": True}),
    ("8b full adamw_torch_fused", {"optimizer": Optimizer.ADAMW_FUSED}),
    ("8b full paged_adamw_8bit", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("8b lora per-device-batch 4", {"micro_batch": 4}),
    ("8b lora mlp", {"lora_targets": LoraTargets.MLP}),
])
def test_common_trainer_spellings_are_read(text: str, expected: dict[str, Any]) -> None:
    request = parse_query(text, CAT)
    assert {name: getattr(request, name) for name in expected} == expected
    assert expected.keys() <= request.model_fields_set


# --- a GPTQ base (issue 13) -------------------------------------------------------


@pytest.mark.parametrize("word", ["gptq", "gptq-int4", "auto-gptq"])
def test_gptq_says_the_4_bit_base_is_a_gptq_checkpoint(word: str) -> None:
    got = fields(f"qwen2.5-7b qlora {word}")
    assert got["gptq"] is True and got["method"] is Method.QLORA


def test_no_gptq_turns_it_off_in_a_followup() -> None:
    first = parse_query("qwen2.5-7b qlora gptq", CAT)
    assert apply_followup(first, "no-gptq", CAT).gptq is False


# --- DeepSpeed stages as its config says them (issue 13) ------------------------------

DEEPSPEED_STAGE_WORDS = [
    ("deepspeed stage 3", Sharding.ZERO3), ("deepspeed zero stage 2", Sharding.ZERO2),
    ("zero stage 1", Sharding.ZERO1), ("ds-zero3", Sharding.ZERO3),
    ("deepspeed-zero2", Sharding.ZERO2), ("ds3", Sharding.ZERO3), ("ds zero2", Sharding.ZERO2),
]


@pytest.mark.parametrize(("words", "stage"), DEEPSPEED_STAGE_WORDS)
def test_a_deepspeed_stage_said_as_its_config_says_it_is_that_zero_stage(
    words: str, stage: Sharding
) -> None:
    got = fields(f"8b full 4x h100 {words}")
    assert got["sharding"] is stage and got["framework"] is Framework.HF


def test_a_stage_deepspeed_does_not_have_says_which_it_has() -> None:
    message = str(refused("8b full deepspeed stage 4"))
    assert '"stage"' in message and "1, 2 or 3" in message


@pytest.mark.parametrize("word", ["hf-trainer", "sfttrainer", "sft-trainer"])
def test_the_hf_trainers_names_mean_hf(word: str) -> None:
    assert fields(f"8b lora {word}")["framework"] is Framework.HF


# --- phrases typed as several words (issue 13: queries as users type them) ----------------

PHRASE_QUERIES = [
    ("8b lora batch size 8", "micro_batch", 8),
    ("8b lora micro batch 2", "micro_batch", 2),
    ("8b lora per_device_train_batch_size 4", "micro_batch", 4),
    ("8b lora sequence length 8192", "seq_len", 8192),
    ("8b lora max seq length 4096", "seq_len", 4096),
    ("8b lora context window 32k", "seq_len", 32768),
    ("8b lora gradient accumulation steps 8", "grad_accum", 8),
    ("8b lora gradient_accumulation_steps 8", "grad_accum", 8),
    ("8b lora no gradient checkpointing", "grad_checkpointing", False),
    ("8b lora without flash attention", "flash_attention", False),
    ("8b lora lora rank 64", "lora_rank", 64),
    ("8b lora target_modules q_proj,v_proj", "lora_targets", LoraTargets.QV),
    ("8b lora target q_proj k_proj v_proj o_proj", "lora_targets", LoraTargets.ATTENTION),
    ("8b lora target gate_proj up_proj down_proj", "lora_targets", LoraTargets.MLP),
]


@pytest.mark.parametrize(("text", "field", "value"), PHRASE_QUERIES)
def test_a_setting_typed_as_several_words_is_read_as_one(
    text: str, field: str, value: object
) -> None:
    assert parse_query(text, CAT).model_dump()[field] == value


def test_flash_attention_is_the_switch_not_the_lora_target() -> None:
    got = parse_query("8b lora flash attention 2", CAT)
    assert got.flash_attention is True and got.lora_targets is LoraTargets.ALL_LINEAR


@pytest.mark.parametrize(
    "text", ["8b 4-bit lora", "8b lora nf4", "8b 4bit", "8b lora load_in_4bit"]
)
def test_a_4_bit_base_means_qlora(text: str) -> None:
    assert parse_query(text, CAT).method is Method.QLORA


def test_a_4_bit_full_fine_tune_is_refused_with_what_to_say() -> None:
    message = str(refused("8b full 4-bit"))
    assert '"4-bit"' in message and "qlora" in message


@pytest.mark.parametrize(
    ("text", "model"),
    [("Meta-Llama-3.1-8B-Instruct lora", "llama-3.1-8b"),
     ("Mistral-7B-Instruct-v0.3 lora", "mistral-7b-v0.3")],
)
def test_a_hub_repository_name_without_its_owner_names_the_model(text: str, model: str) -> None:
    assert parse_query(text, CAT).model == model


def test_bitsandbytes_named_beside_qlora_changes_nothing() -> None:
    assert parse_query("8b qlora bnb", CAT) == parse_query("8b qlora", CAT)


def test_a_sample_cap_said_alone_sizes_the_sequence() -> None:
    got = parse_query("8b lora max_length 4096", CAT)
    assert (got.seq_len, got.max_len) == (4096, 4096)


def test_a_sample_cap_under_a_stated_sequence_leaves_the_sequence() -> None:
    got = parse_query("8b lora seq 8192 max-len 4096", CAT)
    assert (got.seq_len, got.max_len) == (8192, 4096)


@pytest.mark.parametrize(
    ("text", "gpu", "count"),
    [("8b lora rtx 4090 24gb x2", "rtx-4090", 2), ("8b full 8 x h100 80gb sxm", "h100-sxm", 8)],
)
def test_a_card_said_with_its_own_memory_and_form_factor_keeps_its_count(
    text: str, gpu: str, count: int
) -> None:
    got = parse_query(text, CAT)
    assert (got.gpu, got.gpu_count) == (gpu, count)


def test_tokens_of_context_are_the_sequence_not_the_dataset() -> None:
    got = parse_query("8b lora 4096 tokens of context 50M tokens", CAT)
    assert (got.seq_len, got.dataset_tokens) == (4096, 50_000_000)


@pytest.mark.parametrize(
    "text",
    ["8b lora lr 1e-4 warmup 0.03 cosine", "8b lora weight decay 0.01",
     "8b lora learning rate 2e-4", "8b lora neftune", "8b lora max_grad_norm 1.0"],
)
def test_training_settings_that_change_no_cost_are_read_and_ignored(text: str) -> None:
    assert parse_query(text, CAT) == parse_query("8b lora", CAT)


@pytest.mark.parametrize(
    ("text", "field"), [("8b lora sample packing", "packing"),
                        ("8b lora use_liger_kernel", "fused_ce")],
)
def test_hf_switch_names_turn_their_switch_on(text: str, field: str) -> None:
    assert parse_query(text, CAT).model_dump()[field] is True


@pytest.mark.parametrize(
    ("text", "targets"),
    [("8b lora q,v", LoraTargets.QV), ("8b lora rank 16 on q,k,v,o", LoraTargets.ATTENTION),
     ("8b lora qkv", LoraTargets.ATTENTION), ("8b lora mlp layers only", LoraTargets.MLP),
     ("8b lora on all linear layers", LoraTargets.ALL_LINEAR)],
)
def test_lora_targets_said_as_projection_letters_or_layers(
    text: str, targets: LoraTargets
) -> None:
    assert parse_query(text, CAT).lora_targets is targets


def test_full_parameter_fine_tuning_is_a_full_fine_tune() -> None:
    assert parse_query("8b full-parameter fine-tuning", CAT).method is Method.FULL
    assert parse_query("8b full parameter", CAT).method is Method.FULL


@pytest.mark.parametrize(
    ("text", "plain"),
    [("what's the peak vram memory for 8b qlora", "8b qlora"),
     ("8b full FT 8x h100", "8b full 8x h100"),
     ("8b lora 10k samples of ~800 tokens", "8b lora 10k samples of 800 tokens")],
)
def test_words_around_a_question_change_nothing(text: str, plain: str) -> None:
    assert parse_query(text, CAT) == parse_query(plain, CAT)


def test_the_hf_trainer_in_two_words_means_hf() -> None:
    assert parse_query("8b lora (hf trainer)", CAT).framework is Framework.HF


@pytest.mark.parametrize(
    ("followup", "field", "value"),
    [("same but full", "method", Method.FULL), ("switch to hf", "framework", Framework.HF),
     ("drop ckpt", "grad_checkpointing", False), ("make it 2 epochs", "epochs", 2.0),
     ("flash attention off", "flash_attention", False), ("enable compile", "compile", True),
     ("disable flash", "flash_attention", False),
     ("what if we used unsloth", "framework", Framework.UNSLOTH),
     ("we have 4x a100", "gpu_count", 4)],
)
def test_a_followup_in_plain_english_changes_what_it_names(
    followup: str, field: str, value: object
) -> None:
    base = parse_query("8b lora 50M tokens h100", CAT)
    assert apply_followup(base, followup, CAT).model_dump()[field] == value


# --- FSDP strategy names and optimizer steps ------------------------------------------


@pytest.mark.parametrize(
    ("text", "sharding"),
    [
        ("8b full full_shard auto_wrap 8x h100", Sharding.FSDP),
        ("8b full fsdp full-shard 8x h100", Sharding.FSDP),
        ("8b lora no_shard 2x h100", Sharding.NONE),
    ],
)
def test_fsdp_strategy_names_set_the_sharding(text: str, sharding: Sharding) -> None:
    assert parse_query(text, CAT).sharding is sharding


def test_hf_fsdp_argument_with_offload_shards_and_offloads() -> None:
    request = parse_query("8b lora hf full_shard offload auto_wrap 4x a100", CAT)
    assert request.sharding is Sharding.FSDP
    assert request.offload


def test_steps_give_the_tokens_of_every_step_on_every_card() -> None:
    request = parse_query("8b lora 1000 steps bs 8 seq 2048 4x a100", CAT)
    assert request.dataset_tokens == 1000 * 8 * 2048 * 4


def test_max_steps_counts_the_accumulation_too() -> None:
    request = parse_query("8b lora max_steps 200 bs 2 accum 4 2x a100", CAT)
    assert request.dataset_tokens == 200 * 2 * 4 * 2048 * 2


def test_steps_follow_a_global_batch() -> None:
    request = parse_query("8b lora gbs 64 bs 4 8x h100 500 steps seq 4096", CAT)
    assert request.dataset_tokens == 500 * 64 * 4096


def test_steps_without_a_card_count_are_refused_with_how_to_say_them() -> None:
    err = refused("8b lora 1000 steps bs 8")
    assert "number of cards" in err.message
    assert "tokens" in err.message


def test_steps_and_tokens_together_are_refused() -> None:
    assert "once" in refused("8b lora 1000 steps 50M tokens 4x a100").message


def test_how_often_a_run_logs_saves_and_evaluates_changes_nothing() -> None:
    plain = parse_query("8b lora", CAT)
    said = "8b lora warmup steps 100 logging_steps 10 save_steps 500 eval steps 500"
    assert parse_query(said, CAT) == plain


@pytest.mark.parametrize(
    "text", ["8b lora accumulation steps 8", "8b lora accum steps 8", "8b lora grad accum steps 8"]
)
def test_accumulation_steps_in_words_is_the_accumulation(text: str) -> None:
    assert parse_query(text, CAT).grad_accum == 8


def test_gradient_accumulation_steps_still_read_as_accumulation() -> None:
    assert fields("8b lora 4 accumulation steps")["grad_accum"] == 4


# --- settings as configs and training scripts spell them -------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8b lora micro_batch_size 4", {"micro_batch": 4}),  # axolotl, litgpt
        ("8b lora local_batch_size 4", {"micro_batch": 4}),  # torchtitan
        ("8b lora train_micro_batch_size_per_gpu 4", {"micro_batch": 4}),  # DeepSpeed
        ("8b lora cutoff_len 1024", {"seq_len": 1024}),  # LLaMA-Factory
        ("8b lora sequence_len 4096", {"seq_len": 4096}),  # axolotl
        ("8b lora model_max_length 1024", {"seq_len": 1024}),  # alpaca scripts
        ("8b full block_size 1024", {"seq_len": 1024}),  # HF run_clm
    ],
)
def test_batch_and_sequence_under_their_config_names(text: str, expected: dict) -> None:
    got = fields(text)
    assert {k: got[k] for k in expected} == expected


def test_a_true_setting_is_the_setting() -> None:
    got = fields("8b lora bf16=True packing=True use_liger_kernel=True")
    assert got["packing"] and got["fused_ce"]


def test_a_false_switch_turns_it_off() -> None:
    assert parse_query("8b lora gradient_checkpointing=False", CAT).grad_checkpointing is False
    assert parse_query("8b lora gradient checkpointing false", CAT).grad_checkpointing is False


def test_a_false_value_word_says_nothing() -> None:
    assert parse_query("8b lora fp16=False", CAT) == parse_query("8b lora", CAT)


def test_load_in_4bit_true_is_qlora_and_false_is_not() -> None:
    assert parse_query("8b lora load_in_4bit=True", CAT).method is Method.QLORA
    assert parse_query("8b lora load_in_4bit=False", CAT).method is Method.LORA


@pytest.mark.parametrize(
    "text",
    ["8b lora quantization_bit 4", "8b lora quant_bits 4", "8b lora finetuning_type lora "
     "quantization_bit 4"],
)
def test_a_four_bit_quantization_setting_is_qlora(text: str) -> None:
    assert parse_query(text, CAT).method is Method.QLORA


def test_llama_factory_lora_target_all_is_all_linear() -> None:
    assert parse_query("8b lora lora_target all", CAT).lora_targets is LoraTargets.ALL_LINEAR


def test_axolotl_lora_target_linear_is_all_linear() -> None:
    request = parse_query("8b lora lora_target_linear true", CAT)
    assert request.lora_targets is LoraTargets.ALL_LINEAR


def test_torchtune_attention_module_list_sets_the_targets() -> None:
    request = parse_query("8b lora torchtune lora_attn_modules ['q_proj','v_proj']", CAT)
    assert request.lora_targets is LoraTargets.QV


def test_torchtune_and_unsloth_switch_names() -> None:
    assert not parse_query("8b lora enable_activation_checkpointing=False", CAT).grad_checkpointing
    assert parse_query("8b lora enable_activation_offloading=True", CAT).activation_offload
    assert parse_query("8b lora use_gradient_checkpointing unsloth", CAT).grad_checkpointing


def test_llama_factory_stage_sft_says_nothing_and_a_bare_stage_is_deepspeeds() -> None:
    assert parse_query("8b lora stage sft", CAT) == parse_query("8b lora", CAT)
    assert "DeepSpeed" in refused("8b full stage 3 4x a100").message


# --- a global batch --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "accum"),
    [
        ("8b lora global batch size 64 micro batch 4 8x h100", 2),
        ("8b lora gbs 128 bs 2 2 nodes of 8x h100", 4),
        ("8b lora 64 global batch 8x h100", 8),
        ("8b lora total train batch size 32 bs 8 4x a100", 1),
        ("8b lora global batch size 64 bs 4 8x h100 accum 2", 2),
    ],
)
def test_a_global_batch_sets_the_accumulation_per_card(text: str, accum: int) -> None:
    assert parse_query(text, CAT).grad_accum == accum


def test_a_global_batch_without_a_card_count_is_refused_with_how_to_say_it() -> None:
    err = refused("8b lora global batch size 64 bs 4")
    assert "number of cards" in err.message
    assert "accum" in err.message


def test_a_global_batch_that_does_not_divide_is_refused() -> None:
    assert "whole multiple" in refused("8b lora global batch size 60 bs 4 8x h100").message


def test_a_global_batch_that_contradicts_the_accumulation_is_refused() -> None:
    assert "say one" in refused("8b lora global batch size 64 bs 4 8x h100 accum 4").message


def test_a_global_batch_beyond_the_accumulation_bound_is_refused() -> None:
    assert "out of range" in refused("8b lora global batch size 1e30 bs 4 8x h100").message


def test_a_followup_recounts_the_tokens_of_a_run_in_steps() -> None:
    first = parse_query("8b lora 1000 steps bs 8 4x a100", CAT)
    longer = apply_followup(first, "what if seq 4096", CAT)
    assert longer.dataset_tokens == 1000 * 8 * 4096 * 4
    wider = apply_followup(first, "on 8x h100", CAT)
    assert wider.dataset_tokens == 1000 * 8 * 2048 * 8


def test_a_run_in_steps_is_one_pass_of_its_tokens() -> None:
    request = parse_query("8b lora 1000 steps bs 8 4x a100", CAT)
    assert request.epochs == 1
    assert request.trained_tokens == request.dataset_tokens


def test_a_followup_in_tokens_replaces_the_steps() -> None:
    first = parse_query("8b lora 1000 steps bs 8 4x a100", CAT)
    after = apply_followup(first, "50M tokens", CAT)
    assert after.steps is None
    assert after.dataset_tokens == 50_000_000


def test_fsdp_shard_grad_op_is_read_as_zero2_as_configs_are() -> None:
    assert parse_query("8b full shard_grad_op 4x a100", CAT).sharding is Sharding.ZERO2


# --- more of how people write it ---------------------------------------------------------


def test_seq_len_in_two_words_is_the_sequence() -> None:
    assert parse_query("8b lora 512 seq len", CAT).seq_len == 512


@pytest.mark.parametrize("text", ["8b lora per-device batch 8", "8b lora per-gpu batch size 8"])
def test_a_hyphenated_per_device_batch_is_the_micro_batch(text: str) -> None:
    assert parse_query(text, CAT).micro_batch == 8


def test_a_card_memory_shortened_to_g_reads_as_gb() -> None:
    assert parse_query("8b lora a100 80g", CAT).gpu == "a100-80gb-sxm"


@pytest.mark.parametrize(
    ("text", "seq"), [("8b full packed 8192", 8192), ("8b lora packed to 4k", 4096)]
)
def test_packed_to_a_length_packs_and_sets_the_sequence(text: str, seq: int) -> None:
    request = parse_query(text, CAT)
    assert request.packing and request.seq_len == seq


def test_packing_before_another_unit_leaves_the_number_to_it() -> None:
    request = parse_query("8b lora packing 2 epochs 50M tokens", CAT)
    assert request.packing and request.epochs == 2 and request.seq_len == 2048


@pytest.mark.parametrize("text", ["8b lora int8", "8b lora load_in_8bit=True", "8b lora 8-bit"])
def test_an_8_bit_base_is_refused_with_what_to_say(text: str) -> None:
    err = refused(text)
    assert "8-bit base" in err.message and "qlora" in err.message


def test_8_bit_adam_in_two_words_is_the_8_bit_optimizer() -> None:
    assert parse_query("8b full 8-bit adam", CAT).optimizer is Optimizer.ADAMW_8BIT


def test_preference_training_is_refused_with_how_to_estimate_it() -> None:
    err = refused("dpo on llama 3 8b lora")
    assert "not modeled" in err.message and "twice the batch" in err.message


def test_double_quant_in_two_words_is_the_switch() -> None:
    assert parse_query("8b qlora double quant", CAT).double_quant


def test_where_a_notebook_runs_changes_nothing() -> None:
    assert parse_query("8b lora on colab t4", CAT) == parse_query("8b lora t4", CAT)


def test_phi_3_5_mini_is_phi_3_minis_architecture() -> None:
    assert parse_query("Phi-3.5-mini-instruct lora", CAT).model == "phi-3-mini"


@pytest.mark.parametrize(
    "text",
    ["max batch 8b lora 1000 steps 4x a100", "max seq 8b lora 1000 steps 4x a100",
     "fewest cards 8b lora 1000 steps a100"],
)
def test_steps_are_refused_in_a_question_that_solves_for_a_factor_of_them(text: str) -> None:
    err = refused(text)
    assert "solves for" in err.message and "tokens" in err.message


def test_steps_count_a_largest_model_question() -> None:
    request = parse_query("largest model lora 1000 steps 4x a100 bs 2", CAT)
    assert request.dataset_tokens == 1000 * 2 * 2048 * 4


def test_a_family_and_a_size_an_alias_names_read_as_that_model() -> None:
    assert parse_query("bloom 7b lora", CAT).model == "bloom-7b1"


def test_a_family_and_a_size_in_millions_it_lacks_asks_which_model() -> None:
    err = refused("opt 350m lora")
    assert "Which model" in err.message and "opt-125m" in err.message


@pytest.mark.parametrize("cloud", ["runpod", "aws", "lambda"])
def test_a_cloud_name_says_to_state_its_rate(cloud: str) -> None:
    err = refused(f"70b qlora 50M tokens h100 on {cloud}")
    assert "not one cloud's" in err.message and "$2.49/hr" in err.message


def test_a_family_size_the_catalog_lacks_points_at_the_hub() -> None:
    err = refused("deepseek 67b qlora")
    assert "no deepseek of that size" in err.message and "(org/name)" in err.message


def test_a_size_in_millions_before_a_unit_is_the_units_number() -> None:
    assert parse_query("opt 50m tokens lora", CAT).dataset_tokens == 50_000_000


def test_an_hqq_base_is_qlora_at_its_four_and_a_half_bits() -> None:
    assert parse_query("70b hqq 2x rtx-4090 fsdp", CAT) == parse_query(
        "70b qlora no-double-quant 2x rtx-4090 fsdp", CAT
    )  # the same request: 4.5 bits a weight, dequantized as NF4


def test_fsdp_qlora_as_one_word_is_refused_with_what_to_say() -> None:
    assert "say qlora fsdp" in str(refused("70b qlora 2x 3090 fsdp_qlora"))


# --- a model size before a counted word -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [
        ("8b steps 100 8x h100", "steps", 100),
        ("70b gbs 64 8x h100", "grad_accum", 8),
        ("8b samples 100 of 512 tokens", "samples", 100),
        ("8b nodes 2 h100", "nodes", 2),
    ],
)
def test_a_size_before_a_counted_word_is_the_model_and_the_count_follows(
    text: str, field: str, value: int
) -> None:
    request = parse_query(text, CAT)
    assert request.model.endswith(text.split()[0])
    assert getattr(request, field) == value


def test_a_size_after_the_model_is_named_is_a_count() -> None:
    assert parse_query("8b lora 1b samples of 10 tokens", CAT).samples == 1_000_000_000


def test_samples_can_come_before_their_count() -> None:
    request = parse_query("8b lora num_examples 10k of 512 tokens", CAT)
    assert (request.samples, request.sample_tokens) == (10_000, 512)


@pytest.mark.parametrize("word", ["--nnodes", "num_nodes", "nodes"])
def test_launcher_node_flags_count_nodes(word: str) -> None:
    assert parse_query(f"8b lora {word} 2 8x h100", CAT).nodes == 2


# --- counts too large for any number ----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "8b lora 1e400 samples of 512 tokens",
        "8b lora samples 1e400",
        "8b lora 1e400 steps 8x h100",
        "8b lora gbs 1e400 8x h100",
        "8b lora 10k samples of 1e400 tokens",
        "70b full fsdp dp-replicate 1e400 16x h100",
    ],
)
def test_an_infinite_count_is_refused_not_crashed_on(text: str) -> None:
    err = refused(text)
    assert "1e400" in err.message


def test_a_fractional_step_count_is_refused_not_rounded() -> None:
    assert "whole number" in refused("8b lora 2.5 steps 8x h100").message


# --- cards named by memory, and memory inside a card's name -----------------------------


@pytest.mark.parametrize(
    "text", ["70b qlora 2x 24gb", "70b qlora 2x24gb", "70b qlora 2 x 24gb cards"]
)
def test_a_count_of_cards_named_by_their_memory(text: str) -> None:
    request = parse_query(text, CAT)
    assert (request.gpu, request.gpu_count, request.gpu_memory_gb) == (None, 2, 24.0)


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        ("8b lora 1 h100 80gb pcie", "h100-pcie"),
        ("8b lora a100 40gb pcie", "a100-40gb-pcie"),
        ("8b lora a100 pcie 40gb", "a100-40gb-pcie"),
        ("8b lora rtx 4090 24gb", "rtx-4090"),
        ("8b lora RTX A6000 48GB", "rtx-a6000"),
    ],
)
def test_a_memory_said_with_a_card_is_part_of_its_name(text: str, gpu: str) -> None:
    request = parse_query(text, CAT)
    assert (request.gpu, request.gpu_memory_gb) == (gpu, None)


def test_a_memory_the_named_card_does_not_have_is_refused() -> None:
    err = refused("8b lora rtx 4090 48gb")
    assert "48gb" in err.message and "24 GB" in err.message


# --- optimizers, lengths and switches as people type them -------------------------------


@pytest.mark.parametrize(
    "words", ["adamw 8bit", "adam 8bit", "adamw 8-bit", "paged adamw 8bit", "optim adamw_bnb_8bit"]
)
def test_eight_bit_adam_in_words(words: str) -> None:
    assert parse_query(f"8b lora {words}", CAT).optimizer is Optimizer.ADAMW_8BIT


@pytest.mark.parametrize("words", ["paged adamw", "optimizer adamw_torch"])
def test_thirty_two_bit_adam_in_words(words: str) -> None:
    assert parse_query(f"8b lora {words}", CAT).optimizer is Optimizer.ADAMW


@pytest.mark.parametrize(
    "words", ["optim adamw_torch_fused", "fused adamw", "adamw fused", "adamw_apex_fused"]
)
def test_fused_adamw_in_words(words: str) -> None:
    assert parse_query(f"8b full {words}", CAT).optimizer is Optimizer.ADAMW_FUSED


def test_max_length_in_two_words_is_hfs_max_length() -> None:
    assert parse_query("8b lora max length 1024", CAT).max_len == 1024


@pytest.mark.parametrize("words", ["tf32", "nvlink", "liger kernel"])
def test_words_that_add_nothing_to_a_named_run_are_read(words: str) -> None:
    parse_query(f"8b lora 4x h100 {words}", CAT)


@pytest.mark.parametrize(
    "text",
    [
        "70b tokens 50M seq 4096 h100",
        "70b tokens 50M epochs 2 h100",
        "70b tokens 1.2B h100",
        "70b tokens 1.2B seq=8192 bs 4 h100x8",
    ],
)
def test_a_size_then_tokens_and_a_token_count_is_the_model_and_its_data(text: str) -> None:
    request = parse_query(text, CAT)
    assert request.model == "llama-3.1-70b"
    assert request.dataset_tokens in (50_000_000, 1_200_000_000)


@pytest.mark.parametrize(
    "text", ["zero 3", "zero three", "fsdp shard grad op", "fsdp shard_grad_op auto_wrap"]
)
def test_stages_written_apart(text: str) -> None:
    assert parse_query(f"8b full 8x h100 {text}", CAT).sharding in (Sharding.ZERO3, Sharding.ZERO2)


@pytest.mark.parametrize(
    ("text", "flash"),
    [("eager attention", False), ("attn_implementation eager", False),
     ("attn_implementation flash_attention_2", True), ("attn_implementation sdpa", True)],
)
def test_hfs_attention_implementation(text: str, flash: bool) -> None:
    assert parse_query(f"8b lora {text}", CAT).flash_attention is flash


def test_no_grad_ckpt_turns_checkpointing_off() -> None:
    assert parse_query("8b lora no grad ckpt", CAT).grad_checkpointing is False


@pytest.mark.parametrize("text", ["1.5M tokens/epoch", "1.5M tokens per epoch"])
def test_tokens_per_epoch_is_the_dataset(text: str) -> None:
    assert parse_query(f"8b lora {text}", CAT).dataset_tokens == 1_500_000


def test_a_followup_naming_a_card_memory_replaces_the_named_card() -> None:
    first = parse_query("70b qlora 10M tokens 2x h100", CAT)
    changed = apply_followup(first, "what if 4x 24gb", CAT)
    assert (changed.gpu, changed.gpu_count, changed.gpu_memory_gb) == (None, 4, 24.0)


def test_a_followup_naming_a_card_replaces_a_card_memory() -> None:
    first = parse_query("70b qlora 10M tokens 2x 24gb", CAT)
    changed = apply_followup(first, "on 2x h100", CAT)
    assert (changed.gpu, changed.gpu_count, changed.gpu_memory_gb) == ("h100-sxm", 2, None)


@pytest.mark.parametrize("text", ["8b full 4090 bs 4", "8b full bs 4 4090"])
def test_a_card_named_by_its_number_before_a_unit_is_the_card(text: str) -> None:
    request = parse_query(text, CAT)
    assert (request.gpu, request.micro_batch) == ("rtx-4090", 4)


@pytest.mark.parametrize("text", ["8b lora target_modules gate_proj up_proj", "8b lora k_proj"])
def test_one_projection_as_a_target_is_refused_with_the_sets_to_say(text: str) -> None:
    err = refused(text)
    assert "all-linear" in err.message and "mlp" in err.message


@pytest.mark.parametrize(
    "text", ["8b lora target all", "qwen-7b lora target_modules c_attn,c_proj,w1,w2"]
)
def test_every_linear_in_other_words(text: str) -> None:
    assert parse_query(text, CAT).lora_targets is LoraTargets.ALL_LINEAR


def test_transformers_bits_and_bytes_config_reads_as_qlora() -> None:
    request = parse_query(
        "8b lora bnb_4bit_quant_type nf4 bnb_4bit_compute_dtype bfloat16 "
        "bnb_4bit_use_double_quant=False", CAT,
    )
    assert (request.method, request.double_quant) == (Method.QLORA, False)


def test_hf_training_arguments_pasted_whole() -> None:
    request = parse_query(
        "8b lora num_train_epochs 2 per_device_train_batch_size 2 gradient_accumulation_steps 8 "
        "torch_dtype=torch.bfloat16 group_by_length dataset_text_field text output_dir out",
        CAT,
    )
    assert (request.epochs, request.micro_batch, request.grad_accum) == (2.0, 2, 8)


def test_an_axolotl_config_pasted_inline_reads_its_settings() -> None:
    request = parse_query(
        "base_model: meta-llama/Llama-3.1-8B adapter: qlora sequence_len: 4096 "
        "micro_batch_size: 2 gradient_accumulation_steps: 4 num_epochs: 1 lora_r: 32", CAT,
    )
    assert (request.method, request.seq_len, request.micro_batch, request.grad_accum) == (
        Method.QLORA, 4096, 2, 4
    )
    assert (request.epochs, request.lora_rank) == (1.0, 32)


def test_library_versions_are_read_and_say_nothing() -> None:
    request = parse_query("8b lora h100 cuda 12.1 torch 2.5.1 transformers 4.46.0", CAT)
    assert request == parse_query("8b lora h100 transformers", CAT)


def test_pure_bf16_in_two_words() -> None:
    assert parse_query("8b full pure bf16", CAT).state_precision.value == "pure-bf16"


@pytest.mark.parametrize("words", ["bf16 adapters", "autocast_adapter_dtype=False",
                                   "autocast_adapter_dtype false", "no fp32 adapters"])
def test_bf16_adapters_as_peft_users_say_it(words: str) -> None:
    request = parse_query(f"8b lora trl {words}", CAT)
    assert request.fp32_adapters is False
    assert "fp32_adapters" in request.model_fields_set


def test_fp32_adapters_said_outright() -> None:
    assert parse_query("8b lora torchtune fp32 adapters", CAT).fp32_adapters is True


@pytest.mark.parametrize(("text", "count"), [("2 nodes 72 gpus", 144), ("2 nodes", 144)])
def test_nodes_in_a_follow_up_are_the_earlier_cards_machines(text: str, count: int) -> None:
    """A GB200 NVL72 rack is one machine of 72: the thread's card sizes the nodes."""
    after = followup("70b full 50M tokens 72x gb200", text)
    assert (after.gpu, after.gpu_count, after.nodes) == ("gb200", count, 2)


def test_a_sample_count_beside_a_small_token_count_asks_whether_it_is_their_length() -> None:
    err = refused("8b lora 10k samples 512 tokens a100")
    assert 'is 512 their average length? Say "10,000 samples of 512 tokens"' in err.message


def test_a_sample_count_beside_a_dataset_size_is_refused() -> None:
    err = refused("8b lora 10k samples 50M tokens a100")
    assert "as tokens or as samples of a length, not both" in err.message


def test_samples_of_a_bare_number_ask_what_it_counts() -> None:
    err = refused("8b lora 52k samples of 300 a100")
    assert '300 what?' in err.message and '"52k samples of 300 tokens"' in err.message
