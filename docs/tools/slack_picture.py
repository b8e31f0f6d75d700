"""A Slack message, drawn from its Block Kit payload as Slack's desktop client shows it.

The light theme: a white message pane under the channel's header, the app's avatar,
name, ``APP`` badge and time, then the blocks (https://api.slack.com/reference/block-kit/
blocks): ``header`` (large bold), ``section`` (mrkdwn, with code blocks on a grey ground
and an optional accessory on the right), ``context`` (small grey elements side by side),
``divider`` and ``actions`` (buttons and selects). Colours and sizes are Slack's (Lato
15 px text, #1d1c1d ink, #e01e5a code spans); the face is DejaVu Sans.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from docs.tools.canvas import (
    MONO,
    Canvas,
    Font,
    Theme,
    code_lines,
    draw_runs,
    line_width,
    text_width,
    wrap,
)
from docs.tools.markup import CodeBlock, Paragraph, Run, slack_inline, slack_pieces

WIDTH = 860
GUTTER = 20
AVATAR = 36
CONTENT_X = float(GUTTER + AVATAR + 8)
CONTENT_W = WIDTH - CONTENT_X - 28

INK = "#1d1c1d"
MUTED = "#616061"
BORDER = "#dddddd"
APP_COLOUR = "#2b5ea7"

BODY = Theme(
    font=Font(14.5), colour=INK, line_height=22,
    code_font=Font(12, MONO), code_colour="#e01e5a", code_fill="#f6f6f6", code_edge=BORDER,
    mention_colour="#1264a3", mention_fill="#e8f5fa", link_colour="#1264a3",
)
CONTEXT = Theme(
    font=Font(12), colour=MUTED, line_height=18,
    code_font=Font(10.5, MONO), code_colour="#e01e5a", code_fill="#f6f6f6", code_edge=BORDER,
    mention_colour="#1264a3", mention_fill="#e8f5fa", link_colour="#1264a3",
)
PRE_FONT = Font(12, MONO)
PRE_LINE = 18.0


def _plain(obj: dict[str, Any]) -> str:
    return str(obj.get("text", ""))


def _text_object(obj: dict[str, Any], users: dict[str, str]) -> list[Paragraph | CodeBlock]:
    if obj.get("type") == "mrkdwn":
        return slack_pieces(_plain(obj), users)
    return [Paragraph(tuple((Run(line),) for line in _plain(obj).split("\n")))]


class SlackPainter:
    """Lays out one message top to bottom on a :class:`Canvas`."""

    def __init__(self, users: dict[str, str]) -> None:
        self.canvas = Canvas(WIDTH, "#ffffff")
        self.users = users
        self.y = 0.0

    # -- chrome ----------------------------------------------------------------------------
    def channel_header(self, title: str, subtitle: str) -> None:
        c = self.canvas
        c.box(0, 0, WIDTH, 49, "#ffffff")
        width = c.text(GUTTER, 30, title, Font(16, bold=True), INK)
        c.text(GUTTER + width + 10, 30, subtitle, Font(12.5), MUTED)
        c.line([(0, 49.5), (WIDTH, 49.5)], BORDER)
        self.y = 62

    def ephemeral_note(self) -> None:
        c = self.canvas
        c.disc(CONTENT_X + 6, self.y + 9, 5.5, "#868686")
        c.disc(CONTENT_X + 6, self.y + 9, 2.2, "#ffffff")
        c.text(CONTENT_X + 18, self.y + 13, "Only visible to you", Font(12), MUTED)
        self.y += 22

    def author(self, name: str, time: str) -> None:
        c = self.canvas
        top = self.y
        c.box(GUTTER, top + 2, AVATAR, AVATAR, APP_COLOUR, radius=6)
        c.text(GUTTER + 7, top + 26, "ft", Font(15, bold=True), "#ffffff")
        x = CONTENT_X + c.text(CONTENT_X, top + 15, name, Font(14.5, bold=True), INK) + 6
        badge = text_width("APP", Font(9.5, bold=True)) + 8
        c.box(x, top + 3, badge, 15, "#e8e8e8", radius=3)
        c.text(x + 4, top + 14.5, "APP", Font(9.5, bold=True), MUTED)
        c.text(x + badge + 7, top + 15, time, Font(11.5), MUTED)
        self.y = top + 22

    def user_message(self, name: str, time: str, text: str) -> None:
        """A person's plain message (what the bot answers below it)."""
        c = self.canvas
        top = self.y
        c.box(GUTTER, top + 2, AVATAR, AVATAR, "#e8912d", radius=6)
        c.text(GUTTER + 12, top + 26, name[:1].upper(), Font(16, bold=True), "#ffffff")
        x = CONTENT_X + c.text(CONTENT_X, top + 15, name, Font(14.5, bold=True), INK) + 7
        c.text(x, top + 15, time, Font(11.5), MUTED)
        self.y = draw_runs(c, CONTENT_X, top + 20, CONTENT_W, [slack_inline(text, self.users)],
                           BODY) + 12

    # -- blocks ----------------------------------------------------------------------------
    def blocks(self, blocks: list[dict[str, Any]]) -> None:
        for block in blocks:
            kind = block.get("type")
            if kind == "header":
                self._header(block)
            elif kind == "section":
                self._section(block)
            elif kind == "context":
                self._context(block)
            elif kind == "divider":
                self.canvas.line([(CONTENT_X, self.y + 8), (CONTENT_X + CONTENT_W, self.y + 8)],
                                 BORDER)
                self.y += 16
            elif kind == "actions":
                self._actions(block.get("elements", []))
            self.y += 4

    def _header(self, block: dict[str, Any]) -> None:
        self.y += 2
        theme = Theme(Font(18, bold=True), INK, 26, PRE_FONT, INK, "#fff", None, INK, "#fff",
                      INK)
        self.y = draw_runs(self.canvas, CONTENT_X, self.y, CONTENT_W,
                           [[Run(_plain(block["text"]))]], theme) + 2

    def _pieces(self, pieces: list[Paragraph | CodeBlock], x: float, width: float,
                theme: Theme) -> None:
        for piece in pieces:
            if isinstance(piece, CodeBlock):
                self._pre(piece.text, x, width)
            else:
                self.y = draw_runs(self.canvas, x, self.y, width, piece.lines, theme)

    def _pre(self, text: str, x: float, width: float) -> None:
        lines = code_lines(text, PRE_FONT, width - 18)
        height = len(lines) * PRE_LINE + 16
        top = self.y + 4
        self.canvas.box(x, top, width, height, "#f8f8f8", "#e0e0e0", radius=4)
        for i, line in enumerate(lines):
            self.canvas.text(x + 9, top + 8 + i * PRE_LINE + 13.5, line, PRE_FONT, INK)
        self.y = top + height + 4

    def _section(self, block: dict[str, Any]) -> None:
        accessory = block.get("accessory")
        width = CONTENT_W - (200 if accessory else 0)
        top = self.y
        if "text" in block:
            self._pieces(_text_object(block["text"], self.users), CONTENT_X, width, BODY)
        for i, field in enumerate(block.get("fields", [])):  # two columns
            self.y = top if i % 2 else self.y
            half = (width - 16) / 2
            self._pieces(_text_object(field, self.users),
                         CONTENT_X + (half + 16) * (i % 2), half, BODY)
        if accessory:
            bottom = self._element(accessory, CONTENT_X + CONTENT_W - 184, top + 2, 184)
            self.y = max(self.y, bottom)

    def _context(self, block: dict[str, Any]) -> None:
        """Elements side by side; one that does not fit the row, or spans lines, takes
        rows of its own at full width."""
        x, row_top, row_bottom = CONTENT_X, self.y + 2, self.y + 2
        for element in block.get("elements", []):
            if element.get("type") == "image":
                continue
            lines = [tuple(slack_inline(line, self.users)) for line in
                     _plain(element).split("\n")]
            natural = _runs_width(lines[0], CONTEXT) if len(lines) == 1 else None
            if natural is not None and x + natural <= CONTENT_X + CONTENT_W:
                bottom = draw_runs(self.canvas, x, row_top, natural + 1, lines, CONTEXT)
                row_bottom = max(row_bottom, bottom)
                x += natural + 14
                continue
            row_top = row_bottom = draw_runs(self.canvas, CONTENT_X, row_bottom, CONTENT_W,
                                             lines, CONTEXT)
            x = CONTENT_X
        self.y = row_bottom + 2

    def _actions(self, elements: list[dict[str, Any]]) -> None:
        x, top = CONTENT_X, self.y + 4
        for element in elements:
            width = self._element_width(element)
            if x + width > CONTENT_X + CONTENT_W and x > CONTENT_X:
                x, top = CONTENT_X, top + 40
            self._element(element, x, top, width)
            x += width + 8
        self.y = top + 36

    def _element_width(self, element: dict[str, Any]) -> float:
        label = _element_label(element)
        if element.get("type") == "button":
            return text_width(label, Font(13, bold=True)) + 26
        return max(150.0, text_width(label, Font(13.5)) + 44)

    def _element(self, element: dict[str, Any], x: float, top: float, width: float) -> float:
        """A button (or a select) at ``(x, top)``; its bottom."""
        c = self.canvas
        label = _element_label(element)
        if element.get("type") == "button":
            primary = element.get("style") == "primary"
            c.box(x, top, width, 30, "#007a5a" if primary else "#ffffff",
                  None if primary else "#b9b9b9", radius=4)
            c.text(x + 13, top + 19.5, label, Font(13, bold=True),
                   "#ffffff" if primary else INK)
        else:
            chosen = "initial_option" in element
            c.box(x, top, width, 30, "#ffffff", "#b9b9b9", radius=4)
            c.text(x + 12, top + 19.5, label, Font(13.5), INK if chosen else "#8a8a8a")
            c.chevron(x + width - 16, top + 15, INK)
        return top + 30


def _element_label(element: dict[str, Any]) -> str:
    if element.get("type") == "button":
        return _plain(element.get("text", {}))
    chosen = element.get("initial_option")
    if chosen:
        return _plain(chosen.get("text", {}))
    return _plain(element.get("placeholder", {}))


def _runs_width(runs: tuple[Run, ...], theme: Theme) -> float:
    return line_width(wrap(runs, theme, 10_000)[0])


def render(payload: dict[str, Any], path: Path, *, users: dict[str, str], channel: str,
           time: str, ephemeral: bool = False, reply_to: tuple[str, str] | None = None,
           ) -> None:
    """Draw ``payload`` (``{"text", "blocks"}``) as posted in ``channel`` and save a PNG;
    ``reply_to`` (a name and a text) pictures it in a thread, under that person's reply."""
    painter = SlackPainter(users)
    if reply_to is not None:
        painter.channel_header("Thread", f"# {channel}")
        painter.user_message(reply_to[0], time, reply_to[1])
    else:
        painter.channel_header(f"# {channel}", "")
    if ephemeral:
        painter.ephemeral_note()
    painter.author("ftcost", time)
    painter.blocks(payload.get("blocks", []))
    painter.canvas.save(path, painter.y + 18)

