"""The bot's configuration: secrets from the environment, everything else from YAML.

Secrets (tokens, the signing secret) are read **only** from the environment and
held as :class:`pydantic.SecretStr`, so neither ``repr()`` nor a validation
error ever shows them. Everything else has a default, may be set in an optional
YAML file (``python -m bot --config bot.yml``) validated with ``extra="forbid"``
(an unknown or misspelt key is an error naming it), and a few deployment knobs
(``PORT``, ``HEALTH_PORT``, ``STORE_URL``, ``SLACK_API_BASE_URL``) may be
overridden by the environment, which wins over the file.

Environment variables:

==========================  =========================================================
``SLACK_BOT_TOKEN``          ``xoxb-...``: turns Slack on
``SLACK_APP_TOKEN``          ``xapp-...``: Slack in Socket Mode (no public URL needed)
``SLACK_SIGNING_SECRET``     Slack in HTTP mode (when there is no app token)
``DISCORD_TOKEN``            turns Discord on (runner added by the Discord adapter)
``SLACK_API_BASE_URL``       Web API base URL (default ``https://slack.com/api/``)
``PORT``                     HTTP mode port (default 3000)
``HEALTH_PORT``              a ``/healthz``-only server when there is no HTTP server
``HEALTH_HOST``              the interface it listens on (default 127.0.0.1)
``STORE_URL``                the state store: ``redis://[:password@]host:6379/0``
                             (``rediss://``, ``unix://``) or a SQLite file path /
                             ``sqlite:///path`` (default ``ftcost-bot.sqlite3``)
``FTCOST_STORE``             the same, older name (``STORE_URL`` wins when both are set)
``FTCOST_CONFIG``            the YAML file, when ``--config`` is not given
``FTCOST_LOG_LEVEL``         ``DEBUG``/``INFO``/``WARNING``/...
``FTCOST_RATE_LIMIT``        commands per person per minute (default 20; 0: no limit)
``HF_ENDPOINT``              the Hugging Face Hub (default ``https://huggingface.co``)
``HF_TOKEN``                 a Hub read token, for gated or private ``org/name`` models
==========================  =========================================================
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Mapping
from enum import StrEnum
from pathlib import Path
from types import UnionType
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from bot.config_yaml import ConfigError, read_yaml
from bot.prices import PricesConfig
from bot.store import StoreError, redact_url
from bot.store_factory import open_store_from
from catalog.echo import shown
from catalog.hub.settings import HubSettings
from engine.constants import MAX_PRICE_PER_GPU_HOUR

DEFAULT_SLACK_API_BASE_URL = "https://slack.com/api/"
DEFAULT_PORT = 3000
DEFAULT_STORE_PATH = "ftcost-bot.sqlite3"
MAX_CHANGE_RATIO = 100.0
"""``prices.limits.max_change_ratio`` at most: past this the 5x hold-back never holds."""
MAX_SHARDS = 10_000
"""``discord.shard_count`` at most (Discord wants a shard per 2,500 servers at most, so
this serves 25 million)."""

SECRET_ENV = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN")
"""Environment variables that hold secrets; never read from YAML, never logged."""

NO_CREDENTIALS_MESSAGE = """\
ftcost-bot: no chat platform is configured. Set the variables for at least one:

  Slack, Socket Mode (no public URL needed):
      SLACK_BOT_TOKEN=xoxb-...      (OAuth & Permissions > Bot User OAuth Token)
      SLACK_APP_TOKEN=xapp-...      (Basic Information > App-Level Tokens, scope connections:write)

  Slack, HTTP mode (Slack POSTs to http(s)://YOUR-HOST:$PORT/slack/events):
      SLACK_BOT_TOKEN=xoxb-...
      SLACK_SIGNING_SECRET=...      (Basic Information > App Credentials > Signing Secret)

  Discord:
      DISCORD_TOKEN=...             (Developer Portal > Bot > Token)

docs/slack.md and docs/discord.md show how to create the apps."""


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SlackMode(StrEnum):
    SOCKET = "socket"
    HTTP = "http"


class SlackSettings(_Section):
    """The ``slack:`` section of the YAML file."""

    command: str = Field(default="/ftcost", pattern=r"^/[a-z0-9_-]{1,31}$")
    """The slash command, as declared in the app manifest."""
    events_path: str = Field(default="/slack/events", pattern=r"^/\S*$")
    """HTTP mode: the path Slack POSTs commands, events and interactions to."""
    host: str = "0.0.0.0"
    """HTTP mode: the interface to listen on."""
    rate_limit_retries: int = Field(default=5, ge=0, le=20)
    """How often a Web API call answered 429 is retried after its ``Retry-After``."""
    followup_errors: Literal["ephemeral", "ignore"] = "ephemeral"
    """A thread reply the parser can't read: tell its author privately, or stay quiet."""
    max_cards: int = Field(default=6, ge=1, le=6)
    """Rows of the card table shown in a message (Slack keeps it readable at six)."""
    reply_concurrency: int = Field(default=4, ge=1, le=256)
    """Replies being prepared and posted at once; more wait their turn (after their
    acknowledgement). Small keeps acknowledgements fast under a burst."""


class StoreSettings(_Section):
    """The ``store:`` section."""

    path: str = DEFAULT_STORE_PATH
    """Where the state lives (``STORE_URL`` overrides it): a SQLite file (created on first
    start), ``sqlite:///path`` or ``:memory:`` (tests); or Redis, for several replicas:
    ``redis://[:password@]host:6379/0``, ``rediss://...`` (TLS), ``unix:///path?db=0``.
    Prefer ``STORE_URL`` for a URL with a password (keep it out of the YAML file)."""
    seen_ttl_hours: float = Field(default=24.0, gt=0, le=24 * 30)
    """How long an event id is remembered for retry de-duplication (Slack retries within
    minutes; a day is ample)."""
    thread_ttl_days: float = Field(default=90.0, gt=0, le=3650)
    """Thread contexts untouched this long are purged."""
    purge_interval_minutes: float = Field(default=60.0, gt=0, le=7 * 24 * 60)

    @field_validator("path")
    @classmethod
    def _known_store(cls, value: str) -> str:
        try:
            open_store_from(value)  # checks the form only: nothing is opened
        except StoreError as exc:  # the message never repeats the value (a password)
            raise ValueError(str(exc)) from None
        return value

    @property
    def shown(self) -> str:
        """The location for logs and ``check-config``, any password as ``***``."""
        return redact_url(self.path)


class DiscordSettings(_Section):
    """The ``discord:`` section of the YAML file."""

    api_base_url: str = "https://discord.com/api/v10"
    """Where the Discord REST API lives (``DISCORD_API_BASE_URL``; a stand-in for tests).
    The gateway is discovered from the same host."""
    message_content: bool = False
    """Plain messages in an estimate's thread are follow-ups. Needs the privileged
    Message Content intent enabled in the Developer Portal; otherwise only mentions are."""
    shard_count: int | Literal["auto"] | None = None
    """``None``: one connection; a number or ``auto``: ``AutoShardedClient``."""
    shard_ids: list[int] | None = None
    """The shards this process runs (needs a numeric ``shard_count``)."""
    thread_auto_archive_minutes: Literal[60, 1440, 4320, 10080] = 1440

    @field_validator("api_base_url")
    @classmethod
    def _http_url(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value.rstrip("/")

    @field_validator("shard_count")
    @classmethod
    def _positive(cls, value: int | str | None) -> int | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("must be at least 1 (or 'auto')")
        if isinstance(value, int) and value > MAX_SHARDS:
            raise ValueError(f"must be at most {MAX_SHARDS:,} (Discord wants one shard per "
                             "2,500 servers at most; 'auto' lets Discord choose)")  # fmt: skip
        return value

    @model_validator(mode="after")
    def _shards_in_range(self) -> DiscordSettings:
        if self.shard_ids is not None:
            if not isinstance(self.shard_count, int):
                raise ValueError("shard_ids needs a numeric shard_count")
            bad = [i for i in self.shard_ids if not 0 <= i < self.shard_count]
            if bad:
                raise ValueError(
                    f"shard_ids {shown(bad)} are not below shard_count {self.shard_count}"
                )
            if len(set(self.shard_ids)) != len(self.shard_ids):
                raise ValueError("shard_ids lists a shard twice: list each once")
        return self


class LogSettings(_Section):
    """The ``log:`` section."""

    level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["kv", "json"] = "kv"
    """``kv``: ``key=value`` lines; ``json``: one JSON object per line."""

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper() if isinstance(value, str) else value


class Secrets(BaseModel):
    """Credentials from the environment. ``repr`` shows ``SecretStr('**********')``."""

    model_config = ConfigDict(frozen=True)

    slack_bot_token: SecretStr | None = None
    slack_app_token: SecretStr | None = None
    slack_signing_secret: SecretStr | None = None
    discord_token: SecretStr | None = None

    def values(self) -> list[str]:
        """Every secret that is set (for log redaction)."""
        out = []
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is not None and value.get_secret_value():
                out.append(value.get_secret_value())
        return out


class Config(_Section):
    """The whole configuration. Build it with :func:`load_config`."""

    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    """HTTP mode: the port of ``/slack/events`` and ``/healthz`` (0 picks a free one)."""
    health_port: int | None = Field(default=None, ge=0, le=65535)
    """A ``/healthz``-only server, for Socket Mode / Discord-only deployments."""
    health_host: str = "127.0.0.1"
    """The interface of the ``health_port`` server (the image sets ``HEALTH_HOST=0.0.0.0``)."""
    slack_api_base_url: str = DEFAULT_SLACK_API_BASE_URL
    """Where the Slack Web API lives (a stand-in for tests and benchmarks)."""
    rate_limit_per_minute: int = Field(default=20, ge=0, le=100_000)
    """Commands one person may send per minute (slash commands, mentions, follow-ups,
    button clicks), shared by replicas through the store; 0 turns the limit off."""
    shutdown_timeout_s: float = Field(default=20.0, gt=0, le=600)
    """On SIGTERM: how long replies in flight may take to finish before the process
    exits anyway. Keep it under the orchestrator's grace period before SIGKILL: 30 s in
    Kubernetes, ``stop_grace_period`` in Compose (30 s in ours), but only 10 s for a plain
    ``docker stop`` (use ``docker stop -t 30``)."""
    estimate_threads: int = Field(default=0, ge=0, le=8)
    """Threads that run the estimator; 0 runs it on the event loop (it takes a few
    milliseconds, and the GIL makes a thread compete with the loop anyway)."""
    slack: SlackSettings = SlackSettings()
    discord: DiscordSettings = DiscordSettings()
    store: StoreSettings = StoreSettings()
    log: LogSettings = LogSettings()
    prices: PricesConfig = PricesConfig()
    hub: HubSettings = HubSettings()
    """Hugging Face Hub models (``org/name``): ``timeout_s``, ``cache_ttl_days`` (7),
    ``negative_ttl_minutes`` (10), ``endpoint`` (else ``HF_ENDPOINT``)."""
    """GPU price refresh and announcements (docs/prices.md)."""
    secrets: Secrets = Field(default_factory=Secrets, exclude=True)

    @field_validator("slack_api_base_url")
    @classmethod
    def _trailing_slash(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError("must be an http:// or https:// URL")
        return value if value.endswith("/") else value + "/"

    # -- what is configured ---------------------------------------------------------------
    @property
    def slack_enabled(self) -> bool:
        return self.secrets.slack_bot_token is not None

    @property
    def slack_mode(self) -> SlackMode | None:
        if not self.slack_enabled:
            return None
        return SlackMode.SOCKET if self.secrets.slack_app_token is not None else SlackMode.HTTP

    @property
    def discord_enabled(self) -> bool:
        return self.secrets.discord_token is not None

    def check_credentials(self) -> None:
        """Raise :class:`ConfigError` unless at least one platform is fully configured."""
        s = self.secrets
        if s.slack_bot_token is None and (s.slack_app_token or s.slack_signing_secret):
            given = "SLACK_APP_TOKEN" if s.slack_app_token else "SLACK_SIGNING_SECRET"
            raise ConfigError(
                f"ftcost-bot: {given} is set but SLACK_BOT_TOKEN is not. Set SLACK_BOT_TOKEN "
                "(xoxb-..., OAuth & Permissions > Bot User OAuth Token)."
            )
        if (
            s.slack_bot_token is not None
            and s.slack_app_token is None
            and (s.slack_signing_secret is None)
        ):
            raise ConfigError(
                "ftcost-bot: SLACK_BOT_TOKEN is set but Slack needs one more variable: "
                "SLACK_APP_TOKEN (xapp-..., for Socket Mode) or SLACK_SIGNING_SECRET "
                "(for HTTP mode)."
            )
        if not (self.slack_enabled or self.discord_enabled):
            raise ConfigError(NO_CREDENTIALS_MESSAGE)


# ------------------------------------------------------------------------------------------


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


def _describe(
    exc: ValidationError, source: str, set_by: Mapping[tuple[str, ...], str] | None = None
) -> str:
    """The operator's message: each bad key, and the environment variable that set it
    (``set_by``: key path -> variable)."""
    lines = [f"ftcost-bot: invalid configuration in {source}:"]
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        loc = tuple(str(p) for p in err["loc"])
        var = next((v for k, v in (set_by or {}).items() if loc[: len(k)] == k), None)
        if var is not None:
            where += f" (set by {var})"
        if err["type"] == "extra_forbidden":
            hint = ""
            key = str(err["loc"][-1]).upper()
            if key in SECRET_ENV or "token" in key.lower() or "secret" in key.lower():
                hint = " (secrets are read from the environment only, e.g. SLACK_BOT_TOKEN)"
            lines.append(f"  {where}: unknown key{hint}")
        else:
            # err["input"] is never shown: it could be anything the user typed.
            lines.append(f"  {where}: {err['msg']}")
    return "\n".join(lines)


def _flat(annotation: Any) -> tuple[Any, ...]:
    """The types a field's annotation allows (a union's members, flattened)."""
    if get_origin(annotation) in (Union, UnionType):
        return tuple(t for arg in get_args(annotation) for t in _flat(arg))
    return (annotation,)


def _written_numbers(model: type[BaseModel], data: Mapping[Any, Any], path: str = ""
                     ) -> Iterator[str]:  # fmt: skip
    """What pydantic would take silently where a setting is a number: ``true`` (read as
    1) and ``.inf`` / ``.nan`` (``.inf`` disables a bound with none above it)."""
    for name, value in data.items():
        field = model.model_fields.get(name) if isinstance(name, str) else None
        if field is not None:  # an unknown key: validation names it
            yield from _number_value(_flat(field.annotation), value, f"{path}{name}",
                                     field.default)  # fmt: skip


def _number_value(types: tuple[Any, ...], value: Any, where: str, default: Any
                  ) -> Iterator[str]:  # fmt: skip
    numeric = bool not in types and (int in types or float in types)
    example = (f"such as {default:g}" if isinstance(default, int | float)
               and not isinstance(default, bool) else "")  # fmt: skip
    if numeric and isinstance(value, bool):
        yield f"  {where}: {str(value).lower()} is a yes/no value, not a number: write a " \
              f"number {example}".rstrip()
    elif numeric and isinstance(value, float) and not math.isfinite(value):
        yield f"  {where}: {value} is not a finite number: write one {example}".rstrip()
    elif isinstance(value, dict):
        model = next((t for t in types if get_origin(t) is None and isinstance(t, type)
                      and issubclass(t, BaseModel)), None)  # fmt: skip
        if model is not None:
            yield from _written_numbers(model, value, f"{where}.")
    elif isinstance(value, list):
        items = tuple(a for t in types if get_origin(t) in (list, tuple)
                      for a in _flat(get_args(t)[0]))  # fmt: skip
        for i, item in enumerate(value):
            yield from _number_value(items, item, f"{where}[{i}]", None)


def _beyond_bounds(config: BaseModel, path: str = "") -> Iterator[str]:
    """Numbers that validated but make a setting meaningless: any infinite or NaN one
    (written as text, ``"inf"``), and the price limits past which nothing is checked."""
    for name, field in type(config).model_fields.items():
        value, where = getattr(config, name), f"{path}{name}"
        if isinstance(value, BaseModel):
            yield from _beyond_bounds(value, f"{where}.")
        elif isinstance(value, tuple | list):
            for i, item in enumerate(value):
                if isinstance(item, BaseModel):
                    yield from _beyond_bounds(item, f"{where}[{i}].")
        elif isinstance(value, float) and not math.isfinite(value):
            yield f"  {where}: {value} is not a finite number: write one such as " \
                  f"{field.default:g}"
    if isinstance(config, Config):
        limits = config.prices.limits
        if math.isfinite(limits.max_change_ratio) and limits.max_change_ratio > MAX_CHANGE_RATIO:
            yield (f"  prices.limits.max_change_ratio: {limits.max_change_ratio:g} would never "
                   f"hold a price back: write at most {MAX_CHANGE_RATIO:g} (default 5)")
        price = limits.max_price_per_gpu_hour
        if math.isfinite(price) and price > MAX_PRICE_PER_GPU_HOUR:
            yield (f"  prices.limits.max_price_per_gpu_hour: {price:g} would let any price "
                   f"through: write at most {MAX_PRICE_PER_GPU_HOUR:g} (default 100)")


def _refuse(source: str, problems: list[str]) -> None:
    if problems:
        raise ConfigError("\n".join([f"ftcost-bot: invalid configuration in {source}:",
                                     *problems]))  # fmt: skip


def load_config(path: str | Path | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Build the configuration from ``path`` (YAML, optional) and ``env`` (default
    ``os.environ``). Raises :class:`ConfigError` with an operator-facing message."""
    env = os.environ if env is None else env
    if path is None and env.get("FTCOST_CONFIG"):
        path = env["FTCOST_CONFIG"]
    data = read_yaml(path) if path is not None else {}
    source = str(path) if path is not None else "the environment"
    if "secrets" in data:
        raise ConfigError(
            f"ftcost-bot: invalid configuration in {source}:\n  secrets: unknown key "
            "(secrets are read from the environment only, e.g. SLACK_BOT_TOKEN)"
        )
    _refuse(source, list(_written_numbers(Config, data)))
    try:
        Config.model_validate(data)  # report file errors against the file alone
    except ValidationError as exc:
        raise ConfigError(_describe(exc, source)) from None
    set_by: dict[tuple[str, ...], str] = {}
    for var, loc in _ENV_OVERRIDES.items():
        value = env.get(var, "").strip()
        if not value:
            continue
        set_by[loc] = var
        target = data
        for part in loc[:-1]:
            section = target.get(part)
            target[part] = section = dict(section) if isinstance(section, dict) else {}
            target = section
        target[loc[-1]] = value
    data["secrets"] = Secrets(
        slack_bot_token=_secret(env, "SLACK_BOT_TOKEN"),
        slack_app_token=_secret(env, "SLACK_APP_TOKEN"),
        slack_signing_secret=_secret(env, "SLACK_SIGNING_SECRET"),
        discord_token=_secret(env, "DISCORD_TOKEN"),
    )
    where = source if path is None else f"{source} and the environment"
    try:
        config = Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, where, set_by)) from None
    _refuse(where, list(_beyond_bounds(config)))
    return config
