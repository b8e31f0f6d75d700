"""Properties of the query parser, checked on generated text.

* Any string gives a ``Request`` or a ``QueryError``, never another exception,
  for both ``parse_query`` and ``apply_followup``.
* Case does not matter.
* The order of the phrases in a valid query does not matter.
"""

from __future__ import annotations

import random
import time

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.parse import QueryError, apply_followup, parse_query
from engine.choices import Method
from engine.request import Request
from tests.test_parse import small_catalog

CAT = small_catalog()
PREVIOUS = Request(model="llama-3.1-70b", method=Method.QLORA, dataset_tokens=50_000_000,
                   gpu="h100-sxm", gpu_count=2)

# Words the language knows, odd numbers and junk, to build near-miss queries from.
WORDS = [
    "70b", "8b", "0.5b", "20b", "llama", "3.1", "llama-3.1-8b", "qwen2.5", "7b", "mixtral",
    "8x7b", "full", "lora", "qlora", "fft", "50M", "1.2B", "500k", "2e9", "tokens", "tok",
    "epochs", "1ep", "3", "0", "-1", "0.5", "h100", "a100s", "2x", "8xa100-80", "h100x8",
    "x", "x8", "4090", "gpus", "seq", "ctx", "8k", "128k", "seq=8192", "bs", "batch=4", "r64",
    "rank", "r=64", "attn", "qv", "all-linear", "adamw-8bit", "sgd", "lion", "bf16", "fp8",
    "ckpt", "no-ckpt", "no", "without", "flash", "fused-ce", "zero3", "fsdp", "ddp",
    "pure-bf16", "offload", "mfu", "40%", "150%", "$2.50/hr", "$", "/hr", "per", "hour",
    "napkin", "detailed", "no-double-quant", "what", "if", "with", "on", "?", ",", ".", "!",
    "1e999999", "nan", "inf", "1e30", "million", "🚀", "\u200b", "\x00", "==", "$$",
    "meta-llama/Llama-3.1-8B", "synthetic-13b", "h1000", "-", "*", "x0", "0x",
    # phrasing as published runs write it (adapters/query/phrasing.py), slashes, makers
    "per", "device", "2/device", "4/gpu", "single", "node", "nodes", "each", "8xH100",
    "2x8xh100", "z3", "ZeRO-Offload", "ZeRO-Infinity", "dp", "8", "data", "parallel",
    "effective", "global", "train_batch_size", "max", "up", "to", "w/o", "q_proj/v_proj",
    "seq/2", "nvidia", "amd", "cutoff", "sequences", "2048-token", "precision", "master",
    "weights", "trainer", "llamafactory-cli", "activation", "offloading", "16k", "4096",
    "8192", "dataset", "of", "torchtitan", "accumulate", "steps", "99999999", "fsdp=8",
]

near_misses = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)
any_text = st.one_of(st.text(max_size=700), near_misses)


def outcome(text: str) -> Request | type[QueryError]:
    """The parsed request, or the QueryError class if the query was refused."""
    try:
        return parse_query(text, CAT)
    except QueryError:
        return QueryError


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
def test_parse_query_gives_a_request_or_a_query_error(text: str) -> None:
    try:
        result = parse_query(text, CAT)
    except QueryError as err:
        assert err.message and str(err) == err.message
        assert len(err.suggestions) <= 3
        assert "Example: " in err.message
    else:
        assert isinstance(result, Request)


@settings(max_examples=300, deadline=None)
@given(any_text)
def test_apply_followup_gives_a_request_or_a_query_error(text: str) -> None:
    try:
        result = apply_followup(PREVIOUS, text, CAT)
    except QueryError as err:
        assert "Example: " in err.message
    else:
        assert isinstance(result, Request)
        assert Request.model_validate(result.model_dump()) == result


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="ascii"), max_size=120) | near_misses)
def test_case_does_not_matter(text: str) -> None:
    lower = outcome(text.lower())
    assert outcome(text.upper()) == lower
    assert outcome(text.swapcase()) == lower


# One phrase per field: each list holds interchangeable spellings of a phrase.
PHRASES: list[list[str]] = [
    ["70b", "llama-3.1-8b", "meta-llama/Llama-3.1-8B", "llama 3.1 8b", "20b", "mixtral-8x7b",
     "qwen2.5 7b", "llama 7b"],
    ["full", "lora", "qlora", "fft"],
    ["50M tokens", "tokens 1.2B", "500k tok", "2e9 tokens", "50mtok"],
    ["3 epochs", "1ep", "epochs 2", "0.5 epochs"],
    ["h100", "2x h100", "8xa100-80", "h100x8", "8 l40s", "a100s", "4x 4090"],
    ["seq 8k", "ctx 4096", "seq=8192", "8k seq", "16k ctx"],
    ["bs 4", "batch=2", "bs8"],
    ["r64", "rank 32", "r=8"],
    ["attn-only", "qv", "all-linear"],  # "flash attn" side by side is FlashAttention
    ["adamw", "adamw-8bit", "sgd", "lion", "adafactor"],
    ["bf16", "fp16"],  # fp8 (an FP8 base) contradicts qlora's 4-bit base: refused beside it
    ["ckpt", "no-ckpt"],
    ["flash", "no flash"],
    ["fused-ce", "no-fused-ce"],
    ["zero1", "zero3", "fsdp", "ddp"],
    ["pure-bf16"],
    ["offload"],
    ["mfu 40%", "mfu 0.4", "45% mfu"],
    ["$2.50/hr", "2.5/hr", "$3.10 per hour"],
    ["napkin", "detailed"],
    ["no-double-quant"],
]


@st.composite
def valid_phrases(draw: st.DrawFn) -> list[str]:
    """The model phrase plus a random subset of the others, one spelling each."""
    others = draw(st.sets(st.integers(1, len(PHRASES) - 1), max_size=len(PHRASES) - 1))
    return [draw(st.sampled_from(PHRASES[k])) for k in (0, *sorted(others))]


@settings(max_examples=300, deadline=None)
@given(valid_phrases(), st.randoms(use_true_random=False))
def test_phrase_order_does_not_matter(phrases: list[str], rng: random.Random) -> None:
    expected = parse_query(" ".join(phrases), CAT)
    shuffled = list(phrases)
    rng.shuffle(shuffled)
    assert parse_query(" ".join(shuffled), CAT) == expected
    assert parse_query(", ".join(shuffled).upper(), CAT) == expected


@settings(max_examples=100, deadline=None)
@given(valid_phrases())
def test_valid_phrases_parse_as_followups_too(phrases: list[str]) -> None:
    after = apply_followup(PREVIOUS, " ".join(phrases[1:]) or "napkin", CAT)
    assert after.model == PREVIOUS.model


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=400, max_size=500))
def test_long_input_is_quick(text: str) -> None:
    start = time.perf_counter()
    outcome(text)
    outcome(" ".join(["8b"] * 160))
    assert time.perf_counter() - start < 0.5
