"""What a config reader produces, and the bookkeeping of keys read and ignored."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from adapters.trainconfig.load import ConfigError
from engine.request import Framework

MAX_SHOWN_VALUE: Final = 48
"""Characters of a value echoed back in the list of keys read."""


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

    def to_json(self) -> dict[str, Any]:
        """The ``"config"`` member of the JSON document (docs/questions.md)."""
        return {
            "format": self.format.value,
            "framework": self.framework.value,
            "model": self.model[0] if self.model else None,
            "read": [{"key": k.key, "value": k.value, "meaning": k.meaning} for k in self.read],
            "ignored": list(self.ignored),
            "notes": list(self.notes),
        }


def shown(value: object) -> str:
    """A value as the reply echoes it: short, one line."""
    text = str(value).replace("\n", " ")
    return text if len(text) <= MAX_SHOWN_VALUE else text[: MAX_SHOWN_VALUE - 1] + "…"


class Reader:
    """Walks one config: looks keys up, records what each set, and what was left."""

    def __init__(self, doc: dict[str, Any], fmt: ConfigFormat, framework: Framework) -> None:
        self.doc = doc
        self.format = fmt
        self.framework = framework
        self.fields: dict[str, Any] = {}
        self.sources: dict[str, str] = {}
        self.read: list[KeyRead] = []
        self.notes: list[str] = []
        self.model: list[str] = []
        self._used: set[str] = set()

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
        self.read.append(KeyRead(path, shown(value), meaning))
        for name, field_value in fields.items():
            self.fields[name] = field_value
            self.sources[name] = path

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    # -- typed values --------------------------------------------------------------------
    def integer(self, path: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.bad(path, value, "a whole number")
        try:
            number = float(value)
        except ValueError as exc:
            raise self.bad(path, value, "a whole number") from exc
        if number != int(number):
            raise self.bad(path, value, "a whole number")
        return int(number)

    def number(self, path: str, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self.bad(path, value, "a number")
        try:
            return float(value)
        except ValueError as exc:
            raise self.bad(path, value, "a number") from exc

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

    def bad(self, path: str, value: Any, expected: str) -> ConfigError:
        return ConfigError(
            f"{self.format.label} config: {path} is {shown(value)!r}, expected {expected}."
        )

    # -- result --------------------------------------------------------------------------
    def result(self) -> ConfigRead:
        ignored = tuple(k for k in self.doc if k not in self._used)
        return ConfigRead(
            format=self.format,
            framework=self.framework,
            model=tuple(dict.fromkeys(self.model)),
            fields=dict(self.fields),
            read=tuple(self.read),
            ignored=ignored,
            notes=tuple(self.notes),
            sources=dict(self.sources),
        )
