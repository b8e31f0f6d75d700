"""The Slack stand-in, exercised with the real slack_sdk and slack-bolt code."""

from __future__ import annotations

import json
import re
import time
import types
from urllib.parse import parse_qs

import pytest
from slack_bolt import App, BoltRequest
from slack_bolt.app.async_app import AsyncApp
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry import builtin_async_handlers
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from tests.fakes import (
    FakeSlack,
    app_mention_event,
    block_action_body,
    event_body,
    message_event,
    request_headers,
    sign,
    slash_command_body,
    validate_blocks,
)
from tests.fakes.slack_signing import BOT_ID, BOT_USER_ID

SECRET = "test-signing-secret"
TS_RE = re.compile(r"^\d{10}\.\d{6}$")


def section(text: str) -> dict:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text}}


def button(action_id: str, text: str = "Go", value: str = "v") -> dict:
    return {
        "type": "button",
        "action_id": action_id,
        "text": {"type": "plain_text", "text": text},
        "value": value,
    }


@pytest.fixture
def client(slack: FakeSlack) -> AsyncWebClient:
    return AsyncWebClient(token="xoxb-test", base_url=slack.base_url, retry_handlers=[])


# -- Web API through AsyncWebClient ------------------------------------------------------------
async def test_base_url_is_loopback_in_slack_sdk_format(slack: FakeSlack):
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/api/", slack.base_url)


async def test_async_post_message_is_recorded_with_decoded_blocks_and_ts(slack, client):
    blocks = [section("*8x H100* for 12h"), {"type": "divider"}]

    resp = await client.chat_postMessage(channel="C1", text="fallback", blocks=blocks)

    assert TS_RE.match(resp["ts"])
    assert resp["channel"] == "C1"
    assert resp["message"]["blocks"] == blocks
    (call,) = slack.calls_to("chat.postMessage")
    assert call.args["blocks"] == blocks
    assert call.args["channel"] == "C1"
    assert call.headers["authorization"] == "Bearer xoxb-test"
    assert call.response["ts"] == resp["ts"]
    assert slack.violations == []


async def test_form_encoded_blocks_json_string_is_decoded(slack, client):
    blocks = [section("hello")]

    await client.api_call(
        "chat.postMessage", data={"channel": "C1", "text": "t", "blocks": json.dumps(blocks)}
    )

    (call,) = slack.calls_to("chat.postMessage")
    assert call.headers["content-type"].startswith("application/x-www-form-urlencoded")
    assert call.args["blocks"] == blocks


async def test_async_client_sends_params_methods_as_query_string(slack, client):
    await client.conversations_join(channel="C9")

    (call,) = slack.calls_to("conversations.join")
    assert call.args == {"channel": "C9"}


async def test_post_message_ts_values_are_unique_and_increasing(slack, client):
    stamps = [(await client.chat_postMessage(channel="C1", text=str(i)))["ts"] for i in range(5)]

    assert len(set(stamps)) == 5
    assert stamps == sorted(stamps, key=float)


async def test_missing_token_is_answered_not_authed(slack):
    anonymous = AsyncWebClient(base_url=slack.base_url, retry_handlers=[])

    with pytest.raises(SlackApiError) as err:
        await anonymous.chat_postMessage(channel="C1", text="hi")

    assert err.value.response["error"] == "not_authed"


async def test_auth_test_returns_bot_identity(client):
    resp = await client.auth_test()

    assert (resp["user_id"], resp["bot_id"], resp["team_id"], resp["user"]) == (
        BOT_USER_ID,
        BOT_ID,
        "T1",
        "ftcost",
    )


async def test_users_info_reports_configured_admin_flag(slack, client):
    slack.set_admin("UADMIN")

    admin = await client.users_info(user="UADMIN")
    other = await client.users_info(user="U2")

    assert admin["user"]["is_admin"] is True
    assert other["user"]["is_admin"] is False


async def test_unknown_method_answers_unknown_method(client):
    with pytest.raises(SlackApiError) as err:
        await client.api_call("chat.doesNotExist")

    assert err.value.response["error"] == "unknown_method"


async def test_apps_connections_open_refuses_a_token_that_is_not_app_level(slack, client):
    slack.on("apps.connections.open", lambda args: {"url": "ws://127.0.0.1:1/link"})

    with pytest.raises(SlackApiError) as err:
        await client.apps_connections_open(app_token="xoxb-not-an-app-token")
    opened = await client.apps_connections_open(app_token="xapp-1-A1-app-token")

    assert err.value.response["error"] == "not_allowed_token_type"
    assert opened["url"] == "ws://127.0.0.1:1/link"


async def test_refuse_answers_every_call_until_lifted(slack, client):
    slack.on("apps.connections.open", lambda args: {"url": "ws://127.0.0.1:1/link"})
    slack.refuse("apps.connections.open", "invalid_auth")

    errors = []
    for _ in range(3):
        with pytest.raises(SlackApiError) as err:
            await client.apps_connections_open(app_token="xapp-1-A1-app-token")
        errors.append(err.value.response["error"])
    slack.refuse("apps.connections.open", None)
    opened = await client.apps_connections_open(app_token="xapp-1-A1-app-token")

    assert errors == ["invalid_auth"] * 3
    assert opened["ok"] is True


async def test_post_ephemeral_returns_message_ts(client):
    resp = await client.chat_postEphemeral(channel="C1", user="U1", text="only you")

    assert TS_RE.match(resp["message_ts"])


async def test_chat_update_replaces_text_and_blocks_of_posted_message(slack, client):
    posted = await client.chat_postMessage(channel="C1", text="old")

    await client.chat_update(channel="C1", ts=posted["ts"], text="new", blocks=[section("new")])

    (message,) = slack.messages_in("C1")
    assert (message["text"], message["blocks"]) == ("new", [section("new")])


async def test_views_open_returns_view_with_id(client):
    view = {"type": "modal", "title": {"type": "plain_text", "text": "ftcost"}, "blocks": []}

    resp = await client.views_open(trigger_id="1.2.abc", view=view)

    assert resp["view"]["id"].startswith("V")
    assert resp["view"]["type"] == "modal"


# -- fault injection ---------------------------------------------------------------------------
async def test_fail_next_not_in_channel_raises_slack_api_error_once(slack, client):
    slack.fail_next("chat.postMessage", error="not_in_channel")

    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C1", text="hi")
    retry = await client.chat_postMessage(channel="C1", text="hi")

    assert err.value.response["error"] == "not_in_channel"
    assert retry["ok"] is True


async def test_fail_next_channel_not_found(slack, client):
    slack.fail_next("conversations.info", error="channel_not_found")

    with pytest.raises(SlackApiError) as err:
        await client.conversations_info(channel="CGONE")

    assert err.value.response["error"] == "channel_not_found"


async def test_non_member_channel_rejects_posts_until_membership_restored(slack, client):
    slack.set_channel_member("C2", False)
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C2", text="hi")

    slack.set_channel_member("C2", True)
    resp = await client.chat_postMessage(channel="C2", text="hi")

    assert err.value.response["error"] == "not_in_channel"
    assert resp["ok"] is True


async def test_conversations_join_makes_bot_a_member(slack, client):
    slack.set_channel_member("C3", False)

    joined = await client.conversations_join(channel="C3")
    resp = await client.chat_postMessage(channel="C3", text="hi")

    assert joined["channel"]["is_member"] is True
    assert resp["ok"] is True


async def test_rate_limited_post_is_retried_after_retry_after_and_delivered_once(
    slack, monkeypatch
):
    # slack_sdk sleeps int(Retry-After) + random.random(); pin the jitter so the wait is 1s.
    monkeypatch.setattr(builtin_async_handlers, "random", types.SimpleNamespace(random=lambda: 0))
    retrying = AsyncWebClient(
        token="xoxb-test",
        base_url=slack.base_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=1)],
    )
    slack.rate_limit_next("chat.postMessage", retry_after=1)

    resp = await retrying.chat_postMessage(channel="C1", text="hi")

    first, second = slack.calls_to("chat.postMessage")
    assert (first.status, first.response["error"], second.status) == (429, "ratelimited", 200)
    assert second.time - first.time >= 1.0
    assert len(slack.calls_to("chat.postMessage", ok=True)) == 1
    assert [m["ts"] for m in slack.messages_in("C1")] == [resp["ts"]]


async def test_rate_limit_without_retry_handler_raises_with_retry_after_header(slack, client):
    slack.rate_limit_next("chat.postMessage", retry_after=1)

    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C1", text="hi")

    assert err.value.response.status_code == 429
    assert err.value.response.headers["Retry-After"] == "1"
    assert err.value.response["error"] == "ratelimited"


# -- Block Kit limits through the server ---------------------------------------------------------
async def test_oversized_blocks_are_recorded_as_violations_and_rejected(slack, client):
    with pytest.raises(SlackApiError) as err:
        await client.chat_postMessage(channel="C1", text="t", blocks=[section("x")] * 51)

    assert err.value.response["error"] == "invalid_blocks"
    assert slack.violations == ["chat.postMessage: blocks has 51 items (max 50)"]
    assert slack.messages_in("C1") == []


async def test_text_over_40000_chars_is_truncated_with_warning(slack, client):
    resp = await client.chat_postMessage(channel="C1", text="x" * 40_001)

    assert resp["warning"] == "message_truncated"
    assert len(slack.messages_in("C1")[0]["text"]) == 40_000
    assert slack.violations and "40000" in slack.violations[0]


# -- response_url ------------------------------------------------------------------------------
async def test_response_url_posts_are_recorded_and_answered_ok(slack):
    url = slack.response_url("C1")

    resp = await AsyncWebhookClient(url).send(
        text="done", response_type="in_channel", replace_original=True, blocks=[section("done")]
    )

    assert (resp.status_code, resp.body) == (200, "ok")
    (post,) = slack.responses
    assert (post.channel, post["text"], post["response_type"]) == ("C1", "done", "in_channel")
    assert post["blocks"] == [section("done")]
    assert post["replace_original"] is True


async def test_response_url_refuses_a_sixth_use(slack):
    webhook = AsyncWebhookClient(slack.response_url("C1"))
    statuses = [(await webhook.send(text=str(i))).status_code for i in range(6)]

    assert statuses == [200] * 5 + [404]


# -- waiting -----------------------------------------------------------------------------------
async def test_wait_for_times_out_naming_the_calls_seen(slack, client):
    await client.auth_test()

    with pytest.raises(TimeoutError, match=r"chat\.postMessage.*auth\.test"):
        await slack.wait_for("chat.postMessage", timeout=0.05)


def test_sync_web_client_against_threaded_fake():
    with FakeSlack.run_in_thread() as slack:
        web = WebClient(token="xoxb-test", base_url=slack.base_url)

        resp = web.chat_postMessage(channel="C1", text="sync", blocks=[section("sync")])

        (call,) = slack.wait_for_sync("chat.postMessage")
        assert call.args["blocks"] == [section("sync")]
        assert call.response["ts"] == resp["ts"]


def test_sync_client_reaches_form_encoded_methods_on_threaded_fake():
    with FakeSlack.run_in_thread() as slack:
        WebClient(token="xoxb-test", base_url=slack.base_url).conversations_join(channel="C9")

        (call,) = slack.calls_to("conversations.join")
        assert call.headers["content-type"] == "application/x-www-form-urlencoded"
        assert call.args["channel"] == "C9"


# -- validate_blocks ---------------------------------------------------------------------------
def test_validate_blocks_accepts_a_valid_message():
    blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": "Cost"}},
        section("ok"),
        {"type": "actions", "elements": [button("a"), button("b")]},
    ]

    assert validate_blocks(blocks) == []


def test_validate_blocks_flags_51_blocks():
    assert validate_blocks([section("x")] * 51) == ["blocks has 51 items (max 50)"]


def test_validate_blocks_allows_100_blocks_in_a_modal():
    assert validate_blocks([section("x")] * 100, max_blocks=100) == []


def test_validate_blocks_flags_3001_char_section_text():
    assert validate_blocks([section("x" * 3001)]) == [
        "blocks[0].text.text has 3001 chars (max 3000)"
    ]


def test_validate_blocks_flags_11_section_fields():
    fields = [{"type": "mrkdwn", "text": "f"}] * 11

    assert validate_blocks([{"type": "section", "fields": fields}]) == [
        "blocks[0].fields has 11 items (max 10)"
    ]


def test_validate_blocks_flags_duplicate_action_ids():
    blocks = [{"type": "actions", "elements": [button("pick"), button("pick")]}]

    (problem,) = validate_blocks(blocks)

    assert "'pick'" in problem and "duplicates blocks[0].elements[0]" in problem


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        (
            {"type": "section", "fields": [{"type": "mrkdwn", "text": "x" * 2001}]},
            "blocks[0].fields[0].text has 2001 chars (max 2000)",
        ),
        (
            {"type": "header", "text": {"type": "plain_text", "text": "x" * 151}},
            "blocks[0].text.text has 151 chars (max 150)",
        ),
        (
            {"type": "context", "elements": [{"type": "mrkdwn", "text": "c"}] * 11},
            "blocks[0].elements has 11 items (max 10)",
        ),
        (
            {"type": "actions", "elements": [button(f"b{i}") for i in range(26)]},
            "blocks[0].elements has 26 items (max 25)",
        ),
        (
            {"type": "actions", "elements": [button("b", text="x" * 76)]},
            "blocks[0].elements[0].text.text has 76 chars (max 75)",
        ),
        (
            {"type": "actions", "elements": [button("b", value="x" * 2001)]},
            "blocks[0].elements[0].value has 2001 chars (max 2000)",
        ),
        (
            {"type": "actions", "elements": [button("x" * 256)]},
            "blocks[0].elements[0].action_id has 256 chars (max 255)",
        ),
        (
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "static_select",
                        "action_id": "s",
                        "options": [
                            {"text": {"type": "plain_text", "text": "o"}, "value": str(i)}
                            for i in range(101)
                        ],
                    }
                ],
            },
            "blocks[0].elements[0].options has 101 items (max 100)",
        ),
        (
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "static_select",
                        "action_id": "s",
                        "options": [
                            {"text": {"type": "plain_text", "text": "x" * 76}, "value": "v"}
                        ],
                    }
                ],
            },
            "blocks[0].elements[0].options[0].text.text has 76 chars (max 75)",
        ),
        (
            {
                "type": "actions",
                "elements": [
                    {
                        "type": "static_select",
                        "action_id": "s",
                        "options": [
                            {"text": {"type": "plain_text", "text": "o"}, "value": "x" * 151}
                        ],
                    }
                ],
            },
            "blocks[0].elements[0].options[0].value has 151 chars (max 150)",
        ),
        (
            {"type": "section", "text": {"type": "mrkdwn", "text": ""}},
            "blocks[0].text.text is empty (min 1 char)",
        ),
    ],
    ids=[
        "field-2001",
        "header-151",
        "context-11",
        "actions-26",
        "button-text-76",
        "button-value-2001",
        "action-id-256",
        "select-101-options",
        "option-text-76",
        "option-value-151",
        "empty-section-text",
    ],
)
def test_validate_blocks_flags_each_documented_limit(block, expected):
    assert validate_blocks([block]) == [expected]


# -- signing -----------------------------------------------------------------------------------
def test_sign_headers_verify_with_slack_sdk_signature_verifier():
    body = slash_command_body("cost llama-3-8b")

    headers = sign(body, SECRET)

    assert SignatureVerifier(SECRET).is_valid_request(body, headers)


def test_sign_with_wrong_secret_fails_verification():
    body = event_body(app_mention_event("<@UBOT> hi"))

    assert not SignatureVerifier(SECRET).is_valid_request(body, sign(body, "other-secret"))


def test_sign_uses_given_timestamp():
    assert sign(b"x", SECRET, timestamp=1_700_000_000)["X-Slack-Request-Timestamp"] == (
        "1700000000"
    )


def test_block_action_body_is_form_encoded_block_actions_payload():
    body = block_action_body(
        "pick_gpu",
        None,
        "1700000000.000100",
        "C1",
        "U1",
        selected_option_value="h100",
        thread_ts="1700000000.000050",
    )

    payload = json.loads(parse_qs(body)["payload"][0])

    assert payload["type"] == "block_actions"
    assert payload["actions"][0]["selected_option"]["value"] == "h100"
    assert payload["container"]["thread_ts"] == "1700000000.000050"
    assert payload["message"]["ts"] == "1700000000.000100"


# -- slack-bolt end to end -----------------------------------------------------------------------
def bolt_app(slack: FakeSlack) -> AsyncApp:
    return AsyncApp(
        client=AsyncWebClient(token="xoxb-test", base_url=slack.base_url),
        signing_secret=SECRET,
    )


async def dispatch(app: AsyncApp, body: str) -> int:
    response = await app.async_dispatch(
        AsyncBoltRequest(body=body, headers=request_headers(body, SECRET))
    )
    return response.status


async def test_bolt_slash_command_responds_through_fake_response_url(slack):
    app = bolt_app(slack)

    @app.command("/ftcost")
    async def on_command(ack, respond, command):
        await ack()
        await respond(text=f"costing {command['text']}")

    body = slash_command_body("llama-3-8b", response_url=slack.response_url("C1"))
    status = await dispatch(app, body)

    (post,) = await slack.wait_for_responses()
    assert status == 200
    assert post["text"] == "costing llama-3-8b"
    assert len(slack.calls_to("auth.test")) == 1


async def test_bolt_app_mention_says_in_thread_through_fake(slack):
    app = bolt_app(slack)

    @app.event("app_mention")
    async def on_mention(event, say):
        await say(text="hi", thread_ts=event["ts"])

    body = event_body(app_mention_event(f"<@{BOT_USER_ID}> cost", "C7", "1700000001.000200"))
    status = await dispatch(app, body)

    (call,) = await slack.wait_for("chat.postMessage")
    assert status == 200
    assert (call.args["channel"], call.args["thread_ts"]) == ("C7", "1700000001.000200")


async def test_bolt_block_action_updates_the_seeded_message(slack):
    app = bolt_app(slack)

    @app.action("pick_gpu")
    async def on_pick(ack, action, body, client):
        await ack()
        await client.chat_update(
            channel=body["channel"]["id"],
            ts=body["message"]["ts"],
            text=action["selected_option"]["value"],
        )

    ts = slack.seed_message("C1", text="pick a GPU")
    body = block_action_body("pick_gpu", None, ts, "C1", "U1", selected_option_value="h100")
    status = await dispatch(app, body)

    await slack.wait_for("chat.update", ok=True)
    assert status == 200
    assert slack.messages_in("C1")[0]["text"] == "h100"


def test_sync_bolt_app_replies_to_message_via_threaded_fake():
    with FakeSlack.run_in_thread() as slack:
        app = App(
            client=WebClient(token="xoxb-test", base_url=slack.base_url), signing_secret=SECRET
        )

        @app.message("cost")
        def on_message(message, say):
            say(text="on it")

        body = event_body(message_event("cost please", "C5", "1700000002.000300"))
        response = app.dispatch(BoltRequest(body=body, headers=request_headers(body, SECRET)))

        (call,) = slack.wait_for_sync("chat.postMessage")
        assert response.status == 200
        assert (call.args["channel"], call.args["text"]) == ("C5", "on it")


def test_threaded_fake_wait_for_sync_times_out_quickly():
    with FakeSlack.run_in_thread() as slack:
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            slack.wait_for_sync("chat.postMessage", timeout=0.1)
        assert time.monotonic() - started < 1.0
