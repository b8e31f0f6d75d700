"""Plain Discord messages: a mention in a channel, a reply to an estimate, and messages
in an estimate's thread (follow-ups).

* a message in a thread with a context: a follow-up when it mentions the bot, or for
  any message when the Message Content intent is on (parse errors of messages that do
  not mention the bot are ignored: that is conversation, not a question).
* a message mentioning the bot in a channel: a new estimate, or when it replies to one
  of the bot's estimates, a follow-up answered in that estimate's thread.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import Any

import discord

from adapters.discord.announce import can_manage
from adapters.discord.core import ClientCore
from adapters.discord.limits import cut
from adapters.discord.places import (
    NO_MENTIONS,
    PLATFORM,
    Where,
    guild_workspace,
    strip_mention,
    user_name,
)
from bot.service import Reply, ReplyKind
from bot.store import ThreadKey
from engine import Request

LIMITED_NOTICE_S = 60.0
"""A rate-limit notice on a plain message (which can't be private) deletes itself after
this many seconds."""

log = logging.getLogger("adapters.discord.client")


def _may_manage(message: discord.Message) -> bool | None:
    """Whether the author may change the channel's price announcements: Manage
    Channels or Manage Server where the message was sent."""
    author = message.author
    perms = (
        message.channel.permissions_for(author)  # type: ignore[union-attr,arg-type]
        if isinstance(author, discord.Member) else None
    )
    return can_manage(perms, message.guild is not None)


class MessageHandlers(ClientCore):
    """``on_message`` and what it leads to."""

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
        key = where.thread_key()
        # One reply of a thread at a time: each builds on the estimate the last posted.
        async with (self.service.thread_turn(key) if key else contextlib.nullcontext()):
            await self._thread_reply(message, thread, where, text, mentioned, start)

    async def _thread_reply(
        self, message: discord.Message, thread: discord.Thread, where: Where, text: str,
        mentioned: bool, start: float,
    ) -> None:
        """Answer one message in ``thread`` (its turn held: :meth:`_thread_message`). In
        the bot's own thread without a context the store can give (expired, lost,
        unreadable, the store down), a question is answered afresh and a change ("what
        if 8k seq") told how to ask in full, each saying why, as on Slack."""
        previous, unavailable, expired = await self._thread_context(thread, where)
        workspace = guild_workspace(message)
        # Only the bot's own thread: in anyone else's, a store outage says nothing.
        gone = previous is None and (expired or (unavailable and self._own_thread(thread)))
        if previous is None and not mentioned and not gone:
            return  # a thread the bot has no estimate in
        reads = (self.service.reads_as_followup(text, workspace) if gone
                 else self.service.reads_as_question(text, previous, workspace))
        if not mentioned and not reads:
            self._log("followup", None, "ignored", start)
            return  # chatter: not answered, and not counted against the rate limit
        if await self._limited_message(message, start, "followup"):
            return
        # prices / subscribe / unsubscribe and settings work in a thread too, for its channel.
        reply = await self._respond(
            text, where.channel, workspace, previous=previous,
            user=str(message.author.id), may_manage=_may_manage(message),
            context_lost=unavailable, context_expired=expired,
        )
        if reply.kind is ReplyKind.ERROR and not mentioned and not gone:
            self._log("followup", reply, "ignored", start)
            return
        await self._post_reply(message, thread, where, reply, text, start, "followup",
                               reference=mentioned)

    async def _thread_context(
        self, thread: discord.Thread, where: Where
    ) -> tuple[Request | None, bool, bool]:
        """What a reply in ``thread`` follows up on: ``(stored request or None, store
        unreachable?, expired?)``; expired: the bot's own thread (opened on one of its
        estimates) whose estimate the store no longer has: older than the store keeps
        them, lost with its data, or unreadable after an upgrade. Read in the thread's
        turn."""
        previous, unavailable = await self._lookup(where.thread_key())
        expired = previous is None and not unavailable and self._own_thread(thread)
        return previous, unavailable, expired

    def _own_thread(self, thread: discord.Thread) -> bool:
        """Whether the bot opened ``thread`` (on one of its estimates)."""
        me = self.user  # type: ignore[attr-defined]
        return me is not None and thread.owner_id == me.id

    async def _limited_message(
        self, message: discord.Message, start: float, trigger: str
    ) -> bool:
        """Refuse a message over the per-user rate limit; True if so. A plain message
        can't be answered privately, so the notice deletes itself after a minute, and only
        the window's first refusal gets one (:attr:`Reply.quiet`): a flood of messages is
        not answered by a flood of notices."""
        reply = await self.service.admit(PLATFORM, str(message.author.id))
        if reply is None:
            return False
        if reply.quiet:  # told already in this window
            self._log(trigger, reply, "quiet", start)
            return True
        embeds, _, _ = self._render(reply)
        with contextlib.suppress(discord.HTTPException):
            await message.channel.send(
                embeds=embeds, allowed_mentions=NO_MENTIONS, delete_after=LIMITED_NOTICE_S,
                reference=message.to_reference(fail_if_not_exists=False),
                mention_author=False,
            )
        self._log(trigger, reply, "limited", start)
        return True

    async def _channel_mention(self, message: discord.Message, text: str, start: float) -> None:
        if await self._limited_message(message, start, "mention"):
            return
        where = Where(str(message.channel.id))
        ref = message.reference
        if ref is not None and ref.message_id is not None and ref.channel_id == message.channel.id:
            key = where.thread_key(ref.message_id)
            assert key is not None
            # A reply to an estimate changes its thread's: in the thread's turn.
            async with self.service.thread_turn(key):
                if await self._estimate_reply(message, where, key, ref, text, start):
                    return
        answer = await self._respond(
            text, where.channel, guild_workspace(message), user=str(message.author.id),
            may_manage=_may_manage(message),
        )
        await self._post_reply(message, message.channel, where, answer, text, start, "mention",
                               reference=True)

    async def _estimate_reply(
        self, message: discord.Message, where: Where, key: ThreadKey,
        ref: discord.MessageReference, text: str, start: float,
    ) -> bool:
        """Answer a mention replying to the message ``ref`` as a follow-up of its estimate
        (in its thread) when it is one; False when it is none (a new question then)."""
        assert ref.message_id is not None
        previous, unavailable = await self._lookup(key)
        me = self.user  # type: ignore[attr-defined]
        resolved = ref.resolved if isinstance(ref.resolved, discord.Message) else None
        mine = me is not None and resolved is not None and resolved.author.id == me.id
        # one of the bot's messages whose estimate the store can't give: it is down, or it
        # no longer has it (an estimate: its buttons; an announcement has none)
        if mine and (unavailable or (previous is None and resolved is not None
                                     and bool(resolved.components))):
            reply = await self._respond(
                text, where.channel, guild_workspace(message), user=str(message.author.id),
                may_manage=_may_manage(message), context_lost=unavailable,
                context_expired=not unavailable,
            )
            await self._post_reply(message, message.channel, where, reply, text, start,
                                   "followup", reference=True)
            return True
        if previous is None:
            return False
        reply = await self._respond(
            text, where.channel, guild_workspace(message), previous=previous,
            user=str(message.author.id), may_manage=_may_manage(message),
        )
        if reply.kind is not ReplyKind.ESTIMATE:
            await self._post_reply(message, message.channel, where, reply, text, start,
                                   "followup", reference=True)
            return True
        target = resolved or message.channel.get_partial_message(  # type: ignore[union-attr]
            ref.message_id)
        title = (target.embeds[0].title if isinstance(target, discord.Message)
                 and target.embeds else None)
        thread = await self._thread_for(target, f"{title or 'ftcost'} · what-ifs")
        if thread is None:
            return False  # no thread possible: answered as a new question, as before
        await self._post_reply(message, thread, Where(where.channel, str(thread.id)),
                               reply, text, start, "followup", reference=False)
        return True

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
        footer = cut(f"{user_name(message.author)}: {text}", 300) if text else None
        if reply.kind is ReplyKind.CHART and reply.request is not None:
            try:
                await self._send_chart(channel.send, reply.request, guild_workspace(message),
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
            await self._chart_in_thread(sent, channel, reply.request, guild_workspace(message),
                                        footer, channel.send)


__all__ = ["LIMITED_NOTICE_S", "MessageHandlers"]
