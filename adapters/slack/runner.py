"""Running the Slack app: HTTP mode (routes on the bot's aiohttp server) or Socket Mode.

* HTTP mode: ``POST {slack.events_path}`` (default ``/slack/events``) takes slash
  commands, events and interactions. :meth:`SlackRunner.handle_http` checks each request
  before bolt sees it, so nothing bolt logs about a refused request (its signature
  warning prints the whole body) is ever reached: a body over :data:`MAX_BODY_BYTES` ->
  413 (never read whole), not UTF-8 -> 400, Slack's ``ssl_check`` -> 200 (as bolt
  answers it, before any signature check), a bad or missing signature or a stale or
  malformed timestamp (slack_sdk's :class:`~slack_sdk.signature.SignatureVerifier`, the
  one bolt uses, with ``SLACK_SIGNING_SECRET``) -> 401 and one log line naming only the
  remote address, a signed body that is not a form or a JSON object -> 400. Only then is
  it dispatched to bolt (whose own verification passes it again).
* Socket Mode (``SLACK_APP_TOKEN`` set): bolt's
  :class:`~slack_bolt.adapter.socket_mode.async_handler.AsyncSocketModeHandler` (the
  aiohttp one) over the same :class:`AsyncApp` and listeners; no public URL needed. At
  start the runner asks ``apps.connections.open`` once itself, so that a refused
  ``SLACK_APP_TOKEN`` stops the start with one line (slack_sdk's own connect loop would
  log the refusal and retry it every 10 s forever), then hands the URL to the handler,
  whose connection attempts are bounded by :data:`SOCKET_CONNECT_TIMEOUT_S`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl

import aiohttp
from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.app import SlackBot
from adapters.slack.wiring import slack_proxy
from bot.config import Config, SlackMode
from bot.platform_api import PlatformStartError
from bot.service import Service

log = logging.getLogger("ftcost.slack")

TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
SIGNATURE_HEADER = "X-Slack-Signature"
MAX_TIMESTAMP_DIGITS = 12
"""Unix seconds have 10 digits until the year 2286; anything longer is not Slack's."""
MAX_BODY_BYTES = 1024 * 1024
"""The most of a request body ``POST /slack/events`` reads (1 MiB): Slack's payloads are a
few KB (an event envelope or a block action with its message stays far below 100 KB), so a
bigger one is not Slack's and gets 413 without being read whole or kept in memory."""
BODY_CHUNK_BYTES = 64 * 1024
"""How much of the body is read at a time while counting it against the limit."""
FORM = "application/x-www-form-urlencoded"
JSON = "application/json"
SLACK_CONTENT_TYPES = frozenset({FORM, JSON})
"""What Slack POSTs: slash commands and interactions are forms, Events API requests JSON."""
SOCKET_CONNECT_TIMEOUT_S = 30.0
"""At start, how long the Socket Mode websocket may take to connect (slack_sdk retries a
failed attempt every 10 s) before the start fails: the orchestrator restarts the bot, which
asks Slack for a fresh URL."""


def socket_refused_message(error: str) -> str:
    """The one line for ``apps.connections.open`` answering ``ok: false`` with ``error``
    (``invalid_auth``, ``not_allowed_token_type``, ``token_revoked``...): what to fix."""
    if error == "ratelimited":
        return ("Slack rate-limited opening the Socket Mode connection (ratelimited): "
                "start the bot again in a minute")  # fmt: skip
    return (
        f"Slack refused the Socket Mode connection ({error}): check SLACK_APP_TOKEN (an "
        "app-level token, xapp-..., with the connections:write scope: Basic Information > "
        "App-Level Tokens) and that Socket Mode is on (Settings > Socket Mode)."
    )


def _slack_error(exc: SlackApiError) -> str:
    """The ``error`` code of a Web API refusal (``unknown`` when it carries none)."""
    response = exc.response
    error = response.get("error") if response is not None else None
    return str(error) if error else "unknown"


def valid_timestamp_header(value: str | None) -> bool:
    """Whether ``value`` can be Slack's request timestamp: 1 to 12 ASCII digits (Unix
    seconds). A missing header passes here; the signature check then refuses it. (The
    verifier calls ``int()`` on it: a non-number would raise instead of being refused.)"""
    if value is None:
        return True
    return 0 < len(value) <= MAX_TIMESTAMP_DIGITS and value.isascii() and value.isdigit()


async def read_bounded(request: web.Request, limit: int = MAX_BODY_BYTES) -> bytes | None:
    """The request body, or None when it is longer than ``limit`` bytes (a declared
    ``Content-Length`` over it is refused before reading anything; a chunked body is read
    until it passes the limit, never further)."""
    if request.content_length is not None and request.content_length > limit:
        return None
    chunks, size = [], 0
    async for chunk in request.content.iter_chunked(BODY_CHUNK_BYTES):
        size += len(chunk)
        if size > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def _json_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):  # not JSON, a 5,000-digit number, deep nesting
        return False


def _form(text: str) -> list[tuple[str, str]] | None:
    try:
        return parse_qsl(text, keep_blank_values=True, strict_parsing=True)
    except ValueError:
        return None


def is_ssl_check(text: str, content_type: str) -> bool:
    """Whether this is Slack's certificate check for a slash command's URL (a form with
    ``ssl_check=1``), which bolt answers 200 before any signature check: it asks nothing
    of the bot, and Slack may send it unsigned."""
    return content_type == FORM and ("ssl_check", "1") in (_form(text) or [])


def readable_payload(text: str, content_type: str) -> bool:
    """Whether ``text`` is a payload bolt can read, judged the way its parser reads it
    (``slack_bolt.request.internals.parse_body``): JSON when the type says so or the body
    starts with ``{``, then a JSON object; else a form, whose ``payload`` field (an
    interaction) is a JSON object. Anything else would raise inside bolt (a 500 and a
    traceback in the log) or reach the listeners as an empty request."""
    if not text or content_type not in SLACK_CONTENT_TYPES:
        return False
    if content_type == JSON or text.startswith("{"):
        return _json_object(text)
    fields = _form(text)
    return bool(fields) and all(_json_object(v) for k, v in fields or () if k == "payload")


class SlackRunner:
    """A platform runner (see :mod:`bot.runtime`) for Slack."""

    name = "slack"

    def __init__(
        self, config: Config, service: Service, client: AsyncWebClient | None = None
    ) -> None:
        self.config = config
        self.mode = config.slack_mode or SlackMode.HTTP
        self.bot = SlackBot(config, service, client, mode=self.mode)
        self.socket_handler: AsyncSocketModeHandler | None = None
        secret = config.secrets.slack_signing_secret
        self.verifier: SignatureVerifier | None = (
            SignatureVerifier(secret.get_secret_value())
            if secret is not None and secret.get_secret_value().strip()
            else None
        )
        """Checks ``X-Slack-Signature`` (HTTP mode); None without a signing secret, when
        every request is refused (the configuration requires one for HTTP mode)."""
        if self.mode is SlackMode.SOCKET:
            token = config.secrets.slack_app_token
            self.socket_handler = AsyncSocketModeHandler(
                self.bot.app,
                app_token=token.get_secret_value() if token else None,
                web_client=self.bot.client,
                logger=logging.getLogger("ftcost.slack.socket"),
            )

    @property
    def app(self):  # the bolt AsyncApp
        return self.bot.app

    # -- HTTP mode ------------------------------------------------------------------------
    def routes(self) -> list[web.RouteDef]:
        if self.mode is not SlackMode.HTTP:
            return []
        return [web.post(self.config.slack.events_path, self.handle_http)]

    def signed(self, body: str, headers: Mapping[str, str]) -> bool:
        """Whether ``body`` carries a valid Slack signature made within the last five
        minutes (a missing or malformed timestamp or signature: no)."""
        timestamp = headers.get(TIMESTAMP_HEADER)
        signature = headers.get(SIGNATURE_HEADER)
        if self.verifier is None or not valid_timestamp_header(timestamp):
            return False
        return self.verifier.is_valid(body, timestamp, signature)

    async def handle_http(self, request: web.Request) -> web.Response:
        """One Slack request: checked here (size, encoding, signature, form), then bolt's.
        A refused request is logged in one line with its remote address only: never its
        body or headers, which an attacker writes and a real request's user text fills."""
        remote = request.remote or "unknown"
        raw = await read_bounded(request)
        if raw is None:
            log.warning("refused an oversized request (over %d bytes) from %s",
                        MAX_BODY_BYTES, remote)  # fmt: skip
            return web.Response(status=413, text="request body too large")
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            log.warning("refused a request that is not UTF-8 from %s", remote)
            return web.Response(status=400, text="unreadable request")
        if is_ssl_check(body, request.content_type):
            return web.Response(status=200)
        if not self.signed(body, request.headers):
            log.warning("rejected unsigned/badly signed request from %s", remote)
            return web.Response(status=401, text="invalid request")
        if not readable_payload(body, request.content_type):
            log.warning("refused a signed request that is not a Slack payload from %s", remote)
            return web.Response(status=400, text="unreadable request")
        try:
            bolt_request = AsyncBoltRequest(
                body=body, query=request.query_string, headers=dict(request.headers)
            )
        except (ValueError, TypeError, AttributeError, KeyError, IndexError, RecursionError) as exc:
            # a JSON object of the wrong shape (``"authorizations": 5``) for bolt's context
            log.warning("refused a signed request bolt cannot read from %s: %s", remote,
                        type(exc).__name__)  # fmt: skip
            return web.Response(status=400, text="unreadable request")
        bolt_response = await self.bot.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    # -- lifecycle ------------------------------------------------------------------------
    def _unreachable(self, exc: BaseException) -> PlatformStartError:
        return PlatformStartError(
            f"cannot reach the Slack Web API at {self.config.slack_api_base_url} "
            f"({type(exc).__name__}): check this host's network and DNS (it must reach "
            "slack.com over HTTPS) and SLACK_API_BASE_URL if it is set"
        )

    async def start(self) -> None:
        try:
            await self.bot.start()
        except SlackApiError as exc:
            raise PlatformStartError(
                f"Slack rejected SLACK_BOT_TOKEN ({_slack_error(exc)}): check the Bot User "
                "OAuth Token and that the app is installed in the workspace."
            ) from None
        except (SlackClientError, aiohttp.ClientError, OSError) as exc:
            raise self._unreachable(exc) from None
        if self.socket_handler is not None:
            await self._connect_socket(self.socket_handler)
        log.info(
            "slack started mode=%s bot_user=%s command=%s",
            self.mode.value,
            self.bot.bot_user_id,
            self.config.slack.command,
        )

    async def _socket_url(self, handler: AsyncSocketModeHandler) -> str:
        """A websocket URL from ``apps.connections.open``, asked once with the app token
        through the handler's Web API client (its 429 handler retries a rate limit). A
        refusal or an unreachable API raises :class:`PlatformStartError`."""
        try:
            response = await handler.client.web_client.apps_connections_open(
                app_token=handler.app_token or ""
            )
        except SlackApiError as exc:
            raise PlatformStartError(socket_refused_message(_slack_error(exc))) from None
        except (SlackClientError, aiohttp.ClientError, OSError) as exc:
            raise self._unreachable(exc) from None
        url = response.get("url")
        if not isinstance(url, str) or not url:
            raise PlatformStartError(
                "Slack's apps.connections.open answered without a websocket URL: check "
                "SLACK_API_BASE_URL if it is set, and start again"
            )
        return url

    async def _connect_socket(self, handler: AsyncSocketModeHandler) -> None:
        """Open the Socket Mode websocket: the URL asked here, then slack_sdk's connect
        (which retries a failed attempt every 10 s), for at most
        :data:`SOCKET_CONNECT_TIMEOUT_S`."""
        handler.client.wss_uri = await self._socket_url(handler)
        handler.client.proxy = slack_proxy(handler.client.wss_uri)  # NO_PROXY, as the API's
        try:
            await asyncio.wait_for(handler.connect_async(), SOCKET_CONNECT_TIMEOUT_S)
        except TimeoutError:
            raise PlatformStartError(
                f"the Slack Socket Mode websocket did not connect within "
                f"{SOCKET_CONNECT_TIMEOUT_S:g} s: check that this host can open outbound "
                "WebSocket connections to Slack (wss://wss-primary.slack.com, port 443); the "
                "log lines above say why each attempt failed"
            ) from None

    async def stop(self, timeout: float = 10.0) -> None:
        if self.socket_handler is not None:
            try:
                await self.socket_handler.disconnect_async()
                await self.socket_handler.close_async()
            except Exception as exc:  # closing a half-open socket: nothing left to do
                log.debug("socket mode close: %s", type(exc).__name__)
        try:
            await self.bot.drain(timeout)
        except TimeoutError:
            log.warning("slack stopped with %d replies in flight", self.bot.inflight)
        await self.bot.close()

    async def health(self) -> dict[str, Any]:
        out: dict[str, Any] = {"mode": self.mode.value, "inflight": self.bot.inflight}
        if self.socket_handler is not None:
            connected = await self.socket_handler.client.is_connected()
            out.update(ok=bool(connected), connected=bool(connected))
        else:
            out["ok"] = True
        return out
