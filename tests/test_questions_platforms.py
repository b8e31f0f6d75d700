"""Limit and budget questions (issue 16) on Slack and Discord, through the real
slack-bolt and discord.py paths against the local fakes."""

from __future__ import annotations

from tests.fakes import FakeSlack
from tests.fakes.discord_server import FakeDiscord
from tests.test_discord_bot import fake, running, store  # noqa: F401  (fixtures)
from tests.test_discord_bot import slash as discord_slash
from tests.test_slack_http import (  # noqa: F401  (fixtures)
    Harness,
    all_text,
    bot,
    slack,
    start_bot,
)
from tests.test_slack_http import slash as slack_slash


async def test_slack_max_seq_answers_with_the_limit_and_the_step_that_does_not_fit(
    bot: Harness, slack: FakeSlack  # noqa: F811
) -> None:
    ts = await slack_slash(bot, slack, "max seq 8b qlora rtx-4090")
    text = all_text(slack.messages[("C1", ts)]["blocks"])
    assert "Longest sequence for QLoRA on 1x" in text
    assert "does not fit" in text and "To raise it:" in text


async def test_slack_budget_lists_only_options_within_it(
    bot: Harness, slack: FakeSlack  # noqa: F811
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
