"""Reading a training config's text safely: size cap, no YAML aliases, bounded nesting.

The text comes from users (a file, a Slack snippet, a Discord attachment), so it is
parsed with ``yaml.safe_load`` (JSON is read as YAML) and nothing in it is executed or
imported: torchtune's ``_component_`` paths are read as strings. Before parsing, the
size is capped at :data:`MAX_CONFIG_BYTES` and any anchor or alias is refused (aliases
let a few hundred bytes expand into gigabytes, the "billion laughs"); after parsing the
nesting depth and the number of values are capped too.
"""

from __future__ import annotations

import re
from typing import Any, Final

import yaml

MAX_CONFIG_BYTES: Final = 64 * 1024
"""The largest config read (issue 16): real axolotl/TRL/torchtune configs are 1-10 KB."""
MAX_DEPTH: Final = 16
"""Nesting deeper than this is not a training config."""
MAX_VALUES: Final = 10_000
"""Keys and list items in the whole document, at most."""

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


def load_document(data: str | bytes, name: str = "the config") -> dict[str, Any]:
    """Parse a config's text into a mapping, within the bounds above.

    Raises :class:`ConfigError` for text over 64 KB, text that is not UTF-8, YAML/JSON
    that does not parse, anchors or aliases, a document that is not a mapping, or one
    nested too deep or too large.
    """
    raw = data.encode("utf-8", "replace") if isinstance(data, str) else data
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(
            f"{name} is {len(raw) / 1024:,.0f} KB; ftcost reads configs up to "
            f"{MAX_CONFIG_BYTES // 1024} KB ({FORMATS}). Share the training config itself, "
            "without datasets inlined."
        )
    try:
        text = raw.decode("utf-8") if isinstance(data, bytes) else data
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{name} is not UTF-8 text; ftcost reads {FORMATS}.") from exc
    text = strip_code_fence(text)
    try:
        for event in yaml.parse(text, Loader=yaml.SafeLoader):
            if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
                raise ConfigError(
                    f"{name} uses YAML anchors or aliases (&name / *name), which ftcost does "
                    "not read: write the values out."
                )
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        line = f" (line {where.line + 1})" if where is not None else ""
        raise ConfigError(
            f"{name} is not valid YAML or JSON{line}; ftcost reads {FORMATS}."
        ) from exc
    if not isinstance(doc, dict):
        raise ConfigError(
            f"{name} is not a mapping of settings (key: value); ftcost reads {FORMATS}."
        )
    _check_shape(doc, name)
    return {str(k): v for k, v in doc.items()}


def _check_shape(doc: object, name: str) -> None:
    """Refuse documents nested deeper than ``MAX_DEPTH`` or with over ``MAX_VALUES`` values."""
    stack: list[tuple[object, int]] = [(doc, 1)]
    seen = 0
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ConfigError(f"{name} is nested more than {MAX_DEPTH} levels deep.")
        children: list[object] = []
        if isinstance(node, dict):
            children = list(node.values())
        elif isinstance(node, list):
            children = list(node)
        seen += len(children)
        if seen > MAX_VALUES:
            raise ConfigError(f"{name} has more than {MAX_VALUES:,} values.")
        stack += [(child, depth + 1) for child in children]
