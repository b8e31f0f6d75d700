"""How the reply writes large numbers: never an exponent, always thousands separators."""

from __future__ import annotations

import pytest

from adapters.formats import fmt_hours, fmt_tokens


@pytest.mark.parametrize(("tokens", "written"), [
    (50e6, "50M"), (1.5e9, "1.5B"), (999e12, "999T"), (1e15, "1,000T"), (1e18, "1,000,000T"),
    (12_345, "12.3k"), (640, "640"),
])
def test_token_counts_use_a_suffix_and_no_exponent(tokens: float, written: str) -> None:
    assert fmt_tokens(tokens) == written


@pytest.mark.parametrize(("hours", "written"), [
    (0.5, "30 min"), (12.25, "12.2 h"), (72, "3.0 d"), (269_464_707.2, "11,227,696.1 d"),
])
def test_hours_read_as_minutes_hours_or_days_with_separators(hours: float, written: str) -> None:
    assert fmt_hours(hours) == written
