"""Outside text echoed in replies (a Hub config's ``model_type`` and ``quant_method``, a
field of the wrong type, a checkpoint's dtype, a training config's values) is made inert
where it is read (:func:`catalog.echo.one_line`) and again at each front end's output
boundary: the terminal writes no control character, Discord shows a masked link as
written, Slack escapes ``<``, ``>`` and ``&``."""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from typing import Any

import pytest

from adapters.discord.embeds import estimate_embed, notice_embed
from adapters.report import Report
from adapters.slack.blocks import estimate_message
from adapters.terminal import printable, render_text
from adapters.trainconfig import read_config
from bot.service import Reply, Service
from catalog.echo import ECHO_CHARS, one_line
from catalog.hub import HubError, HubRef
from catalog.hub.checkpoint import CheckpointFormatError, count_from_header, count_from_index
from catalog.hub.families import map_config
from catalog.hub.resolver import HubResolver, MemoryCache
from catalog.hub.settings import HubSettings
from tests.fakes.hub_configs import LLAMA_3_1_8B, LLAMA_3_2_1B, QWEN2_5_7B_INSTRUCT

REF = HubRef("acme/model")
TITLE_ESCAPE = "\x1b]0;pwned\x07"
"""An OSC sequence that retitles the terminal window."""
HOSTILE = f"{TITLE_ESCAPE}\x1b[2J[click](https://evil.example) <!channel> @everyone\u202e"
"""Escape sequences, a masked link, a Slack mention and a right-to-left override."""
CONTROLS = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Control and bidirectional characters a terminal or a chat client acts on."""
MASKED_LINK = re.compile(r"(?<!\\)\[[^\]]*\]\(")
"""A masked link Discord renders: an unescaped ``[`` whose ``]`` is followed by ``(``."""




@pytest.fixture(scope="module")
def reply() -> Reply:
    return Service(workers=0).answer("8b lora 20M tokens")


def carrying(reply: Reply, text: str) -> Report:
    """``reply``'s report with ``text`` as its notes, warnings and assumptions."""
    assert reply.report is not None
    return dataclasses.replace(reply.report, notes=[text], warnings=[text], assumptions=[text])


def refusal(config: Any) -> str:
    with pytest.raises(HubError) as info:
        map_config(config, REF)
    return str(info.value)


def inert(text: str) -> bool:
    """No control character and no markdown link syntax left in ``text``."""
    return CONTROLS.search(text) is None and "](" not in text


# -- catalog.echo.one_line ---------------------------------------------------------------


def test_one_line_turns_escape_sequences_and_links_into_plain_text():
    assert one_line(HOSTILE) == ("]0;pwned [2J[click] (https://evil.example) <!channel> "
                                 "@everyone")


def test_one_line_reads_a_bounded_prefix_of_a_huge_field_and_marks_the_cut():
    line = one_line(" " * 4_000_000 + "x")

    assert line == "…"


def test_one_line_cuts_long_text_to_the_echo_limit():
    assert one_line("ab " * 10_000) == ("ab " * 40)[: ECHO_CHARS - 1] + "…"


# -- Hub fields echoed in messages -----------------------------------------------------------


def test_an_unsupported_model_type_is_echoed_as_plain_text():
    message = refusal({"model_type": HOSTILE})

    assert inert(message) and "not supported yet" in message


@pytest.mark.parametrize("value", [HOSTILE, [HOSTILE], {"a": HOSTILE}],
                         ids=["text", "list", "object"])
def test_a_field_of_the_wrong_type_is_echoed_as_plain_text(value):
    config = copy.deepcopy(LLAMA_3_1_8B.config)
    config["hidden_size"] = value

    message = refusal(config)

    assert inert(message) and "hidden_size must be" in message


def test_a_quant_method_is_kept_as_plain_text():
    config = copy.deepcopy(LLAMA_3_1_8B.config)
    config["quantization_config"] = {"quant_method": HOSTILE}

    mapped = map_config(config, REF)

    assert mapped.quantization is not None and inert(mapped.quantization)


def test_a_checkpoint_dtype_is_echoed_as_plain_text():
    arch = map_config(LLAMA_3_1_8B.config, REF).architecture
    with pytest.raises(CheckpointFormatError) as info:
        count_from_index({"metadata": {"total_size": 10}}, HOSTILE, arch)

    assert inert(str(info.value)) and "dtype" in str(info.value)


def test_an_index_total_size_of_text_is_echoed_as_plain_text():
    arch = map_config(LLAMA_3_1_8B.config, REF).architecture
    with pytest.raises(CheckpointFormatError) as info:
        count_from_index({"metadata": {"total_size": HOSTILE}}, "bfloat16", arch)

    assert inert(str(info.value))


def test_a_tensor_name_is_echoed_as_plain_text():
    arch = map_config(LLAMA_3_1_8B.config, REF).architecture
    header = json.dumps({HOSTILE: {"dtype": "BF16", "shape": "no"}}).encode()
    with pytest.raises(CheckpointFormatError) as info:
        count_from_header(header, arch)

    assert inert(str(info.value)) and "has no valid shape" in str(info.value)


async def test_a_commit_header_that_is_no_sha_is_not_repeated(hub):
    hub.add_real(LLAMA_3_2_1B).revisions["main"] = "[x](https://evil.example) <!channel>"
    resolver = HubResolver(HubSettings(endpoint=hub.base_url, timeout_s=2.0), MemoryCache())

    spec = await resolver.resolve(LLAMA_3_2_1B.repo)

    assert spec.hub is not None and spec.hub.commit is None


async def test_a_hostile_quant_method_reaches_every_front_end_inert(hub):
    config = {**copy.deepcopy(QWEN2_5_7B_INSTRUCT.config),
              "quantization_config": {"quant_method": HOSTILE}}
    hub.add("acme/quantized", config)
    service = Service(workers=0, hub=HubSettings(endpoint=hub.base_url, timeout_s=2.0))

    reply = await service.answer_async("acme/quantized lora 20M tokens")

    assert reply.report is not None
    note = next(n for n in reply.report.notes if "checkpoint is quantized" in n)
    assert inert(note) and "<!channel>" in note
    assert CONTROLS.search(render_text(reply.report)) is None
    assert MASKED_LINK.search(estimate_embed(reply.report).description or "") is None
    assert "<!channel>" not in json.dumps(estimate_message(reply))


# -- training configs ------------------------------------------------------------------------


def test_a_training_configs_values_are_echoed_as_plain_text():
    text = (
        "base_model: meta-llama/Llama-3.1-8B\nadapter: lora\n"
        'lora_target_modules: ["\\e]0;pwned\\a[x](https://evil.example)"]\n'
        '"\\e[2J[y](https://evil.example)": 1\n'
    )

    config = read_config(text, "c")

    echoed = [*(k.value for k in config.read), *config.ignored, *config.notes]
    assert all(inert(t) for t in echoed)
    assert any("(https://evil.example)" in t for t in echoed)


# -- the terminal ----------------------------------------------------------------------------


def test_printable_keeps_line_breaks_and_turns_controls_into_spaces():
    assert printable("a\x1b[31mb\nc\x07\u202ed\r\x9b2J") == "a [31mb\nc d  2J"


def test_printable_leaves_plain_text_unchanged():
    text = "8b · LoRA\n  note: 34.4 GB per GPU…\n"

    assert printable(text) == text


def test_the_terminal_report_writes_no_control_character_from_outside(reply):
    text = render_text(carrying(reply, HOSTILE))

    assert CONTROLS.search(text) is None and "pwned" in text


# -- Discord ---------------------------------------------------------------------------------


def test_a_masked_link_in_a_note_shows_literally_in_the_embed(reply):
    embed = estimate_embed(carrying(reply, "[click](https://evil.example)"))

    description = embed.description or ""
    assert "\\[click\\](https://evil.example)" in description
    assert MASKED_LINK.search(description) is None


def test_a_masked_link_in_a_warning_or_assumption_shows_literally(reply):
    embed = estimate_embed(carrying(reply, "[click](https://evil.example)"))

    values = [f.value or "" for f in embed.fields if f.name in ("Warnings", "Assumptions")]
    assert len(values) == 2 and all(MASKED_LINK.search(v) is None for v in values)
    assert all("click" in v for v in values)


def test_a_masked_link_in_a_notice_does_not_render():
    embed = notice_embed("I couldn't draw the chart: [click](https://evil.example)")

    assert "](" not in (embed.description or "") and "click" in (embed.description or "")


# -- Slack -----------------------------------------------------------------------------------


def test_slack_escapes_links_and_mentions_in_notes_warnings_and_assumptions(reply):
    hostile = "<https://evil.example|click> <!channel> <@U123> & co"

    hostile_reply = dataclasses.replace(reply, report=carrying(reply, hostile))

    message = json.dumps(estimate_message(hostile_reply))

    for live in ("<https://evil.example|click>", "<!channel>", "<@U123>", " & co"):
        assert live not in message
    assert message.count("&lt;!channel&gt;") >= 3


def test_the_command_line_writes_no_control_character_in_an_error() -> None:
    import io

    from adapters.cli import main

    out, err = io.StringIO(), io.StringIO()
    main(["--config", "/nonexistent/\x1b]0;owned\x07\x1b[31mx.yaml"], out, err)
    written = out.getvalue() + err.getvalue()
    assert written and "\x1b" not in written and "\x07" not in written
