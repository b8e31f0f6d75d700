"""Price announcements and the ``prices`` table as Discord embeds, and the Discord
:class:`~bot.announce.Poster`.

An announcement is one embed: the cards that moved in the description, the reference
estimate as a field, and a footer naming the refresh and the announcement's key (a
restart looks for it in the channel's recent history). Green when prices went down,
orange when up, blurple when mixed. Limits hold by construction
(:mod:`adapters.discord.limits`).

discord.py paces requests and waits out 429s itself; a 404 (Unknown Channel) or 403
(Missing Access / Permissions) means the channel is gone for the bot.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import discord

from adapters.discord.limits import (
    MAX_EMBED_DESCRIPTION,
    MAX_EMBED_TITLE,
    MAX_FIELD_NAME,
    MAX_FIELD_VALUE,
    MAX_FOOTER,
    cut,
)
from bot.announce import Announcement, ChannelGone, RateLimited, SendFailed
from bot.price_commands import PricesView

log = logging.getLogger("ftcost.discord.announce")

DOWN_COLOUR = 0x2ECC71
UP_COLOUR = 0xE67E22
MIXED_COLOUR = 0x5865F2
HISTORY_MARGIN_S = 120.0
CODE = "```"


def _colour(ann: Announcement) -> int:
    down = sum(1 for m in ann.moves if m.new < m.old)
    if down == len(ann.moves):
        return DOWN_COLOUR
    return UP_COLOUR if down == 0 else MIXED_COLOUR


def _lines(lines: list[str], limit: int) -> str:
    """Whole lines up to ``limit`` characters, then ``… N more``."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        rest = len(lines) - i
        if used + len(line) + 1 > limit - 20:
            out.append(f"… {rest} more")
            break
        out.append(line)
        used += len(line) + 1
    return "\n".join(out)


def announcement_embed(ann: Announcement) -> discord.Embed:
    lines = [
        f"**{discord.utils.escape_markdown(m.card)}** ${m.old:.2f} → **${m.new:.2f}**/hr "
        f"({m.percent:+.1f}%) · {discord.utils.escape_markdown(m.source)}"
        for m in ann.moves
    ]
    embed = discord.Embed(
        title=cut(ann.title, MAX_EMBED_TITLE),
        description=_lines(lines, MAX_EMBED_DESCRIPTION),
        colour=_colour(ann),
        timestamp=ann.refreshed_at,
    )
    if ann.reference is not None:
        embed.add_field(
            name=cut(ann.reference.title, MAX_FIELD_NAME),
            value=cut(ann.reference.sentence(), MAX_FIELD_VALUE),
            inline=False,
        )
    embed.set_footer(text=cut(f"{ann.footer()} · {ann.key}", MAX_FOOTER))
    return embed


def prices_embed(view: PricesView, subscription: str | None = None) -> discord.Embed:
    """The ``/ftcost prices`` reply as one embed."""
    table = view.table.render().splitlines()
    budget = MAX_EMBED_DESCRIPTION - len(view.summary) - 2 * len(CODE) - 4
    body = _lines(table, budget)
    embed = discord.Embed(
        title=view.title, description=f"{view.summary}\n{CODE}\n{body}\n{CODE}",
        colour=MIXED_COLOUR,
    )  # fmt: skip
    if view.sources:
        embed.add_field(name="Sources", value=_lines(view.sources, MAX_FIELD_VALUE), inline=False)
    if view.held_back:
        embed.add_field(name="Held back (moved more than 5x in one refresh)",
                        value=_lines(view.held_back, MAX_FIELD_VALUE), inline=False)  # fmt: skip
    note = (
        f"This channel gets announcements of {subscription}. /ftcost unsubscribe stops them."
        if subscription
        else "/ftcost subscribe [min change %] [cards...] announces changes in this channel."
    )
    embed.set_footer(text=cut(note, MAX_FOOTER))
    return embed


class DiscordPoster:
    """Posts announcements with the bot's discord.py client (REST only)."""

    platform = "discord"
    threads = False
    """The bot reads replies only in its own threads, and announcements start none."""

    def __init__(self, client: discord.Client) -> None:
        self.client = client

    async def post(self, channel: str, announcement: Announcement) -> str:
        target = self.client.get_partial_messageable(int(channel))
        try:
            message = await target.send(
                embed=announcement_embed(announcement),
                allowed_mentions=discord.AllowedMentions.none(),
            )
        except discord.NotFound as exc:
            raise ChannelGone(f"Discord 404 ({exc.text or 'Unknown Channel'})") from exc
        except discord.Forbidden as exc:
            raise ChannelGone(f"Discord 403 ({exc.text or 'Missing Access'})") from exc
        except discord.HTTPException as exc:
            if exc.status == 429:
                retry = exc.response.headers.get("Retry-After", "1")
                raise RateLimited(float(retry)) from exc
            raise SendFailed(f"Discord {exc.status} ({exc.text})") from exc
        return str(message.id)

    async def was_posted(
        self, channel: str, announcement: Announcement, since: float
    ) -> bool | None:
        """Looks for the key in the footers of the bot's recent messages (needs Read
        Message History; None when the history can't be read)."""
        me = self.client.user
        if me is None:
            return None
        after = discord.Object(
            id=discord.utils.time_snowflake(
                datetime.fromtimestamp(max(0.0, since - HISTORY_MARGIN_S), UTC)
            )
        )
        target = self.client.get_partial_messageable(int(channel))
        try:
            async for message in target.history(after=after, limit=200):
                if message.author.id == me.id and any(
                    announcement.key in (e.footer.text or "") for e in message.embeds
                ):
                    return True
        except discord.HTTPException as exc:
            log.warning("cannot read history channel=%s status=%s", channel, exc.status)
            return None
        return False


def can_manage(permissions: discord.Permissions | None, in_guild: bool) -> bool | None:
    """Whether a member may change the channel's announcements: Administrator, Manage
    Server or Manage Channels (their resolved permissions in the channel, as Discord sends
    them with a command). None in a DM (anyone may)."""
    if not in_guild or permissions is None:
        return None
    return bool(
        permissions.administrator or permissions.manage_guild or permissions.manage_channels
    )
