"""Render a :class:`adapters.report.Report` as plain text for a terminal."""

from __future__ import annotations

from adapters.report import Report


def render_text(report: Report, width: int = 40) -> str:
    """The full report: headline, breakdown, cards, what-ifs, warnings, assumptions."""
    lines = [report.title, report.subtitle, ""]
    lines.append(report.headline)
    if report.cost_line:
        lines.append(report.cost_line)
    if report.price_line:
        lines.append(f"  prices: {report.price_line}")
    for note in report.notes:
        lines.append(f"  note: {note}")
    lines += ["", f"Memory per GPU  [{report.bar(width)}]", *report.legend()]
    lines += ["", "Cards", report.cards.render()]
    lines += ["", "What if", report.what_if.render()]
    if report.warnings:
        lines += ["", "Warnings", *(f"  ! {w}" for w in report.warnings)]
    if report.assumptions:
        lines += ["", "Assumptions", *(f"  - {a}" for a in report.assumptions)]
    return "\n".join(lines)
