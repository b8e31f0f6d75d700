"""Tensor parallelism (``tp``): each card of a group holds and computes 1/tp of every
layer; data-parallel sharding runs between the groups; the groups' collectives cost
time on the node's link."""

from __future__ import annotations

from dataclasses import replace

import pytest

from adapters.report import build_report
from engine import Request, estimate
from engine.choices import Method, Sharding, Solve
from engine.collectives import tp_comm_bytes
from engine.constants import TP_COLLECTIVES_PER_LAYER
from engine.fit import Sizer, resolve_stage
from engine.memory import COMPONENTS, tensor_parallel_share
from engine.profiles import resolve
from engine.specs import Catalog
from engine.throughput import step_time
from engine.workload import workload
from tests.helpers import H100_LIKE, catalog_with, resolved_footprint

CARD = H100_LIKE
FULL_70B = {"model": "llama-3.1-70b", "method": "full", "seq_len": 8192}


def test_every_component_but_the_overhead_is_split_over_the_group(catalog: Catalog) -> None:
    whole = resolved_footprint(catalog, **FULL_70B)
    split = resolved_footprint(catalog, **FULL_70B, tensor_parallel=8)
    for name in COMPONENTS:
        expected = getattr(whole, name) if name == "overhead" else getattr(whole, name) / 8
        assert getattr(split, name) == pytest.approx(expected), name
    assert split.gathered == pytest.approx(whole.gathered / 8)


def test_sharding_runs_over_the_groups_not_the_cards(catalog: Catalog) -> None:
    whole = resolved_footprint(catalog, **FULL_70B)
    split = resolved_footprint(catalog, **FULL_70B, tensor_parallel=4)
    on_16 = split.per_gpu(Sharding.FSDP, 16)
    assert on_16.total == pytest.approx(
        tensor_parallel_share(whole, 4).during_backward(Sharding.FSDP, 4).total
    )


def test_a_group_that_holds_the_run_needs_no_sharding() -> None:
    assert resolve_stage(Sharding.AUTO, 8, tensor_parallel=8) is Sharding.NONE
    assert resolve_stage(Sharding.AUTO, 16, tensor_parallel=8) is Sharding.ZERO3


def test_card_counts_are_whole_groups(catalog: Catalog) -> None:
    fp = resolved_footprint(catalog, **FULL_70B, tensor_parallel=8)
    sizer = Sizer(fp, Sharding.FSDP, offload=False)
    found = sizer.fewest(CARD)
    assert found is not None and found[0] % 8 == 0
    assert sizer.at_count(CARD, found[0] + 4) is None


def test_the_estimate_picks_whole_groups_when_no_count_is_named() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, dataset_tokens=10**8),
                   catalog_with(CARD))
    assert est.options and all(o.count % 8 == 0 for o in est.options)


def test_one_group_on_its_own_cards_is_unsharded() -> None:
    est = estimate(
        Request(model="llama-3.1-8b", method="lora", tensor_parallel=8, gpu="g80", gpu_count=8),
        catalog_with(CARD),
    )
    assert est.options[0].stage is Sharding.NONE


def test_each_card_computes_its_share_of_the_micro_batch(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    one = workload(arch, resolve(Request(model="llama-3.1-8b", method="full")))
    two = workload(arch, resolve(Request(model="llama-3.1-8b", method="full", tensor_parallel=2)))
    assert two.tokens == one.tokens
    assert two.matmul_flops == pytest.approx(one.matmul_flops / 2)
    assert two.attention_flops == pytest.approx(one.attention_flops / 2)
    assert two.stored_weight_bytes == pytest.approx(one.stored_weight_bytes / 2)


def test_tokens_per_second_are_per_card_of_the_group(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    request = resolve(Request(model="llama-3.1-8b", method="full", tensor_parallel=2))
    work = workload(arch, request)
    step = step_time(work, CARD, 2, Sharding.NONE, offload=False)
    assert step.tokens_per_step == pytest.approx(work.tokens / 2)


def test_the_group_collectives_lengthen_every_micro_batch(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    work = workload(arch, resolve(Request(model="llama-3.1-8b", method="full", tensor_parallel=8)))
    with_comm = step_time(work, CARD, 8, Sharding.NONE, offload=False)
    without = step_time(replace(work, tp_comm_bytes=0.0), CARD, 8, Sharding.NONE, offload=False)
    expected = work.tp_comm_bytes / (450e9)
    assert with_comm.step_s - without.step_s == pytest.approx(expected)


def test_collective_bytes_are_four_per_layer_per_pass(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    request = Request(model="llama-3.1-8b", method="full", tensor_parallel=4,
                      grad_checkpointing=False)
    tensor = 4096 * arch.hidden_size * 2
    expected = 2 * TP_COLLECTIVES_PER_LAYER * arch.num_layers * tensor * 3 / 4
    assert tp_comm_bytes(arch, request, 4096) == pytest.approx(expected)


def test_a_fully_recomputed_forward_repeats_its_collectives(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    on = Request(model="llama-3.1-8b", method="full", tensor_parallel=4)
    off = on.model_copy(update={"grad_checkpointing": False})
    assert tp_comm_bytes(arch, on, 1024) == pytest.approx(1.5 * tp_comm_bytes(arch, off, 1024))


def test_no_tensor_parallel_means_no_collectives(catalog: Catalog) -> None:
    arch = catalog.model("llama-3.1-8b").architecture
    assert tp_comm_bytes(arch, Request(model="llama-3.1-8b"), 4096) == 0.0


def test_a_degree_that_does_not_divide_the_heads_is_warned_about() -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", tensor_parallel=3,
                           gpu="g80", gpu_count=6), catalog_with(CARD))
    assert any("does not divide them" in w for w in est.warnings)


def test_a_degree_past_one_node_is_warned_about() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=16, gpu="g80", gpu_count=32),
                   catalog_with(CARD))
    assert any("spans nodes" in w for w in est.warnings)


def test_napkin_mode_says_tensor_parallel_changes_nothing() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, mode="napkin"), catalog_with(CARD))
    assert any("changes nothing" in w for w in est.warnings)
    plain = estimate(Request(**FULL_70B, mode="napkin"), catalog_with(CARD))
    assert est.options[0].per_gpu_gb == pytest.approx(plain.options[0].per_gpu_gb)


def test_the_assumptions_say_how_the_group_splits_the_model() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, gpu="g80", gpu_count=16),
                   catalog_with(CARD))
    assert any("Tensor parallel 8 with sequence parallelism" in a for a in est.assumptions)


def test_fewest_cards_question_steps_by_whole_groups(catalog: Catalog) -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, solve="gpu_count", gpu="g80"),
                   catalog_with(CARD))
    assert est.solution is not None
    found = est.solution.to_json()
    assert found["value"] % 8 == 0
    assert found["next_does_not_fit"] == found["value"] - 8


def test_lora_and_full_runs_both_split(catalog: Catalog) -> None:
    for method in (Method.LORA, Method.FULL):
        one = resolved_footprint(catalog, model="llama-3.1-8b", method=method)
        two = resolved_footprint(catalog, model="llama-3.1-8b", method=method, tensor_parallel=2)
        assert two.adapter == pytest.approx(one.adapter / 2)
        assert two.activations == pytest.approx(one.activations / 2)


def test_the_what_if_compares_qlora_without_tensor_parallel() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, gpu="g80", gpu_count=16),
                   catalog_with(CARD))
    row = next(w for w in est.what_if if w.label.startswith("QLoRA"))
    assert row.label == "QLoRA, no tp" and row.request.tensor_parallel == 1


def test_a_request_for_qlora_with_tensor_parallel_is_refused() -> None:
    with pytest.raises(ValueError, match="tensor parallelism over a 4-bit base"):
        Request(model="llama-3.1-8b", method="qlora", tensor_parallel=2)


def test_qlora_compared_with_a_tensor_parallel_run_drops_the_degree() -> None:
    base = Request(**FULL_70B, tensor_parallel=8)
    assert base.with_method(Method.QLORA).tensor_parallel == 1
    assert base.with_method(Method.LORA).tensor_parallel == 8


def test_a_limit_question_offers_qlora_without_tensor_parallel(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="lora", tensor_parallel=2,
                           gpu="h100-sxm", gpu_count=2, solve=Solve.SEQ_LEN), catalog)
    assert est.solution is not None
    qlora = [r for r in est.solution.raises if r.update.get("method") is Method.QLORA]
    assert [(r.change, r.update["tensor_parallel"]) for r in qlora] == [("QLoRA, no tp", 1)]


def test_the_band_says_no_published_run_used_tensor_parallel() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, gpu="g80", gpu_count=16),
                   catalog_with(CARD))
    assert est.uncertainty is not None
    assert "none of them used tensor parallelism" in est.uncertainty.basis


def test_the_headline_names_the_groups() -> None:
    est = estimate(Request(**FULL_70B, tensor_parallel=8, gpu="g80", gpu_count=16),
                   catalog_with(CARD))
    assert "16x G80 in 2 groups of tp 8" in build_report(est).headline


def test_tensor_parallel_past_a_one_card_machine_spans_nodes() -> None:
    solo = H100_LIKE.model_copy(update={"id": "g80-solo", "gpus_per_node": 1})
    est = estimate(Request(model="llama-3.1-8b", method="full", tensor_parallel=2,
                           gpu="g80-solo", gpu_count=2), catalog_with(solo))
    assert any("spans nodes (1 card each)" in w for w in est.warnings)


def test_tensor_parallel_past_the_named_nodes_cards_spans_nodes() -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", tensor_parallel=8,
                           gpu="g80", gpu_count=8, nodes=2), catalog_with(H100_LIKE))
    assert any("spans nodes (4 cards each)" in w for w in est.warnings)
