"""Query errors: a message that names the word, suggests and shows an example."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from catalog import echo

MAX_QUERY_CHARS: Final = 2000
"""Longest question read: room for a pasted launcher line or HF's arguments (a few
hundred characters each), far below what would make parsing slow (2,000 characters
parse in milliseconds); longer text is refused before it is split."""
EXAMPLE: Final = "70b qlora 50M tokens h100"
FOLLOWUP_EXAMPLE: Final = "what if 8k seq? | on 4x h100 | with full and zero3"
"""What a reply in an estimate's thread looks like (it changes only what it names)."""
MAX_SHOWN: Final = 40  # characters of an offending word quoted back


class QueryError(ValueError):
    """A query the parser cannot turn into a request, with a message for the user."""

    def __init__(
        self, message: str, word: str | None = None, suggestions: Iterable[str] = ()
    ) -> None:
        super().__init__(message)
        self.message: str = message
        self.word: str | None = word
        self.suggestions: list[str] = list(suggestions)[:3]

    def __str__(self) -> str:
        return self.message


def error(
    problem: str,
    word: str | None = None,
    suggestions: Sequence[str] = (),
    example: str = EXAMPLE,
) -> QueryError:
    """A QueryError whose message is the problem, the suggestions and an example."""
    parts = [problem]
    if suggestions:
        parts.append(f"Did you mean {', '.join(suggestions[:3])}?")
    parts.append(f"Example: {example}")
    return QueryError(" ".join(parts), word, suggestions)


def quoted(word: str) -> str:
    """The word as quoted in a message, cut short if it is long."""
    return echo.quoted(word, MAX_SHOWN)



def as_followup(err: QueryError) -> QueryError:
    """``err`` as a follow-up's error: its new-question example (:data:`EXAMPLE`), which
    would start over in a thread, replaced by :data:`FOLLOWUP_EXAMPLE`."""
    tail = f"Example: {EXAMPLE}"
    if not err.message.endswith(tail):
        return err
    message = err.message[: -len(tail)] + f"Example: {FOLLOWUP_EXAMPLE}"
    return QueryError(message, err.word, err.suggestions)
