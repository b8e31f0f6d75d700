"""How a run splits over its cards, as torchtitan, Megatron and vLLM users say it: the
tensor-parallel degree and its checks, activation checkpointing's mode, the local batch,
hybrid sharding (HSDP), and the same settings read from training configs. One
behaviour per test, against the shipped catalog."""

from __future__ import annotations

import pytest

from adapters.parse import QueryError, apply_followup
from adapters.trainconfig import ConfigError, read_config
from adapters.trainconfig.build import apply_config
from catalog.loader import default_catalog
from engine.choices import Framework, Method, Sharding
from engine.request import Request
from tests.helpers import fields, parsed, refusal

CAT = default_catalog()


refused = refusal


def refused_followup(previous: Request, text: str) -> str:
    with pytest.raises(QueryError) as caught:
        apply_followup(previous, text, CAT)
    return caught.value.message


# --- the tensor-parallel degree ------------------------------------------------------------

TP_FORMS = [
    "tp 8", "tp8", "tp=8", "tp-8", "tp: 8", "8 tp", "tensor parallel 8", "tensor-parallel 8",
    "tensor parallelism 8", "8-way tensor parallel", "8-way tp", "8 way tp",
    "tensor_parallel_degree 8", "--parallelism.tensor_parallel_degree 8",
    "tensor_parallel_size 8", "--tensor-parallel-size 8", "tensor parallel size 8",
    "tp_size 8", "tp size 8", "tensor_model_parallel_size 8", "--tensor-model-parallel-size 8",
    "tensor_parallel_dim 8",
]


@pytest.mark.parametrize("form", TP_FORMS)
def test_tensor_parallel_form_sets_the_degree(form: str) -> None:
    assert parsed(f"70b full {form} 16x h100").tensor_parallel == 8


def test_torchtitan_query_with_tp_reads_every_setting() -> None:
    request = parsed("llama-3.1-70b full 64x h100 fsdp tp 8 seq 8192 torchtitan 1B tokens")

    assert (request.tensor_parallel, request.gpu_count, request.sharding, request.seq_len,
            request.framework) == (8, 64, Sharding.FSDP, 8192, Framework.TORCHTITAN)


def test_tp_1_means_no_tensor_parallelism() -> None:
    assert "tensor_parallel" not in fields("70b full tp 1 8x h100")


def test_no_tp_means_no_tensor_parallelism() -> None:
    assert parsed("70b full no tp 8x h100").tensor_parallel == 1


def test_tp_without_a_card_count_leaves_the_count_to_the_estimate() -> None:
    request = parsed("70b full tp 8 h100")

    assert (request.tensor_parallel, request.gpu_count) == (8, None)


def test_tp_counts_the_cards_of_every_node() -> None:
    request = parsed("70b full tp 8 2 nodes of 8x h100")

    assert (request.tensor_parallel, request.gpu_count) == (8, 16)


def test_tp_with_lora_is_read() -> None:
    assert parsed("70b lora tp 2 2x h100").tensor_parallel == 2


def test_two_different_degrees_conflict() -> None:
    assert "Pick one" in refused("70b full tp 8 tp 4 8x h100")


# --- refusals ----------------------------------------------------------------------------


def test_a_fractional_degree_is_refused() -> None:
    message = refused("70b full tp 2.5 8x h100")

    assert '"2.5" must be a whole number for the tensor-parallel degree' in message
    assert "Example: 70b full tp 8 32x h100 1B tokens" in message


@pytest.mark.parametrize("degree", ["0", "128", "-2"])
def test_a_degree_out_of_bounds_is_refused_with_the_range(degree: str) -> None:
    assert "the tensor-parallel degree must be between 1 and 64" in refused(
        f"70b full tp {degree} 8x h100")


def test_a_degree_as_a_percentage_is_refused() -> None:
    assert "only mfu and dropout take a percentage" in refused("70b full tp 50% 8x h100")


def test_a_card_count_the_degree_does_not_divide_is_refused() -> None:
    message = refused("70b full tp 8 12x h100")

    assert "12 cards do not split into tensor-parallel groups of 8" in message
    assert "(16)" in message and "(tp 4)" in message and "Example:" in message


def test_an_odd_card_count_suggests_dropping_tp() -> None:
    assert "or drop tp" in refused("70b full tp 6 9x h100")


def test_a_degree_larger_than_the_card_count_is_refused() -> None:
    message = refused("70b full tp 8 4x h100")

    assert "tensor-parallel degree 8 needs at least 8 cards, but 4 are named" in message
    assert "(tp 4)" in message


def test_tensor_parallel_with_qlora_is_refused() -> None:
    message = refused("70b qlora tp 2 2x h100")

    assert ("tensor parallelism over a 4-bit base is not modeled: bitsandbytes NF4 layers "
            "are not split by TP; use lora or full, or drop tp") in message
    assert "Example: 70b lora tp 2 2x h100 50M tokens" in message


def test_tensor_parallel_with_a_4bit_word_is_refused_as_qlora() -> None:
    assert "4-bit base is not modeled" in refused("70b nf4 tp 2 2x h100")


def test_tensor_parallel_without_a_method_is_not_refused_as_qlora() -> None:
    assert parsed("70b tp 2 2x h100").method is None


def test_n_way_before_anything_but_tensor_parallel_is_refused() -> None:
    assert "only tensor parallelism is read as N-way" in refused("70b full 8-way fsdp")


# --- follow-ups ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tp_run() -> Request:
    return parsed("70b full tp 8 32x h100 1B tokens")


def test_a_followup_changes_the_degree(tp_run: Request) -> None:
    assert apply_followup(tp_run, "tp 4", CAT).tensor_parallel == 4


def test_a_followup_drops_tensor_parallelism(tp_run: Request) -> None:
    assert apply_followup(tp_run, "what if tp 1", CAT).tensor_parallel == 1


def test_a_followup_adds_tensor_parallelism() -> None:
    request = apply_followup(parsed("70b full 16x h100 1B tokens"), "tp 8", CAT)

    assert (request.tensor_parallel, request.gpu_count) == (8, 16)


def test_a_followup_card_count_the_degree_does_not_divide_is_refused(tp_run: Request) -> None:
    assert "12 cards do not split into tensor-parallel groups of 8" in refused_followup(
        tp_run, "on 12x h100")


def test_a_followup_to_qlora_under_tensor_parallel_is_refused(tp_run: Request) -> None:
    assert "4-bit base is not modeled" in refused_followup(tp_run, "qlora")


def test_a_followup_naming_a_card_keeps_the_degree(tp_run: Request) -> None:
    request = apply_followup(tp_run, "on b200", CAT)

    assert (request.tensor_parallel, request.gpu_count) == (8, None)


# --- activation checkpointing's mode -----------------------------------------------------------

CHECKPOINT_FORMS = [
    ("8b full ac", True, False),
    ("8b full ac full", True, False),
    ("8b full full ac", True, False),
    ("8b lora activation checkpointing full", True, False),
    ("8b full selective ac", True, True),
    ("8b full ac selective", True, True),
    ("8b full sac", True, True),
    ("8b full activation checkpointing selective", True, True),
    ("8b full activation_checkpoint.mode selective", True, True),
    ("8b full --activation_checkpoint.mode selective", True, True),
    ('8b full mode = "selective"', True, True),
    ("8b full ac_mode selective", True, True),
    ("8b full no ac", False, False),
    ("8b full no-ac", False, False),
    ("8b full ac none", False, False),
    ("8b full ac off", False, False),
    ("8b full activation checkpointing none", False, False),
]


@pytest.mark.parametrize(("text", "on", "selective"), CHECKPOINT_FORMS)
def test_checkpointing_mode_words_set_checkpointing(text: str, on: bool, selective: bool) -> None:
    request = parsed(text)

    assert (request.grad_checkpointing, request.selective_checkpointing) == (on, selective)


def test_full_ac_with_no_method_named_is_a_full_fine_tune() -> None:
    assert parsed("70b full ac 8x h100").method is Method.FULL


def test_ac_full_with_no_method_named_is_a_full_fine_tune() -> None:
    assert parsed("70b ac full 8x h100").method is Method.FULL


def test_full_ac_keeps_a_method_named_elsewhere() -> None:
    assert parsed("8b lora full ac").method is Method.LORA


def test_full_ac_in_a_followup_changes_only_the_checkpointing() -> None:
    previous = parsed("8b lora sac 10M tokens")

    request = apply_followup(previous, "what if full ac", CAT)

    assert (request.method, request.selective_checkpointing) == (Method.LORA, False)


def test_full_ac_then_a_mode_reads_full_as_the_method() -> None:
    request = parsed("8b full ac none")

    assert (request.method, request.grad_checkpointing) == (Method.FULL, False)


def test_selective_and_full_checkpointing_conflict() -> None:
    assert "Pick one" in refused("8b lora sac ac full")


def test_ac_never_reads_as_a_card_or_a_unit() -> None:
    request = parsed("8b full ac a100 accum 2")

    assert (request.gpu, request.grad_accum, request.grad_checkpointing) == (
        "a100-80gb-sxm", 2, True)


# --- the local batch --------------------------------------------------------------------------


@pytest.mark.parametrize("form", ["local batch 2", "local batch size 2", "local_batch_size 2",
                                  "--training.local_batch_size 2"])
def test_local_batch_sets_the_micro_batch(form: str) -> None:
    assert parsed(f"8b full {form}").micro_batch == 2


# --- hybrid sharding (HSDP) ----------------------------------------------------------------


@pytest.mark.parametrize("words", ["hsdp", "hybrid_shard", "HYBRID_SHARD", "hybrid sharding",
                                   "fsdp hybrid_shard", '--fsdp "hybrid_shard auto_wrap"',
                                   "data_parallel_replicate_degree 2",
                                   "fsdp data_parallel_replicate_degree 2"])
def test_hybrid_sharding_words_set_hsdp(words: str) -> None:
    assert parsed(f"70b full {words} 16x h100").sharding is Sharding.HSDP


def test_hsdp_without_a_card_count_is_read() -> None:
    assert parsed("70b full hsdp").sharding is Sharding.HSDP


def test_a_replicate_degree_of_1_is_not_hybrid_sharding() -> None:
    assert "sharding" not in fields("70b full data_parallel_replicate_degree 1 16x h100")


def test_a_replicate_degree_with_zero3_is_refused() -> None:
    message = refused("70b full zero3 data_parallel_replicate_degree 2 16x h100")

    assert "means hybrid sharding (hsdp), but \"zero3\" says zero3: say one" in message


def test_a_replicate_degree_that_does_not_divide_the_cards_is_refused() -> None:
    message = refused("70b full data_parallel_replicate_degree 3 16x h100")

    assert "3 replicas need a count they divide into equal shard groups (e.g. 18)" in message
    assert "say fsdp to shard over all 16" in message


def test_a_replicate_degree_sets_groups_of_count_over_degree() -> None:
    got = fields("70b full data_parallel_replicate_degree 4 16x h100")
    assert (got["sharding"], got["nodes"]) == (Sharding.HSDP, 4)


def test_a_replicate_degree_without_a_count_still_names_the_replicas() -> None:
    assert fields("8b full dp-replicate 2 gh200")["nodes"] == 2


def test_a_fractional_replicate_degree_is_refused() -> None:
    assert "the replicate degree is a whole count of copies" in refused(
        "70b full data_parallel_replicate_degree 2.5")


def test_hybrid_shard_zero2_is_refused_with_what_to_say() -> None:
    message = refused("70b full _HYBRID_SHARD_ZERO2 16x h100")

    assert "is not modeled: say hsdp for HYBRID_SHARD or zero2 for SHARD_GRAD_OP" in message


# --- hyphens between a unit and its number ------------------------------------------------------


def test_a_hyphen_between_a_unit_and_its_number_joins_them() -> None:
    request = parsed("8b lora seq-8k r-32")

    assert (request.seq_len, request.lora_rank) == (8192, 32)


# --- training configs ---------------------------------------------------------------------------

AXOLOTL = ("base_model: meta-llama/Llama-3.1-70B\nadapter:\nsequence_len: 4096\n"
           "tensor_parallel_size: 8\nfsdp_version: 2\nfsdp:\n  - full_shard\n")
TORCHTUNE = ("model:\n  _component_: torchtune.models.llama3_1.llama3_1_70b\n"
             "tensor_parallel_dim: 4\nbatch_size: 2\n")
DEEPSPEED = ("model_name_or_path: meta-llama/Llama-3.1-8B\nper_device_train_batch_size: 2\n"
             "deepspeed:\n  zero_optimization:\n    stage: 1\n  tensor_parallel:\n"
             "    autotp_size: 4\n")


def test_axolotl_tensor_parallel_size_sets_the_degree() -> None:
    assert read_config(AXOLOTL).fields["tensor_parallel"] == 8


def test_torchtune_tensor_parallel_dim_sets_the_degree() -> None:
    assert read_config(TORCHTUNE).fields["tensor_parallel"] == 4


def test_deepspeed_autotp_size_sets_the_degree() -> None:
    config = read_config(DEEPSPEED)

    assert (config.fields["tensor_parallel"], config.fields["sharding"]) == (4, Sharding.ZERO1)


def test_a_config_degree_reaches_the_request() -> None:
    request = apply_config(read_config(AXOLOTL), parsed("llama-3.1-70b 16x h100"))

    assert (request.tensor_parallel, request.gpu_count) == (8, 16)


def test_a_config_degree_the_cards_do_not_divide_is_refused_naming_the_key() -> None:
    with pytest.raises(ConfigError, match="axolotl config, tensor_parallel_size 8: 12 cards do "
                                          "not split into tensor-parallel groups of 8"):
        apply_config(read_config(AXOLOTL), parsed("llama-3.1-70b 12x h100"))


def test_words_override_the_config_degree() -> None:
    request = apply_config(read_config(AXOLOTL), parsed("llama-3.1-70b 12x h100 tp 4"))

    assert request.tensor_parallel == 4


def test_a_config_degree_with_qlora_is_refused() -> None:
    text = AXOLOTL.replace("adapter:\n", "adapter: qlora\n")

    with pytest.raises(ConfigError, match="4-bit base is not modeled"):
        apply_config(read_config(text), parsed("llama-3.1-70b 16x h100"))


def test_a_config_replicate_degree_above_1_is_hsdp_with_a_note() -> None:
    config = read_config(AXOLOTL + "dp_replicate_size: 2\n")

    assert (config.fields["sharding"], config.fields["nodes"]) == (Sharding.HSDP, 2)
    assert any("HSDP over 2 replicas, each shard group holding the cards over 2" in note
               for note in config.notes)


def test_torchtune_replicate_dim_above_1_is_hsdp() -> None:
    assert read_config(TORCHTUNE + "data_parallel_replicate_dim: 2\n").fields[
        "sharding"] is Sharding.HSDP


def test_an_fsdp_hybrid_shard_strategy_is_hsdp() -> None:
    text = AXOLOTL + "fsdp_config:\n  fsdp_sharding_strategy: HYBRID_SHARD\n"

    assert read_config(text).fields["sharding"] is Sharding.HSDP


@pytest.mark.parametrize("text", [
    "8b full float8 8x h100", "8b full fp8 training 8x h100", "8b full float8 training h100",
    "8b full --model.converters float8 8x h100", "8b full converters float8 h100",
    "8b full float8=True h100", "8b full fp8 matmuls h100",
])
def test_float8_training_words_set_float8(text: str) -> None:
    assert parsed(text).float8 is True


def test_fp8_alone_still_means_fp8_base_weights() -> None:
    request = parsed("8b full fp8 h100")
    assert request.float8 is False and request.precision.value == "fp8"


def test_no_float8_turns_it_off_in_a_followup() -> None:
    previous = parsed("8b full float8 8x h100")
    assert apply_followup(previous, "no float8", CAT).float8 is False


@pytest.mark.parametrize("text", [
    "405b full pp 4 64x h100", "405b full pipeline parallel 4 64x h100",
    "405b full --pipeline-parallel-degree 4 64x h100",
])
def test_pipeline_parallelism_is_refused_with_what_to_ask_instead(text: str) -> None:
    message = refused(text)
    assert "pipeline parallelism is not modeled" in message and "fsdp" in message


def test_a_replicate_degree_matching_the_nodes_named_is_hsdp() -> None:
    request = parsed("8b full data_parallel_replicate_degree 2 2 nodes of 4x h100")
    assert request.sharding is Sharding.HSDP and request.nodes == 2


def test_a_replicate_degree_other_than_the_nodes_named_is_refused() -> None:
    assert "2 replicas are 2 nodes" in refused(
        "8b full data_parallel_replicate_degree 2 3 nodes of 4x h100"
    )


@pytest.mark.parametrize("text", [
    "mixtral full expert parallel 8 8x h100", "mixtral full expert_parallel_degree 8 8x h100",
])
def test_expert_parallelism_is_refused_with_what_to_ask_instead(text: str) -> None:
    message = refused(text)
    assert "expert parallelism is not modeled" in message and "fsdp" in message


@pytest.mark.parametrize("text", [
    "8b full sequence_parallel_size 4 seq 64k 8x h100", "8b full ulysses_degree 4 seq 64k 8x h100",
])
def test_ulysses_sequence_parallelism_reads_as_context_parallel(text: str) -> None:
    assert parsed(text).context_parallel == 4


# --- `ep`: epochs, or expert parallelism beside a mixture-of-experts model ---------------------

@pytest.mark.parametrize("words", ["ep 8", "ep8", "8 ep", "ep=8"])
def test_ep_beside_a_moe_model_asks_whether_it_means_epochs(words: str) -> None:
    message = refused(f"mixtral full {words} 8x h100")
    assert "could mean 8 epochs or expert parallelism over 8 cards" in message
    assert 'say "8 epochs"' in message


def test_ep_beside_a_dense_model_is_epochs() -> None:
    assert parsed("llama-3.1-8b lora ep 2").epochs == 2


def test_epochs_spelled_out_beside_a_moe_model_is_epochs() -> None:
    assert parsed("mixtral full 3 epochs 8x h100").epochs == 3


def test_the_moe_check_waits_for_a_model_named_after_ep() -> None:
    assert "mixture-of-experts" in refused("lora ep 2 qwen3-30b-a3b h100")


def test_ep_in_a_followup_on_a_moe_thread_asks_too() -> None:
    previous = parsed("mixtral full 8x h100 10M tokens")
    assert "could mean 4 epochs" in refused_followup(previous, "what if ep 4")


def test_epochs_in_a_followup_on_a_moe_thread_are_epochs() -> None:
    previous = parsed("mixtral full 8x h100 10M tokens")
    assert apply_followup(previous, "what if 4 epochs", CAT).epochs == 4


def test_a_replicate_degree_with_a_count_names_the_replicas_as_nodes() -> None:
    # The shard group is count / degree on any card, a GH200 rented one to a machine too.
    assert fields("8b lora 16x gh200 dp-replicate 2")["nodes"] == 2


def test_a_qlora_option_beside_tensor_parallel_words_is_refused_with_the_reason() -> None:
    from adapters.query.parser import Said, parse_query

    said = Said({"method": Method.QLORA}, {"method": "method"}, {"method": "method: qlora"})
    with pytest.raises(QueryError, match='"tp 2": tensor parallelism over a 4-bit base'):
        parse_query("70b tp 2 8x h100", None, said)
