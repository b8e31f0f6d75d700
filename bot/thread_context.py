"""A thread reply whose estimate the store can't give (no longer kept, lost, unreadable,
the store down): a whole question gets a fresh estimate with a note saying so; a change
("what if 8k seq") is told how to ask in full (:func:`without_context`). A price
announcement's thread has an estimate of its own: :mod:`bot.announcement_thread`.
"""

from __future__ import annotations

import dataclasses
from typing import Final

from bot.replies import Reply, ReplyKind
from catalog.echo import quoted

CONTEXT_EXPIRED_NOTE: Final = (
    "This thread's estimate is no longer kept, so this is a fresh estimate from your "
    "message alone, not a change to the estimate above."
)
CONTEXT_UNAVAILABLE_NOTE: Final = (
    "Context unavailable: I can't reach my store right now, so this is a fresh estimate "
    "from your message alone, not a change to the estimate above."
)
STAND_IN_QUERY: Final = "8b lora"
"""Any estimate: a reply in a thread whose estimate is gone is read as a change of it
(``Service.reads_as_followup``), to tell "what if 8k seq" from chatter."""


def without_context(reply: Reply, text: str, expired: bool) -> Reply:
    """``reply`` (to ``text`` read as a whole question) as the answer in a thread whose
    estimate can't be read (``expired``: the store no longer keeps it; else the store is
    unreachable): an estimate gets a note saying it is fresh; an error (the text was a
    change, "what if 8k seq?") becomes a message saying what is missing and how to ask."""
    note = CONTEXT_EXPIRED_NOTE if expired else CONTEXT_UNAVAILABLE_NOTE
    if reply.kind is ReplyKind.ESTIMATE and reply.report is not None:
        report = dataclasses.replace(reply.report, notes=[note, *reply.report.notes])
        return dataclasses.replace(reply, report=report)
    if reply.kind is ReplyKind.ERROR:
        said = quoted(" ".join(str(text).split()), 200)
        why = ("This thread's estimate is no longer kept" if expired else
               "Context unavailable: I can't reach my store right now")
        return Reply(
            ReplyKind.ERROR,
            text=(
                f"{why}, so I don't know which estimate “{said}” should change. Ask "
                "again with the whole query, e.g. `70b qlora 50M tokens seq 8k`."
            ),
            word=reply.word,  # lets run_resolved find an org/name Hub word
            # Titled: the thread, not the query language, is the problem, so the
            # platforms show this title rather than "Can't read that query".
            title="Estimate no longer kept" if expired else "Context unavailable",
        )
    return reply


__all__ = ["CONTEXT_EXPIRED_NOTE", "CONTEXT_UNAVAILABLE_NOTE", "STAND_IN_QUERY", "without_context"]
