"""Request signing and request-body builders for driving a slack-bolt app in HTTP mode.

Everything here is what *Slack* sends *to* the app: signed slash-command, block-action and
Events API requests. Payload shapes follow Slack's documented payloads and the fixtures in
slackapi/bolt-python's own test-suite (tests/scenario_tests*/test_slash_command.py,
test_block_actions.py, test_events.py).

The workspace identity below is shared with ``tests.fakes.slack_api.FakeSlack`` so that
the bot identity returned by the fake ``auth.test`` matches the ``authorizations`` block of
event envelopes.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any
from urllib.parse import urlencode

# -- workspace identity shared with FakeSlack -------------------------------------------------
TEAM_ID = "T1"
TEAM_DOMAIN = "ftcost-test"
APP_ID = "A1"
BOT_USER_ID = "UBOT"
BOT_ID = "BBOT"
BOT_NAME = "ftcost"
VERIFICATION_TOKEN = "verification_token"

# A loopback URL nothing listens on: a response_url that was not explicitly given fails fast
# (connection refused) instead of leaving the machine. Pass ``FakeSlack.response_url(...)``.
UNSET_RESPONSE_URL = "http://127.0.0.1:9/response/unset"
DEFAULT_TRIGGER_ID = "1700000000.1.0123456789abcdef"
DEFAULT_MESSAGE_TS = "1700000000.000100"


# -- signing ----------------------------------------------------------------------------------
def sign(body: bytes | str, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """Headers Slack adds to every HTTP request: v0 HMAC-SHA256 over ``v0:{ts}:{body}``."""
    ts = int(time.time()) if timestamp is None else int(timestamp)
    raw = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    base = b"v0:" + str(ts).encode("ascii") + b":" + raw
    digest = hmac.new(secret.encode("utf-8"), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": str(ts), "X-Slack-Signature": f"v0={digest}"}


def request_headers(body: bytes | str, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """``sign()`` plus the Content-Type Slack uses for this kind of body (JSON for events)."""
    text = body.decode("utf-8") if isinstance(body, bytes) else body
    content_type = (
        "application/json" if text.lstrip().startswith("{") else "application/x-www-form-urlencoded"
    )
    return {"Content-Type": content_type, **sign(body, secret, timestamp)}


# -- slash commands ---------------------------------------------------------------------------
def slash_command_body(
    text: str,
    user_id: str = "U1",
    channel_id: str = "C1",
    team_id: str = TEAM_ID,
    response_url: str = UNSET_RESPONSE_URL,
    trigger_id: str = DEFAULT_TRIGGER_ID,
    command: str = "/ftcost",
    *,
    user_name: str = "user1",
    channel_name: str = "general",
) -> str:
    """Form-encoded body of a slash-command request, as Slack POSTs it."""
    return urlencode(
        {
            "token": VERIFICATION_TOKEN,
            "team_id": team_id,
            "team_domain": TEAM_DOMAIN,
            "channel_id": channel_id,
            "channel_name": channel_name,
            "user_id": user_id,
            "user_name": user_name,
            "command": command,
            "text": text,
            "api_app_id": APP_ID,
            "is_enterprise_install": "false",
            "response_url": response_url,
            "trigger_id": trigger_id,
        }
    )


# -- interactivity ----------------------------------------------------------------------------
def block_action_body(
    action_id: str,
    value: str | None,
    message_ts: str = DEFAULT_MESSAGE_TS,
    channel_id: str = "C1",
    user_id: str = "U1",
    selected_option_value: str | None = None,
    thread_ts: str | None = None,
    *,
    block_id: str = "ftcost_actions",
    team_id: str = TEAM_ID,
    response_url: str = UNSET_RESPONSE_URL,
    trigger_id: str = DEFAULT_TRIGGER_ID,
    message_text: str = "",
    message_blocks: list[dict[str, Any]] | None = None,
    selected_option_text: str | None = None,
    is_ephemeral: bool = False,
) -> str:
    """Form-encoded ``payload=<json>`` of a ``block_actions`` interaction.

    A button click by default; pass ``selected_option_value`` for a ``static_select`` choice
    (``value`` is then ignored, as select actions carry ``selected_option`` instead).
    """
    action_ts = f"{int(time.time())}.000001"
    action: dict[str, Any]
    if selected_option_value is not None:
        action = {
            "type": "static_select",
            "action_id": action_id,
            "block_id": block_id,
            "selected_option": {
                "text": {
                    "type": "plain_text",
                    "text": selected_option_text or selected_option_value,
                    "emoji": True,
                },
                "value": selected_option_value,
            },
            "placeholder": {"type": "plain_text", "text": "Select", "emoji": True},
            "action_ts": action_ts,
        }
    else:
        action = {
            "type": "button",
            "action_id": action_id,
            "block_id": block_id,
            "text": {"type": "plain_text", "text": action_id, "emoji": True},
            "action_ts": action_ts,
        }
        if value is not None:
            action["value"] = value

    container: dict[str, Any] = {
        "type": "message",
        "message_ts": message_ts,
        "channel_id": channel_id,
        "is_ephemeral": is_ephemeral,
    }
    if thread_ts is not None:
        container["thread_ts"] = thread_ts

    payload: dict[str, Any] = {
        "type": "block_actions",
        "user": {
            "id": user_id,
            "username": user_id.lower(),
            "name": user_id.lower(),
            "team_id": team_id,
        },
        "api_app_id": APP_ID,
        "token": VERIFICATION_TOKEN,
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": "general"},
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [action],
    }
    if not is_ephemeral:  # Slack omits the message for ephemeral containers
        message: dict[str, Any] = {
            "type": "message",
            "user": BOT_USER_ID,
            "bot_id": BOT_ID,
            "app_id": APP_ID,
            "team": team_id,
            "ts": message_ts,
            "text": message_text,
            "blocks": message_blocks or [],
        }
        if thread_ts is not None:
            message["thread_ts"] = thread_ts
        payload["message"] = message
    return urlencode({"payload": json.dumps(payload)})


# -- Events API -------------------------------------------------------------------------------
def event_body(event: dict[str, Any], event_id: str = "Ev1", team_id: str = TEAM_ID) -> str:
    """JSON ``event_callback`` envelope around ``event``."""
    channel = event.get("channel", "")
    return json.dumps(
        {
            "token": VERIFICATION_TOKEN,
            "team_id": team_id,
            "api_app_id": APP_ID,
            "event": event,
            "type": "event_callback",
            "event_id": event_id,
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": None,
                    "team_id": team_id,
                    "user_id": BOT_USER_ID,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": f"4-{event.get('type', 'event')}-{team_id}-{channel}",
        }
    )


def _channel_type(channel: str) -> str:
    if channel.startswith("D"):
        return "im"
    if channel.startswith("G"):
        return "group"
    return "channel"


def message_event(
    text: str,
    channel: str = "C1",
    ts: str = DEFAULT_MESSAGE_TS,
    thread_ts: str | None = None,
    user: str | None = "U1",
    bot_id: str | None = None,
    subtype: str | None = None,
) -> dict[str, Any]:
    """A ``message`` event (``channel_type`` derived from the channel id prefix C/G/D)."""
    event: dict[str, Any] = {
        "type": "message",
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "channel_type": _channel_type(channel),
        "team": TEAM_ID,
    }
    if user is not None:
        event["user"] = user
    if bot_id is not None:
        event["bot_id"] = bot_id
    if subtype is not None:
        event["subtype"] = subtype
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


def app_mention_event(
    text: str, channel: str = "C1", ts: str = DEFAULT_MESSAGE_TS, user: str = "U1"
) -> dict[str, Any]:
    """An ``app_mention`` event; ``text`` normally starts with ``f"<@{BOT_USER_ID}>"``."""
    return {
        "type": "app_mention",
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel": channel,
        "team": TEAM_ID,
    }
