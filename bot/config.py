"""The bot's configuration: secrets from the environment, everything else from YAML.

Secrets (tokens, the signing secret) are read **only** from the environment and
held as :class:`pydantic.SecretStr`, so neither ``repr()`` nor a validation
error ever shows them. Everything else has a default, may be set in an optional
YAML file (``python -m bot --config bot.yml``) validated with ``extra="forbid"``
(an unknown or misspelt key is an error naming it), and a few deployment knobs
(``PORT``, ``HEALTH_PORT``, ``STORE_URL``, ``SLACK_API_BASE_URL``) may be
overridden by the environment, which wins over the file (:meth:`Config.origin` says which
variable set a value, for ``check-config``). :func:`bot.config_load.load_config` reads
them and reports every problem it finds in one :class:`ConfigError`: numbers YAML writes
that pydantic would take silently (:func:`bot.config_yaml.written_numbers`), the rules of
:mod:`bot.config_checks` (hosts, team sheets' workspaces, clouds, the refresh schedule)
and pydantic's own, in the operator's words.

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
``FTCOST_LOG_LEVEL``         ``DEBUG``/``DEBUG-ALL``/``INFO``/``WARNING``/...
``FTCOST_RATE_LIMIT``        commands per person per minute (default 20; 0: no limit)
``HF_ENDPOINT``              the Hugging Face Hub (default ``https://huggingface.co``)
``HF_TOKEN``                 a Hub read token, for gated or private ``org/name`` models
``HTTPS_PROXY``              an outbound proxy (price sources, Hub, Discord); ``NO_PROXY``
==========================  =========================================================

An empty ``STORE_URL`` / ``FTCOST_STORE`` is refused, a whole-number variable (``PORT``)
must be digits, and an unknown ``FTCOST_*`` variable, or a ``SLACK_*`` / ``DISCORD_*`` one
spelt like one the bot reads, is a warning (:data:`KNOWN_ENV`,
:func:`bot.config_checks.unknown_variable_warnings`).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_validator,
    model_validator,
)

from bot.config_checks import (
    missing_file,
)
from bot.config_yaml import ConfigError
from bot.prices import PricesConfig
from bot.store import StoreError, redact_url
from bot.store_factory import open_store_from
from bot.store_types import DEFAULT_THREAD_TTL_DAYS
from catalog.echo import shown
from catalog.hub.settings import HubSettings

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


MEMORY_STORES = (":memory:", "sqlite:///:memory:", "sqlite://:memory:")
"""Store locations that keep nothing across a restart."""


def in_memory(location: str) -> bool:
    """Whether the store at ``location`` lives in memory only (:data:`MEMORY_STORES`)."""
    return location.strip() in MEMORY_STORES


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SlackMode(StrEnum):
    SOCKET = "socket"
    HTTP = "http"


class SlackSettings(_Section):
    """The ``slack:`` section of the YAML file."""

    command: str = Field(default="/ftcost", pattern=r"^/[a-z0-9_-]{1,31}$")
    """The slash command, as declared in the app manifest."""
    events_path: str = Field(default="/slack/events", pattern=r"^/[^\s?#{}]*$")
    """HTTP mode: the path Slack POSTs commands, events and interactions to: ``/`` then
    no spaces, ``?``, ``#`` or braces (:func:`bot.config_checks.events_path_problem`)."""
    host: str = "0.0.0.0"
    """HTTP mode: the interface to listen on (every one by default: the image's listener
    must take every interface for Docker's port mapping). It answers ``/healthz`` and
    ``/metrics`` too unless ``health_port`` is another port. An IP address or a host name
    (:func:`bot.config_checks.host_problem`)."""
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
    seen_ttl_hours: float = Field(default=24.0, ge=10 / 60, le=24 * 30)
    """How long an event id is remembered for retry de-duplication: 10 minutes (0.166667)
    to 30 days (720). Slack retries an unanswered event up to three times, the last about
    5 minutes after the first: a shorter memory would act on a retry twice. A day is ample."""
    thread_ttl_days: float = Field(default=DEFAULT_THREAD_TTL_DAYS, ge=1 / 24, le=3650)
    """Thread contexts untouched this long are purged: 1 hour (0.0416667) to 10 years
    (3650). Shorter would forget a thread while people are still replying in it."""
    purge_interval_minutes: float = Field(default=60.0, ge=1, le=7 * 24 * 60)
    """How often expired thread contexts and event ids are purged: 1 minute to a week
    (10080). More often would keep the store busy purging (each purge scans it)."""

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

    level: Literal["DEBUG", "DEBUG-ALL", "INFO", "WARNING", "ERROR"] = "INFO"
    format: Literal["kv", "json"] = "kv"
    """``kv``: ``key=value`` lines; ``json``: one JSON object per line."""

    @field_validator("level", mode="before")
    @classmethod
    def _upper(cls, value: Any) -> Any:
        return value.upper().replace("_", "-") if isinstance(value, str) else value


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
    """The whole configuration. Build it with :func:`bot.config_load.load_config`."""

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
    """GPU price refresh and announcements (docs/prices.md)."""
    hub: HubSettings = HubSettings()
    """Hugging Face Hub models (``org/name``): ``timeout_s``, ``cache_ttl_days`` (7),
    ``negative_ttl_minutes`` (10), ``endpoint`` (else ``HF_ENDPOINT``)."""
    secrets: Secrets = Field(default_factory=Secrets, exclude=True)
    _set_by: dict[str, str] = PrivateAttr(default_factory=dict)
    """Setting (``store.path``) -> the environment variable that set it (``STORE_URL``)."""
    _over_file: set[str] = PrivateAttr(default_factory=set)
    """Settings the file wrote that a variable replaced."""
    _source: str | None = PrivateAttr(default=None)
    """The YAML file read, if any."""
    _variable_warnings: list[str] = PrivateAttr(default_factory=list)
    """Misspelt variables in the environment read (:func:`unknown_variable_warnings`)."""

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

    # -- where a value came from ------------------------------------------------------------
    @property
    def source(self) -> str | None:
        """The YAML file the configuration was read from (None: defaults + environment)."""
        return self._source

    def set_by(self, key: str) -> str | None:
        """The environment variable that set ``key`` (``health_port`` -> ``HEALTH_PORT``)."""
        return self._set_by.get(key)

    def origin(self, key: str) -> str:
        """`` (set by HEALTH_PORT)`` for a value a variable set (``, over the file's value``
        when the file wrote one too), else the empty string: for ``check-config``."""
        var = self._set_by.get(key)
        if var is None:
            return ""
        over = ", over the file's value" if key in self._over_file else ""
        return f" (set by {var}{over})"

    def health_address(self) -> tuple[str, int] | None:
        """``(host, port)`` of the listener answering ``/healthz`` and ``/metrics``, as
        :meth:`bot.runtime.Runtime._start_http` decides: Slack's HTTP listener
        (``slack.host``:``port``) unless ``health_port`` is another port, whose server
        listens on ``health_host``; None when nothing serves them (Socket Mode or Discord
        without ``health_port``)."""
        if self.slack_mode is SlackMode.HTTP and self.health_port in (None, self.port):
            return self.slack.host, self.port
        if self.health_port is None:
            return None
        return self.health_host, self.health_port

    def warnings(self) -> list[str]:
        """What is legal but probably not meant, one line each (``check-config`` prints
        them, ``run`` logs them): a secret set but unused, no public price source, a price
        file that does not exist here."""
        out: list[str] = []
        s = self.secrets
        if s.slack_bot_token and s.slack_app_token and s.slack_signing_secret:
            out.append("SLACK_SIGNING_SECRET is set but unused: SLACK_APP_TOKEN is set too, "
                       "so Slack runs in Socket Mode, which needs no signing secret; unset "
                       "SLACK_SIGNING_SECRET, or unset SLACK_APP_TOKEN for HTTP mode")  # fmt: skip
        prices = self.prices
        if prices.enabled and not prices.clouds:
            out.append("prices.clouds is empty: no public price source is read, so estimates "
                       "use the built-in catalog prices" + (" and the team sheets"
                       if prices.team_sheets else "; list clouds, or set prices.enabled: "
                       "false to say so"))  # fmt: skip
        files = [(f"prices.cloud_urls.{c}", u) for c, u in prices.cloud_urls.items()] + \
            [(f"prices.team_sheets[{i}].location", t.location)
             for i, t in enumerate(prices.team_sheets)]  # fmt: skip
        for key, location in files if prices.enabled else []:
            path = missing_file(location)
            if path is not None:
                out.append(f"{key}: no file {path} here: each refresh marks that source "
                           "failed until it exists")  # fmt: skip
        if in_memory(self.store.path):
            out.append(f"store.path is {self.store.path!r}{self.origin('store.path')}: "
                       "thread contexts, channel settings, subscriptions and prices are lost "
                       "at every restart, and replicas share nothing; give a SQLite file "
                       f"({DEFAULT_STORE_PATH}) or a Redis URL to keep them")  # fmt: skip
        return out + self._variable_warnings

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
