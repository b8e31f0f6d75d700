"""The Slack app end to end in HTTP mode: the real bolt app served by the bot's aiohttp
server on 127.0.0.1, a local fake of the Slack Web API, properly signed requests."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from adapters.slack.blocks import (
    ACTION_CHART,
    ACTION_GPU,
    ACTION_SEQ,
    ACTIONS_BLOCK_ID,
    FRAMEWORK_BLOCK_ID,
)
from bot.config import Config
from bot.config_load import load_config
from bot.ratelimit import RateLimiter
from bot.store import ThreadKey
from tests.fakes import (
    FakeSlack,
    app_mention_event,
    block_action_body,
    event_body,
    message_event,
    request_headers,
    slash_command_body,
    validate_blocks,
)
from tests.fakes.slack_signing import BOT_ID, BOT_USER_ID
from tests.slack_harness import BOT_TOKEN, SECRET, Harness, StartBot, bot_env, starting

QUERY = "70b qlora 50M tokens h100"


def bot_config(slack: FakeSlack, store: Path, tmp_path: Path, **slack_settings: Any) -> Config:
    yml = tmp_path / "bot.yml"
    settings = {"host": "127.0.0.1", **slack_settings}
    yml.write_text(json.dumps({"slack": settings, "log": {"level": "DEBUG"}}))  # JSON is YAML
    return load_config(yml, bot_env(slack, store))


@pytest.fixture
async def start_bot(slack: FakeSlack, tmp_path: Path) -> AsyncIterator[StartBot]:
    """``await start_bot(store=None, **slack_settings)``: a bot on that state store (else one
    in ``tmp_path``) with those ``slack:`` settings."""

    def config_for(store: Path | None = None, **slack_settings: Any) -> Config:
        return bot_config(slack, store or tmp_path / "state.sqlite3", tmp_path, **slack_settings)

    async with starting(config_for) as start:
        yield start


async def slash(bot: Harness, slack: FakeSlack, text: str = QUERY, channel: str = "C1") -> str:
    """Run a slash command that posts an estimate; return the estimate's ts."""
    status, _ = await bot.post(
        slash_command_body(text, channel_id=channel, response_url=slack.response_url(channel))
    )
    assert status == 200
    await bot.settle()
    posted = slack.calls_to("chat.postMessage", ok=True)
    return posted[-1].response["ts"]


def all_text(blocks: list[dict[str, Any]]) -> str:
    return json.dumps(blocks, ensure_ascii=False)


# -- /ftcost ---------------------------------------------------------------------------------
async def test_slash_command_acks_then_posts_one_estimate_with_valid_blocks(bot, slack):
    status, body = await bot.post(
        slash_command_body(QUERY, channel_id="C1", response_url=slack.response_url("C1"))
    )
    (call,) = await slack.wait_for("chat.postMessage")
    await bot.settle()

    assert (status, body) == (200, "")
    assert call.ok and call.args["channel"] == "C1" and "thread_ts" not in call.args
    assert validate_blocks(call.args["blocks"]) == []
    assert call.args["blocks"][0]["type"] == "header"
    assert "Llama 3.1 70B" in call.args["blocks"][0]["text"]["text"]
    assert "GB per GPU" in call.args["text"]
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert slack.responses == []
    assert slack.violations == []
    context = await bot.store.get_thread(ThreadKey("slack", "C1", call.response["ts"]))
    assert context is not None and context.request.method.value == "qlora"
    assert context.message_id == call.response["ts"]


async def test_estimate_has_method_seq_and_card_controls(bot, slack):
    ts = await slash(bot, slack)
    blocks = slack.messages[("C1", ts)]["blocks"]

    (actions,) = [b for b in blocks if b["type"] == "actions"]
    ids = [e["action_id"] for e in actions["elements"]]
    assert ids == ["ftcost_method_full", "ftcost_method_lora", ACTION_SEQ, ACTION_CHART,
                   ACTION_GPU]
    select = actions["elements"][-1]
    assert select["type"] == "static_select" and 1 <= len(select["options"]) <= 6
    assert all(len(e.get("value", "")) <= 2000 for e in actions["elements"])


@pytest.mark.parametrize(
    ("word", "expected"),
    [("help", "follow-ups change only"), ("models", "llama-3.1-8b"), ("gpus", "h100-sxm")],
)
async def test_help_models_and_gpus_answer_the_asker_only(bot, slack, word, expected):
    status, _ = await bot.post(slash_command_body(word, response_url=slack.response_url("C1")))
    await bot.settle()

    (post,) = slack.responses
    assert status == 200
    assert post["response_type"] == "ephemeral"
    assert expected in all_text(post["blocks"]).lower()
    assert validate_blocks(post["blocks"]) == []
    assert slack.calls_to("chat.postMessage") == []


async def test_bad_query_is_ephemeral_naming_the_word_suggestions_and_an_example(bot, slack):
    status, _ = await bot.post(
        slash_command_body("70b qlorra h100", response_url=slack.response_url("C1"))
    )
    await bot.settle()

    (post,) = slack.responses
    assert status == 200
    assert post["response_type"] == "ephemeral"
    text = post["blocks"][0]["text"]["text"]
    assert '"qlorra"' in text and "qlora" in text and "Example: " in text
    assert slack.calls_to("chat.postMessage") == []
    assert slack.calls_to("chat.postEphemeral") == []


async def test_user_text_echoed_back_is_escaped(bot, slack):
    # Slack sends `<!channel>` encoded and escapes & < > as entities.
    await bot.post(
        slash_command_body(
            "70b <!channel> &lt;https://evil.example|click&gt; &amp;",
            response_url=slack.response_url("C1"),
        )
    )
    await bot.settle()

    (post,) = slack.responses
    dumped = all_text(post["blocks"]) + post["text"]
    assert "<!channel>" not in dumped and "<https" not in dumped
    assert "<!" not in dumped and "<http" not in dumped
    assert "&lt;" in dumped or "&amp;" in dumped


async def test_not_in_channel_falls_back_to_response_url_with_invite_hint(bot, slack):
    slack.set_channel_member("C2", False)

    await bot.post(slash_command_body(QUERY, channel_id="C2",
                                      response_url=slack.response_url("C2")))
    await bot.settle()

    (failed,) = slack.calls_to("chat.postMessage")
    (post,) = slack.responses
    assert failed.response["error"] == "not_in_channel"
    assert post["response_type"] == "in_channel"
    assert post["replace_original"] is False
    assert "/invite" in all_text(post["blocks"]) and BOT_USER_ID in all_text(post["blocks"])
    assert validate_blocks(post["blocks"]) == []


async def test_rate_limited_post_is_retried_and_delivered_once(bot, slack):
    slack.rate_limit_next("chat.postMessage", retry_after=0)

    await bot.post(slash_command_body(QUERY, response_url=slack.response_url("C1")))
    await bot.settle()

    first, second = slack.calls_to("chat.postMessage")
    assert (first.status, second.status, second.ok) == (429, 200, True)
    assert len(slack.messages_in("C1")) == 1
    assert slack.responses == []


async def test_rate_limit_outlasting_the_retries_still_answers_through_response_url(
    start_bot, slack
):
    bot = await start_bot(rate_limit_retries=0)
    slack.rate_limit_next("chat.postMessage", retry_after=0)

    await bot.post(slash_command_body(QUERY, response_url=slack.response_url("C1")))
    await bot.settle()

    (post,) = slack.responses
    assert post["response_type"] == "in_channel" and post["blocks"]


# -- buttons ---------------------------------------------------------------------------------
def actions_of(slack: FakeSlack, ts: str) -> dict[str, Any]:
    blocks = slack.messages[("C1", ts)]["blocks"]
    return next(b for b in blocks if b.get("block_id") == ACTIONS_BLOCK_ID)


async def test_button_click_answers_once_in_the_estimates_thread(bot, slack):
    ts = await slash(bot, slack)
    full = next(e for e in actions_of(slack, ts)["elements"]
                if e["action_id"] == "ftcost_method_full")

    status, _ = await bot.post(
        block_action_body("ftcost_method_full", full["value"], message_ts=ts,
                          message_blocks=slack.messages[("C1", ts)]["blocks"])
    )
    await bot.settle()

    _, reply = slack.calls_to("chat.postMessage")
    assert status == 200
    assert reply.args["thread_ts"] == ts
    assert "Full" in reply.args["blocks"][0]["text"]["text"]
    assert "method QLoRA → Full" in all_text(reply.args["blocks"])
    assert "Requested by <@U1>" in all_text(reply.args["blocks"])
    assert validate_blocks(reply.args["blocks"]) == []
    assert slack.calls_to("chat.update") == []  # the original is left alone
    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context.request.method.value == "full"


async def test_double_seq_button_and_card_select(bot, slack):
    ts = await slash(bot, slack)
    blocks = slack.messages[("C1", ts)]["blocks"]
    elements = actions_of(slack, ts)["elements"]
    seq = next(e for e in elements if e["action_id"] == ACTION_SEQ)
    option = next(e for e in elements if e["action_id"] == ACTION_GPU)["options"][-1]

    await bot.post(block_action_body(ACTION_SEQ, seq["value"], message_ts=ts,
                                     message_blocks=blocks))
    await bot.post(block_action_body(ACTION_GPU, None, message_ts=ts, message_blocks=blocks,
                                     selected_option_value=option["value"]))
    await bot.settle()

    _, *replies = slack.calls_to("chat.postMessage")
    texts = sorted(all_text(r.args["blocks"]) for r in replies)
    assert len(replies) == 2 and all(r.args["thread_ts"] == ts for r in replies)
    assert any("seq 2,048 → 4,096" in t for t in texts)
    assert any(f"card h100-sxm → {option['value']}" in t for t in texts)


async def test_click_on_a_threaded_estimate_answers_in_that_thread(bot, slack):
    ts = await slash(bot, slack)
    await bot.post(event_body(message_event("what if 8k seq", ts="1700000100.000001",
                                            thread_ts=ts), event_id="EvT1"))
    await bot.settle()
    reply = slack.calls_to("chat.postMessage", ok=True)[-1]
    reply_ts = reply.response["ts"]
    value = next(e for e in actions_of(slack, reply_ts)["elements"]
                 if e["action_id"] == ACTION_SEQ)["value"]

    await bot.post(block_action_body(ACTION_SEQ, value, message_ts=reply_ts, thread_ts=ts))
    await bot.settle()

    last = slack.calls_to("chat.postMessage", ok=True)[-1]
    assert last.args["thread_ts"] == ts
    assert "seq 8,192 → 16,384" in all_text(last.args["blocks"])


# -- threads ---------------------------------------------------------------------------------
async def test_thread_followup_is_answered_in_the_thread_and_becomes_its_context(bot, slack):
    ts = await slash(bot, slack)

    status, _ = await bot.post(
        event_body(message_event("what if 8k seq?", ts="1700000100.000001", thread_ts=ts),
                   event_id="EvF1")
    )
    await bot.settle()

    _, reply = slack.calls_to("chat.postMessage")
    assert status == 200
    assert reply.args["thread_ts"] == ts
    assert "seq 2,048 → 8,192" in all_text(reply.args["blocks"])
    assert "seq 8,192" in all_text(reply.args["blocks"])
    assert validate_blocks(reply.args["blocks"]) == []
    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context.request.seq_len == 8192
    assert context.message_id == reply.response["ts"]

    await bot.post(event_body(message_event("on 4x a100", ts="1700000100.000002",
                                            thread_ts=ts), event_id="EvF2"))
    await bot.settle()
    third = slack.calls_to("chat.postMessage")[-1]
    assert "seq 2,048" not in all_text(third.args["blocks"])  # built on the 8k context
    assert "cards auto → 4" in all_text(third.args["blocks"])


async def test_prices_asked_in_an_estimates_thread_get_the_price_table(bot, slack):
    ts = await slash(bot, slack)

    await bot.post(event_body(message_event("prices", ts="1700000100.000004", thread_ts=ts),
                              event_id="EvP1"))
    await bot.settle()

    (reply,) = slack.calls_to("chat.postEphemeral")  # the table, to the asker, in the thread
    assert (reply.args["user"], reply.args["thread_ts"]) == ("U1", ts)
    assert reply.args["text"].startswith("GPU prices")
    assert "h100" in all_text(reply.args["blocks"]).lower()


async def test_bad_followup_is_ephemeral_in_the_thread(bot, slack):
    ts = await slash(bot, slack)

    await bot.post(event_body(message_event("what if 8k seqq", ts="1700000100.000003",
                                            thread_ts=ts, user="U7"), event_id="EvB1"))
    await bot.settle()

    (eph,) = slack.calls_to("chat.postEphemeral")
    assert (eph.args["user"], eph.args["thread_ts"]) == ("U7", ts)
    assert len(slack.calls_to("chat.postMessage")) == 1


async def test_followup_errors_can_be_silenced(start_bot, slack):
    bot = await start_bot(followup_errors="ignore")
    ts = await slash(bot, slack)

    await bot.post(event_body(message_event("thanks, looks good", ts="1700000100.000004",
                                            thread_ts=ts), event_id="EvB2"))
    await bot.settle()

    assert slack.calls_to("chat.postEphemeral") == []
    assert len(slack.calls_to("chat.postMessage")) == 1


async def test_ignored_chatter_in_a_thread_costs_no_rate_limit(start_bot, slack):
    bot = await start_bot(followup_errors="ignore")
    bot.runtime.service.limiter = RateLimiter(bot.store, per_minute=2)
    ts = await slash(bot, slack)  # 1 of 2
    for n, chatter in enumerate(("nice", "ok cool", "great")):
        await bot.post(event_body(message_event(chatter, ts=f"1700000100.00001{n}",
                                                thread_ts=ts), event_id=f"EvC{n}"))
    await bot.post(event_body(message_event("what if 8k seq", ts="1700000100.000020",
                                            thread_ts=ts), event_id="EvC9"))  # 2 of 2
    await bot.settle()

    assert slack.calls_to("chat.postEphemeral") == []  # no notices for the chatter
    _, answer = slack.calls_to("chat.postMessage")
    assert "seq 2,048 → 8,192" in all_text(answer.args["blocks"])


async def test_new_in_a_thread_keeps_the_channels_settings(bot, slack):
    await bot.post(slash_command_body("set framework unsloth", channel_id="C1",
                                      response_url=slack.response_url("C1")))
    await bot.settle()
    ts = await slash(bot, slack, "8b lora 20M tokens")
    await bot.post(event_body(message_event("new 8b lora 20M tokens", ts="1700000100.000030",
                                            thread_ts=ts), event_id="EvN1"))
    await bot.settle()

    *_, answer = slack.calls_to("chat.postMessage")
    assert answer.args["thread_ts"] == ts
    [line] = [b for b in answer.args["blocks"] if b.get("block_id") == FRAMEWORK_BLOCK_ID]
    assert "Unsloth" in line["text"]["text"]


async def test_replies_in_threads_the_bot_did_not_start_are_ignored(bot, slack):
    await bot.post(event_body(message_event("what if 8k seq", ts="1700000100.000005",
                                            thread_ts="1600000000.000001"), event_id="EvU1"))
    await bot.settle()

    assert slack.calls_to("chat.postMessage") == []
    assert slack.calls_to("chat.postEphemeral") == []


def under_the_bots_message(text: str, thread_ts: str, event_id: str) -> str:
    event = message_event(text, ts=f"{thread_ts}9", thread_ts=thread_ts)
    event["parent_user_id"] = BOT_USER_ID
    return event_body(event, event_id=event_id)


async def test_a_reply_under_an_estimate_older_than_the_store_keeps_says_it_is_gone(
    bot, slack
):
    await bot.post(under_the_bots_message("what if 8k seq", "1600000000.000001", "EvX1"))
    await bot.settle()

    [notice] = slack.calls_to("chat.postEphemeral")
    assert notice.args["thread_ts"] == "1600000000.000001"
    assert "estimate is no longer kept" in all_text(notice.args["blocks"])


async def test_a_whole_question_under_an_expired_estimate_is_a_fresh_estimate_saying_so(
    bot, slack
):
    await bot.post(under_the_bots_message("8b lora seq 8k", "1600000000.000002", "EvX2"))
    await bot.settle()

    [answer] = slack.calls_to("chat.postMessage")
    assert "is no longer kept, so this is a fresh estimate" in all_text(answer.args["blocks"])


async def test_two_quick_replies_in_a_thread_each_build_on_the_last(bot, slack):
    ts = await slash(bot, slack, "8b lora 10M tokens")
    await asyncio.gather(
        bot.post(event_body(message_event("seq 8k", ts="1700000100.000041", thread_ts=ts),
                            event_id="EvQ1")),
        bot.post(event_body(message_event("bs 4", ts="1700000100.000042", thread_ts=ts),
                            event_id="EvQ2")),
    )
    await bot.settle()

    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context is not None
    assert (context.request.seq_len, context.request.micro_batch) == (8192, 4)


async def test_top_level_channel_messages_are_ignored(bot, slack):
    await bot.post(event_body(message_event("70b qlora", ts="1700000100.000006"),
                              event_id="EvTop"))
    await bot.settle()

    assert slack.calls_to("chat.postMessage") == []


@pytest.mark.parametrize(
    "event",
    [
        message_event("what if 8k seq", ts="1700000200.000001", thread_ts="TS",
                      user=BOT_USER_ID, bot_id=BOT_ID),
        message_event("what if 8k seq", ts="1700000200.000002", thread_ts="TS",
                      user=None, bot_id="BOTHER", subtype="bot_message"),
        message_event("what if 8k seq", ts="1700000200.000003", thread_ts="TS",
                      subtype="message_changed"),
        message_event("what if 8k seq", ts="1700000200.000004", thread_ts="TS",
                      subtype="channel_join"),
        message_event("<@U9> what if 8k seq", ts="1700000200.000005", thread_ts="TS"),
    ],
    ids=["itself", "other-bot", "edit", "join", "talking-to-a-person"],
)
async def test_bot_messages_edits_and_other_subtypes_are_ignored(bot, slack, event):
    ts = await slash(bot, slack)
    event = {**event, "thread_ts": ts}

    status, _ = await bot.post(event_body(event, event_id="EvIgnored"))
    await bot.settle()

    assert status == 200
    assert len(slack.calls_to("chat.postMessage")) == 1
    assert slack.calls_to("chat.postEphemeral") == []


# -- mentions --------------------------------------------------------------------------------
async def test_mention_anywhere_is_a_new_estimate_in_its_thread(bot, slack):
    mention_ts = "1700000300.000001"
    status, _ = await bot.post(
        event_body(app_mention_event(f"<@{BOT_USER_ID}> 8b lora", ts=mention_ts),
                   event_id="EvM1")
    )
    # Slack also delivers the same text as a message event: it must not answer twice.
    await bot.post(
        event_body(message_event(f"<@{BOT_USER_ID}> 8b lora", ts=mention_ts), event_id="EvM2")
    )
    await bot.settle()

    (call,) = slack.calls_to("chat.postMessage")
    assert status == 200
    assert call.args["thread_ts"] == mention_ts
    assert "Llama 3.1 8B" in call.args["blocks"][0]["text"]["text"]
    assert validate_blocks(call.args["blocks"]) == []
    context = await bot.store.get_thread(ThreadKey("slack", "C1", mention_ts))
    assert context.request.model == "llama-3.1-8b"


async def test_mention_inside_an_estimate_thread_starts_over(bot, slack):
    ts = await slash(bot, slack)
    text = f"<@{BOT_USER_ID}> 8b full"

    await bot.post(event_body(app_mention_event(text, ts="1700000300.000002") | {"thread_ts": ts},
                              event_id="EvM3"))
    await bot.post(event_body(message_event(text, ts="1700000300.000002", thread_ts=ts),
                              event_id="EvM4"))
    await bot.settle()

    _, reply = slack.calls_to("chat.postMessage")
    assert reply.args["thread_ts"] == ts
    assert "Llama 3.1 8B · Full" in reply.args["blocks"][0]["text"]["text"]
    assert "Changed" not in all_text(reply.args["blocks"][1])


async def test_bad_mention_is_ephemeral(bot, slack):
    await bot.post(event_body(app_mention_event(f"<@{BOT_USER_ID}> 8b lorra", user="U3"),
                              event_id="EvM5"))
    await bot.settle()

    (eph,) = slack.calls_to("chat.postEphemeral")
    assert eph.args["user"] == "U3" and "lorra" in all_text(eph.args["blocks"])
    assert slack.calls_to("chat.postMessage") == []


# -- retries, signatures ---------------------------------------------------------------------
async def test_a_retried_event_gets_exactly_one_reply(bot, slack):
    ts = await slash(bot, slack)
    body = event_body(message_event("what if 8k seq", ts="1700000400.000001", thread_ts=ts),
                      event_id="EvRetry")

    statuses = [(await bot.post(body))[0]]
    for retry in (1, 2):
        headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        statuses.append((await bot.post(body, headers=headers))[0])
    await bot.settle()

    assert statuses == [200, 200, 200]
    assert len(slack.calls_to("chat.postMessage")) == 2  # the estimate and one reply


async def test_concurrent_duplicate_deliveries_get_one_reply(bot, slack):
    body = event_body(app_mention_event(f"<@{BOT_USER_ID}> 8b lora"), event_id="EvDup")

    await asyncio.gather(*(bot.post(body) for _ in range(5)))
    await bot.settle()

    assert len(slack.calls_to("chat.postMessage")) == 1


async def test_invalid_signature_is_rejected_and_nothing_is_posted(bot, slack):
    status, _ = await bot.post(
        slash_command_body(QUERY, response_url=slack.response_url("C1")), secret="wrong"
    )
    await bot.settle()

    assert status == 401
    assert slack.calls_to("chat.postMessage") == [] and slack.responses == []


async def test_stale_timestamp_is_rejected(bot, slack):
    status, _ = await bot.post(
        slash_command_body(QUERY, response_url=slack.response_url("C1")),
        timestamp=int(time.time()) - 10 * 60,
    )
    await bot.settle()

    assert status == 401
    assert slack.calls_to("chat.postMessage") == [] and slack.responses == []


async def test_unsigned_request_is_rejected(bot, slack):
    body = slash_command_body(QUERY, response_url=slack.response_url("C1"))
    async with bot.session.post(bot.url, data=body, headers={
        "Content-Type": "application/x-www-form-urlencoded"}) as resp:
        status = resp.status
    await bot.settle()

    assert status == 401
    assert slack.calls_to("chat.postMessage") == []


async def test_url_verification_challenge_is_answered(bot):
    body = json.dumps({"token": "t", "challenge": "abc123", "type": "url_verification"})

    status, text = await bot.post(body)

    assert status == 200 and "abc123" in text


# -- restart ---------------------------------------------------------------------------------
async def test_thread_context_survives_a_restart_with_the_same_sqlite_file(
    start_bot, slack, tmp_path
):
    store = tmp_path / "persist.sqlite3"
    first = await start_bot(store)
    ts = await slash(first, slack)
    await first.session.close()
    await first.runtime.stop()

    second = await start_bot(store)
    await second.post(event_body(message_event("what if 8k seq", ts="1700000500.000001",
                                               thread_ts=ts), event_id="EvAfter"))
    await second.settle()

    _, reply = slack.calls_to("chat.postMessage")
    assert reply.args["thread_ts"] == ts
    assert "seq 2,048 → 8,192" in all_text(reply.args["blocks"])
    assert "Llama 3.1 70B · QLoRA" in reply.args["blocks"][0]["text"]["text"]


# -- health, logs ----------------------------------------------------------------------------
async def test_healthz_on_the_http_server(bot):
    async with bot.session.get(f"http://127.0.0.1:{bot.runtime.port}/healthz") as resp:
        body = await resp.json()

    assert resp.status == 200
    assert body["status"] == "ok" and body["store"] is True
    assert body["platforms"]["slack"]["mode"] == "http"


async def test_one_log_line_per_command_and_no_secret_anywhere_in_the_logs(bot, slack, caplog):
    caplog.set_level(logging.DEBUG)
    ts = await slash(bot, slack)
    await bot.post(slash_command_body("help", response_url=slack.response_url("C1")))
    await bot.post(event_body(message_event("what if 8k seq", ts="1700000600.000001",
                                            thread_ts=ts), event_id="EvLog"))
    await bot.post(slash_command_body("70b", response_url=slack.response_url("C1")),
                   secret="wrong")
    await bot.settle()

    lines = [r for r in caplog.records if r.name == "ftcost.command"]
    fields = [r.fields for r in lines]
    # Commands answer concurrently, so their lines may land in any order.
    assert sorted((f["trigger"], f["kind"], f["outcome"]) for f in fields) == [
        ("command", "estimate", "posted"),
        ("command", "help", "ephemeral"),
        ("followup", "estimate", "posted"),
    ]
    assert all(f["platform"] == "slack" and f["latency_ms"] >= 0 for f in fields)
    assert any(
        "platform=slack trigger=command kind=estimate outcome=posted latency_ms="
        in line.getMessage()
        for line in lines
    )
    everything = "\n".join(
        r.getMessage() + (r.exc_text or "") + repr(getattr(r, "fields", "")) + repr(r.args)
        for r in caplog.records
    )
    assert BOT_TOKEN not in everything and SECRET not in everything
    assert QUERY not in "\n".join(r.getMessage() for r in lines)  # user text isn't logged


async def test_an_unexpected_failure_is_logged_and_the_asker_told(bot, slack, caplog):
    def boom(*args):
        raise RuntimeError("engine exploded")

    bot.bot.service.answer = boom  # the service, not a library internal

    await bot.post(slash_command_body(QUERY, response_url=slack.response_url("C1")))
    await bot.settle()

    (post,) = slack.responses
    assert post["response_type"] == "ephemeral" and "went wrong" in post["text"]
    (line,) = [r for r in caplog.records if r.name == "ftcost.command"]
    assert line.fields["outcome"] == "failed"


@pytest.mark.parametrize("timestamp", ["abc", "", "1e9", "12.5", " 1700000000", "9" * 400])
async def test_malformed_timestamp_is_rejected_as_unauthenticated(bot, slack, caplog, timestamp):
    body = slash_command_body(QUERY, response_url=slack.response_url("C1"))
    headers = {**request_headers(body, SECRET), "X-Slack-Request-Timestamp": timestamp}

    with caplog.at_level(logging.ERROR):
        async with bot.session.post(bot.url, data=body.encode(), headers=headers) as resp:
            status = resp.status
    await bot.settle()

    assert status == 401
    assert slack.calls_to("chat.postMessage") == [] and slack.responses == []
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR
                and r.name.startswith(("ftcost.slack", "aiohttp", "slack_bolt"))]


# -- framework and channel settings ----------------------------------------------------------
async def test_a_channel_framework_set_by_anyone_applies_to_new_estimates(bot, slack):
    await bot.post(slash_command_body("set framework hf", user_id="U7",
                                      response_url=slack.response_url("C1")))
    await bot.settle()
    ts = await slash(bot, slack, "8b lora 10M tokens")
    await bot.post(slash_command_body("settings", response_url=slack.response_url("C1")))
    await bot.settle()

    confirm, shown = slack.responses
    assert confirm["response_type"] == "ephemeral" and "framework setting is now hf" in all_text(
        confirm["blocks"])
    assert "framework: hf" in all_text(shown["blocks"])
    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context is not None and context.request.framework.value == "hf"
    assert "HF / TRL / PEFT" in all_text(slack.messages[("C1", ts)]["blocks"])
    assert validate_blocks(slack.messages[("C1", ts)]["blocks"]) == []


async def test_a_channel_price_default_of_spot_applies_to_new_estimates(bot, slack):
    await bot.post(slash_command_body("set prices spot", response_url=slack.response_url("C1")))
    await bot.settle()
    ts = await slash(bot, slack, "8b lora 10M tokens")

    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context is not None and context.request.spot is True


async def test_channel_defaults_stay_in_their_channel(bot, slack):
    await bot.post(slash_command_body("set framework unsloth", channel_id="C2",
                                      response_url=slack.response_url("C2")))
    await bot.settle()
    ts = await slash(bot, slack, "8b lora 10M tokens", channel="C1")

    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context is not None and context.request.framework.value == "generic"


async def test_a_bad_setting_is_explained_to_the_asker_only(bot, slack):
    await bot.post(slash_command_body("set framework jax", response_url=slack.response_url("C1")))
    await bot.settle()

    (post,) = slack.responses
    assert post["response_type"] == "ephemeral"
    text = all_text(post["blocks"])
    assert "is not a value of the framework setting" in text and "`hf`" in text
    assert slack.calls_to("chat.postMessage") == []


async def test_the_framework_select_reruns_the_estimate_in_its_thread(bot, slack):
    ts = await slash(bot, slack)
    blocks = slack.messages[("C1", ts)]["blocks"]
    (line,) = [b for b in blocks if b.get("block_id") == "ftcost_framework"]
    assert line["accessory"]["initial_option"]["value"] == "generic"

    await bot.post(block_action_body("ftcost_framework", None, message_ts=ts,
                                     message_blocks=blocks, block_id="ftcost_framework",
                                     selected_option_value="torchtune"))
    await bot.settle()

    _, reply = slack.calls_to("chat.postMessage")
    assert reply.args["thread_ts"] == ts
    assert "framework generic → torchtune" in all_text(reply.args["blocks"])
    # The rerun applies the new profile to what the user never said: torchtune's states.
    assert "states fp32 → pure-bf16" in all_text(reply.args["blocks"])
