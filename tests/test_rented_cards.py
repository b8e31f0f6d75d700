"""What a plan's cards are billed as, what a named count too small for the run is told,
and the fastest card the headline names."""

from __future__ import annotations

import pytest

from adapters.report import build_report
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.fit import rented_cards
from engine.specs import Catalog
from tests.helpers import catalog_with, gpu


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


def test_a_count_no_machine_comes_in_is_billed_as_the_next_machine_size(catalog) -> None:
    rtx = catalog.gpu("rtx-4090")
    assert [rented_cards(n, rtx) for n in (1, 2, 3, 4, 5, 6, 7, 8)] == [1, 2, 3, 4, 8, 8, 8, 8]


def test_a_count_past_one_node_is_billed_as_whole_nodes(catalog) -> None:
    assert rented_cards(19, catalog.gpu("h100-sxm")) == 24


def test_gb200_is_billed_in_trays_of_four(catalog) -> None:
    assert [rented_cards(n, catalog.gpu("gb200")) for n in (1, 4, 5, 72)] == [4, 4, 8, 72]


def test_a_plan_on_gb200_takes_a_whole_tray(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**7, gpu="gb200"), catalog)
    assert est.options[0].count == 4


def test_seven_cards_named_pay_for_a_machine_of_eight(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=2 * 10**7,
                           gpu="rtx-4090", gpu_count=7), catalog)
    assert est.priced is not None and est.priced.count == 7
    assert est.priced.timing.billed_cards == 8
    assert any("pays for 8 cards (1 idle)" in n and "`8x rtx-4090`" in n for n in est.notes)


def test_the_fewest_cards_are_offered_as_the_machine_that_holds_them(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8),
                   catalog)
    b300 = next(o for o in est.options if o.gpu.id == "b300")
    assert b300.count == 8  # 5 hold it; a machine of 8 is what clouds rent
    assert b300.timing.billed_cards is None


def test_napkin_mode_keeps_the_specifications_count(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", mode="napkin",
                           gpu="h100-sxm"), catalog)
    assert est.options[0].count in (16, 17)


def test_a_count_of_a_machine_size_costs_its_own_cards(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**7, gpu="a100-80gb-sxm",
                           gpu_count=4), catalog)
    assert est.options[0].timing.billed_cards is None
    assert not any("pays for" in n for n in est.notes)


def test_a_named_count_no_machine_comes_in_costs_the_machine(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**7, gpu="a100-80gb-sxm",
                           gpu_count=5), catalog)
    assert est.options[0].timing.billed_cards == 8
    assert any("pays for 8 cards (3 idle)" in n for n in est.notes)


def test_the_cheapest_pick_counts_the_cards_it_pays_for(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8),
                   catalog)
    costs = [o.timing.cost_usd for o in est.options]
    assert costs == sorted(costs)
    assert est.options[0].timing.billed_cards is None  # a whole machine wins


def test_a_named_count_that_does_not_fit_keeps_the_whole_nodes_bill(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8,
                           gpu="h100-sxm", gpu_count=8), catalog)
    assert est.priced is not None and est.priced.count == 24  # 19 hold it: whole nodes
    assert est.options[0].needed == 24


def test_the_json_carries_the_notes(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8,
                           gpu="h100-sxm"), catalog)
    assert est.to_json()["notes"] == est.notes and est.notes


def test_a_card_no_count_holds_within_the_planning_line_offers_the_count_that_runs_tight(
    catalog,
) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=2 * 10**7,
                           gpu="rtx-4090", gpu_count=2), catalog)
    named, tight = est.options[0], est.options[1]
    assert named.needed == tight.count == 8 and named.needed_tight
    assert tight.band == "tight" and tight.timing.gpu_hours is not None
    assert est.priced is tight


def test_the_warning_says_the_count_that_runs_tight_rather_than_no_count(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=2 * 10**7,
                           gpu="rtx-4090", gpu_count=2), catalog)
    warning = next(w for w in est.warnings if "cannot hold this run" in w)
    assert "8x rtx-4090 would, tight" in warning and "no count" in warning


def test_the_fastest_card_is_the_catalogs_not_only_the_tables(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**8, gpu="mi300x"), catalog)
    assert est.fastest is not None
    shown = {(o.gpu.id, o.count) for o in est.options}
    assert (est.fastest.gpu.id, est.fastest.count) not in shown
    hours = est.fastest.timing.wall_hours
    assert hours is not None
    assert all(hours <= (o.timing.wall_hours or float("inf")) for o in est.options)


def test_the_headline_names_the_fastest_card_only_when_it_saves_a_tenth(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**8, gpu="mi300x"), catalog)
    line = build_report(est).cost_line or ""
    assert f"fastest: {est.fastest.count}x {est.fastest.gpu.id}" in line
    same = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**8,
                            gpu=est.fastest.gpu.id, gpu_count=est.fastest.count), catalog)
    assert "fastest" not in (build_report(same).cost_line or "")


def _two_cards(faster_by: float) -> Catalog:
    """A cheap card, and one ``faster_by`` (0.05: 5%) faster in every rate at twice the
    price."""
    slow = gpu("slow", 80, bf16_tflops=1000.0, matmul_tflops=800.0, hbm_gbps=3000.0,
               link_gbps=450.0)
    quick = 1.0 + faster_by
    fast = gpu("fast", 80, bf16_tflops=1000.0 * quick, matmul_tflops=800.0 * quick,
               hbm_gbps=3000.0 * quick, link_gbps=450.0, price_per_gpu_hour=2.0)
    return catalog_with(slow, fast)


def test_a_card_a_little_faster_is_not_named_fastest() -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**8), _two_cards(0.05))
    assert est.options[0].gpu.id == "slow" and est.fastest is not None
    assert est.fastest.gpu.id == "fast"  # faster, but by under a tenth of the time
    assert "fastest" not in (build_report(est).cost_line or "")


def test_a_card_much_faster_is_named_fastest() -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**8), _two_cards(0.5))
    assert est.options[0].gpu.id == "slow"
    assert "fastest: 1x fast" in (build_report(est).cost_line or "")


def test_the_fastest_card_is_sought_on_no_more_cards_than_the_cheapest(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7), catalog)
    assert est.fastest is not None and est.fastest.count <= est.options[0].count


def test_a_budget_question_names_no_fastest(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**8, budget_usd=50), catalog)
    assert est.fastest is None


def test_a_launch_bound_run_is_told_the_micro_batch_that_fills_the_gpu(catalog) -> None:
    est = estimate(Request(model="gpt-oss-20b", method="lora", dataset_tokens=2 * 10**7,
                           gpu="h100-sxm"), catalog)
    tip = next(w for w in est.warnings if "kernel launches set the pace" in w)
    assert "`batch 8`" in tip and "less time" in tip


def test_a_run_the_gpu_bounds_gets_no_launch_tip(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="qlora", dataset_tokens=5 * 10**7,
                           gpu="h100-sxm"), catalog)
    assert not any("kernel launches set the pace" in w for w in est.warnings)


def test_the_launch_tip_names_the_longest_micro_batch_that_fits(catalog) -> None:
    est = estimate(Request(model="gpt-oss-20b", method="lora", dataset_tokens=2 * 10**7,
                           gpu="h100-sxm", seq_len=4096), catalog)
    tip = next(w for w in est.warnings if "kernel launches set the pace" in w)
    assert "`batch 4`" in tip  # batch 8 would pass the planning line
    share = int(tip.split("GB per GPU (")[1].split("%")[0])
    assert share <= 85


def test_gemma_3_replies_say_its_measured_slowdown(catalog) -> None:
    est = estimate(Request(model="gemma-3-27b", method="lora", dataset_tokens=2 * 10**7,
                           gpu="a100-80gb-sxm", framework="hf"), catalog)
    assert any(w.startswith("Gemma 3 ran 15-16% slower") for w in est.warnings)


def test_phi_3_full_fine_tunes_carry_no_adapter_caveat(catalog) -> None:
    est = estimate(Request(model="phi-3-mini", method="full", dataset_tokens=2 * 10**7,
                           gpu="h100-sxm"), catalog)
    assert not any(w.startswith("Phi-3 ran") for w in est.warnings)


def test_a_memory_only_reply_carries_no_time_caveat(catalog) -> None:
    est = estimate(Request(model="gemma-3-27b", method="lora", gpu="a100-80gb-sxm"), catalog)
    assert not any(w.startswith("Gemma 3 ran") for w in est.warnings)


def test_a_card_on_an_arm_host_says_to_check_its_builds(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="qlora", dataset_tokens=10**7,
                           gpu="gh200"), catalog)
    assert any("Arm (aarch64" in w and "bitsandbytes" in w for w in est.warnings)


def test_an_x86_card_says_nothing_of_its_host(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="qlora", dataset_tokens=10**7,
                           gpu="h100-sxm"), catalog)
    assert not any("aarch64" in w for w in est.warnings)


def test_the_fastest_line_marks_an_arm_host(catalog) -> None:
    est = estimate(Request(model="llama-3.1-405b", method="qlora", dataset_tokens=10**8),
                   catalog)
    assert est.fastest is not None and est.fastest.gpu.host_arch == "aarch64"
    assert f"{est.fastest.gpu.id} (Arm host)" in (build_report(est).cost_line or "")


def test_the_json_says_the_loss_path_the_framework_runs(catalog) -> None:
    unsloth = estimate(Request(model="llama-3.1-8b", method="qlora", dataset_tokens=10**7,
                               gpu="rtx-4090", framework="unsloth"), catalog).to_json()
    hf = estimate(Request(model="llama-3.1-8b", method="qlora", dataset_tokens=10**7,
                          gpu="rtx-4090", framework="hf"), catalog).to_json()
    assert unsloth["framework"]["loss_bytes_per_logit"] == 0
    assert hf["framework"]["loss_bytes_per_logit"] == 12
    assert hf["request"]["hf_loss"] is False  # the user's switch, not the path


def test_nodes_named_for_a_card_leave_other_cards_on_their_own_nodes(catalog) -> None:
    named = Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8,
                    gpu="h100-sxm", gpu_count=16, nodes=2)
    alone = Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8)
    b200 = next(o for o in estimate(named, catalog).options if o.gpu.id == "b200")
    own = next(o for o in estimate(alone, catalog).options if o.gpu.id == "b200")
    assert b200.count == own.count
    assert b200.timing.wall_hours == pytest.approx(own.timing.wall_hours)
    doc = estimate(named, catalog).to_json()
    assert {o["gpu"]: o["nodes"] for o in doc["options"]}["b200"] == 1


def test_the_json_loss_path_counts_a_soft_caps_copy(catalog) -> None:
    doc = estimate(Request(model="gemma-2-9b", method="lora", dataset_tokens=10**7,
                           gpu="h100-sxm", framework="hf"), catalog).to_json()
    assert doc["framework"]["loss_bytes_per_logit"] == 14


def test_a_count_named_for_no_card_skips_gb200_where_it_is_not_whole_trays(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**7, gpu_count=2), catalog)
    assert "gb200" not in {o.gpu.id for o in est.options}
    assert est.fastest is None or est.fastest.gpu.id != "gb200"


def test_the_tight_count_of_gb200_is_whole_trays(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", dataset_tokens=10**7,
                           seq_len=32768, grad_checkpointing=False, gpu="gb200"), catalog)
    assert est.options[0].needed is not None and est.options[0].needed % 4 == 0


def test_a_memory_only_answer_keeps_the_fewest_cards(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", gpu="h100-sxm"), catalog)
    assert est.options[0].count == 19


def test_a_memory_only_ranking_is_by_the_fewest_cards_use(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full"), catalog)
    assert (est.options[0].gpu.id, est.options[0].count) == ("b300", 5)


def test_a_named_count_that_runs_tight_gets_no_second_tight_row(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=2 * 10**7,
                           gpu="rtx-4090", gpu_count=7), catalog)
    assert [o.count for o in est.options if o.gpu.id == "rtx-4090"] == [7]


def test_the_json_bills_a_named_count_with_or_without_a_dataset(catalog) -> None:
    for tokens in (None, 2 * 10**7):
        doc = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=tokens,
                               gpu="rtx-4090", gpu_count=7), catalog).to_json()
        assert doc["options"][0]["billed_cards"] == 8


def test_hsdp_nodes_named_for_a_card_leave_other_cards_sized_on_their_own(catalog) -> None:
    named = Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8,
                    gpu="h100-sxm", gpu_count=16, nodes=2, sharding="hsdp")
    alone = Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8,
                    sharding="hsdp")
    b300 = next(o for o in estimate(named, catalog).options if o.gpu.id == "b300")
    own = next(o for o in estimate(alone, catalog).options if o.gpu.id == "b300")
    assert (b300.count, b300.per_gpu_gb) == (own.count, own.per_gpu_gb)


def test_nodes_named_for_no_card_keep_each_card_to_that_many_machines(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="lora", dataset_tokens=5 * 10**7,
                           gpu_count=16, nodes=2), catalog)

    assert est.options
    assert all(o.count <= 2 * o.gpu.gpus_per_node for o in est.options)
    assert "gh200" not in {o.gpu.id for o in est.options}
