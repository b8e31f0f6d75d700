"""The worked figures docs/model.md quotes in prose are the engine's: each is recomputed
here, so a change to the time model that moves one fails until the text is updated."""

from __future__ import annotations

from pathlib import Path

import pytest

from adapters.parse import parse_query
from engine import estimate

MODEL_MD = (Path(__file__).parent.parent / "docs" / "model.md").read_text()


def rate(query: str) -> str:
    """Tokens/s per GPU of the query's lead option, as the doc writes it."""
    timing = estimate(parse_query(query)).options[0].timing
    assert timing.tokens_per_second is not None
    return f"{timing.tokens_per_second:,.0f}"


def gpu_hours(query: str) -> str:
    timing = estimate(parse_query(query)).options[0].timing
    assert timing.gpu_hours is not None
    return f"{timing.gpu_hours:.1f}"


@pytest.mark.parametrize(("text", "figures"), [
    ("{} tokens/s per GPU, {} with `fa3`", (
        lambda: rate("llama-3.1-8b lora bs 4 seq 8192 b200 100M tokens"),
        lambda: rate("llama-3.1-8b lora bs 4 seq 8192 b200 fa3 100M tokens"))),
    ("64x H100, FSDP: {} tokens/s per GPU\n  without TP, {} with `tp 8`", (
        lambda: rate("llama-3.1-70b full seq 8192 64x h100 fsdp 1B tokens"),
        lambda: rate("llama-3.1-70b full seq 8192 64x h100 fsdp tp 8 1B tokens"))),
    ("batch 1 x 2,048: {} -> {} GPU-hours for 50M tokens", (
        lambda: gpu_hours("8b lora 50M tokens h100"),
        lambda: gpu_hours("8b dora 50M tokens h100"))),
])
def test_a_worked_figure_in_the_model_doc_is_the_engines(text, figures) -> None:
    assert text.format(*(f() for f in figures)) in MODEL_MD
