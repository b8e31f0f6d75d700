"""The discord.py client: thin handlers around the platform-neutral service.

Every handler does the same four things: find where it is (a channel, or a thread and
its parent), ask :func:`adapters.discord.options.answer` (the shared
:class:`~bot.service.Service` underneath) for a reply, render it
(:mod:`adapters.discord.embeds`, :mod:`adapters.discord.views`) and remember the new
request where the next follow-up will look for it.

Where conversations live (store keys, platform ``discord``):

* an estimate posted in channel ``C`` as message ``M`` is the context of the thread that
  may start from it: ``("discord", C, M)`` (Discord gives a thread started from a message
  the message's id);
* an estimate posted in thread ``T`` of channel ``C`` replaces ``("discord", C, T)``;
* when the buttons' custom ids cannot carry the request (very long requests), the
  message's own request is kept under ``("discord", channel of M, "msg:M")``.

Triggers:

* ``/ftcost config: FILE`` anywhere: the estimate of the attached training config
  (:mod:`adapters.discord.configs`), a new question even in a thread.
* ``/ftcost`` in a channel: a new estimate, posted publicly with buttons (help, listings
  and errors go to the asker only). In a thread with a context: a follow-up on it. An
  answer not ready within :data:`DEFER_AFTER_S` (a Hub model not cached yet) is deferred
  first, then posted by editing the deferred response.
* a button or the card select: acknowledged at once (no visible change), the new
  estimate is posted in the estimate's thread, opened on first use.
* in an estimate's thread, ``/ftcost``, a click and a message each answer in the thread's
  turn (:meth:`bot.service.Service.thread_turn`): read, answer, post and remember before
  the next one reads the thread's estimate, so quick replies build on each other.
* "Show chart" (and the word ``chart`` in a query): the memory chart (``adapters.chart``,
  drawn on a worker thread) attached as ``chart.png`` in the estimate's thread, shown by an
  embed (``attachment://chart.png``).
* a message in a thread with a context: a follow-up when it mentions the bot, or for
  any message when the Message Content intent is on (parse errors of messages that do
  not mention the bot are ignored: that is conversation, not a question).
* a message mentioning the bot in a channel: a new estimate, or when it replies to one
  of the bot's estimates, a follow-up answered in that estimate's thread.

Every message goes out with ``allowed_mentions=AllowedMentions.none()`` (also the
client's default), so nothing the bot echoes can ping anyone.
"""


from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import time
from typing import Any

import discord

from adapters.discord import ids
from adapters.discord.announce import can_manage
from adapters.discord.commands import build_commands
from adapters.discord.configs import answer_attachment
from adapters.discord.embeds import chart_failed_embed, notice_embed
from adapters.discord.limits import cut
from adapters.discord.messages import MessageHandlers
from adapters.discord.options import NO_OPTIONS, Options
from adapters.discord.places import (
    NO_MENTIONS,
    PLATFORM,
    Where,
    message_key,
    strip_mention,
    user_name,
    workspace_of,
)
from adapters.discord.settings import ClientSettings
from adapters.formats import METHOD_LABELS
from bot.service import Reply, ReplyKind, Service
from bot.words import control_words, is_channel_command
from engine import Method, Request

log = logging.getLogger(__name__)

DEFER_AFTER_S = 1.0
"""Discord drops an interaction not answered within 3 s; ``/ftcost`` answers not ready
after this long (a Hub model read for the first time: two files from the Hub) are
deferred first and posted by editing the deferred response."""


class FtcostMixin(MessageHandlers):
    """The ftcost handlers, mixed into ``discord.Client`` or ``AutoShardedClient``."""

    def __init__(
        self, service: Service, settings: ClientSettings | None = None, **kwargs: Any
    ) -> None:
        super().__init__(service, settings, **kwargs)
        for command in build_commands(self):
            self.tree.add_command(command)

    # -- /ftcost ------------------------------------------------------------------------
    async def handle_ftcost(
        self,
        interaction: discord.Interaction,
        query: str,
        options: Options,
        config: discord.Attachment | None = None,
    ) -> None:
        if self._closing:
            return
        async with self._tracked():
            await self._handle_ftcost(interaction, query, options, config)

    async def _handle_ftcost(
        self,
        interaction: discord.Interaction,
        query: str,
        options: Options,
        config: discord.Attachment | None = None,
    ) -> None:
        start = time.perf_counter()
        if await self._limited(interaction, start, "command"):
            return
        where = Where.of(interaction.channel, interaction.channel_id)
        # In an estimate's thread the command takes the thread's turn as a message there
        # does (entered by the answer's work, so a wait for it is deferred like a slow
        # answer): read, answer, post and remember before the next reply reads the thread.
        async with contextlib.AsyncExitStack() as turn:
            work = asyncio.ensure_future(
                self._ftcost_reply(interaction, query, options, where, config, turn))
            deferred = await self._defer_if_slow(interaction, work)
            previous, reply = await work
            await self._post_ftcost(interaction, query, options, config, where, start,
                                    deferred, previous, reply)

    async def _post_ftcost(
        self, interaction: discord.Interaction, query: str, options: Options,
        config: discord.Attachment | None, where: Where, start: float, deferred: bool,
        previous: Request | None, reply: Reply,
    ) -> None:
        """Post ``/ftcost``'s ``reply`` (publicly for an estimate, remembered where the
        next follow-up looks; privately otherwise)."""
        attached = f"config:{config.filename}" if config is not None else ""
        asked = " ".join(p for p in (query, options.describe(), attached) if p)
        footer = cut(f"{user_name(interaction.user)}: {self.settings.command} {asked}".strip(),
                     300)
        if reply.kind is ReplyKind.CHART and reply.request is not None:
            await self._command_chart(interaction, reply, footer, start)
            return
        embeds, view, carried = self._render(reply, query=asked, footer=footer)
        if not reply.is_public:
            if deferred:  # the "thinking" message is public: replace it by a private one
                with contextlib.suppress(discord.HTTPException):
                    await interaction.delete_original_response()
                await interaction.followup.send(
                    embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
                )
            else:
                await interaction.response.send_message(
                    embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
                )
            self._log("command", reply, "ephemeral", start)
            return
        assert view is not None
        if deferred:
            message_id: int | None = (await interaction.edit_original_response(
                embeds=embeds, view=view, allowed_mentions=NO_MENTIONS)).id
        else:
            response = await interaction.response.send_message(
                embeds=embeds, view=view, allowed_mentions=NO_MENTIONS
            )
            message_id = getattr(response, "message_id", None)
        if message_id is None:
            message_id = (await interaction.original_response()).id
        await self._remember(where, message_id, reply, carried)
        self._log("followup" if previous is not None else "command", reply, "posted", start)
        if reply.chart and reply.request is not None:
            await self._chart_in_thread(
                await interaction.original_response(), interaction.channel, reply.request,
                workspace_of(interaction.guild_id), footer,
                functools.partial(interaction.followup.send, wait=True), interaction,
            )

    async def _ftcost_reply(
        self, interaction: discord.Interaction, query: str, options: Options, where: Where,
        config: discord.Attachment | None, turn: contextlib.AsyncExitStack,
    ) -> tuple[Request | None, Reply]:
        """The thread's previous request (None outside an estimate's thread) and the
        answer to ``/ftcost``; may wait on the thread's turn (entered into ``turn``, held
        until the answer is posted and remembered), the store and the Hub. A ``config``
        attachment is a new question, in a thread too. Where the thread's estimate can't
        be read (the store is unreachable, or it is no longer kept) the answer comes from
        the words and options alone and says so, as for a message in the thread."""
        key = where.thread_key()
        if key is not None:
            await turn.enter_async_context(self.service.thread_turn(key))
        workspace = workspace_of(interaction.guild_id)
        if config is not None:
            defaults = await self.service.channel_settings.defaults(PLATFORM, where.channel)
            return None, await answer_attachment(
                self.service, config, query, options, workspace, defaults)
        previous, lost, expired = None, False, False
        thread = interaction.channel
        if isinstance(thread, discord.Thread):
            previous, lost, expired = await self._thread_context(thread, where)
        if (lost or expired) and options.given and is_channel_command(query):
            lost = expired = False  # a command beside options is refused, as anywhere
        elif (lost or expired) and options.given:
            # answered from words alone (answer_without_context): the options as words
            words = options.as_words(self.service.catalog)
            query, options = " ".join(p for p in (query, words) if p), NO_OPTIONS
        return previous, await self._respond(
            query, where.channel, workspace, options=options, previous=previous,
            user=str(interaction.user.id) if interaction.user else None,
            may_manage=can_manage(interaction.permissions, interaction.guild_id is not None),
            context_lost=lost, context_expired=expired,
        )

    async def _defer_if_slow(
        self, interaction: discord.Interaction, work: asyncio.Future[Any]
    ) -> bool:
        """Defer the interaction ("ftcost is thinking…", public) when ``work`` is not done
        within :data:`DEFER_AFTER_S`, so a Hub model that is not cached yet (or a slow
        store) never misses Discord's 3-second deadline. True if deferred."""
        done, _ = await asyncio.wait({work}, timeout=DEFER_AFTER_S)
        if done:
            return False
        try:
            await interaction.response.defer(thinking=True)
        except BaseException:
            work.cancel()
            raise
        return True

    async def _command_chart(
        self, interaction: discord.Interaction, reply: Reply, footer: str, start: float
    ) -> None:
        """``/ftcost chart`` in an estimate's thread: the chart as the command's answer
        (deferred first: a cold first render may take a second)."""
        assert reply.request is not None
        if not interaction.response.is_done():
            await interaction.response.defer(thinking=True)

        async def edit(**kwargs: Any) -> None:
            file = kwargs.pop("file")
            kwargs.pop("allowed_mentions", None)
            await interaction.edit_original_response(attachments=[file], **kwargs)

        outcome = "uploaded"
        try:
            await self._send_chart(edit, reply.request, workspace_of(interaction.guild_id), footer)
        except discord.HTTPException as exc:
            log.warning("cannot attach the chart: %s", exc)
            outcome = "failed"
            with contextlib.suppress(discord.HTTPException):
                await interaction.edit_original_response(
                    embed=chart_failed_embed(exc.status, exc.code)
                )
        self._log("command", reply, outcome, start)

    async def handle_help(self, interaction: discord.Interaction) -> None:
        start = time.perf_counter()
        reply = await self._respond("help", None, None)
        embeds, _, _ = self._render(reply)
        await interaction.response.send_message(
            embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
        )
        self._log("command", reply, "ephemeral", start)

    # -- buttons and the card select ----------------------------------------------------
    async def handle_action(
        self, interaction: discord.Interaction, action: ids.Action, values: list[str]
    ) -> None:
        if self._closing:
            return
        start = time.perf_counter()
        async with self._tracked():
            try:
                await self._handle_action(interaction, action, values, start)
            except Exception:
                log.exception("button click failed")
                self._log("button", None, "failed", start)
                await self._tell_failure(interaction)

    async def _handle_action(
        self, interaction: discord.Interaction, action: ids.Action, values: list[str],
        start: float,
    ) -> None:
        # Acknowledge at once without changing the message: the answer goes to a thread.
        await interaction.response.defer()
        message = interaction.message
        if message is None:
            return
        if await self._limited(interaction, start, "button"):
            return
        base = action.request
        if base is None:
            base = await self._context(message_key(message.channel.id, message.id))
        if base is None:
            await interaction.followup.send(
                embed=notice_embed(
                    f"I no longer know this estimate; ask again with {self.settings.command}."
                ),
                ephemeral=True,
                allowed_mentions=NO_MENTIONS,
            )
            self._log("button", None, "unknown", start)
            return
        if action.kind == "chart":
            outcome = await self._chart_in_thread(
                message, interaction.channel, base, workspace_of(interaction.guild_id),
                f"{user_name(interaction.user)} asked for the chart",
                functools.partial(interaction.followup.send, wait=True), interaction,
            )
            self._log("button", Reply(ReplyKind.CHART, request=base), outcome, start)
            return
        text = control_words(action.kind, base, action.value or (values[0] if values else None))
        if text is None:
            return
        # The new estimate becomes its thread's: answered, posted and remembered in the
        # thread's turn, as a message or /ftcost there is.
        key = Where.of(interaction.channel, interaction.channel_id).thread_key(message.id)
        async with (self.service.thread_turn(key) if key else contextlib.nullcontext()):
            await self._action_reply(interaction, action, message, base, text, start)

    async def _action_reply(
        self, interaction: discord.Interaction, action: ids.Action,
        message: discord.Message, base: Request, text: str, start: float,
    ) -> None:
        """Answer a click that changes the estimate (``text``: the words it stands for)
        and post the new estimate in the estimate's thread (its turn held)."""
        label = (
            METHOD_LABELS[Method(text)] if action.kind == "method"
            else f"2× seq ({base.seq_len * 2:,})" if action.kind == "seq" else text
        )
        # As if typed in the thread: the same parser and checks as the words.
        reply = await self.service.answer_async(text, base, workspace_of(interaction.guild_id))
        if reply.kind is not ReplyKind.ESTIMATE:
            embeds, _, _ = self._render(reply)
            await interaction.followup.send(
                embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
            )
            self._log("button", reply, "error", start)
            return

        footer = f"{user_name(interaction.user)} picked {label}"
        embeds, view, carried = self._render(reply, footer=footer)
        assert view is not None
        channel = interaction.channel
        if isinstance(channel, discord.Thread):
            thread: discord.Thread | None = channel
        else:
            title = message.embeds[0].title if message.embeds else None
            thread = await self._thread_for(message, f"{title or 'ftcost'} · what-ifs")
        if thread is not None:
            sent = await thread.send(embeds=embeds, view=view, allowed_mentions=NO_MENTIONS)
            where = Where(str(thread.parent_id), str(thread.id))
        else:  # no thread possible here: answer in the channel
            sent = await interaction.followup.send(
                embeds=embeds, view=view, allowed_mentions=NO_MENTIONS, wait=True
            )
            where = Where.of(channel, interaction.channel_id)
        await self._remember(where, sent.id, reply, carried)
        self._log("button", reply, "posted", start)


class FtcostClient(FtcostMixin, discord.Client):
    """One gateway connection."""


class ShardedFtcostClient(FtcostMixin, discord.AutoShardedClient):
    """Several shards in this process (``shard_count`` from the configuration)."""


def create_client(
    service: Service, settings: ClientSettings | None = None, **kwargs: Any
) -> FtcostClient | ShardedFtcostClient:
    """The client the settings ask for: sharded when a shard count (or ``auto``) is set."""
    settings = settings or ClientSettings()
    if settings.shard_count is None and not settings.shard_ids:
        return FtcostClient(service, settings, **kwargs)
    if settings.shard_count not in (None, "auto"):
        kwargs.setdefault("shard_count", int(settings.shard_count))
    if settings.shard_ids:
        kwargs.setdefault("shard_ids", list(settings.shard_ids))
    return ShardedFtcostClient(service, settings, **kwargs)


__all__ = [
    "ClientSettings",
    "FtcostClient",
    "ShardedFtcostClient",
    "Where",
    "create_client",
    "message_key",
    "strip_mention",
]
