"""The Discord client's knobs (``discord:`` in the bot's YAML)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from adapters.discord.endpoints import DEFAULT_API_BASE_URL

ARCHIVE_DURATIONS = (60, 1440, 4320, 10080)
"""The auto-archive durations (minutes) Discord accepts for a thread."""


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


__all__ = ["ARCHIVE_DURATIONS", "ClientSettings"]
