"""Block Kit rendering: the largest reports stay within Slack's limits, user text is
escaped, the controls carry what a click needs."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from adapters.report import Table
from adapters.slack.blocks import (
    ACTION_CHART,
    ACTION_GPU,
    ACTION_SEQ,
    button_value,
    error_message,
    escape,
    estimate_message,
    mentions_bot,
    mentions_other_user,
    method_from_action,
    slack_to_plain,
    text_message,
)
from bot.service import Reply, ReplyKind, Service, request_from_json
from engine import Method, Request
from engine.constants import MAX_SEQ_LEN
from tests.fakes import validate_blocks

# The biggest real reports: MoE and 405B models, napkin mode, a named card far too
# small, every memory switch off, huge sequence, synthetic 2000B.
LARGE_QUERIES = [
    "deepseek-v3 full 2x rtx-3090 fp32 sgd",
    "qwen3-235b-a22b full 1T tokens 8x t4 no-flash no-ckpt seq 128k",
    "mixtral-8x22b napkin t4",
    "llama-3.1-405b qlora a10 zero1 bs 64 seq 32k mfu 1%",
    "2000b full 2x rtx-3090 fp32 sgd offload",
    "0.5b lora gaudi2 offload 1k tokens",
    # the longest framework lines: hf QLoRA's FP32 stream, litgpt's separate head
    "llama-3.1-405b qlora trl a10 zero1 bs 64 seq 32k 5M tokens",
    "gemma-2b full litgpt fsdp 4x a10g accum 8 5M tokens",
]


@pytest.fixture(scope="module")
def service() -> Service:
    return Service(workers=0)


def context_texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for b in blocks if b["type"] == "context" for e in b["elements"]]


def check_all_limits(message: dict[str, Any]) -> None:
    blocks = message["blocks"]
    assert validate_blocks(blocks) == []
    # Limits validate_blocks leaves to Slack's text-object rules: a mrkdwn text object
    # holds 3,000 characters, a context block 10 of them.
    assert all(1 <= len(t) <= 3000 for t in context_texts(blocks))
    assert 1 <= len(message["text"]) <= 3000


@pytest.mark.parametrize("query", LARGE_QUERIES)
def test_largest_real_reports_respect_block_kit_limits(service, query):
    reply = service.answer(query)
    assert reply.kind is ReplyKind.ESTIMATE, reply.text

    message = estimate_message(reply, asked_by="U1", query=query)

    check_all_limits(message)
    kinds = [b["type"] for b in message["blocks"]]
    assert kinds[:3] == ["header", "context", "section"] and kinds[-1] == "actions"


def test_a_monster_report_is_cut_to_fit_not_broken(service):
    reply = service.answer("deepseek-v3 full 2x rtx-3090 fp32 sgd")
    report = reply.report
    wide = ["x" * 60] * len(report.cards.columns)
    monster = dataclasses.replace(
        report,
        title="T" * 400,
        subtitle="s<&>" * 1000,
        headline="H" * 5000,
        cost_line="$" * 3000,
        notes=["n" * 500] * 20,
        warnings=[f"warning {i} <!channel> " + "w" * 400 for i in range(60)],
        assumptions=["a" * 900] * 40,
        cards=Table(report.cards.columns, [wide] * 300, report.cards.align),
        what_if=Table(report.what_if.columns, [["y" * 80] * 5] * 400, report.what_if.align),
        top_gpus=[(f"gpu{i}", "L" * 200) for i in range(300)],
    )
    big = dataclasses.replace(reply, report=monster, changes=["c" * 400] * 30)

    message = estimate_message(big, asked_by="U1", query="q<" * 2000, note="n" * 4000)

    check_all_limits(message)
    dumped = json.dumps(message)
    assert "<!channel>" not in dumped
    assert "more warnings" in dumped and "more" in dumped
    select = message["blocks"][-1]["elements"][-1]
    assert select["action_id"] == ACTION_GPU and len(select["options"]) == 100


def test_cards_table_shows_at_most_max_cards_rows(service):
    reply = service.answer("8b qlora 50M tokens")
    assert len(reply.report.cards.rows) > 3

    message = estimate_message(reply, max_cards=3)

    cards = next(b for b in message["blocks"]
                 if b["type"] == "section" and b["text"]["text"].startswith("*Cards*"))
    body = cards["text"]["text"].split("```")[1].splitlines()
    assert len(body) == 1 + 3 + 1 and body[-1].endswith("more cards")


def test_fallback_text_is_the_headline_escaped(service):
    reply = service.answer("70b qlora 50M tokens h100")

    message = estimate_message(reply)

    assert message["text"].startswith("Llama 3.1 70B · QLoRA: ")
    assert "GB per GPU" in message["text"] and "$" in message["text"]


def test_buttons_switch_to_the_other_methods_and_double_the_sequence(service):
    reply = service.answer("70b lora seq 4k")

    actions = estimate_message(reply)["blocks"][-1]
    ids = [e["action_id"] for e in actions["elements"]]

    assert ids == ["ftcost_method_full", "ftcost_method_qlora", ACTION_SEQ, ACTION_CHART,
                   ACTION_GPU]
    seq = actions["elements"][2]
    assert seq["text"]["text"] == "2× seq (8,192)"
    assert request_from_json(seq["value"]) == reply.request
    assert method_from_action("ftcost_method_qlora") is Method.QLORA
    assert method_from_action(ACTION_SEQ) is None


def test_no_double_seq_button_at_the_maximum_sequence(service):
    reply = service.estimate(Request(model="llama-3.1-8b", seq_len=MAX_SEQ_LEN // 2 + 1))
    ids = [e["action_id"] for e in estimate_message(reply)["blocks"][-1]["elements"]]

    assert ACTION_SEQ not in ids


def test_card_select_omits_the_card_already_asked_for(service):
    reply = service.answer("8b qlora l4")

    select = estimate_message(reply)["blocks"][-1]["elements"][-1]

    values = [o["value"] for o in select["options"]]
    assert "l4" not in values and len(values) == len(set(values))


def test_button_value_round_trips_and_fits(service):
    request = service.answer("70b lora r64 attn 100M tokens 4x h100 $2.50/hr seq 8k bs 4").request

    value = button_value(request)

    assert 0 < len(value) <= 2000
    assert request_from_json(value) == request


def test_help_and_listings_fit_and_long_text_is_split(service):
    for word in ("help", "models", "gpus"):
        message = text_message(service.answer(word))
        check_all_limits(message)

    huge = Reply(ReplyKind.MODELS, text="\n".join("m<odel> " * 12 for _ in range(2000)),
                 title="Models")
    message = text_message(huge)

    check_all_limits(message)
    assert len(message["blocks"]) <= 50
    assert "more lines" in json.dumps(message)
    assert "<odel>" not in json.dumps(message)


def test_error_message_names_the_word_and_escapes_the_query(service):
    reply = service.answer("70b qlorra <@U99> & co")

    message = error_message(reply, query="70b qlorra <@U99> & co")

    text = message["blocks"][0]["text"]["text"]
    assert "qlorra" in text and "Example:" in text
    assert "<@U99>" not in json.dumps(message) and "&lt;@U99&gt; &amp; co" in text
    check_all_limits(message)


def test_escape_handles_the_three_control_characters():
    assert escape("<!channel> & <@U1> <https://x|y>") == (
        "&lt;!channel&gt; &amp; &lt;@U1&gt; &lt;https://x|y&gt;"
    )


@pytest.mark.parametrize(
    ("raw", "plain"),
    [
        ("<@UBOT> 8b lora", "8b lora"),
        ("<@UBOT|ftcost> 8b   lora", "8b lora"),
        ("70b <!channel> h100", "70b @channel h100"),
        ("70b <!subteam^S1|@team>", "70b @team"),
        ("cc <!here> 8b", "cc @here 8b"),
        ("cc <!everyone|everyone>", "cc @everyone"),
        ("by <!date^1392734382^{date}|Feb 18> 8b", "by Feb 18 8b"),
        ("by <!date^1392734382^{date_short}^https://example.com|Feb 18>", "by Feb 18"),
        ("cc <@U2|@bob>", "cc @bob"),
        ("on <#C1|general>", "on #general"),
        ("see <https://example.com|docs>", "see docs"),
        ("seq &lt;8k&gt; &amp; more", "seq <8k> & more"),
        ("cc <@U2>", "cc @U2"),
    ],
)
def test_slack_to_plain(raw, plain):
    assert slack_to_plain(raw, "UBOT") == plain


def test_mention_detection():
    assert mentions_bot("<@UBOT> hi", "UBOT") and not mentions_bot("<@U2> hi", "UBOT")
    assert mentions_other_user("<@U2> hi", "UBOT") and not mentions_other_user("<@UBOT>", "UBOT")
    assert not mentions_bot("hi", None)


@pytest.mark.parametrize(
    "text",
    ["<!subteam^S1|@gpu-team> 8b", "<!subteam^S1> 8b", "<!channel> 8b", "<!here> 8b",
     "<!here|here> 8b", "<!everyone> 8b", "8b <!channel|@channel>"],
)
def test_a_group_or_broadcast_mention_mentions_someone_else(text):
    assert mentions_other_user(text, "UBOT")
    assert mentions_other_user(text, None)


@pytest.mark.parametrize(
    "text",
    ["<!date^1392734382^{date}|Feb 18> 8b", "<#C1|general> 8b", "<https://x.com|docs> 8b",
     "<@UBOT> 8b", "channel here everyone 8b", "&lt;!here&gt; 8b"],
)
def test_dates_channels_links_and_plain_words_mention_no_one_else(text):
    assert not mentions_other_user(text, "UBOT")


def test_a_long_pasted_question_is_quoted_back_cut_before_it_is_escaped(service):
    query = "8b lorra " + "& " * 995  # 1,999 characters: every & escapes to five
    message = error_message(service.answer(query), query=query)

    text = message["blocks"][0]["text"]["text"]
    assert text.endswith("…`")  # cut inside the quote, the quote still closed
    check_all_limits(message)


def test_a_long_pasted_question_fits_the_estimates_context_line(service):
    query = "8b lora " + "& " * 995  # "&" is filler: an estimate
    message = estimate_message(service.answer(query), asked_by="U1", query=query)

    context = [e["text"] for b in message["blocks"] if b["type"] == "context"
               for e in b["elements"]]
    asked = [text for text in context if text.startswith("<@U1> asked")]
    assert asked and asked[0].endswith("…`")
    check_all_limits(message)
