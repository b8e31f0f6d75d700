"""What the Slack app is built from, apart from its listeners (:mod:`adapters.slack.app`):
the Web API client, its proxy (:func:`slack_proxy`), bolt's logger quietened, and the
answer to a request no listener takes (:func:`unhandled_response`).

A slash command reaches the bot under the name the Slack app's manifest gives it; the bot
listens for the one ``slack.command`` names (``/ftcost`` by default). When the two differ
(the manifest says ``/cost``, the config was left at ``/ftcost``), no listener takes the
request: bolt would log its multi-line "Unhandled request ... @app.command" suggestion
and answer 404, which Slack shows the user as a bare failure. The app sets bolt's
``raise_error_for_unhandled_request``, so such a request reaches its error handler, which
calls :func:`unhandled_response`: one warning line naming both names and the fix
(:func:`other_command_warning`), and a 200 whose private text tells the asker what is
wrong (:func:`other_command_reply`). Any other request no listener takes (an event type
or a button the app does not handle) gets one warning line and bolt's 404, as before; one
that a global middleware stopped (bolt's own, quiet before too) stays quiet.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit
from urllib.request import proxy_bypass

from slack_bolt.error import BoltUnhandledRequestError
from slack_bolt.middleware.request_verification import RequestVerification
from slack_bolt.response import BoltResponse
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncRateLimitErrorRetryHandler,
    async_default_handlers,
)
from slack_sdk.proxy_env_variable_loader import load_http_proxy_from_env
from slack_sdk.web.async_client import AsyncWebClient

from bot.config import Config

log = logging.getLogger("ftcost.slack")

COMMAND_NAME = re.compile(r"^/[\w-]{1,32}$")
"""What a slash command's name looks like (Slack allows at most 32 characters); any other
text in the request's ``command`` field is shown as :data:`UNNAMED_COMMAND`."""
UNNAMED_COMMAND = "a slash command"
EXAMPLE_QUERY = "70b qlora 50M tokens h100"
ANSWERED = 200
"""The status of the answer to a slash command the config does not name: Slack shows its
text to the asker (a 404 shows them only that the command failed)."""

QUIET_BOLT_MESSAGES = (
    "As you gave `client` as well",
    "Invalid request signature detected",
    "A global middleware (",
)
"""Beginnings of the bolt log messages dropped: its warning that the ``SLACK_BOT_TOKEN`` it
reads from the environment is unused (the bot passes its own client, on purpose), and the
two that print a request body (the signature one, at INFO, prints a refused request whole:
the runner refuses those before bolt sees them, and this covers the rest)."""


class _QuietBolt(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(QUIET_BOLT_MESSAGES)


def bolt_logger() -> logging.Logger:
    """Bolt's logger, quietened (:data:`QUIET_BOLT_MESSAGES`). Bolt copies its filters to
    the loggers it makes for its middleware; ``slack_bolt.RequestVerification`` (bolt's
    naming) gets it directly too, in case another app made that logger first."""
    logger = logging.getLogger("ftcost.slack.bolt")
    for target in (logger, logging.getLogger(f"slack_bolt.{RequestVerification.__name__}")):
        if not any(isinstance(f, _QuietBolt) for f in target.filters):
            target.addFilter(_QuietBolt())
    return logger


def build_client(config: Config) -> AsyncWebClient:
    """The Web API client: ``SLACK_API_BASE_URL``, the bot token, slack_sdk's default
    retry handlers (connection errors) plus its rate-limit handler (429 + Retry-After)."""
    token = config.secrets.slack_bot_token
    base_url = config.slack_api_base_url
    client = AsyncWebClient(
        token=token.get_secret_value() if token else None,
        base_url=base_url,
        retry_handlers=[
            *async_default_handlers(),
            AsyncRateLimitErrorRetryHandler(max_retry_count=config.slack.rate_limit_retries),
        ],
    )
    # Set after construction: the SDK reads HTTPS_PROXY for a ``proxy`` of None.
    client.proxy = slack_proxy(base_url)
    return client


def slack_proxy(url: str) -> str | None:
    """The proxy slack_sdk would use (``HTTPS_PROXY``, else ``HTTP_PROXY``, either case),
    or None where ``NO_PROXY`` lists ``url``'s host (urllib's matching: a suffix such as
    ``.slack.com``, an address, ``*``). slack_sdk reads the proxy variables but not
    ``NO_PROXY``, so without this every Slack call went through the proxy; a client given
    None reads the variables again, so callers set the returned value on it."""
    proxy = load_http_proxy_from_env(log)
    host = urlsplit(url).hostname
    if proxy is not None and host and proxy_bypass(host):
        return None
    return proxy


def command_name(received: object) -> str:
    """The slash command a request names, when it looks like one (else
    :data:`UNNAMED_COMMAND`): safe to put in a log line or a reply."""
    text = str(received or "")
    return text if COMMAND_NAME.match(text) else UNNAMED_COMMAND


def other_command_warning(received: object, configured: str) -> str:
    """The one log line for a slash command the bot is not set up for."""
    return (f"received {command_name(received)} but slack.command is {configured}: "
            "set slack.command or fix the app manifest")


def other_command_reply(received: object, configured: str) -> str:
    """What the asker of such a command is told (privately): what is wrong, and how it is
    put right."""
    name = command_name(received)
    said = f"`{name}`" if name != UNNAMED_COMMAND else name
    return (f"{said} reached ftcost, but this bot is set up to answer `{configured}`, so "
            f"nothing was estimated. Try `{configured} {EXAMPLE_QUERY}`; if {said} is the "
            f"command your workspace should use, ask whoever runs the bot to set "
            f"`slack.command: {name}` in its config (or to give the Slack app's manifest "
            f"the command `{configured}`).")


def request_kind(body: dict[str, Any]) -> str:
    """What a request is, for a log line, without what anyone typed: its ``type``, and
    its event type or its actions' ids."""
    kind = str(body.get("type") or "unknown")
    event = body.get("event")
    if isinstance(event, dict) and event.get("type"):
        kind += f" event={event['type']}"
    actions = body.get("actions")
    if isinstance(actions, list) and actions:
        ids = ",".join(str(a.get("action_id")) for a in actions if isinstance(a, dict))
        kind += f" actions={ids[:100]}"
    return kind


def unhandled_response(
    error: BoltUnhandledRequestError, body: Any, configured: str
) -> BoltResponse | None:
    """The answer to a request no listener took (bolt's error handler gets it): for a
    slash command, one warning line and a private note to the asker (status 200); for
    anything else one warning line and bolt's own 404 (None). Quiet for a request a
    global middleware stopped (bolt's own doing)."""
    if error.last_global_middleware_name is not None:
        return None
    body = body if isinstance(body, dict) else {}
    if body.get("command") is None:
        log.warning("unhandled Slack request %s: no listener for it", request_kind(body))
        return None
    log.warning(other_command_warning(body.get("command"), configured))
    return BoltResponse(status=ANSWERED, body={
        "response_type": "ephemeral", "text": other_command_reply(body["command"], configured),
    })


__all__ = [
    "ANSWERED",
    "QUIET_BOLT_MESSAGES",
    "bolt_logger",
    "build_client",
    "command_name",
    "other_command_reply",
    "other_command_warning",
    "request_kind",
    "slack_proxy",
    "unhandled_response",
]
