"""A local stand-in for the Slack Web API, for running the *real* slack_sdk / slack-bolt code.

``FakeSlack`` is an aiohttp server on 127.0.0.1 (random free port). Point a client at it with
``AsyncWebClient(token="xoxb-test", base_url=slack.base_url)`` (or ``WebClient`` against a
fake started with ``FakeSlack.run_in_thread()``). It records every request, answers the way
Slack does, lets tests inject errors and 429s, serves ``response_url`` endpoints and checks
Block Kit payloads against Slack's published limits (``validate_blocks``).

How slack_sdk 3.x talks to it (worth knowing when reading ``slack.calls``):
* ``chat.postMessage`` / ``chat.postEphemeral`` / ``chat.update`` / ``views.open`` send a JSON
  body, so ``blocks`` arrive as a list. Methods called with ``params=`` (``auth.test``,
  ``conversations.join``...) arrive form-encoded from ``WebClient`` but as a *query string*
  with an empty body from ``AsyncWebClient``; ``conversations.info`` / ``users.info`` are GETs
  (async) or POSTs (sync). All of these are merged into ``Call.args``, and JSON-in-a-string
  fields (``blocks``, ``attachments``, ``view``...) are decoded.
* The bot token travels as ``Authorization: Bearer ...`` (a ``token`` param is accepted too).
* ``files_upload_v2`` runs its three real steps here: ``files.getUploadURLExternal`` hands
  out ``/upload/<file id>`` on this server, the SDK POSTs the bytes there, and
  ``files.completeUploadExternal`` shares them (``slack.files``, a message with ``files``
  in the channel/thread). ``FakeSlack(scopes=[...])`` makes them answer ``missing_scope``
  without ``files:write``.
* Files people share: ``slack.share_file(name, data)`` hosts the bytes and returns the file
  object a ``message`` (subtype ``file_share``) or ``app_mention`` event carries; its
  ``url_private_download`` answers a bot token with the bytes and, as Slack does, anything
  else (no token, a token without ``files:read``) with an HTML login page. ``files.info``
  returns the object (``missing_scope`` without ``files:read``).
* Socket Mode's ``apps.connections.open`` answers what ``slack.on(...)`` says (a test's
  ``{"url": "ws://..."}``), ``unknown_method`` without a handler, and, as Slack does,
  ``not_allowed_token_type`` to a token that is not app-level (``xapp-``).
  ``slack.refuse("apps.connections.open", "invalid_auth")`` refuses every call until
  ``slack.refuse(method, None)``: a revoked or wrong app token.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.slack_signing import APP_ID, BOT_ID, BOT_NAME, BOT_USER_ID, TEAM_DOMAIN, TEAM_ID

# =============================================================================================
# Block Kit limits. Each constant cites the Slack reference page that states it.
# =============================================================================================
# https://docs.slack.dev/reference/block-kit/blocks — "You can include up to 50 blocks in each
# message, and 100 blocks in modals or Home tabs."
MAX_BLOCKS_MESSAGE = 50
MAX_BLOCKS_MODAL = 100
# https://docs.slack.dev/reference/block-kit/blocks/section-block — text: "Minimum length for
# the text in this field is 1 and maximum length is 3000 characters"; fields: "Maximum number of
# items is 10. Maximum length for the text in each item is 2000 characters."
MAX_SECTION_TEXT = 3000
MAX_SECTION_FIELDS = 10
MAX_SECTION_FIELD_TEXT = 2000
# https://docs.slack.dev/reference/block-kit/blocks/header-block — "in the form of a plain_text
# text object. Maximum length for the text in this field is 150 characters."
MAX_HEADER_TEXT = 150
# https://docs.slack.dev/reference/block-kit/blocks/context-block — elements: "Maximum number of
# items is 10."
MAX_CONTEXT_ELEMENTS = 10
# https://docs.slack.dev/reference/block-kit/blocks/actions-block — "There is a maximum of 25
# elements in each action block."
MAX_ACTIONS_ELEMENTS = 25
# block_id: "Maximum length for this field is 255 characters. block_id should be unique for
# each message" (section, header, context and actions block pages above).
MAX_BLOCK_ID = 255
# https://docs.slack.dev/reference/block-kit/block-elements/button-element — text: plain_text
# only, "Maximum length for the text in this field is 75 characters"; action_id: "Maximum
# length is 255 characters"; url: "Maximum length is 3000 characters"; value: "Maximum length
# is 2000 characters."
MAX_BUTTON_TEXT = 75
MAX_BUTTON_VALUE = 2000
MAX_BUTTON_URL = 3000
MAX_ACTION_ID = 255
# https://docs.slack.dev/reference/block-kit/block-elements/select-menu-element (static_select)
# — options: "Maximum number of options is 100"; option_groups: "Maximum number of option
# groups is 100"; placeholder: plain_text, "Maximum length for the text in this field is 150".
MAX_SELECT_OPTIONS = 100
MAX_SELECT_OPTION_GROUPS = 100
MAX_SELECT_PLACEHOLDER = 150
# https://docs.slack.dev/reference/block-kit/composition-objects/option-object — text: "Maximum
# length for the text in this field is 75 characters"; value: "Maximum length for this field
# is 150 characters"; description: 75.
MAX_OPTION_TEXT = 75
MAX_OPTION_VALUE = 150
MAX_OPTION_DESCRIPTION = 75
# https://api.slack.com/changelog/2018-04-truncating-really-long-messages — "we started
# truncating messages containing more than 40,000 characters" with a ``message_truncated``
# warning; applies to chat.postMessage, chat.postEphemeral and response URLs alike.
MAX_MESSAGE_TEXT = 40_000

_JSON_STRING_FIELDS = (
    "blocks", "attachments", "view", "metadata", "user_auth_blocks", "unfurls", "files"
)

# https://docs.slack.dev/reference/methods/files.getUploadURLExternal and
# .../files.completeUploadExternal: both need the ``files:write`` scope; "length: Size in
# bytes of the file being uploaded" (required); completeUploadExternal's thread_ts: "Never
# use a reply's ts value; use its parent instead"; "This method can only be called once".
SCOPE_NEEDED = {
    "files.getUploadURLExternal": "files:write",
    "files.completeUploadExternal": "files:write",
    "files.info": "files:read",
}
# https://docs.slack.dev/messaging/working-with-files — "url_private ... requires an
# Authorization header with your token"; a request without one (or whose token lacks
# files:read) gets the workspace's sign-in page, an HTML 200, not an error status.
LOGIN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


def _text_of(obj: Any) -> str | None:
    if isinstance(obj, dict):
        text = obj.get("text")
        return text if isinstance(text, str) else None
    return None


def _check_len(out: list[str], path: str, value: Any, limit: int) -> None:
    if isinstance(value, str) and len(value) > limit:
        out.append(f"{path} has {len(value)} chars (max {limit})")


def _check_plain_text(out: list[str], path: str, obj: Any) -> None:
    if isinstance(obj, dict) and obj.get("type") != "plain_text":
        out.append(f"{path}.type is {obj.get('type')!r} (must be 'plain_text')")


def _validate_option(out: list[str], path: str, option: Any) -> None:
    if not isinstance(option, dict):
        out.append(f"{path} is not an object")
        return
    _check_len(out, f"{path}.text.text", _text_of(option.get("text")), MAX_OPTION_TEXT)
    _check_len(out, f"{path}.value", option.get("value"), MAX_OPTION_VALUE)
    _check_len(
        out,
        f"{path}.description.text",
        _text_of(option.get("description")),
        MAX_OPTION_DESCRIPTION,
    )


def _validate_element(out: list[str], path: str, element: Any, action_ids: dict[str, str]) -> None:
    if not isinstance(element, dict):
        out.append(f"{path} is not an object")
        return
    action_id = element.get("action_id")
    if isinstance(action_id, str):
        _check_len(out, f"{path}.action_id", action_id, MAX_ACTION_ID)
        if action_id in action_ids:
            out.append(
                f"{path}.action_id {action_id!r} duplicates {action_ids[action_id]} "
                "(action_ids must be unique within a message)"
            )
        else:
            action_ids[action_id] = path
    kind = element.get("type")
    if kind == "button":
        _check_plain_text(out, f"{path}.text", element.get("text"))
        _check_len(out, f"{path}.text.text", _text_of(element.get("text")), MAX_BUTTON_TEXT)
        _check_len(out, f"{path}.value", element.get("value"), MAX_BUTTON_VALUE)
        _check_len(out, f"{path}.url", element.get("url"), MAX_BUTTON_URL)
    elif kind in ("static_select", "multi_static_select"):
        options = element.get("options")
        if isinstance(options, list):
            if len(options) > MAX_SELECT_OPTIONS:
                out.append(f"{path}.options has {len(options)} items (max {MAX_SELECT_OPTIONS})")
            for j, option in enumerate(options):
                _validate_option(out, f"{path}.options[{j}]", option)
        groups = element.get("option_groups")
        if isinstance(groups, list):
            if len(groups) > MAX_SELECT_OPTION_GROUPS:
                out.append(
                    f"{path}.option_groups has {len(groups)} items (max {MAX_SELECT_OPTION_GROUPS})"
                )
            for g, group in enumerate(groups):
                for j, option in enumerate((group or {}).get("options") or []):
                    _validate_option(out, f"{path}.option_groups[{g}].options[{j}]", option)
        if isinstance(options, list) and isinstance(groups, list):
            out.append(f"{path} has both options and option_groups")
        _check_len(
            out,
            f"{path}.placeholder.text",
            _text_of(element.get("placeholder")),
            MAX_SELECT_PLACEHOLDER,
        )


def validate_blocks(blocks: Any, *, max_blocks: int = MAX_BLOCKS_MESSAGE) -> list[str]:
    """Check ``blocks`` against Slack's hard Block Kit limits; return one line per violation.

    ``max_blocks`` is 50 for messages (default) and 100 for modals / Home tabs. An empty list
    means Slack would accept the payload as far as these limits go.
    """
    out: list[str] = []
    if blocks is None:
        return out
    if not isinstance(blocks, list):
        return [f"blocks must be a JSON array, got {type(blocks).__name__}"]
    if len(blocks) > max_blocks:
        out.append(f"blocks has {len(blocks)} items (max {max_blocks})")
    block_ids: dict[str, str] = {}
    action_ids: dict[str, str] = {}
    for i, block in enumerate(blocks):
        path = f"blocks[{i}]"
        if not isinstance(block, dict):
            out.append(f"{path} is not an object")
            continue
        block_id = block.get("block_id")
        if isinstance(block_id, str):
            _check_len(out, f"{path}.block_id", block_id, MAX_BLOCK_ID)
            if block_id in block_ids:
                out.append(f"{path}.block_id {block_id!r} duplicates {block_ids[block_id]}")
            else:
                block_ids[block_id] = path
        kind = block.get("type")
        if kind == "section":
            text = _text_of(block.get("text"))
            fields = block.get("fields")
            if "text" in block:
                if text is not None and len(text) == 0:
                    out.append(f"{path}.text.text is empty (min 1 char)")
                _check_len(out, f"{path}.text.text", text, MAX_SECTION_TEXT)
            if isinstance(fields, list):
                if len(fields) > MAX_SECTION_FIELDS:
                    out.append(f"{path}.fields has {len(fields)} items (max {MAX_SECTION_FIELDS})")
                for j, f in enumerate(fields):
                    _check_len(out, f"{path}.fields[{j}].text", _text_of(f), MAX_SECTION_FIELD_TEXT)
            if "text" not in block and not fields:
                out.append(f"{path} needs text or fields")
            if "accessory" in block:
                _validate_element(out, f"{path}.accessory", block["accessory"], action_ids)
        elif kind == "header":
            _check_plain_text(out, f"{path}.text", block.get("text"))
            _check_len(out, f"{path}.text.text", _text_of(block.get("text")), MAX_HEADER_TEXT)
        elif kind == "context":
            elements = block.get("elements") or []
            if len(elements) > MAX_CONTEXT_ELEMENTS:
                out.append(
                    f"{path}.elements has {len(elements)} items (max {MAX_CONTEXT_ELEMENTS})"
                )
        elif kind == "actions":
            elements = block.get("elements") or []
            if len(elements) > MAX_ACTIONS_ELEMENTS:
                out.append(
                    f"{path}.elements has {len(elements)} items (max {MAX_ACTIONS_ELEMENTS})"
                )
            for j, element in enumerate(elements):
                _validate_element(out, f"{path}.elements[{j}]", element, action_ids)
        elif kind == "input":
            _validate_element(out, f"{path}.element", block.get("element"), action_ids)
    return out


def validate_message(payload: dict[str, Any], *, max_blocks: int = MAX_BLOCKS_MESSAGE) -> list[str]:
    """``validate_blocks`` on ``payload["blocks"]`` plus the 40,000-char ``text`` limit."""
    out = validate_blocks(payload.get("blocks"), max_blocks=max_blocks)
    _check_len(out, "text", payload.get("text"), MAX_MESSAGE_TEXT)
    return out


# =============================================================================================
# Records
# =============================================================================================
@dataclass
class Call:
    """One HTTP request to ``/api/<method>``. ``headers`` keys are lower-cased.

    ``status`` / ``response`` are what the fake answered (429 for an injected rate limit);
    ``ok`` is ``response["ok"]``. ``time`` is ``time.time()`` at arrival.
    """

    method: str
    args: dict[str, Any]
    headers: dict[str, str]
    time: float
    status: int = 200
    response: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.response.get("ok"))


@dataclass
class SharedFile:
    """A file uploaded with files.getUploadURLExternal + the upload URL POST and shared with
    files.completeUploadExternal. ``data`` is the uploaded bytes."""

    id: str
    filename: str
    length: int
    title: str | None
    alt_txt: str | None
    data: bytes
    channel: str | None
    thread_ts: str | None
    initial_comment: str | None
    ts: str | None
    """ts of the message that shares the file (None when shared privately)."""


@dataclass
class HostedFile:
    """A file a person shared (``FakeSlack.share_file``): its event object and bytes."""

    info: dict[str, Any]
    data: bytes
    chunked: bool = False
    """Served without a Content-Length (chunked transfer encoding)."""
    downloads: int = 0


@dataclass
class _PendingUpload:
    id: str
    filename: str
    length: int
    alt_txt: str | None
    data: bytes | None = None
    completed: bool = False


@dataclass
class ResponsePost:
    """One POST to a ``response_url``; ``body`` is the decoded JSON (``post["text"]`` works)."""

    url_id: str
    channel: str | None
    body: dict[str, Any]
    headers: dict[str, str]
    time: float
    status: int = 200

    def __getitem__(self, key: str) -> Any:
        return self.body[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.body.get(key, default)


Handler = Callable[[dict[str, Any]], dict[str, Any]]


# =============================================================================================
# The server
# =============================================================================================
class FakeSlack:
    """Fake Slack Web API. ``async with FakeSlack() as slack: ... slack.base_url``."""

    def __init__(
        self,
        *,
        team_id: str = TEAM_ID,
        bot_user_id: str = BOT_USER_ID,
        bot_id: str = BOT_ID,
        bot_name: str = BOT_NAME,
        admins: Iterable[str] = (),
        default_member: bool = True,
        reject_invalid_blocks: bool = True,
        response_url_max_uses: int = 5,
        scopes: Iterable[str] | None = None,
    ) -> None:
        self.team_id = team_id
        self.bot_user_id = bot_user_id
        self.bot_id = bot_id
        self.bot_name = bot_name
        self.default_member = default_member
        # Slack answers ok:false / invalid_blocks for a payload over the limits; set False to
        # only record ``violations`` and accept the message anyway.
        self.reject_invalid_blocks = reject_invalid_blocks
        self.response_url_max_uses = response_url_max_uses
        # None: the token has every scope; else methods in SCOPE_NEEDED check it.
        self.scopes: set[str] | None = None if scopes is None else set(scopes)

        self.calls: list[Call] = []
        self.responses: list[ResponsePost] = []
        self.violations: list[str] = []
        # (channel, ts) -> message dict, in posting order; chat.update edits in place.
        self.messages: dict[tuple[str, str], dict[str, Any]] = {}
        # files shared with files.completeUploadExternal, in order; uploads not yet shared
        self.files: list[SharedFile] = []
        self._uploads: dict[str, _PendingUpload] = {}
        # files people shared (share_file), by id
        self.hosted: dict[str, HostedFile] = {}

        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._async_waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = []
        self._faults: dict[str, deque[tuple[str, Any]]] = defaultdict(deque)
        self._refusals: dict[str, str] = {}
        self._members: dict[str, bool] = {}
        self._admins: set[str] = set(admins)
        self._handlers: dict[str, Handler] = {}
        self._response_urls: dict[str, str | None] = {}
        self._response_uses: dict[str, int] = defaultdict(int)
        self._ts_counter = itertools.count(1)
        self._id_counter = itertools.count(1)

        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread_ident: int | None = None
        self.port: int | None = None

    # -- lifecycle ----------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("FakeSlack is not started")
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/api/``: slack_sdk's ``base_url`` format (trailing slash)."""
        return f"{self.url}/api/"

    async def start(self) -> FakeSlack:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_route("*", "/api/{method}", self._handle_api)
        app.router.add_post("/response/{rid}", self._handle_response_url)
        app.router.add_post("/upload/{fid}", self._handle_upload)
        app.router.add_get("/files-pri/{key}/download/{name}", self._handle_download)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        self._loop = asyncio.get_running_loop()
        self._thread_ident = threading.get_ident()
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeSlack:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @classmethod
    def run_in_thread(cls, **kwargs: Any) -> FakeSlackThread:
        """Start a fake on its own event loop in a daemon thread (for sync ``WebClient`` / bolt
        ``App`` code). Returns a handle with ``base_url``, ``stop()`` and every FakeSlack
        attribute; also usable as ``with FakeSlack.run_in_thread() as slack:``."""
        return FakeSlackThread(cls(**kwargs)).start()

    # -- configuration / fault injection ------------------------------------------------------
    def fail_next(self, method: str, error: str = "not_in_channel", *, times: int = 1) -> None:
        """The next ``times`` calls to ``method`` answer ``{"ok": false, "error": error}``."""
        with self._lock:
            self._faults[method].extend([("error", error)] * times)

    def refuse(self, method: str, error: str | None = "invalid_auth") -> None:
        """Every call to ``method`` answers ``{"ok": false, "error": error}`` from now on
        (a token Slack keeps refusing); ``None`` lifts it. One-off faults come first."""
        with self._lock:
            if error is None:
                self._refusals.pop(method, None)
            else:
                self._refusals[method] = error

    def rate_limit_next(self, method: str, retry_after: int = 1, *, times: int = 1) -> None:
        """The next ``times`` calls to ``method`` get HTTP 429, ``Retry-After: retry_after``
        and body ``{"ok": false, "error": "ratelimited"}``. Faults queue in FIFO order."""
        with self._lock:
            self._faults[method].extend([("ratelimit", int(retry_after))] * times)

    def set_channel_member(self, channel: str, is_member: bool) -> None:
        """While False, posting to ``channel`` fails with ``not_in_channel``."""
        with self._lock:
            self._members[channel] = is_member

    def is_member(self, channel: str) -> bool:
        with self._lock:
            if channel.startswith("D"):  # a DM with the bot: always postable
                return True
            return self._members.get(channel, self.default_member)

    def set_admin(self, user_id: str, is_admin: bool = True) -> None:
        """``users.info`` reports ``is_admin`` for this user."""
        with self._lock:
            if is_admin:
                self._admins.add(user_id)
            else:
                self._admins.discard(user_id)

    def on(self, method: str, handler: Handler) -> None:
        """Answer ``method`` with ``handler(args)`` (a dict; ``ok`` defaults to True)."""
        with self._lock:
            self._handlers[method] = handler

    def response_url(self, channel: str | None = None) -> str:
        """A fresh response_url; POSTs to it land in ``slack.responses``."""
        with self._lock:
            rid = f"R{next(self._id_counter):05d}"
            self._response_urls[rid] = channel
        return f"{self.url}/response/{rid}"

    def seed_message(
        self,
        channel: str,
        text: str = "",
        blocks: list[dict[str, Any]] | None = None,
        *,
        thread_ts: str | None = None,
    ) -> str:
        """Store a bot message (so ``chat.update`` on it works) and return its ts."""
        with self._lock:
            ts = self._next_ts()
            self.messages[(channel, ts)] = self._message(ts, text, blocks, thread_ts)
        return ts

    def share_file(
        self,
        name: str,
        data: bytes,
        *,
        filetype: str = "text",
        mimetype: str = "text/plain",
        mode: str = "hosted",
        size: int | None = None,
        chunked: bool = False,
        user: str = "U1",
    ) -> dict[str, Any]:
        """Host ``data`` as a file ``user`` shared; return the file object an event carries
        (``size``: the size Slack reports, default the real one; ``mode="snippet"`` for a
        snippet)."""
        with self._lock:
            fid = f"F{next(self._id_counter):09d}"
        base = f"{self.url}/files-pri/{self.team_id}-{fid}"
        info: dict[str, Any] = {
            "id": fid,
            "created": 1_700_000_000,
            "timestamp": 1_700_000_000,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": filetype,
            "pretty_type": filetype.upper(),
            "user": user,
            "user_team": self.team_id,
            "editable": mode == "snippet",
            "size": len(data) if size is None else size,
            "mode": mode,
            "is_external": False,
            "external_type": "",
            "is_public": True,
            "public_url_shared": False,
            "display_as_bot": False,
            "username": "",
            "url_private": f"{base}/download/{name}",
            "url_private_download": f"{base}/download/{name}",
            "permalink": f"https://{TEAM_DOMAIN}.slack.com/files/{user}/{fid}/{name}",
            "has_rich_preview": False,
            "file_access": "visible",
        }
        with self._lock:
            self.hosted[fid] = HostedFile(info, bytes(data), chunked)
        return dict(info)

    async def _handle_download(self, request: web.Request) -> web.StreamResponse:
        key = request.match_info["key"]
        fid = key.split("-", 1)[-1]
        auth = request.headers.get("Authorization", "")
        token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else ""
        with self._lock:
            hosted = self.hosted.get(fid)
            allowed = token.startswith("xox") and (
                self.scopes is None or "files:read" in self.scopes
            )
            if hosted is not None and allowed:
                hosted.downloads += 1
        if hosted is None:
            return web.Response(status=404, text="file_not_found")
        if not allowed:
            return web.Response(status=200, text=LOGIN_PAGE, content_type="text/html")
        content_type = str(hosted.info.get("mimetype") or "application/octet-stream")
        if not hosted.chunked:
            return web.Response(body=hosted.data, content_type=content_type)
        resp = web.StreamResponse(headers={"Content-Type": content_type})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        with contextlib.suppress(ConnectionError):  # the client stopped reading: fine
            for start in range(0, len(hosted.data), 16 * 1024):
                await resp.write(hosted.data[start : start + 16 * 1024])
            await resp.write_eof()
        return resp

    def _api_files_info(self, args: dict[str, Any]) -> dict[str, Any]:
        denied = self._missing_scope("files.info")
        if denied:
            return denied
        with self._lock:
            hosted = self.hosted.get(str(args.get("file") or ""))
        if hosted is None:
            return {"ok": False, "error": "file_not_found"}
        return {"ok": True, "file": dict(hosted.info), "comments": [], "response_metadata": {}}

    # -- queries ------------------------------------------------------------------------------
    def calls_to(self, method: str, *, ok: bool | None = None) -> list[Call]:
        """Calls to ``method`` (every attempt; ``ok=True`` keeps only successful ones)."""
        with self._lock:
            return [c for c in self.calls if c.method == method and (ok is None or c.ok == ok)]

    async def wait_for_files(self, count: int = 1, timeout: float = 5.0) -> list[SharedFile]:
        """Wait until ``count`` files were shared (files.completeUploadExternal)."""
        return await self._wait_async(
            lambda: list(self.files), count, timeout, f"{count} shared file(s)"
        )

    def messages_in(self, channel: str) -> list[dict[str, Any]]:
        with self._lock:
            return [m for (ch, _), m in self.messages.items() if ch == channel]

    async def wait_for(
        self, method: str, count: int = 1, timeout: float = 5.0, *, ok: bool | None = None
    ) -> list[Call]:
        """Wait (without spinning) until ``count`` calls to ``method`` were recorded."""
        return await self._wait_async(
            lambda: self.calls_to(method, ok=ok), count, timeout, f"{count} x {method}"
        )

    async def wait_for_responses(self, count: int = 1, timeout: float = 5.0) -> list[ResponsePost]:
        return await self._wait_async(
            lambda: list(self.responses), count, timeout, f"{count} response_url POST(s)"
        )

    def wait_for_sync(
        self, method: str, count: int = 1, timeout: float = 5.0, *, ok: bool | None = None
    ) -> list[Call]:
        """Blocking ``wait_for`` for threads other than the one serving the fake."""
        return self._wait_sync(
            lambda: self.calls_to(method, ok=ok), count, timeout, f"{count} x {method}"
        )

    def wait_for_responses_sync(self, count: int = 1, timeout: float = 5.0) -> list[ResponsePost]:
        return self._wait_sync(
            lambda: list(self.responses), count, timeout, f"{count} response_url POST(s)"
        )

    async def _wait_async(
        self, get: Callable[[], list[Any]], count: int, timeout: float, what: str
    ) -> list[Any]:
        loop = asyncio.get_running_loop()
        event = asyncio.Event()
        waiter = (loop, event)
        deadline = loop.time() + timeout
        with self._lock:
            self._async_waiters.append(waiter)
        try:
            while True:
                event.clear()
                got = get()
                if len(got) >= count:
                    return got
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise TimeoutError(self._timeout_message(what, len(got), timeout))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(event.wait(), remaining)
        finally:
            with self._lock:
                self._async_waiters.remove(waiter)

    def _wait_sync(
        self, get: Callable[[], list[Any]], count: int, timeout: float, what: str
    ) -> list[Any]:
        if self._thread_ident == threading.get_ident():
            raise RuntimeError(
                "wait_for_sync would block the thread serving FakeSlack; use `await wait_for()`"
                " or FakeSlack.run_in_thread()"
            )
        with self._cond:
            if not self._cond.wait_for(lambda: len(get()) >= count, timeout):
                raise TimeoutError(self._timeout_message(what, len(get()), timeout))
            return get()

    def _timeout_message(self, what: str, have: int, timeout: float) -> str:
        with self._lock:
            seen = [f"{c.method}({c.status}, {c.response.get('error', 'ok')})" for c in self.calls]
        return f"timed out after {timeout}s waiting for {what}; have {have}. Calls seen: {seen}"

    def _notify(self) -> None:
        with self._cond:
            self._cond.notify_all()
            waiters = list(self._async_waiters)
        for loop, event in waiters:
            with contextlib.suppress(RuntimeError):  # that waiter's loop is closed
                loop.call_soon_threadsafe(event.set)

    # -- helpers ------------------------------------------------------------------------------
    def _next_ts(self) -> str:
        micros = 1_700_000_000_000_000 + 100 * next(self._ts_counter)
        return f"{micros // 1_000_000}.{micros % 1_000_000:06d}"

    def _message(self, ts: str, text: str, blocks: Any, thread_ts: str | None) -> dict[str, Any]:
        message: dict[str, Any] = {
            "type": "message",
            "user": self.bot_user_id,
            "bot_id": self.bot_id,
            "app_id": APP_ID,
            "team": self.team_id,
            "ts": ts,
            "text": text,
        }
        if blocks:
            message["blocks"] = blocks
        if thread_ts:
            message["thread_ts"] = thread_ts
        return message

    def _channel_info(self, channel: str) -> dict[str, Any]:
        is_im = channel.startswith("D")
        info: dict[str, Any] = {
            "id": channel,
            "created": 1_700_000_000,
            "is_archived": False,
            "is_im": is_im,
            "is_mpim": False,
            "is_private": channel.startswith("G") or is_im,
            "context_team_id": self.team_id,
        }
        if is_im:
            info["user"] = "U1"
        else:
            info.update(
                name=f"channel-{channel.lower()}",
                name_normalized=f"channel-{channel.lower()}",
                is_channel=not channel.startswith("G"),
                is_group=channel.startswith("G"),
                is_general=False,
                is_shared=False,
                is_ext_shared=False,
                is_org_shared=False,
                is_member=self.is_member(channel),
                creator="U1",
                topic={"value": "", "creator": "", "last_set": 0},
                purpose={"value": "", "creator": "", "last_set": 0},
            )
        return info

    @staticmethod
    def _decode_json_fields(args: dict[str, Any]) -> dict[str, Any]:
        for key in _JSON_STRING_FIELDS:
            value = args.get(key)
            if isinstance(value, str) and value.strip()[:1] in ("[", "{"):
                # undecodable: left as a string, which the method handler rejects
                with contextlib.suppress(ValueError):
                    args[key] = json.loads(value)
        return args

    @staticmethod
    async def _read_args(request: web.Request) -> dict[str, Any]:
        args: dict[str, Any] = dict(request.query)
        if request.method in ("POST", "PUT") and request.can_read_body:
            ctype = request.content_type
            if ctype == "application/json":
                raw = await request.read()
                if raw.strip():
                    body = json.loads(raw)
                    if isinstance(body, dict):
                        args.update(body)
            elif ctype in ("application/x-www-form-urlencoded", "multipart/form-data"):
                form = await request.post()
                for key, value in form.items():
                    args[key] = value if isinstance(value, str) else value.file.read()
        return args

    def _check_blocks(self, method: str, args: dict[str, Any], max_blocks: int) -> list[str]:
        problems = validate_blocks(args.get("blocks"), max_blocks=max_blocks)
        if problems:
            with self._lock:
                self.violations.extend(f"{method}: {p}" for p in problems)
        return problems

    def _invalid_blocks(self, problems: list[str]) -> dict[str, Any]:
        return {
            "ok": False,
            "error": "invalid_blocks",
            "errors": problems,
            "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
        }

    def _text_checked(self, method: str, text: Any, resp: dict[str, Any]) -> Any:
        """Truncate over-long text like Slack does and record the violation."""
        if isinstance(text, str) and len(text) > MAX_MESSAGE_TEXT:
            with self._lock:
                self.violations.append(
                    f"{method}: text has {len(text)} chars (max {MAX_MESSAGE_TEXT}; truncated)"
                )
            resp["warning"] = "message_truncated"
            resp["response_metadata"] = {
                "warnings": ["message_truncated"],
                "messages": [
                    "[WARN] Your message was truncated but still posted. The `text` field "
                    "accepts up to 40,000 characters."
                ],
            }
            return text[:MAX_MESSAGE_TEXT]
        return text

    # -- HTTP handlers ------------------------------------------------------------------------
    async def _handle_api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        try:
            args = self._decode_json_fields(await self._read_args(request))
        except ValueError:
            args = {}
            parsed_ok = False
        else:
            parsed_ok = True
        headers = {k.lower(): v for k, v in request.headers.items()}
        call = Call(method=method, args=args, headers=headers, time=time.time())
        extra_headers: dict[str, str] = {}

        auth = headers.get("authorization", "")
        token = auth[len("Bearer ") :] if auth.startswith("Bearer ") else args.get("token")
        with self._lock:
            fault = self._faults[method].popleft() if self._faults.get(method) else None
            refusal = self._refusals.get(method)

        if not parsed_ok:
            body: dict[str, Any] = {"ok": False, "error": "invalid_json"}
        elif method == "api.test":
            body = {"ok": True, "args": {k: v for k, v in args.items() if k != "token"}}
        elif not token:
            body = {"ok": False, "error": "not_authed"}
        elif not str(token).startswith(("xox", "xapp-")):  # bot/user or app-level tokens
            body = {"ok": False, "error": "invalid_auth"}
        elif fault is not None and fault[0] == "ratelimit":
            call.status = 429
            extra_headers["Retry-After"] = str(fault[1])
            body = {"ok": False, "error": "ratelimited"}
        elif fault is not None:
            body = {"ok": False, "error": fault[1]}
        elif refusal is not None:
            body = {"ok": False, "error": refusal}
        elif method == "apps.connections.open" and not str(token).startswith("xapp-"):
            body = {"ok": False, "error": "not_allowed_token_type"}
        else:
            body = self._dispatch(method, args)

        call.response = body
        with self._lock:
            self.calls.append(call)
        self._notify()
        return web.json_response(body, status=call.status, headers=extra_headers)

    def _dispatch(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            handler = self._handlers.get(method)
        if handler is not None:
            return {"ok": True, **handler(args)}
        builtin = getattr(self, "_api_" + method.replace(".", "_"), None)
        if builtin is None:
            return {"ok": False, "error": "unknown_method"}
        return builtin(args)

    # -- Web API methods ----------------------------------------------------------------------
    def _api_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": f"https://{TEAM_DOMAIN}.slack.com/",
            "team": TEAM_DOMAIN,
            "user": self.bot_name,
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
            "is_enterprise_install": False,
        }

    def _post_common(self, method: str, args: dict[str, Any]) -> dict[str, Any] | None:
        """Shared checks of chat.postMessage / chat.postEphemeral; an error dict or None."""
        channel = args.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        if not self.is_member(str(channel)):
            return {"ok": False, "error": "not_in_channel"}
        if not (args.get("text") or args.get("blocks") or args.get("attachments")):
            return {"ok": False, "error": "no_text"}
        if isinstance(args.get("blocks"), str):
            return {"ok": False, "error": "invalid_blocks_format"}
        problems = self._check_blocks(method, args, MAX_BLOCKS_MESSAGE)
        if problems and self.reject_invalid_blocks:
            return self._invalid_blocks(problems)
        return None

    def _api_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        error = self._post_common("chat.postMessage", args)
        if error:
            return error
        channel = str(args["channel"])
        resp: dict[str, Any] = {"ok": True, "channel": channel}
        text = self._text_checked("chat.postMessage", args.get("text", ""), resp)
        with self._lock:
            ts = self._next_ts()
            message = self._message(ts, text or "", args.get("blocks"), args.get("thread_ts"))
            self.messages[(channel, ts)] = message
        resp.update(ts=ts, message=dict(message))
        return resp

    def _api_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("user"):
            return {"ok": False, "error": "user_not_found"}
        error = self._post_common("chat.postEphemeral", args)
        if error:
            return error
        resp: dict[str, Any] = {"ok": True}
        self._text_checked("chat.postEphemeral", args.get("text", ""), resp)
        with self._lock:
            resp["message_ts"] = self._next_ts()
        return resp

    def _api_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel") or ""), str(args.get("ts") or "")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        with self._lock:
            message = self.messages.get((channel, ts))
        if message is None:
            return {"ok": False, "error": "message_not_found"}
        problems = self._check_blocks("chat.update", args, MAX_BLOCKS_MESSAGE)
        if problems and self.reject_invalid_blocks:
            return self._invalid_blocks(problems)
        resp: dict[str, Any] = {"ok": True, "channel": channel, "ts": ts}
        text = self._text_checked("chat.update", args.get("text"), resp)
        with self._lock:
            if text is not None:
                message["text"] = text
            if "blocks" in args:
                message["blocks"] = args["blocks"]
            message["edited"] = {"user": self.bot_user_id, "ts": self._next_ts()}
            resp.update(text=message["text"], message=dict(message))
        return resp

    def _api_chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(args.get("channel") or ""), str(args.get("ts") or "")
        with self._lock:
            if self.messages.pop((channel, ts), None) is None:
                return {"ok": False, "error": "message_not_found"}
        return {"ok": True, "channel": channel, "ts": ts}

    def _api_conversations_info(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = args.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        return {"ok": True, "channel": self._channel_info(str(channel))}

    def _api_conversations_join(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = args.get("channel")
        if not channel:
            return {"ok": False, "error": "channel_not_found"}
        channel = str(channel)
        if channel.startswith(("D", "G")):
            return {"ok": False, "error": "method_not_supported_for_channel_type"}
        already = self.is_member(channel)
        self.set_channel_member(channel, True)
        resp: dict[str, Any] = {"ok": True, "channel": self._channel_info(channel)}
        if already:
            resp["warning"] = "already_in_channel"
            resp["response_metadata"] = {"warnings": ["already_in_channel"]}
        return resp

    def _api_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = args.get("user")
        if not user:
            return {"ok": False, "error": "user_not_found"}
        user = str(user)
        is_bot = user == self.bot_user_id
        with self._lock:
            is_admin = user in self._admins
        name = self.bot_name if is_bot else user.lower()
        return {
            "ok": True,
            "user": {
                "id": user,
                "team_id": self.team_id,
                "name": name,
                "deleted": False,
                "real_name": name,
                "tz": "Etc/UTC",
                "tz_offset": 0,
                "profile": {"real_name": name, "display_name": name, "team": self.team_id},
                "is_admin": is_admin,
                "is_owner": False,
                "is_primary_owner": False,
                "is_restricted": False,
                "is_ultra_restricted": False,
                "is_bot": is_bot,
                "is_app_user": False,
                "updated": 1_700_000_000,
            },
        }

    # -- file uploads (files_upload_v2: getUploadURLExternal, POST, completeUploadExternal) ---
    def _missing_scope(self, method: str) -> dict[str, Any] | None:
        needed = SCOPE_NEEDED.get(method)
        if needed is None or self.scopes is None or needed in self.scopes:
            return None
        provided = ",".join(sorted(self.scopes))
        return {"ok": False, "error": "missing_scope", "needed": needed, "provided": provided}

    def _api_files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        denied = self._missing_scope("files.getUploadURLExternal")
        if denied:
            return denied
        filename = args.get("filename")
        try:
            length = int(args.get("length", ""))
        except ValueError:
            length = 0
        if not filename or length <= 0:
            return {"ok": False, "error": "invalid_arguments"}
        with self._lock:
            fid = f"F{next(self._id_counter):09d}"
            self._uploads[fid] = _PendingUpload(fid, str(filename), length, args.get("alt_txt"))
        return {"ok": True, "upload_url": f"{self.url}/upload/{fid}", "file_id": fid}

    async def _handle_upload(self, request: web.Request) -> web.Response:
        """The upload URL: the file's bytes as the raw body (slack_sdk) or a multipart
        ``file`` field (curl -F), answered ``200 OK - <bytes>`` like files.slack.com."""
        fid = request.match_info["fid"]
        if request.content_type == "multipart/form-data":
            form = await request.post()
            field_ = form.get("file") or form.get("filename")
            data = field_.file.read() if hasattr(field_, "file") else str(field_ or "").encode()
        else:
            data = await request.read()
        with self._lock:
            upload = self._uploads.get(fid)
            if upload is not None and not upload.completed:
                upload.data = bytes(data)
        self._notify()
        if upload is None:
            return web.Response(status=404, text="not found")
        return web.Response(status=200, text=f"OK - {len(data)}")

    def _api_files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        denied = self._missing_scope("files.completeUploadExternal")
        if denied:
            return denied
        files = args.get("files")
        if not isinstance(files, list) or not files:
            return {"ok": False, "error": "invalid_arguments"}
        channel = args.get("channel_id") or None
        thread_ts = args.get("thread_ts") or None
        if channel is not None and not self.is_member(str(channel)):
            return {"ok": False, "error": "not_in_channel"}
        with self._lock:
            pending = []
            for item in files:
                upload = self._uploads.get(str((item or {}).get("id")))
                if upload is None or upload.completed or upload.data is None:
                    return {"ok": False, "error": "file_not_found"}
                if len(upload.data) != upload.length:
                    self.violations.append(
                        f"files.completeUploadExternal: {upload.id} announced {upload.length} "
                        f"bytes, {len(upload.data)} uploaded"
                    )
                pending.append((upload, item))
            if thread_ts is not None:
                parent = self.messages.get((str(channel), str(thread_ts)))
                if parent is None:
                    self.violations.append(
                        f"files.completeUploadExternal: thread_ts {thread_ts} is no message "
                        f"in {channel}"
                    )
                elif parent.get("thread_ts") not in (None, thread_ts):
                    self.violations.append(
                        f"files.completeUploadExternal: thread_ts {thread_ts} is a reply; "
                        "use its parent's ts"
                    )
            ts = None
            if channel is not None:
                ts = self._next_ts()
                message = self._message(ts, args.get("initial_comment") or "", None, thread_ts)
                message["files"] = [{"id": u.id, "name": u.filename} for u, _ in pending]
                self.messages[(str(channel), ts)] = message
            shared = []
            for upload, item in pending:
                upload.completed = True
                title = item.get("title") or upload.filename
                self.files.append(
                    SharedFile(
                        id=upload.id, filename=upload.filename, length=upload.length,
                        title=title, alt_txt=upload.alt_txt, data=upload.data or b"",
                        channel=channel, thread_ts=thread_ts,
                        initial_comment=args.get("initial_comment"), ts=ts,
                    )
                )
                shared.append({"id": upload.id, "title": title, "name": upload.filename,
                               "size": len(upload.data or b"")})
        return {"ok": True, "files": shared}

    def _api_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        view = args.get("view")
        if not args.get("trigger_id") and not args.get("interactivity_pointer"):
            return {"ok": False, "error": "invalid_arguments"}
        if not isinstance(view, dict):
            return {"ok": False, "error": "invalid_arguments"}
        problems = self._check_blocks("views.open", view, MAX_BLOCKS_MODAL)
        if problems and self.reject_invalid_blocks:
            return self._invalid_blocks(problems)
        with self._lock:
            view_id = f"V{next(self._id_counter):08d}"
        return {
            "ok": True,
            "view": {
                "id": view_id,
                "team_id": self.team_id,
                "app_id": APP_ID,
                "bot_id": self.bot_id,
                "hash": f"1700000000.{view_id}",
                "root_view_id": view_id,
                "previous_view_id": None,
                "state": {"values": {}},
                "blocks": [],
                "private_metadata": "",
                "callback_id": "",
                "external_id": "",
                "clear_on_close": False,
                "notify_on_close": False,
                **view,
            },
        }

    # -- response_url -------------------------------------------------------------------------
    async def _handle_response_url(self, request: web.Request) -> web.Response:
        rid = request.match_info["rid"]
        raw = await request.read()
        try:
            body = json.loads(raw) if raw.strip() else {}
        except ValueError:
            body = None
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self._lock:
            known = rid in self._response_urls
            channel = self._response_urls.get(rid)
            self._response_uses[rid] += 1
            uses = self._response_uses[rid]
        post = ResponsePost(
            rid, channel, body if isinstance(body, dict) else {}, headers, time.time()
        )
        if not known:
            post.status, text = 404, "no_service"
        elif uses > self.response_url_max_uses:
            post.status, text = 404, "used_url"
        elif not isinstance(body, dict):
            post.status, text = 400, "invalid_payload"
        else:
            problems = self._check_blocks(
                "response_url", self._decode_json_fields(body), MAX_BLOCKS_MESSAGE
            )
            if problems and self.reject_invalid_blocks:
                post.status, text = 400, "invalid_blocks"
            else:
                resp: dict[str, Any] = {}
                if "text" in body:
                    body["text"] = self._text_checked("response_url", body["text"], resp)
                text = "ok"
        with self._lock:
            self.responses.append(post)
        self._notify()
        return web.Response(status=post.status, text=text, content_type="text/html")


class FakeSlackThread:
    """A FakeSlack served from its own event loop in a daemon thread.

    Attribute access falls through to the wrapped fake (``calls``, ``fail_next``, ``base_url``,
    ``wait_for_sync``...). Only ``wait_for_sync`` style waits make sense from the caller's side.
    """

    def __init__(self, slack: FakeSlack) -> None:
        self.slack = slack
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.slack, name)

    def start(self, timeout: float = 10.0) -> FakeSlackThread:
        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            try:
                loop.run_until_complete(self.slack.start())
            except BaseException as exc:
                self._error = exc
                self._ready.set()
                loop.close()
                return
            self._ready.set()
            try:
                loop.run_forever()
            finally:
                loop.run_until_complete(self.slack.stop())
                loop.close()

        self._thread = threading.Thread(target=run, name="FakeSlack", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("FakeSlack thread did not start")
        if self._error is not None:
            raise self._error
        return self

    def stop(self, timeout: float = 10.0) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    def __enter__(self) -> FakeSlackThread:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
