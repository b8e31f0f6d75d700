"""The store goes away: estimates still answer, follow-ups say the context is unavailable
and answer fresh, nothing raises, and it all works again when the store returns.

The service-level behaviour is checked here with a store that can be switched off; the
Redis end-to-end version (a real redis-server stopped and restarted under the Slack app)
is in ``tests/test_redis_outage.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from adapters.discord.embeds import error_embed
from adapters.slack.blocks import error_message
from bot.metrics import sample
from bot.service import Context, ReplyKind, Service
from bot.store import StoreUnavailable, ThreadKey
from bot.store_sqlite import SQLiteStore
from bot.thread_context import CONTEXT_UNAVAILABLE_NOTE


class SwitchableStore(SQLiteStore):
    """SQLite with an off switch: while ``down``, every call raises StoreUnavailable, as
    RedisStore does when Redis is unreachable."""

    down = False

    def __getattribute__(self, name: str) -> Any:
        attr = super().__getattribute__(name)
        if (
            name not in {"open", "close", "down", "ping"}
            and not name.startswith("_")
            and callable(attr)
            and super().__getattribute__("down")
        ):

            async def unavailable(*args: Any, **kwargs: Any) -> Any:
                raise StoreUnavailable("the store is down")

            return unavailable
        return attr


KEY = ThreadKey("slack", "C1", "100.1")
FOLLOWUP = Context("slack", channel="C1", thread="100.1", user="U1", followup=True)


@pytest.fixture
async def store() -> AsyncIterator[SwitchableStore]:
    async with SwitchableStore(":memory:") as s:
        yield s


@pytest.fixture
def service(store: SwitchableStore) -> Service:
    return Service(store)


async def posted_estimate(service: Service) -> None:
    reply = await service.handle("70b qlora 50M tokens h100", Context("slack", "C1", user="U1"))
    assert reply is not None
    await service.remember(KEY, reply, "100.1")


async def test_estimates_answer_while_the_store_is_down(service, store):
    store.down = True
    reply = await service.handle("70b qlora 50M tokens h100", Context("slack", "C1", user="U1"))
    assert reply is not None and reply.kind is ReplyKind.ESTIMATE


async def test_remembering_a_thread_while_down_does_not_raise(service, store):
    reply = service.answer("8b lora")
    store.down = True
    before = sample("ftcost_store_unavailable_total", operation="save_thread")
    await service.remember(KEY, reply, "100.1")
    assert sample("ftcost_store_unavailable_total", operation="save_thread") == before + 1


async def test_followup_while_down_is_a_fresh_estimate_that_says_so(service, store):
    await posted_estimate(service)
    store.down = True
    reply = await service.handle("8b lora seq 8k", FOLLOWUP)
    assert reply is not None and reply.kind is ReplyKind.ESTIMATE
    assert reply.report is not None
    assert reply.report.notes[0] == CONTEXT_UNAVAILABLE_NOTE
    assert reply.request is not None and reply.request.seq_len == 8192
    assert reply.previous is None


async def test_partial_followup_while_down_says_what_is_missing(service, store):
    await posted_estimate(service)
    store.down = True
    reply = await service.handle("what if 8k seq?", FOLLOWUP)
    assert reply is not None and reply.kind is ReplyKind.ERROR
    assert reply.text.startswith("Context unavailable")
    assert "what if 8k seq?" in reply.text
    assert "whole query" in reply.text


async def test_partial_followup_while_down_is_titled_by_the_store_not_the_query(
    service, store
):
    await posted_estimate(service)
    store.down = True
    reply = await service.handle("what if 8k seq?", FOLLOWUP)
    assert reply is not None and reply.title == "Context unavailable"
    embed = error_embed(reply, "what if 8k seq?")
    assert embed.title == "Context unavailable"
    assert embed.footer.text is None  # no pointer to the query language
    slack = error_message(reply, "what if 8k seq?")
    assert "shows the query language" not in str(slack["blocks"])


async def test_followup_finds_its_context_again_when_the_store_returns(service, store):
    await posted_estimate(service)
    store.down = True
    await service.handle("what if 8k seq?", FOLLOWUP)
    store.down = False
    reply = await service.handle("what if 8k seq?", FOLLOWUP)
    assert reply is not None and reply.kind is ReplyKind.ESTIMATE
    assert reply.previous is not None and reply.previous.model == "llama-3.1-70b"
    assert reply.request is not None and reply.request.seq_len == 8192


async def test_retry_dedup_while_down_lets_the_event_through(service, store):
    store.down = True
    assert await service.first_seen("slack:T1:Ev1", 60) is True


async def test_price_commands_while_down_explain_instead_of_failing(service, store):
    store.down = True
    ctx = Context("slack", "C1", user="U1", workspace="slack:T")
    reply = await service.handle("subscribe", ctx)
    assert reply is not None and reply.kind is ReplyKind.ERROR
    assert "unavailable right now" in reply.text


async def test_thread_lookup_while_down_raises_store_unavailable_for_the_caller(service, store):
    store.down = True
    with pytest.raises(StoreUnavailable):
        await service.thread(KEY)


async def test_followup_naming_a_hub_model_while_down_resolves_it_fresh(store):
    from catalog.hub.settings import HubSettings
    from tests.fakes.hub_configs import QWEN2_5_7B_INSTRUCT
    from tests.fakes.hub_server import FakeHub

    async with FakeHub() as hub:
        hub.add("acme/support-ft", QWEN2_5_7B_INSTRUCT.config)
        service = Service(store, hub=HubSettings(endpoint=hub.base_url, timeout_s=2))
        await posted_estimate(service)
        store.down = True
        reply = await service.handle("acme/support-ft lora seq 4k", FOLLOWUP)
    assert reply is not None and reply.kind is ReplyKind.ESTIMATE
    assert reply.request is not None and reply.request.model == "acme/support-ft"
    assert reply.report is not None and reply.report.notes[0] == CONTEXT_UNAVAILABLE_NOTE
