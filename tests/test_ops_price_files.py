"""A price source that is a file is held to ``prices.max_bytes`` whatever ``stat`` says
(0 for ``/dev/zero``, a FIFO, a ``/proc`` file), and anything but a regular file is
refused at once, never waited on; and a rejected price's log line carries ``where=``
only when there is a place to name."""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from catalog.price_snapshot import Limits
from catalog.price_sources import PriceSettings, TeamSheetSource, fetch_cloud, refresh_prices
from engine.specs import Catalog
from tests.test_price_sources_hostile import vms_csv

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
QUICK_S = 5.0
"""A refused special file fails at once: far less than this."""
PROC_FILE = Path("/proc/self/status")
"""A regular file whose ``stat`` size is 0 though it holds a few hundred bytes."""


async def aws_error(location: str | Path, max_bytes: int = 32 * 1024 * 1024) -> str | None:
    """The failure of a refresh of ``aws`` read from ``location`` (None: it was read)."""
    settings = PriceSettings(clouds=("aws",), cloud_urls={"aws": str(location)},
                             max_bytes=max_bytes)  # fmt: skip
    fetched = await asyncio.wait_for(fetch_cloud(None, "aws", settings), QUICK_S)  # type: ignore[arg-type]
    return fetched.error


async def test_dev_zero_is_refused_as_a_device_not_read_forever() -> None:
    error = await aws_error("/dev/zero")

    assert error is not None
    assert error.startswith("a character device, not a regular file")


async def test_a_fifo_without_a_writer_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "vms.csv"
    os.mkfifo(fifo)

    error = await aws_error(fifo)

    assert error is not None
    assert error.startswith("a pipe (FIFO), not a regular file")
    assert "point the price source at a .csv, .yaml or .json file" in error


async def test_a_directory_is_refused_as_not_a_regular_file(tmp_path: Path) -> None:
    error = await aws_error(tmp_path)

    assert error is not None and error.startswith("a directory, not a regular file")


@pytest.mark.skipif(not PROC_FILE.exists(), reason="no /proc on this system")
async def test_a_file_whose_stat_size_is_zero_is_still_held_to_max_bytes() -> None:
    assert PROC_FILE.stat().st_size == 0

    error = await aws_error(PROC_FILE, max_bytes=16)

    assert error == "larger than 16 bytes"


async def test_a_regular_file_past_max_bytes_fails_as_a_download_does(tmp_path: Path) -> None:
    path = tmp_path / "vms.csv"
    path.write_text(vms_csv(("gpu_1x_a10", "A10", "1", "0.75", "")))

    error = await aws_error(path, max_bytes=100)

    assert error == "larger than 100 bytes"


async def test_a_regular_file_within_max_bytes_is_read(tmp_path: Path) -> None:
    path = tmp_path / "vms.csv"
    path.write_text(vms_csv(("gpu_1x_a10", "A10", "1", "0.75", "")))

    assert await aws_error(path, max_bytes=path.stat().st_size) is None


# -- the rejected-price log line ---------------------------------------------------------------
async def test_a_rejected_team_price_is_logged_without_an_empty_where(
    tmp_path: Path, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("prices: {h100-sxm: 50}\n")
    settings = PriceSettings(clouds=(), limits=Limits(max_price_per_gpu_hour=40),
                             team_sheets=(TeamSheetSource(workspace="slack:T1",
                                                          location=str(sheet)),))  # fmt: skip

    with caplog.at_level(logging.WARNING, logger="ftcost.prices"):
        await refresh_prices(settings, catalog, None, T0)

    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith(
        "price rejected")]  # fmt: skip
    assert "kind=team" in line
    assert "where=" not in line


async def test_a_rejected_cloud_price_is_logged_with_its_instance_and_region(
    tmp_path: Path, catalog: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "vms.csv"
    path.write_text(vms_csv(("gpu_1x_a10", "A10", "1", "999", "")))
    settings = PriceSettings(clouds=("lambda",), cloud_urls={"lambda": str(path)})

    with caplog.at_level(logging.WARNING, logger="ftcost.prices"):
        await refresh_prices(settings, catalog, None, T0)

    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith(
        "price rejected")]  # fmt: skip
    assert line.endswith("where='gpu_1x_a10 us'")
