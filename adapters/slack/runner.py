"""Running the Slack app: HTTP mode (routes on the bot's aiohttp server) or Socket Mode.

* HTTP mode: ``POST {slack.events_path}`` (default ``/slack/events``) takes slash
  commands, events and interactions, verified with ``SLACK_SIGNING_SECRET`` by bolt's
  request-verification middleware (bad signature -> 401, stale timestamp -> 401).
  The route uses bolt's own aiohttp adapter (``slack_bolt.adapter.aiohttp``).
* Socket Mode (``SLACK_APP_TOKEN`` set): bolt's
  :class:`~slack_bolt.adapter.socket_mode.async_handler.AsyncSocketModeHandler` (the
  aiohttp one) over the same :class:`AsyncApp` and listeners; no public URL needed.
"""

from __future__ import annotations

import logging
from typing import Any

from aiohttp import web
from slack_bolt.adapter.aiohttp import to_aiohttp_response, to_bolt_request
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.app import SlackBot
from bot.config import Config, SlackMode
from bot.platform_api import PlatformStartError
from bot.service import Service

log = logging.getLogger("ftcost.slack")

TIMESTAMP_HEADER = "X-Slack-Request-Timestamp"
MAX_TIMESTAMP_DIGITS = 12
"""Unix seconds have 10 digits until the year 2286; anything longer is not Slack's."""


def valid_timestamp_header(value: str | None) -> bool:
    """Whether ``value`` can be Slack's request timestamp: 1 to 12 ASCII digits (Unix
    seconds). A missing header passes here: bolt's verifier refuses it with a 401."""
    if value is None:
        return True
    return 0 < len(value) <= MAX_TIMESTAMP_DIGITS and value.isascii() and value.isdigit()


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

    async def handle_http(self, request: web.Request) -> web.Response:
        if not valid_timestamp_header(request.headers.get(TIMESTAMP_HEADER)):
            # bolt's verifier calls int() on it and answers a non-number with a 500 and
            # a logged traceback; an unauthenticated request gets a plain 401.
            return web.Response(status=401, text="invalid request timestamp")
        bolt_request = await to_bolt_request(request)
        bolt_response = await self.bot.app.async_dispatch(bolt_request)
        return await to_aiohttp_response(bolt_response)

    # -- lifecycle ------------------------------------------------------------------------
    async def start(self) -> None:
        try:
            await self.bot.start()
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else "unknown"
            raise PlatformStartError(
                f"Slack rejected SLACK_BOT_TOKEN ({error}): check the Bot User OAuth Token "
                "and that the app is installed in the workspace."
            ) from None
        except (SlackClientError, OSError) as exc:
            raise PlatformStartError(
                f"cannot reach the Slack Web API at {self.config.slack_api_base_url} "
                f"({type(exc).__name__})"
            ) from None
        if self.socket_handler is not None:
            try:
                await self.socket_handler.connect_async()
            except SlackApiError as exc:
                error = exc.response.get("error") if exc.response is not None else "unknown"
                raise PlatformStartError(
                    f"Slack refused the Socket Mode connection ({error}): check SLACK_APP_TOKEN "
                    "(an app-level token with connections:write) and that Socket Mode is on."
                ) from None
        log.info(
            "slack started mode=%s bot_user=%s command=%s",
            self.mode.value,
            self.bot.bot_user_id,
            self.config.slack.command,
        )

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
