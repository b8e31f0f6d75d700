"""What a plan's cards are billed as, what a named count too small for the run is told,
and the fastest card the headline names."""

from __future__ import annotations

import pytest

from adapters.report import build_report
from catalog.loader import default_catalog
from engine import Request, estimate
from engine.fit import rented_cards
from engine.specs import Catalog


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


def test_seven_cards_say_a_machine_of_eight_is_billed(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=2 * 10**7,
                           gpu="rtx-4090", gpu_count=2), catalog)
    assert est.priced is not None and est.priced.count == 7
    assert any("you pay for 8" in n and "`8x rtx-4090`" in n for n in est.notes)


def test_a_count_the_user_named_is_not_told_about_machine_sizes(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**7, gpu="a100-80gb-sxm",
                           gpu_count=3), catalog)
    assert not any("you pay for" in n for n in est.notes)


def test_a_named_count_that_does_not_fit_keeps_the_whole_nodes_bill(catalog) -> None:
    est = estimate(Request(model="llama-3.1-70b", method="full", dataset_tokens=5 * 10**8,
                           gpu="h100-sxm", gpu_count=8), catalog)
    assert est.priced is not None and est.priced.count == 19
    assert any("you pay for 24" in n for n in est.notes)


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
    assert named.needed == tight.count and named.needed_tight
    assert tight.band == "tight" and tight.timing.gpu_hours is not None
    assert est.priced is tight


def test_the_warning_says_the_count_that_runs_tight_rather_than_no_count(catalog) -> None:
    est = estimate(Request(model="llama-3.1-8b", method="full", dataset_tokens=2 * 10**7,
                           gpu="rtx-4090", gpu_count=2), catalog)
    warning = next(w for w in est.warnings if "cannot hold this run" in w)
    assert "7x rtx-4090 would, tight" in warning and "no count" in warning


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
    est = estimate(Request(model="llama-3.1-8b", dataset_tokens=10**7, gpu="rtx-5090"), catalog)
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
