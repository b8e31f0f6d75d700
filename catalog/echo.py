"""Echoing outside text in messages: a user's words, a Hub config's values, a price
sheet's entries. Every such value is cut to :data:`ECHO_CHARS` characters, so a
5,000-character ``model_type`` or card name cannot flood a reply or a log line."""

from __future__ import annotations

from typing import Final

ECHO_CHARS: Final = 80
"""The most characters of a user's or a remote source's text a message repeats."""


def shown(value: object, limit: int = ECHO_CHARS) -> str:
    """``value`` as text for a message: at most ``limit`` characters, the cut marked
    with an ellipsis (``repr`` for anything but a string)."""
    try:
        text = value if isinstance(value, str) else repr(value)
    except ValueError:  # an int over Python's 4,300-digit str() limit
        text = "a number of over 4,300 digits"
    return text if len(text) <= limit else text[: limit - 1] + "…"
