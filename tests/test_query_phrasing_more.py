"""Settings as published fine-tuning runs shorten them (a second QA pass), one behaviour
per test, against the shipped catalog: a batch glued to its accumulation, LoRA's alpha
after its rank, a batch per card before ``batch``, a node and its cards joined by a
slash, a batch counted in tokens (refused), ``w/o nvlink``, an FSDP degree in words,
truncation and padding, precisions and dtypes as configs say them, DeepSpeed's config
keys, torchtune's optimizer in backward, torch.compile's modes, a length before ``tokens
seq``, and the RTX 6000 Ada as people write it."""

from __future__ import annotations

import pytest

from adapters.parse import parse_query
from catalog.hub.ref import hub_ref_for_word
from catalog.loader import default_catalog
from engine.choices import Framework, Precision, Sharding, StatePrecision
from tests.helpers import example, fields, parsed, refused, refused_followup

CAT = default_catalog()
H100, A100 = "h100-sxm", "a100-80gb-sxm"


# --- 1. a batch glued to its accumulation --------------------------------------------------

@pytest.mark.parametrize(("text", "batch", "accum"), [
    ("8b lora bs16xga4 a100", 16, 4),
    ("8b lora bs4xga8 a100", 4, 8),
    ("8b lora bs 4 x ga 8 a100", 4, 8),
])
def test_a_batch_glued_to_its_accumulation_sets_both(text: str, batch: int,
                                                     accum: int) -> None:
    request = parsed(text)
    assert (request.micro_batch, request.grad_accum) == (batch, accum)


def test_a_glued_batch_and_accumulation_against_another_batch_is_refused() -> None:
    assert "both set the micro-batch" in refused("8b lora bs16xga4 bs 8 a100").message


# --- 2. LoRA's alpha right after its rank ------------------------------------------------------

@pytest.mark.parametrize(("text", "rank"), [
    ("8b lora r8 a8 a100", 8), ("8b lora r8 a16 a100", 8), ("8b lora rank 16 a32 a100", 16),
    ("8b lora r=8 a16 a100", 8), ("8b lora r 8 a 16 a100", 8),
])
def test_an_a_number_right_after_the_rank_is_lora_alpha_read_and_ignored(text: str,
                                                                         rank: int) -> None:
    request = parsed(text)
    assert (request.gpu, request.gpu_count, request.lora_rank) == (A100, None, rank)


def test_alpha_glued_to_its_number_is_read_and_ignored() -> None:
    assert fields("8b lora r8 alpha16 a100") == fields("8b lora r8 a100")


@pytest.mark.parametrize(("text", "card"), [("8b lora r8 a100", A100), ("8b lora r8 a10", "a10"),
                                            ("8b lora r 8 a40", "a40"),
                                            ("8b lora r 8 a 4090", "rtx-4090")])
def test_a_card_right_after_the_rank_stays_the_card(text: str, card: str) -> None:
    request = parsed(text)
    assert (request.lora_rank, request.gpu) == (8, card)


def test_an_a_number_not_after_a_rank_is_no_alpha() -> None:
    assert '"a16"' in refused("8b lora a16 a100").message


# --- 3. a batch per card said before "batch" -----------------------------------------------

@pytest.mark.parametrize("text", ["8b lora 4/gpu batch a100", "8b lora 4/device batch a100",
                                  "8b lora 4/gpu batch size a100"])
def test_a_count_per_card_before_batch_is_the_micro_batch(text: str) -> None:
    request = parsed(text)
    assert (request.micro_batch, request.gpu_count) == (4, None)


def test_a_card_count_before_a_batch_with_its_number_stays_the_card_count() -> None:
    request = parsed("8b lora 2 gpu batch 4 a100")
    assert (request.micro_batch, request.gpu_count) == (4, 2)


# --- 4. a node and its cards joined by a slash -----------------------------------------------

@pytest.mark.parametrize("text", ["8b lora 1 node/8 gpus h100", "8b lora 1 node / 8 gpus h100",
                                  "8b lora 1 node, 8 gpus h100", "70b full 1 node/8 gpus h100"])
def test_one_node_slash_eight_gpus_is_eight_cards_on_one_node(text: str) -> None:
    request = parsed(text)
    assert (request.nodes, request.gpu_count, request.gpu) == (1, 8, H100)


@pytest.mark.parametrize(("text", "count"), [("8b lora 2 nodes/8 gpus h100", 16),
                                             ("8b lora 2 nodes / 8 gpus h100", 16),
                                             ("8b lora 2 nodes/16 gpus h100", 16),
                                             ("8b lora 2 nodes / 16 gpus h100", 16)])
def test_cards_after_a_node_slash_are_per_node_when_a_node_holds_them(text: str,
                                                                      count: int) -> None:
    request = parsed(text)
    assert (request.nodes, request.gpu_count) == (2, count)


# --- 5. a batch counted in tokens --------------------------------------------------------------

@pytest.mark.parametrize("text", ["8b full tokens/step 1M 8x h100",
                                  "8b full 1M tokens per step 8x h100",
                                  "8b full tokens per step 1M 8x h100",
                                  "8b full 1M tokens/step 8x h100"])
def test_a_batch_counted_in_tokens_is_refused_with_the_global_batch_to_say(text: str) -> None:
    err = refused(text)
    assert "a batch counted in tokens is not read" in err.message
    assert '"global batch size 512 seq 2048"' in err.message
    parse_query(example(err), CAT)


def test_tokens_per_step_is_never_looked_up_on_the_hub() -> None:
    err = refused("8b full tokens/step 1M 8x h100")
    assert hub_ref_for_word(err.word, CAT) is None


# --- 6. w/o nvlink ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "plain"), [
    ("8b lora 4090 24gb w/o nvlink", "8b lora 4090 24gb"),
    ("8b lora 2x rtx-3090 no nvlink", "8b lora 2x rtx-3090"),
    ("8b lora 8x l40s without nvlink", "8b lora 8x l40s"),
    ("8b lora 8x h100-pcie w/o nvlink", "8b lora 8x h100-pcie"),
    ("8b lora 8x mi300x w/o nvlink", "8b lora 8x mi300x"),
])
def test_without_nvlink_on_a_card_without_it_says_nothing_new(text: str, plain: str) -> None:
    assert fields(text) == fields(plain)


@pytest.mark.parametrize(("text", "pcie"), [("8b lora h100 w/o nvlink", "h100-pcie"),
                                            ("8b lora 8x h100 no nvlink", "h100-pcie"),
                                            ("8b lora a100 40gb w/o nvlink", "a100-40gb-pcie")])
def test_without_nvlink_on_an_nvlink_card_is_refused_naming_its_pcie_version(
    text: str, pcie: str
) -> None:
    err = refused(text)
    assert "over NVLink" in err.message and f'"{pcie}"' in err.message
    parse_query(example(err), CAT)


def test_without_nvlink_on_an_nvlink_card_with_no_pcie_version_asks_for_another_card() -> None:
    err = refused("8b lora 8x b200 w/o nvlink")
    assert "name a card without it" in err.message
    parse_query(example(err), CAT)


def test_without_nvlink_with_no_card_named_asks_for_the_card() -> None:
    err = refused("8b lora w/o nvlink")
    assert "no card is named" in err.message
    parse_query(example(err), CAT)


def test_without_nvlink_in_a_follow_up_is_checked_against_the_threads_card() -> None:
    assert "over NVLink" in refused_followup("8b lora 8x h100", "what if w/o nvlink").message


# --- 7. an FSDP degree in words ----------------------------------------------------------------

def test_fsdp_degree_is_the_fsdp_degree() -> None:
    assert fields("8b full 8xh100 fsdp degree 8") == fields("8b full 8xh100 fsdp 8")
    assert parsed("8b full fsdp degree 8 h100").gpu_count == 8


def test_an_fsdp_degree_in_words_against_the_cards_is_refused() -> None:
    assert "shards over 4 cards" in refused("8b full 8x h100 fsdp degree 4").message


# --- 8. truncation and padding ---------------------------------------------------------------

@pytest.mark.parametrize("text", ["8b lora truncation 4096 a100", "8b lora truncate to 4096 a100",
                                  "8b lora truncated to 4k a100"])
def test_a_truncation_length_is_the_longest_sample_and_the_sequence(text: str) -> None:
    request = parsed(text)
    assert (request.seq_len, request.max_len) == (4096, 4096)


@pytest.mark.parametrize("words", ["padding to max length", "padding max_length",
                                   "pad to max length", "padding=max_length",
                                   "pad_to_max_length"])
def test_padding_to_max_length_says_nothing_new(words: str) -> None:
    assert fields(f"8b full {words} seq 4096 8x a100") == fields("8b full seq 4096 8x a100")


def test_a_length_after_pad_to_max_length_is_the_max_length() -> None:
    assert fields("8b lora pad to max length 4096 a100") == fields("8b lora max length 4096 a100")


def test_padding_to_max_length_beside_a_sample_count_is_refused() -> None:
    err = refused("8b lora 10k samples of 512 tokens padding max_length seq 4096 a100")
    assert '"10,000 samples of 4096 tokens"' in err.message and "packing" in err.message
    parse_query(example(err), CAT)


def test_padding_to_max_length_beside_packed_samples_is_accepted() -> None:
    request = parsed("8b lora 10k samples of 512 tokens packing padding max_length seq 4096 a100")
    assert request.packing and request.seq_len == 4096


# --- 9. precisions and dtypes as configs say them ------------------------------------------

def test_bf16_weights_and_optimizer_states_is_pure_bf16() -> None:
    request = parsed("8b full bf16 weights and optimizer states 8x a100")
    assert request.state_precision is StatePrecision.PURE_BF16


@pytest.mark.parametrize(("text", "precision"), [
    ("8b qlora bnb 4bit double quant nf4 bf16 compute a100", Precision.BF16),
    ("8b qlora bnb_4bit_compute_dtype bfloat16 a100", Precision.BF16),
    ("8b qlora compute dtype bf16 a100", Precision.BF16),
    ("8b qlora fp16 compute t4", Precision.FP16),
])
def test_a_compute_dtype_is_the_precision(text: str, precision: Precision) -> None:
    assert parsed(text).precision is precision


@pytest.mark.parametrize("text", ["8b lora dtype=bfloat16 a100",
                                  "8b lora torch_dtype bfloat16 a100",
                                  "8b full mixed_precision_param bfloat16 8x h100 torchtitan",
                                  "8b full --training.mixed_precision_param bfloat16 8x h100 "
                                  "torchtitan"])
def test_a_dtype_key_before_its_value_is_the_precision(text: str) -> None:
    assert parsed(text).precision is Precision.BF16


# --- 10. DeepSpeed's config keys --------------------------------------------------------------

@pytest.mark.parametrize("words", ["zero_optimization.stage 3",
                                   '"zero_optimization": {"stage": 3}'])
def test_deepspeeds_zero_optimization_stage_is_that_stage_under_hf(words: str) -> None:
    request = parsed(f"8b full {words} 8x a100")
    assert request.sharding is Sharding.ZERO3 and request.framework is Framework.HF


@pytest.mark.parametrize("words", ['zero3 "offload_optimizer": {"device": "cpu"}',
                                   "zero3 zero_optimization.offload_optimizer.device cpu"])
def test_deepspeeds_offload_optimizer_device_offloads_the_optimizer(words: str) -> None:
    request = parsed(f"8b full {words} 8x a100")
    assert request.sharding is Sharding.ZERO3
    assert request.offload and not request.offload_weights


def test_deepspeeds_offload_param_device_offloads_the_weights_too() -> None:
    request = parsed('8b full zero3 "offload_param": {"device": "cpu"} 8x a100')
    assert request.offload and request.offload_weights


def test_deepspeeds_offload_device_none_offloads_nothing() -> None:
    request = parsed('8b full "zero_optimization": {"stage": 3, "offload_optimizer": '
                     '{"device": "none"}} 8x a100')
    assert request.sharding is Sharding.ZERO3 and not request.offload


# --- 11. torchtune's optimizer in backward, torch.compile's modes -------------------------------

@pytest.mark.parametrize("words", ["optimizer in backward", "optimizer in bwd",
                                   "optimizer_in_bwd"])
def test_optimizer_in_backward_in_words_is_the_switch(words: str) -> None:
    request = parsed(f"8b full torchtune paged adamw 8bit {words} 1x 4090")
    assert request.optimizer_in_backward and request.framework is Framework.TORCHTUNE


@pytest.mark.parametrize("words", ["torch.compile max-autotune", "max-autotune",
                                   "mode max-autotune", "mode=max-autotune",
                                   "reduce-overhead"])
def test_a_torch_compile_mode_turns_compile_on(words: str) -> None:
    assert parsed(f"8b full {words} 8x h100").compile


# --- 12. a length before "tokens seq" -------------------------------------------------------

@pytest.mark.parametrize(("text", "seq"), [("8b lora 8k tokens seq h100", 8192),
                                           ("8b lora 2048 tokens seq bs 4 a100", 2048)])
def test_a_length_before_tokens_seq_is_the_sequence_length(text: str, seq: int) -> None:
    request = parsed(text)
    assert request.seq_len == seq and request.dataset_tokens is None


def test_tokens_then_seq_with_its_own_number_stays_the_data() -> None:
    request = parsed("8b lora 50M tokens seq 4096 h100")
    assert (request.dataset_tokens, request.seq_len) == (50_000_000, 4096)


# --- 13. the RTX 6000 Ada as people write it ----------------------------------------------------

@pytest.mark.parametrize("words", ["A6000 Ada", "rtx a6000 ada", "a6000-ada"])
def test_a6000_ada_is_the_rtx_6000_ada(words: str) -> None:
    assert parsed(f"8b lora {words}").gpu == "rtx-6000-ada"


def test_a6000_alone_stays_the_rtx_a6000() -> None:
    assert parsed("8b lora a6000").gpu == "rtx-a6000"
