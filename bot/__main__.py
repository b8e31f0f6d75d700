"""``python -m bot`` / ``ftcost-bot``: run the chat bots whose credentials are set.

    ftcost-bot [--config FILE] [run]      start every configured platform (default)
    ftcost-bot [--config FILE] check-config   validate the configuration, show what would run
    ftcost-bot [--config FILE] manifest [--url URL]   print the Slack app manifest with the
                                          configured command and path (docs/slack.md)
    ftcost-bot sync-commands [--guild ID] register the Discord slash commands
    ftcost-bot backup DEST                copy the SQLite store to DEST while the bot runs

Exit status: 0 after a clean stop, 2 for a configuration problem (no credentials, an
unknown or invalid YAML key: the message names it), 1 when a platform or the store
cannot start. Other platforms add subcommands by appending to :data:`SUBCOMMANDS`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TextIO

from bot.config import Config, ConfigError, SlackMode
from bot.config_checks import secret_warnings
from bot.config_load import load_config
from bot.logs import setup_logging
from bot.runtime import PLATFORMS, PlatformStartError, Runtime
from bot.store import StoreError


@dataclass(frozen=True)
class Subcommand:
    name: str
    help: str
    run: Callable[[argparse.Namespace, Config, TextIO], int]
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None
    needs_credentials: bool = True
    """Refuse to run (exit 2, naming the variables) when no platform is configured."""
    needs_config: bool = True


def _run(args: argparse.Namespace, config: Config, out: TextIO) -> int:
    setup_logging(config.log.level, config.log.format, config.secrets.values())
    log = logging.getLogger("ftcost.bot")
    log.info("ftcost-bot health endpoints: %s", _health_where(config))
    for warning in [*config.warnings(), *secret_warnings()]:
        log.warning("%s", warning)
    try:
        asyncio.run(Runtime(config).run_until_stopped())
    except (PlatformStartError, StoreError) as exc:
        print(f"ftcost-bot: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


def _check_config(args: argparse.Namespace, config: Config, out: TextIO) -> int:
    """What would run, each value an environment variable set marked ``(set by VAR)``,
    then the warnings (the configuration is valid: :func:`main` refused it otherwise)."""
    mode = config.slack_mode.value if config.slack_mode else "off"
    port_by = config.origin("port").strip(" ()")
    http = (f" (POST {config.slack.events_path} on {config.slack.host}:{config.port}"
            f"{'; port ' + port_by if port_by else ''})")  # fmt: skip
    lines = [
        "configuration OK",
        f"  config file: {config.source or 'none (the defaults, and the environment)'}",
        f"  slack: {mode}" + (http if mode == "http" else ""),
        f"  slack command: {config.slack.command}",
        f"  slack api: {config.slack_api_base_url}{config.origin('slack_api_base_url')}",
        f"  discord: {'on' if config.discord_enabled else 'off'}",
        f"  discord api: {config.discord.api_base_url}{config.origin('discord.api_base_url')}",
        f"  discord message content: {'on' if config.discord.message_content else 'off'}",
        f"  store: {config.store.shown}{config.origin('store.path')}",
        "  health port: " + _health(config),
        f"  log: {config.log.level}{config.origin('log.level')} {config.log.format}",
        f"  rate limit: {_rate_limit(config)}",
        f"  prices: {_prices(config)}",
        "  secrets set: "
        + ", ".join(
            f"{name.upper()}={'yes' if getattr(config.secrets, name) else 'no'}"
            for name in type(config.secrets).model_fields
        ),
    ]
    known = {p.name for p in PLATFORMS}
    if config.discord_enabled and "discord" not in known:
        lines.append("  warning: DISCORD_TOKEN is set but this build has no Discord runner")
    lines += [f"  warning: {warning}" for warning in [*config.warnings(), *secret_warnings()]]
    print("\n".join(lines), file=out)
    return 0


def health_address(config: Config) -> tuple[str, int] | None:
    """``(host, port)`` of the listener answering ``/healthz`` and ``/metrics``
    (:meth:`bot.config.Config.health_address`); None when none does."""
    return config.health_address()


def _health_where(config: Config) -> str:
    """Where ``/healthz`` and ``/metrics`` are served, for the start-up log line (the
    configured port: ``port: 0`` is chosen at start)."""
    address = config.health_address()
    if address is None:
        return "off (no health_port)"
    listener = "the Slack listener" if config.slack_mode is SlackMode.HTTP and \
        config.health_port in (None, config.port) else "the health listener"  # fmt: skip
    return f"/healthz and /metrics on {listener} {address[0]}:{address[1]}"


def _health(config: Config) -> str:
    """The ``health port`` line of ``check-config``: which listener serves ``/healthz``
    and ``/metrics``, on which interface, and what an environment variable set."""
    address = config.health_address()
    port_by, host_by = config.origin("health_port"), config.origin("health_host")
    if address is None:
        return ("not set: nothing serves /healthz or /metrics (Socket Mode and Discord "
                "listen on no port); set health_port (HEALTH_PORT) to serve them")  # fmt: skip
    host, port = address
    if config.health_port is None:
        return (f"not set: /healthz and /metrics on the Slack listener {host}:{port} "
                f"(slack.host:port{config.origin('port')}); set health_port to another port "
                "to serve them elsewhere")  # fmt: skip
    if config.slack_mode is SlackMode.HTTP and config.health_port == config.port:
        return (f"{port}{port_by}: /healthz and /metrics on the Slack listener {host}:{port} "
                "(slack.host)")  # fmt: skip
    return f"{port}{port_by}: /healthz and /metrics on {host}:{port} (health_host{host_by})"


def _rate_limit(config: Config) -> str:
    limit = config.rate_limit_per_minute
    words = f"{limit} commands per person per minute" if limit else "off"
    return words + config.origin("rate_limit_per_minute")


def _prices(config: Config) -> str:
    prices = config.prices
    if not prices.enabled:
        return "off (the built-in catalog prices)"
    clouds = ", ".join(prices.clouds) or "none"
    return (f"refresh {prices.schedule!r} (UTC) from {clouds}; "
            f"{len(prices.team_sheets)} team sheet(s)")


def _sync_commands(args: argparse.Namespace, config: Config, out: TextIO) -> int:
    from adapters.discord.runner import run_sync_commands

    return run_sync_commands(args, config, out)


def _sync_arguments(parser: argparse.ArgumentParser) -> None:
    from adapters.discord.runner import add_sync_arguments

    add_sync_arguments(parser)


MANIFEST_COMMAND = "/ftcost"
MANIFEST_EVENTS_PATH = "/slack/events"
"""The slash command and request path written in ``adapters/slack/manifest.yml``."""


def manifest_text(command: str = MANIFEST_COMMAND, events_path: str = MANIFEST_EVENTS_PATH,
                  url: str | None = None) -> str:  # fmt: skip
    """The packaged Slack app manifest with ``slack.command`` and ``slack.events_path``
    written in; with ``url`` (checked by :func:`request_url`) set up for HTTP mode instead
    of Socket Mode: its three request URLs are ``request_url(url, events_path)``."""
    text = resources.files("adapters.slack").joinpath("manifest.yml").read_text("utf-8")
    text = re.sub(rf"(?<![\w./-]){re.escape(MANIFEST_COMMAND)}(?![\w-])",
                  lambda _: command, text)  # fmt: skip
    text = text.replace(MANIFEST_EVENTS_PATH, events_path)
    if url is not None:
        quoted = json.dumps(request_url(url, events_path))  # a quoted YAML scalar
        text, n = re.subn(r"^(\s*)# (url|request_url): https://YOUR-HOST\S*$",
                          lambda m: f"{m[1]}{m[2]}: {quoted}", text, flags=re.M)  # fmt: skip
        if n != 3 or "socket_mode_enabled: true" not in text:
            raise RuntimeError("adapters/slack/manifest.yml no longer has the three "
                               "commented request URLs manifest --url fills in")  # fmt: skip
        text = text.replace("socket_mode_enabled: true", "socket_mode_enabled: false")
    return text


_PUBLIC_URL = re.compile(r"(https://[^\s/?#\"'\\]+)(/[^\s?#\"'\\]*)?")
"""An https address: the scheme and host (with any port), then any path; no query or
fragment, nothing a YAML scalar or a shell would mangle."""


def request_url(url: str, events_path: str) -> str:
    """The request URL Slack is given for ``--url``: the address alone
    (``https://bot.example.com``) followed by ``events_path``; a URL that already ends
    with ``events_path`` as it is (behind a proxy that adds a prefix:
    ``https://example.com/ftcost/slack/events``). Raises :class:`ValueError` saying how
    to write it for anything else: not https, a query, or another path (Slack would post
    where the bot does not answer)."""
    match = _PUBLIC_URL.fullmatch(url)
    if match is None:
        raise ValueError("--url must be the bot's public https:// address, e.g. "
                         "https://ftcost.example.com (Slack sends requests over HTTPS only, "
                         "and the address takes no query or spaces)")  # fmt: skip
    base, path = match[1], (match[2] or "").rstrip("/")
    tail = events_path.rstrip("/")
    if not path:
        return base + events_path
    if tail and path.endswith(tail):  # the path once, however the config writes it
        return base + path[: len(path) - len(tail)] + events_path
    raise ValueError(
        f"--url {url} has the path {path}, but the bot answers Slack at slack.events_path "
        f"({events_path}), so Slack would post where nothing answers: give the address "
        f"alone (--url {base}) or the whole request URL (--url {base}{events_path}); behind "
        f"a proxy that adds a prefix, end it with the path (--url {base}{path}{events_path})"
    )


def _manifest(args: argparse.Namespace, config: Config, out: TextIO) -> int:
    if args.url is not None:
        try:
            request_url(args.url, config.slack.events_path)
        except ValueError as exc:
            print(f"ftcost-bot: {exc}", file=sys.stderr)
            return 2
    print(manifest_text(config.slack.command, config.slack.events_path, args.url), end="",
          file=out)  # fmt: skip
    return 0


def _manifest_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--url", metavar="URL", default=None,
        help="HTTP mode: the bot's public https:// address (https://HOST); the request "
             "URLs become URL + slack.events_path (a URL already ending with that path is "
             "used as it is) and Socket Mode is turned off",
    )  # fmt: skip


def _sqlite_path(location: str) -> str | None:
    """The file of a SQLite store location (None for other backends and ``:memory:``)."""
    for prefix in ("sqlite:///", "sqlite://"):
        if location.startswith(prefix):
            location = location[len(prefix) :]
            break
    else:
        if "://" in location:
            return None
    return location if location and location != ":memory:" else None


def _backup(args: argparse.Namespace, config: Config, out: TextIO) -> int:
    """An online, consistent copy with SQLite's backup API (safe while the bot writes)."""
    import sqlite3
    from pathlib import Path

    source = _sqlite_path(config.store.path)
    if source is None:
        print(f"ftcost-bot: backup copies a SQLite store; this one is {config.store.shown} "
              "(back Redis up with its own RDB/AOF snapshots)", file=sys.stderr)  # fmt: skip
        return 2
    if not Path(source).is_file():
        print(f"ftcost-bot: no SQLite store at {source}", file=sys.stderr)
        return 2
    from bot.store_sqlite import create_owner_only

    dest = Path(args.dest)
    try:
        created = create_owner_only(dest)  # 0600, and atomic: never overwrites
    except OSError as exc:
        print(f"ftcost-bot: cannot create {dest}: {exc.strerror}; choose a folder you can "
              "write to", file=sys.stderr)  # fmt: skip
        return 2
    if not created:
        print(f"ftcost-bot: {dest} exists; give a new file name", file=sys.stderr)
        return 2
    try:
        with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as src, \
                sqlite3.connect(dest) as dst:  # fmt: skip
            src.backup(dst)
    except (sqlite3.Error, OSError) as exc:
        dest.unlink(missing_ok=True)
        print(f"ftcost-bot: backup failed: {exc}", file=sys.stderr)
        return 1
    print(f"backed up {source} to {dest}", file=out)
    return 0


def _backup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dest", metavar="DEST", help="the new file to write")


SUBCOMMANDS: list[Subcommand] = [
    Subcommand("run", "start every platform whose credentials are set (default)", _run),
    Subcommand("check-config", "validate the configuration and show what would run",
               _check_config),
    Subcommand("manifest", "print the Slack app manifest with the configured slash command "
               "and events path (setup: docs/slack.md)", _manifest, _manifest_arguments,
               needs_credentials=False),
    Subcommand("sync-commands", "register /ftcost with Discord (once, not on every start)",
               _sync_commands, _sync_arguments, needs_credentials=False),
    Subcommand("backup", "copy the SQLite store to a new file (safe while running)",
               _backup, _backup_arguments, needs_credentials=False),
]


def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--config", metavar="FILE", default=argparse.SUPPRESS,
        help="YAML file with non-secret settings (secrets come from the environment)",
    )
    parser = argparse.ArgumentParser(
        prog="ftcost-bot",
        description="ftcost chat bot: Slack (Socket Mode or HTTP) and other platforms.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for cmd in SUBCOMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, parents=[common])
        if cmd.add_arguments is not None:
            cmd.add_arguments(p)
    return parser


def main(argv: list[str] | None = None, out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    name = args.command or "run"
    cmd = next(c for c in SUBCOMMANDS if c.name == name)
    if not cmd.needs_config:
        return cmd.run(args, None, out)  # type: ignore[arg-type]
    try:
        config = load_config(getattr(args, "config", None))
        if cmd.needs_credentials:
            config.check_credentials()
    except ConfigError as exc:
        print(exc, file=sys.stderr)
        return 2
    return cmd.run(args, config, out)


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
