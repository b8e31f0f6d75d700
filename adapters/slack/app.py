"""The Slack app: bolt listeners (thin) over the shared :class:`~bot.service.Service`.

Listeners only acknowledge and hand the work to a tracked background task, so the
HTTP (or Socket Mode) acknowledgement never waits for the estimate, the store or
``chat.postMessage``:

* ``/ftcost QUERY``: estimate posted to the channel with ``chat.postMessage`` (its
  ``ts`` starts the thread and is remembered), help/listings/errors shown to the
  asker only. When the bot can't post there, the estimate goes in-channel through
  ``response_url`` with a note on inviting the bot.
* a reply in an estimate's thread: a what-if on that thread's last request,
  answered in the thread, becoming its new context. Under the bot's own message with no
  context the store can give (expired, lost, unreadable, the store down), a question is
  answered afresh and a change is told how to ask in full, each saying why.
* a slash command other than ``slack.command`` (the manifest and the config disagree):
  the asker is told privately and one line is logged (:mod:`adapters.slack.wiring`).
* ``@ftcost QUERY`` anywhere: a new estimate, in the mention's thread.
* a training config (issue 16): a YAML/JSON file or snippet shared with a mention or in
  an estimate's thread, or pasted in a code block after ``/ftcost``; the other words
  override it (:mod:`adapters.slack.files`).
* buttons (method, 2x sequence), the "Other cards" select and the framework menu: the
  changed estimate in the clicked estimate's thread; the original message is left as it is.
* ``set framework hf`` / ``set prices spot`` / ``unset NAME`` / ``settings``: the
  channel's defaults for new questions (:mod:`bot.channel_settings`), answered privately.
* "Show chart" (and the word ``chart`` in a query): the memory chart
  (``adapters.chart``), drawn on a worker thread and uploaded into the estimate's thread
  with ``files_upload_v2``.

Slack retries an event it thinks we missed (``X-Slack-Retry-Num``); each event id
is acted on once, through the store's atomic :meth:`~bot.store.Store.first_seen`
(rather than dropping every retry: a retry of an event whose first delivery never
arrived must still be answered).

Replies in one thread take turns (:meth:`~bot.service.Service.thread_turn`): a typed
reply, and a click that changes an estimate (its answer becomes the thread's context), are
each read, answered, posted and remembered in their turn, so a reply typed while a click
is answered builds on the click's estimate, and no change is lost from the context. (A
click changes the estimate it was on; **Show chart** posts no estimate and takes no turn.)

A person over the rate limit (:meth:`~bot.service.Service.admit`) is told privately once
a window; later refused mentions and thread replies get nothing (:data:`QUIET`), while a
slash command or a click, which the asker waits on, is always answered.

Where a reply goes and how (channel, thread, asker only, ``response_url``, the chart
upload) is :mod:`adapters.slack.delivery`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from contextvars import ContextVar
from typing import Any

import aiohttp
from slack_bolt.async_app import AsyncApp
from slack_bolt.context.respond.async_respond import AsyncRespond
from slack_bolt.error import BoltUnhandledRequestError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import (
    ACTION_CHART,
    ACTION_FRAMEWORK,
    ACTION_GPU,
    ACTION_ID_RE,
    ACTION_SEQ,
    ACTIONS_BLOCK_ID,
    framework_from_action,
    mentions_bot,
    mentions_other_user,
    message_for,
    method_from_action,
    slack_to_plain,
)
from adapters.slack.delivery import (
    SlackDelivery,
    may_manage,
)
from adapters.slack.files import ConfigAsk, SlackConfigs
from adapters.slack.wiring import bolt_logger, build_client, unhandled_response
from bot.config import Config, SlackMode
from bot.logs import log_command
from bot.service import Ask, ReplyKind, Service, Trigger, request_from_json
from bot.store import StoreUnavailable, ThreadKey
from bot.words import control_words
from engine import Request

PLATFORM = "slack"
ALLOWED_MESSAGE_SUBTYPES = frozenset({None, "thread_broadcast", "file_share"})
"""A reply "also sent to the channel" is still a person's thread reply, and so is one
with files (a config); every other subtype (edits, deletions, joins, bot messages, ...)
is ignored."""

SORRY = "Sorry, something went wrong while answering that. Please try again."
QUIET = "quiet"
"""The log line's outcome for a message refused by the rate limit after its window's first
refusal (:attr:`~bot.replies.Reply.quiet`): nothing is posted, so a flood of mentions or
thread replies is not answered by a flood of notices. A slash command or a click, which
the asker waits on, is answered privately every time."""
log = logging.getLogger("ftcost.slack")
_RECEIVED: ContextVar[float] = ContextVar("ftcost_slack_received")


def _workspace(team_id: str | None) -> str | None:
    return f"slack:{team_id}" if team_id else None


class SlackBot:
    """The bolt :class:`AsyncApp` and what its listeners do.

    ``await bot.drain()`` waits for every background reply (tests, graceful shutdown).
    """

    def __init__(
        self,
        config: Config,
        service: Service,
        client: AsyncWebClient | None = None,
        *,
        mode: SlackMode | None = None,
    ) -> None:
        self.config = config
        self.service = service
        self.client = client or build_client(config)
        self.out = SlackDelivery(
            self.client, service, command=config.slack.command, max_cards=config.slack.max_cards
        )
        """Where replies go (channel, thread, asker only, response_url) and the chart."""
        self.configs = SlackConfigs(self.client, service)
        """Training configs: a shared file or a pasted code block."""
        self.mode = mode or config.slack_mode or SlackMode.HTTP
        self.command = config.slack.command
        self.bot_user_id: str | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._own_session: aiohttp.ClientSession | None = None
        self._slots = asyncio.Semaphore(config.slack.reply_concurrency)
        secret = config.secrets.slack_signing_secret
        self.app = AsyncApp(
            name="ftcost",
            client=self.client,
            signing_secret=secret.get_secret_value() if secret else "",
            # Socket Mode has no HTTP signature; bolt skips it there anyway.
            request_verification_enabled=self.mode is SlackMode.HTTP,
            # Listeners ack and return at once; the work runs in our own tracked task
            # ("ack immediately and post asynchronously"), so there is no poll for ack().
            process_before_response=True,
            # A request no listener takes reaches on_error, which answers a slash command
            # the config does not name and logs one line (bolt: a multi-line suggestion).
            raise_error_for_unhandled_request=True,
            logger=bolt_logger(),
        )
        self._register()

    # -- wiring (thin listeners, in the manner of bolt's samples) -----------------------------
    def _register(self) -> None:
        app = self.app

        @app.command(self.command)
        async def on_command(ack, command, respond, context):
            await ack()
            self.spawn(self.answer_command(command, respond, context.bot_user_id))

        @app.event("app_mention")
        async def on_mention(body, event, context):
            self.spawn(self.answer_mention(body, event, context.bot_user_id))

        @app.event("message")
        async def on_message(body, event, context):
            if self.is_followup_candidate(event, context.bot_user_id):
                self.spawn(self.answer_followup(body, event, context.bot_user_id))

        @app.event("file_shared")
        async def on_file_shared(body, event):
            """No thread or text here: the ``file_share`` message answers the file."""

        @app.action(ACTION_ID_RE)
        async def on_action(ack, body, action, respond, context):
            await ack()
            self.spawn(self.answer_action(body, action, respond, context.bot_user_id))

        @app.error
        async def on_error(error, body):
            if isinstance(error, BoltUnhandledRequestError):  # no listener took it
                return unhandled_response(error, body, self.command)
            # The traceback says where it failed; never the body (user text) or tokens.
            log.error("unhandled error in a Slack listener: %s", type(error).__name__,
                      exc_info=error)  # fmt: skip

    def spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run a reply in the background (tracked for :meth:`drain`), at most
        ``slack.reply_concurrency`` at a time."""
        task = asyncio.get_running_loop().create_task(self._in_slot(coro, time.perf_counter()))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _in_slot(self, coro: Coroutine[Any, Any, None], received: float) -> None:
        # Few replies in progress at once: each event-loop turn then does a bounded amount
        # of reply work, and a burst of incoming requests is acknowledged first.
        _RECEIVED.set(received)
        async with self._slots:
            await coro

    @property
    def inflight(self) -> int:
        return len(self._tasks)

    async def drain(self, timeout: float | None = None) -> None:
        """Wait until no reply is in flight (new ones started meanwhile included)."""

        async def wait() -> None:
            while self._tasks:
                await asyncio.gather(*list(self._tasks), return_exceptions=True)

        await asyncio.wait_for(wait(), timeout)

    async def start(self) -> None:
        """Open one HTTP session for every Web API call (slack_sdk otherwise opens a
        connection, and against slack.com a TLS handshake, per call), then check the token
        and learn the bot's user id (fails fast on a bad token)."""
        if self.client.session is None:
            self._own_session = aiohttp.ClientSession(
                timeout=aiohttp.ClientTimeout(total=self.client.timeout)
            )
            self.client.session = self._own_session
        auth = await self.client.auth_test()
        self.bot_user_id = auth.get("user_id")

    async def close(self) -> None:
        """Close the HTTP session :meth:`start` opened (after the replies in flight)."""
        session, self._own_session = self._own_session, None
        if session is not None:
            self.client.session = None
            await session.close()

    # -- helpers --------------------------------------------------------------------------
    def _bot_id(self, from_context: str | None) -> str | None:
        return from_context or self.bot_user_id

    async def _first_delivery(self, body: dict[str, Any]) -> bool:
        event_id = body.get("event_id")
        if not event_id:
            return True
        key = f"slack:{body.get('team_id', '')}:{event_id}"
        return await self.service.first_seen(key, self.config.store.seen_ttl_hours * 3600)

    def _ask(
        self, text: str, channel: str | None, user: str | None, workspace: str | None,
        previous: Request | None = None, *, context_lost: bool = False,
        context_expired: bool = False,
    ) -> Ask:
        """``text`` for the service. Changing a price subscription is for workspace admins:
        ``users.info`` asked only then (:func:`~adapters.slack.delivery.may_manage`)."""
        return Ask(
            text, PLATFORM, channel=channel, user=user, workspace=workspace,
            previous=previous, context_lost=context_lost, context_expired=context_expired,
            command=self.command,
            may_manage=lambda: may_manage(self.client, user),
        )

    async def _config(
        self,
        text: str,
        files: list[dict[str, Any]] | None,
        channel: str | None,
        workspace: str | None,
        bot_user_id: str | None,
        explicit: bool = True,
    ) -> ConfigAsk | None:
        """A config in ``text`` (a code block) or ``files``, answered; None without one."""
        return await self.configs.answer(
            text, files, bot_user_id=self._bot_id(bot_user_id), workspace=workspace,
            defaults=lambda: self.service.channel_settings.defaults(PLATFORM, channel),
            explicit=explicit,
        )

    async def _timed(
        self,
        trigger: Trigger,
        work: Callable[[], Awaitable[tuple[str, str] | None]],
        respond: AsyncRespond | None = None,
    ) -> None:
        """Run one handled command and write its log line (kind, outcome, latency from
        receipt). On an unexpected error the asker is told privately when possible."""
        started = _RECEIVED.get(None) or time.perf_counter()
        kind, outcome = "unknown", "failed"
        try:
            result = await work()
            if result is None:  # not ours after all (no thread context, a duplicate...)
                return
            kind, outcome = result
        except Exception as exc:
            log.exception("slack %s failed: %s", trigger.value, type(exc).__name__)
            if respond is not None:
                with contextlib.suppress(Exception):
                    await respond(text=SORRY, response_type="ephemeral", replace_original=False)
        log_command(
            platform=PLATFORM,
            trigger=trigger.value,
            kind=kind,
            outcome=outcome,
            latency_ms=(time.perf_counter() - started) * 1000,
        )

    # -- /ftcost --------------------------------------------------------------------------
    async def answer_command(
        self, command: dict[str, Any], respond: AsyncRespond, bot_user_id: str | None
    ) -> None:
        async def work() -> tuple[str, str]:
            text = slack_to_plain(command.get("text") or "", self._bot_id(bot_user_id))
            workspace = _workspace(command.get("team_id"))
            reply = await self.service.admit(PLATFORM, command.get("user_id"))
            asked = None if reply else await self._config(
                command.get("text") or "", None, command.get("channel_id"), workspace,
                bot_user_id)
            if asked is not None:
                reply, text = asked.reply, asked.query
            reply = reply or await self.service.respond(self._ask(
                text, command.get("channel_id"), command.get("user_id"), workspace))
            outcome = await self.out.deliver(
                reply,
                channel=command["channel_id"],
                user=command.get("user_id"),
                respond=respond,
                query=text,
                bot_user_id=self._bot_id(bot_user_id),
                workspace=workspace,
            )
            return reply.kind.value, outcome

        await self._timed(Trigger.COMMAND, work, respond)

    # -- @ftcost ----------------------------------------------------------------------------
    async def answer_mention(
        self, body: dict[str, Any], event: dict[str, Any], bot_user_id: str | None
    ) -> None:
        if event.get("bot_id") or event.get("subtype") or not event.get("user"):
            return

        async def work() -> tuple[str, str] | None:
            if not await self._first_delivery(body):
                return None
            text = slack_to_plain(event.get("text") or "", self._bot_id(bot_user_id))
            workspace = _workspace(body.get("team_id"))
            reply = await self.service.admit(PLATFORM, event.get("user"))
            if reply is not None and reply.quiet:
                return reply.kind.value, QUIET  # told once this window already
            asked = None if reply else await self._config(
                event.get("text") or "", event.get("files"), event.get("channel"), workspace,
                bot_user_id)
            if asked is not None:
                reply, text = asked.reply, asked.query
            # In a thread its answer becomes the thread's context: in the thread's turn.
            turn: contextlib.AbstractAsyncContextManager[None] = contextlib.nullcontext()
            if event.get("thread_ts"):
                turn = self.service.thread_turn(ThreadKey(PLATFORM, event["channel"],
                                                          event["thread_ts"]))
            async with turn:
                reply = reply or await self.service.respond(self._ask(
                    text, event.get("channel"), event.get("user"), workspace))
                outcome = await self.out.deliver(
                    reply, channel=event["channel"], user=event.get("user"),
                    thread_ts=event.get("thread_ts") or event.get("ts"), query=text,
                    bot_user_id=self._bot_id(bot_user_id), workspace=workspace,
                )
            return reply.kind.value, outcome

        await self._timed(Trigger.MENTION, work)

    # -- thread replies -------------------------------------------------------------------
    def is_followup_candidate(self, event: dict[str, Any], bot_user_id: str | None) -> bool:
        """A person's reply inside a thread, not addressed to the bot by mention (the
        ``app_mention`` listener answers those) nor to another person."""
        if event.get("subtype") not in ALLOWED_MESSAGE_SUBTYPES:
            return False
        if event.get("bot_id") or not event.get("user") or event.get("user") == bot_user_id:
            return False
        thread_ts = event.get("thread_ts")
        if not thread_ts or thread_ts == event.get("ts"):
            return False
        text = event.get("text") or ""
        bot = self._bot_id(bot_user_id)
        return not (mentions_bot(text, bot) or mentions_other_user(text, bot))

    async def answer_followup(
        self, body: dict[str, Any], event: dict[str, Any], bot_user_id: str | None
    ) -> None:
        async def work() -> tuple[str, str] | None:
            # One reply of a thread at a time: each builds on the estimate the last posted.
            async with self.service.thread_turn(
                ThreadKey(PLATFORM, event["channel"], event["thread_ts"])
            ):
                return await answer()

        async def answer() -> tuple[str, str] | None:
            channel, thread_ts = event["channel"], event["thread_ts"]
            text = slack_to_plain(event.get("text") or "", self._bot_id(bot_user_id))
            workspace = _workspace(body.get("team_id"))
            ours = event.get("parent_user_id") == self._bot_id(bot_user_id)
            pasted = bool(event.get("files")) or "```" in text  # a config
            key = ThreadKey(PLATFORM, channel, thread_ts)
            try:
                context = await self.service.thread(key)
                lost = False
            except StoreUnavailable:
                context, lost = None, True
            base = context.request if context is not None else None
            if base is None and ours and not lost:
                # A price announcement's thread: a change of its reference estimate is
                # answered as in an estimate's thread; chatter about the prices is not.
                try:
                    base = await self.service.announcement(key)
                except StoreUnavailable:
                    lost = True
                if base is not None and not (
                        pasted or self.service.reads_as_question(text, base, workspace)):
                    return None
            # Under the bot's own message, a thread without a context had an estimate the
            # store can't give: expired, lost (a wiped volume), unreadable after an upgrade,
            # or the store is down. A question is answered afresh, a change told how to ask
            # in full; chatter there and in other threads: quiet.
            if base is None and not (ours and (
                    pasted or self.service.reads_as_followup(text, workspace))):
                return None
            expired = base is None and not lost
            if not await self._first_delivery(body):
                return None
            if (self.config.slack.followup_errors == "ignore" and not pasted
                    and not self.service.reads_as_question(text, base, workspace)):
                return "error", "ignored"  # chatter: not counted against the rate limit
            reply = await self.service.admit(PLATFORM, event.get("user"))
            if reply is not None and reply.quiet:
                return reply.kind.value, QUIET  # told once this window already
            asked = None if reply else await self._config(
                event.get("text") or "", event.get("files"), channel, workspace, bot_user_id,
                explicit=False)
            if asked is not None:
                reply, text = asked.reply, asked.query
            elif event.get("subtype") == "file_share" and not text:
                return None  # only a file that is no config (a screenshot): not a question
            reply = reply or await self.service.respond(self._ask(
                text, channel, event.get("user"), workspace, base,
                context_lost=lost, context_expired=expired))
            if (reply.kind is ReplyKind.ERROR and asked is None
                    and self.config.slack.followup_errors == "ignore"):
                return reply.kind.value, "ignored"
            outcome = await self.out.deliver(
                reply,
                channel=channel,
                user=event.get("user"),
                thread_ts=thread_ts,
                query=text,
                bot_user_id=self._bot_id(bot_user_id),
                workspace=workspace,
            )
            return reply.kind.value, outcome

        await self._timed(Trigger.FOLLOWUP, work)

    # -- buttons and the card select --------------------------------------------------------
    async def _base_request(
        self, body: dict[str, Any], action: dict[str, Any], channel: str, thread_ts: str
    ) -> Request | None:
        """The request of the clicked estimate: the button's value, else any button
        value in the clicked message, else the thread's stored context."""
        values = [action.get("value")]
        for block in (body.get("message") or {}).get("blocks") or []:
            if block.get("block_id") == ACTIONS_BLOCK_ID:
                values += [e.get("value") for e in block.get("elements") or []]
        for value in values:
            if value:
                try:
                    return request_from_json(value)
                except ValueError:
                    continue
        try:
            context = await self.service.thread(ThreadKey(PLATFORM, channel, thread_ts))
        except StoreUnavailable:
            return None
        return context.request if context else None

    async def answer_action(
        self,
        body: dict[str, Any],
        action: dict[str, Any],
        respond: AsyncRespond | None,
        bot_user_id: str | None,
    ) -> None:
        async def work() -> tuple[str, str] | None:
            container = body.get("container") or {}
            message = body.get("message") or {}
            channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
            user = (body.get("user") or {}).get("id")
            thread_ts = (
                message.get("thread_ts")
                or container.get("thread_ts")
                or container.get("message_ts")
                or message.get("ts")
            )
            if not channel or not thread_ts:
                return None
            # Limited or not, a click is answered (privately): the asker waits on it.
            limited = await self.service.admit(PLATFORM, user)
            if limited is not None:
                return limited.kind.value, await self.out.ephemeral(
                    message_for(limited, command=self.command), channel, user, None, respond
                )
            team = (body.get("team") or {}).get("id") or body.get("team_id")
            if action.get("action_id") == ACTION_CHART:  # no estimate: the context stays
                base = await self._base_request(body, action, channel, thread_ts)
                if base is None:
                    return "error", await self.out.expired(channel, user, respond)
                return "chart", await self.out.upload_chart(
                    base, channel=channel, thread_ts=thread_ts, user=user, respond=respond,
                    workspace=_workspace(team),
                )
            # The changed estimate becomes the thread's context: its base is read, and it is
            # answered, posted and remembered, in the thread's turn, as a typed reply is; a
            # reply typed meanwhile waits and builds on it, not on the estimate before it.
            async with self.service.thread_turn(ThreadKey(PLATFORM, channel, thread_ts)):
                return await change(channel, user, thread_ts, _workspace(team))

        async def change(
            channel: str, user: str | None, thread_ts: str, workspace: str | None
        ) -> tuple[str, str] | None:
            """The clicked control's change of the clicked estimate (its turn held)."""
            base = await self._base_request(body, action, channel, thread_ts)
            if base is None:
                return "error", await self.out.expired(channel, user, respond)
            action_id = action.get("action_id", "")
            if (method := method_from_action(action_id)) is not None:
                text = control_words("method", base, method.value)
            elif action_id == ACTION_SEQ:
                text = control_words("seq", base, None)
            elif action_id == ACTION_FRAMEWORK:
                framework = framework_from_action(action)
                text = control_words("framework", base, framework and framework.value)
            elif action_id == ACTION_GPU:
                gpu = ((action.get("selected_option") or {}).get("value") or "").strip()
                known = gpu in self.service.catalog.gpus
                text = control_words("gpu", base, gpu if known else None)
            else:
                return None
            if text is None:
                return "error", await self.out.expired(channel, user, respond)
            # As if typed in the thread: the same parser and checks as the words.
            reply = await self.service.answer_async(text, base, workspace)
            outcome = await self.out.deliver(
                reply,
                channel=channel,
                user=user,
                thread_ts=thread_ts,
                respond=respond,
                bot_user_id=self._bot_id(bot_user_id),
            )
            return reply.kind.value, outcome

        await self._timed(Trigger.BUTTON, work, respond)
