"""Where a Discord conversation lives: channels, threads and the store keys they map to.

Store keys (platform ``discord``):

* an estimate posted in channel ``C`` as message ``M`` is the context of the thread that
  may start from it: ``("discord", C, M)`` (Discord gives a thread started from a message
  the message's id);
* an estimate posted in thread ``T`` of channel ``C`` replaces ``("discord", C, T)``;
* when the buttons' custom ids cannot carry the request (very long requests), the
  message's own request is kept under ``("discord", channel of M, "msg:M")``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import discord

from adapters.discord import ids
from bot.store import ThreadKey

PLATFORM = "discord"
NO_MENTIONS = discord.AllowedMentions.none()
"""Every message goes out with this (also the client's default): nothing the bot echoes
can ping anyone."""


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
    """Where message ``message_id``'s own request is kept when its buttons can't carry it."""
    return ThreadKey(PLATFORM, str(channel_id), ids.message_key_thread(message_id))


def workspace_of(guild_id: int | str | None) -> str | None:
    """The service's workspace name of a guild (team price sheets, Hub tokens)."""
    return f"discord:{guild_id}" if guild_id else None


def guild_workspace(message: discord.Message) -> str | None:
    """The workspace of the guild ``message`` was sent in (None in a DM)."""
    return workspace_of(message.guild.id) if message.guild is not None else None


def strip_mention(text: str, user_id: int | None) -> str:
    """``text`` without mentions of ``user_id`` (the bot), whitespace collapsed."""
    if user_id is None:
        return " ".join(text.split())
    return " ".join(re.sub(rf"<@!?{user_id}>", " ", text).split())


def user_name(user: Any) -> str:
    """The name to show for ``user`` in a footer."""
    return str(getattr(user, "display_name", None) or getattr(user, "name", None) or "someone")


__all__ = [
    "NO_MENTIONS",
    "PLATFORM",
    "Where",
    "guild_workspace",
    "message_key",
    "strip_mention",
    "user_name",
    "workspace_of",
]
