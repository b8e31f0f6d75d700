"""The memory picture: a PNG that makes the full-vs-LoRA-vs-QLoRA gap visible.

Two steps, kept apart so the numbers can be checked without drawing anything:

* :func:`adapters.chart_data.chart_data` (pure, no matplotlib): what the chart shows,
  computed from the estimate (see that module for what the bars and lines measure);
* :func:`build_figure` / :func:`render_png` here: matplotlib (the Agg canvas, imported
  only when a chart is drawn, so the terminal front end and the bot start without it).

Looks: an opaque white card (readable on Slack's and Discord's dark and light themes),
the components in :data:`adapters.report.COMPONENT_COLOURS` (Okabe-Ito, colour-blind
safe), every label placed so that no two texts overlap.
"""

from __future__ import annotations

import asyncio
import io
import threading
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

from adapters.chart_data import (
    CHART_FILENAME,
    LINE_HEADROOM,
    MAX_PICKS,
    CardLine,
    ChartData,
    MethodBar,
    Pick,
    card_limit_gb,
    chart_data,
    one_card_memory,
)
from adapters.report import (
    COMPONENT_COLOURS,
    component_labels,
    fmt_gb,
    fmt_hours,
    fmt_money,
)
from engine import Request
from engine.constants import USABLE_FRACTION
from engine.memory import COMPONENTS
from engine.specs import Catalog

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

DPI = 100
HEIGHT_IN = 9.0
WIDE_IN = 16.0
"""With the cost and wall-clock panel (1600 x 900 px)."""
NARROW_IN = 10.5
"""Memory panel only (1050 x 900 px)."""

BACKGROUND = "#FFFFFF"
INK = "#1A1A1A"
MUTED = "#555555"
GRID = "#E3E3E3"
FRAME = "#C8C8C8"
PICK_TOP = "#4D4D4D"
PICK_REST = "#ADADAD"


def chart_size(data: ChartData) -> tuple[int, int]:
    """Width and height of the PNG in pixels."""
    width = WIDE_IN if data.wide else NARROW_IN
    return round(width * DPI), round(HEIGHT_IN * DPI)


_RENDER_LOCK = threading.Lock()
"""One figure at a time: matplotlib's font and text caches are shared."""

_BAR_WIDTH = 0.62
_X_LEFT = -0.55
_BARS_RIGHT = 2.45
"""Right edge of the bar area in data units (bars at 0, 1, 2); the card-line labels sit
to its right, up to ``_GUTTER_RIGHT``."""
_GUTTER_RIGHT = 3.85

_FONT = {"title": 21, "subtitle": 13, "tick": 13, "plan": 12, "total": 13, "segment": 11,
         "line": 12, "legend": 12, "panel": 14, "value": 12, "foot": 11}
_MIN_FONT = 8


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where things go, in figure fractions."""

    memory: tuple[float, float, float, float]
    """left, bottom, width, height of the memory axes."""
    picks_left: float = 0.0
    """Left edge of the picks panel (its title); its axes follow."""
    picks_label_room: float = 0.115
    """Width left of the cost axes for the card labels."""
    title_x: float = 0.03


_WIDE = _Layout(memory=(0.06, 0.27, 0.54, 0.57), picks_left=0.645)
_NARROW = _Layout(memory=(0.09, 0.29, 0.885, 0.55))
_PANEL_TOP = 0.84
_PANEL_BOTTOM = 0.27


def _luminance(hex_colour: str) -> float:
    """Relative luminance (WCAG 2) of ``#RRGGBB``."""
    channels = [int(hex_colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def text_colour_on(hex_colour: str) -> str:
    """Black or white, whichever contrasts more with ``hex_colour`` (WCAG contrast)."""
    lum = _luminance(hex_colour)
    black = (lum + 0.05) / 0.05
    white = 1.05 / (lum + 0.05)
    return "#000000" if black >= white else "#FFFFFF"


def _px(points: float) -> float:
    return points * DPI / 72


def _segment_text(gb: float) -> str:
    return f"{gb:,.0f} GB" if gb >= 100 else f"{gb:.1f} GB"


def _memory_panel(fig: Figure, ax: Axes, data: ChartData) -> None:
    from matplotlib.patches import Rectangle

    ax.set_gid("memory")
    labels = component_labels(data.napkin)
    ax.set_facecolor(BACKGROUND)
    ax.set_xlim(_X_LEFT, _GUTTER_RIGHT)
    ax.set_ylim(0, data.y_top)
    fig_w, fig_h = fig.get_size_inches() * DPI
    pos = ax.get_position()
    axis_h_px = pos.height * fig_h
    px_per_gb = axis_h_px / data.y_top
    bar_px = _BAR_WIDTH * pos.width * fig_w / (_GUTTER_RIGHT - _X_LEFT)
    line_gbs = [ln.limit_gb for ln in data.lines]

    for x, bar in enumerate(data.bars):
        bottom = 0.0
        for key in COMPONENTS:
            gb = bar.components[key]
            colour = COMPONENT_COLOURS[key]
            (patch,) = ax.bar(
                x, gb, _BAR_WIDTH, bottom=bottom, color=colour, edgecolor=BACKGROUND,
                linewidth=0.8, zorder=2,
                label=labels[key] if x == 0 else "_nolegend_",
            ).patches
            patch.set_gid(f"{bar.method.value}:{key}")
            text = _segment_text(gb)
            spot = _label_spot(bottom, gb, px_per_gb, line_gbs)
            if spot is not None and len(text) * _px(_FONT["segment"]) * 0.62 < bar_px - 6:
                ax.text(x, spot, text, ha="center", va="center", fontsize=_FONT["segment"],
                        color=text_colour_on(colour), zorder=5)
            bottom += gb
        ax.annotate(
            fmt_gb(bar.total), (x, bar.total), xytext=(0, 5), textcoords="offset points",
            ha="center", va="bottom", fontsize=_FONT["total"], fontweight="bold", color=INK,
            zorder=6, bbox={"facecolor": BACKGROUND, "edgecolor": "none", "pad": 1.5},
        )
        if bar.requested:
            ax.add_patch(Rectangle((x - _BAR_WIDTH / 2, 0), _BAR_WIDTH, bar.total, fill=False,
                                   edgecolor=INK, linewidth=2.2, zorder=4))

    # under each bar: the method, then how the engine would run it
    ax.set_xticks(range(len(data.bars)))
    ax.set_xticklabels([b.label for b in data.bars], fontsize=_FONT["tick"], color=INK)
    for tick, bar in zip(ax.get_xticklabels(), data.bars, strict=True):
        if bar.requested:
            tick.set_fontweight("bold")
    for x, bar in enumerate(data.bars):
        ax.annotate("\n".join(bar.plan), (x, 0), xycoords=("data", "axes fraction"),
                    xytext=(0, -32), textcoords="offset points", ha="center", va="top",
                    fontsize=_FONT["plan"], color=INK if bar.requested else MUTED,
                    linespacing=1.3, gid=f"plan:{bar.method.value}")
    ax.tick_params(axis="x", length=0, pad=8)
    ax.tick_params(axis="y", labelsize=_FONT["tick"], colors=INK)
    ax.yaxis.set_major_formatter(lambda v, _pos: f"{v:,.0f}")
    ax.set_ylabel("GB on one GPU", fontsize=_FONT["tick"], color=INK)
    ax.grid(axis="y", color=GRID, linewidth=1, zorder=0)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    ax.spines["left"].set_color(FRAME)
    ax.spines["bottom"].set_color(FRAME)
    _card_lines(ax, data, axis_h_px)


def _label_spot(
    bottom: float, height: float, px_per_gb: float, lines: list[float]
) -> float | None:
    """Where (GB) a segment's value label goes: as near the segment's middle as it can be
    while it stays inside the segment and clear of every card line; None if nowhere."""
    half = _px(_FONT["segment"]) * 0.75  # half the text height, with a little air
    low, high = bottom * px_per_gb + half + 1, (bottom + height) * px_per_gb - half - 1
    if high < low:
        return None
    centre = (low + high) / 2
    blocked = [(y * px_per_gb - half - 3, y * px_per_gb + half + 3) for y in lines]
    spots = [centre, low, high, *(edge for b in blocked for edge in b)]
    free = [y for y in spots if low <= y <= high and not any(a < y < b for a, b in blocked)]
    if not free:
        return None
    return min(free, key=lambda y: abs(y - centre)) / px_per_gb


def _line_text(line: CardLine) -> str:
    """``24 GB card · 21.9``; a line several cards share names them on separate rows."""
    first, *rest = line.label.split(", ")
    return "\n".join([f"{first} · {line.limit_gb:.1f}", *rest])


def _card_lines(ax: Axes, data: ChartData, axis_h_px: float) -> None:
    """Dashed lines across the bars; their labels in the gutter, pushed apart so that no
    two overlap (a thin leader joins a moved label to its line)."""
    from matplotlib import patheffects

    row_h = _px(_FONT["line"]) * 1.3
    px_per_gb = axis_h_px / data.y_top
    texts = [_line_text(line) for line in data.lines]
    heights = [row_h * (t.count("\n") + 1) for t in texts]
    centres: list[float] = []  # label centres, px from the axis bottom
    for line, height in zip(data.lines, heights, strict=True):
        want = max(line.limit_gb * px_per_gb, height / 2)
        if centres:
            previous_top = centres[-1] + heights[len(centres) - 1] / 2
            want = max(want, previous_top + 4 + height / 2)
        centres.append(want)
    if centres:  # the top label would leave the axes: slide the stack down
        overflow = centres[-1] + heights[-1] / 2 - axis_h_px
        if overflow > 0:
            centres = [c - overflow for c in centres]
    outline = [patheffects.withStroke(linewidth=4.5, foreground=BACKGROUND)]
    for line, text, centre in zip(data.lines, texts, centres, strict=True):
        colour = INK if line.recommended else MUTED
        style = (0, (6, 3)) if line.recommended else (0, (2, 2.5))
        ax.plot([_X_LEFT, _BARS_RIGHT], [line.limit_gb] * 2, color=colour, linestyle=style,
                linewidth=2, zorder=3, path_effects=outline, gid=f"line:{line.label}")
        ax.annotate(
            text, xy=(_BARS_RIGHT, line.limit_gb),
            xytext=(_BARS_RIGHT + 0.12, centre / px_per_gb), textcoords="data",
            ha="left", va="center", fontsize=_FONT["line"], color=colour,
            fontweight="bold" if line.recommended else "normal", zorder=6, linespacing=1.2,
            # the leader ends at the label's left edge, clear of the labels stacked below
            arrowprops={"arrowstyle": "-", "color": colour, "linewidth": 1,
                        "shrinkA": 0, "shrinkB": 2, "relpos": (0.0, 0.5)},
        )


def _picks_panel(fig: Figure, data: ChartData, layout: _Layout) -> None:
    picks = data.picks
    left = layout.picks_left
    fig.text(left, _PANEL_TOP + 0.075, data.picks_title or "", fontsize=_FONT["panel"],
             fontweight="bold", color=INK, ha="left", va="bottom")
    fig.text(left, _PANEL_TOP + 0.07, data.picks_note, fontsize=_FONT["subtitle"],
             color=MUTED, ha="left", va="top")
    if not picks:
        fig.text(left, (_PANEL_TOP + _PANEL_BOTTOM) / 2, "No priced card holds this run.",
                 fontsize=_FONT["value"], color=MUTED, ha="left", va="center")
        return
    axes_left = left + layout.picks_label_room
    gap = 0.015
    width = (0.975 - axes_left - gap) / 2
    height = _PANEL_TOP - _PANEL_BOTTOM - 0.02
    cost = fig.add_axes((axes_left, _PANEL_BOTTOM, width, height))
    time = fig.add_axes((axes_left + width + gap, _PANEL_BOTTOM, width, height), sharey=cost)
    cost.set_gid("cost")
    time.set_gid("time")
    ys = list(range(len(picks)))
    colours = [PICK_TOP, *([PICK_REST] * (len(picks) - 1))]
    series = (
        (cost, [p.cost_usd for p in picks], "Cost", fmt_money, "cost"),
        (time, [p.wall_hours for p in picks], "Wall-clock", fmt_hours, "time"),
    )
    for ax, values, name, fmt, gid in series:
        ax.set_facecolor(BACKGROUND)
        bars = ax.barh(ys, values, 0.6, color=colours, zorder=2)
        for i, patch in enumerate(bars.patches):
            patch.set_gid(f"{gid}:{i}")
        ax.set_xlim(0, max(values) * 1.75)
        for y, value in zip(ys, values, strict=True):
            ax.annotate(fmt(value), (value, y), xytext=(5, 0), textcoords="offset points",
                        ha="left", va="center", fontsize=_FONT["value"], color=INK)
        ax.set_title(name, fontsize=_FONT["tick"], color=INK, loc="left")
        ax.set_xticks([])
        for side in ("top", "right", "bottom"):
            ax.spines[side].set_visible(False)
        ax.spines["left"].set_color(FRAME)
        ax.tick_params(axis="y", length=0, labelsize=_FONT["plan"], colors=INK)
    cost.set_yticks(ys)
    cost.set_yticklabels([p.label for p in picks])
    cost.set_ylim(MAX_PICKS - 0.5, -0.5)  # same bar thickness however many picks, top down
    time.tick_params(axis="y", labelleft=False)


def _footnote(data: ChartData, width_chars: int) -> list[str]:
    """The footnote's sentences, joined into lines of at most ``width_chars``."""
    notes = ["Lines: the most one card holds for training "
             f"({USABLE_FRACTION:.0%} of its memory), GB."]
    if data.crowded:
        notes.append("Next to a line drawn: " + ", ".join(
            f"{ln.label} {ln.limit_gb:.1f}" for ln in data.crowded) + ".")
    if data.off_scale:
        notes.append("Above the scale: " + ", ".join(
            f"{ln.label} {ln.limit_gb:.1f}" for ln in data.off_scale) + ".")
    if data.picks_title is None:
        notes.append("Add a dataset size (e.g. 50M tokens) for cost and wall-clock.")
    lines: list[str] = []
    for note in notes:
        if lines and len(lines[-1]) + 1 + len(note) <= width_chars:
            lines[-1] += " " + note
        else:
            lines.append(note)
    return lines


def _shrink_to_fit(fig: Figure) -> None:
    """Make long card names fit: while two plan labels under the bars overlap, or a card
    label left of the cost bars runs past its room, make that group's font smaller."""
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]
    # Sizes in points via get_fontproperties().get_size(): a float, where the stubs type
    # Text.get_fontsize() as float | str.
    memory = next(ax for ax in fig.axes if ax.get_gid() == "memory")
    plans = [t for t in memory.texts if str(t.get_gid() or "").startswith("plan:")]
    while plans and plans[0].get_fontproperties().get_size() > _MIN_FONT:
        boxes = [t.get_window_extent(renderer) for t in plans]
        if not any(a.x1 + 8 > b.x0 for a, b in pairwise(boxes)):
            break
        for t in plans:
            t.set_fontsize(t.get_fontproperties().get_size() - 1)
    cost = next((ax for ax in fig.axes if ax.get_gid() == "cost"), None)
    if cost is not None:
        room = fig.get_size_inches()[0] * DPI * (cost.get_position().x0 - _WIDE.picks_left)
        labels = cost.get_yticklabels()
        while labels and labels[0].get_fontproperties().get_size() > _MIN_FONT:
            widest = max(t.get_window_extent(renderer).width for t in labels)
            if widest + 12 <= room:
                break
            for t in labels:
                t.set_fontsize(t.get_fontproperties().get_size() - 1)


def build_figure(data: ChartData) -> Figure:
    """The chart as a matplotlib figure on the Agg canvas (nothing saved yet)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width_px, height_px = chart_size(data)
    layout = _WIDE if data.wide else _NARROW
    fig = Figure(figsize=(width_px / DPI, height_px / DPI), dpi=DPI, facecolor=BACKGROUND,
                 edgecolor=FRAME, linewidth=2)
    FigureCanvasAgg(fig)
    fig.text(layout.title_x, 0.955, data.title, fontsize=_FONT["title"], fontweight="bold",
             color=INK, ha="left", va="top")
    fig.text(layout.title_x, 0.895, data.subtitle, fontsize=_FONT["subtitle"], color=MUTED,
             ha="left", va="top")
    ax = fig.add_axes(layout.memory)
    _memory_panel(fig, ax, data)
    if data.wide:
        _picks_panel(fig, data, layout)
    names = component_labels(data.napkin)
    shown = {names[k] for k in COMPONENTS
             if any(b.components[k] > 0.005 for b in data.bars)}
    handles, labels = ax.get_legend_handles_labels()
    keep = [(h, lab) for h, lab in zip(handles, labels, strict=True) if lab in shown]
    foot = _footnote(data, 150 if data.wide else 95)
    row = _px(_FONT["foot"]) * 1.3 / height_px
    fig.text(0.5, 0.015, "\n".join(foot), fontsize=_FONT["foot"], color=MUTED,
             ha="center", va="bottom", linespacing=1.3)
    fig.legend(
        [h for h, _ in keep], [lab for _, lab in keep], loc="lower center",
        bbox_to_anchor=(0.5, 0.02 + row * len(foot)), ncol=len(keep) if data.wide else 4,
        frameon=False, fontsize=_FONT["legend"], handlelength=1.2, columnspacing=1.4,
        labelcolor=INK,
    )
    _shrink_to_fit(fig)
    return fig


def render_png(data: ChartData) -> bytes:
    """The chart as PNG bytes (opaque RGB, ``chart_size(data)`` pixels)."""
    from PIL import Image

    with _RENDER_LOCK:
        fig = build_figure(data)
        canvas = fig.canvas
        canvas.draw()
        rgba = canvas.buffer_rgba()  # type: ignore[attr-defined]
        image = Image.frombuffer("RGBA", canvas.get_width_height(), rgba, "raw", "RGBA", 0, 1)
        out = io.BytesIO()
        image.convert("RGB").save(out, format="PNG", optimize=False, compress_level=6)
    return out.getvalue()


async def render_chart(request: Request, catalog: Catalog | None = None) -> ChartImage:
    """The chart for ``request``, computed and drawn on a worker thread so the event loop
    keeps serving while it renders."""
    return await asyncio.to_thread(chart_image, request, catalog)


@dataclass(frozen=True, slots=True)
class ChartImage:
    """A rendered chart: the PNG, its title and alt text (for uploads)."""

    png: bytes
    title: str
    alt_text: str
    filename: str = CHART_FILENAME


def chart_image(request: Request, catalog: Catalog | None = None) -> ChartImage:
    data = chart_data(request, catalog)
    return ChartImage(render_png(data), f"{data.title}: memory by method", data.alt_text)


__all__ = [
    "CHART_FILENAME",
    "LINE_HEADROOM",
    "CardLine",
    "ChartData",
    "ChartImage",
    "MethodBar",
    "Pick",
    "build_figure",
    "card_limit_gb",
    "chart_data",
    "chart_image",
    "chart_size",
    "one_card_memory",
    "render_chart",
    "render_png",
    "text_colour_on",
]
