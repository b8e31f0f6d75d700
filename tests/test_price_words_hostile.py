"""Price commands as people really send them (:func:`bot.price_words.price_command`),
through the shared service every front end calls (Slack and Discord alike): pasted as
code (``subscribe `h100```) and asked as questions (``subscribe?``), which change
nothing."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from adapters.discord.embeds import embeds_for
from bot.price_service import PriceReplyKind
from bot.price_words import price_command
from bot.service import Ask, ReplyKind, Service
from bot.store_sqlite import SQLiteStore


@pytest.fixture
async def service() -> AsyncIterator[Service]:
    async with SQLiteStore(":memory:") as store:
        yield Service(store, workers=0)


def _ask(text: str, platform: str = "discord", **kw: object) -> Ask:
    return Ask(text, platform, channel="C1", user="U1", workspace=f"{platform}:T1",
               may_manage=kw.pop("may_manage", True), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("subscribe `h100`", ("subscribe", "h100")),
        ("`subscribe 10% h100`", ("subscribe", "10% h100")),
        ("subscribe ``h100`` `a100`", ("subscribe", "h100 a100")),
        ("prices `h100`", ("prices", "h100")),
        ("`unsubscribe`", ("unsubscribe", "")),
    ],
)
def test_backticks_are_word_breaks_as_in_a_query(text: str, expected: tuple[str, str]) -> None:
    assert price_command(text) == expected


@pytest.mark.parametrize(
    "text", ["subscribe?", "unsubscribe?", "Subscribe ?", "UNSUBSCRIBE??",
             "subscribe 10% h100?", "`subscribe?`", "unsubscribe?!", "unsubscribe ?!",
             "unsubscribe? please", "subscribe? 10%"],
)
def test_a_change_asked_as_a_question_is_no_change(text: str) -> None:
    assert price_command(text) == ("prices", "")


def test_a_change_with_other_punctuation_still_changes() -> None:
    assert price_command("subscribe!") == ("subscribe", "")
    assert price_command("unsubscribe.") == ("unsubscribe", "")


def test_a_full_stop_after_a_subscription_is_not_part_of_it() -> None:
    assert price_command("subscribe 10%.") == ("subscribe", "10%")
    assert price_command("subscribe 10% h100!") == ("subscribe", "10% h100")


@pytest.mark.parametrize("platform", ["slack", "discord"])
async def test_subscribe_with_a_pasted_card_subscribes_to_it(
    service: Service, platform: str
) -> None:
    reply = await service.respond(_ask("subscribe `h100`", platform))

    assert reply.kind is ReplyKind.PRICES and reply.prices is not None
    assert reply.prices.kind is PriceReplyKind.SUBSCRIBED, reply.text
    assert service.store is not None
    sub = await service.store.get_subscription(platform, "C1")
    assert sub is not None and sub.cards == ("h100-sxm",)


@pytest.mark.parametrize("platform", ["slack", "discord"])
async def test_subscribe_asked_as_a_question_changes_nothing_and_says_how(
    service: Service, platform: str
) -> None:
    checked: list[bool] = []

    async def may_manage() -> bool:
        checked.append(True)
        return True

    reply = await service.respond(_ask("subscribe?", platform, may_manage=may_manage))

    assert service.store is not None
    assert await service.store.get_subscription(platform, "C1") is None
    assert reply.prices is not None and reply.prices.kind is PriceReplyKind.PRICES
    assert not checked  # no change: no permission asked of the platform
    footer = embeds_for(reply)[0].footer.text or ""
    assert "/ftcost subscribe [min change %] [cards...]" in footer


@pytest.mark.parametrize("platform", ["slack", "discord"])
async def test_unsubscribe_asked_as_a_question_keeps_the_subscription_and_says_how(
    service: Service, platform: str
) -> None:
    await service.respond(_ask("subscribe 10% h100", platform))
    reply = await service.respond(_ask("unsubscribe?", platform))

    assert service.store is not None
    sub = await service.store.get_subscription(platform, "C1")
    assert sub is not None and sub.cards == ("h100-sxm",)
    assert reply.prices is not None and reply.prices.subscription is not None
    footer = embeds_for(reply)[0].footer.text or ""
    assert "/ftcost unsubscribe stops them" in footer


async def test_a_question_mark_after_a_whole_subscription_changes_nothing(
    service: Service,
) -> None:
    await service.respond(_ask("subscribe 10% h100"))
    reply = await service.respond(_ask("subscribe 20% a100?"))

    assert reply.kind is ReplyKind.PRICES and reply.prices is not None
    assert reply.prices.subscription is not None
    assert service.store is not None
    sub = await service.store.get_subscription("discord", "C1")
    assert sub is not None and sub.cards == ("h100-sxm",) and sub.min_change_pct == 10
