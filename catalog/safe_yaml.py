"""One guard for YAML written outside the code: no aliases, bounded nesting, bounded size.

``yaml.SafeLoader`` runs no code, but it still expands aliases (nine lines of nested
``*name`` make 10^8 items, the "billion laughs") and builds nodes recursively (a few
thousand ``[`` meet Python's recursion limit). :func:`check_events` reads PyYAML's event
stream, which expands nothing and is not recursive, and raises :class:`YamlRefused` at
the first alias (or anchor, unless allowed), the first collection nested past
``max_depth`` and the first value past ``max_values``: before any node is built.

The refusal is data (which rule, which line, which name); each reader words it for its
own reader and keeps its own limits:

- :mod:`bot.config_yaml`: the operator's bot config (``MAX_CONFIG_DEPTH``);
- :mod:`catalog.team_sheets`: a team's price sheet (``MAX_SHEET_DEPTH``);
- :mod:`adapters.trainconfig.load`: a training config a user hands in (``MAX_DEPTH``,
  ``MAX_VALUES``).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

import yaml

from catalog.echo import shown

NAME_CHARS: Final = 1024
"""An alias's or anchor's name is kept to this many characters: more than a message reads
of it (:func:`catalog.echo.one_line` reads 640), so the cut never changes a message."""


class Refusal(StrEnum):
    """Which rule :func:`check_events` applied."""

    ALIAS = "alias"
    """``*name`` (and so ``<<: *name``): expanding aliases is how a few lines become
    gigabytes."""
    ANCHOR = "anchor"
    """``&name``: harmless alone, refused where a reader allows no anchors either."""
    DEPTH = "depth"
    """A collection nested more than ``max_depth`` levels (the root's is level 1)."""
    VALUES = "values"
    """More than ``max_values`` keys, values and list items in the whole stream."""


class YamlRefused(Exception):
    """YAML that :func:`check_events` refuses: ``kind``, the rule; ``line``, 1-based (None
    when PyYAML gave no position); ``name``, the alias's or anchor's name, cut to
    :data:`NAME_CHARS` (None for the other rules). ``str()`` is neutral, for logs: each
    reader words the refusal for its own audience."""

    def __init__(self, kind: Refusal, line: int | None, name: str | None = None) -> None:
        self.kind, self.line, self.name = kind, line, name
        named = f" {shown(name, 40)}" if name is not None else ""
        where = f" at line {line}" if line is not None else ""
        super().__init__(f"YAML {kind}{named} refused{where}")


def check_events(
    text: str, *, max_depth: int, max_values: int | None = None, allow_anchors: bool = False
) -> None:
    """Refuse ``text`` before any node is built, reading every document of the stream:
    raises :class:`YamlRefused` at the first alias, the first anchor (unless
    ``allow_anchors``: an anchor alone expands nothing), the first collection nested more
    than ``max_depth`` levels (scalars are not a level) and the first node past
    ``max_values`` (None: no cap), checked in that order. Text that is not YAML raises
    PyYAML's own :class:`yaml.YAMLError`, as loading it would."""
    depth = values = 0
    loader = yaml.SafeLoader(text)
    try:
        while loader.check_event():
            event: yaml.Event = loader.get_event()
            if isinstance(event, yaml.AliasEvent):
                raise _refused(Refusal.ALIAS, event, event.anchor)
            if isinstance(event, yaml.NodeEvent) and event.anchor and not allow_anchors:
                raise _refused(Refusal.ANCHOR, event, event.anchor)
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > max_depth:
                    raise _refused(Refusal.DEPTH, event)
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if max_values is not None and isinstance(event, yaml.NodeEvent):
                values += 1
                if values > max_values:
                    raise _refused(Refusal.VALUES, event)
    finally:
        loader.dispose()


def _refused(kind: Refusal, event: yaml.Event, name: str | None = None) -> YamlRefused:
    line = event.start_mark.line + 1 if event.start_mark is not None else None
    return YamlRefused(kind, line, None if name is None else shown(name, NAME_CHARS))
