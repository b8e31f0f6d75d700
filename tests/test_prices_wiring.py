"""The price commands through the shared service and both renderers."""

from __future__ import annotations

from datetime import UTC, datetime

from adapters.discord.embeds import embeds_for
from adapters.slack.blocks import message_for
from bot.prices import PriceBook
from bot.service import Ask, Context, ReplyKind, Service
from bot.store_sqlite import SQLiteStore
from engine.specs import Catalog
from tests.fakes import validate_blocks
from tests.fakes.clock import ManualClock
from tests.fakes.price_store import MemoryPriceStore

NOW = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def service(catalog: Catalog) -> Service:
    clock = ManualClock(NOW)
    return Service(MemoryPriceStore(clock.time), book=PriceBook(catalog), clock=clock)  # type: ignore[arg-type]


async def test_handle_routes_price_commands(catalog: Catalog) -> None:
    svc = service(catalog)
    here = Context("slack", channel="C1", user="U1", workspace="slack:T1")
    reply = await svc.handle("prices", here)
    assert reply is not None and reply.kind is ReplyKind.PRICES
    assert reply.prices is not None and reply.prices.view is not None
    assert not reply.is_public

    denied = await svc.handle("subscribe", Context("slack", "C1", user="U2", can_manage=False))
    assert denied is not None and denied.kind is ReplyKind.PRICES
    assert denied.prices is not None and denied.prices.kind.value == "error"

    ok = await svc.handle("subscribe 10% h100", here)
    assert ok is not None and ok.prices is not None and ok.prices.kind.value == "subscribed"
    sub = await svc.store.get_subscription("slack", "C1")  # type: ignore[union-attr]
    assert sub is not None and sub.workspace == "slack:T1"


async def test_a_followup_in_a_thread_without_context_stays_quiet(catalog: Catalog) -> None:
    async with SQLiteStore(":memory:") as store:
        svc = Service(store, book=PriceBook(catalog), clock=ManualClock(NOW))
        reply = await svc.handle("prices", Context("slack", "C1", "1.0", followup=True))
    assert reply is None  # no thread context: stay quiet


async def test_renderers_show_the_prices_view_and_confirmations(catalog: Catalog) -> None:
    svc = service(catalog)
    here = Context("discord", channel="1", user="2", workspace="discord:3")
    table = await svc.handle("prices", here)
    done = await svc.handle("subscribe", here)
    assert table is not None and done is not None
    for reply in (table, done):
        message = message_for(reply)
        assert message["text"] and validate_blocks(message["blocks"]) == []
        (embed,) = embeds_for(reply)
        assert embed.title or embed.description


def test_estimates_word_the_price_age(catalog: Catalog) -> None:
    reply = service(catalog).answer("70b qlora 50M tokens h100", None, "slack:T1")
    assert reply.kind is ReplyKind.ESTIMATE and reply.report is not None
    assert reply.report.price_line
    assert "Prices:" in str(message_for(reply)["blocks"])


async def test_price_n_in_a_thread_reprices_its_estimate_instead_of_showing_the_table(
    catalog: Catalog,
) -> None:
    svc = service(catalog)
    previous = svc.answer("70b qlora 50M tokens h100", None, "slack:T1").request
    reply = await svc.respond(Ask("price 3", "slack", channel="C1", previous=previous))
    assert reply.kind is ReplyKind.ESTIMATE and reply.request is not None
    assert reply.request.price_per_gpu_hour == 3.0
