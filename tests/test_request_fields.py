"""Request-field metadata (engine.request.FieldMeta) declared on every field, and every
per-field table of the front ends built from it: change lines, value display, Discord
custom-id keys, option conflicts, the parser's field names and examples."""

from __future__ import annotations

import json

import pytest

from adapters.discord import ids
from adapters.discord.embeds import embeds_for
from adapters.parse import QueryError, parse_query
from adapters.query.fields import FIELDS as PARSER_FIELDS
from adapters.query.parser import Said, merge_said
from adapters.slack.blocks import message_for
from adapters.values import show_value
from bot.replies import describe_changes
from bot.service import Service
from catalog.loader import default_catalog
from engine import Request
from engine.fields import Display, FieldMeta
from engine.request import field_meta, field_metas, has_field_meta

FIELDS = list(Request.model_fields)
NOT_TYPED = {"model", "model_pick"}
"""Fields no query word sets on its own (every query names a model; ``model_pick`` is
recorded by the parser)."""


@pytest.mark.parametrize("name", FIELDS)
def test_every_request_field_declares_its_metadata(name):
    assert has_field_meta(name), (
        f"Request.{name} has no FieldMeta: declare it on the field in engine/request.py "
        "(label, noun, key, example, display)"
    )


def test_custom_id_keys_are_single_distinct_characters():
    keys = [meta.key for meta in field_metas().values()]

    assert all(len(key) == 1 and key.isalnum() for key in keys)
    assert len(set(keys)) == len(keys)


def test_change_labels_are_distinct():
    labels = [meta.label for meta in field_metas().values() if meta.label is not None]

    assert len(set(labels)) == len(labels)


@pytest.mark.parametrize("name", FIELDS)
def test_every_example_is_a_query_that_parses(name):
    request = parse_query(field_meta(name).example, default_catalog())

    if name not in NOT_TYPED:
        assert getattr(request, name) != getattr(Request(model=request.model), name)


@pytest.mark.parametrize("name", sorted(set(FIELDS) - NOT_TYPED))
def test_a_followup_that_changes_a_field_has_its_change_line(name):
    meta = field_meta(name)
    new = parse_query(meta.example, default_catalog())
    old = new.model_copy(update={name: Request.model_fields[name].default})

    changes = describe_changes(old, new)

    assert [line for line in changes if line.startswith(f"{meta.label} ")], changes


@pytest.mark.parametrize("name", FIELDS)
def test_every_field_has_a_custom_id_key(name):
    assert ids._FIELD_KEYS[name] == field_meta(name).key


@pytest.mark.parametrize("name", FIELDS)
def test_the_parser_names_every_field_as_its_metadata_says(name):
    meta = field_meta(name)

    assert (PARSER_FIELDS[name].label, PARSER_FIELDS[name].example) == (meta.noun, meta.example)


def test_option_conflicts_name_the_field_by_its_noun():
    with pytest.raises(QueryError, match="The query says sequence length 8,192 but the seq "
                                         "option says 4,096"):
        merge_said({"seq_len": 8192}, Said({"seq_len": 4096}, {"seq_len": "seq"}), {})


def test_metadata_is_read_from_the_field_and_unknown_names_raise():
    meta = field_meta("seq_len")

    assert isinstance(meta, FieldMeta) and (meta.label, meta.key) == ("seq", "q")
    with pytest.raises(KeyError):
        field_meta("no_such_field")


@pytest.mark.parametrize(
    ("name", "value", "text"),
    [
        ("seq_len", 8192, "8,192"),
        ("dataset_tokens", 50_000_000, "50M"),
        ("mfu", 0.4, "40%"),
        ("price_per_gpu_hour", 2.5, "$2.50/hr"),
        ("budget_usd", 500.0, "$500"),
        ("deadline_hours", 48.0, "48 hours"),
        ("gpu_memory_gb", 24.0, "24 GB"),
        ("lora_dropout", 0.05, "0.05"),
        ("method", None, "default (LoRA)"),
        ("gpu_count", None, "auto"),
        ("flash_attention", False, "off"),
    ],
)
def test_values_read_as_their_display_says(name, value, text):
    assert show_value(name, value) == text


def test_every_display_kind_is_used():
    used = {meta.display for meta in field_metas().values()}

    assert used == set(Display)


# -- issue 15 point 9: accumulation and dropout follow-ups show what changed -----------------


@pytest.fixture(scope="module")
def followup():
    service = Service()
    first = service.answer("8b lora 10M tokens").request
    return service.answer("what if accum 8 and dropout 0.05", first)


def test_accum_and_dropout_followups_list_their_changes(followup):
    assert followup.changes == ["LoRA dropout 0 → 0.05", "accumulation 1 → 8"]


def test_slack_shows_the_changed_line_for_accum_and_dropout(followup):
    message = json.dumps(message_for(followup), ensure_ascii=False)

    assert "*Changed* LoRA dropout 0 → 0.05, accumulation 1 → 8" in message


def test_discord_shows_the_changed_line_for_accum_and_dropout(followup):
    embed = embeds_for(followup)[0]

    assert "**What if:** LoRA dropout 0 → 0.05, accumulation 1 → 8" in (embed.description or "")


@pytest.mark.parametrize(("before", "after", "line"), [
    ({"framework": "torchtitan"}, {"framework": "torchtitan", "method": "lora"},
     "method default (Full) → LoRA"),
    ({}, {"framework": "torchtitan"}, "method default (LoRA) → default (Full)"),
    ({"framework": "torchtitan"}, {"framework": "hf"}, "method default (Full) → default (LoRA)"),
])
def test_a_method_left_unsaid_reads_as_the_default_the_framework_runs(
    before: dict[str, str], after: dict[str, str], line: str
) -> None:
    old = Request(model="llama-3.1-8b", **before)  # type: ignore[arg-type]
    new = Request(model="llama-3.1-8b", **after)  # type: ignore[arg-type]
    assert line in describe_changes(old, new)
