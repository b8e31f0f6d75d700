"""Questions that solve for a limit (issue 16): the answer fits the card at the 85%
planning line, the next step up does not, and each suggested change raises the limit."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from adapters.cli import main
from adapters.report import build_report
from engine import Method, Request, estimate
from engine.choices import ModelPick, Solve
from engine.constants import SOLVE_REFERENCE_GPU, SOLVE_SEQ_STEP, USABLE_FRACTION
from engine.estimate import question
from engine.fit import rented_cards
from engine.result import Estimate
from engine.solve import largest, solve
from engine.specs import Catalog


def ask(catalog: Catalog, **fields: Any) -> Estimate:
    return estimate(Request(**fields), catalog)


def fits_named(catalog: Catalog, **fields: Any) -> bool:
    """Whether the named card (options[0]) holds the run at the planning line, on one
    card unless a count is given (a named card alone gets the fewest that hold it)."""
    est = ask(catalog, **{"gpu_count": 1, **fields})
    lead = est.options[0]
    assert lead.named
    return lead.fits


def cli_json(*words: str) -> dict[str, Any]:
    out, err = io.StringIO(), io.StringIO()
    assert main(["--json", *words], out, err) == 0, err.getvalue()
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


# --- sequence length ------------------------------------------------------------------


def test_max_seq_fits_the_named_card_and_the_next_step_does_not(catalog: Catalog) -> None:
    base = {"model": "llama-3.1-8b", "method": Method.QLORA, "gpu": "rtx-4090"}
    solved = ask(catalog, **base, solve=Solve.SEQ_LEN).solution
    assert solved is not None and isinstance(solved.value, int)
    assert fits_named(catalog, **base, seq_len=solved.value)
    assert solved.next_value == solved.value + SOLVE_SEQ_STEP
    assert not fits_named(catalog, **base, seq_len=solved.next_value)


def test_max_seq_is_a_multiple_of_256(catalog: Catalog) -> None:
    solved = ask(catalog, model="llama-3.1-8b", method=Method.LORA, gpu="l40s",
                 solve=Solve.SEQ_LEN).solution
    assert solved is not None and isinstance(solved.value, int)
    assert solved.value % SOLVE_SEQ_STEP == 0


def test_max_seq_through_the_terminal_fits_and_twice_it_does_not() -> None:
    doc = cli_json("max", "seq", "8b", "qlora", "rtx-4090")
    value = doc["solve"]["value"]
    assert doc["solve"]["for"] == "seq_len"
    assert doc["request"]["seq_len"] == value
    assert doc["options"][0]["utilization"] <= USABLE_FRACTION
    again = cli_json("8b", "qlora", "1x", "rtx-4090", "seq", str(value))
    assert again["options"][0]["utilization"] <= USABLE_FRACTION
    twice = cli_json("8b", "qlora", "1x", "rtx-4090", "seq", str(2 * value))
    assert twice["options"][0]["utilization"] > USABLE_FRACTION


def test_the_estimate_document_is_at_the_answers_setting(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
              solve=Solve.SEQ_LEN)
    doc = est.to_json()
    assert doc["request"]["seq_len"] == doc["solve"]["value"]
    assert doc["memory"]["per_gpu_gb"] == doc["solve"]["per_gpu_gb"]


# --- micro-batch ----------------------------------------------------------------------


def test_max_batch_is_the_largest_whole_batch_that_fits(catalog: Catalog) -> None:
    base = {"model": "llama-3.1-8b", "method": Method.LORA, "seq_len": 4096, "gpu": "h100-sxm"}
    solved = ask(catalog, **base, solve=Solve.MICRO_BATCH).solution
    assert solved is not None and isinstance(solved.value, int)
    assert fits_named(catalog, **base, micro_batch=solved.value)
    assert solved.next_value == solved.value + 1
    assert not fits_named(catalog, **base, micro_batch=solved.value + 1)


def test_a_named_count_spreads_the_run_before_solving(catalog: Catalog) -> None:
    base = {"model": "llama-3.1-70b", "method": Method.FULL, "gpu": "h100-sxm"}
    one = ask(catalog, **base, gpu_count=1, solve=Solve.MICRO_BATCH).solution
    many = ask(catalog, **base, gpu_count=32, solve=Solve.MICRO_BATCH).solution
    assert one is not None and one.value is None  # a 70B full fine-tune is not one card
    assert many is not None and isinstance(many.value, int) and many.value >= 1
    assert fits_named(catalog, **base, gpu_count=32, micro_batch=many.value)


# --- model ----------------------------------------------------------------------------


def test_largest_model_is_the_largest_catalog_model_that_fits(catalog: Catalog) -> None:
    solved = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
                 model_pick=ModelPick.NONE, solve=Solve.MODEL).solution
    assert solved is not None and isinstance(solved.value, str)
    answer = catalog.model(solved.value)
    assert fits_named(catalog, model=answer.id, method=Method.QLORA, gpu="rtx-4090")
    for bigger in (m for m in catalog.models.values() if m.params > answer.params):
        assert not fits_named(catalog, model=bigger.id, method=Method.QLORA, gpu="rtx-4090")


def test_largest_model_keeps_to_a_named_family(catalog: Catalog) -> None:
    solved = ask(catalog, model="qwen2.5-7b", method=Method.QLORA, gpu="rtx-4090",
                 model_pick=ModelPick.FAMILY, solve=Solve.MODEL).solution
    assert solved is not None and isinstance(solved.value, str)
    assert catalog.model(solved.value).family == "qwen"
    assert solved.next_value is None or catalog.model(str(solved.next_value)).family == "qwen"


def test_asking_a_largest_model_answer_again_searches_as_the_question_did(
    catalog: Catalog,
) -> None:
    answer = ask(catalog, model="llama-3.1-8b", method=Method.LORA, gpu="rtx-4090",
                 model_pick=ModelPick.NONE, solve=Solve.MODEL).request
    assert answer.model_pick is ModelPick.NONE  # not narrowed to the answer's family
    again = estimate(question(answer).model_copy(update={"method": Method.QLORA}), catalog)
    typed = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
                model_pick=ModelPick.NONE, solve=Solve.MODEL)
    assert again.model.id == typed.model.id


def test_a_limit_answers_question_is_what_was_said(catalog: Catalog) -> None:
    asked = Request(model="llama-3.1-8b", method=Method.LORA, solve=Solve.SEQ_LEN)
    answer = estimate(asked, catalog).request
    assert answer.seq_len > asked.seq_len and answer.gpu == SOLVE_REFERENCE_GPU
    assert question(answer) == asked


def test_a_family_largest_model_answer_has_no_flagship_note(catalog: Catalog) -> None:
    est = ask(catalog, model="qwen2.5-7b", method=Method.QLORA, gpu="rtx-4090",
              model_pick=ModelPick.FAMILY, solve=Solve.MODEL)
    assert not any("flagship" in n for n in est.notes)


def test_largest_model_for_a_card_memory_reads_the_label_as_gib(catalog: Catalog) -> None:
    by_memory = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu_memory_gb=24,
                    model_pick=ModelPick.NONE, solve=Solve.MODEL)
    by_card = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
                  model_pick=ModelPick.NONE, solve=Solve.MODEL)
    assert by_memory.solution is not None and by_card.solution is not None
    assert by_memory.solution.value == by_card.solution.value
    assert by_memory.solution.target.capacity_gb == pytest.approx(24 * 2**30 / 1e9)
    assert any("read as its label in GiB" in n for n in by_memory.notes)


# --- count ----------------------------------------------------------------------------


def test_fewest_cards_fits_and_one_fewer_does_not(catalog: Catalog) -> None:
    base = {"model": "llama-3.1-70b", "method": Method.FULL, "gpu": "h100-sxm"}
    solved = ask(catalog, **base, solve=Solve.GPU_COUNT).solution
    assert solved is not None and isinstance(solved.value, int) and solved.value > 1
    assert fits_named(catalog, **base, gpu_count=solved.value)
    assert solved.next_value == solved.value - 1
    assert not fits_named(catalog, **base, gpu_count=solved.value - 1)


def test_fewest_cards_is_the_count_a_memory_only_estimate_picks_on_that_card(
    catalog: Catalog,
) -> None:
    base = {"model": "llama-3.1-70b", "method": Method.LORA, "gpu": "a100-40gb-sxm"}
    solved = ask(catalog, **base, solve=Solve.GPU_COUNT)
    plain = ask(catalog, **base)
    assert plain.options[0].named and plain.options[0].fits
    assert solved.solution is not None
    assert solved.solution.value == plain.options[0].count == solved.options[0].count


def test_a_priced_estimate_rents_the_machines_that_hold_the_fewest_cards(
    catalog: Catalog,
) -> None:
    base = {"model": "llama-3.1-70b", "method": Method.LORA, "gpu": "a100-40gb-sxm"}
    solved = ask(catalog, **base, solve=Solve.GPU_COUNT)
    priced = ask(catalog, **base, dataset_tokens=10**7)
    assert solved.solution is not None and solved.solution.value == 6
    assert priced.options[0].count == rented_cards(6, catalog.gpu("a100-40gb-sxm")) == 8


def test_fewest_cards_under_context_parallelism_sizes_the_count_below_as_the_estimate_does(
    catalog: Catalog,
) -> None:
    base = {"model": "llama-3.1-8b", "method": Method.FULL, "gpu": "h100-sxm",
            "context_parallel": 2, "seq_len": 32768}
    solved = ask(catalog, **base, solve=Solve.GPU_COUNT).solution
    assert solved is not None and solved.next_value is not None and solved.next_gb is not None
    below = ask(catalog, **base, gpu_count=solved.next_value).options[0]
    assert solved.next_gb == pytest.approx(below.memory.total, rel=1e-6)


def test_fewest_cards_counts_no_more_cards_than_the_cards_machines_hold(
    catalog: Catalog,
) -> None:
    base = {"model": "llama-3.1-405b", "method": Method.QLORA, "gpu": "rtx-4090"}
    solved = ask(catalog, **base, solve=Solve.GPU_COUNT).solution
    assert solved is not None and solved.value is None
    assert solved.next_value == 8 and solved.next_gb is not None  # one GeForce machine
    assert not ask(catalog, **base, gpu_count=8).options[0].fits


# --- what raises the limit ------------------------------------------------------------


def test_each_suggested_change_raises_the_limit_and_fits(catalog: Catalog) -> None:
    base = {"model": "llama-3.1-8b", "method": Method.LORA, "gpu": "rtx-4090"}
    solved = ask(catalog, **base, solve=Solve.SEQ_LEN).solution
    assert solved is not None and isinstance(solved.value, int) and solved.raises
    changes = {r.change for r in solved.raises}
    assert {"QLoRA", "fused cross-entropy (Liger)"} <= changes
    for r in solved.raises:
        assert isinstance(r.value, int) and r.value > solved.value
        setting = {**base, **r.update, "gpu": r.gpu, "seq_len": r.value}
        assert fits_named(catalog, **setting), r.change


def test_a_bigger_card_is_offered_with_its_limit(catalog: Catalog) -> None:
    solved = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
                 solve=Solve.SEQ_LEN).solution
    assert solved is not None
    cards = [r for r in solved.raises if not r.update]
    assert cards and cards[0].gpu is not None
    assert catalog.gpu(cards[0].gpu).memory_gb >= 1.5 * 24


def test_checkpointing_is_suggested_when_it_is_off(catalog: Catalog) -> None:
    solved = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
                 grad_checkpointing=False, solve=Solve.SEQ_LEN).solution
    assert solved is not None
    assert "gradient checkpointing" in {r.change for r in solved.raises}


def test_full_checkpointing_is_suggested_over_selective(catalog: Catalog) -> None:
    solved = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
                 selective_checkpointing=True, solve=Solve.SEQ_LEN).solution
    assert solved is not None
    full = [r for r in solved.raises if r.change == "full checkpointing"]
    assert full and isinstance(full[0].value, int) and full[0].value > solved.value


# --- edges ----------------------------------------------------------------------------


def test_without_a_card_the_reference_card_is_used_and_named(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-70b", method=Method.QLORA, solve=Solve.SEQ_LEN)
    assert est.solution is not None
    assert est.solution.target.gpu is not None
    assert est.solution.target.gpu.id == SOLVE_REFERENCE_GPU
    assert est.options[0].gpu.id == SOLVE_REFERENCE_GPU
    assert any("No card named" in n for n in est.notes)


def test_when_nothing_fits_the_value_is_none_and_the_smallest_step_is_named(
    catalog: Catalog,
) -> None:
    est = ask(catalog, model="llama-3.1-70b", method=Method.FULL, gpu="rtx-4090",
              solve=Solve.SEQ_LEN)
    assert est.solution is not None and est.solution.value is None
    assert est.solution.next_value == SOLVE_SEQ_STEP
    assert est.to_json()["solve"]["value"] is None


def test_the_json_member_has_the_documented_keys(catalog: Catalog) -> None:
    doc = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
              solve=Solve.MICRO_BATCH).to_json()
    assert {"for", "value", "next_does_not_fit"} <= set(doc["solve"])
    assert doc["solve"]["for"] == "micro_batch"


def test_an_estimate_without_a_question_has_no_solve_member(catalog: Catalog) -> None:
    assert "solve" not in ask(catalog, model="llama-3.1-8b").to_json()


def test_solve_refuses_a_request_without_a_question(catalog: Catalog) -> None:
    with pytest.raises(ValueError, match="asks for a limit"):
        solve(Request(model="llama-3.1-8b"), catalog.model("llama-3.1-8b"), catalog)


@pytest.mark.parametrize("threshold", [0, 1, 2, 7, 50, 99, 100])
def test_bisection_finds_the_last_step_that_fits(threshold: int) -> None:
    found = largest(1, 100, lambda k: k <= threshold)
    assert found == (None if threshold < 1 else threshold)


# --- the reply ------------------------------------------------------------------------


def test_the_reply_leads_with_the_answer_and_the_step_that_does_not_fit(
    catalog: Catalog,
) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.QLORA, gpu="rtx-4090",
              solve=Solve.SEQ_LEN)
    assert est.solution is not None and isinstance(est.solution.value, int)
    report = build_report(est)
    assert report.headline.startswith("Longest sequence for QLoRA on 1x")
    assert f"{est.solution.value:,} tokens" in report.headline
    assert f"{est.solution.value + SOLVE_SEQ_STEP:,} does not fit" in report.headline


def test_the_step_that_does_not_fit_never_reads_as_equal_to_the_usable_line(
    catalog: Catalog,
) -> None:
    """58,112 tokens need 73.04 GB of 73.01 usable: at one decimal both read 73.0 GB."""
    est = ask(catalog, model="llama-3.1-8b", method=Method.LORA, gpu="h100-sxm",
              solve=Solve.SEQ_LEN)
    head = build_report(est).headline
    usable = head.split(" (")[1].split(" usable")[0]
    over = head.rsplit("(", 1)[1].rstrip(").")
    assert usable != over


def test_the_reply_lists_each_change_with_its_new_limit(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-8b", method=Method.LORA, gpu="rtx-4090",
              solve=Solve.SEQ_LEN)
    assert est.solution is not None
    [line] = [n for n in build_report(est).notes if n.startswith("To raise it:")]
    for r in est.solution.raises:
        assert f"{r.change} → {r.value:,} tokens" in line


def test_the_reply_says_when_nothing_fits(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-70b", method=Method.FULL, gpu="rtx-4090",
              solve=Solve.SEQ_LEN)
    assert "nothing fits; a sequence of 256 tokens already needs" in build_report(est).headline


def test_fewest_cards_reply_names_the_count(catalog: Catalog) -> None:
    est = ask(catalog, model="llama-3.1-70b", method=Method.FULL, gpu="h100-sxm",
              solve=Solve.GPU_COUNT)
    assert est.solution is not None
    head = build_report(est).headline
    assert f": {est.solution.value} cards," in head
    assert f"{est.solution.next_value} do not fit" in head


def test_largest_model_when_none_fits_names_the_smallest_model() -> None:
    out, err = io.StringIO(), io.StringIO()
    assert main(["largest", "model", "bs", "343"], out, err) == 0, err.getvalue()
    assert "nothing fits; the smallest model," in out.getvalue()


def test_naming_the_solved_value_in_a_followup_asks_at_it(catalog: Catalog) -> None:
    from adapters.query.parser import apply_followup, parse_query

    asked = parse_query("8b lora max seq on h100", catalog)
    followup = apply_followup(asked, "what if seq 8192", catalog)
    assert followup.solve is None and followup.seq_len == 8192


def test_a_new_card_keeps_the_fewest_cards_question(catalog: Catalog) -> None:
    from adapters.query.parser import apply_followup, parse_query

    asked = parse_query("fewest cards 70b full h100", catalog)
    followup = apply_followup(asked, "on a100", catalog)
    assert followup.solve is Solve.GPU_COUNT and followup.gpu_count is None


def test_the_json_request_is_the_request_as_run(catalog: Catalog) -> None:
    from adapters.query.parser import parse_query

    doc = estimate(parse_query("8b full torchtune 50M tokens", catalog), catalog).to_json()
    assert doc["request"]["state_precision"] == "pure-bf16"
    assert "state_precision" not in doc["request"]["said"]
    assert {"model", "method", "framework"} <= set(doc["request"]["said"])


def test_a_factor_on_the_solved_value_multiplies_the_answer(catalog: Catalog) -> None:
    from adapters.query.parser import apply_followup, parse_query

    asked = parse_query("8b lora max seq on h100", catalog)
    answer = estimate(asked, catalog).request.seq_len
    followup = apply_followup(asked, "double the seq", catalog)
    assert followup.solve is None and followup.seq_len == 2 * answer


def test_a_family_word_narrows_a_largest_model_question(catalog: Catalog) -> None:
    from adapters.query.parser import apply_followup, parse_query

    asked = parse_query("largest model lora on h100", catalog)
    followup = apply_followup(asked, "what if qwen", catalog)
    assert followup.solve is Solve.MODEL
    assert estimate(followup, catalog).request.model.startswith("qwen")


def test_the_json_says_only_what_the_question_gave(catalog: Catalog) -> None:
    from adapters.query.parser import parse_query

    doc = estimate(parse_query("8b lora max seq", catalog), catalog).to_json()
    assert doc["request"]["said"] == ["method", "model", "solve"]


@pytest.mark.parametrize(("query", "stated"), [
    ("max seq 70b qlora seq 4k h100", "seq 4k"),
    ("max batch 8b lora bs 4 h100", "bs 4"),
    ("fewest cards 70b qlora 4x h100", "4x h100"),
    ("70b largest model qlora h100", "70b"),
])
def test_a_limit_question_that_also_states_its_value_is_refused(
    catalog: Catalog, query: str, stated: str
) -> None:
    from adapters.query.errors import QueryError
    from adapters.query.parser import parse_query

    with pytest.raises(QueryError, match=f'"{stated}" conflicts with .*itself. Drop one'):
        parse_query(query, catalog)


def test_a_largest_model_question_naming_a_model_searches_its_family(catalog: Catalog) -> None:
    from adapters.query.parser import parse_query

    asked = parse_query("largest model llama-3.1-8b qlora h100", catalog)
    answer = estimate(asked, catalog).request.model
    assert catalog.model(answer).family == catalog.model("llama-3.1-8b").family


def test_a_largest_model_question_whose_option_names_a_model_searches_its_family(
    catalog: Catalog,
) -> None:
    from adapters.query.parser import Said, parse_query

    said = Said({"model": "llama-3.1-8b"}, {"model": "model"}, {"model": "model: llama-3.1-8b"})
    asked = parse_query("largest model qlora h100", catalog, said)
    answer = estimate(asked, catalog).request.model
    assert catalog.model(answer).family == catalog.model("llama-3.1-8b").family


def test_a_largest_model_follow_up_whose_option_names_a_model_searches_its_family(
    catalog: Catalog,
) -> None:
    from adapters.query.parser import Said, apply_followup, parse_query

    asked = parse_query("largest model qlora h100", catalog)
    everything = estimate(asked, catalog).request.model
    said = Said({"model": "llama-3.1-8b"}, {"model": "model"}, {"model": "model: llama-3.1-8b"})
    followup = apply_followup(asked, "", catalog, said)
    answer = estimate(followup, catalog).request.model
    assert catalog.model(everything).family != catalog.model("llama-3.1-8b").family
    assert catalog.model(answer).family == catalog.model("llama-3.1-8b").family


def test_a_limit_question_with_an_option_stating_its_value_is_refused(catalog: Catalog) -> None:
    from adapters.query.errors import QueryError
    from adapters.query.parser import Said, parse_query

    said = Said({"seq_len": 4096}, {"seq_len": "seq"}, {"seq_len": "seq: 4096"})
    with pytest.raises(QueryError, match='"seq: 4096" conflicts with "max seq"'):
        parse_query("max seq 8b qlora rtx-4090", catalog, said)


def test_a_followup_asking_a_limit_and_stating_its_value_is_refused(catalog: Catalog) -> None:
    from adapters.query.errors import QueryError
    from adapters.query.parser import apply_followup, parse_query

    asked = parse_query("max seq 8b qlora rtx-4090", catalog)
    with pytest.raises(QueryError, match='"seq 8k" conflicts with "max seq"'):
        apply_followup(asked, "max seq seq 8k", catalog)
