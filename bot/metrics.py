"""Prometheus metrics for the bot, served at ``GET /metrics`` (text exposition format).

Every metric lives in :data:`REGISTRY` (the process's own registry, not the client
library's global one, so importing this module never registers the default process and
platform collectors twice). The functions below are the only writers; the rest of the
bot calls them at the one place each event is already logged:

==========================================  ==============================================
``ftcost_commands_total``                    handled commands by ``platform``, ``trigger``
                                             (command/mention/followup/button), ``kind``
                                             (estimate/error/help/...) and ``outcome``
                                             (posted/ephemeral/fallback/failed/...)
``ftcost_command_latency_seconds``           receipt to reply delivered, by ``platform``
``ftcost_parse_errors_total``                queries the parser refused, by ``platform``
``ftcost_rate_limited_total``                commands refused by the per-user limit
``ftcost_price_refresh_total``               refresh outcomes by ``source`` (aws, gcp,
                                             team:...) and ``outcome`` (ok/failed)
``ftcost_price_refresh_runs_total``          refresh runs by ``status`` (refreshed/locked/
                                             done/failed)
``ftcost_announcements_total``               price announcements by ``platform`` and
                                             ``outcome`` (sent/failed/gone/in_doubt/
                                             unconfirmed)
``ftcost_store_unavailable_total``           store calls that found the store unreachable,
                                             by ``operation``
==========================================  ==============================================

Latency buckets run from 5 ms to 10 s: Slack wants an acknowledgement within 3 s and the
product promises an answer "within a second".
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, exposition, generate_latest

REGISTRY = CollectorRegistry(auto_describe=True)

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

COMMANDS = Counter(
    "ftcost_commands",
    "Commands handled, by platform, trigger, reply kind and delivery outcome.",
    ("platform", "trigger", "kind", "outcome"),
    registry=REGISTRY,
)
LATENCY = Histogram(
    "ftcost_command_latency_seconds",
    "Seconds from receiving a command to its reply being delivered.",
    ("platform",),
    buckets=LATENCY_BUCKETS_S,
    registry=REGISTRY,
)
PARSE_ERRORS = Counter(
    "ftcost_parse_errors", "Queries the parser refused.", ("platform",), registry=REGISTRY
)
RATE_LIMITED = Counter(
    "ftcost_rate_limited",
    "Commands refused by the per-user rate limit.",
    ("platform",),
    registry=REGISTRY,
)
REFRESH_SOURCES = Counter(
    "ftcost_price_refresh",
    "Price source fetches in a refresh, by source and outcome (ok/failed).",
    ("source", "outcome"),
    registry=REGISTRY,
)
REFRESH_RUNS = Counter(
    "ftcost_price_refresh_runs",
    "Price refresh runs by status (refreshed/locked/done/failed).",
    ("status",),
    registry=REGISTRY,
)
ANNOUNCEMENTS = Counter(
    "ftcost_announcements",
    "Price-change announcements by platform and outcome.",
    ("platform", "outcome"),
    registry=REGISTRY,
)
STORE_UNAVAILABLE = Counter(
    "ftcost_store_unavailable",
    "Store calls that found the store unreachable, by operation.",
    ("operation",),
    registry=REGISTRY,
)

CONTENT_TYPE: str = getattr(
    exposition, "CONTENT_TYPE_PLAIN_0_0_4", "text/plain; version=0.0.4; charset=utf-8"
)
"""The classic text format every Prometheus server scrapes (``generate_latest`` writes it
with underscore escaping, which is the 0.0.4 format)."""


def record_command(
    platform: str, trigger: str, kind: str, outcome: str, latency_s: float
) -> None:
    """One handled command (called from :func:`bot.logs.log_command`)."""
    COMMANDS.labels(platform, trigger, kind, outcome).inc()
    LATENCY.labels(platform).observe(max(latency_s, 0.0))
    if kind == "error" and trigger != "button":  # a button's error is a stale click
        PARSE_ERRORS.labels(platform).inc()
    elif kind == "limited":
        RATE_LIMITED.labels(platform).inc()


def record_refresh_source(source: str, ok: bool) -> None:
    REFRESH_SOURCES.labels(source, "ok" if ok else "failed").inc()


def record_refresh_run(status: str) -> None:
    REFRESH_RUNS.labels(status).inc()


def record_announcement(platform: str, outcome: str, n: int = 1) -> None:
    if n:
        ANNOUNCEMENTS.labels(platform, outcome).inc(n)


def record_store_unavailable(operation: str) -> None:
    STORE_UNAVAILABLE.labels(operation).inc()


def render() -> bytes:
    """The registry in Prometheus' text format."""
    return generate_latest(REGISTRY)


def sample(name: str, **labels: str) -> float:
    """The current value of one sample (0.0 when never recorded): for tests and the
    load benchmark. ``name`` is the full sample name, e.g. ``ftcost_commands_total``."""
    value = REGISTRY.get_sample_value(name, labels)
    return 0.0 if value is None else value
