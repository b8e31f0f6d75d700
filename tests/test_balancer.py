"""The loopback load balancer used by the replica tests and the load benchmark."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from tests.fakes.balancer import ROUTE_HEADER, SERVED_BY_HEADER, Balancer
from tests.redis_server import free_port


class Upstream:
    """A replica stand-in that records what it received."""

    def __init__(self, name: str, health: int = 200) -> None:
        self.name = name
        self.health = health
        self.hang_up = False
        """Close the connection without answering (a replica going away mid-request)."""
        self.received: list[tuple[str, str, dict[str, str], bytes]] = []
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_route("*", "/{tail:.*}", self._any)
        self.server = TestServer(app, host="127.0.0.1")

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(status=self.health)

    async def _any(self, request: web.Request) -> web.Response:
        if self.hang_up:
            assert request.transport is not None
            request.transport.close()
            raise ConnectionResetError("hung up")
        self.received.append(
            (request.method, request.path_qs, dict(request.headers), await request.read())
        )
        return web.Response(text=self.name, headers={"X-Upstream": self.name})

    @property
    def url(self) -> str:
        return str(self.server.make_url("")).rstrip("/")


@pytest.fixture
async def upstreams() -> AsyncIterator[list[Upstream]]:
    ups = [Upstream("a"), Upstream("b")]
    for up in ups:
        await up.server.start_server()
    yield ups
    for up in ups:
        await up.server.close()


async def post(lb: Balancer, headers: dict[str, str] | None = None,
               body: bytes = b"x") -> tuple[int, str, dict[str, str]]:  # fmt: skip
    async with (
        aiohttp.ClientSession() as session,
        session.post(lb.url + "/slack/events?q=1", data=body, headers=headers or {}) as resp,
    ):
        return resp.status, await resp.text(), dict(resp.headers)


async def test_requests_alternate_between_replicas(upstreams):
    async with Balancer([u.url for u in upstreams]) as lb:
        answers = [(await post(lb))[1] for _ in range(4)]

    assert sorted(answers) == ["a", "a", "b", "b"]
    assert answers[0] != answers[1]


async def test_body_and_slack_headers_arrive_unchanged(upstreams):
    headers = {"X-Slack-Signature": "v0=abc", "X-Slack-Request-Timestamp": "1700000000",
               "X-Slack-Retry-Num": "1", "Content-Type": "application/json"}  # fmt: skip
    async with Balancer([upstreams[0].url]) as lb:
        status, _, out = await post(lb, headers, body=b'{"event_id": "Ev1"}')

    ((method, path, got, body),) = upstreams[0].received
    assert (status, method, path, body) == (200, "POST", "/slack/events?q=1",
                                            b'{"event_id": "Ev1"}')  # fmt: skip
    assert {k: got[k] for k in headers} == headers
    assert out[SERVED_BY_HEADER] == "0" and out["X-Upstream"] == "a"


async def test_pinned_request_goes_to_that_replica_without_the_routing_header(upstreams):
    async with Balancer([u.url for u in upstreams]) as lb:
        served = [(await post(lb, {ROUTE_HEADER: "1"}))[2][SERVED_BY_HEADER] for _ in range(3)]

    assert served == ["1", "1", "1"]
    assert all(ROUTE_HEADER not in h for _, _, h, _ in upstreams[1].received)
    assert upstreams[0].received == []


async def test_refused_connection_is_retried_on_the_other_replica(upstreams):
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    async with Balancer([dead, upstreams[0].url], health_interval_s=None) as lb:
        results = [await post(lb) for _ in range(4)]
        stats = lb.stats()

    assert [r[0] for r in results] == [200] * 4
    assert {r[2][SERVED_BY_HEADER] for r in results} == {"1"}
    assert stats.retried >= 1 and stats.failed == 0
    assert lb.backends[0].up is False


async def test_connection_closed_before_a_response_is_retried_on_the_other_replica(upstreams):
    upstreams[0].hang_up = True
    async with Balancer([u.url for u in upstreams], health_interval_s=None) as lb:
        results = [await post(lb) for _ in range(2)]

    assert [(r[0], r[1]) for r in results] == [(200, "b"), (200, "b")]
    assert any(r.retry_reasons == ("reset",) for r in lb.records)


async def test_pinned_to_an_unreachable_replica_answers_502(upstreams):
    dead = f"http://127.0.0.1:{free_port()}"
    async with Balancer([dead, upstreams[0].url], health_interval_s=None) as lb:
        status, _, _ = await post(lb, {ROUTE_HEADER: "0"})

    assert status == 502
    assert upstreams[0].received == []


async def test_replica_failing_its_health_check_is_taken_out_of_rotation(upstreams):
    upstreams[1].health = 503  # e.g. a bot that is stopping
    async with Balancer([u.url for u in upstreams]) as lb:
        await lb.check(1)
        answers = {(await post(lb))[1] for _ in range(4)}

    assert answers == {"a"}
