"""Settings of the Hugging Face Hub resolver (the bot's ``hub:`` config section).

The environment is read the way the Hub's own tools (``huggingface_hub``,
``src/huggingface_hub/constants.py`` and ``utils/_auth.py``) read it:

- ``HF_ENDPOINT``: the Hub's base URL (default ``https://huggingface.co``).
- ``HF_TOKEN``, else the token file ``hf auth login`` writes: ``HF_TOKEN_PATH``, else
  ``$HF_HOME/token``, where ``HF_HOME`` defaults to ``$XDG_CACHE_HOME/huggingface``, i.e.
  ``~/.cache/huggingface``.
- ``HF_HUB_OFFLINE`` (or the older ``TRANSFORMERS_OFFLINE``) set to 1/ON/YES/TRUE: no
  request goes to the Hub; models already in the cache still resolve.

The terminal's own ``FTCOST_HUB_TIMEOUT`` (seconds per request, 0.1 to 120) is read by
:meth:`HubSettings.from_environment`, which refuses any other value naming the variable;
the bot's is its ``hub.timeout_s`` setting, bounded the same way.

The token is never part of these settings, so it never lands in a YAML file or a log line.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator

from catalog.echo import shown
from catalog.hub.errors import HubError, HubErrorKind

log = logging.getLogger("ftcost.hub")

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_ENV = "HF_ENDPOINT"
TOKEN_ENV = "HF_TOKEN"
TOKEN_PATH_ENV: Final = "HF_TOKEN_PATH"
HOME_ENV: Final = "HF_HOME"
OFFLINE_ENVS: Final = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
"""Either one true switches the Hub off (``huggingface_hub.constants.HF_HUB_OFFLINE``)."""
TRUE_VALUES: Final = frozenset({"1", "ON", "YES", "TRUE"})
"""What counts as "set" for a switch (``huggingface_hub.constants.ENV_VARS_TRUE_VALUES``)."""
MAX_TOKEN_FILE_BYTES: Final = 4096
"""A token file longer than this is not a token (a Hub token is about 40 characters)."""
TIMEOUT_ENV: Final = "FTCOST_HUB_TIMEOUT"
"""The terminal's Hub timeout in seconds (the bot's is its ``hub.timeout_s`` setting)."""
TIMEOUT_SETTING: Final = "the bot's hub.timeout_s setting"
"""What sets the timeout of settings not read by :meth:`HubSettings.from_environment`."""
MIN_TIMEOUT_S: Final = 0.1
MAX_TIMEOUT_S: Final = 120.0
DEFAULT_TIMEOUT_S: Final = 10.0
MIN_CACHE_TTL_DAYS: Final = 1 / (24 * 60)
"""One minute."""


class HubSettingsError(ValueError):
    """A Hub setting from the environment that cannot be used, worded for the operator."""


def token_path() -> Path:
    """Where ``hf auth login`` keeps the token: ``HF_TOKEN_PATH``, else ``$HF_HOME/token``
    (``HF_HOME`` default: ``$XDG_CACHE_HOME/huggingface``, else ``~/.cache/huggingface``)."""
    explicit = os.environ.get(TOKEN_PATH_ENV, "").strip()
    if explicit:
        return Path(os.path.expandvars(explicit)).expanduser()
    home = os.environ.get(HOME_ENV, "").strip()
    if not home:
        cache = os.environ.get("XDG_CACHE_HOME", "").strip() or os.path.join("~", ".cache")
        home = os.path.join(cache, "huggingface")
    return Path(os.path.expandvars(home)).expanduser() / "token"


def read_token_file(path: Path) -> str | None:
    """The token stored in ``path``; None when there is no file or it holds no usable token
    (unreadable, not UTF-8, empty, over :data:`MAX_TOKEN_FILE_BYTES` or more than one line:
    logged, never raised, so a broken file only means anonymous requests)."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_TOKEN_FILE_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("hub token file %s unreadable (%s): no token sent", path, exc.strerror)
        return None
    try:
        text = raw.decode("utf-8").strip()
    except UnicodeDecodeError:
        text = ""
    if len(raw) > MAX_TOKEN_FILE_BYTES or not text or any(c.isspace() for c in text):
        log.warning("hub token file %s does not hold one token: no token sent", path)
        return None
    return text


def offline_switch() -> str | None:
    """The environment variable that switches the Hub off (``HF_HUB_OFFLINE=1``), or None."""
    for name in OFFLINE_ENVS:
        if os.environ.get(name, "").strip().upper() in TRUE_VALUES:
            return name
    return None


def _timeout_from(raw: str) -> float:
    """``FTCOST_HUB_TIMEOUT``'s text as seconds, or :class:`HubSettingsError` saying what
    is wrong and what to write."""
    how = (f"write seconds from {MIN_TIMEOUT_S:g} to {MAX_TIMEOUT_S:g}, e.g. "
           f"{TIMEOUT_ENV}=30 (default {DEFAULT_TIMEOUT_S:g})")  # fmt: skip
    try:
        value = float(raw)
    except ValueError:
        raise HubSettingsError(f"{TIMEOUT_ENV}={shown(raw, 40)!r} is not a number: "
                               f"{how}") from None  # fmt: skip
    if not math.isfinite(value):
        raise HubSettingsError(f"{TIMEOUT_ENV}={shown(raw, 40)} is not a finite number: {how}")
    if value < MIN_TIMEOUT_S:
        raise HubSettingsError(f"{TIMEOUT_ENV}={value:g} is below the minimum, "
                               f"{MIN_TIMEOUT_S:g} s: {how}")  # fmt: skip
    if value > MAX_TIMEOUT_S:
        raise HubSettingsError(f"{TIMEOUT_ENV}={value:g} is above the maximum, "
                               f"{MAX_TIMEOUT_S:g} s: {how}")  # fmt: skip
    return value


class HubSettings(BaseModel):
    """How the resolver talks to the Hub and how long it remembers answers."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    endpoint: str | None = None
    """Base URL of the Hub; None reads ``HF_ENDPOINT`` (else ``https://huggingface.co``)."""
    timeout_s: float = Field(default=DEFAULT_TIMEOUT_S, ge=MIN_TIMEOUT_S, le=MAX_TIMEOUT_S)
    """Seconds each Hub request may take (``config.json``, the safetensors index...): 0.1
    to 120. In less not even a mirror next to the bot (``HF_ENDPOINT``) answers reliably,
    so every Hub model would time out; the public Hub wants a few seconds."""
    cache_ttl_days: float = Field(default=7.0, ge=MIN_CACHE_TTL_DAYS, le=365)
    """How long a resolved model is remembered in the state store: 1 minute (0.000694445)
    to a year (365). Shorter would ask the Hub again for every follow-up and button click."""
    negative_ttl_minutes: float = Field(default=10.0, ge=0, le=24 * 60)
    """How long "no such model" / "family not supported" / "broken config" answers are
    remembered (0: never). Timeouts, outages and token problems are never remembered."""

    _timeout_setting: str = PrivateAttr(default=TIMEOUT_SETTING)

    @classmethod
    def from_environment(cls, env: Mapping[str, str] | None = None) -> HubSettings:
        """The terminal's settings: ``timeout_s`` from ``FTCOST_HUB_TIMEOUT`` in ``env``
        (default ``os.environ``; unset or blank: 10 s). Raises :class:`HubSettingsError`
        naming the variable, the value and the range when it is not a number of seconds
        from :data:`MIN_TIMEOUT_S` to :data:`MAX_TIMEOUT_S`."""
        env = os.environ if env is None else env
        raw = env.get(TIMEOUT_ENV, "").strip()
        settings = cls() if not raw else cls(timeout_s=_timeout_from(raw))
        settings._timeout_setting = TIMEOUT_ENV
        return settings

    @property
    def timeout_setting(self) -> str:
        """What sets ``timeout_s``, for a timeout's message ("... raises the limit"):
        ``FTCOST_HUB_TIMEOUT`` for :meth:`from_environment`, else
        :data:`TIMEOUT_SETTING`."""
        return self._timeout_setting

    @field_validator("endpoint")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    def resolved_endpoint(self) -> str:
        """The endpoint in force: the setting, else ``HF_ENDPOINT``, else the public Hub."""
        if self.endpoint:
            return self.endpoint
        env = os.environ.get(ENDPOINT_ENV, "").strip()
        return (env or DEFAULT_ENDPOINT).rstrip("/")

    @staticmethod
    def token() -> str | None:
        """``HF_TOKEN`` from the environment, else the token file ``hf auth login`` wrote
        (:func:`token_path`); None when neither holds one."""
        value = os.environ.get(TOKEN_ENV, "").strip()
        return value or read_token_file(token_path())

    @staticmethod
    def require_online(ref: str) -> None:
        """Raise a :class:`HubError` (``offline``) naming the variable when the Hub is
        switched off; ``ref`` is the ``org/name[@rev]`` that would have been asked for."""
        switch = offline_switch()
        if switch is not None:
            raise HubError(
                HubErrorKind.OFFLINE,
                f"{ref} is not in ftcost's cache and the Hugging Face Hub is switched off "
                f"here ({switch}={os.environ[switch].strip()}), so it cannot be looked up. "
                "Pick a catalog model (say `models` for the list), or unset "
                f"{switch} where ftcost runs to resolve Hub models.",
                ref,
            )
