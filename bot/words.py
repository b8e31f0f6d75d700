"""The words the conversation answers itself, before any query is parsed: ``help``,
``models``, ``gpus``, ``chart`` and ``new``. One copy, used by :class:`bot.service.Service`
for every front end (terminal, Slack, Discord).

* ``help`` (``?``, ``usage``, nothing at all): the query language, privately.
* ``models`` / ``gpus`` (``cards``): the catalog listings.
* ``chart`` anywhere in a query asks for the memory chart as well; alone in an
  estimate's thread (or a terminal chat), the chart of the estimate above.
* ``new ...`` in a thread starts over instead of changing the last request.

>>> split_chart_word("70b qlora chart 50M tokens")
('70b qlora 50M tokens', True)
"""

from __future__ import annotations

import dataclasses
import unicodedata
from typing import Final

from adapters.help import EXAMPLES, QUERY_HELP
from adapters.listings import gpu_listing, model_listing
from bot.replies import Reply, ReplyKind
from engine import Request
from engine.specs import Catalog

HELP_WORDS: Final = frozenset({"", "help", "?", "-h", "--help", "usage"})
MODELS_WORDS: Final = frozenset({"models", "model", "list models", "models list"})
GPUS_WORDS: Final = frozenset({"gpus", "gpu", "cards", "list gpus", "gpus list"})
NEW_PREFIXES: Final = ("new ", "new:")
"""In a thread, ``new 8b lora`` starts over instead of changing the last request."""

CHANNEL_WORDS: Final = frozenset(
    {"set", "unset", "reset", "settings", "setting", "subscribe", "unsubscribe", "prices"}
)
"""Channel commands of the chat front ends (:mod:`bot.channel_settings`,
:mod:`bot.price_service`), which intercept them before a query is parsed."""

CHART_WORD: Final = "chart"
CHART_NEEDS_QUERY: Final = (
    "A chart of what? Add `chart` to a query (`70b qlora 50M tokens chart`), or say "
    "`chart` in an estimate's thread."
)


def plain(text: str) -> str:
    """``text`` as its writer meant it: format characters (zero-width spaces and joiners,
    byte order marks: Unicode ``Cf``) taken out and compatibility forms folded (NFKC:
    full-width ``ＨＥＬＰ`` reads ``HELP``), as the query parser reads a query, so a
    command word is known however it was pasted. Other number forms (``²``, ``½``) stay
    as typed: the parser refuses them by name rather than read them as other digits."""
    kept = "".join(c for c in str(text) if unicodedata.category(c) != "Cf")
    if not any(unicodedata.category(c) == "No" for c in kept):
        return unicodedata.normalize("NFKC", kept)
    runs: list[str] = []
    run: list[str] = []
    for c in kept:
        if unicodedata.category(c) == "No":
            runs += [unicodedata.normalize("NFKC", "".join(run)), c]
            run = []
        else:
            run.append(c)
    return "".join([*runs, unicodedata.normalize("NFKC", "".join(run))])


def normalized(text: str) -> str:
    """``text`` as the word tables compare it: one space between words, lower case, no
    trailing ``?!.``."""
    return " ".join(str(text).split()).lower().rstrip("?!. ")


def _asks_help(low: str) -> bool:
    """``help``, or a sentence that starts with it (``help me``, ``help with models``):
    no query starts with the word, so the help is the answer."""
    return low in HELP_WORDS or low.split(" ", 1)[0] == "help"


def is_channel_command(text: str) -> bool:
    """Whether ``text`` starts with a channel command's word (``set``, ``subscribe``...:
    :data:`CHANNEL_WORDS`)."""
    words = _spaced(text).lower().split(" ", 1)
    return words[0].rstrip("?!.:") in CHANNEL_WORDS


def is_command_word(text: str) -> bool:
    """Whether ``text`` (not empty) is one of the words :func:`command_reply` answers."""
    low = normalized(text)
    return bool(low) and (_asks_help(low) or low in MODELS_WORDS | GPUS_WORDS)


def command_reply(text: str, models: Catalog, gpus: Catalog) -> Reply | None:
    """The reply to ``help`` / ``models`` / ``gpus`` (the model listing from ``models``,
    the card listing with its prices from ``gpus``), or None for anything else."""
    low = normalized(text)
    if _asks_help(low):
        return Reply(ReplyKind.HELP, text=QUERY_HELP, title="ftcost help", examples=list(EXAMPLES))
    if low in MODELS_WORDS:
        return Reply(ReplyKind.MODELS, text=model_listing(models), title="Models")
    if low in GPUS_WORDS:
        return Reply(ReplyKind.GPUS, text=gpu_listing(gpus), title="GPUs")
    return None


def misplaced_word_hint(text: str, with_options: bool = False) -> str | None:
    """What to say instead when a query that failed to parse began with a word that only
    means something elsewhere: ``new`` with no question after it, or a channel command
    where it is not read: beside Discord's estimate options (``with_options``), or where
    there is no channel (the terminal). None otherwise."""
    words = _spaced(text).lower().rstrip("?!. ").split()
    if words == ["new"] or words == ["new:"]:
        return (
            "`new` starts a new question in an estimate's thread: say the question after it, "
            "e.g. `new 8b lora 50M tokens`."
        )
    if words and words[0] in CHANNEL_WORDS and with_options:
        return (
            f"`{words[0]}` is a command of its own, not read beside the estimate options: "
            f"send `/ftcost {words[0]} ...` with the query alone."
        )
    if words and words[0] in CHANNEL_WORDS:
        return (
            f"`{words[0]}` is a channel command in Slack and Discord (`/ftcost {words[0]} ...`)."
            " In the terminal, `ftcost gpus` lists the cards with their prices, and "
            "`--framework NAME` (or FTCOST_FRAMEWORK) sets the framework."
        )
    return None


def _spaced(text: str) -> str:
    """``text`` with one space between words, backticks read as word breaks, as the query
    reads them: ``new`` pasted as code, between two backticks, is the word ``new``."""
    return " ".join(str(text).replace("`", " ").split())


def starts_over(text: str) -> bool:
    """``new 8b lora``: a new question, not a change of the thread's last request."""
    return _spaced(text).lower().startswith(NEW_PREFIXES)


def without_new(text: str) -> str:
    """``text`` without its leading ``new`` / ``new:``."""
    return _spaced(text)[4:].strip()


def split_chart_word(text: str) -> tuple[str, bool]:
    """``text`` without the word ``chart`` (any case), and whether it was there."""
    words = str(text).split()
    kept = [w for w in words if w.lower().strip("?!.,") != CHART_WORD]
    return " ".join(kept), len(kept) != len(words)


def chart_only(previous: Request | None) -> Reply:
    """``chart`` alone: the chart of the thread's estimate, or what to say instead."""
    if previous is None:
        return Reply(ReplyKind.ERROR, text=CHART_NEEDS_QUERY, word=CHART_WORD)
    return Reply(ReplyKind.CHART, request=previous, title="Memory chart")


def with_chart(reply: Reply) -> Reply:
    """``reply`` with its chart wanted (estimates only: an error stays an error)."""
    return dataclasses.replace(reply, chart=True) if reply.kind is ReplyKind.ESTIMATE else reply


def control_words(control: str, base: Request, value: str | None) -> str | None:
    """The follow-up a control on an estimate stands for, answered as if typed in its
    thread, so a click goes through the same parser and checks as the words (a QLoRA
    click on a tensor-parallel run is refused as ``qlora`` would be): ``method`` (the
    method's word), ``seq`` (twice the sequence), ``gpu`` (the card's id) and
    ``framework`` (the framework's word). None when the control carries no value."""
    if control == "seq":
        return f"seq {base.seq_len * 2}"
    if control in ("method", "gpu", "framework") and value and value.strip():
        return value.strip()
    return None
