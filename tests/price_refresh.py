"""The price refresh job as its tests set it up: the real job against the local
SkyPilot-catalog stand-in (``price_server`` in ``tests/conftest.py``, serving every cloud
of :data:`CLOUDS`), announcing to a scriptable poster at once (no interval between posts).
Time is a manual clock; :data:`DAY0` is a scheduled refresh (06:00 UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bot.price_store import PriceStore
from bot.prices import PriceBook, PriceJob, PricesConfig
from engine.specs import Catalog
from tests.fakes.clock import ManualClock
from tests.fakes.poster import FakePoster
from tests.fakes.price_server import PriceServer

DAY0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
DAY1 = DAY0 + timedelta(days=1)
CLOUDS = ("aws", "gcp", "lambda", "runpod")
LAMBDA_H100 = "gpu_8x_h100_sxm5,H100,8.0,208.0,1800.0,24.0,us-east-1"
"""Lambda's 8x H100 row in the stand-in's catalog: $24.00 an hour ($3.00 a GPU), the
cheapest H100 there."""


def prices_config(server: PriceServer, **fields: object) -> PricesConfig:
    """The job's ``prices:`` settings: every cloud of :data:`CLOUDS` read from ``server``,
    no mirror, announcements sent at once; ``fields`` added or changed."""
    settings: dict[str, object] = {
        "clouds": CLOUDS, "base_url": server.base_url, "mirror_url": None, "timeout_s": 5,
        "announce_interval_s": 0,
    }  # fmt: skip
    settings.update(fields)
    return PricesConfig.model_validate(settings)


def make_job(
    store: PriceStore, server: PriceServer, clock: ManualClock, catalog: Catalog,
    poster: FakePoster | None = None, owner: str = "a",
) -> PriceJob:  # fmt: skip
    """A refresh job of replica ``owner`` on ``store``, announcing on Slack to ``poster``."""
    cfg = prices_config(server)
    return PriceJob(store, PriceBook(catalog, cfg), cfg, clock, owner=owner,
                    posters={"slack": poster or FakePoster()})  # fmt: skip
