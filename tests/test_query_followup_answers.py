"""Follow-ups on a ``largest model`` answer, one behaviour per test: another question
(``fewest cards``, ``max seq``) is asked of the model the answer found, not of the
search's seed; the same question (``what if qlora``) searches again; a model named asks
at it."""

from __future__ import annotations

from functools import cache

from adapters.parse import apply_followup, parse_query
from bot.service import Service
from catalog.loader import default_catalog
from engine.choices import ModelPick, Solve
from engine.estimate import answered, estimate
from engine.request import Request

CAT = default_catalog()
LARGEST = "largest model lora on 2x 4090 50M tokens"


@cache
def _question(text: str) -> Request:
    return parse_query(text, CAT)


@cache
def _found(text: str) -> str:
    """The model the ``largest model`` question ``text`` answers."""
    return answered(_question(text), CAT).model


def test_the_largest_model_answer_is_not_the_seed() -> None:
    assert _found(LARGEST) != _question(LARGEST).model  # else the tests below prove nothing


def test_fewest_cards_after_largest_model_keeps_the_model_found() -> None:
    after = apply_followup(_question(LARGEST), "fewest cards", CAT)
    assert (after.solve, after.model) == (Solve.GPU_COUNT, _found(LARGEST))


def test_the_kept_model_is_named_exactly() -> None:
    after = apply_followup(_question(LARGEST), "fewest cards", CAT)
    assert after.model_pick is ModelPick.EXACT


def test_max_seq_after_largest_model_keeps_the_model_found() -> None:
    after = apply_followup(_question(LARGEST), "max seq", CAT)
    assert (after.solve, after.model) == (Solve.SEQ_LEN, _found(LARGEST))


def test_the_same_question_searches_again() -> None:
    after = apply_followup(_question(LARGEST), "what if qlora", CAT)
    assert after.solve is Solve.MODEL
    assert after.model_pick is ModelPick.NONE
    assert after.model == _question(LARGEST).model  # the seed, not the earlier answer


def test_a_model_named_asks_at_it() -> None:
    after = apply_followup(_question(LARGEST), "fewest cards 8b", CAT)
    assert after.model == "llama-3.1-8b"


def test_a_family_search_keeps_the_model_it_found() -> None:
    family = "largest llama qlora on a 4090"
    after = apply_followup(_question(family), "fewest cards", CAT)
    assert after.model == _found(family)


def test_max_seq_after_a_repeated_search_keeps_the_second_answer() -> None:
    first = _question("largest model qlora 24gb")
    second = apply_followup(first, "what if seq 8k", CAT)
    found = answered(second, CAT).model
    after = apply_followup(second, "max seq", CAT)
    assert (after.solve, after.model) == (Solve.SEQ_LEN, found)


def test_an_answer_that_found_no_model_leaves_the_seed() -> None:
    nothing = _question("largest model full seq 1M on a t4 50M tokens")
    solution = estimate(nothing, CAT).solution
    assert solution is not None and solution.value is None  # nothing fits
    after = apply_followup(nothing, "fewest cards", CAT)
    assert after.model == nothing.model


def test_the_chat_answers_fewest_cards_for_the_model_found() -> None:
    service = Service(workers=0)
    first = service.answer(LARGEST, None)
    reply = service.answer("fewest cards", first.request)
    assert first.estimate is not None and reply.estimate is not None
    assert reply.estimate.request.model == first.estimate.request.model == _found(LARGEST)
