"""The messages the docs picture, built by the bot's own code.

Each picture comes from the payload the bot posts: for Slack, what
:func:`adapters.slack.blocks.message_for` returns (``text`` and ``blocks`` of
``chat.postMessage``), called as :mod:`adapters.slack.delivery` calls it; for Discord, the
embeds of :func:`adapters.discord.embeds.embeds_for` as ``Embed.to_dict()`` and, under an
estimate, the components of :func:`adapters.discord.views.estimate_view`, as the client
builds them (its footer is ``"<name>: <command> <query>"``).

The payloads are deterministic: the built-in catalog and its prices (no live price sheet),
a fixed clock, no channel settings, and user ids and names fixed here. Their SHA-256 (of
:func:`canonical_json`) is recorded in ``docs/img/payloads.json`` beside the pictures.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from adapters.discord.embeds import embeds_for
from adapters.discord.settings import ClientSettings
from adapters.discord.views import estimate_view
from adapters.slack.blocks import message_for
from bot.config import SlackSettings
from bot.service import Reply, ReplyKind, Service
from catalog.loader import default_catalog

QUERY = "70b qlora 50M tokens h100"
"""The estimate every picture shows (the README's first sample)."""
FOLLOWUP = "what if 8k seq"
"""A thread reply changing the estimate above."""
ERROR_QUERY = "70b qlora 50M tokens h1000"
"""A query with a typo: the error answer."""

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
"""The clock the estimates are reported at (it words the age of live prices)."""
SLACK_USER_ID = "U04ADA2024"
"""The asker, as Slack identifies her; pictured as :data:`USER_NAME`."""
USER_NAME = "ada"

IMG_DIR = Path(__file__).resolve().parent.parent / "img"
RECORD = IMG_DIR / "payloads.json"
"""``{picture file name: {"sha256": ..., "platform": ..., "query": ...}}``."""

Platform = Literal["slack", "discord"]


class FixedClock:
    """A :class:`bot.clock.Clock` that always says :data:`NOW`."""

    def now(self) -> datetime:
        return NOW

    def time(self) -> float:
        return NOW.timestamp()

    async def sleep_until(self, when: datetime) -> None:
        raise RuntimeError("the docs clock never waits")

    async def sleep(self, seconds: float) -> None:
        raise RuntimeError("the docs clock never waits")


def service() -> Service:
    """The conversation service over the built-in catalog, at :data:`NOW`."""
    return Service(catalog=default_catalog(), clock=FixedClock())


def _reply(query: str, followup: str | None = None) -> Reply:
    svc = service()
    reply = svc.answer(query)
    if followup is not None:
        reply = svc.answer(followup, previous=reply.request)
    return reply


def slack_payload(reply: Reply, query: str) -> dict[str, Any]:
    """``message_for`` with the keywords the Slack delivery passes for this reply kind."""
    settings = SlackSettings()
    kwargs: dict[str, Any] = {"command": settings.command}
    if reply.kind is ReplyKind.ESTIMATE:
        kwargs.update(asked_by=SLACK_USER_ID, query=query, max_cards=settings.max_cards)
    elif reply.kind is ReplyKind.ERROR:
        kwargs.update(query=query)
    return message_for(reply, **kwargs)


def discord_payload(reply: Reply, query: str) -> dict[str, Any]:
    """The embeds and components the Discord client sends for this reply to a slash
    command ``query``."""
    command = ClientSettings().command
    footer = f"{USER_NAME}: {command} {query}".strip()
    embeds = embeds_for(reply, query=query, footer=footer, command=command)
    components: list[dict[str, Any]] = []
    if reply.kind is ReplyKind.ESTIMATE and reply.report is not None:
        view, _carried = estimate_view(reply.report)
        components = view.to_components()
    return {"embeds": [e.to_dict() for e in embeds], "components": components}


@dataclass(frozen=True, slots=True)
class Picture:
    """One picture of the docs: its file, platform, what was asked, and whether only the
    asker sees the answer."""

    file: str
    platform: Platform
    query: str
    build: Callable[[], dict[str, Any]]
    ephemeral: bool = False
    followup: str | None = None

    def payload(self) -> dict[str, Any]:
        return self.build()


def _slack(query: str, followup: str | None = None) -> Callable[[], dict[str, Any]]:
    return lambda: slack_payload(_reply(query, followup), followup or query)


def _discord(query: str, followup: str | None = None) -> Callable[[], dict[str, Any]]:
    return lambda: discord_payload(_reply(query, followup), followup or query)


PICTURES: tuple[Picture, ...] = (
    Picture("slack-estimate.png", "slack", QUERY, _slack(QUERY)),
    Picture("discord-estimate.png", "discord", QUERY, _discord(QUERY)),
    Picture("slack-followup.png", "slack", QUERY, _slack(QUERY, FOLLOWUP), followup=FOLLOWUP),
    Picture("slack-error.png", "slack", ERROR_QUERY, _slack(ERROR_QUERY), ephemeral=True),
    Picture("discord-error.png", "discord", ERROR_QUERY, _discord(ERROR_QUERY),
            ephemeral=True),
)


def canonical_json(payload: Any) -> bytes:
    """The payload as UTF-8 JSON with sorted keys and no spaces: the bytes that are hashed."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def payload_sha256(payload: Any) -> str:
    return hashlib.sha256(canonical_json(payload)).hexdigest()


def record_entry(picture: Picture, payload: dict[str, Any]) -> dict[str, str]:
    entry = {"platform": picture.platform, "query": picture.query,
             "sha256": payload_sha256(payload)}
    if picture.followup:
        entry["followup"] = picture.followup
    return entry


def read_record(path: Path = RECORD) -> dict[str, dict[str, str]]:
    """The recorded hashes (empty when the file is missing)."""
    if not path.exists():
        return {}
    data: dict[str, dict[str, str]] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write_record(entries: dict[str, dict[str, str]], path: Path = RECORD) -> None:
    path.write_text(json.dumps(entries, indent=2, sort_keys=True) + "\n", encoding="utf-8")
