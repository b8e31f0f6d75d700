"""Slack ``mrkdwn`` and Discord Markdown, read into styled runs for the pictures.

Only what the bot's messages use is read, the way each client shows it:

* Slack (https://api.slack.com/reference/surfaces/formatting): ``*bold*``, ``_italic_``,
  ``~strike~``, `` `code` ``, ```` ```code block``` ````, ``<@U123>`` mentions,
  ``<url|label>`` links, ``:warning:`` and the entities ``&amp;`` ``&lt;`` ``&gt;``;
* Discord (https://support.discord.com/hc/en-us/articles/210298617): ``**bold**``,
  ``*italic*`` / ``_italic_``, ``__underline__``, ``~~strike~~``, `` `code` ``, fenced
  code blocks and backslash escapes.

A text becomes a list of :class:`Paragraph` (lines of :class:`Run`) and
:class:`CodeBlock` pieces; the painters lay them out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

EMOJI_CHARS = "⚠"
"""Characters drawn as a colour emoji (the Unicode variation selector is dropped)."""
_SHORTCODES = {"warning": "⚠", "white_check_mark": "✔", "x": "✖"}


@dataclass(frozen=True, slots=True)
class Style:
    bold: bool = False
    italic: bool = False
    strike: bool = False
    underline: bool = False
    code: bool = False
    mention: bool = False
    link: bool = False
    emoji: bool = False


PLAIN = Style()


@dataclass(frozen=True, slots=True)
class Run:
    text: str
    style: Style = PLAIN


@dataclass(frozen=True, slots=True)
class Paragraph:
    lines: tuple[tuple[Run, ...], ...]
    """Hard lines (the text's newlines); the painter wraps each to the width."""


@dataclass(frozen=True, slots=True)
class CodeBlock:
    text: str


Piece = Paragraph | CodeBlock


def _emoji_runs(text: str, style: Style) -> list[Run]:
    """``text`` split so emoji characters get their own runs."""
    text = text.replace("\ufe0f", "")
    runs: list[Run] = []
    for part in re.split(f"([{EMOJI_CHARS}])", text):
        if part:
            runs.append(Run(part, replace(style, emoji=True) if part in EMOJI_CHARS else style))
    return runs




def _inline(text: str, style: Style, pattern: re.Pattern[str],
            handlers: dict[str, Callable[[re.Match[str], Style], list[Run]]],
            finish: Callable[[str], str]) -> list[Run]:
    """Runs of ``text``: the leftmost match of ``pattern`` is handled by the handler of
    its named group; the text around matches is plain (``style``)."""
    runs: list[Run] = []
    pos = 0
    for match in pattern.finditer(text):
        if match.start() > pos:
            runs += _emoji_runs(finish(text[pos : match.start()]), style)
        name = match.lastgroup or ""
        runs += handlers[name](match, style)
        pos = match.end()
    if pos < len(text):
        runs += _emoji_runs(finish(text[pos:]), style)
    return [r for r in runs if r.text]


def _split_code_blocks(text: str, strip_language: bool) -> list[tuple[bool, str]]:
    """``(is_code, text)`` pieces around ```` ``` ```` fences."""
    parts = text.split("```")
    if len(parts) % 2 == 0:  # an unclosed fence is plain text
        parts = [*parts[:-2], parts[-2] + "```" + parts[-1]]
    out: list[tuple[bool, str]] = []
    for i, part in enumerate(parts):
        if i % 2:
            if strip_language:
                part = re.sub(r"\A\w*\n", "", part)
            out.append((True, part.rstrip("\n")))
        else:
            if i > 0:
                part = part.removeprefix("\n")
            if i < len(parts) - 1:
                part = part.removesuffix("\n")
            if part:
                out.append((False, part))
    return out


# -- Slack --------------------------------------------------------------------------------

_SLACK_OPEN = r"(?<![^\s(\[{\"'])"
_SLACK_CLOSE = r"(?![^\s)\]}.,;:!?\"'])"
_SLACK = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<mention><@(?P<uid>[A-Z0-9]+)(?:\|(?P<uname>[^>]*))?>)"
    r"|(?P<special><!(?P<sname>[a-z]+)(?:\|[^>]*)?>)"
    r"|(?P<link><(?P<url>[a-z]+://[^|>]+)(?:\|(?P<label>[^>]+))?>)"
    r"|(?P<emoji>:(?P<short>[a-z_]+):)"
    rf"|(?P<bold>{_SLACK_OPEN}\*(?=\S)(?P<b>[^*\n]+?)(?<=\S)\*{_SLACK_CLOSE})"
    rf"|(?P<italic>{_SLACK_OPEN}_(?=\S)(?P<i>[^_\n]+?)(?<=\S)_{_SLACK_CLOSE})"
    rf"|(?P<strike>{_SLACK_OPEN}~(?=\S)(?P<s>[^~\n]+?)(?<=\S)~{_SLACK_CLOSE})"
)


def _slack_entities(text: str) -> str:
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def slack_inline(text: str, users: dict[str, str] | None = None,
                 style: Style = PLAIN) -> list[Run]:
    """The runs of one line of Slack ``mrkdwn``; ``users`` names the mentioned ids."""
    names = users or {}

    def nested(group: str, extra: dict[str, bool]) -> Callable[[re.Match[str], Style], list[Run]]:
        return lambda m, s: slack_inline(m[group], names, replace(s, **extra))

    handlers: dict[str, Callable[[re.Match[str], Style], list[Run]]] = {
        "code": lambda m, s: [Run(_slack_entities(m["code"][1:-1]), replace(s, code=True))],
        "mention": lambda m, s: [Run("@" + (m["uname"] or names.get(m["uid"], m["uid"])),
                                     replace(s, mention=True))],
        "special": lambda m, s: [Run("@" + m["sname"], replace(s, mention=True))],
        "link": lambda m, s: [Run(_slack_entities(m["label"] or m["url"]),
                                  replace(s, link=True))],
        "emoji": lambda m, s: (_emoji_runs(_SHORTCODES[m["short"]], s)
                               if m["short"] in _SHORTCODES else [Run(m["emoji"], s)]),
        "bold": nested("b", {"bold": True}),
        "italic": nested("i", {"italic": True}),
        "strike": nested("s", {"strike": True}),
    }
    return _inline(text, style, _SLACK, handlers, _slack_entities)


def slack_pieces(text: str, users: dict[str, str] | None = None) -> list[Piece]:
    """A Slack ``mrkdwn`` text object as paragraphs and code blocks."""
    pieces: list[Piece] = []
    for is_code, part in _split_code_blocks(text, strip_language=False):
        if is_code:
            pieces.append(CodeBlock(_slack_entities(part)))
        else:
            lines = tuple(tuple(slack_inline(line, users)) for line in part.split("\n"))
            pieces.append(Paragraph(lines))
    return pieces


# -- Discord ------------------------------------------------------------------------------

_ESCAPED = re.compile(r"\\([^\w\s])")
_PRIVATE = 0xE000
"""Escaped characters are parked in the Private Use Area while Markdown is read."""

_DISCORD = re.compile(
    r"(?P<code>`[^`]+`)"
    r"|(?P<bold>\*\*(?=\S)(?P<b>.+?)(?<=\S)\*\*(?!\*))"
    r"|(?P<under>__(?=\S)(?P<u>.+?)(?<=\S)__(?!_))"
    r"|(?P<italic>\*(?=[^\s*])(?P<i>.+?)(?<=[^\s*])\*(?!\*))"
    r"|(?P<uitalic>(?<!\w)_(?=\S)(?P<ui>.+?)(?<=\S)_(?!\w))"
    r"|(?P<strike>~~(?=\S)(?P<s>.+?)(?<=\S)~~)"
)


def _park(text: str) -> str:
    return _ESCAPED.sub(lambda m: chr(_PRIVATE + ord(m[1])), text)


def _unpark(text: str) -> str:
    return "".join(
        chr(ord(c) - _PRIVATE) if _PRIVATE <= ord(c) < _PRIVATE + 128 else c for c in text
    )


def _discord_inline(text: str, style: Style) -> list[Run]:
    def nested(group: str, extra: dict[str, bool]) -> Callable[[re.Match[str], Style], list[Run]]:
        return lambda m, s: _discord_inline(m[group], replace(s, **extra))

    handlers: dict[str, Callable[[re.Match[str], Style], list[Run]]] = {
        "code": lambda m, s: [Run(_unpark(m["code"][1:-1]), replace(s, code=True))],
        "bold": nested("b", {"bold": True}),
        "under": nested("u", {"underline": True}),
        "italic": nested("i", {"italic": True}),
        "uitalic": nested("ui", {"italic": True}),
        "strike": nested("s", {"strike": True}),
    }
    return _inline(text, style, _DISCORD, handlers, _unpark)


def discord_inline(text: str, style: Style = PLAIN) -> list[Run]:
    """The runs of one line of Discord Markdown (backslash escapes honoured)."""
    return _discord_inline(_park(text), style)


def discord_pieces(text: str) -> list[Piece]:
    """A Discord embed description or field value as paragraphs and code blocks."""
    pieces: list[Piece] = []
    for is_code, part in _split_code_blocks(text, strip_language=True):
        if is_code:
            pieces.append(CodeBlock(part))
        else:
            lines = tuple(tuple(discord_inline(line)) for line in part.split("\n"))
            pieces.append(Paragraph(lines))
    return pieces
