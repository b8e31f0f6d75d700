"""The query language: a table of queries and the fields (or the error) each gives.

Most cases run against a small hand-built catalog (``small_catalog``) so they do
not depend on how far the shipped YAML files have been filled; a few run against
``default_catalog()`` for entries that are already there.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from adapters.help import EXAMPLES, QUERY_HELP
from adapters.parse import (
    EXAMPLE,
    MAX_QUERY_CHARS,
    QueryError,
    apply_followup,
    parse_fields,
    parse_query,
)
from adapters.query.multiword import PHRASES
from adapters.query.vocabulary import FLAGS, KEYWORDS
from catalog.loader import default_catalog
from engine.architecture import Architecture
from engine.choices import LoraTargets, Method, Mode, Optimizer, Precision, Sharding, StatePrecision
from engine.request import Request
from engine.specs import Catalog, GpuSpec, ModelSpec

# --- a small catalog -------------------------------------------------------------

_ARCH = Architecture(
    hidden_size=256,
    num_layers=2,
    num_heads=4,
    num_kv_heads=2,
    intermediate_size=512,
    vocab_size=1000,
)


def _model(model_id: str, name: str, family: str, **fields: Any) -> ModelSpec:
    return ModelSpec(
        id=model_id,
        name=name,
        family=family,
        architecture=_ARCH,
        official_params=1e9,
        source="test",
        **fields,
    )


def _gpu(gpu_id: str, name: str, *aliases: str) -> GpuSpec:
    return GpuSpec(
        id=gpu_id,
        name=name,
        vendor="NVIDIA",
        aliases=aliases,
        memory_gb=80,
        bf16_tflops=100.0,
        fp16_tflops=100.0,
        bf16=True,
        flash_attention_2="yes",
        interconnect="test",
        fabric="nvlink",
        status="live",
        spec_source="test",
    )


def small_catalog() -> Catalog:
    """Models and cards with the ids, names and aliases the real catalog will use."""
    models = [
        _model("llama-3.1-8b", "Llama 3.1 8B", "llama",
               aliases=("llama3-8b", "meta-llama/Llama-3.1-8B"), sizes=("8b",)),
        _model("llama-3.1-70b", "Llama 3.1 70B", "llama",
               aliases=("meta-llama/Llama-3.1-70B",), sizes=("70b",)),
        _model("llama-2-7b", "Llama 2 7B", "llama", sizes=("7b",)),
        _model("qwen2.5-7b", "Qwen2.5 7B", "qwen"),
        _model("qwen2.5-0.5b", "Qwen2.5 0.5B", "qwen", sizes=("0.5b",)),
        _model("qwen2.5-1.5b", "Qwen2.5 1.5B", "qwen", sizes=("1.5b",)),
        _model("mistral-7b", "Mistral 7B", "mistral"),
        _model("mixtral-8x7b", "Mixtral 8x7B", "mistral"),
    ]
    gpus = [
        _gpu("h100-sxm", "NVIDIA H100 SXM5 80GB", "h100", "h100-sxm5", "h100-80gb"),
        _gpu("h200", "NVIDIA H200 141GB"),
        _gpu("a100-80gb-sxm", "NVIDIA A100 SXM4 80GB", "a100", "a100-80gb"),
        _gpu("a100-40gb-sxm", "NVIDIA A100 SXM4 40GB", "a100-40gb"),
        _gpu("l40s", "NVIDIA L40S 48GB"),
        _gpu("rtx-4090", "NVIDIA GeForce RTX 4090", "4090"),
    ]
    return Catalog(models, gpus)


CAT = small_catalog()

L8, L70 = "llama-3.1-8b", "llama-3.1-70b"
H100, A100 = "h100-sxm", "a100-80gb-sxm"

# --- good queries: text → exactly the fields it names -----------------------------

GOOD: list[tuple[str, dict[str, object]]] = [
    # the headline example and a long one
    ("70b qlora 50M tokens h100",
     {"model": L70, "method": Method.QLORA, "dataset_tokens": 50_000_000, "gpu": H100}),
    ("llama 3.1 8b lora 200M tokens 2 epochs seq 8k 2x h100 $1.80/hr",
     {"model": L8, "method": Method.LORA, "dataset_tokens": 200_000_000, "epochs": 2.0,
      "seq_len": 8192, "gpu": H100, "gpu_count": 2, "price_per_gpu_hour": 1.8}),
    # models: ids, names, aliases, joined words, sizes, synthetic sizes
    ("llama-3.1-8b", {"model": L8}),
    ("LLAMA-3.1-8B", {"model": L8}),
    ("meta-llama/Llama-3.1-8B", {"model": L8}),
    ("https://huggingface.co/meta-llama/Llama-3.1-70B", {"model": L70}),
    ("llama 3.1 8b", {"model": L8}),
    ("qwen2.5 7b", {"model": "qwen2.5-7b"}),
    ("mistral-7b", {"model": "mistral-7b"}),
    ("mixtral 8x7b", {"model": "mixtral-8x7b"}),
    ("llama 7b", {"model": "llama-2-7b"}),
    ("8b", {"model": L8}),
    ("70B", {"model": L70}),
    ("0.5b", {"model": "qwen2.5-0.5b"}),
    ("1.5b", {"model": "qwen2.5-1.5b"}),
    ("20b", {"model": "synthetic-20b"}),
    ("2.7b", {"model": "synthetic-2.7b"}),
    ("synthetic-13b", {"model": "synthetic-13b"}),
    ("8b llama-3.1-8b", {"model": L8}),  # the same model twice is no conflict
    # methods
    ("full", {"method": Method.FULL}),
    ("fft", {"method": Method.FULL}),
    ("full-ft", {"method": Method.FULL}),
    ("lora", {"method": Method.LORA}),
    ("QLoRA", {"method": Method.QLORA}),
    # tokens: decimal suffixes, either order, glued, spelled out
    ("50M tokens", {"dataset_tokens": 50_000_000}),
    ("50m tokens", {"dataset_tokens": 50_000_000}),
    ("1.2B tok", {"dataset_tokens": 1_200_000_000}),
    ("500k tokens", {"dataset_tokens": 500_000}),
    ("tokens 50M", {"dataset_tokens": 50_000_000}),
    ("tokens=50m", {"dataset_tokens": 50_000_000}),
    ("2e9 tokens", {"dataset_tokens": 2_000_000_000}),
    ("1t tokens", {"dataset_tokens": 10**12}),
    ("50,000,000 tokens", {"dataset_tokens": 50_000_000}),
    ("50 million tokens", {"dataset_tokens": 50_000_000}),
    ("50mtok", {"dataset_tokens": 50_000_000}),
    # a size before a unit is a number; alone (or leading a number-unit run) a model
    ("8B tokens", {"dataset_tokens": 8_000_000_000}),
    ("70b 8b tokens", {"model": L70, "dataset_tokens": 8_000_000_000}),
    ("70b tokens 50M", {"model": L70, "dataset_tokens": 50_000_000}),
    ("70b tokens 50M epochs 2", {"model": L70, "dataset_tokens": 50_000_000, "epochs": 2.0}),
    ("8b tokens 3 epochs", {"dataset_tokens": 8_000_000_000, "epochs": 3.0}),
    # epochs
    ("3 epochs", {"epochs": 3.0}),
    ("1ep", {"epochs": 1.0}),
    ("2 epoch", {"epochs": 2.0}),
    ("epochs 2", {"epochs": 2.0}),
    ("epochs=2", {"epochs": 2.0}),
    ("0.5 epochs", {"epochs": 0.5}),
    # cards and counts
    ("h100", {"gpu": H100}),
    ("H100", {"gpu": H100}),
    ("nvidia h100 sxm", {"gpu": H100}),
    ("2x h100", {"gpu": H100, "gpu_count": 2}),
    ("2 x h100", {"gpu": H100, "gpu_count": 2}),
    ("2×h100", {"gpu": H100, "gpu_count": 2}),  # the multiplication sign
    ("8xa100-80", {"gpu": A100, "gpu_count": 8}),
    ("h100x8", {"gpu": H100, "gpu_count": 8}),
    ("h100 x 8", {"gpu": H100, "gpu_count": 8}),
    ("8 h100", {"gpu": H100, "gpu_count": 8}),
    ("a100s", {"gpu": A100}),
    ("h100s", {"gpu": H100}),
    ("8 h100s", {"gpu": H100, "gpu_count": 8}),
    ("a100 40gb", {"gpu": "a100-40gb-sxm"}),
    ("on 4x a100", {"gpu": A100, "gpu_count": 4}),
    ("4090", {"gpu": "rtx-4090"}),
    ("2 4090", {"gpu": "rtx-4090", "gpu_count": 2}),
    ("rtx 4090", {"gpu": "rtx-4090"}),
    ("8 gpus", {"gpu_count": 8}),
    # sequence length: binary k
    ("seq 8k", {"seq_len": 8192}),
    ("ctx 4096", {"seq_len": 4096}),
    ("seq=8192", {"seq_len": 8192}),
    ("8k seq", {"seq_len": 8192}),
    ("8k context", {"seq_len": 8192}),
    ("16k ctx", {"seq_len": 16384}),
    ("seq 128k", {"seq_len": 131072}),
    ("seq 1.5k", {"seq_len": 1536}),
    ("seq 8000", {"seq_len": 8000}),
    ("seq 8k ctx 8192", {"seq_len": 8192}),  # same value twice is fine
    # micro-batch, rank, targets
    ("bs 4", {"micro_batch": 4}),
    ("batch 4", {"micro_batch": 4}),
    ("batch=4", {"micro_batch": 4}),
    ("bs=4", {"micro_batch": 4}),
    ("bs4", {"micro_batch": 4}),
    ("r64", {"lora_rank": 64}),
    ("accum 8", {"grad_accum": 8}),
    ("8 accum", {"grad_accum": 8}),
    ("ga=4", {"grad_accum": 4}),
    ("grad-accum 16", {"grad_accum": 16}),
    ("gradient-accumulation 4", {"grad_accum": 4}),
    ("4 accumulation steps", {"grad_accum": 4}),
    ("dropout 0.05", {"lora_dropout": 0.05}),
    ("dropout 5%", {"lora_dropout": 0.05}),
    ("lora-dropout=0.1", {"lora_dropout": 0.1}),
    ("dropout 10", {"lora_dropout": 0.1}),
    ("rank 64", {"lora_rank": 64}),
    ("r=64", {"lora_rank": 64}),
    ("all-linear", {"lora_targets": LoraTargets.ALL_LINEAR}),
    ("attn", {"lora_targets": LoraTargets.ATTENTION}),
    ("attention", {"lora_targets": LoraTargets.ATTENTION}),
    ("qv", {"lora_targets": LoraTargets.QV}),
    # optimizers and precisions
    ("adamw", {"optimizer": Optimizer.ADAMW}),
    ("adamw-8bit", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("adam8bit", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("8bit-adam", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("adamw_bnb_8bit", {"optimizer": Optimizer.ADAMW_8BIT}),  # HF's optim name
    ("bnb_adamw_8bit", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("paged_adamw_8bit", {"optimizer": Optimizer.ADAMW_8BIT}),
    ("sgd", {"optimizer": Optimizer.SGD}),
    ("adafactor", {"optimizer": Optimizer.ADAFACTOR}),
    ("lion", {"optimizer": Optimizer.LION}),
    ("bf16", {"precision": Precision.BF16}),
    ("fp16", {"precision": Precision.FP16}),
    ("fp8", {"precision": Precision.FP8}),
    ("fp32", {"precision": Precision.FP32}),
    ("pure-bf16", {"state_precision": StatePrecision.PURE_BF16}),
    # switches
    ("ckpt", {"grad_checkpointing": True}),
    ("no-ckpt", {"grad_checkpointing": False}),
    ("no_ckpt", {"grad_checkpointing": False}),
    ("no ckpt", {"grad_checkpointing": False}),
    ("checkpointing", {"grad_checkpointing": True}),
    ("no-checkpointing", {"grad_checkpointing": False}),
    ("flash", {"flash_attention": True}),
    ("no-flash", {"flash_attention": False}),
    ("without flash", {"flash_attention": False}),
    ("fused-ce", {"fused_ce": True}),
    ("hf-loss", {"hf_loss": True}),
    ("unfused-ce", {"hf_loss": True}),
    ("no-hf-loss", {"hf_loss": False}),
    ("no-fused-ce", {"fused_ce": False}),
    ("offload", {"offload": True}),
    ("no-double-quant", {"double_quant": False}),
    # sharding
    ("zero1", {"sharding": Sharding.ZERO1}),
    ("zero2", {"sharding": Sharding.ZERO2}),
    ("zero3", {"sharding": Sharding.ZERO3}),
    ("fsdp", {"sharding": Sharding.FSDP}),
    ("ddp", {"sharding": Sharding.NONE}),
    ("fsdp1", {"sharding": Sharding.FSDP}),
    # utilization
    ("mfu 40%", {"mfu": 0.4}),
    ("mfu 0.4", {"mfu": 0.4}),
    ("40% mfu", {"mfu": 0.4}),
    ("mfu=40%", {"mfu": 0.4}),
    ("mfu 40", {"mfu": 0.4}),
    # price
    ("$2.50/hr", {"price_per_gpu_hour": 2.5}),
    ("$2.5/h", {"price_per_gpu_hour": 2.5}),
    ("2.5/hr", {"price_per_gpu_hour": 2.5}),
    ("$2.50 per hour", {"price_per_gpu_hour": 2.5}),
    ("price 3", {"price_per_gpu_hour": 3.0}),
    # mode
    ("napkin", {"mode": Mode.NAPKIN}),
    ("detailed", {"mode": Mode.DETAILED}),
    # filler, punctuation, nothing at all
    ("what if 8k seq?", {"seq_len": 8192}),
    ("with full and zero3!", {"method": Method.FULL, "sharding": Sharding.ZERO3}),
    ("what would 70b cost, using qlora, for 50M tokens on the h100?",
     {"model": L70, "method": Method.QLORA, "dataset_tokens": 50_000_000, "gpu": H100}),
    ("", {}),
    ("  ?! , . ", {}),
]


@pytest.mark.parametrize(("text", "expected"), GOOD, ids=[t or "<empty>" for t, _ in GOOD])
def test_good_query_names_exactly_these_fields(text: str, expected: dict[str, object]) -> None:
    assert parse_fields(text, CAT) == expected


# --- bad queries: text → QueryError naming the word --------------------------------

BAD: list[tuple[str, str, str]] = [
    # (text, the offending word, a fragment of the message)
    ("70b h1000", "h1000", "Did you mean h100"),
    ("8b qlroa", "qlroa", "qlora"),
    ("8b adamw-9bit", "adamw-9bit", "adamw-8bit"),
    ("8x7b", "8x7b", "mixtral-8x7b"),
    ("8b 🚀", "🚀", "I don't know"),
    ("8b $$2", "$$2", "I don't know"),
    # a bare dollar amount: a budget or a rate per GPU-hour? (it is asked, never guessed)
    ("8b $2.50", "$2.50", 'a budget (say "under $2.50") or a rate per GPU-hour'),
    ("8b nan tokens", "nan", "I don't know"),
    ("8b inf epochs", "inf", "I don't know"),
    # conflicts
    ("8b lora full", "full", "conflicts with \"lora\""),
    ("8b 70b", "70b", "model"),
    ("8b h100 l40s", "l40s", "GPU"),
    ("8b ckpt no-ckpt", "no-ckpt", "checkpointing"),
    ("8b seq 8k ctx 4k", "ctx 4k", "sequence length"),
    ("8b fsdp zero2", "zero2", "sharding"),
    ("8b zero3 fsdp", "fsdp", "sharding"),
    ("8b 2x h100 h100x4", "h100x4", "GPU count"),
    # impossible values
    ("8b 0 tokens", "0", "between 1 and"),
    ("8b 0.1 tokens", "0.1", "token count"),
    ("8b 1e30 tokens", "1e30", "1000T"),
    ("8b 1e999999 tokens", "1e999999", "out of range"),
    ("8b -50M tokens", "-50M", "token count"),
    ("8b seq 0", "0", "sequence length"),
    ("8b rank 100000", "100000", "8,192"),
    ("8b r100000", "r100000", "LoRA rank"),
    ("8b -3 epochs", "-3", "between 0.001 and 1,000"),
    ("8b 2000 epochs", "2000", "epoch count"),
    ("8b mfu 150%", "150%", "100%"),
    ("8b mfu 0", "0", "MFU"),
    ("8b 0x h100", "0x", "GPU count"),
    ("8b -2 h100", "-2", "GPU count"),
    ("8b $0/hr", "$0/hr", "price"),
    ("8b $5000/hr", "$5000/hr", "$1,000"),
    ("8b bs 2.5", "2.5", "whole number"),
    ("8b bs 0", "0", "micro-batch"),
    ("8b accum 0", "0", "gradient accumulation"),
    ("8b accum 2.5", "2.5", "whole number"),
    ("8b accum 10000", "10000", "4,096"),
    ("8b lora dropout 1", "1", "between 0 and 0.9"),
    ("8b lora dropout -0.1", "-0.1", "LoRA dropout"),
    ("8b lora dropout $1", "$1", "price"),
    ("8b accum 50%", "50%", "percentage"),
    ("8b seq 1.3k", "1.3k", "whole number"),
    ("8b 40% tokens", "40%", "percentage"),
    ("5000b", "5000b", "model size"),
    # missing pieces
    ("8b lora tokens", "tokens", "needs a number"),
    ("8b lora seq", "seq", "needs a number"),
    ("8b seq", "seq", "needs a number"),  # a size before a unit other than tokens is the model
    ("8b tp", "tp", "needs a number"),
    ("8b epochs", "epochs", "needs a number"),
    ("8b 500m", "500m", "needs a unit"),
    ("8b lora 50M tokns", "tokns", 'did you mean "50M tokens"'),
    ("8b lora 50G tokens", "tokens", 'for 50 billion tokens say "50B tokens"'),
    ("8b lora 3 eopchs", "eopchs", 'did you mean "3 epochs"'),
    # a decimal comma is refused with the dotted form, not read as two numbers
    ("8b lora 0,5 epochs", "0,5", 'write a decimal with a dot, "0.5"'),
    ("8b lora 1,5B tokens", "1,5B", '"1.5B"'),
    ("8b lora bs 4,8", "4,8", 'give one value at a time, e.g. "4"'),
    ("8b lora dropout 0,05", "0,05", '"0.05"'),
    ("8b lora lora_dropout=0,05", "0,05", '"0.05"'),
    ("8b $", "$", "needs a number"),
    ("8b 2x", "2x", "needs a card"),
    ("8b no", "no", "switch"),
    ("llama 20b", "llama 20b", "Which model"),
]


def test_every_fixed_word_is_spelled_as_the_tokenizer_reads_it() -> None:
    """Queries are lower-cased and read ``_`` as ``-``: a word spelled otherwise in the
    vocabulary could never match, and would still be offered as a suggestion."""
    words = [*KEYWORDS, *FLAGS, *PHRASES.values()]
    unreachable = [w for w in words if w != w.lower() or "_" in w or " " in w]
    assert unreachable == []


@pytest.mark.parametrize(("text", "word", "fragment"), BAD, ids=[t for t, _, _ in BAD])
def test_bad_query_names_the_word(text: str, word: str, fragment: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(text, CAT)
    err = caught.value
    assert err.word == word
    assert f'"{word}' in err.message
    assert fragment in err.message
    assert "Example: " in err.message
    assert str(err) == err.message
    assert len(err.suggestions) <= 3


def test_unknown_word_message_has_word_suggestions_and_example() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("70b qlora 50M tokens h1000", CAT)
    err = caught.value
    assert err.word == "h1000"
    assert err.suggestions[:2] == ["h100", "h200"]
    assert str(err).startswith('I don\'t know "h1000". Did you mean h100, h200')
    assert str(err).endswith(f"? Example: {EXAMPLE}")


def test_error_quotes_the_word_as_typed() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b H1000", CAT)
    assert caught.value.word == "H1000"
    assert '"H1000"' in str(caught.value)


@pytest.mark.parametrize("text", ["8b lora ½M tokens", "8b lora ⅓ epochs", "8b lora ①x h100"])
def test_a_fraction_or_circled_digit_is_refused_asking_for_the_number_written_out(
    text: str,
) -> None:
    with pytest.raises(QueryError, match="is not a digit I read: write the number out"):
        parse_query(text, CAT)


def test_a_byte_that_is_not_utf8_is_named_as_such() -> None:
    undecoded = b"8b lora \xff".decode("utf-8", "surrogateescape")  # as argv passes it on
    with pytest.raises(QueryError, match=r"a byte that is not UTF-8 text \(0xFF\)"):
        parse_query(undecoded, CAT)


def test_too_many_samples_name_the_samples_and_length_said_not_a_product() -> None:
    said = "1,000,000,000,000 samples of 4,000,000 tokens is 4e+06T tokens: the token count"
    with pytest.raises(QueryError, match=re.escape(said)):
        parse_query("8b lora 1e12 samples of 4m tokens", CAT)


def test_query_error_is_a_value_error() -> None:
    assert issubclass(QueryError, ValueError)


@pytest.mark.parametrize("text", ["", "lora 50M tokens h100", "what if?"])
def test_a_query_must_name_a_model(text: str) -> None:
    with pytest.raises(QueryError, match="Which model") as caught:
        parse_query(text, CAT)
    assert "8b" in str(caught.value)
    assert "Example: " in str(caught.value)


@pytest.mark.parametrize(
    "text",
    [
        "x" * 10_000,
        "8b " + "lora " * (MAX_QUERY_CHARS // 5 + 1),
        "8b\x00 lora",
        "8b \x1b[31m lora",
    ],
    ids=["10kB junk", "over the cap", "NUL", "escape sequence"],
)
def test_long_or_control_input_is_a_query_error(text: str) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(text, CAT)
    assert caught.value.word is None


def test_length_cap_names_the_limit() -> None:
    with pytest.raises(QueryError, match=f"{MAX_QUERY_CHARS:,}"):
        parse_query("8b " * (MAX_QUERY_CHARS // 3 + 2), CAT)


def test_a_pasted_command_line_of_several_hundred_characters_is_read() -> None:
    line = ("8b lora " + "learning_rate 2e-4 warmup_ratio 0.03 logging_steps 10 " * 12
            + "per_device_train_batch_size 4 1x h100")
    assert 500 < len(line) < MAX_QUERY_CHARS
    assert parse_query(line, CAT).micro_batch == 4


def test_non_text_is_a_query_error() -> None:
    with pytest.raises(QueryError):
        parse_query(None, CAT)  # type: ignore[arg-type]


def test_tabs_newlines_and_invisible_characters_are_spaces() -> None:
    assert parse_fields("8b\tlora\n50M\u200b tokens", CAT) == {
        "model": L8, "method": Method.LORA, "dataset_tokens": 50_000_000,
    }


def test_full_width_characters_are_normalized() -> None:
    assert parse_fields("８ｂ ｑｌｏｒａ", CAT) == {"model": L8, "method": Method.QLORA}


# --- parse_query builds a validated Request ---------------------------------------


def test_parse_query_returns_a_request_with_defaults_elsewhere() -> None:
    request = parse_query("70b qlora 50M tokens h100", CAT)
    assert request == Request(
        model=L70, method=Method.QLORA, dataset_tokens=50_000_000, gpu=H100
    )
    assert request.gpu_count is None
    assert request.seq_len == 2048


# --- against the shipped catalog ---------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("70b qlora 50M tokens h100",
         {"model": "llama-3.1-70b", "method": Method.QLORA, "dataset_tokens": 50_000_000,
          "gpu": "h100-sxm"}),
        ("llama 3.1 8b l40s", {"model": "llama-3.1-8b", "gpu": "l40s"}),
        ("meta-llama/Llama-3.1-8B 4x h100",
         {"model": "llama-3.1-8b", "gpu": "h100-sxm", "gpu_count": 4}),
    ],
)
def test_shipped_catalog(text: str, expected: dict[str, object]) -> None:
    assert parse_fields(text, default_catalog()) == expected


def test_default_catalog_is_used_when_none_is_given() -> None:
    assert parse_query("8b lora").model == "llama-3.1-8b"


@pytest.mark.parametrize("example", EXAMPLES)
def test_help_examples_parse(example: str) -> None:
    parse_query(example, default_catalog())
    parse_query(example, CAT)


def test_help_fits_a_discord_message_and_covers_the_language() -> None:
    assert len(QUERY_HELP) < 2000
    for word in ("qlora", "tokens", "epochs", "seq", "bs", "r64", "attn", "adamw-8bit", "fp8",
                 "pure-bf16", "no-ckpt", "no-flash", "fused-ce", "offload", "zero3", "fsdp",
                 "accum", "dropout",
                 "ddp", "mfu", "$2.50/hr", "napkin", "no-double-quant", "2x h100", "what if",
                 "trl", "unsloth", "torchtune", "samples", "spot", "nodes", "under $500",
                 "max seq", "largest model", "compile", "activation-offload", "steps", "cp 8",
                 "fa3", "float8", "dora"):
        assert word in QUERY_HELP, word


# --- follow-ups ---------------------------------------------------------------------

PREVIOUS = Request(
    model=L70, method=Method.QLORA, dataset_tokens=50_000_000, gpu=H100, gpu_count=2,
    seq_len=4096,
)

FOLLOWUPS: list[tuple[str, dict[str, object]]] = [
    ("what if 8k seq?", {"seq_len": 8192}),
    ("on a100s", {"gpu": A100, "gpu_count": None}),
    ("with full", {"method": Method.FULL}),
    ("r64 and 2 epochs", {"lora_rank": 64, "epochs": 2.0}),
    ("napkin", {"mode": Mode.NAPKIN}),
    ("on 4x a100", {"gpu": A100, "gpu_count": 4}),
    ("with full and zero3", {"method": Method.FULL, "sharding": Sharding.ZERO3}),
    ("what about 8b?", {"model": L8}),
    ("on 8 gpus", {"gpu_count": 8}),
    ("lora", {"method": Method.LORA}),  # replaces qlora: no conflict across messages
    ("$1.99/hr", {"price_per_gpu_hour": 1.99}),
    ("no-ckpt", {"grad_checkpointing": False}),
    ("with 8 accum steps", {"grad_accum": 8}),
    ("dropout 0.1", {"lora_dropout": 0.1}),
]


@pytest.mark.parametrize(("text", "changed"), FOLLOWUPS, ids=[t for t, _ in FOLLOWUPS])
def test_followup_changes_only_what_it_names(text: str, changed: dict[str, object]) -> None:
    after = apply_followup(PREVIOUS, text, CAT)
    assert after.model_dump() == {**PREVIOUS.model_dump(), **changed}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("hmm", '"hmm"'),
        ("what if?", "anything to change"),
        ("", "anything to change"),
        ("lora full", "conflicts"),
        ("seq 0", "sequence length"),
        ("mfu 150%", "MFU"),
    ],
)
def test_bad_followup_is_a_query_error(text: str, fragment: str) -> None:
    with pytest.raises(QueryError) as caught:
        apply_followup(PREVIOUS, text, CAT)
    assert fragment in str(caught.value)
    assert "Example: " in str(caught.value)


def test_followup_result_is_validated() -> None:
    after = apply_followup(PREVIOUS, "on 4x a100", CAT)
    assert Request.model_validate(after.model_dump()) == after


def test_a_count_before_an_unknown_card_names_the_card_and_its_near_spellings() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b lora 2x h1000")

    assert caught.value.word == "h1000"
    assert 'I don\'t know the card "h1000"' in caught.value.message
    assert "h100" in caught.value.suggestions


def test_a_count_with_nothing_after_it_says_it_needs_a_card() -> None:
    with pytest.raises(QueryError) as caught:
        parse_query("8b lora 2x")

    assert caught.value.message.startswith('"2x" needs a card after it.')
