"""Local stand-ins for chat platforms, so tests run the real client libraries offline."""

from tests.fakes.slack_api import (
    Call,
    FakeSlack,
    FakeSlackThread,
    ResponsePost,
    SharedFile,
    validate_blocks,
    validate_message,
)
from tests.fakes.slack_signing import (
    app_mention_event,
    block_action_body,
    event_body,
    message_event,
    request_headers,
    sign,
    slash_command_body,
)

__all__ = [
    "Call",
    "FakeSlack",
    "FakeSlackThread",
    "ResponsePost",
    "SharedFile",
    "app_mention_event",
    "block_action_body",
    "event_body",
    "message_event",
    "request_headers",
    "sign",
    "slash_command_body",
    "validate_blocks",
    "validate_message",
]
