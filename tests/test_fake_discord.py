"""The fake Discord (tests/fakes/discord_server.py) driven by the *real* discord.py client.

Nothing in discord.py is patched except the two endpoint class attributes that
``point_discord_at`` sets (``Route.BASE`` and ``DiscordWebSocket.DEFAULT_GATEWAY``).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import AsyncIterator
from typing import Any

import discord
import pytest
from discord import app_commands

from tests.fakes.discord_server import (
    FakeDiscord,
    point_discord_at,
    restore_discord_endpoints,
    validate_autocomplete,
    validate_message,
)

MODELS = [f"model-{i:02d}" for i in range(40)]


# ---------------------------------------------------------------------------------------------
# A small bot exercising the surfaces the product uses
# ---------------------------------------------------------------------------------------------
class CostView(discord.ui.View):
    """Persistent view: timeout=None and every item has a custom_id."""

    def __init__(self) -> None:
        super().__init__(timeout=None)

    @discord.ui.button(
        label="Refresh", custom_id="ftcost:refresh", style=discord.ButtonStyle.primary
    )
    async def refresh(self, interaction: discord.Interaction, _: discord.ui.Button) -> None:
        await interaction.response.send_message("refreshed", ephemeral=True)

    @discord.ui.select(
        custom_id="ftcost:gpu",
        options=[discord.SelectOption(label=g, value=g) for g in ("A100", "H100", "L40S")],
    )
    async def gpu(self, interaction: discord.Interaction, select: discord.ui.Select) -> None:
        await interaction.response.edit_message(content=f"gpu={select.values[0]}")


class Bot(discord.Client):
    def __init__(self, fake: FakeDiscord, **kwargs: Any) -> None:
        kwargs.setdefault("intents", discord.Intents.default())
        # guild_ready_timeout: discord.py waits this long after the last GUILD_CREATE before
        # on_ready (default 2 s). A documented Client option, not a patch.
        super().__init__(guild_ready_timeout=0.05, **kwargs)
        self.fake = fake
        self.tree = app_commands.CommandTree(self)
        self.results: dict[str, Any] = {}
        self.seen_messages: list[discord.Message] = []
        self._register()

    def _register(self) -> None:
        bot = self

        @self.tree.command(name="cost", description="Estimate a fine-tune")
        @app_commands.describe(model="Model", gpus="Number of GPUs")
        async def cost(interaction: discord.Interaction, model: str, gpus: int = 8) -> None:
            bot.results["channel"] = interaction.channel
            bot.results["options"] = (model, gpus)
            embed = discord.Embed(title=f"{model} on {gpus} GPUs", description="about $42")
            embed.add_field(name="Memory", value="80 GB")
            await interaction.response.send_message(
                embed=embed,
                view=CostView(),
                allowed_mentions=discord.AllowedMentions.none(),
            )
            original = await interaction.original_response()
            bot.results["original"] = original
            followup = await interaction.followup.send("details follow", wait=True)
            bot.results["followup"] = followup

        @cost.autocomplete("model")
        async def cost_model(
            _: discord.Interaction, current: str
        ) -> list[app_commands.Choice[str]]:
            hits = [m for m in MODELS if current in m]
            return [app_commands.Choice(name=m, value=m) for m in hits][:25]

        @self.tree.command(name="report", description="Deferred answer")
        async def report(interaction: discord.Interaction) -> None:
            await interaction.response.defer(thinking=True)
            bot.results["edited"] = await interaction.edit_original_response(
                content="done", embed=discord.Embed(title="GPU-hours")
            )

        @self.tree.command(name="slow", description="Answers too late")
        async def slow(interaction: discord.Interaction) -> None:
            await asyncio.sleep(0.3)
            try:
                await interaction.response.send_message("late")
            except discord.HTTPException as exc:
                bot.results["slow_error"] = exc

    async def setup_hook(self) -> None:
        self.add_view(CostView())
        guild = discord.Object(self.fake.guild_id)
        self.tree.copy_global_to(guild=guild)
        await self.tree.sync(guild=guild)

    async def on_message(self, message: discord.Message) -> None:
        self.seen_messages.append(message)


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    async with FakeDiscord() as server:
        point_discord_at(server.base_url)
        try:
            yield server
        finally:
            restore_discord_endpoints()
        assert server.internal_errors == []


@contextlib.asynccontextmanager
async def running(client: discord.Client) -> AsyncIterator[discord.Client]:
    """Start the client against the fake, wait for on_ready, close it cleanly afterwards."""
    async with client:  # runs discord.py's async setup; closes the client on exit
        task = asyncio.create_task(client.start("fake-token"))
        ready = asyncio.create_task(client.wait_until_ready())
        done, _ = await asyncio.wait({task, ready}, timeout=5, return_when=asyncio.FIRST_COMPLETED)
        if ready not in done:
            ready.cancel()
            await client.close()
            if task in done:
                task.result()  # raise the startup error
            raise AssertionError("client never became ready")
        try:
            yield client
        finally:
            await client.close()
            await asyncio.wait_for(task, 5)


async def wait_until(predicate: Any, timeout: float = 3.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


# ---------------------------------------------------------------------------------------------
# Gateway
# ---------------------------------------------------------------------------------------------
async def test_connects_identifies_and_caches_the_guild(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        assert bot.user is not None and bot.user.id == fake.bot_user_id
        assert bot.application_id == fake.application_id
        assert len(fake.identifies) == 1
        ident = fake.identifies[0]
        assert ident["token"] == "fake-token"
        assert ident["intents"] == discord.Intents.default().value
        # discord.py asked for zlib-stream and decoded the compressed frames
        assert fake.gateway_queries[0]["compress"] == "zlib-stream"
        assert fake.gateway_queries[0]["v"] == "10"
        assert any(p["op"] == 1 for p in fake.gateway_received)  # heartbeat answered
        guild = bot.get_guild(fake.guild_id)
        assert guild is not None and guild.me is not None
        assert isinstance(guild.get_channel(fake.channel_id), discord.TextChannel)
        thread = guild.get_thread(fake.thread_id)
        assert thread is not None and thread.parent_id == fake.channel_id
        # setup_hook synced the commands: bulk overwrite returned them with ids
        [put] = fake.find_calls("PUT", f"/applications/{fake.application_id}/guilds/")
        assert [c["name"] for c in put.json] == ["cost", "report", "slow"]
        assert all(c["id"] for c in fake.guild_commands[fake.guild_id])
    assert bot.is_closed()


async def test_reconnect_resumes_at_resume_gateway_url(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        await fake.send_reconnect()
        await wait_until(lambda: len(fake.resumes) == 1)
        assert fake.resumes[0]["session_id"] == bot.ws.session_id
        assert len(fake.identifies) == 1  # resumed, not re-identified
        await fake.wait_until_identified()
        payload = fake.message_create("after resume", mentions=[fake.bot_user_id])
        bot.seen_messages.clear()
        await fake.dispatch("MESSAGE_CREATE", payload)
        await wait_until(lambda: bot.seen_messages)
        assert bot.seen_messages[0].content == "after resume"


# ---------------------------------------------------------------------------------------------
# Interactions
# ---------------------------------------------------------------------------------------------
async def test_slash_command_embed_view_original_and_followup(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        payload = fake.interaction_slash("cost", {"model": "llama-3-8b", "gpus": 4})
        assert payload["data"]["options"][1]["type"] == 4  # type taken from the synced command
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/", status=200)

        [cb] = fake.interaction_callbacks
        assert cb["type"] == 4
        data = cb["data"]
        assert data["embeds"][0]["title"] == "llama-3-8b on 4 GPUs"
        assert data["embeds"][0]["fields"][0]["name"] == "Memory"
        custom_ids = [c["custom_id"] for row in data["components"] for c in row["components"]]
        assert custom_ids == ["ftcost:refresh", "ftcost:gpu"]
        assert data["allowed_mentions"] == {"parse": []}
        assert bot.results["options"] == ("llama-3-8b", 4)
        assert isinstance(bot.results["channel"], discord.TextChannel)

        original: discord.InteractionMessage = bot.results["original"]
        assert original.embeds[0].title == "llama-3-8b on 4 GPUs"
        assert original.channel.id == fake.channel_id
        assert fake.find_calls("GET", f"/webhooks/{fake.application_id}/", status=200)
        followup: discord.WebhookMessage = bot.results["followup"]
        assert followup.content == "details follow" and followup.id != original.id
        assert fake.violations == []


async def test_deferred_response_then_edit_original(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        payload = fake.interaction_slash("report")
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("PATCH", f"/webhooks/{fake.application_id}/", status=200)
        assert [cb["type"] for cb in fake.interaction_callbacks] == [5]
        edited: discord.InteractionMessage = bot.results["edited"]
        stored = fake.messages[edited.id]
        assert stored["content"] == "done" and stored["embeds"][0]["title"] == "GPU-hours"
        assert not stored["flags"] & 128  # no longer "thinking"


async def test_slash_command_inside_a_thread(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        payload = fake.interaction_slash("cost", {"model": "m"}, channel_id=fake.thread_id)
        assert payload["channel"]["type"] == 11
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/", status=200)
        channel = bot.results["channel"]
        assert isinstance(channel, discord.Thread) and channel.parent_id == fake.channel_id
        assert fake.channel_messages(fake.thread_id)  # the response landed in the thread


async def test_autocomplete_returns_at_most_25_choices(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        payload = fake.interaction_autocomplete("cost", {"model": "model"})
        assert payload["data"]["options"][0]["focused"] is True
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("POST", f"/interactions/{payload['id']}/")
        [cb] = fake.interaction_callbacks
        assert cb["type"] == 8
        assert len(cb["data"]["choices"]) == 25
        assert fake.violations == []
    assert validate_autocomplete([{"name": str(i), "value": str(i)} for i in range(26)])


async def test_persistent_view_button_and_select(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        # A click on a message the bot sent in an earlier run: only the persistent view knows it.
        click = fake.interaction_component("ftcost:refresh")
        await fake.dispatch("INTERACTION_CREATE", click)
        [call] = await fake.wait_for_call("POST", f"/interactions/{click['id']}/")
        assert call.status == 200
        cb = fake.interaction_callbacks[-1]
        assert cb["type"] == 4 and cb["data"]["content"] == "refreshed"
        assert cb["data"]["flags"] & 64  # ephemeral

        pick = fake.interaction_component("ftcost:gpu", 3, values=["H100"])
        await fake.dispatch("INTERACTION_CREATE", pick)
        await fake.wait_for_call("POST", f"/interactions/{pick['id']}/")
        cb = fake.interaction_callbacks[-1]
        assert cb["type"] == 7 and cb["data"]["content"] == "gpu=H100"
        assert fake.messages[int(pick["message"]["id"])]["content"] == "gpu=H100"


async def test_interaction_answered_after_the_deadline_gets_unknown_interaction(
    fake: FakeDiscord,
) -> None:
    fake.interaction_deadline = 0.1
    bot = Bot(fake)
    async with running(bot):
        payload = fake.interaction_slash("slow")
        await fake.dispatch("INTERACTION_CREATE", payload)
        await fake.wait_for_call("POST", f"/interactions/{payload['id']}/")
        await wait_until(lambda: "slow_error" in bot.results)
        err = bot.results["slow_error"]
        assert isinstance(err, discord.NotFound) and err.code == 10062
        assert "acknowledged after" in fake.violations[0]


# ---------------------------------------------------------------------------------------------
# Channels, rate limits, errors
# ---------------------------------------------------------------------------------------------
async def test_429_on_channel_message_is_retried_and_delivered_once(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        path = f"/channels/{fake.channel_id}/messages"
        fake.rate_limit_next("POST", path, retry_after=0.2)
        channel = bot.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        start = time.monotonic()
        msg = await channel.send("estimate ready")
        assert time.monotonic() - start >= 0.2
        assert [c.status for c in fake.find_calls("POST", path)] == [429, 200]
        assert [m["content"] for m in fake.channel_messages()] == ["estimate ready"]
        assert msg.id == int(fake.channel_messages()[0]["id"])


async def test_429_on_followup_webhook_is_retried(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        fake.rate_limit_next("POST", f"/webhooks/{fake.application_id}/", retry_after=0.05)
        await fake.dispatch("INTERACTION_CREATE", fake.interaction_slash("cost", {"model": "m"}))
        calls = await fake.wait_for_call("POST", f"/webhooks/{fake.application_id}/", count=2)
        assert [c.status for c in calls] == [429, 200]
        assert bot.results["followup"].content == "details follow"


async def test_allowed_mentions_are_recorded_as_sent(fake: FakeDiscord) -> None:
    bot = Bot(fake, allowed_mentions=discord.AllowedMentions.none())
    async with running(bot):
        channel = bot.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        await channel.send(f"<@{fake.user_id}> your estimate")
        await channel.send(
            f"<@{fake.user_id}> pinged",
            allowed_mentions=discord.AllowedMentions(users=[discord.Object(fake.user_id)]),
        )
        first, second = fake.find_calls("POST", f"/channels/{fake.channel_id}/messages")
        assert first.json["allowed_mentions"] == {"parse": []}
        assert second.json["allowed_mentions"]["users"] == [fake.user_id]
        assert "users" not in second.json["allowed_mentions"]["parse"]


async def test_errors_threads_gone_channels_and_files(fake: FakeDiscord) -> None:
    bot = Bot(fake)
    async with running(bot):
        channel = bot.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)

        fake.fail_next("POST", f"/channels/{fake.channel_id}/messages", status=403, code=50001)
        with pytest.raises(discord.Forbidden) as forbidden:
            await channel.send("nope")
        assert forbidden.value.code == 50001

        csv = b"gpu,hours\nH100,12\n"
        msg = await channel.send("report", file=discord.File(io.BytesIO(csv), "cost.csv"))
        call = fake.find_calls("POST", f"/channels/{fake.channel_id}/messages", status=200)[-1]
        assert call.json["content"] == "report"  # multipart payload_json decoded
        assert call.files[0]["filename"] == "cost.csv" and call.files[0]["data"] == csv
        assert msg.attachments[0].filename == "cost.csv"

        thread = await msg.create_thread(name="cost breakdown")
        assert thread.id == msg.id and thread.parent_id == fake.channel_id
        assert thread.type is discord.ChannelType.public_thread
        await thread.send("in the thread")
        assert fake.channel_messages(thread.id)[0]["content"] == "in the thread"

        fetched = await bot.fetch_channel(thread.id)
        assert isinstance(fetched, discord.Thread)
        fake.mark_channel_gone(thread.id)
        with pytest.raises(discord.NotFound) as gone:
            await bot.fetch_channel(thread.id)
        assert gone.value.code == 10003


async def test_message_create_respects_the_message_content_intent(fake: FakeDiscord) -> None:
    bot = Bot(fake)  # Intents.default(): no message_content
    async with running(bot):
        await fake.dispatch("MESSAGE_CREATE", fake.message_create("plain chatter"))
        await fake.dispatch(
            "MESSAGE_CREATE",
            fake.message_create(f"<@{fake.bot_user_id}> cost?", mentions=[fake.bot_user_id]),
        )
        channel = bot.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        await channel.send("bot says hi")  # echoed back over the gateway, as on Discord
        await wait_until(lambda: len(bot.seen_messages) == 3)
        plain, mention, own = bot.seen_messages
        assert plain.content == ""  # stripped: no MESSAGE_CONTENT intent
        assert mention.content.endswith("cost?") and bot.user in mention.mentions
        assert own.author == bot.user and own.content == "bot says hi"


# ---------------------------------------------------------------------------------------------
# Limits
# ---------------------------------------------------------------------------------------------
async def test_validate_message_limits() -> None:
    ok = {
        "content": "x" * 2000,
        "embeds": [{"title": "t" * 256, "description": "d" * 4096}],
        "components": [
            {
                "type": 1,
                "components": [{"type": 2, "style": 1, "label": "l" * 80, "custom_id": "c" * 100}],
            }
        ],
    }
    assert validate_message(ok) == []

    too_big = {"embeds": [{"description": "d" * 3500}, {"description": "d" * 3500}]}
    assert any("6000" in p for p in validate_message(too_big))
    long_id = {
        "components": [
            {
                "type": 1,
                "components": [{"type": 2, "style": 1, "label": "go", "custom_id": "c" * 101}],
            }
        ]
    }
    assert any("custom_id: 101 chars" in p for p in validate_message(long_id))
    assert validate_message({"content": "x" * 2001})
    assert validate_message({"embeds": [{"fields": [{"name": "n", "value": "v"}] * 26}]})
    assert validate_message(
        {
            "components": [
                {
                    "type": 1,
                    "components": [
                        {
                            "type": 3,
                            "custom_id": "s",
                            "options": [{"label": "a", "value": "a"}] * 26,
                        }
                    ],
                }
            ]
        }
    )


async def test_oversized_payloads_from_discord_py_are_rejected_and_recorded(
    fake: FakeDiscord,
) -> None:
    bot = Bot(fake)
    async with running(bot):
        channel = bot.get_channel(fake.channel_id)
        assert isinstance(channel, discord.TextChannel)
        embeds = [discord.Embed(description="d" * 3500) for _ in range(2)]
        with pytest.raises(discord.HTTPException) as exc:
            await channel.send(embeds=embeds)
        assert exc.value.status == 400 and exc.value.code == 50035

        view = discord.ui.View()
        view.add_item(discord.ui.Button(label="go", custom_id="c" * 101))
        with pytest.raises(discord.HTTPException):
            await channel.send("x", view=view)  # discord.py itself does not check the length
        assert any("6000" in v for v in fake.violations)
        assert any("custom_id: 101 chars" in v for v in fake.violations)
        assert fake.channel_messages() == []
