"""Load and fault benchmark: two bot replicas on one Redis behind a load balancer
(a benchmark, not a test).

Everything runs on 127.0.0.1, each part in its own process so that none of them steals
the event loop of another:

* ``redis-server`` (``tests/redis_server.py``), the shared store;
* two ``python -m bot`` replicas in Slack HTTP mode (``STORE_URL=redis://...``);
* the loopback balancer (``python -m tests.fakes.balancer``): round-robin, health
  checks on ``/healthz``, retry on another replica when a connection is refused or reset
  before a response;
* the fake Slack Web API (``tests/fakes/slack_api.py``), which records every post;
* this process: the simulated users.

``--users`` simulated people (default 200) act for ``--seconds`` (default 60), each at
its own pace: one action every ``--pace-s`` seconds on average (uniform between half and
1.5 times that, so nobody exceeds 20 a minute, the bot's default rate limit). An action is

* a slash command: an estimate with a dataset size no one else asks for (so its reply can
  be told apart), or, one time in ten, ``help``/``gpus``/a misspelt query (answered
  privately through the request's ``response_url``);
* a button click (``block_actions``: method, 2x sequence, the card select) on one of the
  user's estimates, found in the fake's recorded posts: answered in the estimate's thread;
* a thread follow-up (a ``message`` event in the thread of one of the user's estimates,
  ``what if <unique>k tokens``), which needs the thread's context from the store;
  round-robin sends it to either replica, whichever posted the estimate.

Then the same with one replica stopped in the middle: ``--kill term`` sends SIGTERM (an
orchestrator's graceful stop), ``--kill kill`` SIGKILL (a crash), ``--kill all`` (the
default) runs both, ``--kill none`` only the steady run. Each run starts from fresh
processes and an empty Redis.

Printed per run: commands sent and acknowledged, replies delivered by kind, p50/p99/max
acknowledgement latency (HTTP response time at the client, through the balancer) and the
balancer's upstream time, replies lost (a request acknowledged with 200 whose post,
response_url answer or ephemeral never came), duplicate replies, follow-ups that found
their context, rate-limited replies, and for the fault runs the stopped replica's exit
status and what it cost. Targets: p99 ack under 150 ms, nothing lost or duplicated.

    .venv/bin/python benchmarks/load.py [--users 200] [--seconds 60] [--kill all]
                                        [--pace-s 6] [--profile DIR]

``--profile DIR`` runs the replicas under cProfile (``DIR/<run>-<replica>.prof``; read
them with ``python -m pstats``). Every loop is bounded by time; traffic stays on loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.bot_process import BotProcess  # noqa: E402
from tests.fakes import (  # noqa: E402
    FakeSlack,
    block_action_body,
    event_body,
    message_event,
    request_headers,
    slash_command_body,
)
from tests.fakes.balancer import SERVED_BY_HEADER, STATS_PATH  # noqa: E402
from tests.fakes.piped_process import PipedProcess  # noqa: E402
from tests.fakes.slack_signing import BOT_USER_ID  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402

SECRET = "load-bench-signing-secret"
TOKEN = "xoxb-load-bench-token"
TARGET_P99_MS = 150.0
SLACK_ACK_DEADLINE_MS = 3000.0
"""Slack shows the user an error (commands) or retries (events) after 3 s without 200."""
CHANNELS = 50
ESTIMATES = [
    "70b qlora {n}M tokens h100",
    "8b lora {n}M tokens seq 4k",
    "8b full {n}M tokens 8x h100 zero3",
    "mixtral-8x7b qlora {n}M tokens a100",
    "qwen2.5-72b lora {n}M tokens 2 epochs",
    "mistral-7b qlora {n}M tokens seq 8k",
]
PRIVATE = ["help", "gpus", "70b qlorra h100"]
"""Answered to the asker only, through the command's response_url."""
CLICKABLE = re.compile(r"^ftcost_(method_(full|lora|qlora)|seq_double|gpu)$")
ASKED_RE = re.compile(r"asked: `([^`]*)`")
REQUESTED_RE = re.compile(r"Requested by <@([A-Z0-9]+)>")
LIMITED_MARK = "pausing your requests"
NO_CONTEXT_MARK = "Context unavailable"
DRAIN_TIMEOUT_S = 90.0
QUIET_S = 1.5
"""Replies are complete once every live replica is idle and nothing arrived this long."""


# =============================================================================================
# The fake Slack Web API, in its own process
# =============================================================================================
def _post_record(method: str, args: dict[str, Any], ok: bool, ts: str | None,
                 when: float) -> dict[str, Any]:  # fmt: skip
    """What the load generator needs of one post (the fake's process computes it)."""
    blocks = args.get("blocks") if isinstance(args.get("blocks"), list) else []
    dump = json.dumps(blocks, ensure_ascii=False) + str(args.get("text") or "")
    asked = ASKED_RE.search(dump)
    requested = REQUESTED_RE.search(dump)
    record: dict[str, Any] = {
        "method": method, "ok": ok, "channel": args.get("channel"), "ts": ts,
        "thread_ts": args.get("thread_ts"), "user": args.get("user"), "time": when,
        "asked": asked.group(1) if asked else None,
        "requested_by": requested.group(1) if requested else None,
        "estimate": any(b.get("type") == "header" for b in blocks if isinstance(b, dict)),
        "no_context": NO_CONTEXT_MARK in dump, "limited": LIMITED_MARK in dump,
    }  # fmt: skip
    if method == "chat.postMessage" and ok and not args.get("thread_ts"):
        record["actions"] = _actions(blocks)
    return record


def _actions(blocks: list[Any]) -> list[tuple[str, str | None, str | None]]:
    """(action_id, button value, a select option) for the clickable elements."""
    out: list[tuple[str, str | None, str | None]] = []
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "actions":
            continue
        for element in block.get("elements") or []:
            action_id = str(element.get("action_id", ""))
            if not CLICKABLE.match(action_id):
                continue
            options = element.get("options") or []
            option = options[-1].get("value") if options else None
            out.append((action_id, element.get("value"), option))
    return out


def _fake_slack_process(conn: Connection, response_urls: int) -> None:
    """Child process: serve FakeSlack; answer "new" with the posts since the last ask."""
    with FakeSlack.run_in_thread() as slack:
        urls = [slack.response_url() for _ in range(response_urls)]
        conn.send((slack.base_url, urls))
        seen_calls = seen_responses = 0
        while True:
            try:
                command = conn.recv()
            except EOFError:
                return
            if command == "stop":
                return
            calls = slack.calls[seen_calls:]
            responses = slack.responses[seen_responses:]
            seen_calls += len(calls)
            seen_responses += len(responses)
            posts = [
                _post_record(c.method, c.args, c.ok, c.response.get("ts"), c.time)
                for c in calls if c.method in ("chat.postMessage", "chat.postEphemeral")
            ]  # fmt: skip
            answers = [{
                "rid": r.url_id, "status": r.status, "time": r.time,
                **_post_record("response_url", dict(r.body), r.status == 200, None, r.time),
            } for r in responses]  # fmt: skip
            conn.send({"posts": posts, "responses": answers,
                       "violations": len(slack.violations),
                       "rate_limited_calls": sum(c.status == 429 for c in calls)})  # fmt: skip


class RemoteSlack(PipedProcess):
    """The fake Slack Web API in a process of its own (as in benchmarks/slack_http.py)."""

    def __init__(self, response_urls: int) -> None:
        super().__init__(_fake_slack_process, response_urls)

    @property
    def base_url(self) -> str:
        return str(self.hello[0])

    @property
    def response_urls(self) -> list[str]:
        return list(self.hello[1])

    def new(self) -> dict[str, Any]:
        return self.ask("new")


# =============================================================================================
# The balancer, in its own process
# =============================================================================================
class BalancerProcess:
    def __init__(self, backends: list[str]) -> None:
        self.backends = backends
        self.proc: subprocess.Popen[str] | None = None
        self.url = ""

    async def __aenter__(self) -> BalancerProcess:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.fakes.balancer", *self.backends], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert self.proc.stdout is not None
        try:
            line = await asyncio.wait_for(asyncio.to_thread(self.proc.stdout.readline), 30)
            if not line.startswith("ready "):
                raise RuntimeError(f"the balancer did not start: {line!r}")
        except BaseException:
            await self.__aexit__()
            raise
        self.url = f"http://127.0.0.1:{int(line.split()[1])}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                await asyncio.to_thread(self.proc.wait, 10)
            except subprocess.TimeoutExpired:
                self.proc.kill()

    async def stats(self, session: aiohttp.ClientSession) -> dict[str, Any]:
        async with session.get(self.url + STATS_PATH) as resp:
            return dict(await resp.json())


# =============================================================================================
# The simulated users
# =============================================================================================
@dataclass
class Sent:
    """One request a user sent."""

    kind: str
    """``estimate``, ``private`` (help/listing/bad query), ``click`` or ``followup``."""
    user: str
    key: str
    """What identifies its reply: the query text (estimate, follow-up), the response_url
    id (private), the thread ts (click)."""
    at: float
    thread: str | None = None
    rid: str | None = None
    status: int = 0
    ack_ms: float = 0.0
    served_by: int | None = None
    after_kill: bool = False
    estimate_replica: int | None = None
    """Follow-ups and clicks: the replica that answered the estimate's slash command."""


@dataclass
class Estimate:
    channel: str
    ts: str
    actions: list[tuple[str, str | None, str | None]]
    replica: int | None
    """The replica that took its slash command (and so posted it)."""


@dataclass
class Person:
    id: str
    channel: str
    rng: random.Random
    estimates: list[Estimate] = field(default_factory=list)


@dataclass
class Replies:
    posts: list[dict[str, Any]] = field(default_factory=list)
    responses: list[dict[str, Any]] = field(default_factory=list)
    violations: int = 0
    rate_limited_calls: int = 0

    def add(self, new: dict[str, Any]) -> int:
        self.posts += new["posts"]
        self.responses += new["responses"]
        self.violations = new["violations"]
        self.rate_limited_calls += new["rate_limited_calls"]
        return len(new["posts"]) + len(new["responses"])


class Load:
    """Users acting at their pace for ``seconds``; what they sent, what came back."""

    def __init__(self, slack: RemoteSlack, url: str, users: int, pace_s: float,
                 seed: int) -> None:  # fmt: skip
        self.slack = slack
        self.url = url + "/slack/events"
        self.pace_s = pace_s
        rng = random.Random(seed)
        self.people = [
            Person(f"U{i:04d}", f"C{i % CHANNELS:04d}", random.Random(rng.random()))
            for i in range(users)
        ]
        self.by_id = {p.id: p for p in self.people}
        self.sent: list[Sent] = []
        self.queries: dict[str, Sent] = {}
        self.replies = Replies()
        self._urls = iter(slack.response_urls)
        self._numbers = itertools.count(1000)
        self._ts = itertools.count(1)
        self.killed_at: float | None = None
        self.on_victim_ack: Callable[[], None] | None = None
        """Called once, at the next acknowledgement from replica b (index 1)."""

    def _response_url(self) -> tuple[str, str]:
        url = next(self._urls)
        return url, url.rsplit("/", 1)[1]

    def _fresh_ts(self) -> str:
        return f"1800000000.{next(self._ts):06d}"

    # -- what a person does ---------------------------------------------------------------
    def next_request(self, person: Person) -> tuple[Sent, str]:
        rng = person.rng
        roll = rng.random()
        if person.estimates and roll < 0.55:
            estimate = rng.choice(person.estimates[-3:])
            if roll < 0.25 and estimate.actions:
                return self._click(person, estimate)
            return self._followup(person, estimate)
        if rng.random() < 0.1:
            text = rng.choice(PRIVATE)
            url, rid = self._response_url()
            sent = Sent("private", person.id, rid, 0.0, rid=rid)
        else:
            text = rng.choice(ESTIMATES).format(n=next(self._numbers))
            url, rid = self._response_url()
            sent = Sent("estimate", person.id, text, 0.0, rid=rid)
            self.queries[text] = sent
        body = slash_command_body(text, user_id=person.id, channel_id=person.channel,
                                  response_url=url, user_name=person.id.lower())  # fmt: skip
        return sent, body

    def _click(self, person: Person, estimate: Estimate) -> tuple[Sent, str]:
        action_id, value, option = person.rng.choice(estimate.actions)
        url, rid = self._response_url()
        body = block_action_body(
            action_id, value, message_ts=estimate.ts, channel_id=estimate.channel,
            user_id=person.id, response_url=url,
            selected_option_value=option if action_id == "ftcost_gpu" else None,
        )  # fmt: skip
        sent = Sent("click", person.id, estimate.ts, 0.0, thread=estimate.ts, rid=rid,
                    estimate_replica=estimate.replica)  # fmt: skip
        return sent, body

    def _followup(self, person: Person, estimate: Estimate) -> tuple[Sent, str]:
        text = f"what if {next(self._numbers)}k tokens"
        event = message_event(text, channel=estimate.channel, ts=self._fresh_ts(),
                              thread_ts=estimate.ts, user=person.id)  # fmt: skip
        event["parent_user_id"] = BOT_USER_ID
        body = event_body(event, event_id=f"Ev{next(self._numbers):09d}")
        sent = Sent("followup", person.id, text, 0.0, thread=estimate.ts,
                    estimate_replica=estimate.replica)  # fmt: skip
        return sent, body

    async def act(self, session: aiohttp.ClientSession, person: Person, deadline: float) -> None:
        await asyncio.sleep(person.rng.uniform(0, self.pace_s))
        while time.monotonic() < deadline:
            sent, body = self.next_request(person)
            headers = request_headers(body, SECRET)
            sent.at = time.monotonic()
            sent.after_kill = self.killed_at is not None
            self.sent.append(sent)
            started = time.perf_counter()
            try:
                async with session.post(self.url, data=body.encode(), headers=headers) as resp:
                    await resp.read()
                    sent.ack_ms = (time.perf_counter() - started) * 1000
                    sent.status = resp.status
                    served = resp.headers.get(SERVED_BY_HEADER)
                    sent.served_by = int(served) if served is not None else None
            except (aiohttp.ClientError, TimeoutError):
                sent.status = -1
                sent.ack_ms = (time.perf_counter() - started) * 1000
            if sent.served_by == 1 and self.on_victim_ack is not None:
                trigger, self.on_victim_ack = self.on_victim_ack, None
                trigger()
            await asyncio.sleep(person.rng.uniform(0.5 * self.pace_s, 1.5 * self.pace_s))

    # -- what came back -------------------------------------------------------------------
    async def collect(self) -> int:
        new = await asyncio.to_thread(self.slack.new)
        for post in new["posts"]:
            asked = post.get("asked")
            if post["method"] == "chat.postMessage" and post["ok"] and not post["thread_ts"]:
                origin = self.queries.get(asked) if asked else None
                if origin is not None:
                    self.by_id[origin.user].estimates.append(Estimate(
                        post["channel"], post["ts"], post.get("actions") or [], origin.served_by
                    ))  # fmt: skip
        return self.replies.add(new)

    async def follow_posts(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.collect()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.5)


# =============================================================================================
# Accounting
# =============================================================================================
@dataclass
class Outcome:
    kind: str
    expected: int
    got: int
    sent: list[Sent]


def account(load: Load) -> tuple[list[Outcome], dict[str, int]]:
    """Match every acknowledged request with its replies. Estimates and follow-ups by
    their unique text, answers through a response_url (private replies, fallbacks,
    rate-limit notices) by that URL; clicks by (thread, user) and follow-ups' private
    notices (``chat.postEphemeral``) by (thread, user), as counts: those replies name who
    asked but not which request."""
    posts = [p for p in load.replies.posts if p["ok"]]
    responses = [r for r in load.replies.responses if r["ok"]]
    by_rid = Counter(r["rid"] for r in responses)
    asked_top = Counter(p["asked"] for p in posts
                        if p["method"] == "chat.postMessage" and not p["thread_ts"])  # fmt: skip
    asked_thread = Counter((p["thread_ts"], p["asked"]) for p in posts if p["thread_ts"])
    with_context = {(p["thread_ts"], p["asked"]) for p in posts
                    if p["thread_ts"] and p["estimate"] and not p["no_context"]}  # fmt: skip
    clicked = Counter((p["thread_ts"], p["requested_by"]) for p in posts
                      if p["thread_ts"] and p["requested_by"])  # fmt: skip
    private = Counter((p["thread_ts"], p["user"]) for p in posts
                      if p["method"] == "chat.postEphemeral")  # fmt: skip
    outcomes: list[Outcome] = []
    groups: dict[tuple[str, str | None, str], list[Sent]] = defaultdict(list)
    for s in (s for s in load.sent if s.status == 200):
        if s.kind == "estimate":
            outcomes.append(Outcome(s.kind, 1, asked_top[s.key] + by_rid[s.rid], [s]))
        elif s.kind == "private":
            outcomes.append(Outcome(s.kind, 1, by_rid[s.rid], [s]))
        else:
            groups[(s.kind, s.thread, s.user)].append(s)
    for (kind, thread, user), group in groups.items():
        if kind == "click":
            got = clicked[(thread, user)] + sum(by_rid[s.rid] for s in group)
            outcomes.append(Outcome(kind, len(group), got, group))
            continue
        got = private[(thread, user)] + sum(asked_thread[(thread, s.key)] for s in group)
        outcomes.append(Outcome(kind, len(group), got, group))
    found = [s for group in groups.values() for s in group
             if s.kind == "followup" and (s.thread, s.key) in with_context]  # fmt: skip
    extra = {
        "followups_found_context": len(found),
        "followups_found_context_cross": sum(
            1 for s in found
            if s.served_by is not None and s.estimate_replica is not None
            and s.served_by != s.estimate_replica
        ),
        "followups_no_context": sum(
            1 for p in posts
            if p["thread_ts"] and p["asked"] and (p["no_context"] or not p["estimate"])
        ),
        "followups_limited": sum(1 for p in posts
                                 if p["method"] == "chat.postEphemeral" and p["limited"]),
        "limited": sum(1 for p in [*posts, *responses] if p["limited"]),
    }
    return outcomes, extra


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))]


# =============================================================================================
# One run
# =============================================================================================
@dataclass
class RunResult:
    name: str
    lines: list[str]
    ok: bool
    figures: dict[str, Any]


async def wait_drained(load: Load, replicas: list[BotProcess]) -> None:
    """Until every live replica has no reply in flight and nothing new arrived for a
    while (bounded by DRAIN_TIMEOUT_S)."""
    deadline = time.monotonic() + DRAIN_TIMEOUT_S
    quiet_since = time.monotonic()
    while time.monotonic() < deadline:
        if await load.collect():
            quiet_since = time.monotonic()
        busy = 0
        for replica in replicas:
            if replica.running:
                with contextlib.suppress(aiohttp.ClientError, OSError, TimeoutError, KeyError):
                    busy += await replica.inflight()
        if not busy and time.monotonic() - quiet_since >= QUIET_S:
            return
        await asyncio.sleep(0.2)


async def run_once(name: str, args: argparse.Namespace, kill: int | None) -> RunResult:
    """``kill``: None, ``signal.SIGTERM`` or ``signal.SIGKILL`` (sent to the second
    replica halfway through)."""
    max_requests = int(args.users * (args.seconds / (0.5 * args.pace_s) + 2)) + 100
    with (
        tempfile.TemporaryDirectory(prefix="ftcost-load-") as tmp,
        RedisServer() as redis,
        RemoteSlack(max_requests) as slack,
    ):
        env = {"SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET,
               "SLACK_API_BASE_URL": slack.base_url, "STORE_URL": redis.url}  # fmt: skip
        settings = {"slack": {"host": "127.0.0.1"}, "prices": {"enabled": False},
                    "log": {"level": "INFO"}}  # fmt: skip
        profile = Path(args.profile) if args.profile else None
        if profile is not None:
            profile.mkdir(parents=True, exist_ok=True)
        replicas = [
            BotProcess(f"{name}-{n}", Path(tmp), env=env, settings=settings, python_args=(
                ["-m", "cProfile", "-o", str(profile / f"{name}-{n}.prof")] if profile else []
            ))
            for n in ("a", "b")
        ]  # fmt: skip
        try:
            for replica in replicas:
                replica.start()
            await asyncio.gather(*(r.wait_ready(60) for r in replicas))
            async with BalancerProcess([r.url for r in replicas]) as balancer:
                return await _drive(name, args, kill, slack, balancer, replicas)
        finally:
            for replica in replicas:
                await replica.aclose()


async def _drive(
    name: str, args: argparse.Namespace, kill: int | None, slack: RemoteSlack,
    balancer: BalancerProcess, replicas: list[BotProcess],
) -> RunResult:  # fmt: skip
    load = Load(slack, balancer.url, args.users, args.pace_s, args.seed)
    connector = aiohttp.TCPConnector(limit=0)
    timeout = aiohttp.ClientTimeout(total=30)
    exit_status: int | None = None
    exit_after_s: float | None = None
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as session:
        stop = asyncio.Event()
        follower = asyncio.create_task(load.follow_posts(stop))
        started = time.monotonic()
        deadline = started + args.seconds
        users = [asyncio.create_task(load.act(session, p, deadline)) for p in load.people]
        victim = replicas[1]
        if kill is not None:
            await asyncio.sleep(args.seconds / 2)
            # Signal the replica the moment it has acknowledged a request (whose reply it
            # is then preparing): the worst time for a crash, the real test of a drain.
            signalled = asyncio.get_running_loop().create_future()

            def stop_victim() -> None:
                victim.signal(kill)
                load.killed_at = time.monotonic()
                signalled.set_result(None)

            load.on_victim_ack = stop_victim
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(signalled), 10)
            if not signalled.done():  # no request reached it for 10 s: signal anyway
                load.on_victim_ack = None
                stop_victim()
            exit_status = await victim.wait_exit(60)
            exit_after_s = time.monotonic() - load.killed_at
        await asyncio.gather(*users)
        stop.set()
        await follower
        await wait_drained(load, replicas)
        lb = await balancer.stats(session)
        handled = []
        for replica in replicas:
            if replica.running:
                handled.append(await replica.metric("ftcost_commands_total"))
    return report(name, load, lb, kill, (exit_status, exit_after_s), handled, replicas)


def report(
    name: str, load: Load, lb: dict[str, Any], kill: int | None,
    stopped: tuple[int | None, float | None], handled: list[float],
    replicas: list[BotProcess],
) -> RunResult:  # fmt: skip
    exit_status, exit_after_s = stopped
    outcomes, extra = account(load)
    acked = [s for s in load.sent if s.status == 200]
    not_acked = [s for s in load.sent if s.status != 200]
    latencies = [s.ack_ms for s in acked]
    lost = sum(max(0, o.expected - o.got) for o in outcomes)
    dup = sum(max(0, o.got - o.expected) for o in outcomes)
    lost_by_kind = Counter()
    lost_on_victim = 0
    for o in outcomes:
        if o.got < o.expected:
            lost_by_kind[o.kind] += o.expected - o.got
            if any(s.served_by == 1 for s in o.sent):
                lost_on_victim += o.expected - o.got
    by_kind = Counter(s.kind for s in acked)
    followups = [s for s in acked if s.kind == "followup"]
    followups_live = (len(followups) - extra["followups_limited"]
                      - (lost_by_kind["followup"] if kill == signal.SIGKILL else 0))
    late = sum(1 for s in acked if s.ack_ms > SLACK_ACK_DEADLINE_MS)
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    duration = max((s.at for s in load.sent), default=0) - min((s.at for s in load.sent),
                                                                default=0)  # fmt: skip
    lines = [
        f"== {name}: {len(load.people)} users, {len(load.sent)} requests in {duration:.0f} s "
        f"({len(load.sent) / duration if duration else 0:.1f}/s)",
        f"  acknowledged {len(acked)} (estimates {by_kind['estimate']}, private "
        f"{by_kind['private']}, clicks {by_kind['click']}, follow-ups {by_kind['followup']}); "
        f"not acknowledged {len(not_acked)}"
        + (f" {dict(Counter(s.status for s in not_acked))}" if not_acked else ""),
        f"  ack latency p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies, default=0):.1f}"
        f" ms; over Slack's 3 s: {late}",
        f"  balancer: upstream p50 {lb['upstream_p50_ms']:.1f} ms, p99 "
        f"{lb['upstream_p99_ms']:.1f} ms; retried on the "
        f"other replica {lb['retried']}; no replica answered {lb['failed']}",
        f"  commands handled per replica (balancer): {lb['per_backend']}; by /metrics of the "
        f"replicas still up: {[int(h) for h in handled]}",
        f"  replies delivered {sum(o.got for o in outcomes)}; lost {lost}"
        + (f" {dict(lost_by_kind)}" if lost else "")
        + (f" (acked by the stopped replica: {lost_on_victim})" if kill and lost else "")
        + f"; duplicates {dup}",
        f"  follow-ups that found their context: {extra['followups_found_context']} of "
        f"{followups_live} answered by a live replica and not rate-limited (no context: "
        f"{extra['followups_no_context']}); {extra['followups_found_context_cross']} of those "
        "found it on the replica that did not post the estimate",
        f"  rate-limited replies {extra['limited']}; invalid Block Kit payloads "
        f"{load.replies.violations}; Web API 429s {load.replies.rate_limited_calls}",
    ]
    if kill is not None:
        signame = signal.Signals(kill).name
        survivors = sorted(
            {s.served_by for s in load.sent if s.after_kill and s.served_by is not None}
        )
        lines.append(
            f"  {signame} to replica b halfway through, right after it acknowledged a "
            f"request: exit status "
            f"{exit_status} after {exit_after_s:.2f} s; requests sent after it "
            f"{sum(s.after_kill for s in load.sent)}, all served by "
            f"{survivors}"
        )
        tracebacks = replicas[1].log_text().count("Traceback")
        lines.append(f"  stopped replica's log: {tracebacks} tracebacks")
    ok = (lost == 0 and dup == 0 and p99 < TARGET_P99_MS and not not_acked
          and extra["followups_found_context"] == followups_live)  # fmt: skip
    if kill == signal.SIGTERM:
        ok = ok and exit_status == 0
    figures = {"p50": p50, "p99": p99, "lost": lost, "dup": dup, "acked": len(acked),
               "sent": len(load.sent), "not_acked": len(not_acked)}  # fmt: skip
    return RunResult(name, lines, ok, figures)


# =============================================================================================
async def main_async(args: argparse.Namespace) -> int:
    runs: list[tuple[str, int | None]] = [("steady", None)]
    if args.kill in ("term", "all"):
        runs.append(("sigterm", signal.SIGTERM))
    if args.kill in ("kill", "all"):
        runs.append(("sigkill", signal.SIGKILL))
    print(f"ftcost load benchmark: 2 replicas on Redis behind a loopback balancer, "
          f"{args.users} users x {args.seconds:.0f} s, one action per {args.pace_s:.1f} s "
          f"per user on average ({os.cpu_count()} CPUs, load average "
          f"{os.getloadavg()[0]:.2f} at start)", flush=True)  # fmt: skip
    verdicts = []
    for name, kill in runs:
        result = await run_once(name, args, kill)
        print("\n".join(result.lines), flush=True)
        verdicts.append((name, kill, result))
    print()
    all_ok = True
    for name, kill, result in verdicts:
        if kill == signal.SIGKILL:
            print(f"{name}: a crash loses the replies the killed replica had acknowledged "
                  f"but not yet posted (lost {result.figures['lost']}, duplicates "
                  f"{result.figures['dup']}, p99 {result.figures['p99']:.1f} ms): reported, "
                  "not a target")
            continue
        verdict = "OK" if result.ok else "MISS"
        all_ok &= result.ok
        print(f"{name}: p99 ack {result.figures['p99']:.1f} ms (target < {TARGET_P99_MS:.0f}),"
              f" lost {result.figures['lost']}, duplicates {result.figures['dup']}: {verdict}")
    return 0 if all_ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200, help="simulated users (default 200)")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="length of each run (default 60)")  # fmt: skip
    parser.add_argument("--kill", choices=("none", "term", "kill", "all"), default="all",
                        help="fault runs after the steady one: SIGTERM, SIGKILL, both (all) "
                             "or none (default all)")  # fmt: skip
    parser.add_argument("--pace-s", type=float, default=6.0,
                        help="mean seconds between one user's actions, drawn uniformly from "
                             "0.5x to 1.5x (default 6: at most 20 a minute, the bot's rate "
                             "limit)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--profile", metavar="DIR", default=None,
                        help="run the replicas under cProfile, writing DIR/<replica>.prof")
    args = parser.parse_args()
    if not 1 <= args.users <= 5000 or not 1 <= args.seconds <= 3600:
        parser.error("users must be 1..5000 and seconds 1..3600")
    if args.pace_s < 1:
        parser.error("--pace-s must be at least 1")
    if args.pace_s < 6:
        print(f"note: with --pace-s {args.pace_s} a user may send more than 20 commands in a "
              "minute; the bot's rate limit then answers some with a notice (counted)")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
