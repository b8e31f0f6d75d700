"""``Service.respond``: the one answer every front end asks for (price and settings
commands, follow-ups, new questions with the channel's defaults)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from adapters.parse import QueryError
from bot.price_service import PERMISSION_UNCHECKED, PermissionUnchecked
from bot.prices import PriceBook
from bot.service import Ask, ReplyKind, Service
from bot.store_sqlite import SQLiteStore
from bot.thread_context import CONTEXT_EXPIRED_NOTE, CONTEXT_UNAVAILABLE_NOTE
from engine import Request
from engine.choices import Framework
from engine.specs import Catalog
from tests.fakes.clock import ManualClock

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
async def service(catalog: Catalog) -> AsyncIterator[Service]:
    async with SQLiteStore(":memory:") as store:
        yield Service(store, book=PriceBook(catalog), clock=ManualClock(NOW))


def _estimate(service: Service, text: str) -> Request:
    reply = service.answer(text)
    assert reply.request is not None
    return reply.request


async def test_a_price_command_in_a_thread_answers_for_its_channel(service: Service) -> None:
    previous = _estimate(service, "8b lora 10M tokens")

    reply = await service.respond(Ask("prices", "slack", channel="C1", previous=previous))

    assert reply.kind is ReplyKind.PRICES


async def test_the_permission_check_runs_only_for_a_change(service: Service) -> None:
    calls: list[str] = []

    async def check() -> bool:
        calls.append("users.info")
        return True

    await service.respond(Ask("prices", "slack", channel="C1", may_manage=check))
    assert calls == []
    reply = await service.respond(Ask("subscribe 10%", "slack", channel="C1", may_manage=check))
    assert calls == ["users.info"]
    assert reply.prices is not None and reply.prices.kind.value == "subscribed"


async def test_a_permission_check_that_fails_refuses_the_change(service: Service) -> None:
    async def check() -> bool:
        raise PermissionUnchecked("ratelimited")

    reply = await service.respond(Ask("subscribe", "slack", channel="C1", may_manage=check))

    assert reply.kind is ReplyKind.ERROR and reply.retry
    assert reply.text == PERMISSION_UNCHECKED
    assert await service.store.get_subscription("slack", "C1") is None  # type: ignore[union-attr]


async def test_a_settings_command_shows_the_front_ends_command_name(service: Service) -> None:
    reply = await service.respond(Ask("settings", "discord", channel="C1", command="/cost"))

    assert reply.kind is ReplyKind.SETTINGS
    assert "/cost set" in reply.text


async def test_structured_options_make_the_text_no_command(service: Service) -> None:
    def build(words: str, previous: Request | None, catalog: Catalog) -> Request:
        return _estimate(service, "8b lora 10M tokens")

    reply = await service.respond(Ask("prices", "discord", channel="C1", build=build))

    assert reply.kind is ReplyKind.ESTIMATE


async def test_a_new_question_takes_the_channels_defaults_and_a_followup_its_own(
    service: Service,
) -> None:
    await service.respond(Ask("set framework hf", "slack", channel="C1"))
    previous = _estimate(service, "8b lora 10M tokens")

    new = await service.respond(Ask("8b lora 10M tokens", "slack", channel="C1"))
    followup = await service.respond(Ask("seq 8k", "slack", channel="C1", previous=previous))
    over = await service.respond(
        Ask("new 8b lora 10M tokens", "slack", channel="C1", previous=previous)
    )

    assert new.request is not None and new.request.framework is Framework.HF
    assert followup.request is not None and followup.request.framework is Framework.GENERIC
    assert over.request is not None and over.request.framework is Framework.HF


async def test_a_followup_whose_context_was_lost_is_answered_from_its_text(
    service: Service,
) -> None:
    reply = await service.respond(
        Ask("70b qlora 50M tokens h100", "slack", channel="C1", context_lost=True)
    )

    assert reply.kind is ReplyKind.ESTIMATE and reply.report is not None
    assert reply.report.notes[0] == CONTEXT_UNAVAILABLE_NOTE


async def test_a_channel_command_beside_options_says_to_send_it_alone(service: Service) -> None:
    def build(words: str, previous: Request | None, catalog: Catalog) -> Request:
        raise QueryError("not a query", word=words.split()[0])

    reply = await service.respond(Ask("settings", "discord", channel="C1", build=build))

    assert reply.kind is ReplyKind.ERROR
    assert "`/ftcost settings ...` with the query alone" in reply.text
    assert "terminal" not in reply.text


async def test_a_subscription_without_a_store_says_the_store_is_missing() -> None:
    reply = await Service().respond(Ask("subscribe", "slack", channel="C1"))

    assert reply.prices is not None and reply.prices.kind.value == "error"
    assert "store" in reply.text


async def test_new_in_a_thread_whose_context_was_lost_is_a_new_question(
    service: Service,
) -> None:
    alone = await service.respond(Ask("new", "slack", channel="C1", context_lost=True))
    asked = await service.respond(
        Ask("new 8b lora 10M tokens", "slack", channel="C1", context_lost=True)
    )

    assert alone.kind is ReplyKind.ERROR and "say the question after it" in alone.text
    assert asked.kind is ReplyKind.ESTIMATE and asked.report is not None
    assert CONTEXT_UNAVAILABLE_NOTE not in asked.report.notes


async def test_a_followup_whose_estimate_expired_says_it_is_no_longer_kept(
    service: Service,
) -> None:
    partial = await service.respond(
        Ask("what if 8k seq?", "slack", channel="C1", context_expired=True)
    )
    whole = await service.respond(
        Ask("8b lora seq 8k", "slack", channel="C1", context_expired=True)
    )

    assert partial.kind is ReplyKind.ERROR
    assert partial.text.startswith("This thread's estimate is no longer kept")
    assert partial.title == "Estimate no longer kept"
    assert whole.report is not None and whole.report.notes[0] == CONTEXT_EXPIRED_NOTE


async def test_a_threads_turn_holds_the_next_reply_until_the_first_is_done() -> None:
    import asyncio

    from bot.store_types import ThreadKey

    service, key, order = Service(), ThreadKey("slack", "C1", "1.0"), []

    async def reply(name: str, hold: float) -> None:
        async with service.thread_turn(key):
            order.append(f"{name} in")
            await asyncio.sleep(hold)
            order.append(f"{name} out")

    await asyncio.gather(reply("first", 0.05), reply("second", 0.0))

    assert order == ["first in", "first out", "second in", "second out"]
    assert len(service.turns) == 0  # nothing kept once the thread is quiet
