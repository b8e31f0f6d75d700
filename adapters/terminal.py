"""The terminal's output: a :class:`adapters.report.Report` as plain text, and the memory
chart written to a PNG file (``ftcost ... --chart out.png``)."""

from __future__ import annotations

import os
from pathlib import Path

from adapters.report import Report
from engine import Request
from engine.specs import Catalog

CHART_OPTION = "--chart"
CHART_EXAMPLE = "ftcost 70b qlora 50M tokens --chart memory.png"


class ChartPathError(ValueError):
    """``--chart`` without a usable file name; the message says what to give instead."""


def render_text(report: Report, width: int = 40) -> str:
    """The full report: headline, breakdown, cards, what-ifs, warnings, assumptions."""
    lines = [report.title, report.subtitle, ""]
    lines.append(report.headline)
    if report.cost_line:
        lines.append(report.cost_line)
    if report.price_line:
        lines.append(f"  prices: {report.price_line}")
    for note in report.notes:
        lines.append(f"  note: {note}")
    lines += ["", f"Memory per GPU  [{report.bar(width)}]", *report.legend()]
    lines += ["", "Cards", report.cards.render()]
    lines += ["", "What if", report.what_if.render()]
    if report.warnings:
        lines += ["", "Warnings", *(f"  ! {w}" for w in report.warnings)]
    if report.assumptions:
        lines += ["", "Assumptions", *(f"  - {a}" for a in report.assumptions)]
    return "\n".join(lines)


def split_chart_option(args: list[str]) -> tuple[list[str], Path | None]:
    """``args`` without ``--chart FILE`` (or ``--chart=FILE``), and the checked file.

    Raises :class:`ChartPathError` when the option has no file, names it twice, or the
    file can't be written (see :func:`check_chart_path`)."""
    rest: list[str] = []
    found: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        if arg == CHART_OPTION:
            if i + 1 >= len(args) or args[i + 1].startswith("--"):
                raise ChartPathError(
                    f"{CHART_OPTION} needs a file name ending in .png, e.g. {CHART_EXAMPLE}"
                )
            found.append(args[i + 1])
            i += 2
            continue
        if arg.startswith(CHART_OPTION + "="):
            found.append(arg.split("=", 1)[1])
        else:
            rest.append(arg)
        i += 1
    if len(found) > 1:
        raise ChartPathError(f"{CHART_OPTION} was given {len(found)} times; give it once.")
    return rest, check_chart_path(found[0]) if found else None


def check_chart_path(text: str) -> Path:
    """The chart's file, if it can be written: a ``.png`` name in an existing, writable
    folder, not a folder itself. Raises :class:`ChartPathError` saying what is wrong."""
    if not text.strip():
        raise ChartPathError(f"{CHART_OPTION} needs a file name, e.g. {CHART_EXAMPLE}")
    path = Path(text).expanduser()
    if path.suffix.lower() != ".png":
        raise ChartPathError(
            f'The chart is a PNG: "{text}" should end in .png (e.g. {CHART_OPTION} memory.png).'
        )
    if path.is_dir():
        raise ChartPathError(f'"{text}" is a folder; give a file name such as {path / "m.png"}.')
    folder = path.parent if str(path.parent) else Path(".")
    if folder.exists() and not folder.is_dir():
        raise ChartPathError(f'Can\'t write the chart to "{text}": "{folder}" is a file.')
    if not folder.is_dir():
        raise ChartPathError(
            f'Can\'t write the chart to "{text}": the folder "{folder}" does not exist.'
        )
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ChartPathError(
            f'Can\'t write the chart to "{text}": permission denied. Pick a folder you can '
            "write to."
        )
    return path


def save_chart(request: Request, catalog: Catalog | None, path: Path) -> str:
    """Draw the memory chart of ``request``, write it to ``path`` and say so
    (``chart: memory.png, 1600 x 900 px, 106 KB``). Raises :class:`ChartPathError` when
    the file can't be written after all."""
    from adapters.chart import chart_data, chart_size, render_png

    data = chart_data(request, catalog)
    png = render_png(data)
    try:
        path.write_bytes(png)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ChartPathError(f'Can\'t write the chart to "{path}": {reason}.') from exc
    width, height = chart_size(data)
    return f"chart: {path}, {width} x {height} px, {len(png) / 1024:.0f} KB"
