"""Settings as ML engineers write them in published runs (a QA pass), one behaviour per
test, against the shipped catalog: a batch said per device and the global batch beside
it, a sequence said in tokens, a node named by its cards, DeepSpeed's and offload's
words, data-parallel and FSDP degrees, framework words, precision and method words,
config files' names, FP8 under torchtitan, and a model name over four words."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from catalog.loader import default_catalog
from engine.choices import Framework, LoraTargets, Method, Precision, Sharding, StatePrecision
from tests.helpers import example, fields, followup, parsed, refused

CAT = default_catalog()


# --- 1. the batch said per device, and the global batch beside it ----------------------------

@pytest.mark.parametrize(("text", "batch"), [
    ("8b full 8 per device 2x a100", 8),
    ("8b full 8xh100 bs 2 per gpu", 2),
    ("8b full 2 sequences per gpu 8x h100", 2),
    ("8b full per device batch 8 2x a100", 8),
    ("8b full per_device batch 8 2x a100", 8),
    ("8b full bs 2/device 2x a100", 2),
    ("8b full batch 4/gpu 2x a100", 4),
    ("8b full batch per gpu 2 2x a100", 2),
    ("8b full batch size per device 2 2x a100", 2),
    ("8b lora bsz 8 a100", 8),
])
def test_a_batch_said_per_device_is_the_micro_batch(text: str, batch: int) -> None:
    request = parsed(text)
    assert request.micro_batch == batch and request.grad_accum == 1


@pytest.mark.parametrize(("text", "accum"), [
    ("8b full batch size 16 (8 per device) 2x a100", 1),
    ("8b full batch size 64 (8 per device) 2x a100", 4),
    ("8b full 8 per device 2x a100 batch size 64", 4),
])
def test_a_plain_batch_beside_a_per_device_one_is_the_global_batch(text: str,
                                                                    accum: int) -> None:
    request = parsed(text)
    assert request.micro_batch == 8 and request.grad_accum == accum


def test_a_micro_batch_beside_another_per_device_batch_is_refused() -> None:
    err = refused("8b full micro batch 4 (8 per device) 2x a100")
    assert '"8 per device" conflicts with "micro batch 4"' in err.message


def test_two_per_device_batches_that_differ_are_refused() -> None:
    err = refused("8b full 8 per device 4 per device 2x a100")
    assert "both set the micro-batch" in err.message
    parse_query(example(err), CAT)


def test_a_global_batch_read_from_a_per_device_batch_still_needs_the_cards() -> None:
    assert "needs the number of cards" in refused("8b full batch size 16 (8 per device)").message


@pytest.mark.parametrize(("text", "batch", "accum"), [
    ("8b full train_batch_size 32 4x a100", 1, 8),  # DeepSpeed's key: the global batch
    ("8b full effective batch 64 4x a100 bs 4", 4, 4),
    ("8b full grad accum 8 (effective 32) 4x a100", 1, 8),
    ("8b full batch size 64 (global) 4x a100", 1, 16),
    ("8b full batch_size 64 global 4x a100", 1, 16),
    ("8b full batch size 64 (effective) 4x a100", 1, 16),
    ("8b full effective batch size 32 4x a100", 1, 8),
])
def test_global_batch_phrasings_set_the_accumulation(text: str, batch: int,
                                                     accum: int) -> None:
    request = parsed(text)
    assert (request.micro_batch, request.grad_accum) == (batch, accum)


def test_a_global_batch_said_twice_differently_is_refused() -> None:
    err = refused("8b full batch size 64 global 4x a100 gbs 32")
    assert "both set the global batch" in err.message


@pytest.mark.parametrize("text", [
    "8b full gradient accumulation of 8 4x a100",
    "8b full accumulate 8 steps 4x a100",
    "8b full accumulate gradients over 8 steps 4x a100",
    "8b full bs 4 x 8 accum 4x a100",
    "8b full bs 4 x accum 8 4x a100",
])
def test_accumulation_phrasings_are_the_accumulation(text: str) -> None:
    assert parsed(text).grad_accum == 8


def test_accumulate_without_a_count_says_how_to_say_it() -> None:
    err = refused("8b full accumulate 4x a100")
    assert '"accumulate 8 steps"' in err.message
    parse_query(example(err), CAT)


# --- 2. the sequence said in tokens --------------------------------------------------------

@pytest.mark.parametrize(("text", "seq"), [
    ("8b lora 16k tokens per sequence h100", 16_384),
    ("8b lora 4k tokens per sequence h100", 4_096),
    ("8b lora sequence length of 2048 tokens h100", 2_048),
    ("8b lora context of 4096 tokens h100", 4_096),
    ("8b lora 2048-token sequences h100", 2_048),
    ("8b lora sequences of 4096 tokens h100", 4_096),
    ("8b lora 16k token sequences h100", 16_384),
    ("8b lora 8192 max seq len h100", 8_192),
    ("8b lora 4096 tokens context window h100", 4_096),
    ("8b lora max 4096 tokens h100", 4_096),
    ("8b lora cutoff 1024 h100", 1_024),
    ("8b lora 16k tokens per sample bs 1 h100", 16_384),
])
def test_a_sequence_said_in_tokens_is_the_sequence_length(text: str, seq: int) -> None:
    request = parsed(text)
    assert request.seq_len == seq and request.sample_tokens is None


def test_tokens_per_sequence_beside_the_data_leaves_the_data() -> None:
    request = parsed("8b lora 16k tokens per sequence 50M tokens h100")
    assert request.seq_len == 16_384 and request.dataset_tokens == 50_000_000


def test_tokens_per_sequence_beside_a_sample_count_is_the_average_length() -> None:
    got = fields("8b lora 10k samples 4k tokens per sequence h100")
    assert (got["samples"], got["sample_tokens"]) == (10_000, 4_000)
    assert "seq_len" not in got


def test_tokens_per_sample_in_a_follow_up_on_samples_is_the_average_length() -> None:
    after = followup("8b lora 10k samples of 512 tokens h100", "what if 1k tokens per sample")
    assert (after.samples, after.sample_tokens) == (10_000, 1_000)


def test_tokens_per_sequence_in_a_follow_up_on_tokens_is_the_sequence() -> None:
    after = followup("8b lora 50M tokens h100", "what if 16k tokens per sequence")
    assert after.seq_len == 16_384 and after.dataset_tokens == 50_000_000


# --- 3. a node named by its cards --------------------------------------------------------------

H100, A100 = "h100-sxm", "a100-80gb-sxm"


@pytest.mark.parametrize(("text", "count", "nodes", "card"), [
    ("8b full a single 8xH100 node fsdp", 8, 1, H100),
    ("8b full one 8x h100 node", 8, 1, H100),
    ("8b full an 8xA100 node", 8, 1, A100),
    ("8b full 8-GPU A100 node", 8, 1, A100),
    ("8b full 2x8xH100", 16, 2, H100),
    ("8b full 2 x 8xH100 nodes", 16, 2, H100),
    ("8b full 2 8xH100 nodes", 16, 2, H100),
    ("8b full two 8xH100 nodes", 16, 2, H100),
    ("8b full 8xh100 x 2 nodes", 16, 2, H100),
    ("8b full 2 nodes 8x h100", 16, 2, H100),  # kept: 8 per node, as a node holds 8
    ("8b full 2 nodes 16x h100", 16, 2, H100),
    ("8b full 2x8 h100", 16, 2, H100),
])
def test_a_node_named_by_its_cards_gives_the_nodes_and_the_total(
    text: str, count: int, nodes: int, card: str
) -> None:
    request = parsed(text)
    assert (request.gpu_count, request.nodes, request.gpu) == (count, nodes, card)


def test_a_count_of_gpus_glued_to_its_word_is_the_card_count() -> None:
    request = parsed("8b full 8-GPU A100")
    assert (request.gpu_count, request.nodes, request.gpu) == (8, None, A100)


def test_a_node_count_after_a_node_of_cards_is_still_the_nodes() -> None:
    request = parsed("8b lora 8x h100 node 2")
    assert (request.gpu_count, request.nodes) == (8, 2)


# --- 4. DeepSpeed's stage, ZeRO-Offload, ZeRO-Infinity and offload words -----------------------

@pytest.mark.parametrize("words", ["DeepSpeed Z3", "ds z3", "deepspeed stage-3",
                                   "ds stage3", "zero_stage_3"])
def test_a_deepspeed_stage_said_short_is_zero3_under_hf(words: str) -> None:
    request = parsed(f"70b full {words} 8x h100")
    assert request.sharding is Sharding.ZERO3 and request.framework is Framework.HF


@pytest.mark.parametrize(("words", "stage"), [
    ("ZeRO-Offload", Sharding.ZERO2), ("zero offload", Sharding.ZERO2),
    ("zero3 ZeRO-Offload", Sharding.ZERO3),
])
def test_zero_offload_offloads_the_optimizer_on_deepspeed(words: str, stage: Sharding) -> None:
    request = parsed(f"70b full {words} 8x h100")
    assert request.offload is True and request.offload_weights is False
    assert request.sharding is stage and request.framework is Framework.HF


def test_zero_infinity_offloads_the_weights_too_on_zero3() -> None:
    request = parsed("70b full ZeRO-Infinity 8x h100")
    assert request.offload is True and request.offload_weights is True
    assert request.sharding is Sharding.ZERO3 and request.framework is Framework.HF


@pytest.mark.parametrize(("text", "says"), [
    ("70b full zero2 ZeRO-Infinity 8x h100", "say it with zero3"),
    ("70b full fsdp ZeRO-Offload 8x h100", "say fsdp offload"),
])
def test_a_zero_offload_beside_a_stage_it_does_not_run_on_is_refused(text: str,
                                                                     says: str) -> None:
    err = refused(text)
    assert says in err.message
    parse_query(example(err), CAT)


@pytest.mark.parametrize(("words", "weights"), [
    ("cpu offloading", True), ("offloading", True), ("offloaded to cpu", True),
    ("optimizer state offload", False), ("offload optimizer and params", True),
    ("offload_param cpu offload_optimizer cpu", True),
    ("offload_optimizer cpu offload_param cpu", True),
    ("offload_optimizer cpu", False),
])
def test_offload_phrasings_say_what_goes_to_host_memory(words: str, weights: bool) -> None:
    request = parsed(f"70b full zero3 {words} 8x h100")
    assert request.offload is True and request.offload_weights is weights


def test_offload_optimizer_beside_no_offload_is_still_refused() -> None:
    assert "say one" in refused("70b full zero3 no-offload optimizer state offload 8x h100"
                                ).message


@pytest.mark.parametrize("words", ["activation offloading", "offload activations"])
def test_activation_offload_phrasings_are_the_switch(words: str) -> None:
    assert parsed(f"8b full {words} 8x h100").activation_offload is True


# --- 5. data-parallel and FSDP degrees -----------------------------------------------------------

@pytest.mark.parametrize(("text", "count"), [
    ("8b full dp 8 8x h100", 8), ("8b full data parallel 8x h100", 8),
    ("8b full 8-way data parallel h100", 8), ("8b full distributed data parallel 8x h100", 8),
    ("70b full dp 4 tp 2 h100", 8),
])
def test_data_parallel_words_are_plain_data_parallelism(text: str, count: int) -> None:
    request = parsed(text)
    assert request.sharding is Sharding.NONE and request.gpu_count == count


def test_a_data_parallel_degree_keeps_a_sharding_said_beside_it() -> None:
    assert parsed("70b full dp 8 zero3 8x h100").sharding is Sharding.ZERO3


@pytest.mark.parametrize("text", ["8b full fsdp 8 8x h100", "8b full fsdp=8 8x h100",
                                  "8b full fully sharded data parallel 8x h100",
                                  "8b full fsdp 2 8x h100"])
def test_an_fsdp_degree_of_every_card_and_fsdps_version_are_fsdp(text: str) -> None:
    request = parsed(text)
    assert request.sharding is Sharding.FSDP and request.gpu_count == 8


def test_an_fsdp_degree_with_replicas_is_hybrid_sharding() -> None:
    assert parsed("8b full fsdp 4 dp_replicate 2 8x h100").sharding is Sharding.HSDP


def test_an_fsdp_degree_that_is_not_the_cards_is_refused_with_what_to_say() -> None:
    err = refused("8b full fsdp 4 8x h100")
    assert '"fsdp 4" shards over 4 cards, but "8x h100" names 8' in err.message
    assert 'say "fsdp" alone' in err.message and '"hsdp dp_replicate 2"' in err.message
    parse_query(example(err), CAT)


def test_a_data_parallel_degree_that_is_not_the_cards_is_refused_with_what_to_say() -> None:
    err = refused("70b full dp 4 tp 2 16x h100")
    assert '"dp 4" x "tp 2" is 8 cards' in err.message and 'say "dp 8"' in err.message
    parse_query(example(err), CAT)


def test_n_way_fsdp_is_still_refused() -> None:
    assert "only tensor parallelism is read as N-way" in refused("70b full 8-way fsdp").message


# --- 6. framework words and a single device -----------------------------------------------------

@pytest.mark.parametrize("words", ["LLaMA Factory", "llamafactory-cli train", "Trainer",
                                   "the trainer"])
def test_hugging_face_stack_words_mean_hf(words: str) -> None:
    assert parsed(f"8b lora {words} a100").framework is Framework.HF


def test_trainer_beside_another_framework_keeps_that_framework() -> None:
    assert parsed("8b lora unsloth trainer a100").framework is Framework.UNSLOTH


@pytest.mark.parametrize("words", ["single device", "single-device"])
def test_torchtunes_single_device_is_one_card(words: str) -> None:
    assert parsed(f"8b lora torchtune {words} 4090").gpu_count == 1


def test_a_single_device_beside_more_cards_is_refused() -> None:
    assert "1 card against 8" in refused("8b lora single device 8x h100").message


# --- 7. precision and method words ---------------------------------------------------------------

@pytest.mark.parametrize(("words", "states"), [
    ("fp32 master weights", StatePrecision.FP32),
    ("fp32 optimizer states", StatePrecision.FP32),
    ("bf16 optimizer states", StatePrecision.PURE_BF16),
    ("adamw bf16 states", StatePrecision.PURE_BF16),
])
def test_the_states_precision_said_as_the_states(words: str, states: StatePrecision) -> None:
    request = parsed(f"8b full {words} 8x a100")
    assert request.state_precision is states and "precision" not in fields(
        f"8b full {words} 8x a100")


@pytest.mark.parametrize(("text", "precision"), [
    ("8b lora fp32 (full precision) a100", Precision.FP32),
    ("8b lora bf16 full precision a100", Precision.BF16),
])
def test_full_precision_beside_a_precision_is_not_the_method(text: str,
                                                              precision: Precision) -> None:
    request = parsed(text)
    assert request.method is Method.LORA and request.precision is precision


def test_full_precision_alone_asks_which_precision() -> None:
    err = refused("8b lora full precision a100")
    assert "say fp32 or bf16" in err.message
    parse_query(example(err), CAT)


@pytest.mark.parametrize("words", ["attention and MLP", "attn and mlp", "attention + mlp"])
def test_attention_and_the_mlp_are_every_linear(words: str) -> None:
    assert parsed(f"8b lora rank 16 on {words} a100").lora_targets is LoraTargets.ALL_LINEAR


@pytest.mark.parametrize("text", ["8b 4bit quantization a100", "8b lora 4-bit quantization a100"])
def test_four_bit_quantization_is_qlora(text: str) -> None:
    assert parsed(text).method is Method.QLORA


@pytest.mark.parametrize("words", ["full-param", "full params", "full parameter",
                                   "full weight fine tuning", "full parameters"])
def test_full_parameter_words_are_the_full_method(words: str) -> None:
    assert parsed(f"8b {words} 8x a100").method is Method.FULL


@pytest.mark.parametrize("words", ["cut cross entropy", "cce"])
def test_cut_cross_entropy_is_the_fused_loss(words: str) -> None:
    assert parsed(f"8b lora {words} a100").fused_ce is True


def test_chunked_cross_entropy_is_refused_with_what_counts_it() -> None:
    message = refused("8b lora chunked cross entropy a100").message
    assert "torchtune or litgpt" in message and "fused-ce" in message


# --- 8. a config file's name -------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fsdp_qlora.yaml", "fsdp_config_qlora.yaml"])
def test_qlora_in_a_launcher_configs_name_says_qlora(name: str) -> None:
    request = parsed(f"accelerate launch --config_file {name} 70b 2x 4090")
    assert request.method is Method.QLORA and request.sharding is Sharding.FSDP


def test_a_deepspeed_config_named_without_its_extension_says_its_stage() -> None:
    request = parsed("8b full --deepspeed ds_z3_config 8x h100")
    assert request.sharding is Sharding.ZERO3 and request.framework is Framework.HF


# --- 9. FP8 under torchtitan ---------------------------------------------------------------------

@pytest.mark.parametrize("text", ["8b full FP8 8x h100 torchtitan", "8b fp8 torchtitan 8x h100"])
def test_fp8_under_torchtitan_is_its_float8_converter(text: str) -> None:
    got = fields(text)
    assert got["float8"] is True and "precision" not in got


def test_fp8_with_lora_under_torchtitan_stays_an_fp8_base() -> None:
    request = parsed("8b lora fp8 torchtitan 8x h100")
    assert request.precision is Precision.FP8 and request.float8 is False


def test_fp8_in_a_follow_up_on_torchtitan_is_float8() -> None:
    after = followup("8b full bf16 8x h100 torchtitan 50M tokens", "what if fp8")
    assert after.float8 is True and after.precision is Precision.BF16


# --- 10. a ZeRO stage's framework ----------------------------------------------------------------

@pytest.mark.parametrize("words", ["zero stage 3", "zero_stage=3", "deepspeed zero3"])
def test_words_that_name_deepspeed_say_hf(words: str) -> None:
    assert parsed(f"8b full {words} 8x a100").framework is Framework.HF


@pytest.mark.parametrize("words", ["zero3", "ZeRO-3", "zero 3", "z3"])
def test_a_stages_name_alone_leaves_the_framework_unsaid(words: str) -> None:
    request = parsed(f"8b full {words} 8x a100")
    assert request.sharding is Sharding.ZERO3 and "framework" not in fields(
        f"8b full {words} 8x a100")


# --- 11. a model named over four words -----------------------------------------------------------

def test_a_model_name_over_four_words_is_read_whole() -> None:
    assert parsed("Mistral 7B Instruct v0.3 lora").model == "mistral-7b-v0.3"


# --- an upper bound on an amount is the amount ------------------------------------------------

@pytest.mark.parametrize(("text", "field", "value"), [
    ("8b lora max 50M tokens h100", "dataset_tokens", 50_000_000),
    ("8b lora at most 50M tokens h100", "dataset_tokens", 50_000_000),
    ("8b lora max 2 epochs h100", "epochs", 2.0),
    ("8b lora up to 4096 tokens h100", "seq_len", 4096),
    ("8b lora 50M tokens up to $500", "budget_usd", 500.0),
])
def test_max_or_up_to_before_an_amount_says_that_amount(
    text: str, field: str, value: float
) -> None:
    assert getattr(parse_query(text, CAT), field) == value


def test_a_glued_m_before_a_unit_is_millions_not_minutes() -> None:
    request = parse_query("8b lora max 50M tokens h100", CAT)
    assert (request.dataset_tokens, request.deadline_hours) == (50_000_000, None)
    assert parse_query("8b lora 50M tokens in 50m h100", CAT).deadline_hours == pytest.approx(
        50 / 60, abs=1e-5)


# --- checkpoints, words and separators as runs are written --------------------------------

@pytest.mark.parametrize(("text", "model"), [
    ("unsloth/llama-3-8b-bnb-4bit lora 4090", "llama-3.1-8b"),
    ("unsloth/Meta-Llama-3.1-8B-Instruct-bnb-4bit lora t4", "llama-3.1-8b"),
    ("unsloth/Qwen2.5-7B-Instruct-bnb-4bit lora 4090", "qwen2.5-7b"),
])
def test_a_4bit_checkpoint_is_its_base_model_trained_with_qlora(text: str, model: str) -> None:
    request = parse_query(text, CAT)
    assert (request.model, request.method) == (model, Method.QLORA)


def test_a_4bit_checkpoint_with_full_is_refused_without_a_hub_lookup() -> None:
    err = refused("unsloth/llama-3-8b-bnb-4bit full 10M tokens")
    assert "frozen 4-bit base" in err.message and err.word is None


@pytest.mark.parametrize(("text", "field", "value"), [
    ("opt-30b full deepspeed zero3 nvme offload 1x a100 80gb", "offload", True),
    ("70b full zero3++ 32x h100", "sharding", Sharding.ZERO3),
    ("8b qlora fp4 4090", "method", Method.QLORA),
    ("8b lora unsloth dynamic 4bit 4090", "method", Method.QLORA),
    ("8b lora adapters a100", "method", Method.LORA),
    ("8b lora r=16 α=32 a100", "lora_rank", 16),
    ("8b lora 500 training steps bs 8 1x a100", "steps", 500),
    ("8b lora 100M tokens | seq 4096 | bs 16 | a100", "seq_len", 4096),
])
def test_words_of_published_runs_read_as_meant(text: str, field: str, value: object) -> None:
    assert getattr(parse_query(text, CAT), field) == value


@pytest.mark.parametrize("word", ["NeMo", "megatron", "nanotron", "keras"])
def test_a_framework_without_a_profile_says_how_to_ask(word: str) -> None:
    assert "no profile for that framework" in refused(f"8b full {word} 8x h100").message


@pytest.mark.parametrize("text", ["8b lora torchtune 1x 4090 qlora", "8b qlora lora 4090"])
def test_lora_beside_qlora_is_qlora(text: str) -> None:
    """QLoRA is LoRA on a 4-bit base, as ``4-bit lora`` reads."""
    assert parse_query(text, CAT).method is Method.QLORA


@pytest.mark.parametrize(("text", "cards"), [
    ("8b lora batch size 4, grad accum 8 (effective 32) a100", 1),
    ("8b lora bs 4 accum 8 global batch 64 h100", 2),
])
def test_a_global_batch_beside_batch_and_accumulation_gives_the_card_count(
    text: str, cards: int
) -> None:
    assert parse_query(text, CAT).gpu_count == cards


def test_a_global_batch_the_batch_and_accumulation_do_not_divide_is_refused() -> None:
    err = refused("8b lora bs 4 accum 8 global batch 36 h100")
    assert "not a whole multiple of the micro-batch x accumulation" in err.message


def test_steps_on_a_card_named_without_a_count_are_one_cards() -> None:
    """Unsloth's notebooks: 60 steps of batch 2 x accumulation 4 on a Colab T4."""
    request = parse_query("Llama 3.2 3B lora colab t4 unsloth seq 2048 bs 2 ga 4 60 steps", CAT)
    assert (request.gpu, request.gpu_count, request.dataset_tokens) == ("t4", 1, 60 * 8 * 2048)


def test_steps_with_no_card_still_ask_for_the_cards() -> None:
    assert "steps need the number of cards" in refused("8b lora 1000 steps bs 8").message


def test_a_count_before_a_unit_whose_own_word_is_a_model_size_is_the_units() -> None:
    request = parse_query("fsdp 3 epochs 70b", CAT)
    assert request.epochs == 3 and request.model == "llama-3.1-70b"
    assert request.sharding is Sharding.FSDP


def test_a_count_before_a_unit_whose_own_word_is_a_price_is_the_units() -> None:
    request = parse_query("70b fsdp 3 epochs $2.50/hr", CAT)
    assert request.epochs == 3 and request.price_per_gpu_hour == 2.5


def test_a_count_before_a_unit_whose_own_number_belongs_to_the_next_unit_is_the_units() -> None:
    request = parse_query("fsdp 3 epochs 8k seq 70b", CAT)
    assert request.epochs == 3 and request.seq_len == 8192
