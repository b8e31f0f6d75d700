"""The terminal's output: a :class:`adapters.report.Report` as plain text that fits the
terminal's width, and the memory chart written to a PNG file (``ftcost ... --chart
out.png``, ``chart out.png`` in ``ftcost chat``).

On a terminal (or with ``COLUMNS`` set) prose (notes, warnings, assumptions) wraps at
its width with a hanging indent, the headline stays on one line where it fits, and the
cost line breaks between its ``·``-separated parts; the tables keep their columns (about
70 characters wide, so they fit 80 columns). Output to a pipe or a file is not wrapped.

A report repeats text from outside (a Hub config's fields, a training config's values):
:func:`printable` is the terminal's output boundary, so an escape sequence in it cannot
recolour, retitle or rewrite the terminal.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import textwrap
import unicodedata
from pathlib import Path
from typing import Any, Final, TextIO, cast

from adapters.argv import MissingValue, take_option
from adapters.report import Report
from catalog.echo import shown
from engine import Request
from engine.specs import Catalog

CHART_OPTION = "--chart"
CHART_EXAMPLE = "ftcost 70b qlora 50M tokens --chart memory.png"


class ChartPathError(ValueError):
    """``--chart`` without a usable file name; the message says what to give instead."""


DEFAULT_WIDTH: Final = 80
"""Columns of a terminal that can't say how wide it is."""
MIN_WIDTH: Final = 40
MAX_WIDTH: Final = 160
"""Beyond this, long lines read worse than wrapped ones."""
UNWRAPPED: Final = 10_000
"""The width of "no wrapping" (longer than any line of a report)."""
BAR_WIDTH: Final = 40
BAR_LABEL: Final = "Memory per GPU  "


def terminal_width(stream: object = None) -> int | None:
    """The columns to fit: ``COLUMNS`` when set, else the terminal's own width when
    ``stream`` is a terminal (:func:`shutil.get_terminal_size`, :data:`DEFAULT_WIDTH`
    when it can't say), kept within 40 to 160. None for a pipe or a file: lines stay
    whole, so ``grep`` finds them."""
    columns = os.environ.get("COLUMNS", "").strip()
    if not columns.isdigit():
        if not _is_terminal(stream):
            return None
        columns = str(shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)
    width = int(columns) if int(columns) > 0 else DEFAULT_WIDTH
    return max(MIN_WIDTH, min(MAX_WIDTH, width))


def _is_terminal(stream: object) -> bool:
    """Whether ``stream`` is a terminal; False for a closed one (its ``isatty`` raises)."""
    isatty = getattr(stream, "isatty", None)
    try:
        return callable(isatty) and bool(isatty())
    except (OSError, ValueError):
        return False


_NUMBER_AND_UNIT: Final = re.compile(r"(?<=\d) (?=[^\s\d=x·(])")
"""The space between a number and its unit (``34.4 GB``, ``5.6 h``): never a line break."""
_KEEP: Final = "\u00a0"


_LINE_BREAK: Final = "\n"
"""The one control character a report's text keeps: its line breaks."""


def _printable_char(char: str) -> str:
    category = unicodedata.category(char)
    if category in ("Cc", "Zl", "Zp"):  # ESC, BEL, a carriage return, C1's CSI, U+2028
        return char if char == _LINE_BREAK else " "
    return "" if category in ("Cf", "Cs") else char  # a right-to-left override, a surrogate


def printable(text: str) -> str:
    """``text`` safe to write to a terminal: control characters other than the line
    break (the ESC that starts an escape sequence, a bell, a carriage return, the C1
    controls) and the line and paragraph separators made spaces; format characters (a
    right-to-left override, a zero-width space) and lone surrogates dropped. Everything
    the front end prints that may repeat outside text goes through it."""
    if text.isascii() and text.replace(_LINE_BREAK, "").isprintable():
        return text  # the common case, checked in C
    return "".join(_printable_char(c) for c in text)


class OutputError(Exception):
    """The output could not be written (a full disk, a closed stdout); the message says
    why and what to do."""


def _why(exc: BaseException | None) -> str:
    """Why a write failed and what to do, as the message gives it."""
    if isinstance(exc, UnicodeEncodeError):  # PYTHONIOENCODING=ascii, LANG=C on old systems
        char = exc.object[exc.start:exc.end][:1]
        return (
            f"the output's encoding, {exc.encoding}, has no character U+{ord(char):04X} "
            "that the answer uses. Use a UTF-8 terminal, or set PYTHONIOENCODING=utf-8 "
            "(or LANG=C.UTF-8), and run the command again."
        )
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "the stream is closed"
    return (
        f"{reason}. Send it to a terminal, a file or a pipe that can take it, and run the "
        "command again."
    )


class _PrintableStream:
    """A text stream that writes everything through :func:`printable`; every other
    attribute (``isatty``, ``fileno``) is the stream's own. A write or flush that fails
    (a full disk, a closed stream: ``None`` is one) raises :class:`OutputError`, a broken
    pipe its own error; a ``quiet`` stream (stderr: nowhere is left to say so) drops the
    text instead and remembers it in :attr:`failed`."""

    def __init__(self, stream: TextIO | None, quiet: bool = False) -> None:
        self._stream = stream
        self._quiet = quiet
        self.failed = False

    def write(self, text: str) -> int:
        text = printable(text)
        if self._stream is None:
            return self._failed(None)
        try:
            return self._stream.write(text)
        except (OSError, ValueError) as exc:  # ValueError: "I/O operation on closed file"
            return self._failed(exc)

    def flush(self) -> None:
        if self._stream is None:
            return
        try:
            self._stream.flush()
        except (OSError, ValueError) as exc:
            self._failed(exc)

    def _failed(self, exc: BaseException | None) -> int:
        if self._quiet:
            self.failed = True
            return 0
        if isinstance(exc, BrokenPipeError):
            raise exc  # the reader went away: not an error to report
        raise OutputError(f"can't write the output: {_why(exc)}") from exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def printable_stream(stream: TextIO | None, quiet: bool = False) -> TextIO:
    """``stream`` with every write made :func:`printable`: the command line's output
    boundary, for errors and listings that repeat outside text as much as reports. A
    write that fails raises :class:`OutputError` (``quiet``: is dropped; for stderr)."""
    return stream if isinstance(stream, _PrintableStream) else cast(
        TextIO, _PrintableStream(stream, quiet))


def stream_failed(stream: TextIO) -> bool:
    """Whether a ``quiet`` :func:`printable_stream` dropped a write it could not make."""
    return isinstance(stream, _PrintableStream) and stream.failed


def wrap(text: str, width: int, first: str = "", rest: str | None = None) -> list[str]:
    """``text`` wrapped to ``width`` columns, ``first`` before the first line and
    ``rest`` (default: as many spaces) before the others; long words are not split, and
    a number stays on the line of its unit."""
    rest = " " * len(first) if rest is None else rest
    lines = textwrap.wrap(
        _NUMBER_AND_UNIT.sub(_KEEP, text), width, initial_indent=first,
        subsequent_indent=rest, break_long_words=False, break_on_hyphens=False,
    )
    return [line.replace(_KEEP, " ") for line in lines] or [first.rstrip()]


def join_parts(text: str, width: int, separator: str = " · ", indent: str = "  ") -> list[str]:
    """A ``·``-separated line on one line when it fits, else broken between its parts
    (a part longer than the width is wrapped itself)."""
    if len(text) <= width:
        return [text]
    lines: list[str] = []
    line = ""
    for part in text.split(separator):
        candidate = f"{line}{separator}{part}" if line else part
        if len(candidate) <= width or not line:
            line = candidate
            continue
        lines.append(line)
        line = indent + part
    lines.append(line)
    return [out for line in lines for out in wrap(line, width, rest=indent)]


def render_text(report: Report, width: int | None = None) -> str:
    """The full report: headline, breakdown, cards, what-ifs, warnings, assumptions,
    fitted to ``width`` columns (None: lines as long as they are)."""
    width = UNWRAPPED if width is None else max(MIN_WIDTH, width)
    lines = [*wrap(report.title, width), *join_parts(report.subtitle, width), ""]
    lines += wrap(report.headline, width, rest="  ")
    if report.cost_line:
        lines += join_parts(report.cost_line, width)
    if report.price_line:
        lines += wrap(report.price_line, width, "  prices: ", "    ")
    for note in report.notes:
        lines += wrap(note, width, "  note: ", "    ")
    bar = min(BAR_WIDTH, width - len(BAR_LABEL) - 2)
    lines += ["", f"{BAR_LABEL}[{report.bar(bar)}]", *report.legend()]
    lines += ["", "Cards", report.cards.render()]
    lines += ["", "What if", report.what_if.render()]
    if report.warnings:
        lines += ["", "Warnings"]
        for warning in report.warnings:
            lines += wrap(warning, width, "  ! ", "    ")
    if report.assumptions:
        lines += ["", "Assumptions"]
        for assumption in report.assumptions:
            lines += wrap(assumption, width, "  - ", "    ")
    return printable("\n".join(lines))


def split_chart_option(args: list[str]) -> tuple[list[str], Path | None]:
    """``args`` without ``--chart FILE`` (or ``--chart=FILE``), and the checked file.

    Raises :class:`ChartPathError` when the option has no file, names it twice, or the
    file can't be written (see :func:`check_chart_path`)."""
    try:
        rest, found = take_option(args, CHART_OPTION)
    except MissingValue:
        raise ChartPathError(
            f"{CHART_OPTION} needs a file name ending in .png, e.g. {CHART_EXAMPLE}"
        ) from None
    if len(found) > 1:
        raise ChartPathError(f"{CHART_OPTION} was given {len(found)} times; give it once.")
    return rest, check_chart_path(found[0]) if found else None


def check_chart_path(text: str, asked_by: str = CHART_OPTION) -> Path:
    """The chart's file, if it can be written: a ``.png`` name in an existing, writable
    folder, not a folder itself. Raises :class:`ChartPathError` saying what is wrong;
    ``asked_by``: how the user names the file (``--chart``; ``chart`` in a chat)."""
    if not text.strip():
        raise ChartPathError(f"{CHART_OPTION} needs a file name, e.g. {CHART_EXAMPLE}")
    if "\0" in text:  # a chat line can hold one; no file name can
        raise ChartPathError(
            f'Can\'t write the chart to "{shown(printable(text))}": a file name can\'t hold '
            f"a NUL character; give a plain name (e.g. {asked_by} memory.png)."
        )
    path = _expanded(text, asked_by)
    if path.suffix.lower() != ".png":
        raise ChartPathError(
            f'The chart is a PNG: "{shown(as_typed(text))}" should end in .png (e.g. {asked_by} '
            "memory.png)."
        )
    try:
        _check_writable(path, text)
    except OSError as exc:  # a name too long for the file system, a folder not searchable
        raise ChartPathError(
            f'Can\'t write the chart to "{shown(as_typed(text))}": {path_problem(exc)} (e.g. '
            f"{asked_by} memory.png)."
        ) from None
    return path


def as_typed(path: str | Path) -> str:
    """A file name as a message says it: a byte that is not UTF-8 (passed on undecoded by
    the terminal) escaped as ``\\xff``, as the name is on disk, rather than dropped."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def path_problem(exc: OSError) -> str:
    """Why the file system refused a path, and what to give instead."""
    if exc.errno == errno.ENAMETOOLONG:
        return (
            "the file name is too long (a name can have at most 255 bytes, a whole path "
            "4,096); give a shorter name"
        )
    return f"{exc.strerror or type(exc).__name__}; give another file name"


def _expanded(text: str, asked_by: str) -> Path:
    """``text`` with a leading ``~`` or ``~user`` made that home folder. Raises
    :class:`ChartPathError` when there is no such user (or no home folder is known)."""
    try:
        return Path(text).expanduser()
    except RuntimeError:  # "Could not determine home directory."
        user = text[1:].split("/", 1)[0]
        whose = f"there is no user {shown(user)}" if user else "your home folder is unknown"
        raise ChartPathError(
            f'Can\'t write the chart to "{shown(as_typed(text))}": {whose} (a name after ~ is a '
            f"user's home folder). Give a full path, e.g. {asked_by} /tmp/memory.png."
        ) from None


def _check_writable(path: Path, text: str) -> None:
    """Raise :class:`ChartPathError` when ``path`` is a folder or its folder is missing,
    a file or not writable; :class:`OSError` when the file system refuses to look."""
    said = shown(as_typed(text))
    if path.is_dir():
        raise ChartPathError(f'"{said}" is a folder; give a file name such as {path / "m.png"}.')
    folder = path.parent if str(path.parent) else Path(".")
    where = as_typed(folder)
    if folder.exists() and not folder.is_dir():
        raise ChartPathError(f'Can\'t write the chart to "{said}": "{where}" is a file.')
    if not folder.is_dir():
        raise ChartPathError(
            f'Can\'t write the chart to "{said}": the folder "{where}" does not exist.'
        )
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ChartPathError(
            f'Can\'t write the chart to "{said}": permission denied. Pick a folder you can '
            "write to."
        )


def save_chart(request: Request, catalog: Catalog | None, path: Path) -> str:
    """Draw the memory chart of ``request``, write it to ``path`` and say so
    (``chart: memory.png, 1600 x 900 px, 106 KB``). Raises :class:`ChartPathError` when
    the file can't be written after all."""
    from adapters.chart import chart_data, chart_size, render_png

    data = chart_data(request, catalog)
    png = render_png(data)
    try:
        path.write_bytes(png)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the name
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ChartPathError(f'Can\'t write the chart to "{path}": {reason}.') from exc
    width, height = chart_size(data)
    return f"chart: {as_typed(path)}, {width} x {height} px, {len(png) / 1024:.0f} KB"
