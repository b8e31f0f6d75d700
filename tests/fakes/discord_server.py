"""A local stand-in for Discord (REST API + gateway websocket) for running the *real* discord.py.

``FakeDiscord`` is an aiohttp server on 127.0.0.1 (random free port) that speaks enough of
Discord's HTTP API v10 and gateway v10 for a discord.py 2.4+ bot to log in, connect, receive
READY / GUILD_CREATE / INTERACTION_CREATE / MESSAGE_CREATE, answer interactions, send messages
and open threads. It records every request, lets tests inject 429s and errors, and checks every
message-creating payload against Discord's published limits (``validate_message``).

Pointing discord.py at it (see ``point_discord_at``):

* REST: ``discord.http.Route.BASE`` is the one place discord.py builds every API URL from
  (``Route.__init__`` does ``self.BASE + self.path``; the interaction/webhook adapter in
  ``discord/webhook/async_.py`` uses the same ``Route``).
* Gateway: discord.py 2.4+ ``Client.connect()`` does **not** ask ``GET /gateway``; the first
  connection goes to the class attribute ``DiscordWebSocket.DEFAULT_GATEWAY``
  (``wss://gateway.discord.gg/``) and later ones to READY's ``resume_gateway_url``. Only
  ``AutoShardedClient`` without an explicit ``shard_count`` asks ``GET /gateway/bot``. So the
  gateway needs a second knob: ``DEFAULT_GATEWAY``. ``point_discord_at`` sets both.
* discord.py appends ``?v=10&encoding=json&compress=zlib-stream`` (``zstd-stream`` if the
  ``zstandard`` package / ``compression.zstd`` is importable). The fake honours zlib-stream (one
  shared ``zlib.compressobj`` per connection, every payload flushed with ``Z_SYNC_FLUSH`` so it
  ends in ``00 00 ff ff``) and falls back to plain text frames otherwise, which discord.py also
  accepts (it only decompresses ``bytes`` frames).

Behaviours copied from Discord because discord.py (or a careless bot) depends on them:

* JSON responses carry ``Content-Type: application/json`` *exactly* (discord.py compares the
  header string; with ``; charset=utf-8`` it would treat the body as text).
* Every response carries ``Via: 1.1 google``: discord.py treats a 429 *without* ``Via`` as a
  Cloudflare ban and raises instead of retrying.
* ``POST /interactions/{id}/{token}/callback?with_response=1`` (what discord.py 2.5+ sends)
  answers 200 with an *interaction callback response* body (``interaction`` + ``resource``),
  discord.py reads ``response_message_id`` from it; without ``with_response`` it answers 204.
* An interaction can be acknowledged once (second time: 400, code 40060), within
  ``interaction_deadline`` seconds of being dispatched (else 404, code 10062).
* A thread started from a message gets the message's id (as on Discord).
* Without the MESSAGE_CONTENT intent, MESSAGE_CREATE arrives with empty content/embeds/
  attachments/components unless it is a DM, mentions the bot or is the bot's own message.
* The bot's own messages (and non-ephemeral interaction responses) come back over the gateway
  as MESSAGE_CREATE when ``echo_events`` is on (the default), as they do on Discord.
* Files (``discord.File``) arrive as ``multipart/form-data``: ``payload_json`` plus
  ``files[N]`` parts, recorded in ``Call.files`` (bytes included) and turned into the
  message's ``attachments``; ``validate_attachments`` checks the ``attachments`` ids and that
  an embed's ``attachment://NAME`` image names a file of the same message, and a file over
  10 MiB gets 413 (code 40005).
* A file a user attaches to a slash command's attachment option: ``fake.attachment(name,
  data)`` hosts the bytes on the fake's CDN path (``GET /attachments/...``, no token, as
  Discord's CDN) and returns the attachment object; pass it as the option's value and in
  ``resolved`` (``interaction_slash(..., resolved={"attachments": {id: obj}})``).
  ``cdn_fetches`` lists the paths fetched.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as _dt
import hashlib
import itertools
import json
import re
import secrets
import time
import zlib
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import yarl
from aiohttp import BodyPartReader, WSMsgType, web

__all__ = [
    "Call",
    "FakeDiscord",
    "point_discord_at",
    "restore_discord_endpoints",
    "validate_attachments",
    "validate_autocomplete",
    "validate_message",
]

# =============================================================================================
# Discord limits. Sources (checked with the `search` tool against the official docs repo
# discord/discord-api-docs and its mirrors of discord.com/developers/docs):
# =============================================================================================
# https://discord.com/developers/docs/resources/message#create-message — "content: Message
# contents (up to 2000 characters)"; "embeds: Up to 10 rich embeds (up to 6000 characters)".
MAX_CONTENT = 2000
# https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-
# object-messages — "embeds: supports up to 10 embeds".
MAX_EMBEDS = 10
# https://discord.com/developers/docs/resources/message#embed-object-embed-limits — "title 256
# characters; description 4096 characters; fields up to 25 field objects; field.name 256;
# field.value 1024; footer.text 2048; author.name 256 ... the combined sum of characters in all
# title, description, field.name, field.value, footer.text, and author.name fields across all
# embeds attached to a message must not exceed 6000 characters. ... Leading and trailing
# whitespace characters are not included (they are trimmed automatically)."
MAX_EMBED_TITLE = 256
MAX_EMBED_DESCRIPTION = 4096
MAX_EMBED_FIELDS = 25
MAX_EMBED_FIELD_NAME = 256
MAX_EMBED_FIELD_VALUE = 1024
MAX_EMBED_FOOTER = 2048
MAX_EMBED_AUTHOR = 256
MAX_EMBED_TOTAL = 6000
# https://discord.com/developers/docs/interactions/message-components (discord-api-docs
# docs/interactions/Message_Components.md): "You can have up to 5 Action Rows per message";
# "An Action Row can contain up to 5 buttons"; "An Action Row can contain only one select menu";
# "An Action Row containing a select menu cannot also contain buttons"; custom_id "max 100
# characters"; button label "max 80 characters"; select "options: the choices in the select,
# max 25"; select option label / value / description "max 100 characters".
MAX_ACTION_ROWS = 5
MAX_BUTTONS_PER_ROW = 5
MAX_CUSTOM_ID = 100
MAX_BUTTON_LABEL = 80
MAX_SELECT_OPTIONS = 25
MAX_SELECT_OPTION_TEXT = 100
# https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-
# object-autocomplete — "choices: autocomplete choices (max of 25 choices)";
# https://discord.com/developers/docs/interactions/application-commands#application-command-
# object-application-command-option-choice-structure — "name: 1-100 character choice name";
# "value: Value for the choice, up to 100 characters if string".
MAX_AUTOCOMPLETE_CHOICES = 25
MAX_CHOICE_NAME = 100
MAX_CHOICE_VALUE = 100
# https://discord.com/developers/docs/resources/message#allowed-mentions-object — roles / users:
# "Array of role_ids/user_ids to mention (Max size of 100)"; "parse" is mutually exclusive with
# "users"/"roles" of the same kind ("we would throw a validation error").
MAX_ALLOWED_MENTION_IDS = 100
# https://discord.com/developers/docs/interactions/receiving-and-responding (Modal): "custom_id
# ... max 100 characters"; "title: the title of the popup modal, max 45 characters".
MAX_MODAL_TITLE = 45
# https://discord.com/developers/docs/reference#uploading-files — "up to 10 files" per message;
# the default upload limit for bots is 10 MiB per file (the ``attachment_size_limit`` the fake
# puts in interactions), larger is "413 Request entity too large" (JSON error code 40005);
# an embed shows an uploaded image with "attachment://filename.png" as its image/thumbnail url.
MAX_FILES = 10
MAX_ATTACHMENT_BYTES = 10 * 1024 * 1024

# Message flags (https://discord.com/developers/docs/resources/message#message-object-message-flags)
FLAG_EPHEMERAL = 1 << 6
FLAG_LOADING = 1 << 7
FLAG_IS_COMPONENTS_V2 = 1 << 15

# Gateway intents (https://discord.com/developers/docs/events/gateway#gateway-intents)
INTENT_GUILDS = 1 << 0
INTENT_GUILD_MEMBERS = 1 << 1
INTENT_GUILD_PRESENCES = 1 << 8
INTENT_GUILD_MESSAGES = 1 << 9
INTENT_DIRECT_MESSAGES = 1 << 12
INTENT_MESSAGE_CONTENT = 1 << 15
PRIVILEGED_INTENTS = INTENT_GUILD_MEMBERS | INTENT_GUILD_PRESENCES | INTENT_MESSAGE_CONTENT

DISCORD_EPOCH_MS = 1420070400000

_DEFAULT_BASE = "https://discord.com/api/v10"
_DEFAULT_GATEWAY = "wss://gateway.discord.gg/"


# =============================================================================================
# Pointing discord.py at the fake
# =============================================================================================
def _gateway_from_base(base_url: str) -> str:
    url = yarl.URL(base_url)
    scheme = {"http": "ws", "https": "wss"}.get(url.scheme, url.scheme)
    return str(url.with_scheme(scheme).with_path("/gateway").with_query(None))


def point_discord_at(base_url: str, gateway_url: str | None = None) -> None:
    """Send discord.py's REST calls to ``base_url`` and its gateway connection to ``gateway_url``.

    ``base_url`` is like ``http://127.0.0.1:PORT/api/v10``; ``gateway_url`` defaults to
    ``ws(s)://same-host/gateway`` (what ``FakeDiscord`` serves and returns from ``GET /gateway``).
    Sets ``discord.http.Route.BASE`` and ``discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY``,
    both plain class attributes; nothing else in discord.py is touched.
    """
    from discord.gateway import DiscordWebSocket
    from discord.http import Route

    Route.BASE = base_url.rstrip("/")
    DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url or _gateway_from_base(base_url))


def restore_discord_endpoints() -> None:
    """Undo ``point_discord_at`` (back to discord.com / gateway.discord.gg)."""
    point_discord_at(_DEFAULT_BASE, _DEFAULT_GATEWAY)


# =============================================================================================
# Validation (plain functions, usable without a server)
# =============================================================================================
def _text_len(value: Any) -> int:
    # Discord trims leading/trailing whitespace before measuring embed strings.
    return len(str(value).strip()) if value is not None else 0


def _validate_embeds(embeds: list[Any], problems: list[str]) -> None:
    if len(embeds) > MAX_EMBEDS:
        problems.append(f"embeds: {len(embeds)} embeds > {MAX_EMBEDS}")
    total = 0
    for i, embed in enumerate(embeds):
        if not isinstance(embed, dict):
            problems.append(f"embeds[{i}]: not an object")
            continue
        checks: list[tuple[str, Any, int]] = [
            ("title", embed.get("title"), MAX_EMBED_TITLE),
            ("description", embed.get("description"), MAX_EMBED_DESCRIPTION),
            ("footer.text", (embed.get("footer") or {}).get("text"), MAX_EMBED_FOOTER),
            ("author.name", (embed.get("author") or {}).get("name"), MAX_EMBED_AUTHOR),
        ]
        fields = embed.get("fields") or []
        if len(fields) > MAX_EMBED_FIELDS:
            problems.append(f"embeds[{i}].fields: {len(fields)} fields > {MAX_EMBED_FIELDS}")
        for j, fld in enumerate(fields):
            checks.append((f"fields[{j}].name", fld.get("name"), MAX_EMBED_FIELD_NAME))
            checks.append((f"fields[{j}].value", fld.get("value"), MAX_EMBED_FIELD_VALUE))
        for name, value, limit in checks:
            n = _text_len(value)
            total += n
            if n > limit:
                problems.append(f"embeds[{i}].{name}: {n} chars > {limit}")
    if total > MAX_EMBED_TOTAL:
        problems.append(f"embeds: {total} chars in total across all embeds > {MAX_EMBED_TOTAL}")


def _validate_component(comp: Any, where: str, problems: list[str]) -> None:
    if not isinstance(comp, dict):
        problems.append(f"{where}: not an object")
        return
    ctype = comp.get("type")
    custom_id = comp.get("custom_id")
    if custom_id is not None and len(str(custom_id)) > MAX_CUSTOM_ID:
        problems.append(f"{where}.custom_id: {len(str(custom_id))} chars > {MAX_CUSTOM_ID}")
    if ctype == 2:  # button
        label = comp.get("label")
        if label is not None and len(label) > MAX_BUTTON_LABEL:
            problems.append(f"{where}.label: {len(label)} chars > {MAX_BUTTON_LABEL}")
        if comp.get("style") == 5:
            if custom_id is not None:
                problems.append(f"{where}: link button must not have a custom_id")
        elif comp.get("style") != 6 and custom_id is None:
            problems.append(f"{where}: non-link button needs a custom_id")
    if ctype == 3:  # string select
        options = comp.get("options") or []
        if len(options) > MAX_SELECT_OPTIONS:
            problems.append(f"{where}.options: {len(options)} options > {MAX_SELECT_OPTIONS}")
        for k, opt in enumerate(options):
            for key in ("label", "value", "description"):
                val = opt.get(key)
                if val is not None and len(str(val)) > MAX_SELECT_OPTION_TEXT:
                    problems.append(
                        f"{where}.options[{k}].{key}: {len(str(val))} chars > "
                        f"{MAX_SELECT_OPTION_TEXT}"
                    )
    for k, child in enumerate(comp.get("components") or []):
        _validate_component(child, f"{where}.components[{k}]", problems)
    accessory = comp.get("accessory")
    if accessory is not None:
        _validate_component(accessory, f"{where}.accessory", problems)


def _validate_components(components: list[Any], flags: int, problems: list[str]) -> None:
    if not flags & FLAG_IS_COMPONENTS_V2:
        if len(components) > MAX_ACTION_ROWS:
            problems.append(f"components: {len(components)} action rows > {MAX_ACTION_ROWS}")
        for i, row in enumerate(components):
            if not isinstance(row, dict) or row.get("type") != 1:
                problems.append(f"components[{i}]: top-level component must be an action row")
                continue
            children = row.get("components") or []
            kinds = [c.get("type") for c in children if isinstance(c, dict)]
            buttons = kinds.count(2)
            selects = len([k for k in kinds if k in (3, 5, 6, 7, 8)])
            if buttons > MAX_BUTTONS_PER_ROW:
                problems.append(f"components[{i}]: {buttons} buttons > {MAX_BUTTONS_PER_ROW}")
            if selects > 1 or (selects and buttons):
                problems.append(f"components[{i}]: a select menu must be alone in its row")
            if not children:
                problems.append(f"components[{i}]: empty action row")
    for i, comp in enumerate(components):
        _validate_component(comp, f"components[{i}]", problems)


def _validate_allowed_mentions(am: Any, problems: list[str]) -> None:
    if not isinstance(am, dict):
        return
    parse = am.get("parse") or []
    for kind in ("users", "roles"):
        ids = am.get(kind)
        if ids and kind in parse:
            problems.append(f"allowed_mentions: parse contains {kind!r} and {kind} is set")
        if ids and len(ids) > MAX_ALLOWED_MENTION_IDS:
            problems.append(f"allowed_mentions.{kind}: {len(ids)} ids > {MAX_ALLOWED_MENTION_IDS}")


def validate_message(payload: dict[str, Any]) -> list[str]:
    """Return the Discord limits a message payload breaks (empty list when it is fine).

    Works on channel-message bodies, webhook/followup bodies and interaction callback ``data``.
    """
    problems: list[str] = []
    if not isinstance(payload, dict):
        return ["payload is not an object"]
    content = payload.get("content")
    if content is not None and len(str(content)) > MAX_CONTENT:
        problems.append(f"content: {len(str(content))} chars > {MAX_CONTENT}")
    embeds = payload.get("embeds")
    if embeds is None and payload.get("embed") is not None:
        embeds = [payload["embed"]]
    _validate_embeds(list(embeds or []), problems)
    flags = int(payload.get("flags") or 0)
    _validate_components(list(payload.get("components") or []), flags, problems)
    _validate_allowed_mentions(payload.get("allowed_mentions"), problems)
    return problems


def validate_attachments(payload: Any, files: list[dict[str, Any]]) -> list[str]:
    """The attachment rules a multipart message breaks: at most 10 files, each
    ``attachments[].id`` naming an uploaded file's index (or an attachment kept by an edit),
    and every ``attachment://NAME`` an embed shows naming a file of this message."""
    if not isinstance(payload, dict):
        return []
    problems: list[str] = []
    if len(files) > MAX_FILES:
        problems.append(f"{len(files)} files > {MAX_FILES}")
    names = {str(f.get("filename")) for f in files}
    described = [a for a in payload.get("attachments") or [] if isinstance(a, dict)]
    for a in described:
        aid = str(a.get("id", ""))
        if aid.isdigit() and int(aid) < len(files):
            if a.get("filename"):
                names.add(str(a["filename"]))
        elif not (aid.isdigit() and int(aid) > 1000):  # not an index, nor a kept attachment
            problems.append(f"attachments: id {aid!r} names no uploaded file")
    embeds = payload.get("embeds") or ([payload["embed"]] if payload.get("embed") else [])
    for i, embed in enumerate(embeds):
        for part in ("image", "thumbnail"):
            url = str(((embed or {}).get(part) or {}).get("url") or "")
            if url.startswith("attachment://") and url[len("attachment://"):] not in names:
                problems.append(f"embeds[{i}].{part}.url {url} names no file of this message")
    return problems


def validate_autocomplete(choices: Iterable[dict[str, Any]]) -> list[str]:
    """Limits for an autocomplete result (interaction callback type 8) ``choices`` list."""
    choices = list(choices or [])
    problems: list[str] = []
    if len(choices) > MAX_AUTOCOMPLETE_CHOICES:
        problems.append(f"choices: {len(choices)} choices > {MAX_AUTOCOMPLETE_CHOICES}")
    for i, choice in enumerate(choices):
        name = str(choice.get("name", ""))
        if not 1 <= len(name) <= MAX_CHOICE_NAME:
            problems.append(f"choices[{i}].name: {len(name)} chars, must be 1-{MAX_CHOICE_NAME}")
        value = choice.get("value")
        if isinstance(value, str) and len(value) > MAX_CHOICE_VALUE:
            problems.append(f"choices[{i}].value: {len(value)} chars > {MAX_CHOICE_VALUE}")
    return problems


def _validate_modal(data: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    custom_id = str(data.get("custom_id") or "")
    if not 1 <= len(custom_id) <= MAX_CUSTOM_ID:
        problems.append(f"modal.custom_id: {len(custom_id)} chars, must be 1-{MAX_CUSTOM_ID}")
    title = str(data.get("title") or "")
    if not 1 <= len(title) <= MAX_MODAL_TITLE:
        problems.append(f"modal.title: {len(title)} chars, must be 1-{MAX_MODAL_TITLE}")
    comps = data.get("components") or []
    if not 1 <= len(comps) <= 5:
        problems.append(f"modal.components: {len(comps)} components, must be 1-5")
    for i, comp in enumerate(comps):
        _validate_component(comp, f"modal.components[{i}]", problems)
    return problems


def _is_empty_message(payload: dict[str, Any], files: list[dict[str, Any]]) -> bool:
    return not (
        payload.get("content")
        or payload.get("embeds")
        or payload.get("components")
        or payload.get("sticker_ids")
        or payload.get("poll")
        or files
    )


# =============================================================================================
# Records
# =============================================================================================
@dataclass
class Call:
    """One HTTP request the fake received. ``path`` is relative to ``/api/v10``."""

    method: str
    path: str
    query: dict[str, str]
    json: Any
    headers: dict[str, str]
    time: float
    files: list[dict[str, Any]] = field(default_factory=list)
    status: int | None = None
    response: Any = None

    def matches(self, method: str | None, path_prefix: str, status: int | None = None) -> bool:
        if method not in (None, "*") and self.method != method.upper():
            return False
        if status is not None and self.status != status:
            return False
        return self.path.startswith(path_prefix)


@dataclass
class _Fault:
    method: str | None
    path_prefix: str
    status: int
    body: dict[str, Any]
    headers: dict[str, str]
    remaining: int


@dataclass
class _InteractionState:
    payload: dict[str, Any]
    dispatched_at: float | None = None
    acked: bool = False
    ack_type: int | None = None
    original_id: int | None = None


class _Conn:
    """One gateway websocket connection."""

    def __init__(self, ws: web.WebSocketResponse, compress: str | None) -> None:
        self.ws = ws
        self.compress = compress
        self._zlib = zlib.compressobj() if compress == "zlib-stream" else None
        self._lock = asyncio.Lock()
        self.session: _Session | None = None
        self.received: list[dict[str, Any]] = []

    async def send(self, payload: dict[str, Any]) -> bool:
        raw = json.dumps(payload, separators=(",", ":"))
        async with self._lock:
            if self.ws.closed:
                return False
            try:
                if self._zlib is not None:
                    data = self._zlib.compress(raw.encode()) + self._zlib.flush(zlib.Z_SYNC_FLUSH)
                    await self.ws.send_bytes(data)
                else:
                    await self.ws.send_str(raw)
            except (ConnectionError, RuntimeError):
                return False
        return True


@dataclass
class _Session:
    session_id: str
    token: str
    intents: int | None
    shard: list[int]
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)
    conn: _Conn | None = None

    @property
    def active(self) -> bool:
        return self.conn is not None and not self.conn.ws.closed


_Handler = Callable[[Call, dict[str, str]], Awaitable[web.StreamResponse]]


def _now_iso() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat()


def _infer_option_type(value: Any) -> int:
    if isinstance(value, bool):
        return 5
    if isinstance(value, int):
        return 4
    if isinstance(value, float):
        return 10
    return 3


# =============================================================================================
# The fake
# =============================================================================================
class FakeDiscord:
    """Fake Discord REST API + gateway. Use as ``async with FakeDiscord() as fake:``.

    Ids: ``application_id``, ``bot_user_id`` (deliberately different from the application id,
    so mixing them up fails), ``guild_id``, ``channel_id`` (text channel "general"),
    ``category_id``, ``thread_id`` (public thread under ``channel_id``), ``user_id`` (a human
    member "tester", also the guild owner).
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        heartbeat_interval_ms: int = 41250,
        interaction_deadline: float = 3.0,
        reject_invalid: bool = True,
        echo_events: bool = True,
        privileged_intents_enabled: int = PRIVILEGED_INTENTS,
    ) -> None:
        self.token = token  # None: accept any bot token
        self.heartbeat_interval_ms = heartbeat_interval_ms
        self.interaction_deadline = interaction_deadline
        self.reject_invalid = reject_invalid
        self.echo_events = echo_events
        self.privileged_intents_enabled = privileged_intents_enabled

        self._last_id = 0
        self._counter = itertools.count()
        self.application_id = self._next_id()
        self.bot_user_id = self._next_id()
        self.guild_id = self._next_id()
        self.category_id = self._next_id()
        self.channel_id = self._next_id()
        self.thread_id = self._next_id()
        self.user_id = self._next_id()
        self.bot_role_id = self._next_id()

        created = _now_iso()
        self.bot_user: dict[str, Any] = {
            "id": str(self.bot_user_id),
            "username": "ftcost",
            "global_name": None,
            "discriminator": "0",
            "avatar": None,
            "bot": True,
            "system": False,
            "flags": 0,
            "public_flags": 0,
            "verified": True,
            "mfa_enabled": False,
            "locale": "en-US",
            "email": None,
            "premium_type": 0,
            "banner": None,
            "accent_color": None,
            "avatar_decoration_data": None,
        }
        self.users: dict[int, dict[str, Any]] = {self.bot_user_id: self.bot_user}
        self.add_user("tester", user_id=self.user_id, global_name="Tester")

        everyone_perms = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 31)
        self.roles: list[dict[str, Any]] = [
            self._role(self.guild_id, "@everyone", everyone_perms, position=0),
            {
                **self._role(self.bot_role_id, "ftcost", self.app_permissions_int, position=1),
                "managed": True,
                "tags": {"bot_id": str(self.bot_user_id)},
            },
        ]
        self.members: dict[int, dict[str, Any]] = {}
        self._add_member(self.bot_user_id, roles=[self.bot_role_id])
        self._add_member(self.user_id)

        self.channels: dict[int, dict[str, Any]] = {}
        self.channels[self.category_id] = {
            "id": str(self.category_id),
            "type": 4,
            "guild_id": str(self.guild_id),
            "name": "Text Channels",
            "position": 0,
            "parent_id": None,
            "nsfw": False,
            "flags": 0,
            "permission_overwrites": [],
        }
        self.channels[self.channel_id] = {
            "id": str(self.channel_id),
            "type": 0,
            "guild_id": str(self.guild_id),
            "name": "general",
            "position": 0,
            "parent_id": str(self.category_id),
            "topic": None,
            "nsfw": False,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "default_auto_archive_duration": 1440,
            "flags": 0,
            "permission_overwrites": [],
        }
        self.channels[self.thread_id] = self._thread_object(
            self.thread_id, self.channel_id, "cost-questions", owner_id=self.user_id
        )
        self.guild: dict[str, Any] = {
            "id": str(self.guild_id),
            "name": "ftcost test guild",
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "owner_id": str(self.user_id),
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "features": [],
            "mfa_level": 0,
            "system_channel_id": str(self.channel_id),
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "vanity_url_code": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
            "emojis": [],
            "stickers": [],
            "joined_at": created,
            "large": False,
            "unavailable": False,
        }
        self.gone_channels: set[int] = set()

        # Records
        self.calls: list[Call] = []
        self.violations: list[str] = []
        self.internal_errors: list[str] = []  # bugs in the fake itself; should stay empty
        # attachments users gave slash commands (``attachment``): CDN path -> bytes, type
        self.cdn_files: dict[str, tuple[bytes, str | None]] = {}
        self.cdn_fetches: list[str] = []
        self.identifies: list[dict[str, Any]] = []
        self.resumes: list[dict[str, Any]] = []
        self.gateway_received: list[dict[str, Any]] = []
        self.gateway_queries: list[dict[str, str]] = []
        self.dropped_events: list[tuple[str, dict[str, Any], str]] = []
        self.interaction_callbacks: list[dict[str, Any]] = []
        self.messages: dict[int, dict[str, Any]] = {}
        self.global_commands: list[dict[str, Any]] = []
        self.guild_commands: dict[int, list[dict[str, Any]]] = {}

        self._faults: list[_Fault] = []
        self._interactions: dict[int, _InteractionState] = {}
        self._by_token: dict[str, _InteractionState] = {}
        self._sessions: dict[str, _Session] = {}
        self._conns: list[_Conn] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._cond: asyncio.Condition | None = None
        self._runner: web.AppRunner | None = None
        self.port: int = 0
        self._routes = self._build_routes()

    # -----------------------------------------------------------------------------------------
    # Lifecycle
    # -----------------------------------------------------------------------------------------
    async def __aenter__(self) -> FakeDiscord:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def start(self) -> None:
        self._cond = asyncio.Condition()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_get("/gateway", self._gateway_handler)
        app.router.add_route("*", "/{tail:.*}", self._http_handler)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = int(self._runner.addresses[0][1])

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        for conn in list(self._conns):
            with contextlib.suppress(Exception):
                await conn.ws.close(code=1001, message=b"fake discord shutting down")
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/gateway"

    def point_discord_py(self) -> None:
        """Shortcut for ``point_discord_at(self.base_url, self.gateway_url)``."""
        point_discord_at(self.base_url, self.gateway_url)

    # -----------------------------------------------------------------------------------------
    # Ids and model objects
    # -----------------------------------------------------------------------------------------
    def _next_id(self) -> int:
        ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
        sf = (ms << 22) | (1 << 17) | (next(self._counter) & 0xFFF)
        if sf <= self._last_id:
            sf = self._last_id + 1
        self._last_id = sf
        return sf

    def new_id(self) -> int:
        """A fresh, increasing snowflake."""
        return self._next_id()

    @property
    def app_permissions_int(self) -> int:
        # VIEW_CHANNEL, SEND_MESSAGES, EMBED_LINKS, ATTACH_FILES, READ_MESSAGE_HISTORY,
        # USE_APPLICATION_COMMANDS, CREATE_PUBLIC_THREADS, SEND_MESSAGES_IN_THREADS
        bits = (10, 11, 14, 15, 16, 31, 35, 38)
        return sum(1 << b for b in bits)

    @staticmethod
    def _role(role_id: int, name: str, perms: int, *, position: int) -> dict[str, Any]:
        return {
            "id": str(role_id),
            "name": name,
            "permissions": str(perms),
            "position": position,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }

    def add_user(
        self,
        username: str,
        *,
        user_id: int | None = None,
        global_name: str | None = None,
        bot: bool = False,
        member: bool = True,
    ) -> dict[str, Any]:
        """Create a user (and, by default, a guild member). Returns the user object."""
        uid = user_id or self._next_id()
        user = {
            "id": str(uid),
            "username": username,
            "global_name": global_name,
            "discriminator": "0",
            "avatar": None,
            "bot": bot,
            "public_flags": 0,
            "avatar_decoration_data": None,
        }
        self.users[uid] = user
        if member and hasattr(self, "members"):
            self._add_member(uid)
        return user

    def _add_member(self, user_id: int, roles: list[int] | None = None) -> None:
        self.members[user_id] = {
            "user": self.users[user_id],
            "nick": None,
            "avatar": None,
            "roles": [str(r) for r in roles or []],
            "joined_at": _now_iso(),
            "premium_since": None,
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "communication_disabled_until": None,
        }

    def _member_payload(self, user_id: int, permissions: str | None = None) -> dict[str, Any]:
        if user_id not in self.members:
            if user_id not in self.users:
                self.add_user(f"user{user_id % 10000}", user_id=user_id, member=False)
            self._add_member(user_id)
        member = dict(self.members[user_id])
        member["permissions"] = permissions or str(
            int(self.roles[0]["permissions"]) | (1 << 6)  # + ADD_REACTIONS
        )
        return member

    def _thread_object(
        self,
        thread_id: int,
        parent_id: int,
        name: str,
        *,
        owner_id: int,
        type_: int = 11,
        auto_archive: int = 1440,
    ) -> dict[str, Any]:
        now = _now_iso()
        return {
            "id": str(thread_id),
            "type": type_,
            "guild_id": str(self.guild_id),
            "parent_id": str(parent_id),
            "owner_id": str(owner_id),
            "name": name,
            "last_message_id": None,
            "message_count": 0,
            "member_count": 1,
            "total_message_sent": 0,
            "rate_limit_per_user": 0,
            "flags": 0,
            "applied_tags": [],
            "thread_metadata": {
                "archived": False,
                "auto_archive_duration": auto_archive,
                "archive_timestamp": now,
                "locked": False,
                "create_timestamp": now,
            },
        }

    def mark_channel_gone(self, channel_id: int) -> None:
        """Make the channel answer 404 (code 10003 Unknown Channel) from now on."""
        self.gone_channels.add(int(channel_id))

    def guild_create_payload(self) -> dict[str, Any]:
        threads = [c for c in self.channels.values() if c["type"] in (10, 11, 12)]
        channels = [
            c
            for c in self.channels.values()
            if c["type"] not in (10, 11, 12) and int(c["id"]) not in self.gone_channels
        ]
        return {
            **self.guild,
            "roles": self.roles,
            "channels": channels,
            "threads": [t for t in threads if int(t["id"]) not in self.gone_channels],
            "members": list(self.members.values()),
            "member_count": len(self.members),
            "presences": [],
            "voice_states": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
        }

    # -----------------------------------------------------------------------------------------
    # Fault injection
    # -----------------------------------------------------------------------------------------
    def rate_limit_next(
        self,
        method: str | None,
        path_prefix: str,
        retry_after: float = 0.2,
        global_: bool = False,
        *,
        count: int = 1,
        scope: str | None = None,
    ) -> None:
        """Answer the next ``count`` matching requests with 429 (as Discord does)."""
        scope = scope or ("global" if global_ else "user")
        body = {
            "message": "You are being rate limited.",
            "retry_after": retry_after,
            "global": global_,
        }
        if not global_:
            body["code"] = 0
        headers = {
            "Retry-After": str(max(1, int(retry_after + 0.999))),
            "X-RateLimit-Scope": scope,
        }
        if global_:
            headers["X-RateLimit-Global"] = "true"
        else:
            headers.update(
                {
                    "X-RateLimit-Limit": "5",
                    "X-RateLimit-Remaining": "0",
                    "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
                    "X-RateLimit-Reset-After": f"{retry_after:.3f}",
                    "X-RateLimit-Bucket": self._bucket_for(method or "*", path_prefix),
                }
            )
        self._faults.append(_Fault(method, path_prefix, 429, body, headers, count))

    def fail_next(
        self,
        method: str | None,
        path_prefix: str,
        status: int = 403,
        code: int = 50001,
        message: str | None = None,
        *,
        count: int = 1,
    ) -> None:
        """Answer the next ``count`` matching requests with an error (default 403, 50001)."""
        default_messages = {
            50001: "Missing Access",
            50013: "Missing Permissions",
            10003: "Unknown Channel",
            10008: "Unknown Message",
            10062: "Unknown interaction",
            10015: "Unknown Webhook",
            50035: "Invalid Form Body",
            0: "500: Internal Server Error",
        }
        body = {"message": message or default_messages.get(code, f"{status} error"), "code": code}
        self._faults.append(_Fault(method, path_prefix, status, body, {}, count))

    def _take_fault(self, method: str, path: str) -> _Fault | None:
        for fault in self._faults:
            if fault.method not in (None, "*") and fault.method.upper() != method:
                continue
            if not path.startswith(fault.path_prefix):
                continue
            fault.remaining -= 1
            if fault.remaining <= 0:
                self._faults.remove(fault)
            return fault
        return None

    # -----------------------------------------------------------------------------------------
    # Call inspection
    # -----------------------------------------------------------------------------------------
    def find_calls(
        self, method: str | None = None, path_prefix: str = "", status: int | None = None
    ) -> list[Call]:
        return [
            c for c in self.calls if c.status is not None and c.matches(method, path_prefix, status)
        ]

    async def wait_for_call(
        self,
        method: str | None,
        path_prefix: str,
        count: int = 1,
        timeout: float = 5.0,
        status: int | None = None,
    ) -> list[Call]:
        """Wait until ``count`` matching requests have been answered; returns all matches."""
        assert self._cond is not None, "FakeDiscord not started"

        def ready() -> bool:
            return len(self.find_calls(method, path_prefix, status)) >= count

        async with self._cond:
            try:
                await asyncio.wait_for(self._cond.wait_for(ready), timeout)
            except TimeoutError:
                seen = "\n".join(f"  {c.method} {c.path} -> {c.status}" for c in self.calls)
                raise AssertionError(
                    f"timed out waiting for {count} x {method} {path_prefix}; calls:\n{seen}"
                ) from None
        return self.find_calls(method, path_prefix, status)

    def channel_messages(self, channel_id: int | None = None) -> list[dict[str, Any]]:
        """Messages stored in a channel (default: ``channel_id``), oldest first."""
        cid = str(channel_id or self.channel_id)
        return [m for m in self.messages.values() if m["channel_id"] == cid]

    async def _notify(self) -> None:
        if self._cond is not None:
            async with self._cond:
                self._cond.notify_all()

    # -----------------------------------------------------------------------------------------
    # HTTP plumbing
    # -----------------------------------------------------------------------------------------
    def _bucket_for(self, method: str, path: str) -> str:
        template = re.sub(r"/\d{5,}", "/{id}", path)
        template = re.sub(r"/webhooks/\{id\}/[^/]+", "/webhooks/{id}/{token}", template)
        template = re.sub(r"/interactions/\{id\}/[^/]+", "/interactions/{id}/{token}", template)
        return hashlib.sha1(f"{method} {template}".encode()).hexdigest()[:16]

    def _response(
        self,
        data: Any,
        status: int = 200,
        headers: dict[str, str] | None = None,
        call: Call | None = None,
    ) -> web.Response:
        hdrs = {"Via": "1.1 google"}
        if call is not None and status < 400:
            hdrs.update(
                {
                    "X-RateLimit-Limit": "50",
                    "X-RateLimit-Remaining": "49",
                    "X-RateLimit-Reset": f"{time.time() + 1:.3f}",
                    "X-RateLimit-Reset-After": "1.000",
                    "X-RateLimit-Bucket": self._bucket_for(call.method, call.path),
                }
            )
        hdrs.update(headers or {})
        if call is not None:
            call.response = data
        if status == 204 or data is None:
            return web.Response(status=204 if status < 300 else status, headers=hdrs)
        # content_type without charset: discord.py compares the header to 'application/json'.
        return web.Response(
            body=json.dumps(data).encode(),
            status=status,
            headers=hdrs,
            content_type="application/json",
        )

    def _error(
        self,
        status: int,
        code: int,
        message: str,
        call: Call | None = None,
        errors: dict[str, Any] | None = None,
    ) -> web.Response:
        body: dict[str, Any] = {"message": message, "code": code}
        if errors:
            body["errors"] = errors
        if call is not None:
            call.response = body
        return self._response(body, status)

    def _not_found(self, call: Call | None = None) -> web.Response:
        return self._error(404, 0, "404: Not Found", call)

    def _invalid(self, call: Call, problems: list[str]) -> web.Response | None:
        """Record limit violations; answer 400 Invalid Form Body when ``reject_invalid``."""
        if not problems:
            return None
        for p in problems:
            self.violations.append(f"{call.method} {call.path}: {p}")
        if not self.reject_invalid:
            return None
        return self._error(400, 50035, "Invalid Form Body", call, errors={"_problems": problems})

    def _too_big(self, call: Call) -> web.Response | None:
        """413 for a file over the upload limit, as Discord answers it."""
        for f in call.files:
            if f["size"] > MAX_ATTACHMENT_BYTES:
                self.violations.append(
                    f"{call.method} {call.path}: file {f['filename']} has {f['size']} bytes "
                    f"(max {MAX_ATTACHMENT_BYTES})"
                )
                return self._error(413, 40005, "Request entity too large", call)
        return None

    def _check_empty(self, call: Call, payload: dict[str, Any]) -> web.Response | None:
        if not _is_empty_message(payload, call.files):
            return None
        self.violations.append(f"{call.method} {call.path}: empty message")
        if self.reject_invalid:
            return self._error(400, 50006, "Cannot send an empty message", call)
        return None

    async def _read_body(self, request: web.Request) -> tuple[Any, list[dict[str, Any]]]:
        files: list[dict[str, Any]] = []
        if not request.can_read_body:
            return None, files
        ctype = request.content_type
        if ctype.startswith("multipart/"):
            payload: Any = None
            reader = await request.multipart()
            while True:
                part = await reader.next()
                if part is None:
                    break
                if not isinstance(part, BodyPartReader):
                    continue
                data = await part.read(decode=False)
                if part.name == "payload_json":
                    payload = json.loads(data.decode())
                elif part.filename is not None:
                    files.append(
                        {
                            "field": part.name,
                            "filename": part.filename,
                            "content_type": part.headers.get("Content-Type"),
                            "size": len(data),
                            "data": bytes(data),
                        }
                    )
                else:
                    payload = payload or {}
                    payload[part.name] = data.decode()
            return payload, files
        raw = await request.read()
        if not raw:
            return None, files
        try:
            return json.loads(raw), files
        except ValueError:
            return raw.decode(errors="replace"), files

    async def _http_handler(self, request: web.Request) -> web.StreamResponse:
        m = re.match(r"^/api(?:/v\d+)?(/.*)$", request.path)
        path = m.group(1) if m else request.path
        try:
            body, files = await self._read_body(request)
        except Exception as exc:
            body, files = f"<unreadable body: {exc!r}>", []
        call = Call(
            method=request.method,
            path=path,
            query=dict(request.query),
            json=body,
            headers=dict(request.headers),
            time=time.monotonic(),
            files=files,
        )
        self.calls.append(call)
        try:
            fault = self._take_fault(call.method, path)
            if fault is not None:
                resp = self._response(fault.body, fault.status, fault.headers)
                call.response = fault.body
            else:
                resp = await self._route(call)
        except Exception as exc:
            # A bug in the fake. Not a 5xx: discord.py retries those with back-off (~25 s).
            self.internal_errors.append(f"{call.method} {call.path}: {exc!r}")
            resp = self._error(400, -1, f"fake discord internal error: {exc!r}", call)
        call.status = resp.status
        await self._notify()
        return resp

    def _build_routes(self) -> list[tuple[str, re.Pattern[str], _Handler]]:
        s = r"(?P<{}>\d+)"
        table: list[tuple[str, str, _Handler]] = [
            ("GET", r"/gateway", self._get_gateway),
            ("GET", r"/gateway/bot", self._get_gateway_bot),
            ("GET", r"/users/@me", self._get_me),
            ("GET", r"/users/" + s.format("user_id"), self._get_user),
            ("GET", r"/oauth2/applications/@me", self._get_application),
            ("GET", r"/applications/@me", self._get_application),
            ("GET", r"/applications/{}/commands".format(s.format("app")), self._get_commands),
            ("PUT", r"/applications/{}/commands".format(s.format("app")), self._put_commands),
            ("POST", r"/applications/{}/commands".format(s.format("app")), self._post_command),
            (
                "GET",
                r"/applications/{}/guilds/{}/commands".format(s.format("app"), s.format("guild")),
                self._get_commands,
            ),
            (
                "PUT",
                r"/applications/{}/guilds/{}/commands".format(s.format("app"), s.format("guild")),
                self._put_commands,
            ),
            (
                "POST",
                r"/applications/{}/guilds/{}/commands".format(s.format("app"), s.format("guild")),
                self._post_command,
            ),
            (
                "POST",
                r"/interactions/{}/(?P<token>[^/]+)/callback".format(s.format("iid")),
                self._interaction_callback,
            ),
            (
                "GET",
                r"/webhooks/{}/(?P<token>[^/]+)/messages/(?P<mid>@original|\d+)".format(
                    s.format("app")
                ),
                self._webhook_get_message,
            ),
            (
                "PATCH",
                r"/webhooks/{}/(?P<token>[^/]+)/messages/(?P<mid>@original|\d+)".format(
                    s.format("app")
                ),
                self._webhook_edit_message,
            ),
            (
                "DELETE",
                r"/webhooks/{}/(?P<token>[^/]+)/messages/(?P<mid>@original|\d+)".format(
                    s.format("app")
                ),
                self._webhook_delete_message,
            ),
            (
                "POST",
                r"/webhooks/{}/(?P<token>[^/]+)".format(s.format("app")),
                self._webhook_execute,
            ),
            ("GET", r"/channels/{}".format(s.format("cid")), self._get_channel),
            ("POST", r"/channels/{}/messages".format(s.format("cid")), self._create_message),
            (
                "GET",
                r"/channels/{}/messages/{}".format(s.format("cid"), s.format("mid")),
                self._get_message,
            ),
            (
                "PATCH",
                r"/channels/{}/messages/{}".format(s.format("cid"), s.format("mid")),
                self._edit_message,
            ),
            (
                "DELETE",
                r"/channels/{}/messages/{}".format(s.format("cid"), s.format("mid")),
                self._delete_message,
            ),
            (
                "POST",
                r"/channels/{}/messages/{}/threads".format(s.format("cid"), s.format("mid")),
                self._thread_from_message,
            ),
            ("POST", r"/channels/{}/threads".format(s.format("cid")), self._thread_create),
            ("POST", r"/channels/{}/typing".format(s.format("cid")), self._typing),
            ("GET", r"/guilds/{}".format(s.format("guild")), self._get_guild),
        ]
        return [(meth, re.compile("^" + pat + "$"), fn) for meth, pat, fn in table]

    def attachment(
        self,
        filename: str,
        data: bytes,
        *,
        content_type: str | None = "text/plain; charset=utf-8",
        size: int | None = None,
        channel_id: int | None = None,
    ) -> dict[str, Any]:
        """An attachment a user gave a slash command: its bytes served from the fake's CDN
        path, its object (``size``: the size Discord reports, default the real one)."""
        aid = self._next_id()
        path = f"/attachments/{channel_id or self.channel_id}/{aid}/{filename}"
        self.cdn_files[path] = (bytes(data), content_type)
        url = f"http://127.0.0.1:{self.port}{path}"
        obj: dict[str, Any] = {
            "id": str(aid),
            "filename": filename,
            "size": len(data) if size is None else size,
            "url": url,
            "proxy_url": url,
            "ephemeral": True,
            "flags": 0,
        }
        if content_type is not None:
            obj["content_type"] = content_type
        return obj

    async def _route(self, call: Call) -> web.StreamResponse:
        if call.method == "GET" and call.path.startswith("/attachments/"):  # the CDN
            self.cdn_fetches.append(call.path)
            hosted = self.cdn_files.get(call.path)
            if hosted is None:
                return web.Response(status=404, text="404: Not Found")
            return web.Response(body=hosted[0], content_type=(hosted[1] or
                                "application/octet-stream").split(";")[0])
        needs_auth = not call.path.startswith(("/interactions/", "/webhooks/", "/gateway"))
        if needs_auth and self.token is not None:
            auth = call.headers.get("Authorization", "")
            if auth != f"Bot {self.token}":
                return self._error(401, 0, "401: Unauthorized", call)
        cm = re.match(r"^/channels/(\d+)", call.path)
        if cm and int(cm.group(1)) in self.gone_channels:
            return self._error(404, 10003, "Unknown Channel", call)
        for method, pattern, fn in self._routes:
            if method != call.method:
                continue
            match = pattern.match(call.path)
            if match:
                return await fn(call, match.groupdict())
        return self._not_found(call)

    # -----------------------------------------------------------------------------------------
    # REST: gateway, users, application, commands
    # -----------------------------------------------------------------------------------------
    async def _get_gateway(self, call: Call, _: dict[str, str]) -> web.StreamResponse:
        return self._response({"url": self.gateway_url}, call=call)

    async def _get_gateway_bot(self, call: Call, _: dict[str, str]) -> web.StreamResponse:
        return self._response(
            {
                "url": self.gateway_url,
                "shards": 1,
                "session_start_limit": {
                    "total": 1000,
                    "remaining": 999,
                    "reset_after": 14400000,
                    "max_concurrency": 1,
                },
            },
            call=call,
        )

    async def _get_me(self, call: Call, _: dict[str, str]) -> web.StreamResponse:
        return self._response(self.bot_user, call=call)

    async def _get_user(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        user = self.users.get(int(p["user_id"]))
        if user is None:
            return self._error(404, 10013, "Unknown User", call)
        return self._response(user, call=call)

    def application_payload(self) -> dict[str, Any]:
        return {
            "id": str(self.application_id),
            "name": "ftcost",
            "icon": None,
            "description": "What will this fine-tune cost?",
            "summary": "",
            "type": None,
            "bot_public": True,
            "bot_require_code_grant": False,
            "verify_key": "0" * 64,
            "flags": 0,
            "owner": self.users[self.user_id],
            "team": None,
            "bot": self.bot_user,
            "interactions_endpoint_url": None,
            "redirect_uris": [],
            "tags": [],
            "approximate_guild_count": 1,
        }

    async def _get_application(self, call: Call, _: dict[str, str]) -> web.StreamResponse:
        return self._response(self.application_payload(), call=call)

    def _check_app(self, call: Call, p: dict[str, str]) -> web.Response | None:
        if int(p["app"]) != self.application_id:
            return self._error(403, 50001, "Missing Access", call)
        return None

    def _command_list(self, p: dict[str, str]) -> list[dict[str, Any]]:
        if p.get("guild"):
            return self.guild_commands.setdefault(int(p["guild"]), [])
        return self.global_commands

    def _store_command(
        self, existing: list[dict[str, Any]], body: dict[str, Any], guild: str | None
    ) -> dict[str, Any]:
        ctype = body.get("type", 1)
        old = next(
            (c for c in existing if c["name"] == body["name"] and c.get("type", 1) == ctype), None
        )
        cmd = {
            "id": old["id"] if old else str(self._next_id()),
            "application_id": str(self.application_id),
            "version": str(self._next_id()),
            "type": ctype,
            "name": body["name"],
            "description": body.get("description", ""),
            "options": body.get("options", []),
            "default_member_permissions": body.get("default_member_permissions"),
            "dm_permission": body.get("dm_permission", True),
            "nsfw": body.get("nsfw", False),
            "contexts": body.get("contexts"),
            "integration_types": body.get("integration_types", [0]),
            "name_localizations": body.get("name_localizations"),
            "description_localizations": body.get("description_localizations"),
        }
        if guild:
            cmd["guild_id"] = guild
        return cmd

    async def _get_commands(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        bad = self._check_app(call, p)
        return bad or self._response(self._command_list(p), call=call)

    async def _put_commands(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        bad = self._check_app(call, p)
        if bad:
            return bad
        existing = self._command_list(p)
        new = [self._store_command(existing, body, p.get("guild")) for body in call.json or []]
        existing[:] = new
        return self._response(new, call=call)

    async def _post_command(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        bad = self._check_app(call, p)
        if bad:
            return bad
        existing = self._command_list(p)
        cmd = self._store_command(existing, call.json, p.get("guild"))
        existing[:] = [c for c in existing if c["id"] != cmd["id"]] + [cmd]
        return self._response(cmd, status=201, call=call)

    def find_command(self, name: str, guild_id: int | None = None) -> dict[str, Any] | None:
        """A registered (synced) command by name, guild commands first."""
        if guild_id is not None:
            for cmd in self.guild_commands.get(int(guild_id), []):
                if cmd["name"] == name:
                    return cmd
        return next((c for c in self.global_commands if c["name"] == name), None)

    # -----------------------------------------------------------------------------------------
    # REST: channels, messages, threads
    # -----------------------------------------------------------------------------------------
    def _channel(self, cid: str | int) -> dict[str, Any] | None:
        cid = int(cid)
        if cid in self.gone_channels:
            return None
        return self.channels.get(cid)

    def _build_attachments(
        self, payload: dict[str, Any], files: list[dict[str, Any]], channel_id: str
    ) -> list[dict[str, Any]]:
        described = {
            str(a.get("id")): a for a in payload.get("attachments") or [] if isinstance(a, dict)
        }
        out = []
        for i, f in enumerate(files):
            aid = self._next_id()
            meta = described.get(str(i), {})
            url = f"http://127.0.0.1:{self.port}/attachments/{channel_id}/{aid}/{f['filename']}"
            out.append(
                {
                    "id": str(aid),
                    "filename": meta.get("filename") or f["filename"],
                    "description": meta.get("description"),
                    "content_type": f.get("content_type"),
                    "size": f["size"],
                    "url": url,
                    "proxy_url": url,
                    "flags": 0,
                }
            )
        # keep already-uploaded attachments referenced by a real id (edits)
        for a in payload.get("attachments") or []:
            if isinstance(a, dict) and str(a.get("id", "")).isdigit() and int(a["id"]) > 1000:
                old = next(
                    (
                        x
                        for m in self.messages.values()
                        for x in m.get("attachments", [])
                        if x["id"] == str(a["id"])
                    ),
                    None,
                )
                if old:
                    out.append(old)
        return out

    def _build_message(
        self,
        channel_id: str,
        payload: dict[str, Any],
        files: list[dict[str, Any]],
        *,
        author: dict[str, Any] | None = None,
        msg_type: int = 0,
        webhook_id: int | None = None,
        interaction: _InteractionState | None = None,
        extra_flags: int = 0,
    ) -> dict[str, Any]:
        mid = self._next_id()
        channel = self.channels.get(int(channel_id))
        guild_id = channel.get("guild_id") if channel else None
        author = author or self.bot_user
        msg: dict[str, Any] = {
            "id": str(mid),
            "channel_id": str(channel_id),
            "author": author,
            "content": payload.get("content") or "",
            "timestamp": _now_iso(),
            "edited_timestamp": None,
            "tts": bool(payload.get("tts", False)),
            "mention_everyone": False,
            "mentions": [],
            "mention_roles": [],
            "attachments": self._build_attachments(payload, files, str(channel_id)),
            "embeds": payload.get("embeds") or [],
            "components": payload.get("components") or [],
            "pinned": False,
            "type": msg_type,
            "flags": int(payload.get("flags") or 0) | extra_flags,
            "allowed_mentions": payload.get("allowed_mentions"),
        }
        if guild_id:
            msg["guild_id"] = guild_id
            if int(author["id"]) in self.members:
                member = {k: v for k, v in self.members[int(author["id"])].items() if k != "user"}
                msg["member"] = member
        if payload.get("poll"):
            msg["poll"] = payload["poll"]
        if webhook_id is not None:
            msg["webhook_id"] = str(webhook_id)
            msg["application_id"] = str(self.application_id)
        if interaction is not None:
            ip = interaction.payload
            user = (ip.get("member") or {}).get("user") or ip.get("user")
            msg["interaction_metadata"] = {
                "id": ip["id"],
                "type": ip["type"],
                "user": user,
                "authorizing_integration_owners": ip.get("authorizing_integration_owners", {}),
            }
            if ip["type"] == 2:
                msg["interaction_metadata"]["name"] = ip["data"]["name"]
        ref = payload.get("message_reference")
        if isinstance(ref, dict) and ref.get("message_id"):
            msg["message_reference"] = {
                "type": ref.get("type", 0),
                "message_id": str(ref["message_id"]),
                "channel_id": str(ref.get("channel_id") or channel_id),
                "guild_id": ref.get("guild_id") or guild_id,
            }
            if msg_type == 0:
                msg["type"] = 19  # REPLY
            target = self.messages.get(int(ref["message_id"]))
            if target is not None:
                msg["referenced_message"] = target
        return msg

    def _store_message(self, msg: dict[str, Any]) -> None:
        self.messages[int(msg["id"])] = msg
        channel = self.channels.get(int(msg["channel_id"]))
        if channel is not None:
            channel["last_message_id"] = msg["id"]
            if channel["type"] in (10, 11, 12):
                channel["message_count"] = channel.get("message_count", 0) + 1
                channel["total_message_sent"] = channel.get("total_message_sent", 0) + 1

    def _echo(self, event: str, data: dict[str, Any]) -> None:
        if not self.echo_events or not any(s.active for s in self._sessions.values()):
            return
        task = asyncio.get_running_loop().create_task(self.dispatch(event, data, timeout=0.5))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @staticmethod
    def _public(msg: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in msg.items() if k != "allowed_mentions"}

    async def _get_channel(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        channel = self._channel(p["cid"])
        if channel is None:
            return self._error(404, 10003, "Unknown Channel", call)
        return self._response(channel, call=call)

    async def _get_guild(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        if int(p["guild"]) != self.guild_id:
            return self._error(404, 10004, "Unknown Guild", call)
        return self._response({**self.guild, "roles": self.roles}, call=call)

    async def _typing(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        if self._channel(p["cid"]) is None:
            return self._error(404, 10003, "Unknown Channel", call)
        return self._response(None, 204, call=call)

    async def _create_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        channel = self._channel(p["cid"])
        if channel is None:
            return self._error(404, 10003, "Unknown Channel", call)
        payload = call.json if isinstance(call.json, dict) else {}
        empty = self._check_empty(call, payload)
        if empty is not None:
            return empty
        too_big = self._too_big(call)
        if too_big is not None:
            return too_big
        bad = self._invalid(call, validate_message(payload)
                            + validate_attachments(payload, call.files))
        if bad is not None:
            return bad
        msg = self._build_message(p["cid"], payload, call.files)
        self._store_message(msg)
        self._echo("MESSAGE_CREATE", self._public(msg))
        return self._response(self._public(msg), call=call)

    async def _get_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        msg = self.messages.get(int(p["mid"]))
        if msg is None or msg["channel_id"] != p["cid"]:
            return self._error(404, 10008, "Unknown Message", call)
        return self._response(self._public(msg), call=call)

    def _apply_edit(self, msg: dict[str, Any], call: Call, body: Any = None) -> None:
        if body is None:
            body = call.json
        body = body if isinstance(body, dict) else {}
        for key in ("content", "embeds", "components", "allowed_mentions", "poll"):
            if key in body:
                msg[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
        if "flags" in body and body["flags"] is not None:
            msg["flags"] = (msg.get("flags", 0) & FLAG_EPHEMERAL) | int(body["flags"])
        msg["flags"] = msg.get("flags", 0) & ~FLAG_LOADING
        if "attachments" in body or call.files:
            msg["attachments"] = self._build_attachments(body, call.files, msg["channel_id"])
        msg["edited_timestamp"] = _now_iso()

    async def _edit_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        msg = self.messages.get(int(p["mid"]))
        if msg is None or msg["channel_id"] != p["cid"]:
            return self._error(404, 10008, "Unknown Message", call)
        if msg["author"]["id"] != self.bot_user["id"]:
            return self._error(403, 50005, "Cannot edit a message authored by another user", call)
        bad = self._invalid(call, validate_message(call.json or {})
                            + validate_attachments(call.json or {}, call.files))
        if bad is not None:
            return bad
        self._apply_edit(msg, call)
        self._echo("MESSAGE_UPDATE", self._public(msg))
        return self._response(self._public(msg), call=call)

    async def _delete_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        msg = self.messages.get(int(p["mid"]))
        if msg is None or msg["channel_id"] != p["cid"]:
            return self._error(404, 10008, "Unknown Message", call)
        del self.messages[int(p["mid"])]
        return self._response(None, 204, call=call)

    def _new_thread(
        self, call: Call, parent: dict[str, Any], thread_id: int, default_type: int
    ) -> dict[str, Any] | web.Response:
        body = call.json if isinstance(call.json, dict) else {}
        name = str(body.get("name") or "")
        if not 1 <= len(name) <= 100:
            # https://discord.com/developers/docs/resources/channel#start-thread-from-message
            # "name: 1-100 character channel name"
            problems = [f"thread name: {len(name)} chars, must be 1-100"]
            return self._invalid(call, problems) or self._error(400, 50035, "Invalid Form Body")
        if parent["type"] not in (0, 5, 15, 16):
            return self._error(400, 50024, "Cannot execute action on this channel type", call)
        thread = self._thread_object(
            thread_id,
            int(parent["id"]),
            name,
            owner_id=self.bot_user_id,
            type_=int(body.get("type") or default_type),
            auto_archive=int(
                body.get("auto_archive_duration")
                or parent.get("default_auto_archive_duration", 1440)
            ),
        )
        thread["member"] = {
            "id": str(thread_id),
            "user_id": str(self.bot_user_id),
            "join_timestamp": _now_iso(),
            "flags": 1,
        }
        self.channels[thread_id] = thread
        self._echo("THREAD_CREATE", {**thread, "newly_created": True})
        return thread

    async def _thread_from_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        parent = self._channel(p["cid"])
        if parent is None:
            return self._error(404, 10003, "Unknown Channel", call)
        msg = self.messages.get(int(p["mid"]))
        if msg is None or msg["channel_id"] != p["cid"]:
            return self._error(404, 10008, "Unknown Message", call)
        if int(p["mid"]) in self.channels:
            return self._error(
                400, 160004, "A thread has already been created for this message", call
            )
        thread = self._new_thread(call, parent, int(p["mid"]), 11)  # thread id == message id
        if isinstance(thread, web.Response):
            return thread
        msg["thread"] = thread
        return self._response(thread, status=201, call=call)

    async def _thread_create(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        parent = self._channel(p["cid"])
        if parent is None:
            return self._error(404, 10003, "Unknown Channel", call)
        thread = self._new_thread(call, parent, self._next_id(), 12)
        if isinstance(thread, web.Response):
            return thread
        return self._response(thread, status=201, call=call)

    # -----------------------------------------------------------------------------------------
    # REST: interactions and their webhooks
    # -----------------------------------------------------------------------------------------
    _ALLOWED_CALLBACKS: ClassVar[dict[int, tuple[int, ...]]] = {
        2: (4, 5, 9),  # APPLICATION_COMMAND
        3: (4, 5, 6, 7, 9),  # MESSAGE_COMPONENT
        4: (8,),  # APPLICATION_COMMAND_AUTOCOMPLETE
        5: (4, 5, 6, 7),  # MODAL_SUBMIT
    }

    def _response_message(
        self,
        state: _InteractionState,
        payload: dict[str, Any],
        files: list[dict[str, Any]],
        extra_flags: int = 0,
    ) -> dict[str, Any]:
        ip = state.payload
        channel_id = ip.get("channel_id") or ip["channel"]["id"]
        msg_type = 20 if ip["type"] == 2 else 0
        msg = self._build_message(
            str(channel_id),
            payload,
            files,
            msg_type=msg_type,
            webhook_id=self.application_id,
            interaction=state,
            extra_flags=extra_flags,
        )
        return msg

    async def _interaction_callback(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        state = self._interactions.get(int(p["iid"]))
        if state is None or state.payload["token"] != p["token"]:
            return self._error(404, 10062, "Unknown interaction", call)
        if state.acked:
            return self._error(400, 40060, "Interaction has already been acknowledged.", call)
        if state.dispatched_at is not None:
            age = time.monotonic() - state.dispatched_at
            if age > self.interaction_deadline:
                self.violations.append(
                    f"{call.method} {call.path}: interaction acknowledged after {age:.2f}s "
                    f"(> {self.interaction_deadline}s)"
                )
                return self._error(404, 10062, "Unknown interaction", call)
        body = call.json if isinstance(call.json, dict) else {}
        cb_type = int(body.get("type", 0))
        data = body.get("data") or {}
        itype = state.payload["type"]
        problems: list[str] = []
        if cb_type not in self._ALLOWED_CALLBACKS.get(itype, ()):
            problems.append(f"callback type {cb_type} is not valid for interaction type {itype}")
        if cb_type in (4, 7):
            problems += validate_message(data) + validate_attachments(data, call.files)
            if cb_type == 4 and _is_empty_message(data, call.files):
                problems.append("empty message")
        elif cb_type == 8:
            problems += validate_autocomplete(data.get("choices") or [])
        elif cb_type == 9:
            problems += _validate_modal(data)
        bad = self._invalid(call, problems)
        if bad is not None:
            return bad

        state.acked = True
        state.ack_type = cb_type
        self.interaction_callbacks.append(
            {
                "interaction_id": int(p["iid"]),
                "interaction_type": itype,
                "type": cb_type,
                "data": data,
                "files": call.files,
                "call": call,
            }
        )
        message: dict[str, Any] | None = None
        if cb_type == 4:
            message = self._response_message(state, data, call.files)
        elif cb_type == 5:
            flags = FLAG_LOADING | (int(data.get("flags") or 0) & FLAG_EPHEMERAL)
            message = self._response_message(state, {}, [], extra_flags=flags)
        elif cb_type in (6, 7):
            raw = state.payload.get("message")
            message = self.messages.get(int(raw["id"])) if raw else None
            if message is None and raw is not None:
                message = dict(raw)
                self._store_message(message)
            if cb_type == 7 and message is not None:
                self._apply_edit(message, call, data)
        if message is not None:
            if cb_type in (4, 5):
                self._store_message(message)
                if not message["flags"] & FLAG_EPHEMERAL and cb_type == 4:
                    self._echo("MESSAGE_CREATE", self._public(message))
            state.original_id = int(message["id"])
        if call.query.get("with_response") not in ("1", "true", "True"):
            return self._response(None, 204, call=call)
        resource: dict[str, Any] = {"type": cb_type}
        if message is not None and cb_type in (4, 5, 7):
            resource["message"] = self._public(message)
        flags = int((message or {}).get("flags") or 0)
        return self._response(
            {
                "interaction": {
                    "id": str(p["iid"]),
                    "type": itype,
                    "activity_instance_id": None,
                    "response_message_id": message["id"] if message else None,
                    "response_message_loading": cb_type == 5,
                    "response_message_ephemeral": bool(flags & FLAG_EPHEMERAL),
                },
                "resource": resource,
            },
            call=call,
        )

    def _webhook_state(self, call: Call, p: dict[str, str]) -> _InteractionState | web.Response:
        if int(p["app"]) != self.application_id:
            return self._error(404, 10015, "Unknown Webhook", call)
        state = self._by_token.get(p["token"])
        if state is None or not state.acked:
            return self._error(404, 10015, "Unknown Webhook", call)
        return state

    def _webhook_message(self, state: _InteractionState, mid: str) -> dict[str, Any] | None:
        if mid == "@original":
            return self.messages.get(state.original_id) if state.original_id else None
        msg = self.messages.get(int(mid))
        if msg is None or msg.get("interaction_metadata", {}).get("id") != state.payload["id"]:
            return None
        return msg

    async def _webhook_get_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        state = self._webhook_state(call, p)
        if isinstance(state, web.Response):
            return state
        msg = self._webhook_message(state, p["mid"])
        if msg is None:
            return self._error(404, 10008, "Unknown Message", call)
        return self._response(self._public(msg), call=call)

    async def _webhook_edit_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        state = self._webhook_state(call, p)
        if isinstance(state, web.Response):
            return state
        msg = self._webhook_message(state, p["mid"])
        if msg is None:
            return self._error(404, 10008, "Unknown Message", call)
        bad = self._invalid(call, validate_message(call.json or {})
                            + validate_attachments(call.json or {}, call.files))
        if bad is not None:
            return bad
        was_loading = bool(msg.get("flags", 0) & FLAG_LOADING)
        self._apply_edit(msg, call)
        if was_loading and not msg["flags"] & FLAG_EPHEMERAL:
            self._echo("MESSAGE_CREATE", self._public(msg))
        return self._response(self._public(msg), call=call)

    async def _webhook_delete_message(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        state = self._webhook_state(call, p)
        if isinstance(state, web.Response):
            return state
        msg = self._webhook_message(state, p["mid"])
        if msg is None:
            return self._error(404, 10008, "Unknown Message", call)
        del self.messages[int(msg["id"])]
        if p["mid"] == "@original":
            state.original_id = None
        return self._response(None, 204, call=call)

    async def _webhook_execute(self, call: Call, p: dict[str, str]) -> web.StreamResponse:
        state = self._webhook_state(call, p)
        if isinstance(state, web.Response):
            return state
        payload = call.json if isinstance(call.json, dict) else {}
        empty = self._check_empty(call, payload)
        if empty is not None:
            return empty
        too_big = self._too_big(call)
        if too_big is not None:
            return too_big
        bad = self._invalid(call, validate_message(payload)
                            + validate_attachments(payload, call.files))
        if bad is not None:
            return bad
        msg = self._response_message(state, payload, call.files)
        self._store_message(msg)
        if not msg["flags"] & FLAG_EPHEMERAL:
            self._echo("MESSAGE_CREATE", self._public(msg))
        if call.query.get("wait") in ("1", "true", "True"):
            return self._response(self._public(msg), call=call)
        return self._response(None, 204, call=call)

    # -----------------------------------------------------------------------------------------
    # Gateway
    # -----------------------------------------------------------------------------------------
    async def _gateway_handler(self, request: web.Request) -> web.StreamResponse:
        ws = web.WebSocketResponse(max_msg_size=0)
        await ws.prepare(request)
        self.gateway_queries.append(dict(request.query))
        conn = _Conn(ws, request.query.get("compress"))
        self._conns.append(conn)
        try:
            await conn.send(
                {
                    "op": 10,
                    "s": None,
                    "t": None,
                    "d": {
                        "heartbeat_interval": self.heartbeat_interval_ms,
                        "_trace": ['["fake-discord-gateway"]'],
                    },
                }
            )
            async for msg in ws:
                if msg.type == WSMsgType.TEXT:
                    payload = json.loads(msg.data)
                elif msg.type == WSMsgType.BINARY:
                    payload = json.loads(msg.data.decode())
                else:
                    continue
                conn.received.append(payload)
                self.gateway_received.append(payload)
                await self._on_gateway_op(conn, payload)
        finally:
            self._conns.remove(conn)
            if conn.session is not None and conn.session.conn is conn:
                conn.session.conn = None
        return ws

    async def _on_gateway_op(self, conn: _Conn, payload: dict[str, Any]) -> None:
        op = payload.get("op")
        d = payload.get("d")
        if op == 1:  # HEARTBEAT
            await conn.send({"op": 11, "s": None, "t": None, "d": None})
        elif op == 2:  # IDENTIFY
            await self._identify(conn, d or {})
        elif op == 6:  # RESUME
            await self._resume(conn, d or {})
        elif op == 8:  # REQUEST_GUILD_MEMBERS
            if conn.session is None:
                return
            await self._send_dispatch(
                conn.session,
                "GUILD_MEMBERS_CHUNK",
                {
                    "guild_id": str(self.guild_id),
                    "members": list(self.members.values()),
                    "chunk_index": 0,
                    "chunk_count": 1,
                    "not_found": [],
                    "nonce": (d or {}).get("nonce"),
                },
            )

    async def _identify(self, conn: _Conn, d: dict[str, Any]) -> None:
        self.identifies.append(d)
        if conn.session is not None:
            await conn.ws.close(code=4005, message=b"Already authenticated.")
            return
        if self.token is not None and d.get("token") != self.token:
            await conn.ws.close(code=4004, message=b"Authentication failed.")
            return
        intents = d.get("intents")
        if intents is not None and intents & PRIVILEGED_INTENTS & ~self.privileged_intents_enabled:
            await conn.ws.close(code=4014, message=b"Disallowed intent(s).")
            return
        shard = list(d.get("shard") or [0, 1])
        session = _Session(
            session_id=secrets.token_hex(16),
            token=str(d.get("token")),
            intents=intents,
            shard=shard,
            conn=conn,
        )
        conn.session = session
        self._sessions[session.session_id] = session
        await self._send_dispatch(
            session,
            "READY",
            {
                "v": 10,
                "user": self.bot_user,
                "guilds": [{"id": str(self.guild_id), "unavailable": True}],
                "session_id": session.session_id,
                "session_type": "normal",
                "resume_gateway_url": self.gateway_url,
                "shard": shard,
                "application": {"id": str(self.application_id), "flags": 0},
                "private_channels": [],
                "relationships": [],
                "presences": [],
                "user_settings": {},
                "geo_ordered_rtc_regions": [],
                "guild_join_requests": [],
                "_trace": ['["fake-discord-gateway"]'],
            },
        )
        await self._send_dispatch(session, "GUILD_CREATE", self.guild_create_payload())

    async def _resume(self, conn: _Conn, d: dict[str, Any]) -> None:
        self.resumes.append(d)
        session = self._sessions.get(str(d.get("session_id")))
        if session is None or (self.token is not None and d.get("token") != self.token):
            await conn.send({"op": 9, "s": None, "t": None, "d": False})
            return
        if session.conn is not None and session.conn is not conn:
            with contextlib.suppress(Exception):
                await session.conn.ws.close(code=4000)
        session.conn = conn
        conn.session = session
        last = int(d.get("seq") or 0)
        for event in [e for e in session.events if e["s"] > last]:
            await conn.send(event)
        await self._send_dispatch(session, "RESUMED", {"_trace": ['["fake-discord-gateway"]']})

    async def _send_dispatch(self, session: _Session, event: str, data: dict[str, Any]) -> int:
        session.seq += 1
        payload = {"op": 0, "s": session.seq, "t": event, "d": data}
        session.events.append(payload)
        if session.conn is not None:
            await session.conn.send(payload)
        return session.seq

    def _filter_for_intents(
        self, session: _Session, event: str, data: dict[str, Any]
    ) -> dict[str, Any] | None:
        intents = session.intents
        if intents is None or event not in ("MESSAGE_CREATE", "MESSAGE_UPDATE"):
            return data
        is_dm = "guild_id" not in data
        needed = INTENT_DIRECT_MESSAGES if is_dm else INTENT_GUILD_MESSAGES
        if not intents & needed:
            self.dropped_events.append((event, data, "missing GUILD_MESSAGES/DIRECT_MESSAGES"))
            return None
        if intents & INTENT_MESSAGE_CONTENT:
            return data
        author_id = (data.get("author") or {}).get("id")
        mentioned = any(u.get("id") == self.bot_user["id"] for u in data.get("mentions") or [])
        if is_dm or mentioned or author_id == self.bot_user["id"]:
            return data
        # https://discord.com/developers/docs/resources/message#message-object — "An app will
        # receive empty values in the content, embeds, attachments, and components fields while
        # poll will be omitted if they have not configured ... the MESSAGE_CONTENT intent".
        stripped = {**data, "content": "", "embeds": [], "attachments": [], "components": []}
        stripped.pop("poll", None)
        return stripped

    async def wait_until_identified(self, timeout: float = 5.0) -> None:
        """Wait until some client has IDENTIFY'd (or RESUMEd) and is connected."""
        deadline = time.monotonic() + timeout
        while not any(s.active for s in self._sessions.values()):
            if time.monotonic() > deadline:
                raise AssertionError("no discord.py client connected to the fake gateway")
            await asyncio.sleep(0.01)

    async def dispatch(self, event: str, data: dict[str, Any], *, timeout: float = 5.0) -> int:
        """Send a DISPATCH (op 0) event to every connected session. Returns the last seq."""
        await self.wait_until_identified(timeout)
        if event == "INTERACTION_CREATE":
            state = self._interactions.get(int(data["id"]))
            if state is None:
                state = _InteractionState(payload=data)
                self._interactions[int(data["id"])] = state
                self._by_token[data["token"]] = state
            state.dispatched_at = time.monotonic()
        seq = 0
        for session in [s for s in self._sessions.values() if s.active]:
            filtered = self._filter_for_intents(session, event, data)
            if filtered is None:
                continue
            seq = await self._send_dispatch(session, event, filtered)
        return seq

    async def send_op(self, op: int, d: Any = None) -> None:
        """Send a raw gateway opcode to every connected client (e.g. 7 RECONNECT, 9 INVALID)."""
        for conn in list(self._conns):
            await conn.send({"op": op, "s": None, "t": None, "d": d})

    async def send_reconnect(self) -> None:
        """op 7 RECONNECT: discord.py closes and RESUMEs at READY's resume_gateway_url."""
        await self.send_op(7)

    async def drop_connections(self, code: int = 4000) -> None:
        """Close every gateway socket with ``code`` (4000 = unknown error, resumable)."""
        for conn in list(self._conns):
            await conn.ws.close(code=code)

    # -----------------------------------------------------------------------------------------
    # Payload builders
    # -----------------------------------------------------------------------------------------
    def _interaction_channel(self, channel_id: int, permissions: str) -> dict[str, Any]:
        channel = self.channels.get(int(channel_id))
        if channel is None:
            channel = {
                "id": str(channel_id),
                "type": 0,
                "guild_id": str(self.guild_id),
                "name": "unknown",
                "position": 0,
                "permission_overwrites": [],
            }
        return {**channel, "permissions": permissions}

    def _interaction(
        self,
        itype: int,
        data: dict[str, Any] | None,
        *,
        guild_id: int | None,
        dm: bool,
        channel_id: int | None,
        user_id: int | None,
        permissions: str | None,
        app_permissions: str | None,
        locale: str,
        guild_locale: str | None,
        message: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        iid = self._next_id()
        uid = int(user_id or self.user_id)
        if uid not in self.users:
            self.add_user(f"user{uid % 10000}", user_id=uid)
        app_perms = app_permissions or str(self.app_permissions_int)
        payload: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.application_id),
            "type": itype,
            "token": f"fake-interaction-token-{iid}-{secrets.token_urlsafe(16)}",
            "version": 1,
            "locale": locale,
            "app_permissions": app_perms,
            "entitlements": [],
            "entitlement_sku_ids": [],
            "attachment_size_limit": 10 * 1024 * 1024,
        }
        if data is not None:
            payload["data"] = data
        if dm:
            dm_channel_id = channel_id or self._next_id()
            payload["channel_id"] = str(dm_channel_id)
            payload["channel"] = {
                "id": str(dm_channel_id),
                "type": 1,
                "last_message_id": None,
                "flags": 0,
                "recipients": [self.users[uid]],
            }
            payload["user"] = self.users[uid]
            payload["context"] = 1
            payload["authorizing_integration_owners"] = {"0": str(uid)}
        else:
            gid = int(guild_id or self.guild_id)
            cid = int(channel_id or self.channel_id)
            member = self._member_payload(uid, permissions)
            payload.update(
                {
                    "guild_id": str(gid),
                    "guild": {"id": str(gid), "locale": guild_locale or "en-US", "features": []},
                    "guild_locale": guild_locale or "en-US",
                    "channel_id": str(cid),
                    "channel": self._interaction_channel(cid, member["permissions"]),
                    "member": member,
                    "context": 0,
                    "authorizing_integration_owners": {"0": str(gid)},
                }
            )
        if message is not None:
            payload["message"] = message
        state = _InteractionState(payload=payload)
        self._interactions[iid] = state
        self._by_token[payload["token"]] = state
        return payload

    def _options(
        self,
        options: dict[str, Any] | list[dict[str, Any]] | None,
        cmd: dict[str, Any] | None,
        focused: str | None = None,
    ) -> list[dict[str, Any]]:
        if options is None:
            return []
        if isinstance(options, list):
            return options
        defs = {o["name"]: o for o in (cmd or {}).get("options") or []}
        out = []
        for name, value in options.items():
            opt = {
                "name": name,
                "type": defs.get(name, {}).get("type") or _infer_option_type(value),
                "value": value,
            }
            if name == focused:
                opt["focused"] = True
                opt["value"] = "" if value is None else value
            out.append(opt)
        return out

    def _command_data(
        self,
        name: str,
        options: list[dict[str, Any]],
        guild_id: int | None,
        dm: bool,
        command_type: int,
        resolved: dict[str, Any] | None,
    ) -> dict[str, Any]:
        gid = None if dm else int(guild_id or self.guild_id)
        cmd = self.find_command(name, gid)
        data: dict[str, Any] = {
            "id": cmd["id"] if cmd else str(self._next_id()),
            "name": name,
            "type": command_type,
            "options": options,
        }
        if cmd and cmd.get("guild_id"):
            data["guild_id"] = cmd["guild_id"]
        if resolved:
            data["resolved"] = resolved
        return data

    def interaction_slash(
        self,
        name: str,
        options: dict[str, Any] | list[dict[str, Any]] | None = None,
        *,
        guild_id: int | None = None,
        channel_id: int | None = None,
        user_id: int | None = None,
        dm: bool = False,
        permissions: str | None = None,
        app_permissions: str | None = None,
        locale: str = "en-US",
        guild_locale: str | None = None,
        resolved: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """INTERACTION_CREATE payload for a slash command (type 2, data.type 1).

        ``options``: ``{"name": value}`` (types taken from the synced command, else inferred) or
        a raw list of option objects (for subcommands). Defaults: guild ``guild_id``, channel
        ``channel_id``, user ``user_id``. ``dm=True`` makes it a DM interaction (``user``, no
        ``member``). Dispatch it with ``await fake.dispatch("INTERACTION_CREATE", payload)``.
        """
        gid = None if dm else int(guild_id or self.guild_id)
        opts = self._options(options, self.find_command(name, gid))
        data = self._command_data(name, opts, guild_id, dm, 1, resolved)
        return self._interaction(
            2,
            data,
            guild_id=guild_id,
            dm=dm,
            channel_id=channel_id,
            user_id=user_id,
            permissions=permissions,
            app_permissions=app_permissions,
            locale=locale,
            guild_locale=guild_locale,
        )

    def interaction_autocomplete(
        self,
        name: str,
        options: dict[str, Any] | list[dict[str, Any]],
        focused: str | None = None,
        *,
        guild_id: int | None = None,
        channel_id: int | None = None,
        user_id: int | None = None,
        dm: bool = False,
        permissions: str | None = None,
        app_permissions: str | None = None,
        locale: str = "en-US",
        guild_locale: str | None = None,
    ) -> dict[str, Any]:
        """INTERACTION_CREATE payload for autocomplete (type 4). ``focused`` names the option
        being typed (default: the last one); a raw list must carry ``"focused": True`` itself.
        """
        gid = None if dm else int(guild_id or self.guild_id)
        if isinstance(options, dict) and focused is None and options:
            focused = list(options)[-1]
        opts = self._options(options, self.find_command(name, gid), focused=focused)
        data = self._command_data(name, opts, guild_id, dm, 1, None)
        return self._interaction(
            4,
            data,
            guild_id=guild_id,
            dm=dm,
            channel_id=channel_id,
            user_id=user_id,
            permissions=permissions,
            app_permissions=app_permissions,
            locale=locale,
            guild_locale=guild_locale,
        )

    def interaction_component(
        self,
        custom_id: str,
        component_type: int = 2,
        *,
        values: list[str] | None = None,
        message: dict[str, Any] | int | None = None,
        guild_id: int | None = None,
        channel_id: int | None = None,
        user_id: int | None = None,
        dm: bool = False,
        permissions: str | None = None,
        app_permissions: str | None = None,
        locale: str = "en-US",
        guild_locale: str | None = None,
    ) -> dict[str, Any]:
        """INTERACTION_CREATE payload for a component (type 3): button (2) or select (3..8).

        ``message``: the message the component sits on (a message dict, or the id of a message
        the fake stored); default: a stored bot message carrying just that component.
        """
        cid = int(channel_id or (self.channel_id if not dm else self._next_id()))
        if isinstance(message, int):
            msg = self.messages.get(message)
            if msg is None:
                raise KeyError(f"no stored message {message}")
        elif message is None:
            if component_type == 2:
                comp: dict[str, Any] = {
                    "type": 2,
                    "style": 1,
                    "label": "button",
                    "custom_id": custom_id,
                }
            else:
                comp = {
                    "type": component_type,
                    "custom_id": custom_id,
                    "options": [{"label": v, "value": v} for v in values or []],
                }
            msg = self._build_message(
                str(cid), {"components": [{"type": 1, "components": [comp]}]}, []
            )
            self._store_message(msg)
        else:
            msg = message
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": component_type}
        if component_type != 2:
            data["values"] = list(values or [])
        return self._interaction(
            3,
            data,
            guild_id=guild_id,
            dm=dm,
            channel_id=cid,
            user_id=user_id,
            permissions=permissions,
            app_permissions=app_permissions,
            locale=locale,
            guild_locale=guild_locale,
            message=self._public(msg),
        )

    def interaction_modal_submit(
        self,
        custom_id: str,
        fields: dict[str, str],
        *,
        channel_id: int | None = None,
        user_id: int | None = None,
        message: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """INTERACTION_CREATE payload for a modal submit (type 5) with text inputs."""
        components = [
            {"type": 1, "components": [{"type": 4, "custom_id": k, "value": v}]}
            for k, v in fields.items()
        ]
        return self._interaction(
            5,
            {"custom_id": custom_id, "components": components},
            guild_id=None,
            dm=False,
            channel_id=channel_id,
            user_id=user_id,
            permissions=None,
            app_permissions=None,
            locale="en-US",
            guild_locale=None,
            message=message,
        )

    def message_create(
        self,
        content: str,
        channel_id: int | None = None,
        author: dict[str, Any] | int | None = None,
        mentions: list[dict[str, Any] | int] | None = None,
        message_reference: dict[str, Any] | int | None = None,
        *,
        dm: bool = False,
        embeds: list[dict[str, Any]] | None = None,
        store: bool = True,
    ) -> dict[str, Any]:
        """MESSAGE_CREATE payload from a user (default ``user_id``) in ``channel_id``.

        ``mentions``: user ids or user objects (mention the bot with ``fake.bot_user_id``; put
        ``<@id>`` in ``content`` yourself). ``message_reference``: a message id or object.
        """
        if isinstance(author, int):
            author = self.users.get(author) or self.add_user(
                f"user{author % 10000}", user_id=author
            )
        author = author or self.users[self.user_id]
        cid = str(channel_id or (self._next_id() if dm else self.channel_id))
        users = []
        for m in mentions or []:
            user = self.users.get(int(m)) if isinstance(m, int | str) else m
            if user is None:
                raise KeyError(f"unknown user {m}")
            users.append(user)
        msg = self._build_message(
            cid, {"content": content, "embeds": embeds or []}, [], author=author
        )
        if dm:
            msg.pop("guild_id", None)
            msg.pop("member", None)
        msg.pop("allowed_mentions", None)
        msg["mentions"] = [
            {**u, "member": {k: v for k, v in self.members[int(u["id"])].items() if k != "user"}}
            if not dm and int(u["id"]) in self.members
            else u
            for u in users
        ]
        if message_reference is not None:
            ref = (
                message_reference
                if isinstance(message_reference, dict)
                else {"message_id": str(message_reference)}
            )
            msg["message_reference"] = {
                "type": 0,
                "channel_id": cid,
                **({"guild_id": str(self.guild_id)} if not dm else {}),
                **ref,
            }
            msg["type"] = 19
            target = self.messages.get(int(msg["message_reference"]["message_id"]))
            if target is not None:
                msg["referenced_message"] = self._public(target)
        if store:
            self._store_message(msg)
        return msg
