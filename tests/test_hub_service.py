"""The bot's service with Hub models: resolved before the engine runs, remembered in the
state store, and follow-ups and button clicks on them."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.chart import chart_image
from adapters.discord.options import Options
from adapters.discord.options import answer as discord_answer
from bot.service import Context, ReplyKind, Service
from bot.store import ThreadKey
from bot.store_sqlite import SQLiteStore
from catalog.hub.settings import HubSettings
from engine import Method, Request
from tests.fakes.hub_configs import QWEN2_5_7B_INSTRUCT
from tests.fakes.hub_server import FakeHub, commit_for, index_json

REPO = "acme/qwen2.5-7b-support-ft"
"""A fine-tune no catalog lists, whose config is Qwen2.5-7B-Instruct's."""
QUERY = f"{REPO} lora 20M tokens"




@pytest.fixture
def hub(hub: FakeHub) -> FakeHub:
    """The fake Hub serving :data:`REPO` on two branches."""
    index = index_json(QWEN2_5_7B_INSTRUCT.index_total_size or 0)
    hub.add(REPO, QWEN2_5_7B_INSTRUCT.config, index=index, branches=("main", "v2"))
    return hub


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(tmp_path / "state.sqlite3") as opened:
        yield opened


def service_for(hub: FakeHub, store: SQLiteStore | None) -> Service:
    return Service(store, workers=0, hub=HubSettings(endpoint=hub.base_url, timeout_s=2))


async def test_a_hub_model_is_estimated_and_the_reply_says_where_it_came_from(hub, store):
    reply = await service_for(hub, store).answer_async(QUERY)

    assert reply.kind is ReplyKind.ESTIMATE
    assert reply.request is not None and reply.request.model == REPO
    assert reply.report is not None and reply.report.title == f"{REPO} · LoRA"
    assert reply.report.notes[0].startswith(
        f"{REPO} read from the Hugging Face Hub (revision main, commit "
        f"{commit_for(REPO)[:12]}): qwen2 architecture"
    )


async def test_the_estimate_equals_the_catalog_models_with_the_same_config(hub, store):
    service = service_for(hub, store)

    hub_reply = await service.answer_async(QUERY)
    catalog_reply = service.answer("qwen2.5-7b lora 20M tokens")

    assert hub_reply.report is not None and catalog_reply.report is not None
    assert hub_reply.report.per_gpu_gb == catalog_reply.report.per_gpu_gb
    assert hub_reply.report.cost_line == catalog_reply.report.cost_line


async def test_a_thread_followup_on_a_hub_model_asks_the_hub_nothing(hub, store):
    service = service_for(hub, store)
    key = ThreadKey("slack", "C1", "1700000000.000100")
    first = await service.handle(QUERY, Context("slack", "C1", key.thread))
    assert first is not None
    await service.remember(key, first, "1700000000.000200")
    asked = len(hub.hits())

    reply = await service.handle(
        "what if seq 8k", Context("slack", "C1", key.thread, followup=True)
    )

    assert reply is not None and reply.kind is ReplyKind.ESTIMATE
    assert reply.request is not None and reply.request.model == REPO
    assert reply.request.seq_len == 8192 and "seq 2,048 → 8,192" in reply.changes
    assert len(hub.hits()) == asked


async def test_after_a_restart_the_store_still_holds_the_hub_model(hub, store):
    key = ThreadKey("discord", "C9", "42")
    first = await service_for(hub, store).answer_async(QUERY)
    await service_for(hub, store).remember(key, first, "42")
    asked = len(hub.hits())

    restarted = service_for(hub, store)
    reply = await restarted.handle("with full", Context("discord", "C9", "42", followup=True))

    assert reply is not None and reply.kind is ReplyKind.ESTIMATE
    assert reply.request is not None and reply.request.method is Method.FULL
    assert len(hub.hits()) == asked


async def test_a_button_click_on_a_hub_estimate_is_estimated(hub, store):
    service = service_for(hub, store)
    base = (await service.answer_async(QUERY)).request
    assert base is not None

    reply = await service.estimate_async(base.model_copy(update={"method": Method.QLORA}), base)

    assert reply.kind is ReplyKind.ESTIMATE
    assert reply.changes == ["method LoRA → QLoRA"]


async def test_a_hub_revision_is_named_in_the_reply(hub, store):
    reply = await service_for(hub, store).answer_async(f"{REPO}@v2 qlora")

    assert reply.request is not None and reply.request.model == f"{REPO}@v2"
    assert reply.report is not None
    assert f"(revision v2, commit {commit_for(REPO, 'v2')[:12]})" in reply.report.notes[0]


async def test_a_hub_problem_is_an_error_reply_naming_the_model(hub, store):
    reply = await service_for(hub, store).answer_async("acme/nope lora 20M tokens")

    assert reply.kind is ReplyKind.ERROR and reply.word == "acme/nope"
    assert reply.text.startswith("No model acme/nope on the Hugging Face Hub")


async def test_catalog_queries_never_ask_the_hub(hub, store):
    reply = await service_for(hub, store).answer_async("Qwen/Qwen2.5-7B-Instruct qlora h100")

    assert reply.kind is ReplyKind.ESTIMATE and reply.request is not None
    assert reply.request.model == "qwen2.5-7b"
    assert hub.hits() == []


async def test_a_word_that_is_not_org_name_keeps_the_parsers_message(hub, store):
    reply = await service_for(hub, store).answer_async("70b qlorra")

    assert reply.kind is ReplyKind.ERROR and "qlora" in reply.suggestions
    assert hub.hits() == []


async def test_the_discord_model_option_takes_a_hub_model(hub, store):
    service = service_for(hub, store)

    reply = await service.run_resolved(discord_answer, "lora", Options(model=REPO, tokens="20M"))

    assert reply.kind is ReplyKind.ESTIMATE
    assert reply.request is not None and reply.request.model == REPO


def test_estimating_an_unresolved_hub_model_synchronously_is_an_error_reply(hub):
    reply = Service(workers=0).estimate(Request(model=REPO))

    assert reply.kind is ReplyKind.ERROR and "Ask again with the whole query" in reply.text


async def test_the_chart_of_a_hub_estimate_gets_a_catalog_holding_the_model(hub, store):
    service = service_for(hub, store)
    request = (await service.answer_async(QUERY)).request
    assert request is not None
    asked = len(hub.hits())

    image = chart_image(request, await service.catalog_with(request))

    assert image.png.startswith(b"\x89PNG") and REPO in image.title
    assert len(hub.hits()) == asked
