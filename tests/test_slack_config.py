"""Estimates from training configs in Slack (issue 16), through the real slack-bolt app in
HTTP mode against the fake Slack Web API: a config pasted in a code block after
``/ftcost``, a file shared with a mention, a file shared in an estimate's thread (the
``file_share`` message subtype), downloaded with the bot token and capped at 64 KB."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from bot.store import ThreadKey
from tests.fakes import (
    FakeSlack,
    app_mention_event,
    event_body,
    message_event,
    slash_command_body,
    validate_blocks,
)
from tests.fakes.slack_signing import BOT_USER_ID
from tests.slack_harness import Harness, running
from tests.test_slack_http import all_text, bot_config, slash


@pytest.fixture
async def bot(slack: FakeSlack, tmp_path: Path) -> AsyncIterator[Harness]:
    async with running(bot_config(slack, tmp_path / "state.sqlite3", tmp_path)) as harness:
        yield harness


FIXTURES = Path(__file__).parent / "fixtures" / "trainconfig"
AXOLOTL = (FIXTURES / "axolotl_qlora.yml").read_bytes()
TRL_JSON = FIXTURES / "hf_training_args.json"
MENTION_TS = "1700000200.000001"


async def command(bot: Harness, slack: FakeSlack, text: str) -> None:
    status, _ = await bot.post(slash_command_body(text, response_url=slack.response_url("C1")))
    assert status == 200
    await bot.settle()


async def mention_with(
    bot: Harness, file: dict[str, Any], text: str = "", event_id: str = "EvM1"
) -> int:
    event = app_mention_event(f"<@{BOT_USER_ID}> {text}".strip(), ts=MENTION_TS)
    event["files"] = [file]
    event["upload"] = True
    status, _ = await bot.post(event_body(event, event_id=event_id))
    await bot.settle()
    return status


async def shared_in_thread(
    bot: Harness, thread_ts: str, files: list[dict[str, Any]], text: str = "",
    event_id: str = "EvS1",
) -> int:
    event = message_event(text, ts="1700000300.000001", thread_ts=thread_ts,
                          subtype="file_share")
    event["files"] = files
    status, _ = await bot.post(event_body(event, event_id=event_id))
    await bot.settle()
    return status


def private_error(slack: FakeSlack) -> str:
    """The one error shown to the asker only (chat.postEphemeral), as text."""
    (eph,) = slack.calls_to("chat.postEphemeral")
    assert eph.args["user"] == "U1"
    assert slack.calls_to("chat.postMessage") == []
    return all_text(eph.args["blocks"])


# -- /ftcost with a code block ---------------------------------------------------------------
async def test_config_pasted_in_a_code_block_after_ftcost_is_estimated_key_by_key(bot, slack):
    await command(bot, slack, "```yaml\n" + AXOLOTL.decode() + "```")

    (post,) = slack.calls_to("chat.postMessage", ok=True)
    text = all_text(post.args["blocks"])
    assert "Read from the axolotl config: base_model:" in text
    assert "lora_r: 32" in text
    assert "Ignored (no effect on the estimate):" in text and "learning_rate" in text
    assert "config (code block)" in text  # the context line says what was asked
    assert validate_blocks(post.args["blocks"]) == []
    context = await bot.store.get_thread(ThreadKey("slack", "C1", post.response["ts"]))
    assert context.request.method.value == "qlora"
    assert (context.request.seq_len, context.request.micro_batch) == (4096, 2)


async def test_words_around_the_code_block_override_the_config(bot, slack):
    await command(bot, slack, "```\n" + AXOLOTL.decode() + "``` seq 8k 20M tokens h100")

    (post,) = slack.calls_to("chat.postMessage", ok=True)
    context = await bot.store.get_thread(ThreadKey("slack", "C1", post.response["ts"]))
    assert context.request.seq_len == 8192
    assert context.request.dataset_tokens == 20_000_000
    assert context.request.gpu == "h100-sxm"
    assert context.request.method.value == "qlora"  # the config's, unchanged


async def test_slack_escapes_in_a_pasted_config_are_undone(bot, slack):
    config = "base_model: meta-llama/Meta-Llama-3.1-8B\nadapter: lora\n# a &lt;comment&gt;\n"

    await command(bot, slack, "```" + config + "```")

    (post,) = slack.calls_to("chat.postMessage", ok=True)
    assert "adapter: lora" in all_text(post.args["blocks"])


async def test_a_pasted_config_without_a_model_is_a_private_error_naming_the_formats(
    bot, slack
):
    await command(bot, slack, "```\nadapter: qlora\nsequence_len: 2048\nlora_r: 8\n```")

    (post,) = slack.responses
    assert post["response_type"] == "ephemeral"
    text = all_text(post["blocks"])
    assert "names no model" in text and "base_model" in text
    assert "LLaMA-Factory" in text  # the formats read
    assert "/ftcost ```" in text  # the example is Slack's, not the terminal's
    assert slack.calls_to("chat.postMessage") == []


async def test_two_code_blocks_are_a_private_error(bot, slack):
    await command(bot, slack, "```a: 1``` and ```b: 2```")

    (post,) = slack.responses
    assert post["response_type"] == "ephemeral"
    assert "2 code blocks" in all_text(post["blocks"])


async def test_python_tags_in_a_config_are_refused_and_nothing_runs(bot, slack, tmp_path):
    marker = tmp_path / "ran"
    config = f"base_model: !!python/object/apply:os.system ['touch {marker}']\n"

    await command(bot, slack, "```\n" + config + "```")

    (post,) = slack.responses
    assert "not valid YAML or JSON" in all_text(post["blocks"])
    assert not marker.exists()


# -- a file shared with a mention ------------------------------------------------------------
async def test_a_config_file_shared_with_a_mention_is_downloaded_with_the_bot_token(bot, slack):
    file = slack.share_file("qlora.yml", AXOLOTL, filetype="yaml")

    status = await mention_with(bot, file, "20M tokens h100")

    assert status == 200
    assert slack.hosted[file["id"]].downloads == 1  # the fake serves only a bot token
    (post,) = slack.calls_to("chat.postMessage", ok=True)
    assert post.args["thread_ts"] == MENTION_TS
    text = all_text(post.args["blocks"])
    assert "Read from the axolotl config" in text
    assert "qlora.yml + 20M tokens h100" in text
    context = await bot.store.get_thread(ThreadKey("slack", "C1", MENTION_TS))
    assert context.request.gpu == "h100-sxm" and context.request.method.value == "qlora"


async def test_a_json_trl_config_shared_as_a_snippet_is_read(bot, slack):
    file = slack.share_file("Untitled", TRL_JSON.read_bytes(), filetype="json",
                            mimetype="application/json", mode="snippet")

    await mention_with(bot, file)

    (post,) = slack.calls_to("chat.postMessage", ok=True)
    assert "Read from the TRL/Transformers config" in all_text(post.args["blocks"])


async def test_a_file_known_only_by_id_is_looked_up_with_files_info(bot, slack):
    file = slack.share_file("qlora.yml", AXOLOTL, filetype="yaml")

    await mention_with(bot, {"id": file["id"], "file_access": "check_file_info"})

    assert [c.args["file"] for c in slack.calls_to("files.info", ok=True)] == [file["id"]]
    (post,) = slack.calls_to("chat.postMessage", ok=True)
    assert "Read from the axolotl config" in all_text(post.args["blocks"])


async def test_a_file_over_64_kb_is_refused_before_it_is_downloaded(bot, slack):
    file = slack.share_file("big.yml", b"base_model: x/y\n" + b"#" * 70_000, filetype="yaml")

    await mention_with(bot, file)

    text = private_error(slack)
    assert "big.yml is 68 KB" in text and "up to 64 KB" in text and "axolotl" in text
    assert slack.hosted[file["id"]].downloads == 0


async def test_a_file_larger_than_it_says_is_cut_off_at_64_kb(bot, slack):
    data = b"base_model: x/y\n" + b"#" * 500_000
    file = slack.share_file("lying.yml", data, filetype="yaml", size=100, chunked=True)

    await mention_with(bot, file)

    assert "lying.yml is larger than 64 KB" in private_error(slack)


async def test_a_binary_file_is_a_private_error_naming_the_formats(bot, slack):
    png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256))
    file = slack.share_file("loss.png", png, filetype="png", mimetype="image/png")

    await mention_with(bot, file)

    text = private_error(slack)
    assert "loss.png is a binary file" in text and "torchtune" in text


async def test_a_file_not_in_utf8_is_a_private_error(bot, slack):
    file = slack.share_file("latin1.yml", "base_model: café/x\n".encode("latin-1"),
                            filetype="yaml")

    await mention_with(bot, file)

    assert "latin1.yml is not UTF-8 text" in private_error(slack)


async def test_a_file_in_none_of_the_formats_is_a_private_error(bot, slack):
    file = slack.share_file("notes.yml", b"shopping:\n  - milk\n  - eggs\n", filetype="yaml")

    await mention_with(bot, file)

    text = private_error(slack)
    assert "notes.yml is not a training config ftcost knows" in text.lower()
    assert "TRL/Transformers TrainingArguments" in text


async def test_without_files_read_the_error_says_to_reinstall_from_the_manifest(bot, slack):
    slack.scopes = {"commands", "chat:write", "app_mentions:read", "files:write"}
    file = slack.share_file("qlora.yml", AXOLOTL, filetype="yaml")

    await mention_with(bot, file)

    text = private_error(slack)
    assert "files:read" in text and "reinstall" in text


# -- a file shared in an estimate's thread ---------------------------------------------------
async def test_a_config_shared_in_an_estimates_thread_is_answered_in_the_thread(bot, slack):
    ts = await slash(bot, slack, "70b qlora 50M tokens h100")
    file = slack.share_file("qlora.yml", AXOLOTL, filetype="yaml")

    status = await shared_in_thread(bot, ts, [file], "seq 2k")

    assert status == 200
    reply = slack.calls_to("chat.postMessage", ok=True)[-1]
    assert reply.args["thread_ts"] == ts
    assert "Read from the axolotl config" in all_text(reply.args["blocks"])
    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert context.request.model == "llama-3.1-8b"  # a new question: the config's model
    assert context.request.seq_len == 2048  # the message's words override the config


async def test_a_config_pasted_in_an_estimates_thread_is_answered_there(bot, slack):
    ts = await slash(bot, slack, "70b qlora 50M tokens h100")
    text = "```\nbase_model: meta-llama/Meta-Llama-3.1-8B\nadapter: lora\n``` on 2x a100"

    await bot.post(event_body(message_event(text, ts="1700000300.000002", thread_ts=ts),
                              event_id="EvCB"))
    await bot.settle()

    reply = slack.calls_to("chat.postMessage", ok=True)[-1]
    assert reply.args["thread_ts"] == ts
    assert "Read from the axolotl config" in all_text(reply.args["blocks"])
    context = await bot.store.get_thread(ThreadKey("slack", "C1", ts))
    assert (context.request.model, context.request.method.value) == ("llama-3.1-8b", "lora")
    assert context.request.gpu_count == 2


async def test_a_screenshot_in_an_estimates_thread_is_not_answered(bot, slack):
    ts = await slash(bot, slack)
    png = slack.share_file("chart.png", b"\x89PNG\x00\x00", filetype="png",
                           mimetype="image/png")

    await shared_in_thread(bot, ts, [png])

    assert len(slack.calls_to("chat.postMessage")) == 1  # the estimate only
    assert slack.calls_to("chat.postEphemeral") == []
    assert slack.hosted[png["id"]].downloads == 0


async def test_two_configs_at_once_are_a_private_error(bot, slack):
    ts = await slash(bot, slack)
    files = [slack.share_file(n, AXOLOTL, filetype="yaml") for n in ("a.yml", "b.yml")]

    await shared_in_thread(bot, ts, files)

    (eph,) = slack.calls_to("chat.postEphemeral")
    assert "2 configs were shared (a.yml, b.yml)" in all_text(eph.args["blocks"])


async def test_a_config_outside_any_estimates_thread_without_a_mention_is_ignored(bot, slack):
    file = slack.share_file("qlora.yml", AXOLOTL, filetype="yaml")
    event = message_event("", ts="1700000400.000001", subtype="file_share")
    event["files"] = [file]

    status, _ = await bot.post(event_body(event, event_id="EvTop"))
    await bot.settle()

    assert status == 200
    assert slack.calls_to("chat.postMessage") == [] and slack.hosted[file["id"]].downloads == 0


async def test_the_file_shared_event_is_acknowledged_and_not_answered(bot, slack):
    file = slack.share_file("qlora.yml", AXOLOTL, filetype="yaml")
    event = {"type": "file_shared", "channel_id": "C1", "file_id": file["id"], "user_id": "U1",
             "file": {"id": file["id"]}, "event_ts": "1700000500.000001"}

    status, _ = await bot.post(event_body(event, event_id="EvFS"))
    await bot.settle()

    assert status == 200
    assert slack.calls == [c for c in slack.calls if c.method == "auth.test"]
