"""Every number the query language reads has a sane lower and upper bound.

A value outside its bound is refused with a message that names the word, states the
bound and shows how to say it right (issue 14, item 5: ``mfu 1e-320`` printed
``"gpu_hours": Infinity``; ``1e-320 epochs`` priced the run at $0.00). And whatever a
query says, the JSON document carries only finite numbers.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adapters.parse import QueryError, parse_query
from catalog.loader import default_catalog
from engine import estimate
from engine.constants import MAX_MFU, MIN_EPOCHS, MIN_MFU, MIN_PRICE_PER_GPU_HOUR
from engine.request import Request

CATALOG = default_catalog()

OUT_OF_BOUNDS = [
    # (query, the word quoted back, a fragment of the bound)
    ("8b lora 50M tokens mfu 1e-320", "1e-320", "between 1% and 100%"),
    ("8b lora 50M tokens mfu 1e-300", "1e-300", "between 1% and 100%"),
    ("8b lora 50M tokens mfu 0.5%", "0.5%", "between 1% and 100%"),
    ("8b lora 50M tokens 1e-320 epochs", "1e-320", "between 0.001 and 1,000"),
    ("8b lora 50M tokens 1e300 epochs", "1e300", "between 0.001 and 1,000"),
    ("8b lora 50M tokens $0.001/hr", "$0.001/hr", "between $0.01 and $1,000"),
    ("8b lora 50M tokens $1e9/hr", "$1e9/hr", "between $0.01 and $1,000"),
    ("8b lora dropout 0.95", "0.95", "between 0 and 0.9"),
    ("8b lora 1e-320 tokens", "1e-320", "token count"),
    ("8b lora 2e15 tokens", "2e15", "token count"),
    ("8b lora r 1e6", "1e6", "LoRA rank"),
    ("8b lora seq 1e9", "1e9", "sequence length"),
    ("8b lora bs 1e5", "1e5", "micro-batch"),
    ("8b lora accum 1e5", "1e5", "gradient accumulation"),
    ("8b full 10000000 h100", "10000000", "GPU count"),
    ("0.01b lora", "0.01b", "model size"),
]


@pytest.mark.parametrize(("text", "word", "bound"), OUT_OF_BOUNDS,
                         ids=[t for t, _, _ in OUT_OF_BOUNDS])
def test_a_number_outside_its_bound_is_refused_with_the_bound_and_an_example(
    text: str, word: str, bound: str
) -> None:
    with pytest.raises(QueryError) as caught:
        parse_query(text, CATALOG)
    message = caught.value.message
    assert caught.value.word == word
    assert bound in message
    assert "Example: " in message


def test_the_bounds_are_the_request_models_own() -> None:
    fields = Request.model_fields
    assert _bounds(fields["mfu"].metadata) == {"ge": MIN_MFU, "le": MAX_MFU}
    assert _bounds(fields["epochs"].metadata)["ge"] == MIN_EPOCHS
    assert _bounds(fields["price_per_gpu_hour"].metadata)["ge"] == MIN_PRICE_PER_GPU_HOUR


def _bounds(metadata: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in metadata:
        for key in ("ge", "gt", "le", "lt"):
            if hasattr(item, key):
                out[key] = getattr(item, key)
    return out


def test_values_at_the_bounds_are_accepted() -> None:
    request = parse_query("8b lora 50M tokens mfu 1% 0.001 epochs $0.01/hr dropout 0.9",
                          CATALOG)
    assert (request.mfu, request.epochs) == (MIN_MFU, MIN_EPOCHS)
    assert request.price_per_gpu_hour == MIN_PRICE_PER_GPU_HOUR
    assert request.lora_dropout == 0.9


# --- the JSON document carries only finite numbers ---------------------------------

EXTREMES = ["1e-320", "1e-300", "0.001", "0.01", "1", "1e3", "1e15", "1e300", "1e308"]
PHRASES = st.one_of(
    st.sampled_from(["8b", "70b", "0.1b", "2000b", "405b", "mixtral-8x7b", "deepseek-v3"]),
    st.sampled_from(["full", "lora", "qlora", "napkin", "zero3", "offload", "no-ckpt",
                     "fp8", "h100", "t4", "rtx-4090", "8x h100", "100000 h100", "fsdp"]),
    st.builds(lambda n, unit: f"{n} {unit}", st.sampled_from(EXTREMES),
              st.sampled_from(["tokens", "epochs", "mfu", "seq", "bs", "accum", "r",
                               "dropout", "/hr"])),
    st.builds(lambda n: f"${n}/hr", st.sampled_from(EXTREMES)),
)


def _numbers(doc: object) -> list[float]:
    if isinstance(doc, bool) or doc is None or isinstance(doc, str):
        return []
    if isinstance(doc, int | float):
        return [float(doc)]
    if isinstance(doc, dict):
        return [n for value in doc.values() for n in _numbers(value)]
    if isinstance(doc, list | tuple):
        return [n for value in doc for n in _numbers(value)]
    return []


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(PHRASES, min_size=1, max_size=6))
def test_every_number_in_the_json_of_any_parsed_query_is_finite(phrases: list[str]) -> None:
    try:
        request = parse_query("8b " + " ".join(phrases), CATALOG)
    except QueryError:
        return
    doc = estimate(request, CATALOG).to_json()
    assert all(math.isfinite(n) for n in _numbers(doc))
    json.dumps(doc, allow_nan=False)  # strict JSON: no Infinity, no NaN
