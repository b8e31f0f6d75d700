"""The per-user rate limit: counted in the store (shared by replicas), a fixed one-minute
window, a local fallback while the store is unreachable, and the polite refusal."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from bot.metrics import sample
from bot.ratelimit import RateLimiter, Verdict, limited_message
from bot.service import Context, ReplyKind, Service
from bot.store import StoreUnavailable
from bot.store_sqlite import SQLiteStore


class Clock:
    def __init__(self, now: float = 1_000_020.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class UnreachableStore(SQLiteStore):
    """A store whose backend is down: every counter call says so, as RedisStore does."""

    async def hit(self, key: str, window_s: float) -> int:
        raise StoreUnavailable("the store is down")


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def store(clock: Clock) -> AsyncIterator[SQLiteStore]:
    async with SQLiteStore(":memory:", clock=clock) as s:
        yield s


async def test_allows_the_limit_then_refuses_the_next_command(store):
    limiter = RateLimiter(store, per_minute=3, clock=Clock())
    verdicts = [await limiter.check("slack", "U1") for _ in range(4)]
    assert [v.allowed for v in verdicts] == [True, True, True, False]
    assert verdicts[-1].count == 4


async def test_refusal_says_when_to_retry_within_the_window(store, clock):
    clock.now = 1_000_020.0
    limiter = RateLimiter(store, per_minute=1, clock=clock)
    await limiter.check("slack", "U1")
    refused = await limiter.check("slack", "U1")
    assert not refused.allowed
    assert refused.retry_after_s == pytest.approx(60 - (1_000_020.0 % 60))


async def test_next_window_admits_again(store, clock):
    limiter = RateLimiter(store, per_minute=1, clock=clock)
    await limiter.check("slack", "U1")
    assert not (await limiter.check("slack", "U1")).allowed
    clock.now += 60
    assert (await limiter.check("slack", "U1")).allowed


async def test_users_and_platforms_have_separate_budgets(store):
    limiter = RateLimiter(store, per_minute=1, clock=Clock())
    assert (await limiter.check("slack", "U1")).allowed
    assert (await limiter.check("slack", "U2")).allowed
    assert (await limiter.check("discord", "U1")).allowed


async def test_two_replicas_on_one_store_share_one_budget(store, clock):
    a = RateLimiter(store, per_minute=2, clock=clock)
    b = RateLimiter(store, per_minute=2, clock=clock)
    assert (await a.check("slack", "U1")).allowed
    assert (await b.check("slack", "U1")).allowed
    assert not (await a.check("slack", "U1")).allowed


async def test_zero_turns_the_limit_off(store):
    limiter = RateLimiter(store, per_minute=0, clock=Clock())
    assert all([(await limiter.check("slack", "U1")).allowed for _ in range(50)])


async def test_events_without_a_user_are_not_limited(store):
    limiter = RateLimiter(store, per_minute=1, clock=Clock())
    assert all([(await limiter.check("slack", None)).allowed for _ in range(3)])


async def test_unreachable_store_falls_back_to_counting_in_process():
    async with UnreachableStore(":memory:") as down:
        before = sample("ftcost_store_unavailable_total", operation="rate_limit")
        limiter = RateLimiter(down, per_minute=2, clock=Clock())
        verdicts = [(await limiter.check("slack", "U1")).allowed for _ in range(3)]
    assert verdicts == [True, True, False]
    assert sample("ftcost_store_unavailable_total", operation="rate_limit") == before + 3


def test_refusal_message_is_polite_and_says_how_long_to_wait():
    text = limited_message(Verdict(False, 21, 12.3), 20)
    assert "20 requests in the last minute" in text
    assert "13 s" in text
    assert "send it again" in text


async def test_service_answers_a_limited_user_privately(store):
    limiter = RateLimiter(store, per_minute=1, clock=Clock())
    service = Service(store, limiter=limiter)
    ctx = Context("slack", channel="C1", user="U1")
    first = await service.handle("8b qlora", ctx)
    second = await service.handle("8b qlora", ctx)
    assert first is not None and first.kind is ReplyKind.ESTIMATE
    assert second is not None and second.kind is ReplyKind.LIMITED
    assert not second.is_public
    assert "limit" in second.text


async def test_only_the_first_refusal_of_a_window_is_told(store):
    limiter = RateLimiter(store, per_minute=1, clock=Clock())
    service = Service(store, limiter=limiter)
    ctx = Context("slack", channel="C1", user="U1")
    replies = [await service.handle("help", ctx) for _ in range(4)]
    refused = [r for r in replies if r is not None and r.kind is ReplyKind.LIMITED]
    assert [r.quiet for r in refused] == [False, True, True]


async def test_a_new_window_tells_its_first_refusal_again(store, clock):
    limiter = RateLimiter(store, per_minute=1, clock=clock)
    service = Service(store, limiter=limiter)
    ctx = Context("slack", channel="C1", user="U1")
    for _ in range(3):
        await service.handle("help", ctx)
    clock.now += 60
    await service.handle("help", ctx)
    again = await service.handle("help", ctx)
    assert again is not None and again.kind is ReplyKind.LIMITED and not again.quiet


async def test_service_without_a_limiter_never_refuses(store):
    service = Service(store)
    ctx = Context("slack", channel="C1", user="U1")
    for _ in range(25):
        reply = await service.handle("help", ctx)
        assert reply is not None and reply.kind is ReplyKind.HELP
