"""Budgets and deadlines (issue 16): every listed option meets them, ranked by cost under
a deadline and by wall-clock under a budget; when none does, the reply says so, shows the
closest and the method that would make it."""

from __future__ import annotations

import io
import json
from itertools import pairwise
from typing import Any

from adapters.cli import main
from adapters.formats import METHOD_LABELS
from adapters.report import build_report
from engine import Method, Request, estimate
from engine.constants import GPUS_PER_NODE
from engine.constraints import counts
from engine.fit import not_recommended_reason
from engine.result import Estimate
from engine.specs import Catalog

EIGHT_B_FULL = {"model": "llama-3.1-8b", "method": Method.FULL, "dataset_tokens": 20_000_000}


def ask(catalog: Catalog, **fields: Any) -> Estimate:
    return estimate(Request(**fields), catalog)


def cli_json(*words: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["--json", *words], out, err) == 0, err.getvalue()
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


def test_every_listed_option_stays_within_the_budget_through_the_terminal() -> None:
    doc = cli_json("70b", "qlora", "50M", "tokens", "under", "$500")
    assert doc["constraints"]["met"] is True
    assert doc["options"]
    for o in doc["options"]:
        assert o["cost_usd"] is not None and o["cost_usd"] <= 500
        assert o["fit"] != "does not fit"


def test_every_listed_option_meets_the_deadline_through_the_terminal() -> None:
    doc = cli_json("70b", "qlora", "50M", "tokens", "within", "2", "days")
    assert doc["constraints"]["met"] is True
    for o in doc["options"]:
        assert o["wall_hours"] is not None and o["wall_hours"] <= 48


def test_both_limits_hold_together(catalog: Catalog) -> None:
    est = ask(catalog, **EIGHT_B_FULL, budget_usd=20, deadline_hours=12)
    assert est.constraints is not None and est.constraints.met
    for o in est.options:
        assert (o.timing.cost_usd or 1e9) <= 20 and (o.timing.wall_hours or 1e9) <= 12


def test_under_a_deadline_the_options_are_cheapest_first(catalog: Catalog) -> None:
    est = ask(catalog, **EIGHT_B_FULL, deadline_hours=24)
    costs = [o.timing.cost_usd for o in est.options if not_recommended_reason(o.gpu) is None]
    assert len(costs) > 1 and costs == sorted(costs)


def test_under_a_budget_alone_the_options_are_fastest_first(catalog: Catalog) -> None:
    est = ask(catalog, **EIGHT_B_FULL, budget_usd=50)
    walls = [o.timing.wall_hours for o in est.options if not_recommended_reason(o.gpu) is None]
    assert len(walls) > 1 and walls == sorted(walls)


def test_more_cards_are_used_to_meet_a_tight_deadline(catalog: Catalog) -> None:
    plain = ask(catalog, **EIGHT_B_FULL, gpu="h100-sxm")
    rushed = ask(catalog, **EIGHT_B_FULL, gpu="h100-sxm", deadline_hours=0.5)
    assert rushed.constraints is not None and rushed.constraints.met
    assert rushed.options[0].count > plain.options[0].count


def test_nodes_cap_the_cards_tried(catalog: Catalog) -> None:
    est = ask(catalog, **EIGHT_B_FULL, budget_usd=50, nodes=1)
    assert all(o.count <= o.gpu.gpus_per_node for o in est.options)


def test_a_named_card_keeps_the_options_on_that_card(catalog: Catalog) -> None:
    est = ask(catalog, **EIGHT_B_FULL, gpu="h100-sxm", deadline_hours=2)
    assert {o.gpu.id for o in est.options} == {"h100-sxm"}
    assert (est.options[0].timing.wall_hours or 1e9) <= 2


def test_when_nothing_meets_the_closest_are_shown_and_the_reply_says_so(
    catalog: Catalog,
) -> None:
    est = ask(catalog, **EIGHT_B_FULL, budget_usd=1)
    assert est.constraints is not None and not est.constraints.met
    assert est.options and all((o.timing.cost_usd or 0) > 1 for o in est.options)
    warning = build_report(est).warnings[0]
    assert warning.startswith("No option stays under $1.00. Closest:")


def test_when_the_named_card_holds_nothing_the_reply_says_so(catalog: Catalog) -> None:
    est = ask(catalog, **{**EIGHT_B_FULL, "gpu": "rtx-4090", "gpu_count": 8,
                          "seq_len": 32768}, budget_usd=500)
    assert est.constraints is not None and not est.constraints.options
    warning = build_report(est).warnings[0]
    assert "No card holds the run as asked." in warning and "Closest: ." not in warning


def test_when_nothing_meets_a_method_that_would_is_named(catalog: Catalog) -> None:
    est = ask(catalog, **EIGHT_B_FULL, budget_usd=3)
    assert est.constraints is not None and not est.constraints.met
    suggestions = est.constraints.suggestions
    assert suggestions and {s.method for s in suggestions} <= {Method.LORA, Method.QLORA}
    for s in suggestions:
        assert (s.option.timing.cost_usd or 1e9) <= 3
    warning = build_report(est).warnings[0]
    first = suggestions[0]
    label = METHOD_LABELS[first.method]
    assert f"It would with {label} on {first.option.count}x {first.option.gpu.id}" in warning


def test_without_a_dataset_size_the_limit_asks_for_one(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", budget_usd=500)
    assert est.constraints is not None and not est.constraints.timed
    assert "needs a dataset size" in build_report(est).warnings[0]


def test_the_json_member_states_the_limits_and_the_ranking(catalog: Catalog) -> None:
    doc = ask(catalog, **EIGHT_B_FULL, budget_usd=50, deadline_hours=24).to_json()
    c = doc["constraints"]
    assert (c["budget_usd"], c["deadline_hours"], c["ranked_by"]) == (50, 24, "cost")


def test_counts_cover_one_node_then_whole_nodes() -> None:
    assert counts(3, 32) == [3, 4, 5, 6, 7, 8, 16, 24, 32]
    assert counts(13, 40) == [13, 16, 24, 32, 40]
    assert counts(1, 4) == [1, 2, 3, 4]


def test_past_64_nodes_the_search_steps_a_quarter_at_a_time() -> None:
    tried = counts(1, 4096)
    nodes = [n // GPUS_PER_NODE for n in tried if n > 64 * GPUS_PER_NODE]
    assert len(tried) < 100 and nodes[-1] <= 512
    assert all(b >= a * 1.25 - 1 for a, b in pairwise(nodes))


def test_thousands_of_nodes_named_do_not_widen_the_search_past_the_sizer() -> None:
    doc = cli_json("8b", "lora", "1B", "tokens", "10000", "nodes", "under", "$100")
    assert all(o["count"] <= 4096 for o in doc["options"])


def test_cards_rented_one_to_a_machine_count_in_nodes_of_one() -> None:
    assert counts(3, 12, per_node=1) == list(range(3, 13))


def test_nodes_of_a_named_card_are_its_machines(catalog: Catalog) -> None:
    from adapters.parse import parse_query

    assert parse_query("70b full gb200 2 nodes", catalog).gpu_count == 144  # NVL72 racks
    assert parse_query("70b full gh200 2 nodes", catalog).gpu_count == 2  # one per machine
    assert parse_query("70b full h100 2 nodes", catalog).gpu_count == 16


def test_a_budget_with_a_named_count_plans_only_that_count(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method="lora", dataset_tokens=50_000_000,
              budget_usd=500, gpu="h100-sxm", gpu_count=4)
    assert est.options and all(o.count == 4 for o in est.options)


def test_a_deadline_with_a_card_memory_plans_only_cards_of_that_memory(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method="lora", dataset_tokens=50_000_000,
              budget_usd=500, deadline_hours=48, gpu_memory_gb=24)
    assert est.options and all(round(o.gpu.memory_gb) == 24 for o in est.options)


def test_a_named_count_in_the_tight_band_meets_a_budget_as_the_headline_runs_it(
    catalog: Catalog,
) -> None:
    est = ask(catalog, model="llama-3.1-8b", method="lora", framework="hf",
              dataset_tokens=50_000_000, budget_usd=100, gpu="rtx-4090", gpu_count=1)
    assert est.constraints is not None and est.constraints.met
    assert [(o.gpu.id, o.count) for o in est.options] == [("rtx-4090", 1)]


def test_a_named_count_too_small_for_the_run_plans_the_fewest_that_hold_it(
    catalog: Catalog,
) -> None:
    est = ask(catalog, model="llama-3.1-70b", method="qlora", dataset_tokens=10_000_000,
              budget_usd=500, gpu="a100-40gb-sxm", gpu_count=1)
    assert est.constraints is not None and est.constraints.met
    assert est.options[0].count == 2


def test_napkin_limits_plan_the_fewest_cards_that_meet_them(catalog: Catalog) -> None:
    """The napkin rules cost the same on any count, so more cards only shorten the
    wall-clock: the plan is the fewest that meet the limits, not the most there are."""
    for limits in ({"budget_usd": 30}, {"deadline_hours": 3}):
        est = ask(catalog, model="llama-3.1-8b", method="full", mode="napkin",
                  dataset_tokens=50_000_000, **limits)
        assert est.options and all(o.count <= 32 for o in est.options)  # was 504 GB200s
