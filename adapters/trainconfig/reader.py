"""What a config reader produces, and the bookkeeping of keys read and ignored."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from adapters.query.fields import field_bounds as request_field_bounds
from adapters.trainconfig.load import ConfigError
from catalog.echo import one_line
from engine.choices import Framework
from engine.request import field_meta

MAX_SHOWN_VALUE: Final = 48
"""Characters of a value echoed back in the list of keys read."""
UNSET: Final = "(unset)"
"""The value shown for a key the config does not set, where its absence decides."""


class ConfigFormat(StrEnum):
    """The training configs ftcost reads."""

    AXOLOTL = "axolotl"
    TRL = "trl"
    """TRL/Transformers ``TrainingArguments`` or ``SFTConfig`` (with TRL's model args)."""
    TORCHTUNE = "torchtune"
    LLAMA_FACTORY = "llama-factory"

    @property
    def label(self) -> str:
        return {
            ConfigFormat.AXOLOTL: "axolotl",
            ConfigFormat.TRL: "TRL/Transformers",
            ConfigFormat.TORCHTUNE: "torchtune",
            ConfigFormat.LLAMA_FACTORY: "LLaMA-Factory",
        }[self]


@dataclass(frozen=True, slots=True)
class KeyRead:
    """One config key the estimate used."""

    key: str
    """Dotted path as written (``lora_r``, ``model._component_``)."""
    value: str
    """The value as written, shortened."""
    meaning: str
    """What the estimate took from it (``LoRA rank 32``)."""


@dataclass(frozen=True, slots=True)
class ConfigRead:
    """A training config read into :class:`engine.Request` fields."""

    format: ConfigFormat
    framework: Framework
    model: tuple[str, ...]
    """Model references to try, best first (a Hub id, a catalog name); empty: none named."""
    fields: dict[str, Any]
    """Request fields the config sets (validated when applied)."""
    read: tuple[KeyRead, ...]
    ignored: tuple[str, ...]
    """Top-level keys the estimate does not use (datasets, learning rate, logging...)."""
    notes: tuple[str, ...] = ()
    """How a key was approximated (a file not opened, an optimizer not modelled)."""
    sources: dict[str, str] = field(default_factory=dict)
    """Request field -> the config key it came from, for error messages."""
    defaulted: dict[str, str] = field(default_factory=dict)
    """Request fields the config leaves unset, taken from its trainer's own default
    (:meth:`Reader.default`): field -> whose default (``the Trainer``, ``axolotl``)."""

    def source_label(self, name: str) -> str:
        """Where the request field ``name`` came from, as a message names it: ``the
        config's micro_batch_size``, or ``the Trainer's default per_device_train_batch_size``
        for a key the config leaves unset."""
        key = self.sources.get(name, name)
        if name in self.defaulted:
            return f"{self.defaulted[name]}'s default {key}"
        return f"the config's {key}"

    def to_json(self, model: str | None = None) -> dict[str, Any]:
        """The ``"config"`` member of the JSON document (docs/questions.md); ``model``:
        the config's model reference the estimate used (else its first)."""
        return {
            "format": self.format.value,
            "framework": self.framework.value,
            "model": model or (self.model[0] if self.model else None),
            "read": [{"key": k.key, "value": k.value, "meaning": k.meaning} for k in self.read],
            "ignored": list(self.ignored),
            "notes": list(self.notes),
        }


def shown(value: object) -> str:
    """A value as the reply echoes it: short, one line, spelled as YAML/JSON spell it
    (``null``, ``true``, ``.inf``, ``[a, b]``), never as Python's repr. The reader echoes
    a key's text as the file wrote it (:attr:`Reader.written`); this is for values it
    derived (a DeepSpeed JSON string's members). Control and format characters (an
    escape sequence, a right-to-left override) and markdown links are made inert
    (:func:`catalog.echo.one_line`): they would garble or disguise the reply."""
    return one_line(_flow(value), MAX_SHOWN_VALUE)


def _flow(value: object, depth: int = 0) -> str:
    """``value`` in YAML's flow style; nesting is bounded by the loader's depth cap."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return ".nan" if math.isnan(value) else (".inf" if value > 0 else "-.inf")
    if isinstance(value, int) and abs(value) >= 10**MAX_SHOWN_VALUE:
        return "a number of over 40 digits"  # str() refuses 4,300+ digits
    if isinstance(value, list) and depth < 8:
        return "[" + ", ".join(_flow(v, depth + 1) for v in value[:MAX_SHOWN_VALUE]) + "]"
    if isinstance(value, dict) and depth < 8:
        return "{" + ", ".join(
            f"{_flow(k, depth + 1)}: {_flow(v, depth + 1)}"
            for k, v in list(value.items())[:MAX_SHOWN_VALUE]
        ) + "}"
    if isinstance(value, list | dict):
        return "[…]" if isinstance(value, list) else "{…}"
    return str(value)


def field_bounds(name: str) -> tuple[float, float]:
    """The bounds of the :class:`engine.request.Request` field ``name`` (its pydantic
    ``Field``, read by :func:`adapters.query.fields.field_bounds`), so a config is held to
    the same bounds as a typed query, from one place."""
    bounds = request_field_bounds(name)
    return bounds.low, bounds.high


def plain_number(value: float) -> str:
    """A bound as a message writes it: ``4,096``, ``0.001``, ``1,000,000,000``."""
    if value == int(value) and abs(value) < 1e21:
        return f"{int(value):,}"
    return f"{value:,g}"


def number_range(low: float, high: float, whole: bool) -> str:
    """``a whole number between 1 and 4,096`` (or ``a number ...``)."""
    kind = "a whole number" if whole else "a number"
    return f"{kind} between {plain_number(low)} and {plain_number(high)}"


class Reader:
    """Walks one config: looks keys up, records what each set, and what was left."""

    def __init__(
        self,
        doc: dict[str, Any],
        fmt: ConfigFormat,
        framework: Framework,
        written: Mapping[str, str] | None = None,
    ) -> None:
        self.doc = doc
        self.written: Mapping[str, str] = written or {}
        """Dotted key -> its value's text in the file (:class:`load.Document`)."""
        self.format = fmt
        self.framework = framework
        self.fields: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.read: list[KeyRead] = []
        self.notes: list[str] = []
        self.model: list[str] = []
        self.defaulted: dict[str, str] = {}
        self._used: set[str] = set()
        self._ignored: list[str] = []

    # -- looking up ----------------------------------------------------------------------
    def value(self, path: str) -> Any:
        """The value at a dotted path (None when absent); marks its top-level key seen."""
        node: Any = self.doc
        for part in path.split("."):
            if not isinstance(node, dict) or part not in node:
                return None
            node = node[part]
        return node

    def first(self, *paths: str) -> tuple[str, Any] | None:
        """The first of ``paths`` present with a value other than null."""
        for path in paths:
            value = self.value(path)
            if value is not None:
                return path, value
        return None

    def section(self, path: str) -> dict[str, Any]:
        """A nested mapping (``fsdp_config``, ``model``), empty when absent or not one."""
        value = self.value(path)
        return value if isinstance(value, dict) else {}

    # -- recording -----------------------------------------------------------------------
    def used(self, path: str) -> None:
        self._used.add(path.split(".")[0])

    def take(self, path: str, value: Any, meaning: str, /, **fields: Any) -> None:
        """Record that ``path`` (holding ``value``) set ``fields``, worded as ``meaning``."""
        self.used(path)
        self.read.append(KeyRead(path, self.text(path, value), meaning))
        for name, field_value in fields.items():
            self.fields[name] = field_value
            self.sources[name] = path

    def default(self, path: str, meaning: str, source: str, /, **fields: Any) -> None:
        """Record that ``path``, unset in the config, takes its trainer's default:
        ``per_device_train_batch_size: (unset) → micro-batch 8 (the Trainer's default)``.
        Fields the config already set are left alone."""
        if any(name in self.fields for name in fields):
            return
        self.read.append(KeyRead(path, UNSET, f"{meaning} ({source}'s default)"))
        for name, field_value in fields.items():
            self.fields[name] = field_value
            self.sources[name] = path
            self.defaulted[name] = source

    def absent(self, path: str, meaning: str, /, **fields: Any) -> None:
        """Record what a key's absence means where it decides something (``use_peft:
        (unset) → full fine-tune``), and the ``fields`` it sets."""
        self.read.append(KeyRead(path, UNSET, meaning))
        for name, field_value in fields.items():
            self.fields[name] = field_value
            self.sources[name] = path

    def ignore(self, path: str) -> None:
        """List ``path`` (dotted, inside a section read for other keys) as ignored: the
        config sets it, the estimate has no use for it here."""
        self.used(path)
        if path not in self._ignored:
            self._ignored.append(path)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def text(self, path: str, value: object) -> str:
        """``value`` as messages show it: the key's text as the file wrote it when
        ``value`` is the key's own value, else :func:`shown`; short, one line."""
        written = self.written.get(path)
        if written is not None and self.value(path) is value:
            return shown(written)
        return shown(value)

    # -- typed values --------------------------------------------------------------------
    def whole(self, path: str, value: Any, field: str | None = None) -> int:
        """A whole number: an int, a float with no fraction, or digits in a string.
        Infinite and NaN are refused (YAML's ``.inf``/``.nan``, JSON's ``Infinity``), the
        message giving the :class:`Request` field ``field``'s range when one is named;
        the range itself is checked by :meth:`integer`."""
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        expected = _expected(field, whole=True)
        number = self._finite(path, value, expected)
        if not number.is_integer():
            raise self.bad(path, value, expected)
        return int(number)

    def integer(
        self, path: str, value: Any, field: str, *, low: float | None = None,
        high: float | None = None,
    ) -> int:
        """A whole number within the :class:`Request` field ``field``'s bounds (``low`` /
        ``high`` narrow or replace them)."""
        number = self.whole(path, value, field)
        self._check_range(path, value, number, field, low, high, whole=True)
        return number

    def number(
        self, path: str, value: Any, field: str, *, check_range: bool = True
    ) -> float:
        """A finite number within the :class:`Request` field ``field``'s bounds (only
        named in messages when not ``check_range``); ``-0`` reads as 0."""
        if isinstance(value, int) and not isinstance(value, bool) and check_range:
            self._check_range(path, value, value, field, None, None, whole=False)
        number = self._finite(path, value, _expected(field, whole=False)) + 0.0
        if check_range:
            self._check_range(path, value, number, field, None, None, whole=False)
        return number

    def _finite(self, path: str, value: Any, expected: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.bad(path, value, expected)
        try:
            number = float(value)
        except (ValueError, OverflowError) as exc:  # OverflowError: a 400-digit int
            raise self.bad(path, value, expected) from exc
        if not math.isfinite(number):
            raise ConfigError(
                f"{self.format.label} config: {path} is '{self.text(path, value)}', which is "
                f"not a finite number; expected {expected}. Set {path} to {expected}."
            )
        return number

    def _check_range(
        self, path: str, value: Any, number: float, field: str, low: float | None,
        high: float | None, whole: bool,
    ) -> None:
        field_low, field_high = field_bounds(field)
        low = field_low if low is None else low
        high = field_high if high is None else high
        if not low <= number <= high:
            raise range_error(self.format.label, path, self.text(path, value),
                              field_meta(field).noun, number_range(low, high, whole))

    def flag(self, path: str, value: Any, auto: bool = True) -> bool:
        """A switch: YAML booleans, ``"true"``/``"false"``, and ``"auto"`` read as ``auto``."""
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1"):
            return True
        if isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0"):
            return False
        if isinstance(value, str) and value.strip().lower() == "auto":
            return auto
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        raise self.bad(path, value, "true or false")

    def string(self, path: str, value: Any, expected: str) -> str:
        """A non-empty string (a name, a path); anything else is refused as not ``expected``."""
        if not isinstance(value, str) or not value.strip():
            raise self.bad(path, value, expected)
        return value.strip()

    def bad(self, path: str, value: Any, expected: str) -> ConfigError:
        """The error for a key whose value is not ``expected``: the key, its value as
        written and what to write instead."""
        return ConfigError(
            f"{self.format.label} config: {path} is '{self.text(path, value)}', expected "
            f"{expected}. Set {path} to {expected}."
        )

    # -- result --------------------------------------------------------------------------
    def result(self) -> ConfigRead:
        ignored = tuple(shown(k) for k in [*[k for k in self.doc if k not in self._used],
                                           *self._ignored])
        return ConfigRead(
            format=self.format,
            framework=self.framework,
            model=tuple(dict.fromkeys(self.model)),
            fields=dict(self.fields),
            read=tuple(self.read),
            ignored=ignored,
            notes=tuple(self.notes),
            sources=dict(self.sources),
            defaulted=dict(self.defaulted),
        )


def _expected(field: str | None, whole: bool) -> str:
    """``a whole number between 1 and 4,096`` for a :class:`Request` field, else the kind."""
    if field is None:
        return "a whole number" if whole else "a number"
    return number_range(*field_bounds(field), whole)


def range_error(label: str, path: str, written: str, noun: str, allowed: str) -> ConfigError:
    """The error for a config key out of range: the key, its value as written, the
    allowed range in words, and what to write (``set max_steps to a whole number between
    1 and 1,000,000,000``)."""
    return ConfigError(
        f"{label} config: {path} = {written} is out of range: the {noun} must be {allowed}. "
        f"Set {path} to {allowed}."
    )
