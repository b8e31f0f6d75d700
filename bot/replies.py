"""What the conversation answers: a :class:`Reply`, and where a message came from
(:class:`Context`). Every front end renders a :class:`Reply`; none of them builds one.

A follow-up's :attr:`Reply.changes` are written from the request fields' metadata
(:class:`engine.request.FieldMeta`), so a new field shows up in them without a table
to update here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Final

from adapters.report import Report
from adapters.values import show_change, show_value
from bot.store_types import ThreadKey, request_json
from engine import Estimate, Request
from engine.choices import Method
from engine.profiles import resolve
from engine.request import field_meta, field_metas
from engine.specs import UnknownId

if TYPE_CHECKING:  # the price commands pull in the live price sources (aiohttp)
    from bot.price_service import PriceReply
    from engine.architecture import Architecture
    from engine.specs import Catalog


class ReplyKind(StrEnum):
    ESTIMATE = "estimate"
    HELP = "help"
    MODELS = "models"
    GPUS = "gpus"
    ERROR = "error"
    PRICES = "prices"
    """``prices`` / ``subscribe`` / ``unsubscribe``: see :attr:`Reply.prices`."""
    LIMITED = "limited"
    """The per-user rate limit refused this one (``text`` says when to retry)."""
    CHART = "chart"
    """Only the chart of ``request`` (``chart`` alone in an estimate's thread)."""
    SETTINGS = "settings"
    """A channel-settings command's answer (``bot.channel_settings``), for the asker."""


class Trigger(StrEnum):
    """What made the bot answer (for logs and for where the answer goes)."""

    COMMAND = "command"
    MENTION = "mention"
    FOLLOWUP = "followup"
    BUTTON = "button"


@dataclass(frozen=True, slots=True)
class Context:
    """Where a message came from. ``thread`` is set for messages inside a thread; with
    ``followup=True`` the text changes that thread's last request."""

    platform: str
    channel: str | None = None
    thread: str | None = None
    user: str | None = None
    followup: bool = False
    workspace: str | None = None
    """``slack:<team id>`` / ``discord:<guild id>``: whose team price sheet applies."""
    can_manage: bool | None = None
    """Whether the user may change the channel's price announcements (None: unknown,
    anyone may)."""

    @property
    def key(self) -> ThreadKey | None:
        if self.channel is None or self.thread is None:
            return None
        return ThreadKey(self.platform, self.channel, self.thread)


@dataclass(frozen=True, slots=True)
class Reply:
    """What to show. Renderers escape every string themselves: nothing here is
    pre-formatted for a platform.

    * ``estimate``: ``report`` and ``request`` (the new thread context), ``estimate``
      (the engine's result, for ``--json``); for a follow-up or button also ``previous``
      and ``changes`` (``"seq 2,048 → 8,192"``).
    * ``help`` / ``models`` / ``gpus``: ``text`` (monospace-friendly plain text) and
      ``title``; ``examples`` for help.
    * ``error``: ``text`` is the user-facing message (names the bad word, the nearest
      known ones and one example); ``word`` and ``suggestions`` as the parser gave them;
      ``retry`` when asking again later may work (the Hub timed out). ``title`` names
      what the error is about when it is not the query (``Channel settings``, ``Training
      config``, ``GPU prices``): front ends then point to no query language. A reply's
      ``text`` is plain text whose backticks are the bot's code spans; words from outside
      are quoted into it with ``catalog.echo.quoted``, which makes theirs quotes.
    * ``chart``: ``request`` only; the platform posts its memory chart (``chart`` alone
      in an estimate's thread). An ``estimate`` with ``chart`` set wants it too.
    """

    kind: ReplyKind
    text: str = ""
    title: str = ""
    report: Report | None = None
    request: Request | None = None
    previous: Request | None = None
    changes: list[str] = field(default_factory=list)
    word: str | None = None
    suggestions: list[str] = field(default_factory=list)
    examples: list[str] = field(default_factory=list)
    prices: PriceReply | None = None
    """For ``prices`` replies: the price command's reply (view, subscription)."""
    chart: bool = False
    """The query said ``chart``: the platform also posts the memory chart of ``request``
    (``adapters.chart``) where the estimate goes."""
    estimate: Estimate | None = None
    """For ``estimate`` replies: what the engine computed (``report`` is its wording)."""
    retry: bool = False
    """For ``error`` replies: the cause is temporary (the Hub timed out or is down)."""
    quiet: bool = False
    """For ``limited`` replies: the asker was already told in this window. A front end
    answering a message (mention, thread reply) posts nothing; a slash command or a
    button, which the asker is waiting on, still answers privately."""

    @property
    def is_public(self) -> bool:
        """Estimates go to the channel; help, listings and errors to the asker only."""
        return self.kind is ReplyKind.ESTIMATE


def describe_changes(
    previous: Request, new: Request, catalog: Catalog | None = None
) -> list[str]:
    """``["seq 2,048 → 8,192", "method LoRA → Full"]``: the fields that differ, in the
    request's field order, each labelled as its metadata says (internal fields whose
    ``label`` is None are left out). Both sides are compared as the engine runs them,
    with their framework's defaults (``engine.profiles.resolve``): under ``hf`` a reply
    ``dropout 0.1`` reads "LoRA dropout 0.05 → 0.1", and ``bf16 adapters`` a change.
    With the ``catalog``, so are the defaults that depend on the model (torchtitan's
    selective checkpointing: ``model 70b`` after an 8B also reads "selective
    checkpointing on → off")."""
    previous, new = (resolve(r, _architecture(catalog, r)) for r in (previous, new))
    full = previous.effective_method is new.effective_method is Method.FULL
    return [
        _change(name, previous, new)
        for name, meta in field_metas().items()
        if meta.label is not None
        and not (full and meta.adapters_only)
        and (
            getattr(previous, name) != getattr(new, name)
            or (name in FRAMEWORK_PICKS and _said(name, previous) != _said(name, new))
            # a framework whose default method differs (torchtitan's full fine-tune)
            or (name == "method" and previous.effective_method is not new.effective_method)
        )
    ]


FRAMEWORK_PICKS: Final = frozenset({"native_attention"})
"""Fields whose value, left unsaid, the framework picks card by card
(``engine.profiles.cudnn_attention_from``): saying the default is still a change."""
FRAMEWORK_PICK_WORDS: Final = "framework's pick"


def _architecture(catalog: Catalog | None, request: Request) -> Architecture | None:
    """The request's model's architecture, or None without a catalog or the model."""
    if catalog is None:
        return None
    try:
        return catalog.model(request.model).architecture
    except UnknownId:  # a Hub model no longer cached
        return None


def _said(name: str, request: Request) -> bool:
    return name in request.model_fields_set


def _change(name: str, previous: Request, new: Request) -> str:
    """One change line; a framework-picked field left unsaid reads "framework's pick", a
    method left unsaid the default it runs ("default (Full)" under torchtitan)."""
    if name == "method":
        old, now = (
            show_value(name, r.method) if r.method is not None
            else f"default ({show_value(name, r.effective_method)})"
            for r in (previous, new)
        )
        return f"{field_meta(name).label or name} {old} → {now}"
    if name not in FRAMEWORK_PICKS:
        return show_change(name, getattr(previous, name), getattr(new, name))
    old, now = (
        show_value(name, getattr(r, name)) if _said(name, r) else FRAMEWORK_PICK_WORDS
        for r in (previous, new)
    )
    return f"{field_meta(name).label or name} {old} → {now}"


def request_to_compact_json(request: Request) -> str:
    """The request's non-default fields as compact JSON (for button values): the thread
    store's own encoding (:func:`bot.store.request_json`)."""
    return request_json(request)


def request_from_json(text: str) -> Request:
    return Request.model_validate_json(text)
