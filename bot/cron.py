"""Five-field cron expressions (UTC), enough for a refresh schedule.

``minute hour day-of-month month day-of-week``, each ``*``, a number, a range ``a-b``,
a step ``*/n`` or ``a-b/n``, or a comma list of those; months and weekdays also by
name (``jan``, ``mon``); weekday 0 and 7 are Sunday. As in Vixie cron, when both
day-of-month and day-of-week are restricted a day matching **either** fires. The
shortcuts ``@hourly``, ``@daily`` (``@midnight``), ``@weekly``, ``@monthly`` and
``@yearly`` (``@annually``) are accepted.

>>> CronSchedule.parse("0 6 * * *").next_after(datetime(2026, 12, 1, 6, 0, tzinfo=UTC))
datetime.datetime(2026, 12, 2, 6, 0, tzinfo=datetime.timezone.utc)
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

DEFAULT_SCHEDULE = "0 6 * * *"
"""Daily at 06:00 UTC."""

_SHORTCUTS = {
    "@hourly": "0 * * * *",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@weekly": "0 0 * * 0",
    "@monthly": "0 0 1 * *",
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
}
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
_DAYS = {d: i for i, d in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))}
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)
_MAX_SEARCH = timedelta(days=366 * 5)


class CronError(ValueError):
    """An expression that is not valid cron (the message names the field)."""


def _value(text: str, name: str, low: int, high: int, names: dict[str, int]) -> int:
    key = text.lower()
    if key in names:
        return names[key]
    if not text.isdigit():
        raise CronError(f"{name}: {text!r} is not a number")
    value = int(text)
    if not low <= value <= high:
        raise CronError(f"{name}: {value} is outside {low}-{high}")
    return value


def _field(text: str, name: str, low: int, high: int, names: dict[str, int]) -> frozenset[int]:
    values: set[int] = set()
    for part in text.split(","):
        spec, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise CronError(f"{name}: bad step {step_text!r}")
            step = int(step_text)
        if spec == "*":
            start, end = low, high
        elif "-" in spec:
            a, _, b = spec.partition("-")
            start, end = _value(a, name, low, high, names), _value(b, name, low, high, names)
            if start > end:
                raise CronError(f"{name}: range {spec!r} runs backwards")
        else:
            start = _value(spec, name, low, high, names)
            end = high if step_text else start
        values.update(range(start, end + 1, step))
    return frozenset(values)


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A parsed expression; :meth:`next_after` gives the next firing time (UTC)."""

    expression: str
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    """0 = Sunday ... 6 = Saturday."""
    days_restricted: bool
    weekdays_restricted: bool

    @classmethod
    def parse(cls, expression: str) -> CronSchedule:
        text = _SHORTCUTS.get(expression.strip().lower(), expression)
        parts = text.split()
        if len(parts) != 5:
            raise CronError(
                f"{expression!r}: expected 5 fields (minute hour day month weekday), "
                f"got {len(parts)}"
            )
        sets = [_field(p, *spec) for p, spec in zip(parts, _FIELDS, strict=True)]
        weekdays = frozenset(d % 7 for d in sets[4])
        return cls(
            expression=expression,
            minutes=sets[0],
            hours=sets[1],
            days=sets[2],
            months=sets[3],
            weekdays=weekdays,
            days_restricted=parts[2] != "*",
            weekdays_restricted=parts[4] != "*",
        )

    def _day_matches(self, t: datetime) -> bool:
        dom = t.day in self.days
        dow = (t.isoweekday() % 7) in self.weekdays
        if self.days_restricted and self.weekdays_restricted:
            return dom or dow
        return dom and dow

    def next_after(self, after: datetime) -> datetime:
        """The first firing time strictly after ``after`` (an aware time), in UTC."""
        t = after.astimezone(UTC).replace(second=0, microsecond=0) + timedelta(minutes=1)
        limit = t + _MAX_SEARCH
        while t < limit:
            if t.month not in self.months:
                year, month = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
                t = t.replace(year=year, month=month, day=1, hour=0, minute=0)
            elif not self._day_matches(t):
                t = t.replace(hour=0, minute=0) + timedelta(days=1)
            elif t.hour not in self.hours:
                t = t.replace(minute=0) + timedelta(hours=1)
            elif t.minute not in self.minutes:
                t += timedelta(minutes=1)
            else:
                return t
        raise CronError(f"{self.expression!r} never fires")
