"""The price snapshot's data model: refreshed $/GPU-hour quotes, how each was judged, and
the status of every source. Plain pydantic, no clock, no I/O; stored as JSON.

:func:`catalog.price_build.build_snapshot` makes a :class:`PriceSnapshot` from one
refresh's fetches; :mod:`catalog.prices` turns one into the prices an estimate uses.
Every price here is USD per GPU-hour, finite and within :data:`PRICE_BOUNDS` (a query's
``$X/hr`` bounds): a stored snapshot's quote or team rate outside them (written by an
older version, or edited by hand) is dropped on load, so the built-in price stands in
for it and ``$nan``, ``$inf`` or ``$-5.00`` never reaches an estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidatorFunctionWrapHandler,
    field_validator,
)

from catalog.echo import one_line
from engine.constants import MAX_PRICE_PER_GPU_HOUR, MIN_PRICE_PER_GPU_HOUR

DEFAULT_MAX_PRICE = 100.0
"""$/GPU-hour above which a price is taken for a data error (the dearest real offers are
about $15)."""
DEFAULT_MAX_CHANGE = 5.0
"""A card whose price moves by more than this factor in one refresh is held back."""
DEFAULT_KEEP_VANISHED_DAYS = 7.0
"""Days a card a source no longer lists keeps its last price from that source."""
MAX_REJECTIONS_KEPT = 50
ANY_WORKSPACE = "*"
"""A team sheet for every workspace (single-team deployments)."""


PRICE_BOUNDS = (MIN_PRICE_PER_GPU_HOUR, MAX_PRICE_PER_GPU_HOUR)
"""The widest $/GPU-hour range a price in a snapshot may have (a query's ``$X/hr``
bounds; :func:`catalog.team_sheets.price_range` narrows the top to
``Limits.max_price_per_gpu_hour`` when a refresh screens prices)."""
Price = Annotated[float, Field(ge=PRICE_BOUNDS[0], le=PRICE_BOUNDS[1], allow_inf_nan=False)]
"""USD per GPU-hour, finite and within :data:`PRICE_BOUNDS`."""
MAX_NAME_CHARS: Final = 80
"""A team sheet's ``name`` is cut to this many characters (one line:
:func:`catalog.echo.one_line`)."""
MAX_NOTE_CHARS: Final = 200
"""A team rate's ``note`` is cut to this many characters (one line)."""
_PRICE_FIELDS = frozenset({"price", "old", "new"})


class PriceChoice(StrEnum):
    """Which refreshed price an estimate uses."""

    LOWEST_ON_DEMAND = "lowest-on-demand"
    MEDIAN_ON_DEMAND = "median-on-demand"
    LOWEST_SPOT = "lowest-spot"


CHOICE_LABELS = {
    PriceChoice.LOWEST_ON_DEMAND: "lowest on-demand",
    PriceChoice.MEDIAN_ON_DEMAND: "median on-demand",
    PriceChoice.LOWEST_SPOT: "lowest spot",
}


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Limits(_Model):
    """Validation bounds for refreshed prices."""

    max_price_per_gpu_hour: float = Field(default=DEFAULT_MAX_PRICE, gt=0, allow_inf_nan=False)
    """A price (on-demand, spot or team) above this $/GPU-hour is rejected."""
    max_change_ratio: float = Field(default=DEFAULT_MAX_CHANGE, gt=1, allow_inf_nan=False)
    """A card moving by more than this factor in one refresh is held back."""
    keep_vanished_days: float = Field(default=DEFAULT_KEEP_VANISHED_DAYS, ge=0, le=365)
    """A card a source stops listing keeps its last quote from it this many days."""


class Quote(_Model):
    """One offer: $/GPU-hour and where it is."""

    price: Price
    """USD per GPU-hour."""
    cloud: str
    region: str = ""
    instance_type: str = ""

    @property
    def where(self) -> str:
        return " ".join(p for p in (self.cloud, self.instance_type, self.region) if p)


def _price_errors_only(exc: ValidationError) -> bool:
    """Whether every error of ``exc`` is a price out of :data:`PRICE_BOUNDS` (or not a
    finite number), as opposed to a document that is malformed."""
    return all(e["loc"] and e["loc"][-1] in _PRICE_FIELDS for e in exc.errors())


def _or_none(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """``value`` validated, or None when its price is unusable (dropped on load)."""
    try:
        return handler(value)
    except ValidationError as exc:
        if _price_errors_only(exc):
            return None
        raise


def _usable_items(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    """A list or dict validated, less the items whose price is unusable."""
    try:
        return handler(value)
    except ValidationError as exc:
        if not _price_errors_only(exc) or not isinstance(value, list | dict):
            raise
        bad = {e["loc"][0] for e in exc.errors()}
        if isinstance(value, dict):
            return handler({k: v for k, v in value.items() if k not in bad})
        return handler([v for i, v in enumerate(value) if i not in bad])


def _cheapest(quotes: Iterable[Quote | None]) -> Quote | None:
    present = [q for q in quotes if q is not None]
    return min(present, key=order) if present else None


def order(q: Quote) -> tuple[float, str, str, str]:
    """The sort key of quotes: price, then cloud, region and instance (a stable tie-break)."""
    return (q.price, q.cloud, q.region, q.instance_type)


class CloudQuotes(_Model):
    """A card's cheapest on-demand and spot offer on one cloud."""

    on_demand: Quote | None = None
    spot: Quote | None = None
    as_of: datetime
    """When this cloud's catalog was fetched."""

    _drop_unusable = field_validator("on_demand", "spot", mode="wrap")(_or_none)


class CardPrices(_Model):
    """A card's quotes per cloud, and the statistics the bot chooses from."""

    card: str
    clouds: dict[str, CloudQuotes]

    @property
    def lowest_on_demand(self) -> Quote | None:
        return _cheapest(c.on_demand for c in self.clouds.values())

    @property
    def median_on_demand(self) -> Quote | None:
        """The lower median of the per-cloud lowest on-demand prices."""
        per_cloud = sorted((c.on_demand for c in self.clouds.values() if c.on_demand), key=order)
        return per_cloud[(len(per_cloud) - 1) // 2] if per_cloud else None

    @property
    def lowest_spot(self) -> Quote | None:
        return _cheapest(c.spot for c in self.clouds.values())

    def statistic(self, choice: PriceChoice) -> Quote | None:
        if choice is PriceChoice.MEDIAN_ON_DEMAND:
            return self.median_on_demand
        if choice is PriceChoice.LOWEST_SPOT:
            return self.lowest_spot
        return self.lowest_on_demand

    def across(self, choice: PriceChoice) -> tuple[str, ...]:
        """The clouds the statistic was taken over (with an offer of that kind)."""
        spot = choice is PriceChoice.LOWEST_SPOT
        return tuple(
            sorted(
                name
                for name, c in self.clouds.items()
                if (c.spot if spot else c.on_demand) is not None
            )
        )


class Rejection(_Model):
    """A price that failed validation (not applied)."""

    source: str
    card: str
    kind: Literal["on-demand", "spot", "team"]
    price: float | None
    """The rejected $/GPU-hour; None when it was not a finite number (``reason`` quotes
    what was written)."""
    reason: str
    where: str = ""

    @field_validator("price")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        return value if value is None or math.isfinite(value) else None


class HeldBack(_Model):
    """A card whose price moved too far in one refresh: the old prices stay."""

    card: str
    statistic: str
    """``lowest on-demand``, ``median on-demand``, ``lowest spot`` or ``team rate``."""
    old: float = Field(gt=0, allow_inf_nan=False)
    new: float = Field(gt=0, allow_inf_nan=False)
    """$/GPU-hour before and as fetched (positive and finite: :attr:`ratio` divides by
    both)."""
    workspace: str | None = None
    """For a team rate: the workspace whose sheet it is in."""

    @property
    def ratio(self) -> float:
        return max(self.new / self.old, self.old / self.new)


class SourceStatus(_Model):
    """How one source fared in the refresh that made the snapshot."""

    name: str
    """``aws``, ``gcp``, ... for SkyPilot clouds; ``team:<workspace>`` for a team sheet."""
    kind: Literal["skypilot", "team"]
    location: str
    """URL or file path."""
    ok: bool
    checked_at: datetime
    last_success_at: datetime | None = None
    """When the prices in force from this source were fetched (None: never)."""
    consecutive_failures: int = 0
    total_failures: int = 0
    error: str | None = None
    offers: int = 0
    """Offers (rows mapped to a catalog card) read; team sheets: prices read."""
    unknown: dict[str, int] = Field(default_factory=dict)
    """Accelerator names no rule maps -> rows (SkyPilot); unknown card names (team)."""
    ignored: int = 0
    bad_rows: int = 0
    rejected: int = 0
    count_fixes: int = 0
    missing_host: int = 0
    vanished: int = 0
    """Cards this source quoted before but not now, whose previous quote was kept."""

    @property
    def stale(self) -> bool:
        """The last fetch failed: the prices in force from it are older than the snapshot."""
        return not self.ok


class TeamPrice(_Model):
    price: Price
    """USD per GPU-hour."""
    note: str = ""

    @field_validator("note")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return one_line(value, MAX_NOTE_CHARS)


class TeamSheet(_Model):
    """A team's negotiated rates, in force for one workspace (or ``*`` for all)."""

    workspace: str
    location: str
    name: str = ""
    prices: dict[str, TeamPrice]
    """Catalog card id -> rate."""
    as_of: datetime
    """When the sheet was read."""

    _drop_unusable = field_validator("prices", mode="wrap")(_usable_items)

    @field_validator("name")
    @classmethod
    def _one_line(cls, value: str) -> str:
        return one_line(value, MAX_NAME_CHARS)


class PriceSnapshot(_Model):
    """The prices one refresh produced, with their sources; stored as JSON."""

    id: str
    taken_at: datetime
    cards: dict[str, CardPrices] = Field(default_factory=dict)
    team_sheets: dict[str, TeamSheet] = Field(default_factory=dict)
    """Workspace key (``slack:T123``, ``discord:456`` or ``*``) -> sheet."""
    sources: list[SourceStatus] = Field(default_factory=list)
    held_back: list[HeldBack] = Field(default_factory=list)
    rejected: list[Rejection] = Field(default_factory=list)
    """The first :data:`MAX_REJECTIONS_KEPT` rejections (each source's status counts all)."""

    _drop_unusable = field_validator("held_back", mode="wrap")(_usable_items)

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes) -> PriceSnapshot:
        return cls.model_validate_json(text)

    def source(self, name: str) -> SourceStatus | None:
        return next((s for s in self.sources if s.name == name), None)

    @property
    def stale_sources(self) -> list[SourceStatus]:
        return [s for s in self.sources if s.stale]

    def team_sheet(self, workspace: str | None) -> TeamSheet | None:
        """The sheet for ``workspace``, else the one for every workspace."""
        if workspace is not None and workspace in self.team_sheets:
            return self.team_sheets[workspace]
        return self.team_sheets.get(ANY_WORKSPACE)


def snapshot_id(taken_at: datetime) -> str:
    """A sortable id from the snapshot's time, to the microsecond (two refreshes in one
    second must not share an id)."""
    return taken_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S.%fZ")
