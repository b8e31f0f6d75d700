"""The bot process: the store, the shared service, the platform runners, the HTTP server.

A platform plugs in through :data:`PLATFORMS`: a name, a test of the configuration
("are its credentials set?") and a factory building a :class:`PlatformRunner`.
Factories import their adapter lazily, so a Slack-only deployment never imports
Discord code and vice versa.

HTTP: when a runner has routes (Slack in HTTP mode) an aiohttp server listens on
``slack.host``:``port`` with those routes, plus ``GET /healthz`` and ``GET /metrics``
unless ``health_port`` is another port. ``health_port`` adds a server with just those
two on ``health_host`` (127.0.0.1 unless set; the image sets 0.0.0.0), for Socket Mode /
Discord-only deployments or to keep them off Slack's public listener; when it equals
``port`` the main server answers them.

Shutdown (:meth:`Runtime.stop`) is bounded: at most :func:`shutdown_bound_s` seconds
(``shutdown_timeout_s`` + :data:`SHUTDOWN_CLOSE_S` + :data:`SHUTDOWN_FINAL_S`) whatever a
handler, a platform or the store does; it ends with ``ftcost-bot stopped shutdown_s=...``.
SIGTERM / SIGINT are heard from the moment :meth:`Runtime.run_until_stopped` begins: one
that arrives while the platforms are still starting cancels the start, closes what was
opened and raises :class:`StartInterrupted` (``ftcost-bot`` exits 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from bot.announce import Poster
from bot.clock import Clock, SystemClock
from bot.config import Config
from bot.cron import CronSchedule
from bot.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from bot.metrics import render as render_metrics
from bot.platform_api import PlatformRunner, PlatformStartError
from bot.price_store import PRICE_ANNOUNCE_LOCK, PRICE_REFRESH_LOCK
from bot.prices import Fetch, PriceBook, PriceJob
from bot.ratelimit import RateLimiter
from bot.scheduler import Scheduler
from bot.service import Service
from bot.store import Store
from bot.store_factory import open_store_from
from catalog.loader import default_catalog
from catalog.price_sources import refresh_prices

log = logging.getLogger("ftcost.bot")

SHUTDOWN_CLOSE_S = 3.0
"""After the drain (``shutdown_timeout_s``), how long the platforms may still take to close
their connections (Slack's HTTP session, Discord's gateway) before they are cancelled."""
SHUTDOWN_FINAL_S = 2.0
"""Then how long the purge task, the health-only listener and the store together may take
to close."""


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class StartInterrupted(PlatformStartError):
    """SIGTERM or SIGINT arrived before every platform had started: the start was
    cancelled and what it had opened closed (``ftcost-bot`` prints this and exits 1)."""

    def __init__(self, signum: int | None) -> None:
        self.signum = signum
        name = signal.Signals(signum).name if signum is not None else "a stop request"
        super().__init__(
            f"stopped by {name} during start-up, before every platform had started; "
            "nothing was left running. Start it again when ready (a start that hangs is "
            "named in the log lines above)"
        )


def shutdown_bound_s(config: Config) -> float:
    """The longest :meth:`Runtime.stop` takes: ``shutdown_timeout_s`` (20 s by default) +
    :data:`SHUTDOWN_CLOSE_S` + :data:`SHUTDOWN_FINAL_S`; 25 s by default, inside Compose's
    ``stop_grace_period: 30s`` and Kubernetes' 30 s grace period."""
    return config.shutdown_timeout_s + SHUTDOWN_CLOSE_S + SHUTDOWN_FINAL_S


async def _bounded(what: str, step: Awaitable[object], deadline: float) -> None:
    """Await ``step`` until ``deadline`` (event-loop time); past it, cancel it and go on
    without waiting for it to unwind. A step that fails is logged: shutdown goes on."""
    task = asyncio.ensure_future(step)
    loop = asyncio.get_running_loop()
    done, _ = await asyncio.wait({task}, timeout=max(0.0, deadline - loop.time()))
    if not done:
        task.cancel()
        # Retrieve its outcome whenever it ends, so asyncio logs nothing about it.
        task.add_done_callback(lambda t: t.cancelled() or t.exception())
        log.warning("shutdown: %s did not finish in time; cancelled", what)
    elif not task.cancelled() and task.exception() is not None:
        log.error("shutdown: %s failed", what, exc_info=task.exception())


@dataclass(frozen=True)
class PlatformSpec:
    name: str
    enabled: Callable[[Config], bool]
    build: Callable[[Config, Service], PlatformRunner]


def _build_slack(config: Config, service: Service) -> PlatformRunner:
    from adapters.slack.runner import SlackRunner

    return SlackRunner(config, service)


def _build_discord(config: Config, service: Service) -> PlatformRunner:
    from adapters.discord.runner import DiscordRunner

    return DiscordRunner(config, service)


PLATFORMS: list[PlatformSpec] = [
    PlatformSpec("slack", lambda c: c.slack_enabled, _build_slack),
    PlatformSpec("discord", lambda c: c.discord_enabled, _build_discord),
]


class Runtime:
    """Start and stop everything configured. ``async with Runtime(config) as rt:``."""

    def __init__(
        self,
        config: Config,
        *,
        store: Store | None = None,
        platforms: list[PlatformSpec] | None = None,
        runners: list[PlatformRunner] | None = None,
        clock: Clock | None = None,
        price_fetch: Fetch | None = None,
    ) -> None:
        self.config = config
        self.store = store if store is not None else open_store_from(
            config.store.path, thread_ttl_s=config.store.thread_ttl_days * 86400
        )
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.book = PriceBook(default_catalog(), config.prices)
        self.service = Service(
            self.store, workers=config.estimate_threads, book=self.book, clock=self.clock,
            limiter=RateLimiter(self.store, config.rate_limit_per_minute), hub=config.hub,
        )  # fmt: skip
        self.price_job = PriceJob(
            self.store, self.book, config.prices, self.clock,
            fetch=price_fetch if price_fetch is not None else refresh_prices,
            thread_ttl_s=config.store.thread_ttl_days * 86400,
        )  # fmt: skip
        self.price_scheduler: Scheduler | None = None
        self._price_tasks: list[asyncio.Task[Any]] = []
        self.price_startup: asyncio.Task[None] | None = None
        """Start-up load / resume / catch-up refresh (awaitable by tests)."""
        self._platforms = PLATFORMS if platforms is None else platforms
        self.runners: list[PlatformRunner] = list(runners or [])
        self._sites: list[web.AppRunner] = []
        self._health_only = False
        """The last of ``_sites`` serves only /healthz and /metrics (its own port)."""
        self._purge_task: asyncio.Task[None] | None = None
        self.port: int | None = None
        """The bound port of the main HTTP server (useful with ``port: 0``)."""
        self.health_port: int | None = None
        self.ops_address: tuple[str, int] | None = None
        """Where ``/healthz`` and ``/metrics`` are served (host, port); None: nowhere."""
        self.stopping = False
        """Set by :meth:`stop`: ``/healthz`` answers 503 so a load balancer drains us."""

    def runner(self, name: str) -> PlatformRunner:
        return next(r for r in self.runners if r.name == name)

    async def __aenter__(self) -> Runtime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def start(self) -> None:
        await self.store.open()
        try:
            if not self.runners:
                for spec in self._platforms:
                    if spec.enabled(self.config):
                        self.runners.append(spec.build(self.config, self.service))
            if not self.runners:
                raise PlatformStartError(
                    "no platform to run: the configured credentials match no platform "
                    f"this build supports ({', '.join(p.name for p in self._platforms)})"
                )
            await self._start_http()
            for runner in self.runners:
                await runner.start()
        except BaseException:
            await self.stop()
            raise
        self._purge_task = asyncio.get_running_loop().create_task(self._purge_loop())
        self._start_prices()
        ops = self.ops_address
        where = "off" if ops is None else f"{ops[0]}:{ops[1]}"
        log.info("ftcost-bot started platforms=%s port=%s health=%s",
                 ",".join(r.name for r in self.runners), self.port, where)

    async def stop(self) -> None:
        """Graceful shutdown (SIGTERM), in :func:`shutdown_bound_s` at most. Until
        ``drained`` (``shutdown_timeout_s`` from now): stop taking new work (close the
        HTTP listeners, waiting for requests being handled), stop the price jobs and give
        up their store locks, then stop every platform at once, each given the drain time
        left for its replies in flight (Slack: close the socket, drain, close its HTTP
        session; Discord: refuse new interactions, drain, close the gateway). The
        platforms may run :data:`SHUTDOWN_CLOSE_S` past ``drained``; then the health-only
        listener and the store get :data:`SHUTDOWN_FINAL_S` together. A step still
        running at its deadline is cancelled and shutdown goes on."""
        self.stopping = True
        began = time.monotonic()
        try:
            await self._stop_steps()
        finally:
            log.info("ftcost-bot stopped shutdown_s=%.2f", time.monotonic() - began)

    async def _stop_steps(self) -> None:
        """The steps of :meth:`stop`, in order, each bounded by its deadline."""
        loop = asyncio.get_running_loop()
        drained = loop.time() + self.config.shutdown_timeout_s
        closed = drained + SHUTDOWN_CLOSE_S
        # A health-only listener stays up through the drain, answering 503 "stopping";
        # the others close at once (a shared port's /healthz then refuses connections).
        health_only = self._sites[-1:] if self._health_only else []
        for site in self._sites:
            if site not in health_only:
                # Closes the listening socket at once, then waits (up to the runner's
                # shutdown_timeout, and ``drained``) for the requests being handled.
                await _bounded("closing the HTTP listener", site.cleanup(), drained)
        self._sites = health_only
        # The price jobs post through the platforms' clients: stop them first (an
        # interrupted fan-out is settled by the next run), then drain the replies.
        await _bounded("stopping the price jobs", self._stop_prices(), drained)
        await _bounded("releasing the price locks", self._release_locks(), drained)
        left = max(0.0, drained - loop.time())
        await asyncio.gather(*(
            _bounded(f"stopping {runner.name}", runner.stop(left), closed)
            for runner in self.runners
        ))  # fmt: skip
        final = loop.time() + SHUTDOWN_FINAL_S
        purge, self._purge_task = self._purge_task, None
        if purge is not None:
            purge.cancel()  # let it unwind before the store closes under it
            await asyncio.wait({purge}, timeout=max(0.0, final - loop.time()))
        for site in self._sites:
            await _bounded("closing the health listener", site.cleanup(), final)
        self._sites.clear()
        await _bounded("closing the store", self.store.close(), final)
        self.service.close()

    async def _release_locks(self) -> None:
        """Give up the price locks this replica may hold (an interrupted refresh or fan-out
        releases them itself; this covers the rest), so another replica need not wait for
        their expiry."""
        for name in (PRICE_REFRESH_LOCK, PRICE_ANNOUNCE_LOCK):
            try:
                if await self.store.release_lock(name, self.price_job.owner):
                    log.info("released lock %s", name)
            except Exception as exc:  # the store is gone or closed: the lock expires
                log.warning("cannot release lock %s: %s", name, type(exc).__name__)

    # -- HTTP -----------------------------------------------------------------------------
    async def _serve(self, app: web.Application, host: str, port: int) -> int:
        site_runner = web.AppRunner(
            app, access_log=None, handle_signals=False,
            shutdown_timeout=self.config.shutdown_timeout_s,
        )  # fmt: skip
        await site_runner.setup()
        site = web.TCPSite(site_runner, host, port, backlog=1024)
        try:
            await site.start()
        except OSError as exc:
            await site_runner.cleanup()
            raise PlatformStartError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
        self._sites.append(site_runner)
        return site_runner.addresses[0][1]

    async def _start_http(self) -> None:
        routes = [route for runner in self.runners for route in runner.routes()]
        health_port = self.config.health_port
        if routes:
            # With a health port of its own, the public Slack listener serves Slack only:
            # /healthz and /metrics stay off the internet-facing port.
            separate = health_port is not None and health_port != self.config.port
            app = web.Application()
            app.add_routes([*routes, *([] if separate else self._ops_routes())])
            self.port = await self._serve(app, self.config.slack.host, self.config.port)
            if not separate:
                self.ops_address = (self.config.slack.host, self.port)
            if health_port is not None and health_port == self.config.port:
                self.health_port = self.port
        if health_port is not None and self.health_port is None:
            # /healthz and /metrics only: on 127.0.0.1 unless health_host says otherwise
            # (the image sets 0.0.0.0, for Docker's port mapping to reach it).
            app = web.Application()
            app.add_routes(self._ops_routes())
            self.health_port = await self._serve(app, self.config.health_host, health_port)
            self.ops_address = (self.config.health_host, self.health_port)
            self._health_only = True

    def _ops_routes(self) -> list[web.RouteDef]:
        return [web.get("/healthz", self.healthz), web.get("/metrics", self.metrics)]

    async def metrics(self, request: web.Request) -> web.Response:
        """Prometheus' text format (see :mod:`bot.metrics`)."""
        body = render_metrics()
        return web.Response(body=body, headers={"Content-Type": METRICS_CONTENT_TYPE})

    async def health(self) -> tuple[bool, dict[str, Any]]:
        store_ok = await self.store.ping()
        platforms = {}
        for runner in self.runners:
            try:
                platforms[runner.name] = await runner.health()
            except Exception as exc:
                platforms[runner.name] = {"ok": False, "error": type(exc).__name__}
        # An unreachable store degrades the bot (follow-ups answer fresh, no
        # de-duplication) but estimates still work: stay in the load balancer's pool
        # rather than have every replica pulled (or restarted) at once.
        ok = all(p.get("ok") for p in platforms.values()) and not self.stopping
        if self.stopping:
            status = "stopping"
        elif not ok:
            status = "unhealthy"
        else:
            status = "ok" if store_ok else "degraded"
        return ok, {"status": status, "store": store_ok, "platforms": platforms}

    async def healthz(self, request: web.Request) -> web.Response:
        ok, body = await self.health()
        return web.json_response(body, status=200 if ok else 503)

    # -- prices ---------------------------------------------------------------------------
    def posters(self) -> dict[str, Poster]:
        """Announcement posters from the started runners' clients."""
        posters: dict[str, Poster] = {}
        for runner in self.runners:
            if runner.name == "slack":
                bot = getattr(runner, "bot", None)
                client = getattr(bot, "client", None)
                if client is not None:
                    from adapters.slack.announce import SlackPoster

                    posters["slack"] = SlackPoster(client, self.config.slack.command)
            elif runner.name == "discord":
                client = getattr(runner, "client", None)
                if client is not None:
                    from adapters.discord.announce import DiscordPoster

                    posters["discord"] = DiscordPoster(client)
        return posters

    def _start_prices(self) -> None:
        self.price_job.posters = self.posters()
        loop = asyncio.get_running_loop()
        self.price_startup = loop.create_task(self._price_startup(), name="prices:startup")
        self._price_tasks = [
            self.price_startup,
            loop.create_task(self.price_job.follow(), name="prices:follow"),
        ]

    async def _price_startup(self) -> None:
        outcome = None
        try:
            outcome = await self.price_job.startup()
        except Exception:
            log.exception("price start-up (load, resume, catch-up refresh) failed")
        if self.config.prices.enabled:
            self.price_scheduler = Scheduler(
                CronSchedule.parse(self.config.prices.schedule), self.price_job.run,
                self.clock, name="price-refresh",
            )  # fmt: skip
            # A failed catch-up refresh is retried with back-off, not left to the next slot.
            retry = outcome.slot if outcome is not None and outcome.failed else None
            self.price_scheduler.start(retry=retry)

    async def _stop_prices(self) -> None:
        tasks, self._price_tasks = self._price_tasks, []
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.price_scheduler is not None:
            await self.price_scheduler.stop()
            self.price_scheduler = None

    # -- housekeeping ---------------------------------------------------------------------
    async def _purge_loop(self) -> None:
        interval = self.config.store.purge_interval_minutes * 60
        thread_ttl = self.config.store.thread_ttl_days * 86400
        while True:
            try:
                removed = await self.store.purge_expired(thread_ttl)
                if removed:
                    log.info("store purge removed=%d", removed)
            except Exception:
                log.exception("store purge failed")
            await asyncio.sleep(interval)

    # -- running until a signal -----------------------------------------------------------
    async def run_until_stopped(self, stop: asyncio.Event | None = None) -> None:
        """Start, run until SIGTERM / SIGINT (or ``stop`` is set), then :meth:`stop`. The
        signals are heard from the first moment: one during the start cancels it, closes
        what it opened and raises :class:`StartInterrupted`."""
        stop = stop or asyncio.Event()
        received: list[int] = []
        loop = asyncio.get_running_loop()

        def on_signal(signum: int) -> None:
            received.append(signum)
            stop.set()

        installed = []
        for sig in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, on_signal, sig)
                installed.append(sig)
        try:
            await self._start_unless_stopped(stop, received)
            try:
                await stop.wait()
                log.info("ftcost-bot stopping%s", _signal_field(received))
            finally:
                await self.stop()
        finally:
            for sig in installed:
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)

    async def _start_unless_stopped(self, stop: asyncio.Event, received: list[int]) -> None:
        """:meth:`start`, unless ``stop`` is set first: then the start is cancelled (its
        own clean-up stops what it opened, in :func:`shutdown_bound_s` at most) and
        :class:`StartInterrupted` raised."""
        starting = asyncio.ensure_future(self.start())
        stopped = asyncio.ensure_future(stop.wait())
        interrupted = False
        try:
            await asyncio.wait({starting, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not starting.done():
                interrupted = True
                log.info("ftcost-bot stopping during start-up%s", _signal_field(received))
                await self._cancel_start(starting)
        if interrupted:
            raise StartInterrupted(received[0] if received else None)
        starting.result()  # a failed start raises its own error

    async def _cancel_start(self, starting: asyncio.Future[None]) -> None:
        """Cancel a start in progress and wait, :func:`shutdown_bound_s` at most, for its
        clean-up (:meth:`start` stops what it opened when it is cancelled)."""
        bound = shutdown_bound_s(self.config)
        starting.cancel()
        await asyncio.wait({starting}, timeout=bound)
        if not starting.done():
            log.warning("start-up did not stop within %g s of the signal; exiting without "
                        "waiting for it", bound)  # fmt: skip
        # Retrieve its outcome whenever it ends, so asyncio logs nothing about it.
        starting.add_done_callback(lambda t: t.cancelled() or t.exception())


def _signal_field(received: list[int]) -> str:
    """`` signal=SIGTERM`` for the log line, or "" without a signal (``stop`` set)."""
    return f" signal={signal.Signals(received[0]).name}" if received else ""


__all__ = [
    "PLATFORMS",
    "PlatformRunner",
    "PlatformSpec",
    "PlatformStartError",
    "Runtime",
    "StartInterrupted",
]
