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

* ``/ftcost`` in a channel: a new estimate, posted publicly with buttons (help, listings
  and errors go to the asker only). In a thread with a context: a follow-up on it.
* a button or the card select: acknowledged at once (no visible change), the new
  estimate is posted in the estimate's thread, opened on first use.
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
import io
import logging
import re
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

import discord
from discord import app_commands

from adapters.chart import render_chart
from adapters.discord import ids
from adapters.discord.announce import can_manage
from adapters.discord.commands import build_commands
from adapters.discord.embeds import chart_embed, chart_failed_embed, embeds_for, notice_embed
from adapters.discord.endpoints import DEFAULT_API_BASE_URL, discover_gateway
from adapters.discord.limits import MAX_THREAD_NAME, cut
from adapters.discord.options import NO_OPTIONS, Options, answer
from adapters.discord.views import DYNAMIC_ITEMS, estimate_view
from adapters.report import METHOD_LABELS
from bot.logs import log_command
from bot.price_service import price_command
from bot.service import (
    Context,
    Reply,
    ReplyKind,
    Service,
    chart_only,
    split_chart_word,
    with_chart,
)
from bot.store import StoreUnavailable, ThreadKey
from catalog.hub.errors import HubError
from engine import Method, Request
from engine.specs import Catalog

PLATFORM = "discord"
NO_MENTIONS = discord.AllowedMentions.none()
LIMITED_NOTICE_S = 60.0
"""A rate-limit notice on a plain message (which can't be private) deletes itself after
this many seconds."""
ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ClientSettings:
    """The Discord knobs the client needs (``discord:`` in the bot's YAML)."""

    message_content: bool = False
    """Treat plain thread messages as follow-ups (needs the privileged Message Content
    intent, switched on in the Developer Portal too)."""
    shard_count: int | Literal["auto"] | None = None
    """None: one connection (``discord.Client``); a number or ``auto``:
    ``discord.AutoShardedClient`` with that many shards (``auto``: Discord's advice)."""
    shard_ids: tuple[int, ...] | None = None
    """The shards this process runs (all when None)."""
    api_base_url: str = DEFAULT_API_BASE_URL
    thread_auto_archive_minutes: Literal[60, 1440, 4320, 10080] = 1440
    command: str = "/ftcost"


@dataclass(frozen=True, slots=True)
class Where:
    """A channel, or a thread and its parent channel."""

    channel: str
    thread: str | None = None

    @classmethod
    def of(cls, channel: Any, channel_id: int | None = None) -> Where:
        if isinstance(channel, discord.Thread):
            return cls(str(channel.parent_id), str(channel.id))
        return cls(str(getattr(channel, "id", None) or channel_id))

    def thread_key(self, message_id: int | str | None = None) -> ThreadKey | None:
        """The context this place follows up on (in a thread) or that a message posted
        here starts (in a channel: the thread the message may get)."""
        if self.thread is not None:
            return ThreadKey(PLATFORM, self.channel, self.thread)
        if message_id is None:
            return None
        return ThreadKey(PLATFORM, self.channel, str(message_id))

    @property
    def posted_in(self) -> str:
        """The channel id messages posted here carry."""
        return self.thread or self.channel


def message_key(channel_id: int | str, message_id: int | str) -> ThreadKey:
    return ThreadKey(PLATFORM, str(channel_id), ids.message_key_thread(message_id))


def _workspace(guild_id: int | str | None) -> str | None:
    return f"discord:{guild_id}" if guild_id else None


def _guild_workspace(message: discord.Message) -> str | None:
    return _workspace(message.guild.id) if message.guild is not None else None


def strip_mention(text: str, user_id: int | None) -> str:
    if user_id is None:
        return " ".join(text.split())
    return " ".join(re.sub(rf"<@!?{user_id}>", " ", text).split())


def _user_name(user: Any) -> str:
    return str(getattr(user, "display_name", None) or getattr(user, "name", None) or "someone")


class FtcostMixin:
    """The ftcost handlers, mixed into ``discord.Client`` or ``AutoShardedClient``."""

    tree: app_commands.CommandTree[Any]

    def __init__(
        self, service: Service, settings: ClientSettings | None = None, **kwargs: Any
    ) -> None:
        settings = settings or ClientSettings()
        intents = discord.Intents.none()
        intents.guilds = True  # channels and threads cache, THREAD_CREATE
        intents.guild_messages = True  # MESSAGE_CREATE: mentions and thread follow-ups
        intents.message_content = settings.message_content  # privileged, off by default
        kwargs.setdefault("intents", intents)
        kwargs.setdefault("allowed_mentions", NO_MENTIONS)
        super().__init__(**kwargs)
        self.service = service
        self.settings = settings
        self.tree = app_commands.CommandTree(self)  # type: ignore[arg-type]
        for command in build_commands(self):
            self.tree.add_command(command)
        self.tree.on_error = self._on_command_error  # type: ignore[method-assign]
        self.inflight = 0
        """Handlers running now (``drain`` waits for them on shutdown)."""
        self._idle = asyncio.Event()
        self._idle.set()
        self._closing = False

    # -- lifecycle ----------------------------------------------------------------------
    @property
    def catalog(self) -> Catalog:
        return self.service.catalog

    async def setup_hook(self) -> None:
        await discover_gateway(self.http, self.settings.api_base_url)  # type: ignore[attr-defined]
        self.add_dynamic_items(*DYNAMIC_ITEMS)  # type: ignore[attr-defined]

    @contextlib.asynccontextmanager
    async def _tracked(self) -> AsyncIterator[None]:
        self.inflight += 1
        self._idle.clear()
        try:
            yield
        finally:
            self.inflight -= 1
            if self.inflight == 0:
                self._idle.set()

    async def drain(self, timeout: float) -> None:
        """Stop taking new work and wait up to ``timeout`` for handlers in flight."""
        self._closing = True
        if self.inflight:
            await asyncio.wait_for(self._idle.wait(), timeout)

    # -- helpers ------------------------------------------------------------------------
    async def _answer(
        self,
        text: str,
        options: Options = NO_OPTIONS,
        previous: Request | None = None,
        workspace: str | None = None,
    ) -> Reply:
        """The shared service's answer, computed on its worker thread. The word ``chart``
        asks for the memory chart too (alone in a thread: the chart only)."""
        text, chart = split_chart_word(text)
        if chart and not text and not options.given:
            return chart_only(previous)
        reply = await self.service.run_resolved(
            answer, text, options, previous, workspace,
            models=[previous.model if previous is not None else None],
        )
        return with_chart(reply) if chart else reply

    async def _send_chart(
        self, send: Any, request: Request, workspace: str | None, footer: str | None
    ) -> None:
        """Draw the memory chart of ``request`` on a worker thread (the event loop keeps
        serving) and send it with ``send`` (a thread's, a channel's or an interaction
        follow-up's): the PNG attached, shown by an embed as ``attachment://chart.png``."""
        image = await render_chart(request, await self.service.catalog_with(request, workspace))
        file = discord.File(io.BytesIO(image.png), filename=image.filename,
                            description=image.alt_text)
        await send(embed=chart_embed(image.title, image.filename, footer), file=file,
                   allowed_mentions=NO_MENTIONS)

    async def _chart_in_thread(
        self,
        message: discord.Message | discord.PartialMessage,
        channel: Any,
        request: Request,
        workspace: str | None,
        footer: str | None,
        fallback: Any = None,
        interaction: discord.Interaction | None = None,
    ) -> str:
        """The chart in the thread of the estimate ``message`` (``channel`` itself when it
        is a thread; opened when needed), else through ``fallback``. A failure is told to
        the ``interaction``'s user privately. Outcome: ``uploaded`` or ``failed``."""
        if isinstance(channel, discord.Thread):
            send = channel.send
        else:
            title = message.embeds[0].title if isinstance(message, discord.Message) and (
                message.embeds) else None
            thread = await self._thread_for(message, f"{title or 'ftcost'} · what-ifs")
            send = thread.send if thread is not None else fallback
        try:
            if send is None:
                raise discord.ClientException("no thread and no other way to answer here")
            await self._send_chart(send, request, workspace, footer)
        except HubError as exc:  # a Hub model that can't be read right now
            log.warning("chart: hub model unavailable: %s", exc.kind)
            if interaction is not None:
                with contextlib.suppress(discord.HTTPException):
                    await interaction.followup.send(
                        embed=notice_embed(f"I couldn't draw the chart: {exc}"),
                        ephemeral=True, allowed_mentions=NO_MENTIONS,
                    )
            return "failed"
        except (discord.HTTPException, discord.ClientException) as exc:
            log.warning("cannot attach the chart in %s: %s", getattr(channel, "id", "?"), exc)
            if interaction is not None:
                with contextlib.suppress(discord.HTTPException):
                    await interaction.followup.send(
                        embed=chart_failed_embed(getattr(exc, "status", None),
                                                 getattr(exc, "code", None)),
                        ephemeral=True, allowed_mentions=NO_MENTIONS,
                    )
            return "failed"
        return "uploaded"

    async def _price_reply(
        self, interaction: discord.Interaction, query: str, options: Options
    ) -> Reply | None:
        """``prices`` / ``subscribe`` / ``unsubscribe`` (without estimate options)."""
        if options.given or price_command(query) is None:
            return None
        in_guild = interaction.guild_id is not None
        ctx = Context(
            PLATFORM,
            channel=str(interaction.channel_id) if interaction.channel_id else None,
            user=str(interaction.user.id) if interaction.user else None,
            workspace=_workspace(interaction.guild_id),
            can_manage=can_manage(interaction.permissions, in_guild),
        )
        return await self.service.price_reply(query, ctx)

    async def _context(self, key: ThreadKey | None) -> Request | None:
        """The stored request of ``key``; None when there is none or the store can't be
        reached (see :meth:`_lookup` to tell the two apart)."""
        return (await self._lookup(key))[0]

    async def _lookup(self, key: ThreadKey | None) -> tuple[Request | None, bool]:
        """``(stored request or None, store unreachable?)``."""
        try:
            ctx = await self.service.thread(key)
        except StoreUnavailable:
            return None, True
        return (ctx.request if ctx is not None else None), False

    async def _limited(self, interaction: discord.Interaction, start: float,
                       trigger: str) -> bool:
        """Refuse an interaction over the per-user rate limit (privately); True if so."""
        user = str(interaction.user.id) if interaction.user else None
        reply = await self.service.admit(PLATFORM, user)
        if reply is None:
            return False
        embeds, _, _ = self._render(reply)
        if interaction.response.is_done():
            await interaction.followup.send(
                embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
            )
        else:
            await interaction.response.send_message(
                embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
            )
        self._log(trigger, reply, "ephemeral", start)
        return True

    async def _remember(
        self, where: Where, message_id: int | None, reply: Reply, carried: bool
    ) -> None:
        if reply.kind is not ReplyKind.ESTIMATE or message_id is None:
            return
        key = where.thread_key(message_id)
        if key is not None:
            await self.service.remember(key, reply, str(message_id))
        if not carried:
            await self.service.remember(
                message_key(where.posted_in, message_id), reply, str(message_id)
            )

    def _render(
        self, reply: Reply, query: str | None = None, footer: str | None = None
    ) -> tuple[list[discord.Embed], discord.ui.View | None, bool]:
        embeds = embeds_for(reply, query=query, footer=footer, command=self.settings.command)
        if reply.kind is ReplyKind.ESTIMATE and reply.report is not None:
            view, carried = estimate_view(reply.report)
            return embeds, view, carried
        return embeds, None, True

    async def _thread_for(self, message: discord.Message | discord.PartialMessage,
                          title: str) -> discord.Thread | None:
        """The thread on ``message``, opened now if it has none (None where threads are
        impossible or not allowed: a DM, missing permissions)."""
        guild = message.guild
        if guild is None:
            return None
        existing = guild.get_thread(message.id)
        if existing is not None:
            return existing
        try:
            return await message.create_thread(
                name=cut(title, MAX_THREAD_NAME) or "ftcost",
                auto_archive_duration=self.settings.thread_auto_archive_minutes,
            )
        except discord.HTTPException as exc:
            if exc.code == 160004:  # opened meanwhile (a double click): use it
                try:
                    return await message.fetch_thread()
                except discord.HTTPException:
                    return None
            log.warning("cannot open a thread on message %s: %s", message.id, exc)
            return None
        except ValueError:
            return None

    @staticmethod
    def _log(trigger: str, reply: Reply | None, outcome: str, start: float) -> None:
        log_command(
            platform=PLATFORM,
            trigger=trigger,
            kind=reply.kind.value if reply is not None else "none",
            outcome=outcome,
            latency_ms=(time.perf_counter() - start) * 1000,
        )

    # -- /ftcost ------------------------------------------------------------------------
    async def handle_ftcost(
        self, interaction: discord.Interaction, query: str, options: Options
    ) -> None:
        if self._closing:
            return
        async with self._tracked():
            await self._handle_ftcost(interaction, query, options)

    async def _handle_ftcost(
        self, interaction: discord.Interaction, query: str, options: Options
    ) -> None:
        start = time.perf_counter()
        if await self._limited(interaction, start, "command"):
            return
        where = Where.of(interaction.channel, interaction.channel_id)
        previous = await self._context(where.thread_key()) if where.thread else None
        reply = None if previous is not None else await self._price_reply(
            interaction, query, options
        )
        if reply is None:
            reply = await self._answer(
                query, options, previous, _workspace(interaction.guild_id)
            )
        asked = " ".join(p for p in (query, options.describe()) if p)
        footer = cut(f"{_user_name(interaction.user)}: {self.settings.command} {asked}".strip(),
                     300)
        if reply.kind is ReplyKind.CHART and reply.request is not None:
            await self._command_chart(interaction, reply, footer, start)
            return
        embeds, view, carried = self._render(reply, query=asked, footer=footer)
        if not reply.is_public:
            await interaction.response.send_message(
                embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
            )
            self._log("command", reply, "ephemeral", start)
            return
        assert view is not None
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
                _workspace(interaction.guild_id), footer,
                functools.partial(interaction.followup.send, wait=True), interaction,
            )

    async def _command_chart(
        self, interaction: discord.Interaction, reply: Reply, footer: str, start: float
    ) -> None:
        """``/ftcost chart`` in an estimate's thread: the chart as the command's answer
        (deferred first: a cold first render may take a second)."""
        assert reply.request is not None
        await interaction.response.defer(thinking=True)

        async def edit(**kwargs: Any) -> None:
            file = kwargs.pop("file")
            kwargs.pop("allowed_mentions", None)
            await interaction.edit_original_response(attachments=[file], **kwargs)

        outcome = "uploaded"
        try:
            await self._send_chart(edit, reply.request, _workspace(interaction.guild_id), footer)
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
        reply = await self._answer("help")
        embeds, _, _ = self._render(reply)
        await interaction.response.send_message(
            embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
        )
        self._log("command", reply, "ephemeral", start)

    async def _on_command_error(
        self, interaction: discord.Interaction, error: app_commands.AppCommandError
    ) -> None:
        log.error("command failed", exc_info=error)
        await self._tell_failure(interaction)

    async def _tell_failure(self, interaction: discord.Interaction) -> None:
        notice = notice_embed("Something went wrong on my side; please try again.")
        try:
            if interaction.response.is_done():
                await interaction.followup.send(
                    embed=notice, ephemeral=True, allowed_mentions=NO_MENTIONS
                )
            else:
                await interaction.response.send_message(
                    embed=notice, ephemeral=True, allowed_mentions=NO_MENTIONS
                )
        except discord.HTTPException:
            pass

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
                message, interaction.channel, base, _workspace(interaction.guild_id),
                f"{_user_name(interaction.user)} asked for the chart",
                functools.partial(interaction.followup.send, wait=True), interaction,
            )
            self._log("button", Reply(ReplyKind.CHART, request=base), outcome, start)
            return
        if action.kind == "method" and action.value:
            text, label = action.value, METHOD_LABELS[Method(action.value)]
        elif action.kind == "seq":
            text, label = f"seq {base.seq_len * 2}", f"2× seq ({base.seq_len * 2:,})"
        elif values:
            text, label = values[0], values[0]
        else:
            return
        reply = await self._answer(text, NO_OPTIONS, base, _workspace(interaction.guild_id))
        if reply.kind is not ReplyKind.ESTIMATE:
            embeds, _, _ = self._render(reply)
            await interaction.followup.send(
                embeds=embeds, ephemeral=True, allowed_mentions=NO_MENTIONS
            )
            self._log("button", reply, "error", start)
            return

        footer = f"{_user_name(interaction.user)} picked {label}"
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

    # -- messages -----------------------------------------------------------------------
    async def on_message(self, message: discord.Message) -> None:
        me = self.user  # type: ignore[attr-defined]
        if me is None or message.author.bot or message.guild is None:
            return
        if message.type not in (discord.MessageType.default, discord.MessageType.reply):
            return
        if self._closing:
            return
        async with self._tracked():
            await self._on_message(message, me)

    async def _on_message(self, message: discord.Message, me: discord.ClientUser) -> None:
        start = time.perf_counter()
        mentioned = any(u.id == me.id for u in message.mentions)
        text = strip_mention(message.content, me.id)
        channel = message.channel
        if isinstance(channel, discord.Thread):
            await self._thread_message(message, channel, text, mentioned, start)
        elif mentioned:
            await self._channel_mention(message, text, start)

    async def _thread_message(
        self, message: discord.Message, thread: discord.Thread, text: str, mentioned: bool,
        start: float,
    ) -> None:
        if not mentioned and not (self.settings.message_content and text):
            return
        where = Where(str(thread.parent_id), str(thread.id))
        previous, unavailable = await self._lookup(where.thread_key())
        me = self.user  # type: ignore[attr-defined]
        ours = unavailable and me is not None and thread.owner_id == me.id
        if previous is None and not mentioned and not ours:
            return  # a thread the bot has no estimate in
        if await self._limited_message(message, start, "followup"):
            return
        workspace = _guild_workspace(message)
        # prices / subscribe / unsubscribe work in a thread too, for its channel.
        reply = await self._mention_price_reply(message, text, thread.parent_id)
        if reply is None and previous is None and unavailable:
            reply = await self.service.answer_without_context_async(text, workspace)
        elif reply is None:
            reply = await self._answer(text, NO_OPTIONS, previous, workspace)
        if reply.kind is ReplyKind.ERROR and not mentioned:
            self._log("followup", reply, "ignored", start)
            return
        await self._post_reply(message, thread, where, reply, text, start, "followup",
                               reference=mentioned)

    async def _limited_message(
        self, message: discord.Message, start: float, trigger: str
    ) -> bool:
        """Refuse a message over the per-user rate limit; True if so. A plain message
        can't be answered privately, so the notice deletes itself after a minute."""
        reply = await self.service.admit(PLATFORM, str(message.author.id))
        if reply is None:
            return False
        embeds, _, _ = self._render(reply)
        with contextlib.suppress(discord.HTTPException):
            await message.channel.send(
                embeds=embeds, allowed_mentions=NO_MENTIONS, delete_after=LIMITED_NOTICE_S,
                reference=message.to_reference(fail_if_not_exists=False),
                mention_author=False,
            )
        self._log(trigger, reply, "limited", start)
        return True

    async def _mention_price_reply(
        self, message: discord.Message, text: str, channel_id: int | None = None
    ) -> Reply | None:
        """``@ftcost prices`` / ``subscribe`` / ``unsubscribe`` in a channel (or in a
        thread, for its parent ``channel_id``); None for anything else. Managing needs the
        author's Manage Server/Channels in the channel."""
        if price_command(text) is None:
            return None
        author = message.author
        perms = (
            message.channel.permissions_for(author)  # type: ignore[union-attr,arg-type]
            if isinstance(author, discord.Member) else None
        )
        ctx = Context(
            PLATFORM,
            channel=str(channel_id if channel_id is not None else message.channel.id),
            user=str(author.id),
            workspace=_guild_workspace(message),
            can_manage=can_manage(perms, message.guild is not None),
        )
        return await self.service.price_reply(text, ctx)

    async def _channel_mention(self, message: discord.Message, text: str, start: float) -> None:
        if await self._limited_message(message, start, "mention"):
            return
        where = Where(str(message.channel.id))
        ref = message.reference
        if ref is not None and ref.message_id is not None and ref.channel_id == message.channel.id:
            key = where.thread_key(ref.message_id)
            previous = await self._context(key)
            if previous is not None:
                reply = await self._answer(
                    text, NO_OPTIONS, previous, _guild_workspace(message)
                )
                if reply.kind is not ReplyKind.ESTIMATE:
                    await self._post_reply(message, message.channel, where, reply, text, start,
                                           "followup", reference=True)
                    return
                target = ref.resolved if isinstance(ref.resolved, discord.Message) else (
                    message.channel.get_partial_message(ref.message_id))  # type: ignore[union-attr]
                title = (target.embeds[0].title if isinstance(target, discord.Message)
                         and target.embeds else None)
                thread = await self._thread_for(target, f"{title or 'ftcost'} · what-ifs")
                if thread is not None:
                    await self._post_reply(message, thread, Where(where.channel, str(thread.id)),
                                           reply, text, start, "followup", reference=False)
                    return
        reply = await self._mention_price_reply(message, text)
        if reply is None:
            reply = await self._answer(text, NO_OPTIONS, None, _guild_workspace(message))
        await self._post_reply(message, message.channel, where, reply, text, start, "mention",
                               reference=True)

    async def _post_reply(
        self,
        message: discord.Message,
        channel: Any,
        where: Where,
        reply: Reply,
        text: str,
        start: float,
        trigger: str,
        *,
        reference: bool,
    ) -> None:
        footer = cut(f"{_user_name(message.author)}: {text}", 300) if text else None
        if reply.kind is ReplyKind.CHART and reply.request is not None:
            try:
                await self._send_chart(channel.send, reply.request, _guild_workspace(message),
                                       footer)
                outcome = "uploaded"
            except discord.HTTPException as exc:
                log.warning("cannot attach the chart in %s: %s", getattr(channel, "id", "?"),
                            exc)
                outcome = "failed"
            self._log(trigger, reply, outcome, start)
            return
        embeds, view, carried = self._render(reply, query=text, footer=footer)
        kwargs: dict[str, Any] = {"embeds": embeds, "allowed_mentions": NO_MENTIONS}
        if view is not None:
            kwargs["view"] = view
        if reference:
            kwargs["reference"] = message.to_reference(fail_if_not_exists=False)
            kwargs["mention_author"] = False
        try:
            try:
                sent = await channel.send(**kwargs)
            except discord.Forbidden:
                if not reference:
                    raise
                # a reply needs Read Message History; without it, answer without the reply
                kwargs.pop("reference")
                kwargs.pop("mention_author")
                sent = await channel.send(**kwargs)
        except discord.HTTPException as exc:
            log.warning("cannot answer in channel %s: %s", getattr(channel, "id", "?"), exc)
            self._log(trigger, reply, "failed", start)
            return
        await self._remember(where, sent.id, reply, carried)
        outcome = "posted" if reply.kind is ReplyKind.ESTIMATE else reply.kind.value
        self._log(trigger, reply, outcome, start)
        if reply.chart and reply.request is not None:
            await self._chart_in_thread(sent, channel, reply.request, _guild_workspace(message),
                                        footer, channel.send)


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
