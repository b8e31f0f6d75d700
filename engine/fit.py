"""Which cards hold a run, how many of them, and in what order to show them.

A run fits ``N`` cards when its per-GPU memory is at most 85% of a card's memory
(the napkin document's usable fraction; the rest goes to fragmentation and
allocator slack). Napkin mode uses the napkin rule verbatim:
``N = ceil(total / (0.85 · card memory))``.

Fit bands, by the share of card memory in use:

* ``sweet spot``: 60-85%, the card is well used;
* ``roomy``: 30-60%;
* ``oversized``: under 30%, a smaller card would do;
* ``too small``: over 85% at the count asked for (only shown for a named count).

Ranking, as the detailed calculator ranks its GPU table: live cards before
end-of-life ones and CUDA cards before AMD/Intel (marked not recommended for
training, since bitsandbytes NF4 and fused optimizers are CUDA-first); then
closeness to 85% use (in 5-point steps, so near-equal cards tie), then fewer
cards, and cost only as the final tie-break.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.compute import Compute, Timing, timing
from engine.constants import (
    BAND_GOOD,
    BAND_LOOSE,
    COMM_OVERHEAD,
    USABLE_FRACTION,
)
from engine.memory import Breakdown, Footprint
from engine.request import Mode, Sharding
from engine.specs import GpuSpec, label_capacity_gb

NO_TIMING = Timing(None, None, None, 0.0)

MAX_CARDS = 4096
"""Beyond this many cards we say the run does not fit (a cluster, not a rental)."""

FIT_SWEET = "sweet spot"
FIT_ROOMY = "roomy"
FIT_OVERSIZED = "oversized"
FIT_TOO_SMALL = "too small"


@dataclass(frozen=True, slots=True)
class Option:
    """One card choice: how many, how full, how long and how much."""

    gpu: GpuSpec
    count: int
    stage: Sharding
    memory: Breakdown
    price_per_gpu_hour: float | None
    timing: Timing
    capacity_gb: float = 0.0
    """Card memory the fit is judged against (true capacity; the label in napkin mode)."""
    named: bool = False
    needed: int | None = None
    """For a named count that is too small: how many cards would hold the run."""

    @property
    def per_gpu_gb(self) -> float:
        return self.memory.total

    @property
    def total_gb(self) -> float:
        return self.memory.total * self.count

    @property
    def utilization(self) -> float:
        return self.memory.total / self.capacity_gb

    @property
    def fits(self) -> bool:
        return self.utilization <= USABLE_FRACTION + 1e-9

    @property
    def band(self) -> str:
        return fit_band(self.utilization)

    @property
    def recommended_for_training(self) -> bool:
        return self.gpu.vendor == "NVIDIA"


def fit_band(utilization: float) -> str:
    """Name the band a memory share falls in (see the module docstring)."""
    if utilization > USABLE_FRACTION + 1e-9:
        return FIT_TOO_SMALL
    if utilization >= BAND_GOOD:
        return FIT_SWEET
    if utilization >= BAND_LOOSE:
        return FIT_ROOMY
    return FIT_OVERSIZED


def card_capacity(gpu: GpuSpec, napkin: bool) -> float:
    """GB a card offers: its true capacity, or its label under the napkin rules."""
    return label_capacity_gb(gpu.memory_gb, napkin)


def resolve_stage(requested: Sharding, count: int) -> Sharding:
    """``auto`` is no sharding on one card and ZeRO-3 on several."""
    if requested is Sharding.AUTO:
        return Sharding.NONE if count == 1 else Sharding.ZERO3
    return requested


class Sizer:
    """Finds the fewest cards of any GPU that hold one footprint.

    Per-GPU memory is ``fixed + sharded / N`` on several cards, so the per-card
    work is a little arithmetic; the footprint is split once per request.
    """

    __slots__ = ("fixed", "multi", "napkin_total", "one", "one_stage", "sharded")

    def __init__(self, fp: Footprint, requested: Sharding, offload: bool) -> None:
        self.one_stage = resolve_stage(requested, 1)
        self.multi = resolve_stage(requested, 2)
        self.napkin_total = fp.total if fp.napkin else None
        self.one = fp.per_gpu(self.one_stage, 1, offload).total
        if self.multi is Sharding.NONE or fp.napkin:
            self.fixed, self.sharded = self.one, 0.0
        else:
            self.fixed, self.sharded = fp.split(self.multi, offload)

    def fewest(self, gpu: GpuSpec) -> tuple[int, Sharding, float] | None:
        """``(count, sharding, per-GPU GB)`` for the fewest cards that fit, or None."""
        return self.fewest_for(USABLE_FRACTION * card_capacity(gpu, self.napkin_total is not None))

    def fewest_for(self, cap: float) -> tuple[int, Sharding, float] | None:
        """As :meth:`fewest`, for a card offering ``cap`` usable GB."""
        if self.napkin_total is not None:
            n = max(1, math.ceil(self.napkin_total / cap - 1e-12))
            if n > MAX_CARDS:
                return None
            return n, resolve_stage(self.one_stage, n), self.napkin_total / n
        if self.one <= cap:
            return 1, self.one_stage, self.one
        if self.sharded <= 0 or self.fixed >= cap:
            return None
        n = max(2, math.ceil(self.sharded / (cap - self.fixed) - 1e-12))
        while n <= MAX_CARDS and self.fixed + self.sharded / n > cap:
            n += 1  # guards float rounding at the boundary
        if n > MAX_CARDS:
            return None
        return n, self.multi, self.fixed + self.sharded / n


@dataclass(frozen=True, slots=True)
class Card:
    """A GPU's figures that ranking needs, computed once per catalog."""

    gpu: GpuSpec
    capacity: float
    napkin_capacity: float
    flops_per_second: float
    price: float | None
    comm_overhead: float
    order: tuple[bool, bool]
    """(end of life, not NVIDIA): the leading part of the sort key."""


def cards(gpus: list[GpuSpec]) -> list[Card]:
    return [
        Card(
            gpu=g,
            capacity=g.capacity_gb,
            napkin_capacity=g.memory_gb,
            flops_per_second=g.train_tflops * 1e12,
            price=g.price_per_gpu_hour,
            comm_overhead=COMM_OVERHEAD[g.fabric],
            order=(g.status != "live", g.vendor != "NVIDIA"),
        )
        for g in gpus
    ]


def rank_cards(
    sizer: Sizer,
    table: list[Card],
    work: Compute,
    price_override: float | None,
    mode: Mode,
    keep: int,
) -> list[tuple[Card, int, Sharding]]:
    """The best ``keep`` cards for one footprint, as ``(card, count, sharding)``.

    The same rule as :func:`rank_key`, inlined: this loop runs for every card on
    every estimate and what-if, so it is plain arithmetic.
    """
    napkin = sizer.napkin_total is not None
    flops, mfu = work.flops, work.mfu_effective
    ranked: list[tuple[tuple[bool, bool, int, int, float], int, Card, int, Sharding]] = []
    for index, card in enumerate(table):
        capacity = card.napkin_capacity if napkin else card.capacity
        found = sizer.fewest_for(USABLE_FRACTION * capacity)
        if found is None:
            continue
        count, stage, per_gpu = found
        price = price_override or card.price
        if price is None:
            cost = math.inf
        elif flops is None:
            cost = price * count
        else:
            overhead = card.comm_overhead if count > 1 and mode is Mode.DETAILED else 0.0
            cost = flops / (card.flops_per_second * mfu) / 3600 * (1 + overhead) * price
        closeness = round(abs(USABLE_FRACTION - per_gpu / capacity) / 0.05)
        key = (card.order[0], card.order[1], closeness, count, cost)
        ranked.append((key, index, card, count, stage))
    if keep == 1:
        return [min(ranked)[2:]] if ranked else []
    ranked.sort()
    return [item[2:] for item in ranked[:keep]]


def fewest_cards(
    fp: Footprint, gpu: GpuSpec, requested: Sharding, offload: bool
) -> tuple[int, Sharding] | None:
    """The fewest cards of ``gpu`` that hold the run, with the sharding used there.

    None when no count up to ``MAX_CARDS`` does (e.g. the unsharded part alone is
    larger than the card, or sharding is ``none`` and one card is too small).
    """
    found = Sizer(fp, requested, offload).fewest(gpu)
    return None if found is None else (found[0], found[1])


def make_option(
    fp: Footprint,
    gpu: GpuSpec,
    count: int,
    stage: Sharding,
    work: Compute,
    price: float | None,
    mode: Mode,
    offload: bool,
    named: bool = False,
    needed: int | None = None,
) -> Option:
    memory = fp.per_gpu(stage, count, offload)
    capacity = card_capacity(gpu, fp.napkin)
    fits = memory.total <= USABLE_FRACTION * capacity + 1e-9
    # Time and cost of a run that cannot start are left out, not guessed.
    cost = timing(work, gpu, count, price, mode) if fits else NO_TIMING
    return Option(gpu, count, stage, memory, price, cost, capacity, named, needed)


def rank_key(
    gpu: GpuSpec,
    count: int,
    utilization: float,
    cost: float | None,
    price: float | None,
) -> tuple[bool, bool, int, int, float]:
    """Sort key implementing the ranking rule in the module docstring.

    ``cost`` is the run's cost when a dataset size is known; otherwise the
    hourly price of the cards breaks the tie.
    """
    closeness = round(abs(USABLE_FRACTION - utilization) / 0.05)
    if cost is None:
        cost = math.inf if price is None else price * count
    return (gpu.status != "live", gpu.vendor != "NVIDIA", closeness, count, cost)


def option_key(option: Option) -> tuple[bool, bool, int, int, float]:
    return rank_key(
        option.gpu,
        option.count,
        option.utilization,
        option.timing.cost_usd,
        option.price_per_gpu_hour,
    )


def rank(options: list[Option]) -> list[Option]:
    """Options in display order; a named card (if any) leads."""
    named = [o for o in options if o.named]
    rest = sorted((o for o in options if not o.named), key=option_key)
    return named + rest
