"""Posting a Slack reply where it belongs: the channel, the estimate's thread, the asker
only, or (when the bot can't post in a channel) ``response_url``; and the memory chart,
drawn on a worker thread and uploaded into the estimate's thread.

Every method returns the outcome for the command's log line (``posted``, ``fallback``,
``ephemeral``, ``uploaded``, ``failed``) and never raises for a Slack API error.

Also here, as the other Web API call a reply waits on: :func:`may_manage`, whether the asker
may change the channel's price announcements (``users.info``), which fails closed.
"""

from __future__ import annotations

import logging
from typing import Any

import aiohttp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chart import render_chart
from adapters.slack.blocks import chart_failed_message, invite_note, message_for
from bot.price_service import PERMISSION_UNCHECKED, PermissionUnchecked
from bot.service import Reply, ReplyKind, Service
from bot.store import ThreadKey
from catalog.hub.errors import HubError
from engine import Request

PLATFORM = "slack"
NOT_MEMBER_ERRORS = frozenset({"not_in_channel", "channel_not_found", "is_archived"})
"""chat.postMessage errors meaning "the bot can't post here": fall back to response_url."""

CANNOT_TELL_ERRORS = frozenset({"missing_scope"})
"""``users.info`` errors meaning Slack can't tell the bot who is an admin (the app was
installed without ``users:read``): then anyone in the channel may change its price
announcements, as documented (docs/prices.md). Any other error refuses the change."""

log = logging.getLogger("ftcost.slack")


async def may_manage(client: AsyncWebClient, user: str | None) -> bool | None:
    """Whether ``user`` may change the channel's price announcements: workspace admins
    and owners (``users.info``, needs ``users:read``). None when Slack can't tell
    (:data:`CANNOT_TELL_ERRORS`): then anyone may. No user: False. Raises
    :class:`PermissionUnchecked` for any other failure (``ratelimited``, an unreachable
    Slack): a rate limit must not open the subscription to everyone."""
    if not user:
        return False
    try:
        resp = await client.users_info(user=user)
    except SlackApiError as exc:
        error = str(exc.response.get("error") if exc.response is not None else "unknown")
        if error in CANNOT_TELL_ERRORS:
            log.info("cannot check admin status error=%s: anyone may (no users:read)", error)
            return None
        log.warning("cannot check admin status error=%s: change refused", error)
        raise PermissionUnchecked(error) from None
    except (SlackClientError, aiohttp.ClientError, OSError) as exc:  # TimeoutError too
        log.warning("cannot check admin status error=%s: change refused", type(exc).__name__)
        raise PermissionUnchecked(type(exc).__name__) from None
    info = resp.get("user") or {}
    return bool(info.get("is_admin") or info.get("is_owner") or info.get("is_primary_owner"))


class SlackDelivery:
    """Sends replies with the bot's Web API client; remembers each posted estimate as its
    thread's context through the shared service."""

    def __init__(
        self, client: AsyncWebClient, service: Service, *, command: str, max_cards: int
    ) -> None:
        self.client = client
        self.service = service
        self.command = command
        self.max_cards = max_cards

    async def deliver(
        self,
        reply: Reply,
        *,
        channel: str,
        user: str | None,
        thread_ts: str | None = None,
        respond: AsyncRespond | None = None,
        query: str | None = None,
        bot_user_id: str | None = None,
        workspace: str | None = None,
    ) -> str:
        """Post ``reply`` where it belongs; return the outcome for the log line:
        ``posted``, ``fallback`` (response_url), ``ephemeral``, ``uploaded`` (a chart
        only) or ``failed``. An estimate that wants its chart gets it in its thread."""
        if reply.kind is ReplyKind.CHART and reply.request is not None:
            return await self.upload_chart(
                reply.request, channel=channel, thread_ts=thread_ts, user=user,
                respond=respond, workspace=workspace,
            )
        kwargs: dict[str, Any] = {"command": self.command}
        if reply.kind is ReplyKind.ESTIMATE:
            kwargs.update(asked_by=user, query=query, max_cards=self.max_cards)
        elif reply.kind is ReplyKind.ERROR:
            kwargs.update(query=query)
        message = message_for(reply, **kwargs)

        if not reply.is_public:
            return await self.ephemeral(message, channel, user, thread_ts, respond)

        try:
            posted = await self.client.chat_postMessage(
                channel=channel,
                thread_ts=thread_ts,
                text=message["text"],
                blocks=message["blocks"],
                unfurl_links=False,
                unfurl_media=False,
            )
        except SlackApiError as exc:
            error = exc.response.get("error") if exc.response is not None else None
            if respond is None:
                log.warning("chat.postMessage failed: %s", error)
                return "failed"
            # Not a member (or any other failure, e.g. rate limits that outlasted the
            # retries): answer in-channel through response_url so the reply isn't lost.
            if error in NOT_MEMBER_ERRORS:
                kwargs["note"] = invite_note(bot_user_id, chart=reply.chart)
            fallback = message_for(reply, **kwargs)
            return await self._respond(respond, fallback, "in_channel", "fallback")
        ts = posted.get("ts")
        if ts:
            key = ThreadKey(PLATFORM, channel, thread_ts or ts)
            await self.service.remember(key, reply, ts)
        if ts and reply.chart and reply.request is not None:
            await self.upload_chart(
                reply.request, channel=channel, thread_ts=thread_ts or ts, user=user,
                workspace=workspace,
            )
        return "posted"

    async def upload_chart(
        self,
        request: Request,
        *,
        channel: str,
        thread_ts: str | None,
        user: str | None,
        respond: AsyncRespond | None = None,
        workspace: str | None = None,
    ) -> str:
        """Draw the memory chart of ``request`` on a worker thread (the event loop keeps
        serving) and upload it into the thread with ``files_upload_v2`` (``files:write``).
        A failure is told to the asker privately. Outcome: ``uploaded`` or ``failed``."""
        try:
            catalog = await self.service.catalog_with(request, workspace)
        except HubError as exc:  # a Hub model that can't be read right now
            log.warning("chart: hub model unavailable: %s", exc.kind)
            reply = Reply(ReplyKind.ERROR, text=f"I couldn't draw the chart: {exc}")
            await self.ephemeral(
                message_for(reply, command=self.command), channel, user, thread_ts, respond
            )
            return "failed"
        image = await render_chart(request, catalog)
        try:
            await self.client.files_upload_v2(
                channel=channel,
                thread_ts=thread_ts,
                file=image.png,
                filename=image.filename,
                title=image.title,
                alt_txt=image.alt_text,
            )
        except (SlackApiError, SlackClientError) as exc:
            response = getattr(exc, "response", None)
            error = response.get("error") if response is not None else None
            log.warning("chart upload failed: %s", error or type(exc).__name__)
            await self.ephemeral(chart_failed_message(error), channel, user, thread_ts, respond)
            return "failed"
        return "uploaded"

    async def _respond(
        self, respond: AsyncRespond, message: dict[str, Any], response_type: str, outcome: str
    ) -> str:
        try:
            resp = await respond(
                text=message["text"],
                blocks=message["blocks"],
                response_type=response_type,
                replace_original=False,
            )
        except (SlackClientError, OSError, ValueError) as exc:
            log.warning("response_url post failed: %s", type(exc).__name__)
            return "failed"
        if resp.status_code != 200:
            log.warning("response_url post failed: HTTP %s %s", resp.status_code, resp.body)
            return "failed"
        return outcome

    async def ephemeral(
        self,
        message: dict[str, Any],
        channel: str,
        user: str | None,
        thread_ts: str | None,
        respond: AsyncRespond | None,
    ) -> str:
        if respond is not None:
            return await self._respond(respond, message, "ephemeral", "ephemeral")
        if user is None:
            return "failed"
        try:
            await self.client.chat_postEphemeral(
                channel=channel,
                user=user,
                thread_ts=thread_ts,
                text=message["text"],
                blocks=message["blocks"],
            )
        except SlackApiError as exc:
            log.warning("chat.postEphemeral failed: %s", exc.response.get("error"))
            return "failed"
        return "ephemeral"

    async def expired(
        self, channel: str, user: str | None, respond: AsyncRespond | None
    ) -> str:
        reply = Reply(
            ReplyKind.ERROR,
            text=f"That estimate can't be changed any more. Ask again with {self.command} QUERY.",
        )
        return await self.ephemeral(
            message_for(reply, command=self.command), channel, user, None, respond
        )


__all__ = [
    "CANNOT_TELL_ERRORS",
    "NOT_MEMBER_ERRORS",
    "PERMISSION_UNCHECKED",
    "PermissionUnchecked",
    "SlackDelivery",
    "may_manage",
]
