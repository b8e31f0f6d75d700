"""Cron expressions for the refresh schedule."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.cron import DEFAULT_SCHEDULE, CronError, CronSchedule


def at(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)


def nxt(expr: str, after: datetime) -> datetime:
    return CronSchedule.parse(expr).next_after(after)


def test_the_default_runs_daily_at_six_utc() -> None:
    assert nxt(DEFAULT_SCHEDULE, at(2026, 12, 1, 5, 59)) == at(2026, 12, 1, 6, 0)


def test_the_next_time_is_strictly_after() -> None:
    assert nxt(DEFAULT_SCHEDULE, at(2026, 12, 1, 6, 0)) == at(2026, 12, 2, 6, 0)


def test_seconds_are_ignored() -> None:
    assert nxt("*/15 * * * *", at(2026, 1, 1, 0, 14, 59)) == at(2026, 1, 1, 0, 15)


def test_steps_and_ranges() -> None:
    assert nxt("0 9-17/4 * * *", at(2026, 1, 1, 13, 1)) == at(2026, 1, 1, 17, 0)


def test_lists() -> None:
    assert nxt("30 1,13 * * *", at(2026, 1, 1, 2, 0)) == at(2026, 1, 1, 13, 30)


def test_weekday_names_and_sunday_as_seven() -> None:
    # 2026-12-01 is a Tuesday.
    assert nxt("0 6 * * mon", at(2026, 12, 1)) == at(2026, 12, 7, 6, 0)
    assert nxt("0 6 * * 7", at(2026, 12, 1)) == nxt("0 6 * * 0", at(2026, 12, 1))


def test_month_names() -> None:
    assert nxt("0 0 1 feb *", at(2026, 3, 1)) == at(2027, 2, 1)


def test_day_of_month_or_weekday_when_both_are_given() -> None:
    # The 15th (a Tuesday in Dec 2026) or any Friday: Friday the 4th comes first.
    assert nxt("0 0 15 * fri", at(2026, 12, 1)) == at(2026, 12, 4)


def test_a_day_that_only_some_months_have() -> None:
    assert nxt("0 0 31 * *", at(2026, 4, 1)) == at(2026, 5, 31)


def test_shortcuts() -> None:
    assert nxt("@daily", at(2026, 1, 1, 12)) == at(2026, 1, 2)
    assert nxt("@hourly", at(2026, 1, 1, 12, 30)) == at(2026, 1, 1, 13)


def test_leap_day() -> None:
    assert nxt("0 0 29 2 *", at(2026, 3, 1)) == at(2028, 2, 29)


def test_a_time_in_another_zone_is_taken_in_utc() -> None:
    from datetime import timedelta, timezone

    paris = datetime(2026, 12, 1, 6, 30, tzinfo=timezone(timedelta(hours=1)))
    assert nxt(DEFAULT_SCHEDULE, paris) == at(2026, 12, 1, 6, 0)  # 05:30 UTC


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("0 6 * *", "expected 5 fields"),
        ("60 * * * *", "minute: 60 is outside 0-59"),
        ("0 25 * * *", "hour"),
        ("0 0 * * funday", "day of week"),
        ("*/0 * * * *", "bad step"),
        ("0 0 20-10 * *", "runs backwards"),
        ("0 0 30 2 *", "never fires"),
    ],
)
def test_bad_expressions_name_the_problem(expr: str, message: str) -> None:
    with pytest.raises(CronError, match=message):
        CronSchedule.parse(expr).next_after(at(2026, 1, 1))


def test_a_day_field_starting_with_a_star_is_unrestricted_as_in_vixie_cron() -> None:
    # "*/2" in day-of-month counts as "*" for the either-day rule: Mondays on odd days only.
    fired = [at(2026, 12, 1)]
    for _ in range(4):
        fired.append(nxt("0 0 */2 * 1", fired[-1]))
    assert [d.day for d in fired[1:]] == [7, 21, 11, 25]


def test_both_day_fields_restricted_fire_on_either() -> None:
    assert nxt("0 0 15 * 1", at(2026, 12, 1)) == at(2026, 12, 7)  # a Monday before the 15th
