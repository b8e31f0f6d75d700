"""One hostile or broken price source fails alone: a team sheet with a value YAML cannot
build, or a SkyPilot row whose ``GpuInfo`` holds a number beyond float range or JSON
nested thousands deep, never raises out of the refresh; the other sources still
refresh. In a ``vms.csv`` every number is bounded and finite before it is used: a row
with one that is not is counted as unreadable, as other bad rows are."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest

from catalog.price_snapshot import PriceSnapshot
from catalog.price_sources import PriceSettings, TeamSheetSource, refresh_prices
from catalog.skypilot import parse_vms_csv
from engine.specs import Catalog

T0 = datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "vCPUs", "MemoryGiB",
           "Price", "Region", "GpuInfo", "SpotPrice")  # fmt: skip
A100_40GB = "{'TotalGpuMemoryInMiB': 40960}"


def vms_csv(*rows: tuple[str, str, str, str, str]) -> str:
    """A ``vms.csv`` of (instance, accelerator, count, price, GpuInfo) rows."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for instance, accelerator, count, price, gpu_info in rows:
        writer.writerow((instance, accelerator, count, 8, 64, price, "us", gpu_info, ""))
    return out.getvalue()


def vast_a100(gpu_info: str, count: str = "1", price: str = "1.5") -> str:
    """Vast's A100 rows are told 40 from 80 GB by ``GpuInfo``: a good row, then this one."""
    return vms_csv(("1x-A100_SXM4-a", "A100", "1", "1.2", A100_40GB),
                   ("1x-A100_SXM4-b", "A100", count, price, gpu_info))


def statuses(snapshot: PriceSnapshot) -> dict[str, tuple[bool, str | None]]:
    return {s.name: (s.ok, s.error) for s in snapshot.sources}


# -- team sheets ---------------------------------------------------------------------------


async def test_a_team_sheet_yaml_cannot_build_fails_alone_and_the_others_refresh(
    tmp_path: Path, catalog: Catalog
) -> None:
    (tmp_path / "good.yaml").write_text("prices: {h100: 2.10}\n")
    (tmp_path / "bad.yaml").write_text("prices: {h100: 2.10, a100: " + "9" * 5000 + "}\n")
    (tmp_path / "vms.csv").write_text(vms_csv(("gpu_1x_a10", "A10", "1", "0.75", "")))
    settings = PriceSettings(
        clouds=("lambda",), cloud_urls={"lambda": str(tmp_path / "vms.csv")},
        team_sheets=(TeamSheetSource(workspace="slack:T1", location=str(tmp_path / "good.yaml")),
                     TeamSheetSource(workspace="slack:T2", location=str(tmp_path / "bad.yaml"))),
    )  # fmt: skip

    snapshot = await refresh_prices(settings, catalog, None, T0)

    status = statuses(snapshot)
    assert status["lambda"] == (True, None) and status["team:slack:T1"] == (True, None)
    ok, error = status["team:slack:T2"]
    assert not ok and error is not None and error.startswith("line 1, 'a100:'")
    assert snapshot.team_sheets["slack:T1"].prices["h100-sxm"].price == 2.10


async def test_a_parser_failure_fails_only_its_own_source(
    tmp_path: Path, catalog: Catalog, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str, cloud: str) -> object:
        raise ZeroDivisionError("a parser bug")

    (tmp_path / "vms.csv").write_text(vms_csv(("gpu_1x_a10", "A10", "1", "0.75", "")))
    (tmp_path / "team.yaml").write_text("prices: {h100: 2.10}\n")
    monkeypatch.setattr("catalog.price_sources.parse_vms_csv", broken)
    settings = PriceSettings(
        clouds=("lambda",), cloud_urls={"lambda": str(tmp_path / "vms.csv")},
        team_sheets=(TeamSheetSource(location=str(tmp_path / "team.yaml")),))  # fmt: skip

    snapshot = await refresh_prices(settings, catalog, None, T0)

    assert statuses(snapshot) == {
        "lambda": (False, "could not be read (ZeroDivisionError); the log has the details"),
        "team:*": (True, None),
    }


# -- SkyPilot rows ---------------------------------------------------------------------------


def test_a_gpu_memory_beyond_float_range_is_an_unreadable_row() -> None:
    parsed = parse_vms_csv(vast_a100("{'TotalGpuMemoryInMiB': " + "9" * 400 + "}"), "vast")

    assert parsed.bad_rows == 1 and [o.card for o in parsed.offers] == ["a100-40gb-sxm"]


def test_a_gpu_memory_past_pythons_digit_limit_is_an_unreadable_row() -> None:
    parsed = parse_vms_csv(vast_a100("{'TotalGpuMemoryInMiB': " + "9" * 5000 + "}"), "vast")

    assert parsed.bad_rows == 1 and parsed.unknown == {}


def test_a_gpu_info_nested_thousands_deep_is_an_unreadable_row() -> None:
    parsed = parse_vms_csv(vast_a100('{"a": ' + "[" * 5000 + "]" * 5000 + "}"), "vast")

    assert parsed.bad_rows == 1 and len(parsed.offers) == 1


@pytest.mark.parametrize("total", ["Infinity", "NaN", "1e400", "-40960", "0", "1e30"])
def test_a_gpu_memory_that_is_not_a_bounded_positive_number_is_an_unreadable_row(
    total: str,
) -> None:
    parsed = parse_vms_csv(vast_a100('{"TotalGpuMemoryInMiB": ' + total + "}"), "vast")

    assert parsed.bad_rows == 1 and parsed.unknown == {}


@pytest.mark.parametrize("count", ["0.001", "1e9", "1e308"])
def test_a_gpu_count_outside_its_bounds_is_an_unreadable_row(count: str) -> None:
    parsed = parse_vms_csv(vast_a100(A100_40GB, count=count), "vast")

    assert parsed.bad_rows == 1 and len(parsed.offers) == 1


@pytest.mark.parametrize("price", ["1_5", "١٢", "１.5"])
def test_a_price_not_written_in_ascii_decimal_is_an_unreadable_row(price: str) -> None:
    parsed = parse_vms_csv(vast_a100(A100_40GB, price=price), "vast")

    assert parsed.bad_rows == 1 and len(parsed.offers) == 1


async def test_a_cloud_with_an_unreadable_gpu_info_row_still_refreshes(
    tmp_path: Path, catalog: Catalog
) -> None:
    (tmp_path / "aws.csv").write_text(vms_csv(("p5.48xlarge", "H100", "8", "98.32", "")))
    (tmp_path / "vast.csv").write_text(
        vast_a100("{'TotalGpuMemoryInMiB': " + "9" * 400 + "}"))
    settings = PriceSettings(clouds=("aws", "vast"), cloud_urls={
        "aws": str(tmp_path / "aws.csv"), "vast": str(tmp_path / "vast.csv")})  # fmt: skip

    snapshot = await refresh_prices(settings, catalog, None, T0)

    assert statuses(snapshot) == {"aws": (True, None), "vast": (True, None)}
    vast = snapshot.source("vast")
    assert vast is not None and vast.bad_rows == 1
