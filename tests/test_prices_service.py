"""``prices``, ``subscribe`` and ``unsubscribe`` through the price command handler."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.price_service import PriceCommands, PriceContext, PriceReplyKind, price_command
from bot.prices import PriceBook
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.price_store import MemoryPriceStore

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
HERE = PriceContext("slack", "C1", "slack:T1", user="U1")


@pytest.fixture
def commands(catalog: Catalog) -> PriceCommands:
    clock = ManualClock(NOW)
    return PriceCommands(MemoryPriceStore(clock.time), PriceBook(catalog), clock)


def test_price_words_are_recognised() -> None:
    assert price_command("Subscribe 10% h100") == ("subscribe", "10% h100")
    assert price_command("price") == ("prices", "")
    assert price_command("70b qlora") is None


async def test_subscribe_stores_the_channel_with_its_options(commands: PriceCommands) -> None:
    reply = await commands.handle("subscribe 10% h100", HERE)
    assert reply is not None and reply.kind is PriceReplyKind.SUBSCRIBED
    sub = await commands.store.get_subscription("slack", "C1")  # type: ignore[union-attr]
    assert sub is not None
    assert (sub.min_change_pct, sub.cards, sub.workspace, sub.created_by, sub.created_at) == (
        10.0, ("h100-sxm",), "slack:T1", "U1", NOW.timestamp(),
    )  # fmt: skip


async def test_subscribe_again_replaces_the_options(commands: PriceCommands) -> None:
    await commands.handle("subscribe 10% h100", HERE)
    await commands.handle("subscribe", HERE)
    sub = await commands.store.get_subscription("slack", "C1")  # type: ignore[union-attr]
    assert sub is not None and (sub.min_change_pct, sub.cards) == (5.0, ())


async def test_a_bad_subscribe_is_an_error_that_says_why(commands: PriceCommands) -> None:
    reply = await commands.handle("subscribe h1000", HERE)
    assert reply is not None and reply.kind is PriceReplyKind.ERROR and "h1000" in reply.text


async def test_non_admins_may_not_subscribe_where_the_platform_can_tell(
    commands: PriceCommands,
) -> None:
    ctx = PriceContext("slack", "C1", "slack:T1", user="U2", can_manage=False)
    reply = await commands.handle("subscribe", ctx)
    assert reply is not None and reply.kind is PriceReplyKind.ERROR
    assert await commands.store.get_subscription("slack", "C1") is None  # type: ignore[union-attr]


async def test_anyone_may_subscribe_where_the_platform_cannot_tell(
    commands: PriceCommands,
) -> None:
    reply = await commands.handle("subscribe", PriceContext("slack", "C1", "slack:T1"))
    assert reply is not None and reply.kind is PriceReplyKind.SUBSCRIBED


async def test_unsubscribe_removes_the_channel(commands: PriceCommands) -> None:
    await commands.handle("subscribe", HERE)
    reply = await commands.handle("unsubscribe", HERE)
    assert reply is not None and reply.text.startswith("This channel will get no more")
    assert await commands.store.get_subscription("slack", "C1") is None  # type: ignore[union-attr]


async def test_unsubscribe_when_not_subscribed_says_so(commands: PriceCommands) -> None:
    reply = await commands.handle("unsubscribe", HERE)
    assert reply is not None and "was not subscribed" in reply.text


async def test_prices_shows_the_table_and_the_channels_subscription(
    commands: PriceCommands,
) -> None:
    await commands.handle("subscribe 3% l40s", HERE)
    reply = await commands.handle("prices", HERE)
    assert reply is not None and reply.view is not None
    assert reply.subscription == "price changes of 3% or more in l40s"
    assert reply.view.summary.startswith("Built-in catalog prices")


async def test_prices_works_anywhere_for_anyone(commands: PriceCommands) -> None:
    reply = await commands.handle("prices", PriceContext("discord", None, None, can_manage=False))
    assert reply is not None and reply.kind is PriceReplyKind.PRICES


async def test_subscribe_needs_a_channel(commands: PriceCommands) -> None:
    reply = await commands.handle("subscribe", PriceContext("discord", None, None))
    assert reply is not None and reply.kind is PriceReplyKind.ERROR


async def test_unsubscribe_with_a_card_changes_nothing_and_says_what_it_takes(
    commands: PriceCommands,
) -> None:
    await commands.handle("subscribe 10% h100 a100", HERE)
    reply = await commands.handle("unsubscribe h100", HERE)
    assert reply is not None and reply.kind is PriceReplyKind.ERROR
    assert reply.text.startswith("Nothing was changed") and '("h100")' in reply.text
    assert "subscribe again with the ones to keep" in reply.text
    assert await commands.store.get_subscription("slack", "C1") is not None  # type: ignore[union-attr]


async def test_unsubscribe_all_removes_the_subscription(commands: PriceCommands) -> None:
    await commands.handle("subscribe", HERE)
    reply = await commands.handle("unsubscribe all", HERE)
    assert reply is not None and reply.kind is PriceReplyKind.UNSUBSCRIBED
    assert await commands.store.get_subscription("slack", "C1") is None  # type: ignore[union-attr]


async def test_prices_with_a_card_shows_only_its_rows_and_says_so(
    commands: PriceCommands,
) -> None:
    reply = await commands.handle("prices h100", HERE, "/cost")
    assert reply is not None and reply.view is not None
    assert [row[0] for row in reply.view.table.rows] == ["h100-sxm"]
    assert reply.text.endswith("Only h100-sxm shown: `/cost prices` shows every card.")


async def test_prices_with_a_word_that_is_no_card_is_an_error(commands: PriceCommands) -> None:
    reply = await commands.handle("prices *x*", HERE)
    assert reply is not None and reply.kind is PriceReplyKind.ERROR
    assert '"*x*" is not a card I know' in reply.text


async def test_price_followed_by_a_number_is_no_price_command(commands: PriceCommands) -> None:
    assert await commands.handle("price 3", HERE) is None


async def test_replies_name_the_configured_slash_command(commands: PriceCommands) -> None:
    subscribed = await commands.handle("subscribe 10% h100", HERE, "/cost")
    refused = await commands.handle("unsubscribe h100", HERE, "/cost")
    texts = [r.text for r in (subscribed, refused) if r is not None]
    assert len(texts) == 2 and all("`/cost " in t and "/ftcost" not in t for t in texts)


async def test_replies_name_ftcost_when_no_command_is_given(commands: PriceCommands) -> None:
    reply = await commands.handle("subscribe", HERE)
    assert reply is not None and "`/ftcost unsubscribe` stops them" in reply.text
