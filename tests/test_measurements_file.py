"""benchmarks/measurements.yaml: published runs the accuracy benchmark replays."""

from __future__ import annotations

import sys
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


GPU_RUNS = MEASUREMENTS.parent / "gpu_runs"
OWN_RUNS = [run for run in RUNS if "measured_host" in run]


def _probe_lines() -> list[dict[str, Any]]:
    import json

    lines = []
    for path in sorted(GPU_RUNS.glob("*.jsonl")):
        lines += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if "peak_reserved_gb" in line]


def test_this_projects_own_runs_are_in_the_file() -> None:
    assert len(OWN_RUNS) >= 20


@pytest.mark.parametrize("run", OWN_RUNS, ids=[r["id"] for r in OWN_RUNS])
def test_an_own_run_is_a_raw_line_of_the_probe_that_measured_it(run: dict[str, Any]) -> None:
    request, measured = run["request"], run["measured"]
    matches = [
        line
        for line in _probe_lines()
        if line["model"] == request["model"]
        and line["seq_len"] == request["seq_len"]
        and line["micro_batch"] == request["micro_batch"]
        and abs(line["peak_reserved_gb"] - measured["peak_gb"]) < 0.001
        and abs(line["tokens_per_sec"] - measured["tokens_per_sec_per_gpu"]) < 1
    ]
    assert len(matches) == 1
    assert measured["counter"] == "reserved"


@pytest.mark.parametrize("run", OWN_RUNS, ids=[r["id"] for r in OWN_RUNS])
def test_an_own_run_names_its_hosts_measured_launch_time_and_its_source(
    run: dict[str, Any],
) -> None:
    host = run["measured_host"]
    assert 1.0 <= float(host["launch_us_per_kernel"]) <= 100.0
    assert "host_overhead" in host["source"]


PROBE_RUNS = [
    ("h200-2026-12-04.jsonl", "h200-2026-12-04-host.json", "ftcost-h200"),
    ("h200-2026-12-04-families.jsonl", "h200-2026-12-04b-host.json", "ftcost-h200f"),
    ("h200-2026-12-04-large.jsonl", "h200-2026-12-04c-host.json", "ftcost-h200x"),
]
"""Each device session's probe lines, its host's timing and the row prefix it made."""


def test_every_own_run_comes_from_one_listed_probe_session() -> None:
    prefixes = {prefix for _, _, prefix in PROBE_RUNS}
    assert all(run["id"].rsplit("-", 1)[0] in prefixes for run in OWN_RUNS)


def test_the_own_runs_are_what_probe_rows_makes_of_the_raw_probe_lines() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "probe_rows", MEASUREMENTS.parent / "probe_rows.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for probe, host, prefix in PROBE_RUNS:
        made = yaml.safe_load(
            "\n".join(module.rows(GPU_RUNS / probe, GPU_RUNS / host, prefix, "h200-sxm"))
        )
        assert made == [run for run in RUNS if run["id"].startswith(f"{prefix}-")]


def _gpu_probe() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("gpu_probe", MEASUREMENTS.parent / "gpu_probe.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


PROBE_TO_CATALOG = {
    "hidden_size": "hidden_size",
    "intermediate_size": "intermediate_size",
    "num_hidden_layers": "num_layers",
    "num_attention_heads": "num_heads",
    "num_key_value_heads": "num_kv_heads",
    "vocab_size": "vocab_size",
    "tie_word_embeddings": "tie_embeddings",
    "head_dim": "head_dim",
}


@pytest.mark.parametrize("name", [m for m in _gpu_probe().MODELS if m != "tiny"])
def test_the_probe_builds_each_model_at_its_catalog_shapes(name: str) -> None:
    shape = _gpu_probe().MODELS[name]
    catalog = {m.id: m for m in load_models()}[name].architecture
    for probe_key, catalog_key in PROBE_TO_CATALOG.items():
        if probe_key in shape:
            assert shape[probe_key] == getattr(catalog, catalog_key), probe_key
