"""FP32 weights are timed with 16-bit matmuls under autocast; a reply that says FP32 says
so, and how much slower training without autocast runs."""

from __future__ import annotations

from adapters.parse import parse_query
from engine import estimate
from engine.model_caveats import FP32_TIME_CAVEAT


def warnings_of(query: str) -> list[str]:
    return estimate(parse_query(query)).warnings


def test_fp32_weights_are_said_to_be_timed_under_autocast() -> None:
    assert FP32_TIME_CAVEAT in warnings_of("8b lora 50M tokens 1x h100 fp32")


def test_accelerate_without_mixed_precision_gets_the_caveat() -> None:
    query = "accelerate launch --mixed_precision no 8b full 8x h100 50M tokens"

    assert FP32_TIME_CAVEAT in warnings_of(query)


def test_the_default_precision_gets_no_caveat() -> None:
    assert FP32_TIME_CAVEAT not in warnings_of("8b lora 50M tokens 1x h100")


def test_an_untimed_fp32_question_gets_no_time_caveat() -> None:
    assert FP32_TIME_CAVEAT not in warnings_of("8b lora 1x h100 fp32")
