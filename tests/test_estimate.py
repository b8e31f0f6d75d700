"""The estimate as a whole: headline, what-ifs, warnings and the JSON document."""

from __future__ import annotations

import json
from typing import Any

import pytest

from catalog.loader import default_catalog
from engine import Request, estimate
from engine.choices import Framework
from engine.memory import COMPONENTS
from engine.ranking import cards, cards_of_memory
from engine.specs import Catalog, UnknownId, synthetic_model
from tests.helpers import catalog_with, gpu

JSON_KEYS = {
    "request",
    "model",
    "memory",
    "options",
    "priced",
    "fastest",
    "notes",
    "what_if",
    "compute",
    "warnings",
    "framework",
    "uncertainty",
}
OPTION_KEYS = {
    "gpu",
    "name",
    "count",
    "per_gpu_gb",
    "utilization",
    "fit",
    "sharding",
    "interconnect",
    "nodes",
    "billed_cards",
    "price_per_gpu_hour",
    "gpu_hours",
    "wall_hours",
    "cost_usd",
    "tokens_per_second_per_gpu",
    "mfu",
    "napkin_gpu_hours",
}
WHAT_IF_KEYS = {
    "fit",
    "sharding",
    "label",
    "current",
    "per_gpu_gb",
    "gpu",
    "count",
    "gpu_hours",
    "wall_hours",
    "cost_usd",
    "note",
}


@pytest.fixture
def doc(catalog: Catalog) -> dict:
    req = Request(model="llama-3.1-70b", method="qlora", dataset_tokens=50_000_000, gpu="h100-sxm")
    return json.loads(json.dumps(estimate(req, catalog).to_json()))


def test_json_has_exactly_the_documented_top_level_keys(doc: dict) -> None:
    assert set(doc) == JSON_KEYS


def test_json_model_block(doc: dict) -> None:
    assert set(doc["model"]) == {"id", "name", "params", "active_params", "synthetic"}
    assert doc["model"]["id"] == "llama-3.1-70b"


def test_json_memory_lists_the_seven_components(doc: dict) -> None:
    assert set(doc["memory"]) == {
        "per_gpu_gb",
        "total_gb",
        "components",
        "counter",
        "torch_reserved_gb",
    }
    assert list(doc["memory"]["components"]) == list(COMPONENTS)


def test_json_options_have_the_documented_keys_with_recommended_first(doc: dict) -> None:
    assert all(set(o) == OPTION_KEYS for o in doc["options"])
    assert doc["options"][0]["gpu"] == "h100-sxm"


def test_json_what_if_rows_have_the_documented_keys(doc: dict) -> None:
    assert all(set(w) == WHAT_IF_KEYS for w in doc["what_if"])


def test_json_request_lists_every_normalized_field(doc: dict) -> None:
    assert set(Request.model_fields) <= set(doc["request"])


def test_json_time_and_cost_are_null_without_tokens(catalog: Catalog) -> None:
    doc = estimate(Request(model="llama-3.1-8b"), catalog).to_json()
    assert all(o["gpu_hours"] is None and o["cost_usd"] is None for o in doc["options"])


def test_what_if_panel_has_three_methods_zero3_and_three_sequence_lengths(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", seq_len=4096), catalog)
    labels = [w.label for w in est.what_if]
    assert labels[:4] == ["Full", "LoRA", "QLoRA", "Full, pure BF16"]
    assert [w.request.seq_len for w in est.what_if[4:]] == [2048, 8192, 16384]


def test_what_if_shows_the_full_vs_qlora_gap(catalog: Catalog) -> None:
    rows = {w.label: w for w in estimate(Request(model="llama-3.1-70b"), catalog).what_if}
    assert rows["Full"].count > rows["QLoRA"].count


def test_no_method_means_lora_headline_and_says_so(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b"), catalog)
    assert est.to_json()["request"]["method"] == "lora"
    assert any("No method given" in n for n in est.notes)


def test_no_method_on_torchtitan_means_a_full_headline_and_says_why(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", framework="torchtitan"), catalog)
    assert est.to_json()["request"]["method"] == "full"
    assert any("headline uses a full fine-tune, as torchtitan's recipes" in n for n in est.notes)


def test_fewest_cards_that_leave_a_node_part_used_are_rounded_to_whole_nodes() -> None:
    request = Request(model="llama-3.1-70b", method="full", dataset_tokens=50_000_000,
                      gpu="h100-sxm")
    est = estimate(request, default_catalog())

    assert est.options[0].count == 24  # 19 hold it; clouds rent 3 nodes of 8
    assert est.options[0].timing.billed_cards is None
    assert not [n for n in est.notes if "idle" in n]


def test_a_named_count_that_leaves_a_node_part_used_costs_the_whole_nodes() -> None:
    request = Request(model="llama-3.1-70b", method="full", dataset_tokens=50_000_000,
                      gpu="h100-sxm", gpu_count=19)
    est = estimate(request, default_catalog())
    o = est.options[0]
    t = o.timing
    assert t.billed_cards == 24 and t.cost_usd is not None and t.wall_hours is not None
    assert t.cost_usd == pytest.approx(t.wall_hours * 24 * o.gpu.price_per_gpu_hour)
    (note,) = [n for n in est.notes if "nodes of 8" in n]
    assert note.startswith("19 cards span 3 nodes of 8")
    assert "pays for 24 cards (5 idle)" in note and "`24x h100-sxm`" in note


def test_a_price_the_user_gives_pays_for_the_cards_used_only() -> None:
    request = Request(model="llama-3.1-70b", method="full", dataset_tokens=50_000_000,
                      gpu="h100-sxm", price_per_gpu_hour=2.0)
    est = estimate(request, default_catalog())
    t = est.options[0].timing
    assert t.billed_cards is None and t.cost_usd == pytest.approx(t.gpu_hours * 2.0)
    assert not [n for n in est.notes if "nodes of" in n]


def test_a_count_named_for_no_card_is_offered_only_on_cards_rented_that_many() -> None:
    request = Request(model="llama-3.1-8b", method="lora", gpu_count=16)
    est = estimate(request, default_catalog())

    offered = {o.gpu.id for o in est.options}
    assert offered and not offered & {"rtx-4090", "rtx-5090", "rtx-3090"}
    assert all(o.count == 16 for o in est.options)


def test_a_count_named_on_a_named_card_is_sized_as_asked() -> None:
    request = Request(model="llama-3.1-8b", method="lora", gpu="rtx-4090", gpu_count=16)
    est = estimate(request, default_catalog())

    assert (est.options[0].gpu.id, est.options[0].count) == ("rtx-4090", 16)


def test_bare_size_note_names_the_canonical_model(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b"), catalog)
    assert any("Llama 3.1 70B" in n and "70b" in n for n in est.notes)


def test_synthetic_model_is_flagged(catalog: Catalog) -> None:
    est = estimate(Request(model="synthetic-20b"), catalog)
    assert est.model.synthetic and est.to_json()["model"]["synthetic"] is True
    assert est.model.params == pytest.approx(20e9, rel=0.02)
    assert any("synthetic" in n for n in est.notes)


def test_napkin_estimates_carry_the_40_percent_caveat(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", mode="napkin")
    assert any("±40%" in w for w in estimate(request, catalog).warnings)


def test_detailed_estimates_carry_the_cross_validated_band(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="qlora"), catalog)
    band = est.uncertainty
    assert band is not None and band.runs > 0
    assert any(f"memory ±{band.memory:.0%}" in w and "measured runs" in w for w in est.warnings)
    assert est.to_json()["uncertainty"]["memory"] == round(band.memory, 3)


def test_warns_when_checkpointing_is_off_at_8k(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", seq_len=8192, grad_checkpointing=False), catalog)
    assert any("checkpointing is off" in w for w in est.warnings)


def test_warns_about_amd_cards() -> None:
    cat = catalog_with(gpu("mi", 192, vendor="AMD", fabric="infinity-fabric"))
    est = estimate(Request(model="llama-3.1-8b"), cat)
    assert any("not recommended for training" in w for w in est.warnings)


def test_warns_when_communication_dominates_several_cards() -> None:
    cat = catalog_with(gpu("g24", 24, fabric="pcie", p2p=False, link_gbps=16.0))
    request = Request(model="llama-3.1-70b", method="full", dataset_tokens=10**7)
    est = estimate(request, cat)
    assert any("waits on communication" in w for w in est.warnings)


def test_warns_about_micro_batch_1_on_a_tiny_dataset(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", dataset_tokens=100_000, epochs=1, mfu=0.35)
    est = estimate(request, catalog)
    assert any("Micro-batch 1" in w for w in est.warnings)


def test_warns_about_cards_without_bf16_or_flash_attention() -> None:
    cat = catalog_with(
        gpu("v100", 32, bf16=False, bf16_tflops=None, fp16_tflops=125.0, flash_attention_2="no")
    )
    warnings = estimate(Request(model="llama-3.1-8b", method="qlora"), cat).warnings
    assert any("no BF16" in w for w in warnings)
    assert any("no FlashAttention 2" in w for w in warnings)


def test_warns_that_every_expert_is_held_and_expert_parallelism_is_not_modeled(
    catalog: Catalog,
) -> None:
    [said] = [w for w in estimate(Request(model="mixtral-8x7b", method="lora"),
                                  catalog).warnings if w.startswith("MoE model")]
    assert "all 8 experts" in said and "frozen under the adapters" in said
    assert "expert parallelism" in said and "the 2 experts each token is routed to" in said


def test_assumptions_show_tokens_times_epochs(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=50_000_000), catalog)
    assert any("50M tokens x 3 epochs = 150M trained tokens" in a for a in est.assumptions)


def test_large_logits_warning_names_hf_loss_and_fused_ce(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", seq_len=8192), catalog)
    [warning] = [w for w in est.warnings if w.startswith("The logits take")]
    assert "4.2 GB" in warning and "`hf`" in warning and "`fused-ce`" in warning


def test_no_logits_warning_once_the_loss_path_is_named(catalog) -> None:
    for named in ({"hf_loss": True}, {"fused_ce": True}):
        request = Request(model="llama-3.1-8b", method="lora", seq_len=8192, **named)
        assert not any(w.startswith("The logits take") for w in estimate(request, catalog).warnings)


def test_warns_that_fsdp_accumulation_keeps_whole_gradients(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", method="full", sharding="fsdp", gpu="h100-sxm",
                      gpu_count=4, grad_accum=4)
    [warning] = [w for w in estimate(request, catalog).warnings if "no_sync()" in w]
    assert "4 micro-batches" in warning and "16.1 GB" in warning


def test_no_accumulation_warning_without_fsdp(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", method="full", sharding="zero3", gpu="h100-sxm",
                      gpu_count=4, grad_accum=4)
    assert not any("no_sync()" in w for w in estimate(request, catalog).warnings)


def test_assumptions_show_accumulation_and_lora_dropout(catalog: Catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", grad_accum=8, lora_dropout=0.05)
    [memory] = [a for a in estimate(request, catalog).assumptions if a.startswith("Memory:")]
    assert "x 8 accumulation steps" in memory and "dropout 0.05" in memory


def test_every_what_if_row_uses_the_picks_card(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", dataset_tokens=20_000_000),
                   catalog)
    pick = est.options[0].gpu.id
    assert all(w.gpu is not None and w.gpu.id == pick for w in est.what_if if w.note is None)


def test_a_what_if_no_count_of_the_pick_holds_names_the_smallest_card_that_does() -> None:
    small = gpu("small", 24, price_per_gpu_hour=0.2)
    big = gpu("big", 300, price_per_gpu_hour=9.0)
    cat = catalog_with(small, big)
    est = estimate(Request(model="llama-3.1-8b", method="qlora", gpu="small",
                           sharding="none", dataset_tokens=10**7), cat)
    full = next(w for w in est.what_if if w.label == "Full")
    assert full.note is not None and "no count of small holds it" in full.note
    assert full.gpu is not None and full.gpu.id == "big"


def test_no_two_what_if_rows_say_the_same_thing(catalog: Catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="qlora", dataset_tokens=10**7),
                   catalog)
    rows = [(w.per_gpu_gb, w.count, w.gpu and w.gpu.id, w.gpu_hours) for w in est.what_if]
    assert len(set(rows)) == len(rows)


def _zero3_warnings(**fields: Any) -> list[str]:
    """Warnings about ZeRO-3 for a full fine-tune on ``zero3`` on a test card."""
    cat = catalog_with(gpu("g80", 80, matmul_tflops=800.0, hbm_gbps=3000.0))
    base = {"model": "qwen2.5-0.5b", "method": "full", "seq_len": 256, "micro_batch": 1,
            "gpu": "g80", "gpu_count": 1, "sharding": "zero3", "dataset_tokens": 10**7}
    est = estimate(Request(**{**base, **fields}), cat)
    return [w for w in est.warnings if "ZeRO-3" in w]


def test_warns_when_deepspeed_zero3_hooks_set_the_pace_of_a_small_model() -> None:
    warned = _zero3_warnings(framework="hf")
    assert any("ZeRO-3's per-parameter hooks" in w for w in warned)


def test_no_zero3_hooks_warning_for_fsdp_frameworks() -> None:
    assert _zero3_warnings(framework="torchtune") == []


def test_no_zero3_hooks_warning_when_long_sequences_hide_them() -> None:
    long = _zero3_warnings(
        framework="hf", model="llama-3.1-8b", seq_len=8192, micro_batch=2, gpu_count=8,
        dataset_tokens=10**8,
    )
    assert not any("ZeRO-3's per-parameter hooks" in w for w in long)


def test_every_catalog_model_estimates_under_every_framework_and_method(catalog: Catalog) -> None:
    """One process, every model in turn: the engine's per-architecture caches see models
    that share an architecture, under every profile (litgpt unties heads)."""
    for model in sorted(catalog.models):
        for framework in Framework:
            for method in ("full", "lora", "qlora"):
                request = Request(model=model, method=method, framework=framework,
                                  dataset_tokens=10**7)
                assert estimate(request, catalog).memory.total > 0


def test_a_sequence_past_a_learned_position_table_is_warned(catalog: Catalog) -> None:
    warned = estimate(Request(model="gpt2", method="full", seq_len=2048), catalog).warnings
    assert any("learned position table has 1,024 rows" in w for w in warned)


def test_a_sequence_within_a_learned_position_table_is_not_warned(catalog: Catalog) -> None:
    quiet = estimate(Request(model="gpt2", method="full", seq_len=1024), catalog).warnings
    assert not any("learned position table" in w for w in quiet)


# --- the what-if panel agrees with the headline ------------------------------------

TIGHT = {"model": "llama-3.1-70b", "method": "full", "framework": "torchtune",
         "dataset_tokens": 50_000_000, "gpu": "h100-sxm", "gpu_count": 8}


def test_the_requests_own_what_if_row_is_the_headline_even_when_tight(catalog) -> None:
    est = estimate(Request(**TIGHT), catalog)
    [own] = [w for w in est.what_if if w.current]
    head = est.options[0]
    assert head.band == "tight"
    assert (own.count, own.per_gpu_gb, own.gpu_hours) == (
        head.count, head.per_gpu_gb, head.timing.gpu_hours
    )


def test_a_named_count_keeps_what_if_rows_it_holds_up_to_the_whole_card(catalog) -> None:
    est = estimate(Request(**TIGHT), catalog)
    longer = next(w for w in est.what_if if w.label.startswith("2× seq"))
    assert longer.count == 8 and longer.per_gpu_gb > 0.85 * 85.9
    assert longer.gpu_hours is not None


def test_json_marks_the_requests_own_what_if_row(doc: dict) -> None:
    assert [w["label"] for w in doc["what_if"] if w["current"]] == ["QLoRA"]


def test_napkin_what_if_compares_the_methods_only(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", mode="napkin"), catalog)
    assert [w.label for w in est.what_if] == ["Full", "LoRA", "QLoRA"]


# --- warnings say what the model says -----------------------------------------------

def test_launch_bound_steps_are_not_blamed_on_the_link(catalog) -> None:
    request = Request(model="qwen2.5-0.5b", method="lora", dataset_tokens=50_000_000,
                      gpu="h100-sxm", gpu_count=8, sharding="zero2")
    est = estimate(request, catalog)
    assert est.options[0].timing.comm_overhead < 0.05
    assert not any("waits on communication" in w for w in est.warnings)


def test_the_communication_share_holds_without_a_dataset(catalog) -> None:
    run = {"model": "llama-2-7b", "method": "lora", "seq_len": 512, "micro_batch": 2,
           "grad_checkpointing": False, "gpu": "rtx-4090", "gpu_count": 2, "sharding": "fsdp"}
    timed = estimate(Request(**run, dataset_tokens=10**7), catalog).options[0].timing
    untimed = estimate(Request(**run), catalog).options[0].timing
    assert untimed.gpu_hours is None
    assert untimed.comm_overhead == pytest.approx(timed.comm_overhead)


def test_no_logits_warning_where_the_frameworks_loss_keeps_none(catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", seq_len=16384, framework="unsloth")
    assert not any("logits" in w for w in estimate(request, catalog).warnings)


def test_the_logits_warning_counts_one_cards_ring_share(catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", seq_len=32768, context_parallel=4,
                      gpu="h100-sxm", gpu_count=4)
    [warning] = [w for w in estimate(request, catalog).warnings if "logits take" in w]
    assert "4.2 GB" in warning  # 8,192 tokens x 128,256 x 4 B, not the whole sequence's


def test_cards_held_up_by_one_sequences_activations_are_told_about_cp(catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", seq_len=131072,
                      dataset_tokens=10**7, gpu="h200-sxm")
    est = estimate(request, catalog)
    assert est.options[0].count > 1
    assert any("Context parallelism (`cp 2`" in w for w in est.warnings)


def test_no_cp_tip_once_the_sequence_is_split(catalog) -> None:
    request = Request(model="llama-3.1-8b", method="lora", seq_len=131072, context_parallel=4,
                      gpu="h200-sxm", gpu_count=4, dataset_tokens=10**7)
    assert not any("Context parallelism (`cp 2`" in w for w in estimate(request, catalog).warnings)


def test_a_card_named_by_its_memory_is_chosen_among_cards_of_that_memory() -> None:
    est = estimate(
        Request(model="llama-3.1-70b", method="qlora", gpu_memory_gb=24, dataset_tokens=10**7),
        default_catalog(),
    )
    assert est.options
    assert {round(o.gpu.memory_gb) for o in est.options} == {24}


def test_cards_of_a_memory_no_card_has_are_the_smaller_ones() -> None:
    table = cards(list(default_catalog().gpus.values()))
    chosen = cards_of_memory(table, 20.5)
    assert chosen and all(c.gpu.memory_gb < 20.5 for c in chosen)
    assert cards_of_memory(table, None) is table


def test_a_count_no_card_holds_names_the_card_shown_at_that_count() -> None:
    est = estimate(
        Request(model="llama-3.1-70b", method="qlora", gpu_memory_gb=24, gpu_count=2,
                dataset_tokens=10**7),
        default_catalog(),
    )
    lead = est.options[0]
    assert lead.count != 2
    assert any(f"`2x {lead.gpu.id}`" in w for w in est.warnings)


def _named(count: int, seq: int) -> Any:
    est = estimate(
        Request(model="llama-3.1-70b", method="qlora", gpu="rtx-3090", gpu_count=count,
                sharding="fsdp", framework="hf", seq_len=seq, dataset_tokens=10**7),
        default_catalog(),
    )
    return est, est.options[0]


def test_a_named_count_over_the_card_by_less_than_the_memory_band_is_timed() -> None:
    est, named = _named(3, 2048)  # about 105% of a 3090: QLoRA's band is 18%
    assert not named.runs and named.timing.tokens_per_second is not None
    assert any("may still start" in w for w in est.warnings)


def test_a_named_count_far_over_the_card_is_not_timed() -> None:
    _, named = _named(2, 16384)
    assert not named.runs and named.timing.tokens_per_second is None


@pytest.mark.parametrize("billions", [0.1, 0.3, 0.5, 1.0, 3.0, 20.0, 405.0])
def test_a_synthetic_model_has_the_parameters_its_name_says(billions: float) -> None:
    params = synthetic_model(billions).architecture.total_params
    assert params == pytest.approx(billions * 1e9, rel=0.05)


def test_small_synthetic_models_tie_the_head_as_llama_3_2_does() -> None:
    assert synthetic_model(1.0).architecture.tie_embeddings
    assert not synthetic_model(8.0).architecture.tie_embeddings


@pytest.mark.parametrize("model_id", ["synthetic-0b", "synthetic-0.01b", "synthetic-5000b"])
def test_a_synthetic_id_out_of_bounds_is_an_unknown_model(catalog: Catalog, model_id: str
                                                          ) -> None:  # fmt: skip
    with pytest.raises(KeyError):
        catalog.model(model_id)


def test_an_unknown_card_or_model_is_an_unknown_id_naming_it(catalog: Catalog) -> None:
    with pytest.raises(UnknownId, match="card no-such-card"):
        catalog.gpu("no-such-card")
    with pytest.raises(UnknownId, match="model no-such-model"):
        catalog.model("no-such-model")


def test_a_run_of_a_handful_of_huge_steps_is_warned() -> None:
    request = Request(model="llama-3.1-8b", method="lora", dataset_tokens=50_000_000,
                      gpu="h100-sxm", gpu_count=10_000)
    est = estimate(request, default_catalog())

    (warning,) = [w for w in est.warnings if "optimizer step" in w]
    assert "20,480,000 tokens an optimizer step" in warning and "only 7 steps" in warning


def test_a_usual_run_gets_no_step_warning() -> None:
    request = Request(model="llama-3.1-70b", method="qlora", dataset_tokens=50_000_000,
                      gpu="h100-sxm")
    est = estimate(request, default_catalog())

    assert not [w for w in est.warnings if "optimizer step" in w]


def test_a_what_if_row_held_above_the_planning_line_is_marked_tight(catalog: Catalog) -> None:
    request = Request(model="qwen2.5-72b", method="qlora", gpu="h100-sxm", gpu_count=2)

    rows = {w.label: w for w in estimate(request, catalog).what_if}

    assert rows["LoRA"].count == 2 and rows["LoRA"].fit == "tight"
    assert rows["QLoRA"].fit != "tight"


def test_a_closest_plan_just_past_a_deadline_shows_that_it_is_past() -> None:
    from adapters.parse import parse_query
    from adapters.report import build_report

    report = build_report(estimate(parse_query("70b full 1B tokens in 1 hour")))

    line = next(w for w in report.warnings if w.startswith("No option stays within 1.0 h"))
    closest = line.split("Closest: ", 1)[1].split(";", 1)[0]
    assert not closest.endswith(", 1.0 h")


def test_a_stand_in_checkpoint_is_named_in_a_note(catalog: Catalog) -> None:
    from adapters.parse import parse_query

    est = estimate(parse_query("llama 3 8b lora", catalog), catalog)

    assert any(n.startswith("That name is counted as Llama 3.1 8B, a checkpoint of the same "
                            "architecture") for n in est.notes)


def test_what_if_rows_that_miss_a_deadline_say_so() -> None:
    from adapters.parse import parse_query
    from adapters.report import build_report

    report = build_report(estimate(parse_query("8b lora 1B tokens in 24 hours")))

    rows = {r[0].strip(" »"): r[2] for r in report.what_if.rows}
    assert rows["QLoRA"].endswith("(past 24.0 h)")
    assert "past" not in rows["LoRA"]


def test_a_named_count_past_the_planning_line_even_at_the_low_end_may_not_start() -> None:
    from adapters.parse import parse_query

    est = estimate(parse_query("qwen 72b lora 2x h100"))

    tight = next(w for w in est.warnings if w.startswith("Tight: 99.5%"))
    assert "It may well not start: the estimate's own memory band is" in tight


def test_json_priced_points_at_the_plan_the_headline_times_when_the_named_count_is_too_small(
    catalog: Catalog,
) -> None:
    from adapters.parse import parse_query

    doc = estimate(parse_query("70b full 50M tokens 8x h100", catalog), catalog).to_json()

    assert doc["options"][0]["fit"] == "does not fit"
    priced = doc["options"][doc["priced"]]
    assert priced["gpu"] == "h100-sxm" and priced["fit"] != "does not fit"


def test_json_priced_is_the_headline_when_it_holds_the_run(catalog: Catalog) -> None:
    doc = estimate(Request(model="llama-3.1-8b", dataset_tokens=10_000_000), catalog).to_json()

    assert doc["priced"] == 0


def test_each_option_and_what_if_row_says_how_its_cards_share_the_state(catalog) -> None:
    doc = estimate(Request(model="llama-3.1-70b", method="qlora", gpu="h100-sxm",
                           dataset_tokens=50_000_000), catalog).to_json()
    assert doc["options"][0]["sharding"] == "unsharded"
    full = next(w for w in doc["what_if"] if w["label"] == "Full")
    assert full["count"] > 1 and full["sharding"] == "ZeRO-3"



def test_napkin_plans_are_an_even_split_not_ddp(catalog) -> None:
    doc = estimate(Request(model="llama-3.1-8b", method="full", mode="napkin",
                           framework="torchtune", gpu="h100-sxm", gpu_count=8,
                           dataset_tokens=50_000_000), catalog).to_json()
    assert doc["options"][0]["sharding"] == "even split"
    assert all(w["sharding"] in ("even split", "unsharded", None) for w in doc["what_if"])
