"""A limit answer and the plan priced under it name one cluster (issue 16): the count a
limit is solved on is the count the estimate prices; ``fewest cards`` under a budget or
deadline is the fewest that meet it; ``max seq`` stops at a learned position table; the
closest options to a missed limit are the nearest to it; and the what-if rows of a
``fewest cards`` answer sit at the counts its note names."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from adapters.parse import parse_query
from adapters.report import build_report
from engine import Method, Request, estimate
from engine.choices import ModelPick, Solve
from engine.constants import SOLVE_SEQ_STEP
from engine.constraints import meets, shortfall
from engine.estimate import question
from engine.fit import Option
from engine.result import Estimate
from engine.specs import Catalog

SEVENTY_FULL = {"model": "llama-3.1-70b", "method": Method.FULL, "gpu": "h100-sxm",
                "dataset_tokens": 100_000_000}


def ask(catalog: Catalog, **fields: Any) -> Estimate:
    return estimate(Request(**fields), catalog)


# --- 1. the count a limit is solved on is the count priced -------------------------------


def test_a_limit_needing_many_cards_is_solved_on_the_count_the_plan_prices(
    catalog: Catalog,
) -> None:
    est = ask(catalog, **{**SEVENTY_FULL, "dataset_tokens": 50_000_000}, solve=Solve.SEQ_LEN)
    assert est.solution is not None and est.solution.value is not None
    assert est.solution.target.count == est.options[0].count > 1
    assert est.to_json()["solve"]["gpu_count"] == est.options[0].count


def test_a_limit_one_card_holds_is_still_solved_on_one_card(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
              solve=Solve.SEQ_LEN)
    assert est.solution is not None and est.solution.target.count == 1


def test_the_count_solved_on_is_the_fewest_that_hold_the_smallest_step(
    catalog: Catalog,
) -> None:
    base = {"model": "llama-3.1-70b", "method": Method.FULL, "gpu": "h100-sxm"}
    count = ask(catalog, **base, solve=Solve.SEQ_LEN).solution.target.count  # type: ignore[union-attr]
    fewer = ask(catalog, **base, seq_len=SOLVE_SEQ_STEP, gpu_count=count - 1).options[0]
    assert fewer.named and not fewer.fits


def test_the_reply_says_which_count_a_limit_was_solved_on(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-70b", method=Method.FULL, gpu="h100-sxm",
              solve=Solve.SEQ_LEN)
    assert est.solution is not None
    assert any(n.startswith(f"No count named: solved on {est.solution.target.count} cards")
               for n in est.notes)


def test_a_limit_under_a_budget_prices_the_count_it_was_solved_on(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.LORA, model_pick=ModelPick.NONE,
              dataset_tokens=50_000_000, budget_usd=100, solve=Solve.MODEL)
    assert est.solution is not None and est.solution.value == est.model.id
    lead = est.options[0]
    assert (lead.gpu, lead.count) == (est.solution.target.gpu, est.solution.target.count)


def test_the_count_a_limit_was_solved_on_stays_unsaid(catalog: Catalog) -> None:
    asked = Request(model="llama-3.1-8b", method=Method.LORA, dataset_tokens=50_000_000,
                    deadline_hours=1, solve=Solve.SEQ_LEN)
    answer = estimate(asked, catalog).request
    assert answer.gpu_count == 1 and question(answer) == asked


# --- 2. fewest cards under a budget or deadline ----------------------------------------


def test_fewest_cards_under_a_deadline_is_a_count_that_meets_it(catalog: Catalog) -> None:
    est = ask(catalog, **SEVENTY_FULL, deadline_hours=2, solve=Solve.GPU_COUNT)
    assert est.solution is not None and est.constraints is not None and est.constraints.met
    assert est.solution.value == est.options[0].count
    assert (est.options[0].timing.wall_hours or 1e9) <= 2


def test_one_card_fewer_than_the_answer_tried_misses_the_deadline(catalog: Catalog) -> None:
    sol = ask(catalog, **SEVENTY_FULL, deadline_hours=2, solve=Solve.GPU_COUNT).solution
    assert sol is not None and sol.within is not None and sol.within.below is not None
    assert sol.within.below.count < int(sol.value or 0)
    assert not meets(sol.within.below, None, 2)


def test_fewest_cards_under_a_deadline_needs_no_more_than_the_plain_deadline_plan(
    catalog: Catalog,
) -> None:
    fewest = ask(catalog, **SEVENTY_FULL, deadline_hours=2, solve=Solve.GPU_COUNT)
    plain = ask(catalog, **SEVENTY_FULL, deadline_hours=2)
    assert fewest.options[0].count <= plain.options[0].count


def test_fewest_cards_under_a_budget_stays_within_it(catalog: Catalog) -> None:
    est = ask(catalog, **SEVENTY_FULL, budget_usd=300, solve=Solve.GPU_COUNT)
    assert est.solution is not None and est.solution.within is not None
    assert est.solution.value == est.options[0].count
    assert (est.options[0].timing.cost_usd or 1e9) <= 300


def test_fewest_cards_when_no_count_meets_the_deadline_says_so(catalog: Catalog) -> None:
    est = ask(catalog, **SEVENTY_FULL, deadline_hours=0.1, solve=Solve.GPU_COUNT)
    assert est.solution is not None and est.solution.value is None
    assert "no count up to" in build_report(est).headline


def test_fewer_cards_under_a_deadline_are_counts_that_meet_it(catalog: Catalog) -> None:
    sol = ask(catalog, **SEVENTY_FULL, deadline_hours=2, solve=Solve.GPU_COUNT).solution
    assert sol is not None and sol.raises
    for r in sol.raises:
        again = ask(catalog, **{**SEVENTY_FULL, **r.update, "gpu": r.gpu}, gpu_count=r.count,
                    deadline_hours=2)
        assert again.constraints is not None and again.constraints.met, r.change


# --- 3. a learned position table stops max seq -----------------------------------------


def test_max_seq_stops_at_the_learned_position_table(catalog: Catalog) -> None:
    est = ask(catalog, model="opt-30b", method=Method.QLORA, gpu="a100-80gb-sxm",
              solve=Solve.SEQ_LEN)
    rows = est.model.architecture.learned_positions
    assert est.solution is not None and isinstance(est.solution.value, int)
    assert rows and est.solution.value <= rows < est.solution.value + SOLVE_SEQ_STEP


def test_a_max_seq_answer_draws_no_position_table_warning(catalog: Catalog) -> None:
    est = ask(catalog, model="opt-30b", method=Method.QLORA, gpu="a100-80gb-sxm",
              solve=Solve.SEQ_LEN)
    assert not any("position table" in w for w in est.warnings)
    assert any("position table" in n for n in est.notes)


# --- 4. the closest options to a missed limit ------------------------------------------


def _timed(cost: float, wall: float) -> Option:
    return cast(Option, SimpleNamespace(timing=SimpleNamespace(cost_usd=cost, wall_hours=wall)))


def test_shortfall_is_the_larger_miss_as_a_multiple_of_its_limit() -> None:
    assert shortfall(_timed(150, 5), 100, 10) == 1.5
    assert shortfall(_timed(50, 30), 100, 10) == 3.0
    assert shortfall(_timed(50, 5), 100, 10) == 1.0


def test_closest_options_are_nearest_the_deadline_first(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.FULL, dataset_tokens=20_000_000,
              deadline_hours=0.1)
    c = est.constraints
    assert c is not None and not c.met and len(c.closest) > 1
    walls = [o.timing.wall_hours or 1e9 for o in c.closest if o.recommended_for_training]
    assert walls == sorted(walls)


def test_the_warning_names_the_two_closest_options(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.FULL, dataset_tokens=20_000_000,
              deadline_hours=0.1)
    assert est.constraints is not None
    warning = build_report(est).warnings[0]
    first, second = est.constraints.closest[:2]
    named = warning.split("Closest: ")[1]
    assert named.startswith(f"{first.count}x {first.gpu.id}: ")
    assert f"; {second.count}x {second.gpu.id}: " in named


# --- 5. fewest cards: what-if rows at the counts the note names -------------------------


@pytest.mark.parametrize("limits", [{}, {"deadline_hours": 2}], ids=["plain", "deadline"])
def test_fewest_cards_what_if_rows_sit_at_the_counts_the_note_names(
    catalog: Catalog, limits: dict[str, float]
) -> None:
    est = ask(catalog, **SEVENTY_FULL, **limits, solve=Solve.GPU_COUNT)
    assert est.solution is not None
    rows = {w.label: w.count for w in est.what_if}
    methods = [r for r in est.solution.raises if r.update.get("method") is not None]
    assert methods
    for r in methods:
        assert rows[r.change] == r.count, r.change


# --- wording that follows the count solved on -----------------------------------------------


def _reply(query: str) -> str:
    report = build_report(estimate(parse_query(query)))
    return "\n".join([report.headline, *report.notes, *report.warnings])


def test_a_count_that_holds_nothing_is_not_called_the_fewest_that_hold() -> None:
    text = _reply("max seq 70b full 4090")

    assert "no count of rtx-4090 up to 8 holds even a 256-token sequence" in text
    assert "the fewest that hold" not in text


def test_raises_say_they_are_on_the_count_solved_on() -> None:
    assert "To raise it on the same 24 cards: LoRA" in _reply("max seq 70b full h100 50M tokens")


def test_fewest_cards_without_a_card_does_not_say_it_solved_for_one() -> None:
    text = _reply("fewest cards 70b full 100M tokens within 2 hours")

    assert "No card named: solved for NVIDIA H100" in text and "for one" not in text


def test_a_limit_missed_on_the_count_solved_on_does_not_rule_out_more_cards() -> None:
    text = _reply("max seq 8b full h100 50M tokens within 1 hour")

    assert "The plan keeps the 2 cards" in text
    assert "No other method does either" not in text


def test_methods_that_meet_a_limit_no_count_meets_are_said_to_meet_it() -> None:
    text = _reply("fewest cards 405b full 100M tokens within 1 hour")

    assert "It meets the limit with: LoRA" in text and "It fits with" not in text
