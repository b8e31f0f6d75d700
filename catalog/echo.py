"""Echoing outside text in messages: a user's words, a Hub config's values, a price
sheet's entries. Every such value is cut to :data:`ECHO_CHARS` characters, so a
5,000-character ``model_type`` or card name cannot flood a reply or a log line."""

from __future__ import annotations

import unicodedata
from typing import Final

ECHO_CHARS: Final = 80
"""The most characters of a user's or a remote source's text a message repeats."""
SCAN_FACTOR: Final = 8
"""Characters :func:`one_line` reads per character it may show: room for whitespace
runs and dropped characters, and a bound on the work a 4 MB Hub field costs."""


def backticks_as_quotes(text: str) -> str:
    """``text`` with each backtick a straight quote (`` ` `` -> ``'``). A reply's text is
    plain text whose backticks are the bot's own code spans (its examples, such as
    `` `/ftcost set framework hf` ``); a user's or a remote source's word quoted into it
    must neither open nor close one, and no front end can tell whose a backtick is."""
    return text.replace("`", "'")


def shown(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` as text for a message: at most ``limit`` characters, the cut marked
    with an ellipsis (``repr`` for anything but a string)."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except ValueError:  # an int over Python's 4,300-digit str() limit
        text = "a number of over 4,300 digits"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def quoted(value: object, limit: int = ECHO_CHARS) -> str:
    """A user's word (or a remote source's) as a reply quotes it (``"h1000" is not a
    card``): :func:`shown`, with its backticks made quotes (:func:`backticks_as_quotes`).
    Not for the bot's own text, whose backticks are its code spans."""
    return backticks_as_quotes(shown(value, limit))


def _plain(char: str) -> str:
    category = unicodedata.category(char)
    if category in ("Cc", "Zl", "Zp"):  # a newline, a tab, an escape: a word break
        return " "
    return "" if category in ("Cf", "Cs") else char  # a right-to-left override, a surrogate


def one_line(text: str, limit: int = ECHO_CHARS) -> str:
    """``text`` (a remote source's free text: a price sheet's name or note, a Hub
    config's ``model_type``) as one line of plain text for every message that repeats
    it: control characters (an escape sequence's ESC) and line or paragraph separators
    made spaces, format characters (a right-to-left override, a zero-width space) and
    lone surrogates (not UTF-8) dropped, whitespace runs made one space, a markdown
    link's ``](`` broken to ``] (`` (so ``[renew](https://…)`` shows its address instead
    of masking it), then cut to ``limit`` characters like :func:`shown`. Only the first
    :data:`SCAN_FACTOR` x ``limit`` characters are read; a longer text is marked cut."""
    head = text[: max(limit, 1) * SCAN_FACTOR]
    words = "".join(_plain(c) for c in head).split()
    line = backticks_as_quotes(" ".join(words).replace("](", "] ("))
    if len(head) < len(text):  # the rest was not read: the line ends in the cut mark
        return (line if len(line) < limit else line[: limit - 1]) + "…"
    return shown(line, limit)
