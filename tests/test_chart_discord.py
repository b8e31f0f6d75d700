"""The chart on Discord, end to end: the real discord.py client against the fake gateway
and REST API, which receives the PNG as a multipart attachment in the estimate's thread."""
# ruff: noqa: F401, F811  (fixtures imported from test_discord_bot are test parameters)

from __future__ import annotations

import struct
from typing import Any

from tests.fakes.discord_server import FakeDiscord, validate_attachments, validate_message
from tests.test_discord_bot import click, custom_ids, fake, running, slash, store, wait_until

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def chart_posts(fake: FakeDiscord, channel_id: int) -> list[Any]:
    """Successful message posts with files in ``channel_id``."""
    return [c for c in fake.find_calls("POST", f"/channels/{channel_id}/messages", status=200)
            if c.files]


async def test_estimates_carry_a_show_chart_button(fake, store):
    async with running(fake, store):
        cb = await slash(fake, {"query": "70b qlora 50M tokens h100"})

        ids = custom_ids(cb["data"])
        labels = [c["label"] for row in cb["data"]["components"] for c in row["components"]
                  if c.get("custom_id", "").startswith("ftc:c")]
        assert labels == ["Show chart"]
        assert all(len(i) <= 100 for i in ids)


async def test_show_chart_attaches_the_png_in_the_estimates_thread(fake, store):
    async with running(fake, store):
        cb = await slash(fake, {"query": "70b qlora 50M tokens h100"})
        mid = int(fake.channel_messages()[0]["id"])
        chart = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:c"))

        await click(fake, mid, chart)
        await fake.wait_for_call("POST", f"/channels/{mid}/messages", status=200)

        [post] = chart_posts(fake, mid)  # the thread opened on the estimate has its id
        [file] = post.files
        assert file["filename"] == "chart.png" and file["data"].startswith(PNG_SIGNATURE)
        assert struct.unpack(">II", file["data"][16:24]) == (1600, 900)
        [embed] = post.json["embeds"]
        assert embed["image"]["url"] == "attachment://chart.png"
        assert embed["title"].startswith("Llama 3.1 70B")
        assert validate_message(post.json) == [] and validate_attachments(post.json,
                                                                          post.files) == []
        [message] = fake.channel_messages(mid)
        assert message["attachments"][0]["filename"] == "chart.png"
        assert fake.find_calls("POST", f"/channels/{fake.channel_id}/messages/{mid}/threads")
        assert fake.violations == []


async def test_the_chart_word_answers_then_attaches_the_chart_in_its_thread(fake, store):
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b qlora 20M tokens chart"})
        mid = int(fake.channel_messages()[0]["id"])

        await wait_until(lambda: chart_posts(fake, mid))

        assert cb["data"]["embeds"][0]["title"] == "Llama 3.1 8B · QLoRA"
        [post] = chart_posts(fake, mid)
        assert post.files[0]["data"].startswith(PNG_SIGNATURE)
        assert post.json["embeds"][0]["image"]["url"] == "attachment://chart.png"
        assert fake.violations == []


async def test_without_attach_files_permission_the_clicker_is_told(fake, store):
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b qlora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        chart = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:c"))
        fake.fail_next("POST", f"/channels/{mid}/messages", status=403, code=50013)

        await click(fake, mid, chart)
        [notice] = await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/")

        assert notice.json["flags"] & (1 << 6)  # ephemeral
        assert "Attach Files" in notice.json["embeds"][0]["description"]


async def test_chart_alone_in_the_thread_answers_with_the_chart(fake, store):
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        seq = next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:s2"))
        await click(fake, mid, seq)  # opens the estimate's thread (its id is the message's)
        await wait_until(lambda: fake.channel_messages(mid))

        deferred = await slash(fake, {"query": "chart"}, channel_id=mid)
        [edit] = await fake.wait_for_call("PATCH", f"/webhooks/{fake.application_id}/")

        assert deferred["type"] == 5  # acknowledged first: a cold render may take a second
        assert edit.files[0]["filename"] == "chart.png"
        assert edit.files[0]["data"].startswith(PNG_SIGNATURE)
        assert edit.json["embeds"][0]["image"]["url"] == "attachment://chart.png"
        assert edit.json["embeds"][0]["title"].startswith("Llama 3.1 8B · seq 4,096")
        assert fake.violations == []


async def test_a_mention_saying_chart_in_the_thread_posts_the_chart_there(fake, store):
    async with running(fake, store):
        cb = await slash(fake, {"query": "8b lora 20M tokens"})
        mid = int(fake.channel_messages()[0]["id"])
        await click(fake, mid, next(i for i in custom_ids(cb["data"]) if i.startswith("ftc:m")))
        await wait_until(lambda: fake.channel_messages(mid))

        await fake.dispatch("MESSAGE_CREATE", fake.message_create(
            f"<@{fake.bot_user_id}> chart", mid, mentions=[fake.bot_user_id]))
        await wait_until(lambda: chart_posts(fake, mid))

        [post] = chart_posts(fake, mid)
        assert post.json["embeds"][0]["image"]["url"] == "attachment://chart.png"
        ours = [m for m in fake.channel_messages(mid)
                if m["author"]["id"] == str(fake.bot_user_id)]
        assert len(ours) == 2  # the what-if and the chart, no new estimate
