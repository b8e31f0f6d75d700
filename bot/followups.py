"""How the conversation reads a follow-up beside structured options (Discord's
``/ftcost`` options, a :data:`~bot.ask.RequestBuilder`), apart from
:mod:`bot.service`:

* ``new`` with nothing after it but options starts a new question, which the options
  state (``/ftcost query:new model:8b``); without options it still asks for the question.
* a follow-up that leaves the estimate as it was is told so, naming what it said: its
  words, and the options when a builder names them (its ``said``: ``method:qlora``).
"""

from __future__ import annotations

from typing import Final

from bot.ask import RequestBuilder
from bot.replies import Reply, ReplyKind
from bot.words import normalized, starts_over
from catalog.echo import quoted

NOTHING_CHANGED: Final = "(nothing changed)"
"""The ``word`` of the reply to a follow-up that leaves the estimate as it was."""
NEW_ALONE: Final = frozenset({"new", "new:"})
"""``new`` with no question after it (:func:`starts_afresh`)."""


def starts_afresh(words: str, build: RequestBuilder | None) -> bool:
    """Whether ``words`` start a new question rather than change the thread's: ``new
    8b lora``, or ``new`` alone beside options (``build``), which state the question."""
    return starts_over(words) or (build is not None and normalized(words) in NEW_ALONE)


def said_by(words: str, build: RequestBuilder | None) -> str:
    """What a message said: its ``words`` and what its options (a builder with a
    ``said``) name, e.g. ``what if method:qlora``."""
    options = str(getattr(build, "said", "") or "") if build is not None else ""
    return " ".join(part for part in (words, options) if part)


def nothing_changed(words: str, build: RequestBuilder | None = None) -> Reply:
    """The reply to a follow-up that leaves the estimate as it was (``qlora`` on a QLoRA
    estimate, or ``method:qlora`` beside no words): said, rather than the same estimate
    posted again without a word."""
    return Reply(
        ReplyKind.ERROR,
        text=(f"Nothing changed: the estimate above already has what "
              f'"{quoted(said_by(words, build), 60)}" says. Name what should differ, e.g. '
              "`what if 8k seq?`, `on 4x h100` or `with full and zero3`."),
        word=NOTHING_CHANGED,
    )


__all__ = ["NEW_ALONE", "NOTHING_CHANGED", "nothing_changed", "said_by", "starts_afresh"]
