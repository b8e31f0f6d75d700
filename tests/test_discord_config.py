"""``/ftcost config:`` (issue 16): a training config attached to the slash command, through
the real discord.py client against the fake Discord (gateway, REST and CDN)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bot.store import ThreadKey
from bot.store_sqlite import SQLiteStore
from tests.fakes.discord_server import FLAG_EPHEMERAL, FakeDiscord
from tests.test_discord_bot import click, custom_ids, running, slash, stored, wait_until

FIXTURES = Path(__file__).parent / "fixtures" / "trainconfig"
AXOLOTL = (FIXTURES / "axolotl_qlora.yml").read_bytes()
TORCHTUNE = (FIXTURES / "torchtune_qlora.yaml").read_bytes()


@pytest.fixture
def fake(discord_fake: FakeDiscord) -> FakeDiscord:
    return discord_fake


@pytest.fixture
def store(sqlite_store: SQLiteStore) -> SQLiteStore:
    return sqlite_store


async def ask(
    fake: FakeDiscord,
    filename: str,
    data: bytes,
    options: dict[str, Any] | None = None,
    *,
    size: int | None = None,
    **kw: Any,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``/ftcost config:<file>`` with ``options``; (the callback, the attachment)."""
    attachment = fake.attachment(filename, data, size=size)
    cb = await slash(
        fake, {**(options or {}), "config": attachment["id"]},
        resolved={"attachments": {attachment["id"]: attachment}}, **kw,
    )
    return cb, attachment


def public_messages(fake: FakeDiscord) -> list[dict[str, Any]]:
    return [m for m in fake.channel_messages() if not (m.get("flags") or 0) & FLAG_EPHEMERAL]


def path_of(attachment: dict[str, Any]) -> str:
    return "/" + attachment["url"].split("/", 3)[3]


def private(cb: dict[str, Any]) -> str:
    """The text of an answer shown to the asker only."""
    assert (cb["data"].get("flags") or 0) & FLAG_EPHEMERAL
    return str(cb["data"]["embeds"])


async def test_an_attached_config_is_estimated_with_the_keys_read_and_ignored(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, attachment = await ask(fake, "qlora.yml", AXOLOTL)

        assert not (cb["data"].get("flags") or 0) & FLAG_EPHEMERAL
        embed = cb["data"]["embeds"][0]
        assert embed["title"].startswith("Llama 3.1 8B · QLoRA")
        assert "Read from the axolotl config: base\\_model:" in embed["description"]
        assert "lora\\_r: 32 → LoRA rank 32" in embed["description"]
        assert "Ignored (no effect on the estimate):" in embed["description"]
        assert "config:qlora.yml" in embed["footer"]["text"]
        assert fake.cdn_fetches == [path_of(attachment)]
        mid = fake.channel_messages()[0]["id"]
        context = await stored(store, ThreadKey("discord", str(fake.channel_id), mid))
        assert (context.request.seq_len, context.request.micro_batch) == (4096, 2)


async def test_the_query_and_the_options_override_the_config(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        await ask(fake, "qlora.yml", AXOLOTL,
                  {"query": "seq 8k 20M tokens", "gpu": "h100", "model": "llama-3.1-70b"})

        mid = fake.channel_messages()[0]["id"]
        context = await stored(store, ThreadKey("discord", str(fake.channel_id), mid))
        request = context.request
        assert (request.model, request.seq_len, request.gpu) == (
            "llama-3.1-70b", 8192, "h100-sxm")
        assert request.dataset_tokens == 20_000_000
        assert request.method.value == "qlora" and request.micro_batch == 2  # the config's


async def test_a_torchtune_recipe_is_timed_as_torchtune(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "8B_qlora_single_device.yaml", TORCHTUNE)

        assert "Read from the torchtune config" in cb["data"]["embeds"][0]["description"]
        assert "torchtune" in cb["data"]["embeds"][0]["description"].lower()


async def test_a_query_that_disagrees_with_an_option_is_a_private_error(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "qlora.yml", AXOLOTL, {"query": "seq 8k", "seq": "4k"})

        assert "but the seq option says" in private(cb)


async def test_an_attachment_over_64_kb_is_refused_before_it_is_downloaded(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "big.yml", b"base_model: x/y\n" + b"#" * 99_000)

        text = private(cb)
        assert "big.yml is 97 KB" in text and "up to 64 KB" in text and "axolotl" in text
        assert fake.cdn_fetches == []
        assert public_messages(fake) == []


async def test_an_attachment_larger_than_reported_is_refused(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "lying.yml", b"base_model: x/y\n" + b"#" * 99_000, size=100)

        assert "lying.yml is 97 KB" in private(cb)


async def test_a_binary_attachment_is_a_private_error_naming_the_formats(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "model.safetensors", b"\x08\x00\x00\x00\x00\x00\x00\x00{}")

        text = private(cb)
        assert "model.safetensors is a binary file" in text and "LLaMA-Factory" in text


async def test_an_attachment_not_in_utf8_is_a_private_error(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "latin1.yml", "base_model: café/x\n".encode("latin-1"))

        assert "latin1.yml is not UTF-8 text" in private(cb)


async def test_a_config_naming_no_model_is_a_private_error_with_a_discord_example(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        cb, _ = await ask(fake, "lora.yml", b"adapter: lora\nsequence_len: 2048\nlora_r: 8\n")

        text = private(cb)
        assert "names no model" in text and "torchtune" in text
        assert "/ftcost config: qlora.yml" in text
        assert public_messages(fake) == []


async def test_a_config_in_an_estimates_thread_is_a_new_question(
    fake: FakeDiscord, store: SQLiteStore
) -> None:
    async with running(fake, store):
        first = await slash(fake, {"query": "70b full 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        seq = next(i for i in custom_ids(first["data"]) if i.startswith("ftc:s2"))
        await click(fake, mid, seq)  # opens the estimate's thread
        await wait_until(lambda: fake.channel_messages(mid))

        cb, _ = await ask(fake, "qlora.yml", AXOLOTL, channel_id=mid)

        embed = cb["data"]["embeds"][0]
        assert embed["title"].startswith("Llama 3.1 8B · QLoRA")  # not a what-if of the 70B
        assert "What if" not in embed["description"]
        await stored(store, ThreadKey("discord", str(fake.channel_id), str(mid)),
                     lambda c: c.request.model == "llama-3.1-8b")
