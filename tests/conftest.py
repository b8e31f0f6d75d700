"""Shared fixtures: the packaged catalog and small request builders."""

from __future__ import annotations

import pytest

from catalog.loader import default_catalog
from engine.specs import Catalog


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return default_catalog()
