"""A small pixel canvas over matplotlib (Agg): measured text, boxes, wrapped rich text.

Coordinates are CSS-like pixels: ``x`` right, ``y`` down, one unit a pixel at 100% zoom
(the PNG is drawn at :data:`SCALE` device pixels per unit). Drawing is recorded first and
painted by :meth:`Canvas.save` once the height is known, so a painter lays out top to
bottom and never needs to know the height in advance.

Fonts are DejaVu Sans and DejaVu Sans Mono, which matplotlib ships, so every machine
draws the same picture.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import RendererAgg
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.patches import Circle, FancyBboxPatch
from PIL import Image

from docs.tools.markup import Run, Style

SCALE = 1.0
"""Device pixels per layout pixel."""
_DPI = 72.0 * SCALE
"""At 72 dpi a point is a pixel: font sizes below are in layout pixels."""

PALETTE = 256
"""Colours in a saved PNG."""

SANS = "DejaVu Sans"
MONO = "DejaVu Sans Mono"


@dataclass(frozen=True, slots=True)
class Font:
    size: float
    family: str = SANS
    bold: bool = False
    italic: bool = False

    def prop(self) -> FontProperties:
        return _prop(self)


@lru_cache(maxsize=64)
def _prop(font: Font) -> FontProperties:
    return FontProperties(family=font.family, size=font.size,
                          weight="bold" if font.bold else "normal",
                          style="italic" if font.italic else "normal")


_MEASURER = RendererAgg(10, 10, _DPI)


@lru_cache(maxsize=20000)
def text_width(text: str, font: Font) -> float:
    """Advance width of ``text`` in layout pixels (spaces counted)."""
    if not text:
        return 0.0
    # Agg trims trailing blanks: measure them through a bracketing character
    width, _h, _d = _MEASURER.get_text_width_height_descent("|" + text + "|", font.prop(),
                                                            ismath=False)
    bar, _h, _d = _MEASURER.get_text_width_height_descent("||", font.prop(), ismath=False)
    return float(width - bar) / SCALE


@dataclass(frozen=True, slots=True)
class Box:
    x: float
    y: float
    w: float
    h: float
    fill: str
    edge: str | None = None
    radius: float = 0.0
    line: float = 1.0


@dataclass(frozen=True, slots=True)
class Text:
    x: float
    baseline: float
    text: str
    font: Font
    colour: str
    strike: bool = False
    underline: bool = False


@dataclass(frozen=True, slots=True)
class Disc:
    cx: float
    cy: float
    r: float
    fill: str


@dataclass(frozen=True, slots=True)
class Line:
    points: tuple[tuple[float, float], ...]
    colour: str
    width: float = 1.0


Op = Box | Text | Disc | Line


class Canvas:
    """Recorded drawing on a ``width``-pixel-wide page of colour ``background``."""

    def __init__(self, width: int, background: str) -> None:
        self.width = width
        self.background = background
        self.ops: list[Op] = []

    def box(self, x: float, y: float, w: float, h: float, fill: str,
            edge: str | None = None, radius: float = 0.0, line: float = 1.0) -> None:
        self.ops.append(Box(x, y, w, h, fill, edge, radius, line))

    def text(self, x: float, baseline: float, text: str, font: Font, colour: str,
             strike: bool = False, underline: bool = False) -> float:
        """Draw ``text`` on ``baseline``; its width."""
        self.ops.append(Text(x, baseline, text, font, colour, strike, underline))
        return text_width(text, font)

    def disc(self, cx: float, cy: float, r: float, fill: str) -> None:
        self.ops.append(Disc(cx, cy, r, fill))

    def line(self, points: Sequence[tuple[float, float]], colour: str, width: float = 1.0,
             ) -> None:
        self.ops.append(Line(tuple(points), colour, width))

    def chevron(self, x: float, cy: float, colour: str, size: float = 4.0) -> None:
        """A downward chevron (a select's arrow) centred at ``(x, cy)``."""
        self.line([(x - size, cy - size / 2), (x, cy + size / 2), (x + size, cy - size / 2)],
                  colour, 1.6)

    def save(self, path: Path, height: float) -> None:
        """Paint everything on a ``width`` x ``height`` page and write a PNG."""
        pixels = round(height)
        fig = Figure(figsize=(self.width * SCALE / _DPI, pixels * SCALE / _DPI), dpi=_DPI)
        fig.patch.set_facecolor(self.background)
        ax = fig.add_axes((0, 0, 1, 1))
        ax.set_xlim(0, self.width)
        ax.set_ylim(pixels, 0)
        ax.set_axis_off()
        for op in self.ops:
            _paint(ax, op)
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=_DPI, facecolor=self.background)
        # a palette of PALETTE colours keeps anti-aliased text smooth at a fraction of
        # the size of a full-colour PNG
        with Image.open(buffer) as image:
            paletted = image.convert("RGB").quantize(PALETTE, method=Image.Quantize.MEDIANCUT,
                                                     dither=Image.Dither.NONE)
            paletted.save(path, format="PNG", optimize=True)


def _paint(ax: Axes, op: Op) -> None:
    if isinstance(op, Box):
        style = f"round,pad=0,rounding_size={op.radius}" if op.radius else "square,pad=0"
        ax.add_patch(FancyBboxPatch((op.x, op.y), op.w, op.h, boxstyle=style,
                                    facecolor=op.fill, edgecolor=op.edge or "none",
                                    linewidth=op.line * 0.75 * SCALE if op.edge else 0))
    elif isinstance(op, Text):
        ax.text(op.x, op.baseline, op.text, fontproperties=op.font.prop(), color=op.colour,
                va="baseline", ha="left", parse_math=False)
        if op.strike or op.underline:
            w = text_width(op.text, op.font)
            y = op.baseline - op.font.size * 0.3 if op.strike else op.baseline + 2
            ax.plot([op.x, op.x + w], [y, y], color=op.colour, linewidth=0.75 * SCALE)
    elif isinstance(op, Disc):
        ax.add_patch(Circle((op.cx, op.cy), op.r, facecolor=op.fill, edgecolor="none"))
    else:
        xs, ys = zip(*op.points, strict=True)
        ax.plot(xs, ys, color=op.colour, linewidth=op.width * 0.75 * SCALE,
                solid_capstyle="round", solid_joinstyle="round")


# -- rich text ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Theme:
    """How a platform draws styled runs."""

    font: Font
    colour: str
    line_height: float
    code_font: Font
    code_colour: str
    code_fill: str
    code_edge: str | None
    mention_colour: str
    mention_fill: str
    link_colour: str
    emoji_colour: str = "#f2b31a"
    muted_colour: str | None = None


@dataclass(frozen=True, slots=True)
class _Token:
    text: str
    style: Style
    width: float
    space: float
    """The width of the blanks after the word."""


def font_for(style: Style, theme: Theme) -> Font:
    if style.code:
        return theme.code_font
    base = theme.font
    return Font(base.size, base.family, bold=style.bold or base.bold,
                italic=style.italic or base.italic)


CODE_PAD = 3.0
"""Room either side of a code span's text, inside its box."""

_WORDS = re.compile(r"\S+|\s+")


def _tokens(runs: Sequence[Run], theme: Theme, width: float) -> list[_Token]:
    tokens: list[_Token] = []
    for run in runs:
        font = font_for(run.style, theme)
        for piece in _WORDS.findall(run.text):
            if piece.isspace():
                if tokens:
                    last = tokens[-1]
                    tokens[-1] = _Token(last.text, last.style, last.width,
                                        last.space + text_width(piece, font))
                else:
                    tokens.append(_Token("", run.style, 0.0, text_width(piece, font)))
                continue
            for part in _hard_split(piece, font, width):
                tokens.append(_Token(part, run.style, text_width(part, font), 0.0))
    return tokens


def _hard_split(word: str, font: Font, width: float) -> list[str]:
    """A word wider than the line, in pieces that fit."""
    if text_width(word, font) <= width:
        return [word]
    parts: list[str] = []
    current = ""
    for char in word:
        if current and text_width(current + char, font) > width:
            parts.append(current)
            current = ""
        current += char
    return [*parts, current]


def wrap(runs: Sequence[Run], theme: Theme, width: float) -> list[list[_Token]]:
    """Greedy word wrap of one hard line into visual lines of at most ``width`` pixels."""
    lines: list[list[_Token]] = [[]]
    x = 0.0
    for token in _tokens(runs, theme, width):
        pads = 2 * CODE_PAD if token.style.code else 0.0  # counted per word: errs wide
        if lines[-1] and x + token.width + pads > width:
            lines.append([])
            x = 0.0
        lines[-1].append(token)
        x += token.width + token.space + pads
    return lines


def line_width(tokens: Sequence[_Token]) -> float:
    return sum(t.width + t.space for t in tokens) - (tokens[-1].space if tokens else 0.0)


def draw_line(canvas: Canvas, x: float, top: float, tokens: Sequence[_Token], theme: Theme,
              colour_for: Callable[[Style], str] | None = None) -> None:
    """Paint one visual line whose box starts at ``top``; code spans and mentions get
    their backgrounds."""
    baseline = top + theme.line_height * 0.5 + theme.font.size * 0.36
    i = 0
    while i < len(tokens):  # group equal styles so spans get one background
        j = i
        while j + 1 < len(tokens) and tokens[j + 1].style == tokens[i].style:
            j += 1
        group = tokens[i : j + 1]
        style = group[0].style
        font = font_for(style, theme)
        span = sum(t.width + t.space for t in group) - group[-1].space
        pad = CODE_PAD if style.code and span else 0.0
        if pad:
            canvas.box(x, top + 1, span + 2 * pad, theme.line_height - 2, theme.code_fill,
                       theme.code_edge, radius=3)
            x += pad
        if style.mention and span:
            canvas.box(x - 1, top + 1, span + 2, theme.line_height - 2, theme.mention_fill,
                       radius=3)
        cursor = x
        for token in group:
            colour = _colour(style, theme, colour_for)
            if token.text:
                canvas.text(cursor, baseline, token.text, font, colour, strike=style.strike,
                            underline=style.underline)
            cursor += token.width + token.space
        x = cursor + pad
        i = j + 1


def _colour(style: Style, theme: Theme, colour_for: Callable[[Style], str] | None) -> str:
    if style.emoji:
        return theme.emoji_colour
    if style.code:
        return theme.code_colour
    if style.mention:
        return theme.mention_colour
    if style.link:
        return theme.link_colour
    return colour_for(style) if colour_for else theme.colour


def draw_runs(canvas: Canvas, x: float, top: float, width: float,
              lines: Sequence[Sequence[Run]], theme: Theme) -> float:
    """Paint hard lines of runs wrapped to ``width``; the y below them."""
    y = top
    for runs in lines:
        for visual in wrap(runs, theme, width):
            draw_line(canvas, x, y, visual, theme)
            y += theme.line_height
    return y


def code_lines(text: str, font: Font, width: float) -> list[str]:
    """A code block's lines, wrapped at the column that fits ``width`` (monospace)."""
    cols = max(1, int(width // text_width("M", font)))
    out: list[str] = []
    for line in text.split("\n"):
        while len(line) > cols:
            out.append(line[:cols])
            line = line[cols:]
        out.append(line)
    return out
