"""Per-channel defaults that anyone in the channel can set, for every front end.

``/ftcost set framework hf`` makes ``hf`` the framework of every new estimate asked in
that channel (Slack, or Discord, where a thread uses its parent channel's settings);
``/ftcost set prices spot`` prices them at spot rates. The words a user types still win:
``8b lora unsloth`` in that channel is an Unsloth estimate. ``/ftcost settings`` shows
the channel's settings, ``/ftcost unset framework`` (or ``set framework default``) goes
back to the built-in default.

A setting maps one name to one :class:`~engine.request.Request` field (:data:`SETTINGS`).
Values are read as the query language reads them (``set framework trl`` is ``hf``, as
``8b lora trl`` is), and stored by their canonical name (:mod:`bot.settings_store`).
Defaults apply to new questions only: a follow-up changes its thread's request, which
already carries the channel's defaults of when it was asked.

Every ``set`` / ``unset`` is logged at INFO on ``ftcost.settings`` (the audit trail:
platform, channel, setting, old and new value, user id). A stored value this build does
not know (written by another version, or by hand) is ignored: ``settings`` says so, and a
WARNING names the channel and the setting (once per process for each such value).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from adapters.parse import QueryError, parse_fields
from bot.store_types import StoreUnavailable, count_unavailable
from catalog.echo import quoted
from engine import Request
from engine.choices import Framework
from engine.specs import Catalog

if TYPE_CHECKING:  # a name only: the store loads with its backend
    from bot.settings_store import SettingsStore

log = logging.getLogger("ftcost.bot")
audit = logging.getLogger("ftcost.settings")
"""Where each change of a channel setting is logged (INFO), and each stored value ignored
(WARNING)."""

MAX_SHOWN = 40
"""Characters of a user's word echoed back in an error (and of a stored value logged)."""
MAX_WARNED = 1000
"""Ignored stored values remembered as warned about (once each); past these the memory
starts over, so a store full of them costs a warning now and then, not unbounded memory."""
DEFAULT_SHOWN = "default"
"""How the audit line shows a setting that was (or is now) not set."""


@dataclass(frozen=True, slots=True)
class Setting:
    """One per-channel setting: its name, the request field it sets, its values."""

    name: str
    field: str
    values: Mapping[str, object]
    """Canonical value name -> the field's value."""
    default: str
    """The value in force when the channel sets none."""
    meaning: str
    """What the setting does, for ``settings`` and errors."""

    def name_of(self, value: object) -> str | None:
        """The canonical name of a field value (None if it has none)."""
        return next((k for k, v in self.values.items() if v == value), None)


SETTINGS: dict[str, Setting] = {
    "framework": Setting(
        "framework", "framework", {f.value: f for f in Framework}, Framework.GENERIC.value,
        "the training framework of new estimates (its loss path, precision, kernels)",
    ),
    "prices": Setting(
        "prices", "spot", {"on-demand": False, "spot": True}, "on-demand",
        "price new estimates at on-demand or spot rates",
    ),
}
SET_WORDS = frozenset({"set"})
UNSET_WORDS = frozenset({"unset", "reset"})
SHOW_WORDS = frozenset({"settings", "setting"})
DEFAULT_WORDS = frozenset({"default", "none", "off", "clear"})


def available() -> dict[str, Setting]:
    """The settings this build's :class:`Request` has a field for."""
    return {n: s for n, s in SETTINGS.items() if s.field in Request.model_fields}


def _shown(word: str) -> str:
    return quoted(" ".join(word.split()), MAX_SHOWN)


def _examples(command: str) -> str:
    return (f"`{command} set framework hf`, `{command} set prices spot`, "
            f"`{command} unset framework`, `{command} settings`")


def _words(text: str) -> list[str]:
    """``text``'s words, without a trailing ``?!.`` (``settings?``)."""
    return str(text).strip().rstrip("?!. ").split()


def is_settings_command(text: str) -> bool:
    """Whether ``text`` is a settings command (``set ...``, ``unset ...``, ``settings``)."""
    words = [w.lower() for w in _words(text)]
    if not words:
        return False
    return words[0] in SET_WORDS | UNSET_WORDS or (len(words) == 1 and words[0] in SHOW_WORDS)


FILLER_WORDS = frozenset({"to", "the", "a", "an", "of", "at"})
"""Words of ``set the batch size to 8`` that say nothing about the value."""


def _question_words(words: list[str]) -> str | None:
    """What ``set bs 8`` (``set seq to 8k``, ``set method qlora``) meant as question
    words: the words, without fillers (and without a leading field name the query
    language does not know), when they parse as a query's; None otherwise. The words
    lose their backticks (the parser reads none): the answer shows them as code."""
    bare = (w.replace("`", "") for w in words)
    kept = [w for w in bare if w and w.lower() not in FILLER_WORDS]
    for candidate in (kept, kept[1:]):
        text = " ".join(candidate)
        if not text:
            continue
        try:
            if parse_fields(text, None):
                return text
        except QueryError:
            continue
    return None


def read_value(setting: Setting, word: str, catalog: Catalog | None = None) -> str | None:
    """The canonical name of ``word`` as a value of ``setting``: one of its names (with
    spaces read as hyphens: ``on demand``), or a query word that sets its field (``trl``
    for the framework ``hf``); None if neither."""
    low = word.lower().strip()
    if low in setting.values:
        return low
    if "-".join(low.split()) in setting.values:
        return "-".join(low.split())
    try:
        fields = parse_fields(low, catalog)
    except QueryError:
        return None
    if set(fields) != {setting.field}:
        return None
    return setting.name_of(fields[setting.field])


def ignored_values(stored: Mapping[str, str]) -> dict[str, str]:
    """The stored settings this build knows by name but whose value it does not (another
    version's, or a hand edit): ignored, the default applies."""
    settings = available()
    return {name: value for name, value in stored.items()
            if name in settings and value not in settings[name].values}


def _logged(value: str | None) -> str:
    """A setting's value in a log line: :data:`DEFAULT_SHOWN` when unset, else quoted and
    cut to :data:`MAX_SHOWN` characters (a stored value may be anything)."""
    return DEFAULT_SHOWN if value is None else repr(_shown(value))


def defaults_from(stored: Mapping[str, str]) -> dict[str, object]:
    """The request fields a channel's stored settings set (unknown names and values,
    e.g. from another version, are skipped)."""
    out: dict[str, object] = {}
    settings = available()
    for name, value in stored.items():
        setting = settings.get(name)
        if setting is not None and value in setting.values:
            out[setting.field] = setting.values[value]
    return out


def with_defaults(request: Request, defaults: Mapping[str, object] | None) -> Request:
    """``request`` with each default whose field the user did not name (the fields a
    parsed request was built from are its ``model_fields_set``)."""
    if not defaults:
        return request
    unsaid = {k: v for k, v in defaults.items()
              if k not in request.model_fields_set and k in Request.model_fields}
    if not unsaid:
        return request
    return Request.model_validate({**request.model_dump(exclude_unset=True), **unsaid})


@dataclass(frozen=True, slots=True)
class SettingsAnswer:
    """The answer to a settings command: text for the asker; ``ok`` False for an error."""

    text: str
    ok: bool = True


class ChannelSettings:
    """Reads and changes channel settings through the store (none: settings are off)."""

    def __init__(self, store: SettingsStore | None, catalog: Callable[[], Catalog] | None = None,
                 command: str = "/ftcost") -> None:
        self.store = store
        self._catalog = catalog
        self.command = command
        self._warned: set[tuple[str, str, str, str]] = set()
        """(platform, channel, setting, value) of the ignored values warned about."""

    async def _stored(self, platform: str, channel: str) -> dict[str, str]:
        """The channel's stored settings, each ignored value warned about (once)."""
        assert self.store is not None
        stored = await self.store.channel_settings(platform, channel)
        for name, value in ignored_values(stored).items():
            if (platform, channel, name, value) in self._warned:
                continue
            if len(self._warned) >= MAX_WARNED:
                self._warned.clear()
            self._warned.add((platform, channel, name, value))
            audit.warning("stored channel setting ignored, not a value this version knows "
                          "platform=%s channel=%s setting=%s value=%s", platform, channel,
                          name, _logged(value))  # fmt: skip
        return stored

    async def defaults(self, platform: str, channel: str | None) -> dict[str, object]:
        """The request fields the channel's settings set; empty without a store, without
        a channel, or while the store is unreachable (the estimate goes out anyway)."""
        if self.store is None or not channel:
            return {}
        try:
            return defaults_from(await self._stored(platform, channel))
        except StoreUnavailable:
            count_unavailable("channel_settings")
            log.warning("store unavailable: channel defaults not applied")
            return {}

    async def handle(
        self, text: str, platform: str, channel: str | None, command: str | None = None,
        user: str | None = None,
    ) -> SettingsAnswer | None:
        """The answer to ``set NAME VALUE``, ``unset NAME`` or ``settings``; None when
        ``text`` is not a settings command. ``settings`` with words after it (``settings
        of 8b``) is no command and no question either: the answer says how to ask.
        ``user`` (who asked) goes in the audit line of a change."""
        command = command or self.command
        words = _words(text)
        if len(words) > 1 and words[0].lower() in SHOW_WORDS:
            return SettingsAnswer(
                f"`{words[0]}` takes no words after it: `{command} settings` shows this "
                f"channel's settings, {_examples(command).split(', ')[0]} changes one, and "
                f"a question names what it wants (`8b lora 50M tokens hf`).", ok=False)
        if not is_settings_command(text):
            return None
        if self.store is None or not channel:
            return SettingsAnswer("Channel settings need a channel and the bot's store; "
                                  "name what you want in the query instead.", ok=False)
        verb = words[0].lower()
        try:
            if verb in SHOW_WORDS:
                return SettingsAnswer(await self._show(platform, channel, command))
            where = (platform, channel, user)
            if verb in UNSET_WORDS:
                return await self._set(where, words[1:], None, command, verb)
            return await self._set(where, words[1:2], words[2:], command, verb)
        except StoreUnavailable:
            count_unavailable("channel_settings")
            return SettingsAnswer("Channel settings are unavailable right now: I can't reach "
                                  "my store. Estimates still work; try again in a few "
                                  "minutes.", ok=False)

    async def _show(self, platform: str, channel: str, command: str) -> str:
        stored = await self._stored(platform, channel)
        ignored = ignored_values(stored)
        lines = ["Settings of this channel (new estimates; words in a query still win):"]
        for setting in available().values():
            value = stored.get(setting.name)
            if value in setting.values:
                lines.append(f"• {setting.name}: {value}")
            elif setting.name in ignored:
                lines.append(
                    f'• {setting.name}: {setting.default} (default: the stored value '
                    f'"{_shown(ignored[setting.name])}" is not one I know, so it is ignored; '
                    f"`{command} set {setting.name} {list(setting.values)[-1]}` replaces it, "
                    f"`{command} unset {setting.name}` clears it)")
            else:
                lines.append(f"• {setting.name}: {setting.default} (default)")
        lines.append(f"Change one with {_examples(command)}.")
        return "\n".join(lines)

    async def _change(
        self, where: tuple[str, str, str | None], setting: Setting, value: str | None
    ) -> None:
        """Store ``value`` (None: unset) as the channel's ``setting`` and log the change:
        ``where`` is (platform, channel, user id)."""
        assert self.store is not None
        platform, channel, user = where
        old = (await self.store.channel_settings(platform, channel)).get(setting.name)
        await self.store.set_channel_setting(platform, channel, setting.name, value)
        audit.info("channel setting changed platform=%s channel=%s setting=%s old=%s new=%s "
                   "user=%s", platform, channel, setting.name, _logged(old), _logged(value),
                   user or "unknown")  # fmt: skip

    async def _set(
        self, where: tuple[str, str, str | None], name_words: list[str],
        value_words: list[str] | None, command: str, verb: str = "set",
    ) -> SettingsAnswer:
        """``set NAME VALUE`` (``value_words`` a list) or ``unset NAME`` (None), in the
        channel ``where`` names (platform, channel, user id)."""
        assert self.store is not None
        settings = available()
        names = ", ".join(f"`{n}`" for n in settings)
        if verb in UNSET_WORDS and len(name_words) > 1 and name_words[0].lower() in settings:
            name = name_words[0].lower()
            return SettingsAnswer(f"`{verb}` takes only the setting's name: `{command} {verb} "
                                  f"{name}` puts {name} back to its default.", ok=False)
        if len(name_words) != 1 or name_words[0].lower() not in settings:
            words = [*name_words, *(value_words or [])]
            question = _question_words(words) if verb in SET_WORDS else None
            if question is not None:
                return SettingsAnswer(
                    f"`set` changes this channel's defaults for new estimates ({names}); "
                    f'"{_shown(" ".join(words))}" belongs in a question. To change an '
                    f"estimate, reply in its thread with the words alone (`{question}`); a "
                    "new question names them too.", ok=False)
            said = f' "{_shown(" ".join(name_words))}"' if name_words else " nothing"
            return SettingsAnswer(f"I can't {verb.lower()}{said}: name one setting of "
                                  f"{names}. For example {_examples(command)}.", ok=False)
        setting = settings[name_words[0].lower()]
        choices = ", ".join(f"`{v}`" for v in setting.values)
        if value_words is not None and not value_words:
            return SettingsAnswer(f"Set {setting.name} to what? One of {choices}, e.g. "
                                  f"`{command} set {setting.name} {list(setting.values)[-1]}`.",
                                  ok=False)
        if value_words is None or " ".join(value_words).lower() in DEFAULT_WORDS:
            await self._change(where, setting, None)
            return SettingsAnswer(f"This channel's {setting.name} setting is back to the "
                                  f"default, {setting.default}.")
        word = " ".join(value_words)
        catalog = self._catalog() if self._catalog is not None else None
        value = read_value(setting, word, catalog)
        if value is None:
            return SettingsAnswer(f'"{_shown(word)}" is not a value of the {setting.name} '
                                  f"setting: say one of {choices}, e.g. "
                                  f"`{command} set {setting.name} {list(setting.values)[-1]}`.",
                                  ok=False)
        await self._change(where, setting, value)
        return SettingsAnswer(
            f"This channel's {setting.name} setting is now {value}: new estimates use it "
            f"unless the question says otherwise. `{command} settings` shows every setting.")


__all__ = [
    "SETTINGS",
    "ChannelSettings",
    "Setting",
    "SettingsAnswer",
    "available",
    "defaults_from",
    "ignored_values",
    "is_settings_command",
    "read_value",
    "with_defaults",
]
