"""Configuration checks that only warn, and the message for a config file that cannot be
read. ``check-config`` prints the warnings; ``run`` logs them at start-up.

This module imports nothing from :mod:`bot.config`: that module imports
:func:`unreadable_config` from here, and the layering allows no cycle.

Secrets are never echoed: a warning names the variable and shows at most
:data:`SHOWN_CHARS` characters of its start, and none of a value under
:data:`SHOWN_MIN_LENGTH` characters (of which five would be a large part).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

SHOWN_CHARS = 5
"""The most characters of a secret a warning shows (``xoxp-``: enough to tell a kind)."""
SHOWN_MIN_LENGTH = 20
"""A shorter value shows none of its characters (Slack's and Discord's tokens are over 50)."""

EXAMPLE_CONFIG = "ftcost.example.yml"


def unreadable_config(path: Path, exc: OSError) -> str:
    """The one-line message for a config file ``open`` refused. A directory in its place
    is what Docker leaves when the file a bind mount names did not exist."""
    if isinstance(exc, IsADirectoryError) or path.is_dir():
        return (f"ftcost-bot: config file {path} is a directory: Docker creates one when the "
                f"mounted file is missing; copy {EXAMPLE_CONFIG} to ftcost.yml (remove the "
                "directory first)")  # fmt: skip
    return f"ftcost-bot: cannot read config file {path}: {exc.strerror or exc}"


# -- secrets' shapes -------------------------------------------------------------------------
def _start(value: str) -> str | None:
    """The first :data:`SHOWN_CHARS` characters of ``value``, quoted and escaped, or
    ``None`` for a value under :data:`SHOWN_MIN_LENGTH` characters."""
    return ascii(value[:SHOWN_CHARS]) if len(value) >= SHOWN_MIN_LENGTH else None


def _begins(value: str) -> str:
    start = _start(value)
    return f"starts {start}" if start is not None else f"is only {len(value)} characters long"


def _slack_prefix(name: str, value: str, want: str, where: str) -> str | None:
    if value.startswith(want):
        return None
    hint = {
        ("SLACK_BOT_TOKEN", "xapp-"): " (an app-level token: SLACK_BOT_TOKEN and "
                                      "SLACK_APP_TOKEN look swapped)",
        ("SLACK_BOT_TOKEN", "xoxp-"): " (a user token: the bot needs its Bot User OAuth "
                                      "Token)",
        ("SLACK_APP_TOKEN", "xoxb-"): " (a bot token: SLACK_BOT_TOKEN and SLACK_APP_TOKEN "
                                      "look swapped)",
    }.get((name, value[:5]), "")  # fmt: skip
    return f"{name} should start {want!r} but {_begins(value)}{hint}: use the token from {where}"


def _discord_shape(value: str) -> str | None:
    if value.lower().startswith("bot "):
        return "DISCORD_TOKEN starts with 'Bot ': set the token alone (the bot adds the prefix)"
    parts = value.split(".")
    if len(parts) == 3 and all(parts):
        return None
    found = (f"has {len(parts)} dot-separated part(s), not 3" if len(parts) != 3
             else "has an empty part between its dots")  # fmt: skip
    return (f"DISCORD_TOKEN {found}: copy the bot's token again (Developer Portal > Bot > "
            "Reset Token)")  # fmt: skip


_SHAPES = {
    "SLACK_BOT_TOKEN": lambda v: _slack_prefix(
        "SLACK_BOT_TOKEN", v, "xoxb-", "OAuth & Permissions > Bot User OAuth Token"),
    "SLACK_APP_TOKEN": lambda v: _slack_prefix(
        "SLACK_APP_TOKEN", v, "xapp-", "Basic Information > App-Level Tokens"),
    "DISCORD_TOKEN": _discord_shape,
}  # fmt: skip
SECRETS_CHECKED = ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "DISCORD_TOKEN")


def secret_warnings(env: Mapping[str, str] | None = None) -> list[str]:
    """What looks wrong with the secrets in ``env`` (default ``os.environ``), one line
    each, never showing more than :data:`SHOWN_CHARS` characters of a value: quotes
    around it or whitespace in it (``.env`` mistakes), and a token of the wrong kind."""
    env = os.environ if env is None else env
    out: list[str] = []
    for name in SECRETS_CHECKED:
        raw = env.get(name, "")
        value = raw.strip()
        if not value:
            continue
        if raw != value:
            out.append(f"{name} has spaces or a line break around it: the bot ignores "
                       "them, but remove them from .env")  # fmt: skip
        quote = value[0] if value[0] in "'\"" else value[-1] if value[-1] in "'\"" else None
        if quote is not None:
            out.append(f"{name} is wrapped in quotes ({quote}): the quotes become part of "
                       "the token where .env is read literally (docker run --env-file); "
                       "write it without them")  # fmt: skip
            value = value.strip("'\"")
        if any(c.isspace() for c in value):
            out.append(f"{name} contains a space, tab or line break: a token has none; "
                       "copy it again as one line")  # fmt: skip
        shape = _SHAPES.get(name)
        problem = shape(value) if shape is not None and value else None
        if problem is not None:
            out.append(problem)
    return out


__all__ = ["SHOWN_CHARS", "secret_warnings", "unreadable_config"]
