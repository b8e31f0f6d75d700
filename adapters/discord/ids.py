"""Custom ids of the estimate's buttons and card select, at most 100 characters.

A custom id names the action and, when it fits, carries the request it acts on, so a
click works after a restart even if the store lost the message::

    ftc:m:full:mllama-3.1-70b,M2,T5e7,gh100-sxm      switch method to Full
    ftc:s2:mllama-3.1-70b,M2,T5e7,gh100-sxm          double the sequence length
    ftc:g:mllama-3.1-70b,M2,T5e7,gh100-sxm           other cards (select; values are GPU ids)
    ftc:c:mllama-3.1-70b,M2,T5e7,gh100-sxm           show the memory chart

When the request does not fit (a long model id with many non-default fields), the
suffix is left off (``ftc:m:full``) and the click handler looks the request up in the
store under :func:`message_key` of the message the button sits on: Discord sends that
message with every component interaction.

The request code is the request's non-default fields, one ``<key><value>`` per field,
joined by ``,``: enum values as their index in the enum, booleans ``0``/``1``, whole
numbers with trailing zeros as ``<digits>e<zeros>``, other numbers as ``repr(float)``,
catalog ids as they are. Decoding validates through :class:`engine.Request`, and any
malformed code decodes to None (the handler then uses the store).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from pydantic import ValidationError

from adapters.discord.limits import MAX_CUSTOM_ID
from engine import Method, Request
from engine.estimate import question
from engine.request import field_metas

PREFIX: Final = "ftc"

_FIELD_KEYS: Final[dict[str, str]] = {
    name: meta.key for name, meta in field_metas().items() if meta.key
}
"""Each request field's one-character key, declared on the field (``FieldMeta.key``)."""
_KEY_FIELDS: Final = {key: name for name, key in _FIELD_KEYS.items()}
_ID_RE: Final = re.compile(r"^[a-z0-9][a-z0-9.\-]*$")
"""Catalog ids (and ``synthetic-20b``) that can be inlined as they are."""
_CODE_CHARS: Final = r"[A-Za-z0-9.,\-+]+"

METHOD_TEMPLATE: Final = rf"{PREFIX}:m:(?P<method>full|lora|qlora)(?::(?P<req>{_CODE_CHARS}))?"
SEQ_TEMPLATE: Final = rf"{PREFIX}:s2(?::(?P<req>{_CODE_CHARS}))?"
GPU_TEMPLATE: Final = rf"{PREFIX}:g(?::(?P<req>{_CODE_CHARS}))?"
CHART_TEMPLATE: Final = rf"{PREFIX}:c(?::(?P<req>{_CODE_CHARS}))?"


# ------------------------------------------------------------------------------------------
# numbers


def _int_code(value: int) -> str:
    digits = str(value)
    stripped = digits.rstrip("0")
    zeros = len(digits) - len(stripped)
    return f"{stripped}e{zeros}" if zeros >= 3 and stripped else digits


def _int_decode(text: str) -> int:
    if "e" in text:
        mantissa, zeros = text.split("e", 1)
        if not mantissa.isdigit() or not zeros.isdigit():
            raise ValueError(text)
        return int(mantissa) * 10 ** int(zeros)
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


# ------------------------------------------------------------------------------------------
# the request code


def _enum_members(field: str) -> list[Enum] | None:
    annotation = Request.model_fields[field].annotation
    for candidate in getattr(annotation, "__args__", (annotation,)):
        if isinstance(candidate, type) and issubclass(candidate, Enum):
            return list(candidate)
    return None


_ENUMS: Final = {name: members for name in _FIELD_KEYS if (members := _enum_members(name))}
_DEFAULTS: Final = Request(model="x").model_dump()
_FLOATS: Final = frozenset(
    name for name, info in Request.model_fields.items()
    if float in getattr(info.annotation, "__args__", (info.annotation,))
)
"""Fields that carry a float (the rest of the numbers are whole)."""


def encode_request(request: Request) -> str | None:
    """The compact code of ``request`` (its non-default fields, and the ones the user
    said even at their default, so a framework profile does not override them after a
    click), or None when a value cannot be written in the code's alphabet."""
    parts: list[str] = []
    said = request.model_fields_set
    for name, key in _FIELD_KEYS.items():
        value = getattr(request, name)
        default = value == _DEFAULTS[name]
        if name != "model" and default and (name not in said or value is None):
            continue
        if name in _ENUMS:
            text = str(_ENUMS[name].index(value))
        elif isinstance(value, bool):
            text = "1" if value else "0"
        elif isinstance(value, int):
            text = _int_code(value)
        elif isinstance(value, float):
            text = repr(value)
        elif isinstance(value, str) and _ID_RE.match(value):
            text = value
        else:
            return None
        parts.append(key + text)
    return ",".join(parts)


def _decode_value(name: str, text: str) -> Any:
    if name in _ENUMS:
        index = int(text)
        if not 0 <= index < len(_ENUMS[name]):
            raise ValueError(text)
        return _ENUMS[name][index]
    default = _DEFAULTS[name]
    if isinstance(default, bool):
        if text not in ("0", "1"):
            raise ValueError(text)
        return text == "1"
    if name in ("model", "gpu"):
        if not _ID_RE.match(text):
            raise ValueError(text)
        return text
    if name in _FLOATS:
        return float(text)
    return _int_decode(text)


def decode_request(code: str | None) -> Request | None:
    """The request a code carries; None when there is none or it is malformed."""
    if not code:
        return None
    fields: dict[str, Any] = {}
    try:
        for part in code.split(","):
            name = _KEY_FIELDS.get(part[:1])
            if name is None or name in fields:
                return None
            fields[name] = _decode_value(name, part[1:])
        return Request.model_validate(fields)
    except (ValueError, ValidationError, IndexError):
        return None


# ------------------------------------------------------------------------------------------
# custom ids


@dataclass(frozen=True, slots=True)
class Action:
    """What a component does: ``method`` (``value`` = the method), ``seq`` (double it),
    ``gpu`` (the select; the card comes with the interaction) or ``chart`` (show it).
    ``request`` is the inlined request, None when the store has it."""

    kind: str
    value: str | None = None
    request: Request | None = None


def request_code(request: Request) -> str | None:
    """The code every custom id of one estimate message carries, or None when the
    longest of them would break the 100-character limit (the store has the request).
    Under a limit answer it carries the question, which a click solves again
    (``engine.estimate.question``)."""
    code = encode_request(question(request))
    if code is None or len(_LONGEST_BASE) + 1 + len(code) > MAX_CUSTOM_ID:
        return None
    return code


_LONGEST_BASE: Final = f"{PREFIX}:m:{Method.QLORA.value}"


def _with(base: str, code: str | None) -> str:
    return f"{base}:{code}" if code else base


def method_id(method: Method, code: str | None) -> str:
    return _with(f"{PREFIX}:m:{method.value}", code)


def seq_id(code: str | None) -> str:
    return _with(f"{PREFIX}:s2", code)


def gpu_select_id(code: str | None) -> str:
    return _with(f"{PREFIX}:g", code)


def chart_id(code: str | None) -> str:
    return _with(f"{PREFIX}:c", code)


def parse_custom_id(custom_id: str) -> Action | None:
    """The action of one of our custom ids (None for anything else)."""
    for template, kind in ((METHOD_TEMPLATE, "method"), (SEQ_TEMPLATE, "seq"),
                           (GPU_TEMPLATE, "gpu"), (CHART_TEMPLATE, "chart")):
        match = re.fullmatch(template, custom_id)
        if match:
            groups = match.groupdict()
            return Action(kind, groups.get("method"), decode_request(groups.get("req")))
    return None


def message_key_thread(message_id: int | str) -> str:
    """The ``thread`` part of the store key of one estimate message (the request its
    buttons act on when the custom ids could not carry it)."""
    return f"msg:{message_id}"
