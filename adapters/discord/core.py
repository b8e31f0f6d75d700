"""The Discord client's shared machinery: intents, lifecycle, and the helpers every
handler uses (asking the service, rate limits, charts, threads, remembering requests).

The handlers themselves live in :mod:`adapters.discord.messages` (plain messages) and
:mod:`adapters.discord.client` (``/ftcost``, buttons); each subclasses the one before.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import discord
from discord import app_commands

from adapters.chart import render_chart
from adapters.discord.embeds import chart_embed, chart_failed_embed, embeds_for, notice_embed
from adapters.discord.endpoints import discover_gateway
from adapters.discord.limits import MAX_THREAD_NAME, cut
from adapters.discord.options import NO_OPTIONS, Options
from adapters.discord.places import NO_MENTIONS, PLATFORM, Where, message_key
from adapters.discord.settings import ClientSettings
from adapters.discord.views import DYNAMIC_ITEMS, estimate_view
from bot.logs import log_command
from bot.service import Ask, Reply, ReplyKind, Service
from bot.store import StoreUnavailable, ThreadKey
from catalog.hub.errors import HubError
from engine import Request
from engine.specs import Catalog

log = logging.getLogger("adapters.discord.client")


class ClientCore:
    """State and helpers of the ftcost client (mixed into ``discord.Client`` or
    ``AutoShardedClient`` through :class:`adapters.discord.client.FtcostMixin`)."""

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
        """The slash commands are added by :class:`adapters.discord.client.FtcostMixin`."""
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
    async def _respond(
        self,
        text: str,
        channel: str | None,
        workspace: str | None,
        *,
        options: Options = NO_OPTIONS,
        previous: Request | None = None,
        user: str | None = None,
        may_manage: bool | None = None,
        context_lost: bool = False,
        context_expired: bool = False,
    ) -> Reply:
        """The shared service's answer (:meth:`bot.service.Service.respond`): a price or
        settings command, else the question with ``options`` read beside the text, a
        change of ``previous`` or a new question with the channel's settings.
        ``channel``: whose settings and announcements apply (a thread's parent);
        ``may_manage``: the asker's Manage Channels/Server there
        (:func:`adapters.discord.announce.can_manage`)."""
        return await self.service.respond(Ask(
            " ".join(str(text or "").split()), PLATFORM, channel=channel, user=user,
            workspace=workspace, previous=previous, context_lost=context_lost,
            context_expired=context_expired, may_manage=may_manage, build=options.builder(),
            command=self.settings.command,
        ))

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


__all__ = ["ClientCore"]
