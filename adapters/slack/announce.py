"""Price announcements and the ``prices`` table in Slack Block Kit, and the Slack
:class:`~bot.announce.Poster`.

An announcement is a header (its block id is the announcement's key, so a restart can
find it with ``conversations.history``), one bullet per card that moved, the effect on
the reference estimate, and a context line (when refreshed, the threshold, how to
unsubscribe). Every text respects Block Kit's limits (header 150, section 3,000).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from bot.announce import Announcement, ChannelGone, RateLimited, SendFailed
from bot.price_commands import PricesView

log = logging.getLogger("ftcost.slack.announce")

GONE_ERRORS = frozenset(
    {"channel_not_found", "not_in_channel", "is_archived", "channel_is_archived",
     "team_access_not_granted", "access_denied"}
)  # fmt: skip
"""``chat.postMessage`` errors meaning the bot can no longer post to the channel."""
MAX_HEADER = 150
MAX_SECTION = 3000
HISTORY_MARGIN_S = 120.0
"""Look this much further back than the claim time (clocks of replicas and Slack differ)."""


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _sections(lines: list[str], limit: int = MAX_SECTION) -> list[dict[str, Any]]:
    """Lines packed into as few mrkdwn sections as fit."""
    out: list[dict[str, Any]] = []
    chunk = ""
    for line in lines:
        line = _cut(line, limit)
        if chunk and len(chunk) + 1 + len(line) > limit:
            out.append({"type": "section", "text": {"type": "mrkdwn", "text": chunk}})
            chunk = ""
        chunk = f"{chunk}\n{line}" if chunk else line
    if chunk:
        out.append({"type": "section", "text": {"type": "mrkdwn", "text": chunk}})
    return out


def announcement_blocks(ann: Announcement, command: str = "/ftcost") -> list[dict[str, Any]]:
    """A price-change announcement; ``command`` is the app's slash command."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "header",
            "block_id": ann.key,
            "text": {"type": "plain_text", "text": _cut(ann.title, MAX_HEADER), "emoji": False},
        }
    ]
    blocks += _sections(
        [
            f"• *{_escape(m.card)}* ${m.old:.2f} → *${m.new:.2f}*/hr ({m.percent:+.1f}%) · "
            f"{_escape(m.source)}"
            for m in ann.moves
        ]
    )
    if ann.reference is not None:
        ref = ann.reference
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": _cut(
            f"*{_escape(ref.title)}*\n{_escape(ref.sentence())}", MAX_SECTION)}})  # fmt: skip
    blocks.append(
        {"type": "context", "elements": [{"type": "mrkdwn", "text": _escape(ann.footer(command))}]}
    )
    return blocks


def _code_sections(text: str) -> list[dict[str, Any]]:
    """A monospace block split over sections of whole lines."""
    budget = MAX_SECTION - 8
    out: list[str] = []
    chunk: list[str] = []
    for line in text.splitlines():
        if chunk and sum(len(x) + 1 for x in chunk) + len(line) > budget:
            out.append("\n".join(chunk))
            chunk = []
        chunk.append(line[:budget])
    if chunk:
        out.append("\n".join(chunk))
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": f"```{_escape(c)}```"}} for c in out
    ]


def prices_blocks(
    view: PricesView, subscription: str | None = None, command: str = "/ftcost"
) -> list[dict[str, Any]]:
    """The ``/ftcost prices`` reply. ``subscription`` describes this channel's one;
    ``command`` is the app's slash command, which the footer names."""
    blocks: list[dict[str, Any]] = [
        {"type": "header", "text": {"type": "plain_text", "text": view.title}},
        *_sections([_escape(view.summary)]),
        *_code_sections(view.table.render()),
    ]
    if view.sources:
        blocks += _sections(["*Sources*", *(f"• {_escape(s)}" for s in view.sources)])
    if view.held_back:
        blocks += _sections(["*Held back* (moved more than 5x in one refresh)",
                             *(f"• {_escape(h)}" for h in view.held_back)])  # fmt: skip
    note = (
        f"This channel gets announcements of {_escape(subscription)}. "
        f"`{command} unsubscribe` stops them."
        if subscription
        else f"`{command} subscribe [min change %] [cards...]` announces changes in this channel."
    )
    blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": note}]})
    return blocks


def prices_text(view: PricesView) -> str:
    """Plain-text fallback of :func:`prices_blocks`."""
    return "\n".join([view.title, view.summary, view.table.render(), *view.sources])


class SlackPoster:
    """Posts announcements with ``chat.postMessage``.

    Give it a client whose rate-limit retries are off or few: a 429 it still gets becomes
    :class:`RateLimited`, and the fan-out waits ``Retry-After`` on its own clock.
    """

    platform = "slack"
    threads = True
    """A reply under an announcement is read (``bot.announcement_thread``)."""

    def __init__(self, client: AsyncWebClient, command: str = "/ftcost") -> None:
        self.client = client
        self.command = command

    async def post(self, channel: str, announcement: Announcement) -> str:
        try:
            resp = await self.client.chat_postMessage(
                channel=channel,
                text=announcement.text(self.command),
                blocks=announcement_blocks(announcement, self.command),
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:
            error = str(exc.response.get("error") or "")
            if error in GONE_ERRORS:
                raise ChannelGone(error) from exc
            if exc.response.status_code == 429 or error == "ratelimited":
                retry = exc.response.headers.get("Retry-After") or exc.response.headers.get(
                    "retry-after", "1"
                )
                raise RateLimited(float(retry)) from exc
            raise SendFailed(error or f"HTTP {exc.response.status_code}") from exc
        return str(resp["ts"])

    async def was_posted(
        self, channel: str, announcement: Announcement, since: float
    ) -> bool | None:
        """Looks for the announcement's header block id in the channel's recent history
        (needs the ``channels:history`` / ``groups:history`` scope; None without it)."""
        try:
            resp = await self.client.conversations_history(
                channel=channel, oldest=f"{max(0.0, since - HISTORY_MARGIN_S):.6f}", limit=200
            )
        except SlackApiError as exc:
            log.warning("cannot read history channel=%s error=%s", channel,
                        exc.response.get("error"))  # fmt: skip
            return None
        for message in resp.get("messages") or []:
            if any(b.get("block_id") == announcement.key for b in message.get("blocks") or []):
                return True
        return None if resp.get("has_more") else False
