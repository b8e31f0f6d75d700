"""Limit and budget questions (issue 16) on Slack and Discord, through the real
slack-bolt and discord.py paths against the local fakes."""

from __future__ import annotations

from adapters.parse import parse_query
from adapters.slack.blocks import ACTION_GPU, ACTION_SEQ
from engine import estimate
from tests.fakes import FakeSlack, block_action_body
from tests.fakes.discord_server import FakeDiscord
from tests.slack_harness import Harness
from tests.test_discord_bot import (  # noqa: F401  (fixtures)
    click,
    custom_ids,
    fake,
    running,
    store,
    wait_until,
)
from tests.test_discord_bot import slash as discord_slash
from tests.test_slack_http import (  # noqa: F401  (fixtures)
    actions_of,
    all_text,
    start_bot,
)
from tests.test_slack_http import slash as slack_slash


async def test_slack_max_seq_answers_with_the_limit_and_the_step_that_does_not_fit(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slack_slash(bot, slack, "max seq 8b qlora rtx-4090")
    text = all_text(slack.messages[("C1", ts)]["blocks"])
    assert "Longest sequence for QLoRA on 1x" in text
    assert "does not fit" in text and "To raise it:" in text


async def test_slack_budget_lists_only_options_within_it(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slack_slash(bot, slack, "8b full 20M tokens under $2")
    text = all_text(slack.messages[("C1", ts)]["blocks"])
    assert "No option stays under $2.00" in text


async def test_discord_largest_model_answers_with_the_model(
    fake: FakeDiscord, store  # noqa: F811
) -> None:
    async with running(fake, store):
        cb = await discord_slash(fake, {"query": "largest model qlora 24gb"})
        embed = cb["data"]["embeds"][0]
        assert "Largest model for QLoRA on 1x 24 GB card" in embed["description"]


async def test_discord_deadline_keeps_options_in_time(
    fake: FakeDiscord, store  # noqa: F811
) -> None:
    async with running(fake, store):
        cb = await discord_slash(fake, {"query": "70b qlora 50M tokens within 2 days"})
        data = str(cb["data"])
        assert "Only options within 2.0 d are listed" in data


def typed_answer(query: str) -> str:
    """The model a typed ``largest model`` question answers with."""
    return estimate(parse_query(query)).model.name


async def test_slack_method_button_on_a_largest_model_answer_searches_every_model(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slack_slash(bot, slack, "largest model lora rtx-4090")
    qlora = next(e for e in actions_of(slack, ts)["elements"]
                 if e["action_id"] == "ftcost_method_qlora")
    await bot.post(block_action_body("ftcost_method_qlora", qlora["value"], message_ts=ts,
                                     message_blocks=slack.messages[("C1", ts)]["blocks"]))
    await bot.settle()
    _, reply = slack.calls_to("chat.postMessage")
    expected = typed_answer("largest model qlora rtx-4090")
    assert f"Largest model for QLoRA on 1x NVIDIA GeForce RTX 4090 24GB: {expected}" in (
        all_text(reply.args["blocks"]))


async def test_slack_max_seq_answer_offers_no_double_seq_button(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slack_slash(bot, slack, "max seq 8b qlora rtx-4090")
    actions = [e["action_id"] for e in actions_of(slack, ts)["elements"]]
    assert ACTION_SEQ not in actions and "ftcost_method_full" in actions


async def test_discord_method_button_on_a_largest_model_answer_searches_every_model(
    fake: FakeDiscord, store  # noqa: F811
) -> None:
    async with running(fake, store):
        cb = await discord_slash(fake, {"query": "largest model lora 24gb"})
        [answer] = fake.channel_messages()
        mid = int(answer["id"])
        qlora = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:m:qlora"))
        await click(fake, mid, qlora)
        await wait_until(lambda: len(fake.channel_messages(mid)) == 1)
        [reply] = fake.channel_messages(mid)
        expected = typed_answer("largest model qlora 24gb")
        assert f"Largest model for QLoRA on 1x 24 GB card: {expected}" in (
            reply["embeds"][0]["description"])


async def test_slack_offers_no_qlora_button_under_tensor_parallelism(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slack_slash(bot, slack, "8b lora 100M tokens 8x h100 tp 8")
    actions = [e["action_id"] for e in actions_of(slack, ts)["elements"]]
    assert "ftcost_method_full" in actions and "ftcost_method_qlora" not in actions


async def test_discord_offers_no_qlora_button_under_tensor_parallelism(
    fake: FakeDiscord, store  # noqa: F811
) -> None:
    async with running(fake, store):
        cb = await discord_slash(fake, {"query": "8b lora 100M tokens 8x h100 tp 8"})
        methods = [i for i in custom_ids(cb["data"]) if i.startswith("ftc:m:")]
        assert methods and not any(i.startswith("ftc:m:qlora") for i in methods)


async def test_slack_card_menu_reads_as_the_card_typed_in_the_thread(
    bot: Harness, slack: FakeSlack
) -> None:
    ts = await slack_slash(bot, slack, "70b lora 100M tokens 2 nodes of 8x h100")
    blocks = slack.messages[("C1", ts)]["blocks"]
    menu = next(e for e in actions_of(slack, ts)["elements"] if e["action_id"] == ACTION_GPU)
    card = next(o["value"] for o in menu["options"] if o["value"] == "gh200")
    await bot.post(block_action_body(ACTION_GPU, None, message_ts=ts, message_blocks=blocks,
                                     selected_option_value=card))
    await bot.settle()
    _, reply = slack.calls_to("chat.postMessage")
    text = all_text(reply.args["blocks"])
    assert "card h100-sxm → gh200" in text and "nodes 2 → unset" in text  # as typed
