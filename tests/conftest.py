"""Shared fixtures: the packaged catalog and small request builders."""

from __future__ import annotations

import pytest

from catalog.loader import default_catalog
from engine.specs import Catalog


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()


@pytest.fixture(autouse=True)
def _no_price_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Runtime never fetches real price sources in tests: its default fetch fails at
    once (a source failure the job logs); tests that want a refresh pass ``price_fetch``
    or point ``prices`` at ``tests/fakes/price_server.py``."""

    async def offline(*args: object) -> object:
        raise OSError("price sources are offline in tests")

    monkeypatch.setattr("bot.runtime.refresh_prices", offline)
