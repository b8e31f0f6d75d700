"""Reading the configuration: the YAML file, then the environment over it, checked as a
whole so that one message lists every problem (:func:`load_config`).

The settings themselves, and the variables that set them, are :mod:`bot.config`'s.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    SecretStr,
    ValidationError,
)
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from bot.config import (
    DEFAULT_PORT,
    DEFAULT_STORE_PATH,
    MAX_CHANGE_RATIO,
    SECRET_ENV,
    Config,
    Secrets,
)
from bot.config_checks import Loc, Problem, error_words, setting_loc, value_problems, where
from bot.config_variables import unknown_variable_warnings
from bot.config_yaml import ConfigError, model_in, number, read_yaml, written_numbers
from bot.store import STORE_LOCATION_FORMS
from catalog.echo import shown
from catalog.hub.settings import TIMEOUT_ENV
from engine.constants import MAX_PRICE_PER_GPU_HOUR


def _secret(env: Mapping[str, str], name: str) -> SecretStr | None:
    value = env.get(name, "").strip()
    return SecretStr(value) if value else None


_ENV_OVERRIDES: dict[str, tuple[str, ...]] = {
    "PORT": ("port",),
    "HEALTH_PORT": ("health_port",),
    "HEALTH_HOST": ("health_host",),
    "SLACK_API_BASE_URL": ("slack_api_base_url",),
    "DISCORD_API_BASE_URL": ("discord", "api_base_url"),
    "FTCOST_STORE": ("store", "path"),
    "STORE_URL": ("store", "path"),  # after FTCOST_STORE: wins when both are set
    "FTCOST_LOG_LEVEL": ("log", "level"),
    "FTCOST_RATE_LIMIT": ("rate_limit_per_minute",),
}


EMPTY_REFUSED_ENV = ("FTCOST_STORE", "STORE_URL")
"""Variables refused when set but empty, as an empty ``store.path`` is: an empty
``STORE_URL`` is a deployment mistake (``STORE_URL=$UNSET``), and falling back to a file in
the working directory would hide it. Other empty overrides are ignored (unset)."""
OTHER_ENV = ("FTCOST_CONFIG", TIMEOUT_ENV, "FTCOST_FRAMEWORK", "FTCOST_TEST_REDIS_URL")
"""Variables read elsewhere: the config file, the terminal's Hub timeout and framework
(``adapters/cli.py``), and the tests' Redis."""
KNOWN_ENV = frozenset((*SECRET_ENV, *_ENV_OVERRIDES, *OTHER_ENV))
"""Every ``FTCOST_*`` / ``SLACK_*`` / ``DISCORD_*`` variable ftcost reads (others warn)."""
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")


def _environment_problems(env: Mapping[str, str], set_by: Mapping[Loc, str]) -> list[Problem]:
    """What the variables that set a value wrote wrong before pydantic reads them: a
    store variable set but empty (:data:`EMPTY_REFUSED_ENV`), and a whole-number setting
    written otherwise (``PORT=3000.0``, which pydantic would take as 3000)."""
    out: list[Problem] = []
    for loc, var in set_by.items():
        value = env.get(var, "").strip()
        if var in EMPTY_REFUSED_ENV and not value:
            out.append((loc, f"{var} is set but empty: write the store's location "
                             f"({STORE_LOCATION_FORMS}), or unset {var} to use "
                             f"{DEFAULT_STORE_PATH}"))  # fmt: skip
        elif _whole_number_field(loc) is not None and not _WHOLE_NUMBER.fullmatch(value):
            out.append((loc, f"must be a whole number, such as {_whole_number_field(loc)} "
                             f"({var} is {shown(value, 40)!r}: write digits only)"))  # fmt: skip
    return out


def _whole_number_field(loc: Loc) -> int | None:
    """An example value when the setting at ``loc`` holds a whole number (its default, or
    :data:`DEFAULT_PORT`), else None."""
    _, field = _field_at(loc)
    if field is None or field.annotation not in (int, int | None):
        return None
    return field.default if isinstance(field.default, int) else DEFAULT_PORT


_CEILINGS = (
    ("max_change_ratio", MAX_CHANGE_RATIO, "5", "would never hold a price back"),
    ("max_price_per_gpu_hour", MAX_PRICE_PER_GPU_HOUR, "100", "would let any price through"),
)


def _ceilings(data: Mapping[str, Any]) -> Iterator[Problem]:
    """The price limits past which nothing is checked (finite, but meaningless)."""
    prices = data.get("prices")
    limits = prices.get("limits") if isinstance(prices, Mapping) else None
    if not isinstance(limits, Mapping):
        return
    for key, top, default, why in _CEILINGS:
        value = number(limits.get(key))
        if value is not None and math.isfinite(value) and value > top:
            yield ("prices", "limits", key), (f"{value:g} {why}: write at most {top:g} "
                                              f"(default {default})")  # fmt: skip


def _field_at(loc: Loc) -> tuple[type[BaseModel] | None, FieldInfo | None]:
    """The section that holds the setting at ``loc``, and the setting's field (None for
    an unknown key, or past the sections: a ``cloud_urls`` entry)."""
    section: type[BaseModel] | None = None
    model: type[BaseModel] | None = Config
    field: FieldInfo | None = None
    for part in loc:
        if isinstance(part, int):  # an item of a list: its model is the list's
            continue
        if model is None:
            return None, None
        section, field = model, model.model_fields.get(part)
        if field is None:
            return section, None
        model = model_in(field.annotation)
    return section, field


def _joined(words: list[str]) -> str:
    """One line for the errors of one setting (a union's members: ``must be a whole
    number or 'auto'``)."""
    if len(words) > 1 and all(w.startswith("must be ") for w in words):
        return "must be " + " or ".join(w.removeprefix("must be ") for w in words)
    return "; ".join(words)


def _validation_problems(exc: ValidationError) -> list[Problem]:
    """pydantic's errors as settings' problems, worded by :func:`error_words`."""
    found: dict[Loc, list[str]] = {}
    for err in exc.errors():
        loc = setting_loc(err["loc"])
        section, field = _field_at(loc)
        default = None if field is None or field.default is PydanticUndefined else field.default
        keys = [k for k in section.model_fields if k != "secrets"] if section else []
        words = error_words(err, loc, default, keys)
        if words not in found.setdefault(loc, []):
            found[loc].append(words)
    return [(loc, _joined(words)) for loc, words in found.items()]


def _problems(
    data: dict[str, Any], leading: list[Problem] | None = None
) -> tuple[list[Problem], Config | None]:
    """Everything wrong with the raw settings ``data`` (at most one line per setting:
    ``leading`` (the environment's own), then the checks of :mod:`bot.config_checks`, then
    pydantic's), and the configuration when nothing is."""
    problems = [*(leading or []), *written_numbers(Config, data), *_ceilings(data),
                *value_problems(data)]  # fmt: skip
    config = None
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        problems += _validation_problems(exc)
    first: dict[Loc, str] = {}
    for loc, text in problems:
        first.setdefault(loc, text)
    return sorted(first.items(), key=_in_order), config if not first else None


_ORDER = {name: i for i, name in enumerate(Config.model_fields)}


def _in_order(problem: Problem) -> int:
    """Problems in the order of the sections (``port`` ... ``hub``); an unknown key last."""
    return _ORDER.get(str(problem[0][0]), len(_ORDER)) if problem[0] else -1


def _with_environment(data: dict[str, Any], env: Mapping[str, str]
                      ) -> tuple[dict[str, Any], dict[Loc, str]]:  # fmt: skip
    """``data`` with the variables of :data:`_ENV_OVERRIDES` that are set written in
    (a copy), and which setting each set. An empty one is as if unset, except those of
    :data:`EMPTY_REFUSED_ENV` (written in empty, to be refused)."""
    merged = dict(data)
    set_by: dict[Loc, str] = {}
    for var, loc in _ENV_OVERRIDES.items():
        value = env.get(var, "").strip()
        if not value and not (var in env and var in EMPTY_REFUSED_ENV):
            continue
        set_by[loc] = var
        target = merged
        for part in loc[:-1]:
            section = target.get(part)
            target[part] = section = dict(section) if isinstance(section, dict) else {}
            target = section
        target[loc[-1]] = value
    return merged, set_by


def _written_in(data: Mapping[str, Any], loc: Loc) -> bool:
    """Whether the file ``data`` sets the setting at ``loc``."""
    for part in loc[:-1]:
        section = data.get(str(part))
        if not isinstance(section, Mapping):
            return False
        data = section
    return loc[-1] in data


def _variable(loc: Loc, set_by: Mapping[Loc, str]) -> str | None:
    return next((v for k, v in set_by.items() if loc[: len(k)] == k), None)


def _refusal(path: str | Path | None, lines: list[tuple[str, bool]]) -> ConfigError:
    """One error for every problem: ``lines`` are (line, from the environment)."""
    parts = ([str(path)] if path is not None and not all(env for _, env in lines) else []) \
        + (["the environment"] if any(env for _, env in lines) else [])  # fmt: skip
    count = f" ({len(lines)} problems)" if len(lines) > 1 else ""
    head = f"ftcost-bot: invalid configuration in {' and '.join(parts)}{count}:"
    return ConfigError("\n".join([head, *(line for line, _ in lines)]))


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Build the configuration from ``path`` (YAML, optional) and ``env`` (default
    ``os.environ``). Raises :class:`ConfigError` with an operator-facing message naming
    every problem found (the YAML's own syntax aside, which stops the reading)."""
    env = os.environ if env is None else env
    if path is None and env.get("FTCOST_CONFIG"):
        path = env["FTCOST_CONFIG"]
    data = read_yaml(path) if path is not None else {}
    lines: list[tuple[str, bool]] = []
    if "secrets" in data:
        data = {k: v for k, v in data.items() if k != "secrets"}
        lines.append(("  secrets: unknown key (secrets are read from the environment only, "
                      "e.g. SLACK_BOT_TOKEN)", False))  # fmt: skip
    merged, set_by = _with_environment(data, env)
    merged["secrets"] = Secrets(**{name.lower(): _secret(env, name) for name in SECRET_ENV})
    problems, config = _problems(merged, _environment_problems(env, set_by))
    for loc, text in problems:
        var = _variable(loc, set_by)
        lines.append((f"  {where(loc)}{f' (set by {var})' if var else ''}: {text}", bool(var)))
    if set_by:  # a bad value in the file that a variable replaces is still an error
        for loc, text in _problems(data)[0]:
            var = _variable(loc, set_by)
            if var is not None:
                lines.append((f"  {where(loc)}: {text} (in the file; {var} replaces it)", False))
    if lines or config is None:
        raise _refusal(path, lines)
    config._source = None if path is None else str(path)
    config._set_by.update({where(loc): var for loc, var in set_by.items()})
    config._over_file.update(where(loc) for loc in set_by if _written_in(data, loc))
    config._variable_warnings = unknown_variable_warnings(env, KNOWN_ENV)
    return config
