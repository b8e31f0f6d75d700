"""Property tests: memory and time move the right way as the run grows or is sharded."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from catalog.loader import default_catalog
from engine import Request
from engine.choices import Sharding
from engine.estimate import resolve
from engine.fit import Sizer
from engine.memory import footprint
from engine.throughput import step_time
from engine.workload import workload

CATALOG = default_catalog()
MODELS = st.sampled_from(sorted(CATALOG.models))
METHODS = st.sampled_from(["full", "lora", "qlora"])
BOOLS = st.booleans()


def per_gpu(stage: Sharding = Sharding.NONE, count: int = 1, **fields: object) -> float:
    request = Request(**fields)
    arch = CATALOG.model(request.model).architecture
    return footprint(arch, request).per_gpu(stage, count, request.offload).total


@settings(max_examples=60, deadline=None)
@given(MODELS, METHODS, st.integers(1, 64 * 1024), BOOLS, BOOLS)
def test_memory_grows_with_sequence_length(model, method, seq, ckpt, flash) -> None:
    kw = dict(model=model, method=method, grad_checkpointing=ckpt, flash_attention=flash)
    assert per_gpu(seq_len=seq * 2, **kw) > per_gpu(seq_len=seq, **kw)


@settings(max_examples=60, deadline=None)
@given(MODELS, METHODS, st.integers(1, 256))
def test_memory_grows_with_micro_batch(model, method, batch) -> None:
    assert per_gpu(model=model, method=method, micro_batch=batch + 1) > per_gpu(
        model=model, method=method, micro_batch=batch
    )


@settings(max_examples=60, deadline=None)
@given(MODELS, st.sampled_from(["lora", "qlora"]), st.integers(1, 2048))
def test_memory_grows_with_lora_rank(model, method, rank) -> None:
    assert per_gpu(model=model, method=method, lora_rank=rank + 1) > per_gpu(
        model=model, method=method, lora_rank=rank
    )


@settings(max_examples=60, deadline=None)
@given(MODELS, METHODS, st.integers(2, 512))
def test_memory_falls_as_zero3_spreads_over_more_cards(model, method, n) -> None:
    kw = dict(model=model, method=method)
    assert per_gpu(Sharding.ZERO3, n + 1, **kw) < per_gpu(Sharding.ZERO3, n, **kw)


@settings(max_examples=40, deadline=None)
@given(MODELS, METHODS, st.integers(2, 512))
def test_memory_never_grows_with_cards_under_zero3_offload(model, method, n) -> None:
    kw = dict(model=model, method=method, offload=True)
    assert per_gpu(Sharding.ZERO3, n + 1, **kw) <= per_gpu(Sharding.ZERO3, n, **kw)


@settings(max_examples=60, deadline=None)
@given(MODELS, st.sampled_from(["lora", "qlora"]), BOOLS, st.floats(0.01, 0.9))
def test_lora_dropout_only_ever_adds_memory(model, method, ckpt, dropout) -> None:
    kw = dict(model=model, method=method, grad_checkpointing=ckpt)
    assert per_gpu(lora_dropout=dropout, **kw) > per_gpu(**kw)


@settings(max_examples=60, deadline=None)
@given(MODELS, METHODS, st.integers(2, 512), st.integers(2, 64))
def test_fsdp_accumulation_never_saves_memory_and_never_grows_with_cards(
    model, method, n, accum
) -> None:
    kw = dict(model=model, method=method, sharding="fsdp")
    assert per_gpu(Sharding.FSDP, n, grad_accum=accum, **kw) >= per_gpu(Sharding.FSDP, n, **kw)
    assert per_gpu(Sharding.FSDP, n + 1, grad_accum=accum, **kw) <= per_gpu(
        Sharding.FSDP, n, grad_accum=accum, **kw
    )


@settings(max_examples=60, deadline=None)
@given(
    MODELS, METHODS, st.sampled_from(["hf", "litgpt", "generic"]),
    st.sampled_from([Sharding.FSDP, Sharding.ZERO3, Sharding.ZERO1]), st.integers(2, 64),
    st.integers(64, 8192),
)
def test_card_sizing_agrees_with_per_gpu_memory_at_every_count(
    model, method, framework, stage, n, seq
) -> None:
    """The sizer's lines (backward pass, optimizer step) give the same per-GPU figure as
    the footprint itself, so the count it picks is the one the reply's breakdown shows."""
    request = Request(model=model, method=method, framework=framework, seq_len=seq,
                      sharding=stage)
    fp = footprint(CATALOG.model(model).architecture, request)
    sizer = Sizer(fp, stage, False)
    assert sizer._per_gpu(n, sizer.node_cards) == pytest.approx(
        fp.per_gpu(stage, n).total, rel=1e-9
    )


@settings(max_examples=40, deadline=None)
@given(
    MODELS, st.sampled_from(["full", "lora"]), st.sampled_from([2, 4, 8]),
    st.sampled_from([Sharding.FSDP, Sharding.ZERO3, Sharding.ZERO1]), st.integers(1, 16),
)
def test_card_sizing_agrees_with_per_gpu_memory_under_tensor_parallel(
    model, method, degree, stage, groups
) -> None:
    """Under ``tp`` the sizer counts whole groups and agrees with the footprint at each."""
    request = Request(model=model, method=method, sharding=stage, tensor_parallel=degree)
    fp = footprint(CATALOG.model(model).architecture, request)
    sizer = Sizer(fp, stage, False)
    cap = 1e9  # every count holds the run: the figure is what is compared
    found = sizer.at_count_for(cap, groups * degree)
    assert found is not None
    assert found[2] == pytest.approx(fp.per_gpu(found[1], groups * degree).total, rel=1e-9)
    assert sizer.at_count_for(cap, groups * degree + 1) is None


FRAMEWORKS = st.sampled_from(["generic", "hf", "unsloth", "torchtune", "litgpt", "torchtitan"])


def tokens_per_second(**fields: object) -> float:
    request = resolve(Request(**fields))
    work = workload(CATALOG.model(request.model).architecture, request)
    return step_time(work, CATALOG.gpu("h100-sxm"), 1, Sharding.NONE, False).tokens_per_second


@settings(max_examples=60, deadline=None)
@given(MODELS, METHODS, FRAMEWORKS, st.sampled_from([256, 1024, 4096]), st.integers(1, 64),
       BOOLS)
def test_a_bigger_micro_batch_never_trains_slower_per_token(
    model, method, framework, seq, batch, ckpt
) -> None:
    if method == "qlora" and framework == "torchtitan":
        return  # no QLoRA recipe
    kw = dict(model=model, method=method, framework=framework, seq_len=seq,
              grad_checkpointing=ckpt)
    assert tokens_per_second(micro_batch=2 * batch, **kw) >= (
        0.99 * tokens_per_second(micro_batch=batch, **kw)
    )
