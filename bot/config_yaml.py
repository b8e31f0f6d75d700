"""Reading the bot's YAML file safely: at most :data:`MAX_CONFIG_BYTES`, UTF-8, no
aliases (a few lines of nested aliases expand to gigabytes), nesting capped at
:data:`MAX_CONFIG_DEPTH`, no key set twice, a value Python cannot build reported at its
key. Aliases and nesting are refused before any node is built by the guard shared with
the other YAML readers, :func:`catalog.safe_yaml.check_events` (a bare anchor, which
expands nothing, is still read). Every problem is a :class:`ConfigError` naming the file,
the line and what to write; validation of the settings themselves is :mod:`bot.config`'s,
helped by :func:`written_numbers` here: what YAML writes where a number goes that pydantic
would take silently (``true`` as 1, ``.inf`` as no bound).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from types import UnionType
from typing import Any, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

from bot.config_checks import Loc, Problem, unreadable_config
from catalog.echo import shown
from catalog.safe_yaml import Refusal, YamlRefused, check_events

MAX_CONFIG_BYTES = 1024 * 1024
"""The largest config file read (a real one is a few KB)."""
MAX_CONFIG_DEPTH = 16
"""Collections nested deeper than this are refused before any node is built, so PyYAML's
recursive node building cannot meet Python's recursion limit (the bot's settings nest
four levels)."""


class ConfigError(Exception):
    """A configuration problem, worded for the operator (never contains a secret)."""


class _Refused(Exception):
    """YAML the bot's config may not use, at ``line`` (1-based; None when unknown);
    ``node``: the value it concerns."""

    def __init__(self, line: int | None, problem: str, node: yaml.Node | None = None) -> None:
        super().__init__(problem)
        self.line, self.problem, self.node = line, problem, node


class _ConfigLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` for the bot's own file, once :func:`_parse` has refused its
    aliases and deep nesting: a value Python cannot build (a 5,000-digit number) is
    reported at its node; a date stays text (no setting is a date, so ``2024-13-45``
    reaches validation, which names the key)."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:  # int(), float(), base64 of the text
            raise _Refused(
                node.start_mark.line + 1, f"{shown(node.value, 40)!r} cannot be read "
                f"({str(exc).split(';')[0]}); write a number with at most "
                f"{sys.get_int_max_str_digits():,} digits, or quote text", node,
            ) from exc  # fmt: skip


_ConfigLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _key_paths(root: yaml.Node) -> dict[int, str]:
    """Each node's key path (``id(node)`` -> ``prices.team_sheets[0].location``); raises
    :class:`_Refused` for a key set twice in one mapping (PyYAML keeps the last)."""
    paths: dict[int, str] = {}
    stack: list[tuple[yaml.Node, str]] = [(root, "")]
    while stack:
        node, path = stack.pop()
        paths[id(node)] = path
        if isinstance(node, yaml.MappingNode):
            lines: dict[str, int] = {}
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else "?"
                here = f"{path}.{name}" if path else name
                line = key.start_mark.line + 1
                if name in lines and name != "?":
                    raise _Refused(line, f"sets {shown(here)} twice (lines "
                                   f"{lines[name]} and {line}): keep one")  # fmt: skip
                lines[name] = line
                stack.append((value, here))
        elif isinstance(node, yaml.SequenceNode):
            stack += [(item, f"{path}[{i}]") for i, item in enumerate(node.value)]
    return paths


def _refusal(exc: YamlRefused) -> _Refused:
    """The guard's refusal, worded for the operator: an alias, or nesting too deep (the
    only rules :func:`_parse` asks of it)."""
    if exc.kind is Refusal.ALIAS:
        return _Refused(exc.line, f"uses the YAML alias *{shown(exc.name, 40)}, which is not "
                        "read: write the value out")  # fmt: skip
    return _Refused(exc.line, f"nests more than {MAX_CONFIG_DEPTH} levels (the settings nest "
                    "four: prices: team_sheets: - location:); check the brackets and "
                    "indentation")  # fmt: skip


def _parse(text: str) -> Any:
    try:  # aliases and nesting, before any node is built (bare anchors expand nothing)
        check_events(text, max_depth=MAX_CONFIG_DEPTH, allow_anchors=True)
    except YamlRefused as exc:
        raise _refusal(exc) from None
    loader = _ConfigLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None
        paths = _key_paths(root)
        try:
            return loader.construct_document(root)
        except _Refused as exc:
            if exc.node is not None:
                exc.problem = f"{paths.get(id(exc.node)) or 'the value'}: {exc.problem}"
            raise
    finally:
        loader.dispose()


def _yaml_problem(exc: yaml.YAMLError) -> str:
    """PyYAML's syntax error as ``, line 3, column 7: is not valid YAML: ...``, without
    the ``in "<unicode string>"`` it cites for text it was handed."""
    mark = getattr(exc, "problem_mark", None)
    where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or "cannot be read"
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    since = f" (line {context_mark.line + 1})" if context_mark is not None else ""
    why = f"{problem} {context}{since}" if context else problem
    return (f"{where}: is not valid YAML: {why}: check the indentation (spaces, not tabs), "
            "the quotes and the brackets there")


def read_yaml(path: str | Path) -> dict[str, Any]:
    """The YAML file ``path`` as a mapping, read safely (see the module's docstring): at
    most :data:`MAX_CONFIG_BYTES`, UTF-8, no aliases, no key set twice, nesting capped.
    Every problem is a :class:`ConfigError` naming the file, the line and what to write."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            raw = f.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise ConfigError(unreadable_config(p, exc)) from exc
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"ftcost-bot: {p} is larger than {MAX_CONFIG_BYTES // 1024} KB; "
                          "the bot's config is a few KB of settings (ftcost.example.yml)")
    try:
        data = _parse(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"ftcost-bot: {p} is not UTF-8 text: save it as UTF-8") from None
    except _Refused as exc:
        line = f", line {exc.line}" if exc.line is not None else ""
        raise ConfigError(f"ftcost-bot: {p}{line}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"ftcost-bot: {p}{_yaml_problem(exc)}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"ftcost-bot: {p} must be a mapping of keys to values")
    return data



# -- numbers YAML writes that pydantic would take silently ----------------------------------
def flat(annotation: Any) -> tuple[Any, ...]:
    """The types a field's annotation allows (a union's members, flattened)."""
    if get_origin(annotation) in (Union, UnionType):
        return tuple(t for arg in get_args(annotation) for t in flat(arg))
    return (annotation,)


def written_numbers(model: type[BaseModel], data: Mapping[Any, Any], path: Loc = ()
                     ) -> Iterator[Problem]:  # fmt: skip
    """What pydantic would take silently where a setting is a number: ``true`` (read as
    1) and ``.inf`` / ``.nan``, or ``"inf"`` as text (``.inf`` disables a bound with none
    above it)."""
    for name, value in data.items():
        field = model.model_fields.get(name) if isinstance(name, str) else None
        if field is not None:  # an unknown key: validation names it
            yield from _number_value(flat(field.annotation), value, (*path, name),
                                     field.default)  # fmt: skip


def number(value: Any) -> float | None:
    """``value`` as a float when it is a number or a number written as text, else None
    (``true`` is not a number here)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):  # text that is no number; an int past a float
        return None if isinstance(value, str) else math.inf


def _number_value(types: tuple[Any, ...], value: Any, loc: Loc, default: Any
                  ) -> Iterator[Problem]:  # fmt: skip
    numeric = bool not in types and (int in types or float in types)
    example = (f"such as {default:g}" if isinstance(default, int | float)
               and not isinstance(default, bool) else "")  # fmt: skip
    written = number(value) if float in types and isinstance(value, str) else None
    if numeric and isinstance(value, bool):
        yield loc, f"{str(value).lower()} is a yes/no value, not a number: write a " \
                   f"number {example}".rstrip()  # fmt: skip
    elif numeric and isinstance(value, float) and not math.isfinite(value):
        yield loc, f"{value} is not a finite number: write one {example}".rstrip()
    elif numeric and written is not None and not math.isfinite(written):
        yield loc, f"{value.strip()!r} is not a finite number: write one {example}".rstrip()
    elif isinstance(value, dict):
        model = next((t for t in types if get_origin(t) is None and isinstance(t, type)
                      and issubclass(t, BaseModel)), None)  # fmt: skip
        if model is not None:
            yield from written_numbers(model, value, loc)
    elif isinstance(value, list):
        items = tuple(a for t in types if get_origin(t) in (list, tuple)
                      for a in flat(get_args(t)[0]))  # fmt: skip
        for i, item in enumerate(value):
            yield from _number_value(items, item, (*loc, i), None)


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The settings section an annotation holds (itself, or a list's items), if any."""
    for t in flat(annotation):
        if get_origin(t) in (list, tuple):
            found = model_in(get_args(t)[0])
            if found is not None:
                return found
        elif get_origin(t) is None and isinstance(t, type) and issubclass(t, BaseModel):
            return t
    return None


__all__ = [
    "MAX_CONFIG_BYTES", "MAX_CONFIG_DEPTH", "ConfigError", "flat", "model_in", "number",
    "read_yaml", "written_numbers",
]  # fmt: skip
