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
from engine.constants import BAND_GOOD, BAND_LOOSE, USABLE_FRACTION
from engine.memory import Breakdown, Footprint
from engine.request import Mode, Sharding
from engine.specs import GpuSpec

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
        return self.memory.total / self.gpu.memory_gb

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


def resolve_stage(requested: Sharding, count: int) -> Sharding:
    """``auto`` is no sharding on one card and ZeRO-3 on several."""
    if requested is Sharding.AUTO:
        return Sharding.NONE if count == 1 else Sharding.ZERO3
    return requested


def fewest_cards(
    fp: Footprint, gpu: GpuSpec, requested: Sharding, offload: bool
) -> tuple[int, Sharding] | None:
    """The fewest cards of ``gpu`` that hold the run, with the sharding used there.

    None when no count up to ``MAX_CARDS`` does (e.g. the unsharded part alone is
    larger than the card, or sharding is ``none`` and one card is too small).
    """
    cap = USABLE_FRACTION * gpu.memory_gb
    if fp.napkin:
        n = max(1, math.ceil(fp.total / cap - 1e-12))
        return (n, resolve_stage(requested, n)) if n <= MAX_CARDS else None
    one_stage = resolve_stage(requested, 1)
    if fp.per_gpu(one_stage, 1, offload).total <= cap:
        return 1, one_stage
    multi = resolve_stage(requested, 2)
    if multi is Sharding.NONE:
        return None
    fixed, sharded = fp.split(multi, offload)
    if fixed >= cap or sharded <= 0:
        return None
    n = max(2, math.ceil(sharded / (cap - fixed) - 1e-12))
    while n <= MAX_CARDS and fp.per_gpu(multi, n, offload).total > cap:
        n += 1  # guards float rounding at the boundary
    return (n, multi) if n <= MAX_CARDS else None


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
    fits = memory.total <= USABLE_FRACTION * gpu.memory_gb + 1e-9
    # Time and cost of a run that cannot start are left out, not guessed.
    cost = timing(work, gpu, count, price, mode) if fits else NO_TIMING
    return Option(gpu, count, stage, memory, price, cost, named, needed)


def rank_key(option: Option) -> tuple[int, int, int, int, float]:
    """Sort key implementing the ranking rule in the module docstring."""
    closeness = round(abs(USABLE_FRACTION - option.utilization) / 0.05)
    cost = option.timing.cost_usd
    if cost is None:
        price = option.price_per_gpu_hour
        cost = math.inf if price is None else price * option.count
    return (
        option.gpu.status != "live",
        not option.recommended_for_training,
        closeness,
        option.count,
        cost,
    )


def rank(options: list[Option]) -> list[Option]:
    """Options in display order; a named card (if any) leads."""
    named = [o for o in options if o.named]
    rest = sorted((o for o in options if not o.named), key=rank_key)
    return named + rest
