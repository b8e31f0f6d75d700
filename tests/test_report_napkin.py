"""Napkin mode names the napkin rules' slots as the rules mean them."""

from __future__ import annotations

from adapters.parse import parse_query
from adapters.report import build_report
from engine import estimate


def test_napkin_mode_labels_the_rules_remainder_not_the_adapter() -> None:
    report = build_report(estimate(parse_query("8b lora napkin 50M tokens h100")))

    labels = [s.label for s in report.segments if s.gb > 0.005]

    assert labels == ["base weights", "adapters + the rest"]


def test_detailed_mode_labels_the_adapter_as_the_adapter() -> None:
    report = build_report(estimate(parse_query("8b lora 50M tokens h100")))

    assert {s.key: s.label for s in report.segments}["adapter"] == "adapter"
