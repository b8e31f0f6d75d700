"""Two real bot replicas on one Redis, behind a load balancer, in Slack HTTP mode.

Each replica is its own ``python -m bot`` process (configured by environment and a YAML
file, as in production) talking to one fake Slack Web API and one ``redis-server``; signed
Slack requests reach them through ``tests/fakes/balancer.py``, which can pin a request to
a given replica. What must hold with several replicas:

* a thread follow-up handled by the replica that did not post the estimate finds its
  context;
* a Slack retry of an event (same ``event_id``, ``X-Slack-Retry-Num: 1``) landing on the
  other replica produces no second reply;
* the scheduled price refresh runs once across the replicas: one snapshot, one
  announcement per subscribed channel;
* SIGTERM stops one replica cleanly (status 0) after its replies in flight are posted,
  while the other keeps serving.

Select these with ``pytest -m replicas``; they also run in the default suite.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from bot.price_store import Subscription
from bot.prices import PricesConfig
from bot.store import ThreadKey
from bot.store_redis import RedisStore
from catalog.loader import default_catalog
from catalog.price_sources import refresh_prices
from tests.bot_process import BotProcess
from tests.fakes import FakeSlack, event_body, message_event, request_headers, slash_command_body
from tests.fakes.balancer import ROUTE_HEADER, SERVED_BY_HEADER, Balancer
from tests.fakes.price_server import PriceServer
from tests.fakes.slack_signing import BOT_USER_ID, TEAM_ID
from tests.price_refresh import CLOUDS, LAMBDA_H100
from tests.redis_server import RedisServer, redis_server_path

pytestmark = [
    pytest.mark.replicas,
    pytest.mark.asyncio(loop_scope="module"),
    pytest.mark.skipif(
        redis_server_path() is None,
        reason="needs redis-server on PATH (Debian: apt-get install redis-server)",
    ),
]

SECRET = "replicas-signing-secret-0123456789"
TOKEN = "xoxb-1111-2222-replicas-token"
SUBSCRIBED = ("CSUB1", "CSUB2")
NEVER_DURING_A_TEST = "0 6 1 1 *"
"""Yearly (1 January, 06:00 UTC): the refresh under test is the start-up catch-up of the
slot that passed since the seeded snapshot; no other slot comes while the tests run."""
WAIT_S = 30.0
"""How long a check waits for the replicas: generous, since two bot processes, Redis and
the suite share two cores in CI; it bounds only a failing test's wait, never a figure."""
_ts = itertools.count(1)


def fresh_ts() -> str:
    """A message ts no fake has handed out (FakeSlack's start at 1700000000)."""
    return f"1800000000.{next(_ts):06d}"


async def until(
    check: Callable[[], Any], what: str, timeout: float = WAIT_S, every: float = 0.02
) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy; return it."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return result
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(every)


def posts(slack: FakeSlack, channel: str, thread_ts: str | None = None) -> list[dict[str, Any]]:
    """Successful chat.postMessage calls' arguments in ``channel`` (top level when
    ``thread_ts`` is None, else in that thread), in order."""
    return [
        {**c.args, "ts": c.response["ts"]}
        for c in slack.calls_to("chat.postMessage", ok=True)
        if c.args.get("channel") == channel and c.args.get("thread_ts") == thread_ts
    ]


def text_of(post: dict[str, Any]) -> str:
    return json.dumps(post.get("blocks"), ensure_ascii=False) + post.get("text", "")


@dataclass
class Cluster:
    """Replicas, their balancer and the fakes they talk to."""

    slack: FakeSlack
    redis: RedisServer
    replicas: list[BotProcess]
    balancer: Balancer
    session: aiohttp.ClientSession
    prices: PriceServer | None = None
    baseline_id: str | None = None
    """The seeded price snapshot (the cluster with prices)."""

    async def send(
        self, body: str, *, to: int | None = None, headers: dict[str, str] | None = None
    ) -> int:
        """POST a signed Slack request through the balancer (pinned to replica ``to``);
        assert Slack's acknowledgement (200) and return the replica that answered."""
        all_headers = {**request_headers(body, SECRET), **(headers or {})}
        if to is not None:
            all_headers[ROUTE_HEADER] = str(to)
        async with self.session.post(
            self.balancer.url + "/slack/events", data=body.encode(), headers=all_headers
        ) as resp:
            text = await resp.text()
            assert resp.status == 200, f"HTTP {resp.status}: {text}"
            return int(resp.headers[SERVED_BY_HEADER])

    async def command(
        self, text: str, channel: str, *, user: str = "U1", to: int | None = None
    ) -> int:
        body = slash_command_body(text, user_id=user, channel_id=channel,
                                  response_url=self.slack.response_url(channel))  # fmt: skip
        return await self.send(body, to=to)

    async def estimate(self, text: str, channel: str, *, to: int) -> str:
        """A slash command on replica ``to`` that posts an estimate; its ts, once the
        thread's context is in the store. The replica saves it just after posting (the
        post's ts is its key): a person's follow-up comes seconds later, a test's at once,
        and a follow-up in a thread with no context is (rightly) ignored."""
        await self.command(text, channel, to=to)
        (post,) = await until(lambda: posts(self.slack, channel), f"an estimate in {channel}")
        ts = str(post["ts"])
        await until(lambda: self.thread_saved(channel, ts), f"the thread context in {channel}")
        return ts

    async def thread_saved(self, channel: str, ts: str) -> bool:
        store = RedisStore(self.redis.url)
        await store.open()
        try:
            return await store.get_thread(ThreadKey("slack", channel, ts)) is not None
        finally:
            await store.close()

    def followup_body(self, text: str, channel: str, thread_ts: str, event_id: str) -> str:
        event = message_event(text, channel=channel, ts=fresh_ts(), thread_ts=thread_ts,
                              user="U2")  # fmt: skip
        event["parent_user_id"] = BOT_USER_ID
        return event_body(event, event_id=event_id)

    async def idle(self) -> None:
        """Until no replica has a reply in flight."""
        for replica in self.replicas:
            if replica.running:
                await until(lambda r=replica: _zero(r.inflight()), f"{replica.name} idle")


async def _zero(value: Any) -> bool:
    return await value == 0


def replica_settings(prices: PriceServer | None) -> dict[str, Any]:
    settings: dict[str, Any] = {"slack": {"host": "127.0.0.1"}, "log": {"level": "INFO"}}
    if prices is None:
        settings["prices"] = {"enabled": False}
    else:
        settings["prices"] = {
            "clouds": list(CLOUDS), "base_url": prices.base_url, "mirror_url": None,
            "timeout_s": 5, "announce_interval_s": 0, "schedule": NEVER_DURING_A_TEST,
        }  # fmt: skip
    return settings


async def start_cluster(
    workdir: Path, slack: FakeSlack, redis: RedisServer, prices: PriceServer | None = None,
    names: Sequence[str] = ("a", "b"),
) -> Cluster:  # fmt: skip
    env = {
        "SLACK_BOT_TOKEN": TOKEN, "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_BASE_URL": slack.base_url, "STORE_URL": redis.url,
    }  # fmt: skip
    replicas = [
        BotProcess(name, workdir, env=env, settings=replica_settings(prices)) for name in names
    ]
    session = aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30))
    balancer: Balancer | None = None
    try:
        for replica in replicas:  # both start at once: they race for the price refresh
            replica.start()
        await asyncio.gather(*(r.wait_ready() for r in replicas))
        balancer = await Balancer([r.url for r in replicas]).start()
    except BaseException:
        await session.close()
        for replica in replicas:
            await replica.aclose()
        raise
    return Cluster(slack, redis, replicas, balancer, session, prices)


async def stop_cluster(cluster: Cluster) -> None:
    await cluster.session.close()
    await cluster.balancer.stop()
    for replica in cluster.replicas:
        await replica.aclose()


async def seed_prices(redis: RedisServer, prices: PriceServer) -> str:
    """What a running deployment would have: a baseline price snapshot taken long ago and
    channels subscribed to h100 changes; then a price moves at the source. Returns the
    baseline's id."""
    settings = PricesConfig(clouds=CLOUDS, base_url=prices.base_url, mirror_url=None,
                            timeout_s=5)  # fmt: skip
    taken = datetime.now(UTC) - timedelta(days=800)
    baseline = await refresh_prices(settings, default_catalog(), None, taken)
    store = RedisStore(redis.url)
    await store.open()
    try:
        await store.save_price_snapshot(baseline.id, taken.timestamp(), None, baseline.to_json())
        await store.mark_snapshot_announced(baseline.id)
        for channel in SUBSCRIBED:
            await store.save_subscription(Subscription(
                "slack", channel, f"slack:{TEAM_ID}", min_change_pct=5.0, cards=("h100-sxm",),
                created_by="UADMIN", created_at=taken.timestamp(),
            ))  # fmt: skip
    finally:
        await store.close()
    prices.edit("lambda", LAMBDA_H100, LAMBDA_H100.replace(",24.0,", ",20.0,"))
    return baseline.id


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster() -> AsyncIterator[Cluster]:
    """Two replicas started together on a store holding a stale price snapshot and two
    subscriptions (so both race to run the missed refresh at start-up)."""
    with tempfile.TemporaryDirectory(prefix="ftcost-replicas-") as tmp, RedisServer() as redis:
        async with FakeSlack() as slack, PriceServer() as prices:
            prices.load(*CLOUDS)
            baseline = await seed_prices(redis, prices)
            started = await start_cluster(Path(tmp), slack, redis, prices)
            started.baseline_id = baseline
            try:
                yield started
            finally:
                await stop_cluster(started)


# -- thread context -------------------------------------------------------------------------
async def test_followup_on_the_other_replica_answers_from_the_thread_context(cluster):
    ts = await cluster.estimate("70b qlora 50M tokens h100", "CFOLLOW", to=0)

    body = cluster.followup_body("what if seq 8k", "CFOLLOW", ts, event_id="EvFollow1")
    served_by = await cluster.send(body, to=1)
    (reply,) = await until(lambda: posts(cluster.slack, "CFOLLOW", ts), "the thread reply")

    assert served_by == 1
    text = text_of(reply)
    assert "Llama 3.1 70B" in text and "QLoRA" in text  # the thread's estimate...
    assert "seq 8,192" in text and "50M tokens" in text  # ...changed only in sequence
    assert "ontext unavailable" not in text


# -- Slack retries ----------------------------------------------------------------------------
async def test_slack_retry_on_the_other_replica_posts_no_second_reply(cluster):
    ts = await cluster.estimate("8b lora 20M tokens", "CRETRY", to=0)
    body = cluster.followup_body("what if full", "CRETRY", ts, event_id="EvRetry1")

    first = await cluster.send(body, to=0)
    retry = await cluster.send(
        body, to=1, headers={"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    )
    await until(lambda: posts(cluster.slack, "CRETRY", ts), "the reply to the original")
    await cluster.idle()

    assert (first, retry) == (0, 1)  # both deliveries were acknowledged, by different replicas
    (reply,) = posts(cluster.slack, "CRETRY", ts)
    assert "Full" in text_of(reply)


# -- the price refresh --------------------------------------------------------------------------
def price_startup_done(replica: BotProcess) -> bool:
    """The replica finished its start-up price work (load, resume, catch-up refresh) and
    its scheduler waits for the next slot."""
    return "next run job=price-refresh" in replica.log_text()


async def test_missed_price_refresh_runs_on_one_replica_and_announces_once(cluster):
    for replica in cluster.replicas:
        await until(lambda r=replica: price_startup_done(r), f"{replica.name}'s price start-up")
    store = RedisStore(cluster.redis.url)
    await store.open()
    try:
        await until(lambda: _announced(store), "the fan-out to finish")
        latest = await store.latest_price_snapshot()
        records = await store.list_announcements(latest.id)
    finally:
        await store.close()
    # The other replica either found the lock taken, found the slot done, or started
    # after the new snapshot was stored (then no slot was missed): it never refreshes.
    refreshed = [await r.metric("ftcost_price_refresh_runs_total", status="refreshed")
                 for r in cluster.replicas]  # fmt: skip

    assert sorted(refreshed) == [0.0, 1.0]
    assert latest.previous_id == cluster.baseline_id  # one new snapshot, after the baseline
    assert sorted((r.channel, r.state.value) for r in records) == [
        (channel, "sent") for channel in SUBSCRIBED
    ]
    for channel in SUBSCRIBED:
        assert len(posts(cluster.slack, channel)) == 1
    logs = "".join(r.log_text() for r in cluster.replicas)
    assert logs.count("price snapshot stored") == 1


async def _announced(store: RedisStore) -> bool:
    latest = await store.latest_price_snapshot()
    return latest is not None and latest.announced


# -- graceful shutdown ----------------------------------------------------------------------------
@pytest_asyncio.fixture(loop_scope="module")
async def fresh_cluster() -> AsyncIterator[Cluster]:
    """Two replicas of their own (own fake Slack and Redis), prices off."""
    with tempfile.TemporaryDirectory(prefix="ftcost-replicas-") as tmp, RedisServer() as redis:
        async with FakeSlack() as slack:
            started = await start_cluster(Path(tmp), slack, redis, names=("c", "d"))
            try:
                yield started
            finally:
                await stop_cluster(started)


async def test_sigterm_finishes_replies_in_flight_exits_0_and_the_other_replica_serves(
    fresh_cluster,
):
    cluster = fresh_cluster
    slack, stopping = cluster.slack, cluster.replicas[1]
    # Slack rate-limits the first posts for 1 s: those replies are still in flight
    # (waiting out Retry-After) when the replica is told to stop.
    slack.rate_limit_next("chat.postMessage", retry_after=1, times=2)
    queries = [f"8b lora {n}M tokens" for n in (101, 102, 103, 104, 105, 106)]
    for query in queries:
        assert await cluster.command(query, "CTERM", to=1) == 1
    await until(lambda: len(slack.calls_to("chat.postMessage", ok=False)) == 2, "two 429s")
    assert await stopping.inflight() > 0

    stopping.signal(signal.SIGTERM)
    status = await stopping.wait_exit(timeout=WAIT_S)
    delivered = [text_of(p) for p in posts(slack, "CTERM")]
    after = [await cluster.command(f"8b lora {n}M tokens", "CAFTER") for n in (201, 202)]

    assert status == 0
    assert sorted(sum(f"`{q}`" in t for t in delivered) for q in queries) == [1] * len(queries)
    assert len(delivered) == len(queries)
    assert after == [0, 0]  # the balancer sends everything to the replica still up
    await until(lambda: len(posts(slack, "CAFTER")) == 2, "the survivor's replies")
    assert "Traceback" not in stopping.log_text()
