"""Custom ids of the estimate's components: ≤ 100 characters, round trips, fall-backs."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord import ids
from adapters.parse import parse_query
from catalog.loader import default_catalog
from engine import Method, Request
from engine.choices import (
    LoraTargets,
    Mode,
    ModelPick,
    Optimizer,
    Precision,
    Sharding,
    Solve,
    StatePrecision,
)
from engine.constants import (
    MAX_BUDGET_USD,
    MAX_DATASET_TOKENS,
    MAX_DEADLINE_HOURS,
    MAX_EPOCHS,
    MAX_GPU_COUNT,
    MAX_GPU_MEMORY_GB,
    MAX_GRAD_ACCUM,
    MAX_LORA_DROPOUT,
    MAX_LORA_RANK,
    MAX_MFU,
    MAX_MICRO_BATCH,
    MAX_NODES,
    MAX_PRICE_PER_GPU_HOUR,
    MAX_SAMPLES,
    MAX_SEQ_LEN,
    MIN_BUDGET_USD,
    MIN_DEADLINE_HOURS,
    MIN_EPOCHS,
    MIN_GPU_MEMORY_GB,
    MIN_MFU,
    MIN_PRICE_PER_GPU_HOUR,
)

CATALOG = default_catalog()
LONGEST_MODEL = max(CATALOG.models, key=len)
LONGEST_GPU = max(CATALOG.gpus, key=len)

LARGEST = Request(
    model=LONGEST_MODEL,
    method=Method.QLORA,
    precision=Precision.FP32,
    lora_rank=MAX_LORA_RANK - 1,
    lora_targets=LoraTargets.QV,
    lora_dropout=0.123456789,
    optimizer=Optimizer.ADAMW_8BIT,
    state_precision=StatePrecision.PURE_BF16,
    offload=True,
    seq_len=MAX_SEQ_LEN - 1,
    micro_batch=MAX_MICRO_BATCH - 1,
    grad_accum=MAX_GRAD_ACCUM - 1,
    grad_checkpointing=False,
    flash_attention=False,
    fused_ce=True,
    hf_loss=True,
    double_quant=False,
    sharding=Sharding.ZERO2,
    gpu=LONGEST_GPU,
    gpu_count=MAX_GPU_COUNT - 1,
    dataset_tokens=MAX_DATASET_TOKENS - 1,
    epochs=MAX_EPOCHS - 0.123456789,
    mfu=0.123456789,
    price_per_gpu_hour=MAX_PRICE_PER_GPU_HOUR - 0.0123456789,
    mode=Mode.NAPKIN,
)


def all_ids(code: str | None) -> list[str]:
    return [
        *(ids.method_id(m, code) for m in Method),
        ids.seq_id(code),
        ids.gpu_select_id(code),
    ]


def test_a_typical_request_rides_in_the_custom_id() -> None:
    request = parse_query("70b qlora 50M tokens h100")
    code = ids.request_code(request)
    assert code == "mllama-3.1-70b,M2,gh100-sxm,T5e7"
    custom = ids.method_id(Method.FULL, code)
    assert custom == "ftc:m:full:mllama-3.1-70b,M2,gh100-sxm,T5e7"
    action = ids.parse_custom_id(custom)
    assert action == ids.Action("method", "full", request)


def test_the_largest_request_falls_back_to_the_store_within_100_chars() -> None:
    code = ids.encode_request(LARGEST)
    assert code is not None and len(code) > 100
    assert ids.decode_request(code) == LARGEST  # the code itself is exact
    assert ids.request_code(LARGEST) is None  # but does not fit: the store keeps it
    for custom in all_ids(ids.request_code(LARGEST)):
        assert len(custom) <= 100
        action = ids.parse_custom_id(custom)
        assert action is not None and action.request is None


def test_every_id_matches_exactly_one_template() -> None:
    code = ids.request_code(parse_query("8b lora 20M tokens"))
    templates = [ids.METHOD_TEMPLATE, ids.SEQ_TEMPLATE, ids.GPU_TEMPLATE]
    for custom in [*all_ids(code), *all_ids(None)]:
        assert sum(bool(re.fullmatch(t, custom)) for t in templates) == 1, custom


def test_foreign_and_malformed_ids() -> None:
    assert ids.parse_custom_id("ftcost:refresh") is None
    assert ids.parse_custom_id("ftc:m:sgd") is None
    for bad in ("zzz", "m", "mllama-3.1-8b,M9", "mllama-3.1-8b,q0", "mllama-3.1-8b,mllama",
                "M1", "mllama-3.1-8b,T5e", "mllama-3.1-8b,c2", "mllama-3.1-8b,e-1"):
        action = ids.parse_custom_id(f"ftc:s2:{bad}")
        assert action is not None and action.request is None, bad  # falls back to the store
    assert ids.decode_request(None) is None
    assert ids.decode_request("") is None


def test_every_request_field_has_a_key_in_the_code() -> None:
    assert set(ids._FIELD_KEYS) == set(Request.model_fields)
    assert len(set(ids._FIELD_KEYS.values())) == len(ids._FIELD_KEYS)


def test_numbers_are_written_compactly_and_exactly() -> None:
    assert ids._int_code(50_000_000) == "5e7"
    assert ids._int_code(123_456_789) == "123456789"
    assert ids._int_code(100) == "100"
    assert ids._int_decode("15e11") == 1_500_000_000_000
    request = Request(model="synthetic-20.5b", dataset_tokens=10**15, epochs=0.1, mfu=0.3333)
    assert ids.decode_request(ids.encode_request(request)) == request


REQUESTS = st.builds(
    Request,
    model=st.sampled_from(sorted(CATALOG.models)),
    method=st.sampled_from([None, *Method]),
    precision=st.sampled_from(list(Precision)),
    lora_rank=st.integers(1, MAX_LORA_RANK),
    lora_targets=st.sampled_from(list(LoraTargets)),
    lora_dropout=st.floats(0.0, MAX_LORA_DROPOUT),
    optimizer=st.sampled_from(list(Optimizer)),
    offload=st.booleans(),
    seq_len=st.integers(1, MAX_SEQ_LEN),
    micro_batch=st.integers(1, MAX_MICRO_BATCH),
    grad_accum=st.integers(1, MAX_GRAD_ACCUM),
    grad_checkpointing=st.booleans(),
    hf_loss=st.booleans(),
    sharding=st.sampled_from(list(Sharding)),
    gpu=st.sampled_from([None, *sorted(CATALOG.gpus)]),
    gpu_count=st.none() | st.integers(1, MAX_GPU_COUNT),
    dataset_tokens=st.none() | st.integers(1, MAX_DATASET_TOKENS),
    epochs=st.floats(MIN_EPOCHS, MAX_EPOCHS),
    mfu=st.floats(MIN_MFU, MAX_MFU),
    price_per_gpu_hour=st.none() | st.floats(MIN_PRICE_PER_GPU_HOUR, MAX_PRICE_PER_GPU_HOUR),
    nodes=st.none() | st.integers(1, MAX_NODES),
    spot=st.booleans(),
    budget_usd=st.none() | st.floats(MIN_BUDGET_USD, MAX_BUDGET_USD),
    deadline_hours=st.none() | st.floats(MIN_DEADLINE_HOURS, MAX_DEADLINE_HOURS),
    samples=st.none() | st.integers(1, MAX_SAMPLES),
    sample_tokens=st.none() | st.integers(1, MAX_SEQ_LEN),
    packing=st.booleans(),
    max_len=st.none() | st.integers(1, MAX_SEQ_LEN),
    solve=st.none() | st.sampled_from(list(Solve)),
    gpu_memory_gb=st.none() | st.floats(MIN_GPU_MEMORY_GB, MAX_GPU_MEMORY_GB),
    model_pick=st.none() | st.sampled_from(list(ModelPick)),
    mode=st.sampled_from(list(Mode)),
)


@settings(max_examples=150, deadline=None)
@given(REQUESTS)
def test_any_request_round_trips_or_falls_back(request: Request) -> None:
    code = ids.encode_request(request)
    assert code is not None and ids.decode_request(code) == request
    fitting = ids.request_code(request)
    for custom in all_ids(fitting):
        assert len(custom) <= 100
        action = ids.parse_custom_id(custom)
        assert action is not None
        assert action.request == (request if fitting is not None else None)
