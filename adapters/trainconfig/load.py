"""Reading a training config's text safely: size cap, no YAML aliases, bounded nesting.

The text comes from users (a file, a Slack snippet, a Discord attachment), so it is
parsed with ``yaml.safe_load`` (JSON is read as YAML) and nothing in it is executed or
imported: torchtune's ``_component_`` paths are read as strings. Before parsing, the
size is capped at :data:`MAX_CONFIG_BYTES`; then PyYAML's event stream (which is not
recursive) is checked before any node is built, by the guard shared with the other YAML
readers (:func:`catalog.safe_yaml.check_events`): any anchor or alias is refused
(aliases let a few hundred bytes expand into gigabytes, the "billion laughs"), and the
nesting depth (:data:`MAX_DEPTH`) and the number of values (:data:`MAX_VALUES`) are
capped, so building the nodes (recursive in PyYAML) cannot reach Python's recursion
limit.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass
from typing import Any, Final

import yaml

from catalog import echo
from catalog.safe_yaml import Refusal, YamlRefused, check_events

MAX_CONFIG_BYTES: Final = 64 * 1024
"""The largest config read (issue 16): real axolotl/TRL/torchtune configs are 1-10 KB."""
MAX_DEPTH: Final = 16
"""Nesting deeper than this is not a training config."""
MAX_VALUES: Final = 20_000
"""Keys, values and list items in the whole document, at most (a real config has a few
hundred; 64 KB of ``[1,1,1,...]`` would be 32,000)."""

FORMATS: Final = (
    "an axolotl YAML, a TRL/Transformers TrainingArguments or SFTConfig (YAML or JSON), "
    "a torchtune recipe config or a LLaMA-Factory YAML"
)
"""The formats read, as error messages name them."""

_FENCE = re.compile(r"^\s*```[\w+-]*[ \t]*\n(?P<body>.*?)\n?```\s*$", re.DOTALL)


class ConfigError(ValueError):
    """A config that cannot be read; the message says what was wrong and what is read."""


def strip_code_fence(text: str) -> str:
    """The body of a Markdown code block (```yaml ... ```), or ``text`` unchanged."""
    match = _FENCE.match(text)
    return match.group("body") if match else text


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed config: its values, and each mapping value's text as the file wrote it."""

    values: dict[str, Any]
    written: dict[str, str]
    """Dotted key path (``deepspeed.zero_optimization.stage``) -> the value's text in the
    file: a scalar's characters without quotes (``.inf``, ``NaN``, ``abc``), a list's or
    mapping's source (``[null, "v_proj"]``). Messages quote these, never Python's repr."""


def load_document(data: str | bytes, name: str = "the config") -> dict[str, Any]:
    """Parse a config's text into a mapping, within the bounds above (see :func:`load`)."""
    return load(data, name).values


def load(data: str | bytes, name: str = "the config") -> Document:
    """Parse a config's text into a :class:`Document`, within the bounds above.

    Raises :class:`ConfigError` for text over 64 KB, text that is not UTF-8, YAML/JSON
    that does not parse, anchors or aliases, a document that is not a mapping, one nested
    more than :data:`MAX_DEPTH` levels or with more than :data:`MAX_VALUES` values, and
    a value YAML cannot construct (a 5,000-digit integer, a date such as 2024-13-45).
    """
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    if len(raw) > MAX_CONFIG_BYTES:
        raise too_large(name)
    try:
        text = raw.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{name} is not UTF-8 text; ftcost reads {FORMATS}.") from exc
    text = strip_code_fence(text)
    if name.lower().endswith(".toml"):
        raise not_toml(name)
    try:
        check_events(text, max_depth=MAX_DEPTH, max_values=MAX_VALUES)
        # The events were checked (no aliases, bounded depth), so building the nodes
        # (recursive in PyYAML) stays shallow; RecursionError is caught all the same.
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
            doc = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except YamlRefused as exc:
        raise _refusal(exc, name) from None
    except _DuplicateKey as exc:
        raise ConfigError(exc.message(name)) from None
    except yaml.YAMLError as exc:
        if _looks_like_toml(text):
            raise not_toml(name) from exc
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(
            f"{name} is not valid YAML or JSON{line}; ftcost reads {FORMATS}."
        ) from exc
    except RecursionError as exc:
        raise _too_deep(name) from exc
    except (ValueError, OverflowError) as exc:
        # PyYAML builds ints, floats and dates with Python's own constructors.
        digits = sys.get_int_max_str_digits()
        raise ConfigError(
            f"{name} has a value YAML cannot read ({str(exc).split(';')[0]}); write "
            f"numbers with at most {digits:,} digits and dates as YYYY-MM-DD. ftcost "
            f"reads {FORMATS}."
        ) from exc
    if not isinstance(doc, dict) or not isinstance(node, yaml.MappingNode):
        if _looks_like_toml(text):
            raise not_toml(name)
        raise ConfigError(
            f"{name} is not a mapping of settings (key: value); ftcost reads {FORMATS}."
        )
    return Document({_key(k): v for k, v in doc.items()}, _written(node, text))


class _DuplicateKey(Exception):
    """A mapping that names a key twice: each time as written, and its line (from 1)."""

    def __init__(self, keys: tuple[str, str], lines: tuple[str, str]) -> None:
        super().__init__(keys[1])
        self.keys, self.lines = keys, lines

    def message(self, name: str) -> str:
        (first, second), (line, again) = self.keys, self.lines
        said = (f"sets {second} twice ({line} and {again})" if first == second else
                f"sets {first} ({line}) and {second} ({again}), which are read as one key")
        return (f"{name} {said} to different values, so one of them would be ignored: keep "
                "the one you mean and delete the other.")


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a mapping that names a key twice (YAML's rule, which
    PyYAML does not keep: the last value would silently win). JSON is read as YAML, so a
    JSON object's repeated key is refused too."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge" or not isinstance(
                key_node, yaml.ScalarNode
            ):
                continue  # a merge key's values may be overridden; a complex key is refused
            key = self.construct_object(key_node)  # a scalar: hashable
            if key in seen:
                first, first_value = seen[key]
                if self.construct_object(first_value, deep=True) == self.construct_object(
                    value_node, deep=True
                ):
                    continue  # the same value twice (pasted configs repeat keys): harmless
                raise _DuplicateKey(
                    (echo.shown(first.value), echo.shown(key_node.value)),
                    _where(first, key_node),
                )
            seen[key] = (key_node, value_node)
        return super().construct_mapping(node, deep)


def _where(first: yaml.Node, again: yaml.Node) -> tuple[str, str]:
    """Where two keys stand: ``line 3`` and ``line 9``, or with their columns where one
    line holds both (a one-line JSON document)."""
    one, two = first.start_mark, again.start_mark
    if one.line == two.line:
        return (f"line {one.line + 1}, column {one.column + 1}",
                f"line {two.line + 1}, column {two.column + 1}")
    return f"line {one.line + 1}", f"line {two.line + 1}"


_TOML_TABLE = re.compile(r"^\s*\[\[?[A-Za-z0-9_.\"' -]+\]\]?\s*(#.*)?$", re.MULTILINE)
_TOML_PAIR = re.compile(r"^\s*[A-Za-z0-9_.\"'-]+\s*=\s*\S", re.MULTILINE)
TOML_EXAMPLE: Final = (
    "ftcost torchtitan llama3_8b.toml full 8x h100 --training.local_batch_size 1 "
    "--training.seq_len 8192 --training.steps 1000"
)


def _looks_like_toml(text: str) -> bool:
    """TOML's ``[section]`` headers with ``key = value`` lines (torchtitan's configs)."""
    return bool(_TOML_TABLE.search(text)) and bool(_TOML_PAIR.search(text))


def not_toml(name: str) -> ConfigError:
    """The error for a TOML file (torchtitan's train configs): not read, what to type."""
    return ConfigError(
        f"{name} is TOML (torchtitan's config format), which ftcost does not read as a "
        "config; it reads " + FORMATS + ". Type its settings instead, as torchtitan's "
        f"flags or words: `{TOML_EXAMPLE}` (the file name llama3_8b.toml names the model)."
    )


def _key(key: object) -> str:
    """A top-level key as YAML spells it (``null``, ``true``, ``.inf``), not as Python."""
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, float) and not math.isfinite(key):
        return ".nan" if math.isnan(key) else ".inf" if key > 0 else "-.inf"
    return str(key)


def too_large(name: str, size: int | None = None) -> ConfigError:
    """The error for a config of ``size`` bytes over :data:`MAX_CONFIG_BYTES` (None: the
    size is unknown, only that it is larger: a pipe, ``/dev/zero``, a cut-off read)."""
    how_big = (f"{size / 1024:,.0f} KB" if size is not None and size > MAX_CONFIG_BYTES
               else f"larger than {MAX_CONFIG_BYTES // 1024} KB")
    return ConfigError(
        f"{name} is {how_big}; ftcost reads configs up to {MAX_CONFIG_BYTES // 1024} KB "
        f"({FORMATS}). Share the training config itself, without datasets inlined."
    )


def _too_deep(name: str) -> ConfigError:
    return ConfigError(
        f"{name} is nested more than {MAX_DEPTH} levels deep; a training config nests a "
        "few (fsdp_config:, model:). Check its brackets and indentation."
    )


def _refusal(exc: YamlRefused, name: str) -> ConfigError:
    """The refusal of :func:`catalog.safe_yaml.check_events`, worded for the person who
    shared the config."""
    if exc.kind is Refusal.DEPTH:
        return _too_deep(name)
    if exc.kind is Refusal.VALUES:
        return ConfigError(
            f"{name} has more than {MAX_VALUES:,} values (keys and list items); a "
            "training config has a few hundred. Share the config without "
            "datasets or prompts inlined."
        )
    return ConfigError(
        f"{name} uses YAML anchors or aliases (&name / *name), which ftcost does "
        "not read: write the values out."
    )


def _written(root: yaml.MappingNode, text: str) -> dict[str, str]:
    """Each mapping value's text as written, by dotted key path (see :class:`Document`)."""
    written: dict[str, str] = {}
    stack: list[tuple[yaml.MappingNode, str]] = [(root, "")]
    while stack:
        node, prefix = stack.pop()
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            path = f"{prefix}{key.value}"
            if isinstance(value, yaml.ScalarNode):
                written[path] = value.value
            elif value.flow_style:  # [q_proj, v_proj] as written; a block list is
                written[path] = text[value.start_mark.index:value.end_mark.index]
            # echoed in flow style from its values (reader.shown), not as "- a - b"
            if isinstance(value, yaml.MappingNode):
                stack.append((value, path + "."))
    return written
