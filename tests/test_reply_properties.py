"""Properties of whole replies, checked on generated questions.

* A question built from the language's own words, and a follow-up on its answer, get a
  reply that renders in the terminal, as Slack blocks and as Discord embeds within each
  platform's limits: never an exception (a stateless optimizer once crashed the `pure bf16`
  tip: `8b full sgd trl`).
* Any request the request model accepts, however its fields combine, is estimated and
  rendered the same way, and its JSON document serializes.
"""

from __future__ import annotations

import enum
import json
import typing
from typing import Any

import discord
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from adapters.discord.embeds import embeds_for
from adapters.query.vocabulary import FLAGS, KEYWORDS
from adapters.slack.blocks import message_for
from adapters.terminal import render_text
from bot.service import Reply, ReplyKind, Service
from engine.request import Request
from tests.fakes.discord_server import validate_message as discord_problems
from tests.fakes.slack_api import validate_message as slack_problems

SERVICE = Service(workers=0)
MODELS = ["8b", "70b", "1b", "qwen2.5-7b", "mistral", "gemma", "phi-3-mini", "mixtral"]
AMOUNTS = ["50M tokens", "1B tokens", "10k samples of 512 tokens", ""]
EXTRA = sorted(KEYWORDS) + sorted(FLAGS) + [
    "h100", "2x a100", "8x h100", "4090", "3x 3090", "16x gh200", "mi300x", "b200", "seq 8k",
    "seq 512", "bs 8", "accum 4", "r64", "tp 2", "cp 2", "2 nodes of 8x h100", "under $100",
    "within 2 days", "max seq", "fewest cards", "$2/hr", "dropout 0.1", "epochs 1", "chart",
]
SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def renders(reply: Reply) -> None:
    """The reply on every front end, within its platform's limits."""
    if reply.kind is ReplyKind.ESTIMATE:
        assert reply.report is not None
        render_text(reply.report, 100)
    assert slack_problems(message_for(reply)) == []
    embeds: list[discord.Embed] = embeds_for(reply)
    assert discord_problems({"embeds": [e.to_dict() for e in embeds]}) == []


questions = st.tuples(
    st.sampled_from(MODELS), st.sampled_from(["full", "lora", "qlora", ""]),
    st.sampled_from(AMOUNTS), st.lists(st.sampled_from(EXTRA), max_size=5),
).map(lambda parts: " ".join([*parts[:3], *parts[3]]))
follow_ups = st.lists(st.sampled_from(EXTRA + MODELS), min_size=1, max_size=3).map(" ".join)


@SETTINGS
@given(questions, follow_ups)
def test_any_question_and_follow_up_render_on_every_front_end(text: str, then: str) -> None:
    reply = SERVICE.answer(text)
    renders(reply)
    if reply.kind is ReplyKind.ESTIMATE:
        renders(SERVICE.answer(then, previous=reply.request))


def _enum_of(annotation: Any) -> type[enum.Enum] | None:
    for arg in typing.get_args(annotation) or (annotation,):
        if isinstance(arg, type) and issubclass(arg, enum.Enum):
            return arg
    return None


def _values(name: str, annotation: Any) -> st.SearchStrategy[Any]:
    """Values of one request field: its enum's members, or numbers across its range."""
    members = _enum_of(annotation)
    if members is not None:
        return st.sampled_from(list(members))
    if name == "model":
        return st.sampled_from(sorted(SERVICE.catalog.models))
    if name == "gpu":
        return st.sampled_from(sorted(SERVICE.catalog.gpus))
    kinds = typing.get_args(annotation) or (annotation,)
    if bool in kinds:
        return st.booleans()
    if int in kinds:
        return st.sampled_from([1, 2, 3, 4, 8, 16, 64, 512, 4096, 32768, 10**6, 10**9])
    if float in kinds:
        return st.sampled_from([0.01, 0.05, 0.35, 0.5, 1.0, 2.5, 10.0, 1e3, 1e6])
    return st.none()


FIELDS = {name: _values(name, f.annotation) for name, f in Request.model_fields.items()}
requests = st.dictionaries(st.sampled_from(sorted(FIELDS)), st.none(), max_size=12).flatmap(
    lambda keys: st.fixed_dictionaries({k: FIELDS[k] for k in keys})
)


@SETTINGS
@given(st.sampled_from(sorted(SERVICE.catalog.models)), requests)
def test_any_valid_request_is_estimated_and_rendered(model: str, fields: dict[str, Any]) -> None:
    try:
        request = Request(**{**fields, "model": model})
    except (ValidationError, ValueError):
        return  # the model refuses the combination: the query language says why
    reply = SERVICE.estimate(request)
    renders(reply)
    if reply.estimate is not None:
        json.dumps(reply.estimate.to_json())
