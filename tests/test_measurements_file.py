"""benchmarks/measurements.yaml: published runs the accuracy benchmark replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from catalog.loader import CatalogError, load_gpus, load_models
from engine.request import Request

MEASUREMENTS = Path(__file__).resolve().parents[1] / "benchmarks" / "measurements.yaml"
BYTES_PER_UNIT = {"GB": 1e9, "GiB": 2**30, "bytes": 1.0}
COUNTERS = {"allocated", "reserved", "active", "driver", "unspecified"}
SEQ_NOTES = {"packed", "fixed", "dynamic-cap"}


def _runs() -> list[dict[str, Any]]:
    doc = yaml.safe_load(MEASUREMENTS.read_text(encoding="utf-8"))
    return doc["runs"]


RUNS = _runs()
RUN_IDS = [str(run.get("id")) for run in RUNS]


@pytest.fixture(scope="module")
def model_ids() -> set[str]:
    try:
        return {m.id for m in load_models()}
    except CatalogError as exc:
        pytest.skip(f"model catalog does not load yet: {exc}")


def test_file_has_a_top_level_runs_list() -> None:
    doc = yaml.safe_load(MEASUREMENTS.read_text(encoding="utf-8"))
    assert isinstance(doc, dict)
    assert isinstance(doc.get("runs"), list)


def test_file_holds_at_least_20_runs() -> None:
    assert len(RUNS) >= 20


def test_run_ids_are_unique() -> None:
    duplicates = sorted({i for i in RUN_IDS if RUN_IDS.count(i) > 1})
    assert duplicates == []


def test_trust_c_runs_are_sanity_only_and_at_most_three() -> None:
    trust_c = [run["id"] for run in RUNS if run["trust"] == "C"]
    assert len(trust_c) <= 3
    assert all(run.get("sanity_only") is True for run in RUNS if run["trust"] == "C")


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_request_validates_as_engine_request(run: dict[str, Any]) -> None:
    Request.model_validate(run["request"])


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_peak_gb_is_the_value_converted_from_its_unit(run: dict[str, Any]) -> None:
    measured = run["measured"]
    expected = measured["value"] * BYTES_PER_UNIT[measured["unit"]] / 1e9
    assert measured["peak_gb"] == pytest.approx(expected, rel=0.005)


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_counter_and_sequence_note_use_known_labels(run: dict[str, Any]) -> None:
    assert run["measured"]["counter"] in COUNTERS
    assert run["seq_note"] in SEQ_NOTES


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_gpu_is_a_catalog_card(run: dict[str, Any]) -> None:
    assert run["request"]["gpu"] in {g.id for g in load_gpus()}


@pytest.mark.parametrize("run", RUNS, ids=RUN_IDS)
def test_model_is_a_catalog_model(run: dict[str, Any], model_ids: set[str]) -> None:
    model = run["request"]["model"]
    if model not in model_ids:
        pytest.skip(f"model '{model}' is not in catalog/models.yaml yet")
