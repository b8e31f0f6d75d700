"""Five-field cron expressions (UTC) for the price refresh, read by the cronsim library.

``minute hour day-of-month month day-of-week``, each ``*``, a number, a range ``a-b``, a
step ``*/n`` or ``a-b/n``, or a comma list of those; months and weekdays also by name
(``jan``, ``mon``); weekday 0 and 7 are Sunday. Matching is Vixie cron's, as cronsim
implements it (it follows Debian's cron): when both day fields are restricted, a day
matching **either** fires; a day field that starts with ``*`` (``*/2``) counts as
unrestricted, so ``0 0 */2 * 1`` fires on Mondays that fall on odd days. The shortcuts
``@hourly``, ``@daily`` (``@midnight``), ``@weekly``, ``@monthly`` and ``@yearly``
(``@annually``) are accepted.

cronsim reports an invalid expression as "Bad minute"; :class:`CronError` adds what is
wrong with that field (a value out of range, a zero step, a backwards range), so a config
error says how to fix it.

>>> CronSchedule.parse("0 6 * * *").next_after(datetime(2026, 12, 1, 6, 0, tzinfo=UTC))
datetime.datetime(2026, 12, 2, 6, 0, tzinfo=datetime.timezone.utc)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime

from cronsim import CronSim, CronSimError

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
_FIELDS: tuple[tuple[str, int, int], ...] = (
    ("minute", 0, 59),
    ("hour", 0, 23),
    ("day of month", 1, 31),
    ("month", 1, 12),
    ("day of week", 0, 7),
)
_CRONSIM_FIELDS = {
    "minute": "minute",
    "hour": "hour",
    "day-of-month": "day of month",
    "month": "month",
    "day-of-week": "day of week",
}
_PROBE = datetime(2000, 1, 1, tzinfo=UTC)


class CronError(ValueError):
    """An expression that is not valid cron (the message names the field)."""


def _explain(name: str, text: str, low: int, high: int) -> str:
    """What is wrong with one field cronsim refused (best effort, for the message)."""
    for part in text.split(","):
        spec, _, step = part.partition("/")
        if step and (not step.isdigit() or int(step) == 0):
            return f"{name}: bad step {step!r}"
        bounds = spec.split("-") if spec != "*" else []
        numbers = [int(b) for b in bounds if b.isdigit()]
        for value in numbers:
            if not low <= value <= high:
                return f"{name}: {value} is outside {low}-{high}"
        if len(numbers) == 2 and numbers[0] > numbers[1]:
            return f"{name}: range {spec!r} runs backwards"
        if any(b and not b.isdigit() and not re.fullmatch(r"[a-z]{3}", b, re.I) for b in bounds):
            return f"{name}: {spec!r} is not a number"
    if name == "day of month":
        return f"{name}: {text!r} never fires in the months given"
    return f"{name}: {text!r} is not valid"


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A checked expression; :meth:`next_after` gives the next firing time (UTC)."""

    expression: str
    """As given (``@daily`` or five fields)."""
    fields: str
    """The five fields cronsim reads (shortcuts expanded)."""

    @classmethod
    def parse(cls, expression: str) -> CronSchedule:
        fields = _SHORTCUTS.get(expression.strip().lower(), expression.strip())
        parts = fields.split()
        if len(parts) != 5:
            raise CronError(
                f"{expression!r}: expected 5 fields (minute hour day month weekday), "
                f"got {len(parts)}"
            )
        try:
            CronSim(fields, _PROBE)
        except CronSimError as exc:
            field = str(exc).removeprefix("Bad ").strip()
            name = _CRONSIM_FIELDS.get(field)
            if name is None:
                raise CronError(f"{expression!r}: {exc}") from exc
            index = [n for n, _, _ in _FIELDS].index(name)
            _, low, high = _FIELDS[index]
            raise CronError(_explain(name, parts[index], low, high)) from exc
        return cls(expression=expression, fields=fields)

    def next_after(self, after: datetime) -> datetime:
        """The first firing time strictly after ``after`` (an aware time), in UTC."""
        start = after.astimezone(UTC)
        try:
            return next(CronSim(self.fields, start))
        except (CronSimError, StopIteration) as exc:
            raise CronError(f"{self.expression!r} never fires") from exc
