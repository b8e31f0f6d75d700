"""A loopback HTTP load balancer for replica tests and the load benchmark (aiohttp).

It stands where a real load balancer would in front of several ``python -m bot``
replicas in Slack HTTP mode, and behaves like one with health checks:

* **round-robin** over the replicas it considers up;
* the request is **forwarded unchanged**: method, path, query, body and every header but
  the hop-by-hop ones (``X-Slack-Signature``, ``X-Slack-Request-Timestamp``,
  ``X-Slack-Retry-Num`` ... arrive as Slack sent them, so the replica verifies the real
  signature);
* **retry on another replica** when the connection is refused, or reset/closed before
  any response arrived (a replica that is stopping or dead). A request that got a
  response, or timed out waiting for one, is never retried (it may have been handled);
* **health checks**: ``GET /healthz`` on every replica every ``health_interval_s``; a
  replica answering anything but 200 (a stopping bot answers 503) or not answering is
  taken out of rotation until it answers 200 again (``health_interval_s=None``: no
  active checks). A refused connection takes it out at once (passive check);
* **pinning**: a request carrying ``X-Balancer-Route: <index>`` goes to that replica
  only (no retry elsewhere; 502 if it is unreachable). The header is removed before
  forwarding. Tests use it to send a Slack retry to the replica that did not get the
  original;
* every response carries ``X-Served-By: <index>`` (the replica that answered).

In a test::

    async with Balancer([url_a, url_b]) as lb:
        lb.url                       # http://127.0.0.1:<port>
        lb.records[-1].backend       # which replica answered the last request

From another process (the load benchmark)::

    python -m tests.fakes.balancer --port 8080 http://127.0.0.1:3001 http://127.0.0.1:3002

prints ``ready <port>`` on stdout once listening; ``GET /_balancer/stats`` answers JSON
(requests per replica, retries, failures, upstream time percentiles). Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import signal
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

ROUTE_HEADER = "X-Balancer-Route"
"""Request header: the index of the replica this request must go to."""
SERVED_BY_HEADER = "X-Served-By"
"""Response header: the index of the replica that answered."""
STATS_PATH = "/_balancer/stats"

# RFC 9110 section 7.6.1 connection-specific fields, plus the framing headers aiohttp
# recomputes for the body it sends (Content-Length, Transfer-Encoding) and Host (the
# upstream's). Everything else is forwarded as received.
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
    "upgrade", "proxy-authenticate", "proxy-authorization", "host", "content-length",
})  # fmt: skip


@dataclass
class Backend:
    """One replica: its base URL (``http://127.0.0.1:3001``) and what the balancer saw."""

    url: str
    up: bool = True
    served: int = 0
    """Requests it answered (any status)."""
    refused: int = 0
    """Connection attempts refused, reset or closed before a response."""


@dataclass(frozen=True)
class Routed:
    """One request through the balancer."""

    path: str
    backend: int | None
    """The replica that answered; None when none could (the client got 502/504)."""
    status: int
    attempts: int
    """Replicas tried (more than 1: retried after refused/reset connections)."""
    upstream_s: float
    """Seconds from the first forwarding attempt to the upstream's response."""
    retry_reasons: tuple[str, ...] = ()
    """Why earlier attempts failed: ``refused`` or ``reset``."""


@dataclass
class Stats:
    requests: int = 0
    retried: int = 0
    failed: int = 0
    """Requests no replica answered (502 or 504 to the client)."""
    per_backend: list[int] = field(default_factory=list)
    upstream_p50_ms: float = 0.0
    upstream_p99_ms: float = 0.0


class Balancer:
    """``async with Balancer(["http://127.0.0.1:3001", ...]) as lb: ... lb.url``."""

    def __init__(
        self,
        backends: Sequence[str],
        *,
        health_path: str = "/healthz",
        health_interval_s: float | None = 0.25,
        connect_timeout_s: float = 2.0,
        request_timeout_s: float = 30.0,
        keep_records: bool = True,
    ) -> None:
        if not backends:
            raise ValueError("a balancer needs at least one backend URL")
        self.backends = [Backend(url.rstrip("/")) for url in backends]
        self.health_path = health_path
        self.health_interval_s = health_interval_s
        self.connect_timeout_s = connect_timeout_s
        self.request_timeout_s = request_timeout_s
        self.keep_records = keep_records
        self.records: list[Routed] = []
        self.upstream_times: list[float] = []
        self.retried = 0
        self.failed = 0
        self._rr = itertools.count()
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._health_task: asyncio.Task[None] | None = None
        self.port: int | None = None

    # -- lifecycle ------------------------------------------------------------------------
    @property
    def url(self) -> str:
        if self.port is None:
            raise RuntimeError("the balancer is not started")
        return f"http://127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> Balancer:
        connector = aiohttp.TCPConnector(limit=0, enable_cleanup_closed=True)
        self._session = aiohttp.ClientSession(
            connector=connector,
            auto_decompress=False,  # forward bodies as the replica sent them
            timeout=aiohttp.ClientTimeout(
                total=self.request_timeout_s, connect=self.connect_timeout_s
            ),
        )
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_get(STATS_PATH, self._handle_stats)
        app.router.add_route("*", "/{tail:.*}", self._handle)
        runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        if self.health_interval_s is not None:
            self._health_task = asyncio.get_running_loop().create_task(self._health_loop())
        return self

    async def stop(self) -> None:
        if self._health_task is not None:
            self._health_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._health_task
            self._health_task = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        if self._session is not None:
            await self._session.close()
            self._session = None

    async def __aenter__(self) -> Balancer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- health ---------------------------------------------------------------------------
    async def check(self, index: int) -> bool:
        """Probe one replica's health endpoint now; update and return its state."""
        assert self._session is not None
        backend = self.backends[index]
        try:
            async with self._session.get(
                backend.url + self.health_path,
                timeout=aiohttp.ClientTimeout(total=max(1.0, (self.health_interval_s or 0) * 4)),
            ) as resp:
                await resp.read()
                backend.up = resp.status == 200
        except (aiohttp.ClientError, OSError, TimeoutError):
            backend.up = False
        return backend.up

    async def _health_loop(self) -> None:
        assert self.health_interval_s is not None
        while True:
            await asyncio.gather(*(self.check(i) for i in range(len(self.backends))))
            await asyncio.sleep(self.health_interval_s)

    # -- routing --------------------------------------------------------------------------
    def _order(self) -> list[int]:
        """Replicas to try, round-robin: those up first, then the others (health checks
        may lag behind a replica that came back)."""
        n = len(self.backends)
        start = next(self._rr) % n
        ring = [(start + k) % n for k in range(n)]
        return [i for i in ring if self.backends[i].up] + [
            i for i in ring if not self.backends[i].up
        ]

    @staticmethod
    def _forwarded_headers(request: web.Request) -> dict[str, str]:
        return {
            k: v for k, v in request.headers.items()
            if k.lower() not in HOP_BY_HOP and k.lower() != ROUTE_HEADER.lower()
        }  # fmt: skip

    def _pinned(self, request: web.Request) -> int | None:
        raw = request.headers.get(ROUTE_HEADER)
        if raw is None:
            return None
        try:
            index = int(raw)
        except ValueError:
            raise web.HTTPBadRequest(text=f"{ROUTE_HEADER} must be a replica index") from None
        if not 0 <= index < len(self.backends):
            raise web.HTTPBadRequest(
                text=f"{ROUTE_HEADER} {index}: there are {len(self.backends)} replicas"
            )
        return index

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        pinned = self._pinned(request)
        order = [pinned] if pinned is not None else self._order()
        body = await request.read()
        headers = self._forwarded_headers(request)
        reasons: list[str] = []
        started = time.perf_counter()
        for index in order:
            backend = self.backends[index]
            try:
                async with self._session.request(
                    request.method, backend.url + request.path_qs, data=body, headers=headers,
                    allow_redirects=False,
                ) as upstream:  # fmt: skip
                    payload = await upstream.read()
                    status = upstream.status
                    out_headers = {
                        k: v for k, v in upstream.headers.items() if k.lower() not in HOP_BY_HOP
                    }
            except aiohttp.ClientConnectorError:
                reasons.append("refused")
            except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                # Reset or closed before the response: the replica is going away.
                reasons.append("reset")
            except (TimeoutError, aiohttp.ClientError):
                # No answer in time, or a broken response: it may have been handled, so
                # it is not sent to another replica.
                self._record(request.path, None, 504, len(reasons) + 1, started, reasons)
                return web.Response(status=504, text="the replica did not answer in time")
            else:
                backend.served += 1
                self._record(request.path, index, status, len(reasons) + 1, started, reasons)
                out_headers[SERVED_BY_HEADER] = str(index)
                return web.Response(status=status, body=payload, headers=out_headers)
            backend.up = False
            backend.refused += 1
        self._record(request.path, None, 502, len(reasons), started, reasons)
        return web.Response(status=502, text="no replica answered")

    def _record(
        self, path: str, backend: int | None, status: int, attempts: int, started: float,
        reasons: list[str],
    ) -> None:  # fmt: skip
        upstream_s = time.perf_counter() - started
        if reasons:
            self.retried += 1
        if backend is None:
            self.failed += 1
        else:
            self.upstream_times.append(upstream_s)
        if self.keep_records:
            self.records.append(
                Routed(path, backend, status, attempts, upstream_s, tuple(reasons))
            )

    # -- stats ----------------------------------------------------------------------------
    def stats(self) -> Stats:
        times = sorted(self.upstream_times)

        def pct(q: float) -> float:
            if not times:
                return 0.0
            return times[min(len(times) - 1, round(q * (len(times) - 1)))] * 1000

        return Stats(
            requests=sum(b.served for b in self.backends) + self.failed,
            retried=self.retried,
            failed=self.failed,
            per_backend=[b.served for b in self.backends],
            upstream_p50_ms=pct(0.50),
            upstream_p99_ms=pct(0.99),
        )

    async def _handle_stats(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = asdict(self.stats())
        body["up"] = [b.up for b in self.backends]
        return web.json_response(body)


# -- as a process (the load benchmark) --------------------------------------------------------
async def _serve(port: int, backends: list[str]) -> None:
    balancer = Balancer(backends, keep_records=False)
    await balancer.start(port)
    print(f"ready {balancer.port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await balancer.stop()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="loopback round-robin HTTP balancer")
    parser.add_argument("--port", type=int, default=0, help="listen port (default: free)")
    parser.add_argument("backends", nargs="+", help="replica base URLs (http://127.0.0.1:N)")
    args = parser.parse_args(argv)
    if not all(b.startswith("http://127.0.0.1:") for b in args.backends):
        parser.error("backends must be loopback URLs (http://127.0.0.1:PORT)")
    asyncio.run(_serve(args.port, args.backends))
    return 0


if __name__ == "__main__":
    sys.exit(main())
