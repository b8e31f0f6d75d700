"""The shared :class:`~bot.service.Reply` rendered as Discord embeds.

An estimate is one embed, coloured by the fit band of the recommended option:

* title: the report title (model · method); description: the subtitle, the headline in
  bold, the cost line, where the price comes from, notes, and for a follow-up what
  changed;
* fields: the breakdown bar with its legend, the card table and the what-ifs (each in a
  code block, monospace), then warnings and assumptions;
* footer: who asked and what (plain text: footers render no Markdown and no mentions).

Limits hold by construction (see :mod:`adapters.discord.limits`): code blocks lose
whole rows (``… N more``) to fit 1,024-character field values, long warning and
assumption lists continue in further fields, and when everything together would pass
the 6,000-character message total the least important sections go first (assumptions,
then warnings, then what-ifs), leaving a line that says so.

Help and catalog listings are monospace text split over the description and fields;
errors are a short embed naming the bad word and the nearest known ones.

Report strings come from the engine and the catalog and keep their backticks (notes use
them on purpose); other Markdown in them, masked links included, is escaped, since a
report repeats outside text (a Hub config's fields, a training config's values).
Anything a user typed is escaped before it is shown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

import discord

from adapters.discord.announce import prices_embed
from adapters.discord.limits import (
    MAX_EMBED_DESCRIPTION,
    MAX_EMBED_FIELDS,
    MAX_EMBED_TITLE,
    MAX_EMBED_TOTAL,
    MAX_FIELD_NAME,
    MAX_FIELD_VALUE,
    cut,
)
from adapters.help import QUERY_HELP
from adapters.report import FRAMEWORK_LABELS, NO_FIT, Report
from bot.service import Reply, ReplyKind
from engine.fit import FIT_OVERSIZED, FIT_ROOMY, FIT_SWEET, FIT_TIGHT, FIT_TOO_SMALL

BAND_COLOURS: dict[str, int] = {
    FIT_SWEET: 0x2ECC71,  # green
    FIT_ROOMY: 0x3498DB,  # blue
    FIT_OVERSIZED: 0x95A5A6,  # grey
    FIT_TIGHT: 0xF1C40F,  # amber: it runs, with little headroom
    FIT_TOO_SMALL: 0xE74C3C,  # red
    NO_FIT: 0xE74C3C,  # red
}
ERROR_COLOUR = 0xE67E22  # orange: the query, not the fit, is the problem
INFO_COLOUR = 0x5865F2  # Discord blurple: help and listings

CODE = "```"
_FENCE_COST = len(CODE) * 2 + 1  # ```\n ... ```
_TRUNCATED_NOTE = "Some sections were cut to fit Discord's message limits."
_MAX_OWN_FOOTER = 500
"""Footers say who asked what; longer ones are cut well below the 2,048 limit."""


def band_colour(band: str) -> int:
    return BAND_COLOURS.get(band, BAND_COLOURS[NO_FIT])


_MENTION_OPENERS = re.compile(r"<(?=[@#/]|a?:|t:|id:)")
"""The start of anything Discord renders as a mention or a live reference: users
``<@1>`` / ``<@!1>``, roles ``<@&1>``, channels ``<#1>``, slash commands ``</x:1>``,
custom emoji ``<:e:1>`` / ``<a:e:1>``, timestamps ``<t:1>`` and ``<id:guide>``, whatever
the length of the id (``discord.utils.escape_mentions`` covers only 17-20-digit ids)."""


_UNESCAPED_BRACKET = re.compile(r"(?<!\\)((?:\\\\)*)(\[|\](?=\())")
"""A ``[``, or the ``]`` of ``](``, after an even number of backslashes (none, or escaped
backslashes): not yet escaped. ``escape_markdown`` escapes a whole masked link once, at
its ``[``; escaping that ``[`` again would show a stray backslash."""


def _inert_mentions(text: str) -> str:
    """No mention of any id length: a zero width space after ``<`` (``<@1>``, ``<#1>``,
    ``</x:1>``, ...) and after the ``@`` of ``@everyone`` / ``@here``."""
    return _MENTION_OPENERS.sub("<\u200b", discord.utils.escape_mentions(text))


def escape_user_text(text: str) -> str:
    """Text a user typed, made inert: no Markdown, no mentions of any id length (a zero
    width space after ``<``; ``@everyone`` / ``@here`` get one after ``@``), no masked
    links (``[`` and ``](`` escaped, once)."""
    text = _inert_mentions(discord.utils.escape_markdown(str(text)))
    return _UNESCAPED_BRACKET.sub(r"\1\\\2", text)


CODE_SPAN: Final = re.compile(r"(?s:```.+?```)|`[^`\n]+`")
"""One of the bot's code spans in a reply's text: inline (`` `/ftcost set framework hf` ``)
or fenced (a config pasted in ```` ```...``` ````). The neutral layer writes its examples
so, and turns a user's backticks into quotes."""
_HELD = "\x00"
"""Marks where a code span is held while the text around it is escaped (taken out of
the text first: it never shows)."""
_HELD_SPAN = re.compile(_HELD + r"(\d+)" + _HELD)


def reply_markdown(text: str) -> str:
    """A reply's text (an error, a notice, a settings or price answer) as Markdown: the
    bot's code spans (:data:`CODE_SPAN`) kept as code, with mentions made inert (Discord
    formats nothing else inside one, and a backslash would show); everything else, where
    the user's words are quoted, escaped as :func:`escape_user_text` escapes what a user
    typed, in place, so a line's start is still a line's start. Masked links get a zero
    width space in ``](`` besides. Backticks in a reply's text are the bot's: the neutral
    layer makes a user's backticks quotes before it quotes their words (no renderer can
    tell which backtick of ``"`x" is not … `generic``` is whose)."""
    spans: list[str] = []

    def hold(match: re.Match[str]) -> str:
        spans.append(_inert_mentions(match.group()))
        return f"{_HELD}{len(spans) - 1}{_HELD}"

    held = CODE_SPAN.sub(hold, str(text).replace(_HELD, ""))
    shown = _HELD_SPAN.sub(lambda m: spans[int(m.group(1))], escape_user_text(held))
    return shown.replace("](", "]\u200b(")


MD_ESCAPED: Final = ("\\", "*", "_", "~", "|", ">", "[")
"""What :func:`_md` escapes with a backslash (the backslash first): emphasis, strike,
spoilers, quotes, and ``[``, which opens a masked link."""


def _md(text: str) -> str:
    """Report text in Markdown: keep its backticks, neutralize other formatting. A report
    repeats outside text (a Hub config's ``quant_method``, a training config's values),
    so a masked link (``[click](https://…)``) is escaped too: it shows as written, its
    address in plain sight."""
    for char in MD_ESCAPED:
        text = text.replace(char, "\\" + char)
    return text.replace("](", "\\](")


def code_block(lines: list[str], limit: int = MAX_FIELD_VALUE, more: str = "more") -> str:
    """``lines`` in a code block of at most ``limit`` characters; rows that do not fit
    are dropped from the end and counted on a last line (``… 3 more``)."""
    lines = [line.replace(CODE, "'''") for line in lines]
    shown = len(lines)
    while True:
        kept = lines[:shown]
        if shown < len(lines):
            kept = [*kept, f"… {len(lines) - shown} {more}"]
        text = CODE + "\n" + "\n".join(kept) + CODE
        if len(text) <= limit:
            return text
        if shown == 0:
            return cut(text[: limit - len(CODE)], limit - len(CODE)) + CODE
        shown -= 1


def _line_chunks(lines: list[str], limit: int = MAX_FIELD_VALUE) -> list[str]:
    """Lines grouped into texts of at most ``limit`` characters (a too-long line is cut)."""
    chunks: list[str] = []
    current: list[str] = []
    for raw in lines:
        line = cut(raw, limit)
        if current and len("\n".join([*current, line])) > limit:
            chunks.append("\n".join(current))
            current = []
        current.append(line)
    if current:
        chunks.append("\n".join(current))
    return chunks


# ------------------------------------------------------------------------------------------
# budgeting: the 6,000-character total and 25 fields


@dataclass(slots=True)
class _Field:
    name: str
    value: str
    priority: int
    """Lower survives longer when the message is over budget."""


def _fields_within(fields: list[_Field], budget: int) -> tuple[list[_Field], bool]:
    """The fields that fit ``budget`` characters and 25 slots, keeping the most important
    ones and the original order; True when something was dropped."""
    order = sorted(range(len(fields)), key=lambda i: (fields[i].priority, i))
    keep: set[int] = set()
    used = 0
    for i in order:
        cost = len(fields[i].name.strip()) + len(fields[i].value.strip())
        if used + cost <= budget and len(keep) < MAX_EMBED_FIELDS:
            keep.add(i)
            used += cost
    return [f for i, f in enumerate(fields) if i in keep], len(keep) < len(fields)


def _assemble(
    title: str,
    description: str,
    colour: int,
    fields: list[_Field],
    footer: str | None,
) -> discord.Embed:
    title = cut(title, MAX_EMBED_TITLE)
    for f in fields:
        f.name = cut(f.name, MAX_FIELD_NAME)
        f.value = cut(f.value, MAX_FIELD_VALUE)
    footer = cut(footer, _MAX_OWN_FOOTER) if footer else None
    noted = f"{footer} · {_TRUNCATED_NOTE}" if footer else _TRUNCATED_NOTE
    # the description yields to the title, the footer and the essential fields (priority
    # 0 and 1: the breakdown and the cards of an estimate)
    essential = sum(len(f.name) + len(f.value) for f in fields if f.priority <= 1)
    room = MAX_EMBED_TOTAL - len(title) - len(noted) - essential
    description = cut(description, max(0, min(MAX_EMBED_DESCRIPTION, room)))
    fixed = len(title.strip()) + len(description.strip()) + len(noted.strip())
    kept, dropped = _fields_within(fields, MAX_EMBED_TOTAL - fixed)
    if dropped:
        footer = noted
    embed = discord.Embed(title=title or None, description=description or None, colour=colour)
    for f in kept:
        embed.add_field(name=f.name, value=f.value, inline=False)
    if footer:
        embed.set_footer(text=footer)
    return embed


# ------------------------------------------------------------------------------------------
# replies


def _describe_estimate(report: Report, changes: list[str]) -> str:
    lines = []
    if changes:
        lines.append("**What if:** " + _md(", ".join(changes)))
    lines.append(f"*{_md(report.subtitle)}*")
    lines.append(f"**{_md(report.headline)}**")
    lines.append(f"*Framework:* {_md(FRAMEWORK_LABELS[report.request.framework])}")
    if report.cost_line:
        lines.append(_md(report.cost_line))
    if report.price_line:
        lines.append(f"*Prices:* {_md(report.price_line)}")
    lines += [f"*Note:* {_md(n)}" for n in report.notes]
    return "\n".join(lines)


def estimate_embed(
    report: Report, changes: list[str] | None = None, footer: str | None = None
) -> discord.Embed:
    """One estimate as one embed."""
    fields = [
        _Field("Memory per GPU", code_block([report.bar(32), *report.legend()]), 0),
    ]
    if report.cards.rows:
        fields.append(_Field("Cards", code_block(report.cards.render().splitlines(),
                                                  more="more cards"), 1))
    if report.what_if.rows:
        fields.append(_Field("What if", code_block(report.what_if.render().splitlines()), 3))
    for i, chunk in enumerate(_line_chunks([f"⚠️ {_md(w)}" for w in report.warnings])):
        fields.append(_Field("Warnings" if i == 0 else "Warnings (cont.)", chunk, 2 if i == 0
                             else 4))
    for i, chunk in enumerate(_line_chunks([f"• {_md(a)}" for a in report.assumptions])):
        fields.append(_Field("Assumptions" if i == 0 else "Assumptions (cont.)", chunk, 5))
    return _assemble(
        report.title,
        _describe_estimate(report, list(changes or [])),
        band_colour(report.band),
        fields,
        footer,
    )


def text_embed(
    title: str,
    text: str,
    footer: str | None = None,
    extra: list[tuple[str, str]] | None = None,
) -> discord.Embed:
    """Monospace ``text`` (help, listings) in code blocks over the description and as many
    fields as it needs; past the message total it ends in ``… N more lines``."""
    extra_fields = [_Field(n, v, 0) for n, v in (extra or [])]
    budget = (
        MAX_EMBED_TOTAL - len(title) - len(footer or "") - len(_TRUNCATED_NOTE) - 3
        - sum(len(f.name) + len(f.value) for f in extra_fields)
    )
    rest = text.rstrip().splitlines()
    blocks: list[str] = []
    slots = MAX_EMBED_FIELDS - len(extra_fields) + 1  # +1: the description
    while rest and len(blocks) < slots:
        limit = MAX_EMBED_DESCRIPTION if not blocks else MAX_FIELD_VALUE
        room = min(limit, budget - (1 if blocks else 0))  # a field's name is one character
        last = len(blocks) == slots - 1
        block, taken = _take_lines(rest, room, final=last)
        if not taken:
            if blocks:  # no room left: mark the last block instead
                blocks[-1] = _with_more(blocks[-1], len(rest))
            break
        blocks.append(block)
        budget -= len(block) + (1 if len(blocks) > 1 else 0)
        rest = rest[taken:]
    description = blocks[0] if blocks else ""
    fields = [_Field("\u200b", block, 1) for block in blocks[1:]]
    return _assemble(title, description, INFO_COLOUR, [*fields, *extra_fields], footer)


def _take_lines(lines: list[str], room: int, final: bool) -> tuple[str, int]:
    """A code block of the first lines that fit ``room`` characters (when ``final`` or
    when it cannot hold them all, with a ``… N more lines`` row); how many it took."""
    if room < _FENCE_COST + 20:
        return "", 0
    for taken in range(len(lines), 0, -1):
        body = lines[:taken]
        if final and taken < len(lines):
            body = [*body, f"… {len(lines) - taken} more lines"]
        block = CODE + "\n" + "\n".join(body) + CODE
        if len(block) <= room:
            return block, taken
    return code_block([lines[0]], limit=room), 1


def _with_more(block: str, more: int) -> str:
    """A code block whose last row becomes ``… N more lines`` (N counts that row too)."""
    body = block[len(CODE) + 1 : -len(CODE)].split("\n")
    body = [*body[:-1], f"… {more + 1} more lines"]
    return CODE + "\n" + "\n".join(body) + CODE


def help_embed(command: str = "/ftcost", help_text: str | None = None) -> discord.Embed:
    how = (
        f"Put the query in `{command} query:` or use the options (`model`, `gpu`, `method`, "
        "`tokens`, `seq`, `epochs`); they combine with the query.\n"
        "The buttons under an estimate switch the method, double the sequence length or "
        "pick another card; the answer comes in the estimate's thread. In that thread, "
        f"`{command} what if 8k seq` (or a message mentioning me) changes the last estimate.\n"
        f"`{command} models` and `{command} gpus` list the catalog."
    )
    return text_embed("ftcost help", help_text or QUERY_HELP, extra=[("On Discord", how)])


QUERY_ERROR_TITLE: Final = "Can't read that query"
QUERY_ERROR_FOOTER: Final = "/ftcost-help shows the query language."


def error_embed(reply: Reply, query: str | None = None) -> discord.Embed:
    """An error, for the asker only. A bad query (an error without a title): the parser's
    message (which names the bad word, the nearest known words and an example) under
    :data:`QUERY_ERROR_TITLE`, with where the query language is explained. An error
    about something else is titled by it (``Channel settings``, ``Training config``)
    and points to no query language. The text is :func:`reply_markdown`'s."""
    fields = []
    if reply.suggestions:
        fields.append(_Field("Did you mean", ", ".join(
            f"`{s.replace('`', '')}`" for s in reply.suggestions), 0))
    if query:
        fields.append(_Field("You asked", escape_user_text(cut(query, 900)), 1))
    return _assemble(
        reply.title or QUERY_ERROR_TITLE,
        reply_markdown(reply.text),
        ERROR_COLOUR,
        fields,
        None if reply.title else QUERY_ERROR_FOOTER,
    )


def embeds_for(
    reply: Reply, *, query: str | None = None, footer: str | None = None,
    command: str = "/ftcost",
) -> list[discord.Embed]:
    """The embeds of any reply (always one today; a list so callers need not care)."""
    if reply.kind is ReplyKind.ESTIMATE:
        assert reply.report is not None
        return [estimate_embed(reply.report, reply.changes, footer)]
    if reply.kind is ReplyKind.ERROR:
        return [error_embed(reply, query)]
    if reply.kind is ReplyKind.HELP:
        return [help_embed(command, reply.text or None)]
    if reply.kind is ReplyKind.SETTINGS:
        return [notice_embed(reply.text, INFO_COLOUR)]
    if reply.kind is ReplyKind.PRICES:
        price = reply.prices
        if price is not None and price.view is not None:
            return [prices_embed(price.view, price.subscription)]
        return [notice_embed(reply.text, ERROR_COLOUR if price is not None
                             and price.kind.value == "error" else INFO_COLOUR)]
    return [text_embed(reply.title or reply.kind.value.title(), reply.text)]


def chart_embed(title: str, filename: str, footer: str | None = None) -> discord.Embed:
    """The memory chart: the attached PNG (``attachment://<filename>``) as the embed's
    image, with a one-line explanation of what the bars and lines are."""
    embed = discord.Embed(
        title=cut(title, MAX_EMBED_TITLE),
        description=(
            "Memory to train on one GPU, by method and component; dashed lines: the most "
            "one card holds for training."
        ),
        colour=INFO_COLOUR,
    )
    embed.set_image(url=f"attachment://{filename}")
    if footer:
        embed.set_footer(text=cut(footer, _MAX_OWN_FOOTER))
    return embed


def chart_failed_embed(status: int | None, code: int | None) -> discord.Embed:
    """For the asker only: the chart could not be attached, why, and what to do."""
    if status == 403 or code == 50013:
        why = "I need the Attach Files and Embed Links permissions in this channel."
    elif status == 413:
        why = "the picture was over Discord's upload limit."
    else:
        why = f"Discord answered {status or 'with an error'}; please try again."
    return notice_embed(f"I couldn't attach the chart: {why}")


def notice_embed(text: str, colour: int = ERROR_COLOUR) -> discord.Embed:
    """A short notice (a settings or price command's answer, a click on an estimate the
    bot no longer knows, ...). It may carry remote or user text (a card a user named, a
    Hub error), so it is shown as :func:`reply_markdown` shows a reply's text: the bot's
    code spans kept, no other Markdown, mention or masked link."""
    return discord.Embed(description=cut(reply_markdown(text), MAX_EMBED_DESCRIPTION),
                         colour=colour)
