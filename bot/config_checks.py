"""Configuration checks beyond the types pydantic validates, and the message for a config
file that cannot be read. Two kinds:

- **rules on values** (:func:`value_problems`): a host that is neither an IP address nor a
  host name, an ``events_path`` with a ``?``, ``#`` or braces, a team sheet without a
  valid ``workspace``, a cloud the price source cannot read, a schema version that is not
  ``v8``-shaped, a price refresh more often than once an hour. They read the raw
  settings (the YAML merged with the environment), so they run whatever else is wrong
  and :func:`bot.config_load.load_config` reports every problem in one message;
- **warnings** (:func:`secret_warnings`; a misspelt ``FTCOST_*`` / ``SLACK_*`` /
  ``DISCORD_*`` variable: :func:`bot.config_variables.unknown_variable_warnings`):
  ``check-config`` prints them, ``run`` logs them at start-up; the bot still starts.

This module imports nothing from :mod:`bot.config`: that module imports from here, and
the layering allows no cycle.

Secrets are never echoed: a warning names the variable and shows at most
:data:`SHOWN_CHARS` characters of its start, and none of a value under
:data:`SHOWN_MIN_LENGTH` characters (of which five would be a large part).
"""

from __future__ import annotations

import difflib
import ipaddress
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bot.cron import CronError, CronSchedule
from catalog.echo import shown
from catalog.price_sources import DEFAULT_CLOUDS, KNOWN_CLOUDS

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


def nearest(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice spelt most like ``word`` (at least ``cutoff`` alike), or None: the
    "did you mean" of an unknown key or variable."""
    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=cutoff)
    return near[0] if near else None


# -- rules on values -------------------------------------------------------------------------
Loc = tuple[str | int, ...]
"""Where a setting lives: ``("prices", "team_sheets", 0, "workspace")``."""
Problem = tuple[Loc, str]
"""A setting's location and what is wrong with it, with how to write it."""

HOST_EXAMPLES = ("write an IP address or a host name, such as 127.0.0.1 (this machine only), "
                 "0.0.0.0 (every interface) or :: (every IPv6 interface)")  # fmt: skip
_LABEL = re.compile(r"(?!-)[A-Za-z0-9-]{1,63}(?<!-)")
WORKSPACE_FORMS = ('slack:<team id> (e.g. slack:T0123ABCD), discord:<server id> (e.g. '
                   'discord:123456789012345678), or "*" for every workspace')  # fmt: skip
_WORKSPACE = re.compile(r"\*|slack:[TE][A-Z0-9]{1,31}|discord:[1-9][0-9]{0,19}")
LOCATION_EXAMPLES = ("write an http(s):// URL (https://example.com/sheet.yaml) or a file "
                     "path (/config/sheet.yaml)")  # fmt: skip
_FILE_SUFFIXES = (".csv", ".yaml", ".yml", ".json")
_SCHEMA_VERSION = re.compile(r"v[1-9][0-9]{0,2}")
MIN_REFRESH_GAP = timedelta(hours=1)
"""The shortest time between two scheduled price refreshes: each fetches every source (up
to ``max_bytes`` each), and SkyPilot's catalog changes a few times a day."""
SCHEDULE_FORMS = ("five fields, minute hour day-of-month month weekday, in UTC (e.g. "
                  "'0 6 * * *', daily at 06:00, the default; '0 */6 * * *', every 6 hours), "
                  "or @hourly, @daily, @weekly, @monthly or @yearly")  # fmt: skip
_PROBE = datetime(2000, 1, 1, tzinfo=UTC)


def _quoted(value: str) -> str:
    """``value`` as a message quotes it: cut, and with its spaces visible (``'t123 '``)."""
    return repr(shown(value, 60))


def host_problem(value: str) -> str | None:
    """What is wrong with ``value`` as an interface to listen on, or None: it must be an IP
    address or have a host name's shape (letters, digits and hyphens between dots). No DNS
    lookup is made: a name that does not resolve still fails when the bot starts."""
    if value != value.strip():
        return f"{_quoted(value)} has spaces around it: remove them"
    if not value:
        return f"is empty: {HOST_EXAMPLES}"
    inner = value[1:-1] if value.startswith("[") and value.endswith("]") else None
    try:
        ipaddress.ip_address(inner if inner is not None else value)
    except ValueError:
        pass
    else:
        return None if inner is None else f"write the IPv6 address without brackets: {inner}"
    if re.fullmatch(r"[^:]+:\d+", value):
        return (f"{_quoted(value)} has a port: give the host alone here, and the port as "
                "port (or health_port)")  # fmt: skip
    labels = value.removesuffix(".").split(".")  # a fully qualified name may end in a dot
    if all(label.isdigit() for label in labels):
        return (f"{_quoted(value)} is not an IP address (four numbers from 0 to 255): "
                f"{HOST_EXAMPLES}")
    if len(value) > 253 or labels[-1].isdigit() or not all(_LABEL.fullmatch(x) for x in labels):
        return f"{_quoted(value)} is not an IP address or a host name: {HOST_EXAMPLES}"
    return None

EVENTS_PATH_EXAMPLE = "/slack/events"
_ROUTE_BREAKERS = (
    ("?", "'?' (a query: Slack posts to the path alone)"),
    ("#", "'#' (a fragment: never sent to the bot)"),
    ("{}", "braces (the bot's router reads {...} as a variable part)"),
)  # fmt: skip
"""Characters that make ``slack.events_path`` match something else than the path written,
and what they are."""


def events_path_problem(value: str) -> str | None:
    """What is wrong with ``slack.events_path``, or None: it must be a path, ``/`` then no
    spaces, and none of :data:`_ROUTE_BREAKERS` (the route would not be the path Slack
    posts to: ``/slack/events?x=1`` never matches, ``/slack/{id}`` matches any path)."""
    example = f"write a path such as {EVENTS_PATH_EXAMPLE}"
    if not value.startswith("/"):
        return f"{_quoted(value)} does not start with '/': {example}"
    if any(c.isspace() for c in value):
        return f"{_quoted(value)} has a space or line break in it: {example}"
    found = [words for chars, words in _ROUTE_BREAKERS if any(c in value for c in chars)]
    if found:
        return f"{_quoted(value)} contains {' and '.join(found)}: {example}"
    return None


def _workspace_guess(value: str) -> str | None:
    """The workspace ``value`` was probably meant to be (``slack:t123 `` -> ``slack:T123``)."""
    platform, _, ident = value.strip().partition(":")
    platform, ident = platform.strip().lower(), ident.strip()
    guess = f"{platform}:{ident.upper() if platform == 'slack' else ident}"
    return guess if guess != value and _WORKSPACE.fullmatch(guess) else None


def workspace_problem(value: str) -> str | None:
    """What is wrong with a team sheet's ``workspace``, or None. A workspace is matched
    exactly against the one a question comes from, so ``slack:t123`` (Slack's ids are
    upper case) or ``Acme Corp`` would never apply."""
    if _WORKSPACE.fullmatch(value):
        return None
    guess = _workspace_guess(value)
    hint = f" (did you mean {guess}?)" if guess else ""
    return f"{_quoted(value)} is not a workspace{hint}: write {WORKSPACE_FORMS}"


def location_problem(value: str) -> str | None:
    """What is wrong with a price source's location (a ``cloud_urls`` value, a team sheet's
    ``location``), or None: an ``http(s)://`` URL with a host, a ``file://`` URL, or
    something shaped like a file path (a ``/`` in it, or a ``.csv``/``.yaml``/``.json``
    name). Whether the file exists is a warning (:func:`missing_file`), not an error."""
    if not value.strip():
        return f"is empty: {LOCATION_EXAMPLES}"
    if value != value.strip():
        return f"{_quoted(value)} has spaces around it: remove them"
    if "://" in value:
        parts = urlsplit(value)
        if parts.scheme == "file" and parts.path:
            return None
        if parts.scheme in ("http", "https") and parts.hostname and " " not in value:
            return None
        return f"{_quoted(value)} is not an http(s):// URL with a host: {LOCATION_EXAMPLES}"
    if "/" in value or os.sep in value or value.lower().endswith(_FILE_SUFFIXES):
        return None
    return f"{_quoted(value)} is neither a URL nor a file path: {LOCATION_EXAMPLES}"


def missing_file(value: str) -> str | None:
    """``value`` (a location) when it names a file that does not exist here, else None."""
    if "://" in value and not value.startswith("file://"):
        return None
    path = Path(value.removeprefix("file://"))
    return None if path.exists() else str(path)


def schedule_problem(value: str) -> str | None:
    """What is wrong with ``prices.schedule``, or None: not cron, never firing, or firing
    more often than :data:`MIN_REFRESH_GAP` (its minute field names more than one minute:
    ``* * * * *``, ``*/15 * * * *``, ``0,30 * * * *``)."""
    try:
        schedule = CronSchedule.parse(value)
        first = schedule.next_after(_PROBE)
        second = schedule.next_after(first)
        third = schedule.next_after(second)
    except CronError as exc:
        return f"{exc}: write {SCHEDULE_FORMS}"
    gap = min(second - first, third - second)
    if gap >= MIN_REFRESH_GAP:
        return None
    minutes = int(gap.total_seconds() // 60)
    every = "every minute" if minutes == 1 else f"{minutes} minutes apart"
    return (f"{_quoted(value)} refreshes prices {every}; each refresh fetches every source "
            "and the public catalog changes a few times a day: refresh at most once an "
            f"hour (one number in the minute field): write {SCHEDULE_FORMS}")  # fmt: skip


def _cloud_problem(cloud: str, with_url: Mapping[Any, Any]) -> str | None:
    if cloud in KNOWN_CLOUDS or cloud in with_url:
        return None
    lower = cloud.strip().lower()
    hint = f" (did you mean {lower}?)" if lower != cloud and lower in KNOWN_CLOUDS else ""
    return (f"{_quoted(cloud)} is not a cloud of SkyPilot's catalog{hint}: write one of "
            f"{', '.join(sorted(KNOWN_CLOUDS))}, or give its vms.csv in prices.cloud_urls")


def _cloud_problems(prices: Mapping[Any, Any]) -> Iterator[Problem]:
    """``prices.clouds`` against the clouds the source reads, and ``prices.cloud_urls``
    against ``prices.clouds`` (a URL for a cloud not listed is never read)."""
    raw_urls = prices.get("cloud_urls")
    urls: Mapping[Any, Any] = raw_urls if isinstance(raw_urls, Mapping) else {}
    clouds = prices.get("clouds", list(DEFAULT_CLOUDS))
    if not isinstance(clouds, list | tuple):
        return
    seen: set[str] = set()
    for i, cloud in enumerate(clouds):
        if not isinstance(cloud, str):
            continue
        problem = _cloud_problem(cloud, urls)
        if problem is None and cloud in seen:
            problem = f"{_quoted(cloud)} is listed twice: list each cloud once"
        seen.add(cloud)
        if problem is not None:
            yield ("prices", "clouds", i), problem
    for name, location in urls.items():
        if name not in seen:
            yield ("prices", "cloud_urls", str(name)), (
                f"{shown(name, 40)} is not in prices.clouds, so this file is never read: "
                f"add {shown(name, 40)} to prices.clouds, or remove it here")
        elif isinstance(location, str) and (problem := location_problem(location)):
            yield ("prices", "cloud_urls", str(name)), problem


def _team_sheet_problems(sheets: Any) -> Iterator[Problem]:
    """Each ``prices.team_sheets`` entry: ``workspace`` required and well formed, one
    sheet per workspace, ``location`` a URL or a file path."""
    if not isinstance(sheets, list | tuple):
        return
    first: dict[str, int] = {}
    for i, sheet in enumerate(sheets):
        if not isinstance(sheet, Mapping):
            continue
        here: Loc = ("prices", "team_sheets", i)
        workspace = sheet.get("workspace")
        if workspace is None:  # not written, or written empty
            yield (*here, "workspace"), (
                f"required: the workspace whose estimates this sheet prices: write "
                f"{WORKSPACE_FORMS}")  # fmt: skip
        elif isinstance(workspace, str) and (problem := workspace_problem(workspace)):
            yield (*here, "workspace"), problem
        elif isinstance(workspace, str) and workspace in first:
            yield (*here, "workspace"), (
                f"{workspace} already has the sheet of prices.team_sheets[{first[workspace]}]:"
                " keep one sheet per workspace")  # fmt: skip
        if isinstance(workspace, str):
            first.setdefault(workspace, i)
        location = sheet.get("location")
        if isinstance(location, str) and (problem := location_problem(location)):
            yield (*here, "location"), problem


def _prices_problems(prices: Mapping[Any, Any]) -> Iterator[Problem]:
    yield from _cloud_problems(prices)
    version = prices.get("schema_version")
    if isinstance(version, str) and not _SCHEMA_VERSION.fullmatch(version):
        yield ("prices", "schema_version"), (
            f"{_quoted(version)} is not a catalog schema version: write v and its number, "
            "e.g. v8 (the default; the files are {base_url}/{schema_version}/{cloud}/vms.csv)")
    schedule = prices.get("schedule")
    if isinstance(schedule, str) and (problem := schedule_problem(schedule)):
        yield ("prices", "schedule"), problem
    yield from _team_sheet_problems(prices.get("team_sheets"))


# -- how long, how often: bounds said with their unit -----------------------------------------
_UNITS = (("_days", 86400.0, "days"), ("_hours", 3600.0, "hours"), ("_minutes", 60.0, "minutes"),
          ("_s", 1.0, "s"))  # fmt: skip
"""A setting's unit, from the end of its name: (suffix, seconds, word)."""
_SPANS = ((86400.0, "day"), (3600.0, "hour"), (60.0, "minute"))
def _number(value: Any) -> float | None:
    """``value`` as a float when it is a number or a number written as text, else None."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        return float(value)
    except (ValueError, OverflowError):
        return None


def _duration(seconds: float) -> str | None:
    """``3600`` as ``1 hour``, ``600`` as ``10 minutes``: the largest of days, hours and
    minutes that counts ``seconds`` whole; None when none does (``90`` seconds)."""
    for size, name in _SPANS:
        count = round(seconds / size, 9)
        if count >= 1 and count == int(count):
            return f"{int(count)} {name}{'s' if count != 1 else ''}"
    return None


def number_text(value: float) -> str:
    """A default or a bound as a message writes it: a whole number in full (33554432,
    never 3.35544e+07), any other number in six significant digits."""
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e16:
        return str(int(value))
    return f"{value:g}"


def _written(amount: float, up: bool) -> str:
    """``amount`` in six significant digits, rounded ``up`` (a minimum: the number shown is
    allowed) or down (a maximum); a whole number in full."""
    text = number_text(amount)
    if amount == 0 or not math.isfinite(amount) or float(text) == amount:
        return text
    scale = 10.0 ** (5 - math.floor(math.log10(abs(amount))))
    return f"{(math.ceil if up else math.floor)(amount * scale) / scale:g}"


def _in_unit(key: str, text: str, exact: float | None = None) -> str:
    """A number written as ``text`` with the unit ``key`` ends in (``thread_ttl_days``:
    days), and, for an ``exact`` amount, the span it comes to where that says more:
    ``0.0416667 days (1 hour)``. A number without a unit as it is."""
    for suffix, size, word in _UNITS:
        if key.endswith(suffix):
            plain = f"{text} {word[:-1] if text == '1' and len(word) > 1 else word}"
            span = _duration(exact * size) if exact is not None else None
            return plain if span is None or span == plain else f"{plain} ({span})"
    return text


_BOUNDS = {
    "ge": ("is below the minimum, {bound}: write at least {n}", True),
    "gt": ("is too small: write more than {n}", True),
    "le": ("is above the maximum, {bound}: write at most {n}", False),
    "lt": ("is too large: write less than {n}", False),
}


def bound_words(key: str, value: float, kind: str, bound: float, default: Any = None) -> str:
    """What is wrong with ``value``, a number past the bound of setting ``key``, and what
    to write: ``kind`` is ``ge``/``gt`` (a minimum) or ``le``/``lt`` (a maximum). Says the
    value, the bound and the default, in the key's unit (``thread_ttl_days``: days)."""
    words, up = _BOUNDS[kind]
    n = _written(bound, up)
    text = f"{_in_unit(key, f'{value:g}')} " + words.format(bound=_in_unit(key, n, bound), n=n)
    if isinstance(default, int | float) and not isinstance(default, bool):
        text += f" (default {number_text(default)})"
    return text


def value_problems(data: Mapping[str, Any]) -> list[Problem]:
    """The rules above, on the raw settings ``data`` (the YAML file merged with the
    environment). A value of the wrong type is left to pydantic, which names it."""
    out: list[Problem] = []
    host = data.get("health_host")
    if isinstance(host, str) and (problem := host_problem(host)):
        out.append((("health_host",), problem))
    slack = data.get("slack")
    host = slack.get("host") if isinstance(slack, Mapping) else None
    if isinstance(host, str) and (problem := host_problem(host)):
        out.append((("slack", "host"), problem))
    path = slack.get("events_path") if isinstance(slack, Mapping) else None
    if isinstance(path, str) and (problem := events_path_problem(path)):
        out.append((("slack", "events_path"), problem))
    prices = data.get("prices")
    if isinstance(prices, Mapping):
        out += _prices_problems(prices)
    return out



# -- pydantic's errors, in the operator's words ----------------------------------------------
_TYPE_WORDS = {
    **dict.fromkeys(("int_type", "int_parsing", "int_from_float", "int_parsing_size"),
                    "must be a whole number"),
    **dict.fromkeys(("float_type", "float_parsing"), "must be a number"),
    **dict.fromkeys(("bool_type", "bool_parsing"), "must be true or false"),
    "string_type": "must be text (quote it if YAML reads it as something else: \"...\")",
    **dict.fromkeys(("list_type", "tuple_type", "iterable_type"),
                    "must be a list: [a, b], or one '- a' line per item under it"),
    "dict_type": "must be a mapping: 'name: value' lines indented under it",
}  # fmt: skip
_PATTERN_WORDS: dict[Loc, str] = {
    ("slack", "command"): "must be a slash command: / then 1 to 31 lower-case letters, "
                          "digits, - or _ (e.g. /ftcost)",
    ("slack", "events_path"): "must be a path: / then no spaces, '?', '#', '{' or '}' "
                              f"(e.g. {EVENTS_PATH_EXAMPLE})",
}  # fmt: skip
_MISSING_WORDS = {
    "location": "required: where the sheet is, an http(s):// URL or a file path",
    "workspace": f"required: the workspace whose estimates this sheet prices: write "
                 f"{WORKSPACE_FORMS}",
}  # fmt: skip
_UNION_TAG = re.compile(r".*[\[(].*|int|str|float|bool|none|dict|list|tuple")
"""A part of pydantic's location that names a union member (``int``, ``literal['auto']``)
or a dict key's check (``[key]``), not a setting."""


def secret_variable(loc: Loc) -> str:
    """The variable that holds the secret a YAML key at ``loc`` tried to set:
    ``DISCORD_TOKEN`` under ``discord:``, ``SLACK_APP_TOKEN`` for an app token, else
    ``SLACK_BOT_TOKEN`` (or ``SLACK_SIGNING_SECRET`` for a secret)."""
    key = str(loc[-1]).upper() if loc else ""
    if key in SECRETS_CHECKED:
        return key
    if loc and loc[0] == "discord":
        return "DISCORD_TOKEN"
    if "APP" in key:
        return "SLACK_APP_TOKEN"
    return "SLACK_SIGNING_SECRET" if "SECRET" in key else "SLACK_BOT_TOKEN"


def setting_loc(loc: tuple[str | int, ...]) -> Loc:
    """pydantic's error location as a setting's: without the union members it tried."""
    return tuple(p for p in loc if not (isinstance(p, str) and _UNION_TAG.fullmatch(p)))


def where(loc: Loc) -> str:
    """``("prices", "team_sheets", 0, "workspace")`` as ``prices.team_sheets[0].workspace``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
    return text or "(top level)"


def _example(default: Any) -> str:
    if isinstance(default, bool) or default is None:
        return ""
    if isinstance(default, int | float):
        return f", such as {number_text(default)}"
    return f", such as {default}" if isinstance(default, str) and default else ""


def error_words(err: Mapping[str, Any], loc: Loc, default: Any, keys: list[str]) -> str:
    """What one pydantic error means, and how to write the value: ``err`` is one of
    ``ValidationError.errors()``, at the setting ``loc``, whose default is ``default``;
    ``keys`` are the keys its section allows (for an unknown one, the nearest). Never the
    value itself, which could be anything typed (a secret pasted in the wrong place),
    except a number past a bound (:func:`bound_words`): that is a number, and the bound
    means little without it."""
    kind, message = err["type"], str(err["msg"])
    if kind == "extra_forbidden":
        key = str(loc[-1]) if loc else ""
        if key.upper() in SECRETS_CHECKED or "token" in key.lower() or "secret" in key.lower():
            return f"unknown key (secrets are read from the environment only, e.g. " \
                   f"{secret_variable(loc)})"  # fmt: skip
        near = nearest(key, keys)
        return f"unknown key (did you mean {near}?)" if near else \
            f"unknown key: the keys here are {', '.join(keys)}"  # fmt: skip
    if kind == "missing":
        return _MISSING_WORDS.get(str(loc[-1]) if loc else "", "required")
    if kind in ("model_type", "model_attributes_type", "dict_type") and err.get("input") is None:
        return ("is empty (nothing is indented under it): indent its keys under it, or remove "
                "the line to keep every default")  # fmt: skip
    if kind in ("model_type", "model_attributes_type"):
        return "must be a section: 'key: value' lines indented under it"
    if kind == "string_pattern_mismatch" and loc in _PATTERN_WORDS:
        return _PATTERN_WORDS[loc]
    if kind in _TYPE_WORDS:
        return _TYPE_WORDS[kind] + _example(default)
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    message = re.sub(r"^(Input|Value|String|List|Tuple|Dictionary) should( be)?",
                     lambda m: "must be" if m[2] else "must", message)  # fmt: skip
    bound = kind.startswith(("greater_than", "less_than"))
    value = _number(err.get("input"))
    limit = next(((k, v) for k, v in (err.get("ctx") or {}).items() if k in _BOUNDS), None)
    if bound and value is not None and limit is not None and loc:
        return bound_words(str(loc[-1]), value, limit[0], float(limit[1]), default)
    if bound and isinstance(default, int | float) and not isinstance(default, bool):
        message += f" (default {number_text(default)})"
    return message


__all__ = [
    "SHOWN_CHARS", "Loc", "Problem", "bound_words",
    "error_words", "events_path_problem", "host_problem", "location_problem",
    "missing_file", "nearest", "number_text", "schedule_problem", "secret_variable",
    "secret_warnings", "setting_loc", "unreadable_config",
    "value_problems", "where", "workspace_problem",
]  # fmt: skip
