"""What a user typed, repeated in an error or a notice, shows as typed on Slack and on
Discord: it never formats, never opens or closes a code span. The bot's own code spans
(its examples, ``/ftcost set framework torchtitan``) stay code. Every reply here is the
real service's, rendered by the real renderers (``message_for``, ``embeds_for``).

Backticks are the neutral layer's one markup: a user's backticks must be made quotes
where the bot quotes their words (no renderer can tell whose a backtick is). An error
that is not about the query says what it is about in its title."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from typing import Any

import discord
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.discord.embeds import (
    QUERY_ERROR_FOOTER,
    QUERY_ERROR_TITLE,
    embeds_for,
    reply_markdown,
)
from adapters.slack.blocks import message_for, reply_mrkdwn
from bot.prices import PriceBook
from bot.service import Ask, Reply, ReplyKind, Service
from bot.store_sqlite import SQLiteStore
from bot.store_types import StoreUnavailable
from engine.specs import Catalog
from tests.fakes.clock import ManualClock

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SPAN = re.compile(r"`[^`\n]+`")
EXAMPLE = "`/ftcost set framework torchtitan`"


class DownStore(SQLiteStore):
    """A store whose backend is down for channel settings and price subscriptions, as
    RedisStore reports it."""

    async def channel_settings(self, platform: str, channel: str) -> dict[str, str]:
        raise StoreUnavailable("the store is down")

    async def set_channel_setting(self, *args: Any, **kwargs: Any) -> None:
        raise StoreUnavailable("the store is down")

    async def save_subscription(self, *args: Any, **kwargs: Any) -> None:
        raise StoreUnavailable("the store is down")


@pytest.fixture
async def service(catalog: Catalog) -> AsyncIterator[Service]:
    async with SQLiteStore(":memory:") as store:
        yield Service(store, book=PriceBook(catalog), clock=ManualClock(NOW))


@pytest.fixture
async def down(catalog: Catalog) -> AsyncIterator[Service]:
    async with DownStore(":memory:") as store:
        yield Service(store, book=PriceBook(catalog), clock=ManualClock(NOW))


async def ask(service: Service, text: str, **context: Any) -> Reply:
    return await service.respond(Ask(text, "slack", channel="C1", **context))


def slack_text(reply: Reply, query: str | None = None) -> str:
    """The first section of the Slack message: where the reply's text is."""
    return str(message_for(reply, query=query)["blocks"][0]["text"]["text"])


def discord_embed(reply: Reply, query: str | None = None) -> discord.Embed:
    [embed] = embeds_for(reply, query=query)
    return embed


WORDS = st.text(st.characters(exclude_characters="`", exclude_categories=("Cs",)),
                max_size=40)
"""What a user may type, as the bot layer quotes it: anything but a backtick."""
BOT_SPANS = ["`generic`", "`/ftcost set framework hf`"]


def quoting(word: str) -> str:
    """A reply's text quoting ``word`` between two of the bot's code spans, as the
    settings and price commands word theirs."""
    return f'{BOT_SPANS[0]}: "{word}" is not a value; say {BOT_SPANS[1]}.'


def prose(text: str) -> str:
    """``text`` without its code spans."""
    return SPAN.sub(" ", text)


def bot_spans_intact(text: str, *spans: str) -> bool:
    """The bot's code spans ``spans`` are code in ``text``, and no code span holds a
    quote (one would if a user's backtick had paired with one of the bot's)."""
    found = SPAN.findall(text)
    return all(s in found for s in spans) and not any('"' in s or "“" in s for s in found)


# -- Slack -----------------------------------------------------------------------------------


async def test_slack_keeps_the_bots_code_spans_in_a_settings_error(service: Service) -> None:
    reply = await ask(service, "set framework nope")

    assert bot_spans_intact(slack_text(reply), "`generic`", "`hf`", EXAMPLE)


async def test_slack_shows_emphasis_the_user_typed_as_look_alikes(service: Service) -> None:
    reply = await ask(service, "set framework *bold* _it_ ~st~")

    text = slack_text(reply)
    assert '"∗bold∗ ˍitˍ ∼st∼" is not a value' in text
    assert bot_spans_intact(text, "`generic`", EXAMPLE)


async def test_slack_shows_emphasis_in_a_card_the_user_named_as_look_alikes(
    service: Service,
) -> None:
    reply = await ask(service, "subscribe *x*")

    text = slack_text(reply)
    assert '"∗x∗" is not a card' in text
    assert bot_spans_intact(text, "`subscribe 10% h100 a100`")


async def test_slack_keeps_an_underscore_inside_a_word(service: Service) -> None:
    reply = await ask(service, "subscribe rtx_40900")

    assert '"rtx_40900" is not a card' in slack_text(reply)


async def test_slack_shows_a_stray_backtick_as_a_quote(service: Service) -> None:
    reply = await ask(service, "8b lora `x")

    assert "`" not in slack_text(reply).split("\n")[0]


async def test_slack_shows_a_backtick_in_a_setting_value_as_a_quote(service: Service) -> None:
    reply = await ask(service, "set framework `x")

    text = slack_text(reply)
    assert "\"'x\" is not a value" in text
    assert bot_spans_intact(text, "`generic`", EXAMPLE)


async def test_slack_shows_backticks_around_a_setting_name_as_quotes(service: Service) -> None:
    reply = await ask(service, "set `framework` hf")

    text = slack_text(reply)
    assert "\"'framework' hf\"" in text
    assert bot_spans_intact(text, "`framework`", "`prices`")


async def test_slack_reads_a_card_pasted_as_code_as_the_card(service: Service) -> None:
    reply = await ask(service, "subscribe `h1000`")

    text = slack_text(reply)
    assert '"h1000" is not a card' in text
    assert bot_spans_intact(text, "`subscribe 10% h100 a100`")


async def test_slack_shows_a_backtick_in_a_follow_up_while_the_store_is_down_as_a_quote(
    service: Service,
) -> None:
    reply = await ask(service, "what if `seq` 8k", context_lost=True)

    text = slack_text(reply)
    assert "'seq'" in text
    assert bot_spans_intact(text, "`70b qlora 50M tokens seq 8k`")


@settings(max_examples=300, deadline=None)
@given(WORDS)
def test_slack_keeps_exactly_the_bots_code_spans_and_formats_no_word(word: str) -> None:
    shown = reply_mrkdwn(quoting(word))

    assert SPAN.findall(shown) == BOT_SPANS
    assert "<" not in shown and ">" not in shown
    around = prose(shown)
    for i, char in enumerate(around):
        if char in "*_~":  # kept only inside a word, where Slack never formats
            assert around[i - 1].isascii() and around[i - 1].isalnum()
            assert around[i + 1].isascii() and around[i + 1].isalnum()


async def test_slack_points_a_query_error_to_the_query_language(service: Service) -> None:
    reply = await ask(service, "70b qlora h1000")

    assert "shows the query language" in str(message_for(reply)["blocks"])


async def test_slack_does_not_point_a_settings_error_to_the_query_language(
    service: Service,
) -> None:
    reply = await ask(service, "set framework nope")

    assert "query language" not in str(message_for(reply, query="set framework nope"))


async def test_slack_does_not_point_unavailable_settings_to_the_query_language(
    down: Service,
) -> None:
    reply = await ask(down, "set framework hf")

    message = message_for(reply, query="set framework hf")
    assert "unavailable" in slack_text(reply) and "query language" not in str(message)


async def test_slack_does_not_point_unavailable_price_subscriptions_to_the_query_language(
    down: Service,
) -> None:
    reply = await ask(down, "subscribe 10%")

    message = message_for(reply, query="subscribe 10%")
    assert "unavailable" in slack_text(reply) and "query language" not in str(message)


# -- Discord ---------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(WORDS.filter(lambda word: "://" not in word))  # a link's own characters stay as typed
def test_discord_keeps_exactly_the_bots_code_spans_and_formats_no_word(word: str) -> None:
    shown = reply_markdown(quoting(word))

    assert SPAN.findall(shown) == BOT_SPANS
    around = prose(shown)
    for i, char in enumerate(around):
        if char in "*_~|`[":  # escaped: an odd run of backslashes before it
            run = len(around[:i]) - len(around[:i].rstrip("\\"))
            assert run % 2 == 1, (word, around)


@pytest.mark.parametrize(("typed", "shown"), [("*x*", "\\*x\\*"), ("~~x~~", "\\~\\~x\\~\\~")])
async def test_discord_shows_markdown_in_a_card_the_user_named_as_typed(
    service: Service, typed: str, shown: str
) -> None:
    reply = await ask(service, f"subscribe {typed}")

    description = discord_embed(reply).description or ""
    assert f'"{shown}" is not a card' in description
    assert bot_spans_intact(description, "`subscribe 10% h100 a100`")


async def test_discord_titles_a_settings_error_by_the_settings(service: Service) -> None:
    reply = await ask(service, "set framework ||x||")

    embed = discord_embed(reply, query="set framework ||x||")
    assert embed.title == "Channel settings" and embed.footer.text is None
    assert '"\\|\\|x\\|\\|" is not a value' in (embed.description or "")


async def test_discord_keeps_the_bots_examples_as_code_in_a_settings_error(
    service: Service,
) -> None:
    reply = await ask(service, "set **framework** hf")

    description = discord_embed(reply).description or ""
    assert '"\\*\\*framework\\*\\* hf"' in description
    assert "\\`" not in description
    assert bot_spans_intact(description, "`set`", "`framework`", "`hf`")


async def test_discord_titles_unavailable_settings_by_the_settings(down: Service) -> None:
    reply = await ask(down, "set framework hf")

    embed = discord_embed(reply, query="set framework hf")
    assert embed.title == "Channel settings" and embed.footer.text is None
    assert "unavailable" in (embed.description or "")


async def test_discord_titles_unavailable_price_subscriptions_by_prices(down: Service) -> None:
    reply = await ask(down, "subscribe 10%")

    embed = discord_embed(reply, query="subscribe 10%")
    assert embed.title == "GPU prices" and embed.footer.text is None
    assert "unavailable" in (embed.description or "")


async def test_discord_keeps_the_query_error_title_and_footer(service: Service) -> None:
    reply = await ask(service, "70b qlora h1000")

    embed = discord_embed(reply, query="70b qlora h1000")
    assert embed.title == QUERY_ERROR_TITLE and embed.footer.text == QUERY_ERROR_FOOTER


async def test_discord_keeps_the_example_as_code_in_a_follow_up_while_the_store_is_down(
    service: Service,
) -> None:
    reply = await ask(service, "what if *seq* 8k", context_lost=True)

    description = discord_embed(reply).description or ""
    assert "\\*seq\\*" in description
    assert bot_spans_intact(description, "`70b qlora 50M tokens seq 8k`")


async def test_discord_escapes_a_masked_link_the_user_typed_once(service: Service) -> None:
    query = "8b lora [x](https://e.vil)"
    reply = await ask(service, query)

    asked = {f.name: f.value for f in discord_embed(reply, query=query).fields}["You asked"]
    assert "\\[x\\](https://e.vil)" in (asked or "") and "\\\\[" not in (asked or "")


async def test_discord_makes_a_mention_in_a_code_span_inert() -> None:
    reply = Reply(ReplyKind.SETTINGS, text="Say `<@123> @everyone` to nobody.")

    description = discord_embed(reply).description or ""
    assert "<@123>" not in description and "@everyone" not in description
    assert bot_spans_intact(description, "`<\u200b@123> @\u200beveryone`")


async def test_discord_shows_a_backtick_in_a_setting_value_as_a_quote(service: Service) -> None:
    reply = await ask(service, "set framework `x")

    description = discord_embed(reply).description or ""
    assert "\"'x\" is not a value" in description
    assert bot_spans_intact(description, "`generic`", EXAMPLE)


async def test_discord_reads_a_card_pasted_as_code_as_the_card(service: Service) -> None:
    reply = await ask(service, "subscribe `h1000`")

    description = discord_embed(reply).description or ""
    assert '"h1000" is not a card' in description
    assert bot_spans_intact(description, "`subscribe 10% h100 a100`")


async def test_discord_shows_a_backtick_in_a_follow_up_while_the_store_is_down_as_a_quote(
    service: Service,
) -> None:
    reply = await ask(service, "what if `seq` 8k", context_lost=True)

    description = discord_embed(reply).description or ""
    assert "'seq'" in description
    assert bot_spans_intact(description, "`70b qlora 50M tokens seq 8k`")
