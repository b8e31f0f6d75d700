"""A Discord message, drawn from its embeds and components as Discord's desktop client
shows them in the dark theme.

The slash-command line (``ada used /ftcost``), the app's avatar, name, ``APP`` badge and
time, then each embed (https://discord.com/developers/docs/resources/message#embed-object):
the coloured left bar, title, description, fields (inline ones up to three side by
side), footer; then the component rows (buttons and selects,
https://discord.com/developers/docs/interactions/message-components). Colours and sizes
are Discord's (#313338 chat, #2b2d31 embed, #1e1f22 code, 14 px text); the face is
DejaVu Sans.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docs.tools.canvas import MONO, Canvas, Font, Theme, code_lines, draw_runs, text_width
from docs.tools.markup import CodeBlock, Paragraph, Run, discord_inline, discord_pieces

WIDTH = 720
CONTENT_X = 72.0
EMBED_W = 560.0
"""Discord caps an embed at 520 px of a wider font; this fits its 72-column tables."""
PAD_L, PAD_R = 16.0, 16.0

CHAT = "#313338"
EMBED = "#2b2d31"
CODE_BG = "#1e1f22"
TEXT = "#dbdee1"
HEADING = "#f2f3f5"
MUTED = "#949ba4"
BLURPLE = "#5865f2"

DESCRIPTION = Theme(
    font=Font(13.5), colour=TEXT, line_height=19,
    code_font=Font(11.5, MONO), code_colour=TEXT, code_fill=CODE_BG, code_edge=None,
    mention_colour="#c9cdfb", mention_fill="#3c4270", link_colour="#00a8fc",
)
FIELD_NAME = Theme(
    font=Font(13.5, bold=True), colour=HEADING, line_height=19,
    code_font=Font(11.5, MONO), code_colour=TEXT, code_fill=CODE_BG, code_edge=None,
    mention_colour="#c9cdfb", mention_fill="#3c4270", link_colour="#00a8fc",
)
TITLE = Theme(
    font=Font(15, bold=True), colour=HEADING, line_height=21,
    code_font=Font(12, MONO), code_colour=TEXT, code_fill=CODE_BG, code_edge=None,
    mention_colour="#c9cdfb", mention_fill="#3c4270", link_colour="#00a8fc",
)
PRE_FONT = Font(11, MONO)
PRE_LINE = 16.0

BUTTON_STYLES = {1: (BLURPLE, "#ffffff"), 2: ("#4e5058", "#ffffff"), 3: ("#248046", "#ffffff"),
                 4: ("#da373c", "#ffffff"), 5: ("#4e5058", "#ffffff")}


def _hex(colour: int | None) -> str:
    return f"#{colour:06x}" if colour is not None else "#1e1f22"


def field_rows(fields: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Fields in the rows Discord shows them in: consecutive inline fields share a row,
    three at most; a field that is not inline has a row of its own."""
    rows: list[list[dict[str, Any]]] = []
    for field in fields:
        if field.get("inline") and rows and rows[-1][-1].get("inline") and len(rows[-1]) < 3:
            rows[-1].append(field)
        else:
            rows.append([field])
    return rows


class DiscordPainter:
    def __init__(self) -> None:
        self.canvas = Canvas(WIDTH, CHAT)
        self.y = 16.0

    # -- chrome ----------------------------------------------------------------------------
    def command_line(self, user: str, command: str) -> None:
        """The reply line above an interaction's answer: ``ada used /ftcost``."""
        c = self.canvas
        top = self.y
        c.line([(36, top + 18), (36, top + 11), (40, top + 8), (62, top + 8)], "#4e5058", 2)
        c.disc(74, top + 8, 8, "#c27c0e")
        c.text(70, top + 12, user[:1].upper(), Font(9, bold=True), "#ffffff")
        x = 88 + c.text(88, top + 12.5, user, Font(12.5, bold=True), "#c9cdfb")
        x += c.text(x, top + 12.5, " used ", Font(12.5), MUTED)
        c.text(x, top + 12.5, command, Font(12.5), "#00a8fc")
        self.y = top + 22

    def author(self, name: str, time: str) -> None:
        c = self.canvas
        top = self.y
        c.disc(36, top + 20, 20, BLURPLE)
        c.text(25, top + 26, "ft", Font(15, bold=True), "#ffffff")
        x = CONTENT_X + c.text(CONTENT_X, top + 16, name, Font(15, bold=True), HEADING) + 6
        badge = text_width("APP", Font(9.5, bold=True)) + 8
        c.box(x, top + 3.5, badge, 15, BLURPLE, radius=3)
        c.text(x + 4, top + 15, "APP", Font(9.5, bold=True), "#ffffff")
        c.text(x + badge + 7, top + 15.5, time, Font(11.5), MUTED)
        self.y = top + 26

    def ephemeral_note(self) -> None:
        c = self.canvas
        top = self.y + 2
        c.disc(CONTENT_X + 7, top + 8, 6, MUTED)
        c.disc(CONTENT_X + 7, top + 8, 2.5, CHAT)
        x = CONTENT_X + 18 + c.text(CONTENT_X + 18, top + 12, "Only you can see this · ",
                                    Font(11.5), MUTED)
        c.text(x, top + 12, "Dismiss message", Font(11.5), "#00a8fc", underline=False)
        self.y = top + 20

    # -- embeds ----------------------------------------------------------------------------
    def embed(self, embed: dict[str, Any]) -> None:
        c = self.canvas
        top = self.y + 2
        ops_before = len(c.ops)
        x, width = CONTENT_X + 4 + PAD_L, EMBED_W - 4 - PAD_L - PAD_R
        self.y = top + 8
        if embed.get("title"):
            self.y = draw_runs(c, x, self.y + 2, width, [discord_inline(embed["title"])], TITLE)
        if embed.get("description"):
            self.y += 4
            self._pieces(discord_pieces(embed["description"]), x, width)
        self._fields(embed.get("fields", []), x, width)
        footer = (embed.get("footer") or {}).get("text")
        if footer:
            self.y += 8
            self.y = draw_runs(c, x, self.y, width, [[Run(line)] for line in footer.split("\n")],
                               Theme(Font(11.5), TEXT, 16, PRE_FONT, TEXT, CODE_BG, None, TEXT,
                                     CODE_BG, TEXT))
        self.y += 14
        height = self.y - top
        # the embed's ground and bar go under what was drawn on them
        c.box(CONTENT_X, top, EMBED_W, height, EMBED, radius=4)
        c.box(CONTENT_X, top, 4, height, _hex(embed.get("color")), radius=2)
        c.ops.insert(ops_before, c.ops.pop())
        c.ops.insert(ops_before, c.ops.pop())
        self.y += 2

    def _pieces(self, pieces: list[Paragraph | CodeBlock], x: float, width: float,
                theme: Theme = DESCRIPTION) -> None:
        for piece in pieces:
            if isinstance(piece, CodeBlock):
                self._pre(piece.text, x, width)
            else:
                self.y = draw_runs(self.canvas, x, self.y, width, piece.lines, theme)

    def _pre(self, text: str, x: float, width: float) -> None:
        lines = code_lines(text, PRE_FONT, width - 16)
        top = self.y + 3
        height = len(lines) * PRE_LINE + 14
        self.canvas.box(x, top, width, height, CODE_BG, "#1a1b1e", radius=4)
        for i, line in enumerate(lines):
            self.canvas.text(x + 8, top + 7 + i * PRE_LINE + 12, line, PRE_FONT, TEXT)
        self.y = top + height + 3

    def _fields(self, fields: list[dict[str, Any]], x: float, width: float) -> None:
        for row in field_rows(fields):
            top = self.y + 8
            column = (width - 8 * (len(row) - 1)) / len(row)
            bottom = top
            for i, field in enumerate(row):
                self.y = top
                fx = x + i * (column + 8)
                self.y = draw_runs(self.canvas, fx, self.y, column,
                                   [discord_inline(field.get("name", ""))], FIELD_NAME) + 1
                self._pieces(discord_pieces(field.get("value", "")), fx, column)
                bottom = max(bottom, self.y)
            self.y = bottom

    # -- components ------------------------------------------------------------------------
    def components(self, rows: list[dict[str, Any]]) -> None:
        for row in rows:
            x, top = CONTENT_X, self.y + 8
            for item in row.get("components", []):
                if item.get("type") == 2:
                    x += self._button(item, x, top) + 8
                else:
                    self._select(item, x, top)
            self.y = top + (40 if any(i.get("type") != 2 for i in row.get("components", []))
                            else 32)

    def _button(self, item: dict[str, Any], x: float, top: float) -> float:
        fill, ink = BUTTON_STYLES.get(int(item.get("style", 2)), BUTTON_STYLES[2])
        label = str(item.get("label", ""))
        width = text_width(label, Font(13)) + 32
        self.canvas.box(x, top, width, 32, fill, radius=3)
        self.canvas.text(x + 16, top + 20.5, label, Font(13), ink)
        return width

    def _select(self, item: dict[str, Any], x: float, top: float) -> None:
        chosen = [o for o in item.get("options", []) if o.get("default")]
        label = str(chosen[0]["label"]) if chosen else str(item.get("placeholder", ""))
        self.canvas.box(x, top, 400, 40, CODE_BG, "#1a1b1e", radius=4)
        self.canvas.text(x + 12, top + 24.5, label, Font(13.5), TEXT if chosen else MUTED)
        self.canvas.chevron(x + 400 - 20, top + 20, TEXT, 5)


def render(payload: dict[str, Any], path: Path, *, user: str, channel: str, time: str,
           command: str = "/ftcost", ephemeral: bool = False) -> None:
    """Draw ``payload`` (``{"embeds", "components"}``) as the answer to ``user``'s slash
    command in ``channel``, and save a PNG."""
    painter = DiscordPainter()
    c = painter.canvas
    c.text(16, 24, "#", Font(18), MUTED)
    c.text(34, 24, channel, Font(14.5, bold=True), HEADING)
    c.line([(0, 40.5), (WIDTH, 40.5)], "#26272b", 1.5)
    painter.y = 52
    painter.command_line(user, command)
    painter.author("ftcost", time)
    for embed in payload.get("embeds", []):
        painter.embed(embed)
    painter.components(payload.get("components", []))
    if ephemeral:
        painter.ephemeral_note()
    c.save(path, painter.y + 16)
