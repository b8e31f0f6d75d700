"""The order cards are offered in: each card sized, priced and timed, the best kept.

Ranking: live cards before end-of-life ones, and cards fit for training before those
marked not recommended (AMD/Intel, since bitsandbytes NF4 and fused optimizers are
CUDA-first; cards without BF16 tensor cores; cards without FlashAttention 2, i.e.
before Ampere). Then, when a dataset size is given, the cheapest option first with
time as the tie-break; for memory-only questions the detailed calculator's order:
closeness to 85% use (in 5-point steps, so near-equal cards tie), then fewer cards,
cost last.

A card is sized by :class:`engine.fit.Sizer`; with a dataset it is timed only when its
cost floor (:func:`run_seconds_floor`) could put it among the best.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from engine.choices import Mode, Sharding
from engine.compute import Compute, flat_gpu_seconds, tokens_per_second
from engine.constants import FIT_SLACK, RUN_STARTUP_S, USABLE_FRACTION
from engine.fit import Sizer, bills_machines, card_limit, not_recommended_reason, rented_cards
from engine.records import record
from engine.request import Request
from engine.specs import GpuSpec, gpus_of_memory
from engine.throughput import seconds_per_token_floor


@dataclass(frozen=True, slots=True)
class Card:
    """A GPU's figures that ranking needs, computed once per catalog."""

    gpu: GpuSpec
    capacity: float
    napkin_capacity: float
    price: float | None
    order: tuple[bool, bool]
    """(end of life, not recommended for training): the leading part of the sort key."""
    flagged: bool
    """Either of ``order``: the card ranks after every unflagged one."""
    most_cards: int
    """:func:`card_limit`."""


def cards(gpus: list[GpuSpec]) -> list[Card]:
    """The ranking table of ``gpus``: each card's capacity, order and limits, computed once
    per catalog."""
    table = []
    for g in gpus:
        order = (g.status != "live", not_recommended_reason(g) is not None)
        table.append(
            Card(
                gpu=g,
                capacity=g.capacity_gb,
                napkin_capacity=g.memory_gb,
                price=g.price_per_gpu_hour,
                order=order,
                flagged=order[0] or order[1],
                most_cards=card_limit(g),
            )
        )
    return table


def cards_of_memory(table: list[Card], memory_gb: float | None) -> list[Card]:
    """The cards of ``table`` a question that names a card by its memory (``24gb``)
    chooses from (:func:`engine.specs.gpus_of_memory`); ``table`` when none is named."""
    if memory_gb is None:
        return table
    chosen = {g.id for g in gpus_of_memory([c.gpu for c in table], memory_gb)}
    return [c for c in table if c.gpu.id in chosen]


def hourly_price(gpu: GpuSpec, override: float | None, spot: bool) -> float | None:
    """USD per GPU-hour: the price the user gave, else the card's spot price when spot is
    asked for and the card has one, else its on-demand price."""
    if override:
        return override
    if spot and gpu.spot_price_per_gpu_hour is not None:
        return gpu.spot_price_per_gpu_hour
    return gpu.price_per_gpu_hour


def user_price(request: Request, gpu: GpuSpec) -> float | None:
    """The USD per GPU-hour the user gave, where it is ``gpu``'s: the named card's rent
    when the request names a card (``4 a100s at $1.5/hr``), every card's when it names
    none. Charging a price said for an A100 on a B200 made the fastest card look cheap."""
    given = request.price_per_gpu_hour
    return given if request.gpu is None or request.gpu == gpu.id else None


def request_price(request: Request, gpu: GpuSpec) -> float | None:
    """USD per GPU-hour of ``gpu`` for ``request``: the price the user gave for it
    (:func:`user_price`), else its spot price when spot is asked for and it has one, else
    its on-demand price (the assumptions say when spot fell back to on-demand)."""
    return hourly_price(gpu, user_price(request, gpu), request.spot)


def request_bills_machines(request: Request, gpu: GpuSpec) -> bool:
    """Whether ``request``'s plans on ``gpu`` pay for the machines clouds rent: at the
    catalog's prices, not at a price the user gave for their own cards
    (:func:`engine.fit.bills_machines`)."""
    return bills_machines(user_price(request, gpu))


def run_seconds(
    work: Compute,
    gpu: GpuSpec,
    count: int,
    stage: Sharding,
    mode: Mode,
    offload: bool,
    nodes: int | None = None,
) -> float:
    """GPU-seconds of the whole run on ``count`` cards (inf without FLOPs)."""
    if work.flops is None or work.trained_tokens is None:
        return math.inf
    if work.workload is None:
        return flat_gpu_seconds(work, gpu, count, mode)
    rate, _ = tokens_per_second(work, gpu, count, stage, offload, nodes)
    return work.trained_tokens / rate + count * RUN_STARTUP_S


_Key = tuple[bool, bool, float, float, float]
_Ranked = tuple[_Key, int, Card, int, Sharding]
"""A card in the ranking: ``(sort key, catalog index, card, count, sharding)``."""
_Waiting = tuple[float, float | None, int, Card, int, Sharding]
"""A card waiting to be timed: ``(GPU-seconds floor, price per card used and hour,
catalog index, card, count, sharding)``."""
Choice = tuple[Card, int, Sharding]
"""A card choice: the card, how many, and how they share the state."""


@record
class Ranking:
    """The cards :func:`rank_cards` ranked for one footprint."""

    best: list[Choice]
    """The best ``keep``: cheapest first with a dataset size, else closest to 85% use."""
    fastest: Choice | None = None
    """The card with the shortest wall-clock at its count, among those on no more cards
    than the cheapest (asked for with a dataset size; None otherwise)."""


def run_seconds_floor(
    work: Compute, gpu: GpuSpec, count: int, stage: Sharding, mode: Mode
) -> float:
    """A lower bound of :func:`run_seconds` (GPU-seconds) that skips the step-time model:
    the trained tokens at :func:`seconds_per_token_floor`, plus the start-up (the flat
    rule, which has no model, exactly)."""
    if work.flops is None or work.trained_tokens is None:
        return 0.0  # untimed: run_seconds is inf
    if work.workload is None:
        return flat_gpu_seconds(work, gpu, count, mode)
    floor = work.trained_tokens * seconds_per_token_floor(work.workload, gpu, stage)
    return floor * (1.0 - FIT_SLACK) + count * RUN_STARTUP_S


def rank_cards(
    sizer: Sizer,
    table: list[Card],
    work: Compute,
    price_override: float | None,
    mode: Mode,
    keep: int,
    offload: bool = False,
    nodes: int | None = None,
    count: int | None = None,
    spot: bool = False,
    fastest: bool = False,
) -> Ranking:
    """The best ``keep`` cards for one footprint, and with ``fastest`` the one with the
    shortest wall-clock, each as ``(card, count, sharding)``.

    With a dataset size: cheapest first, then fastest (wall-clock). Without: closest
    to 85% use, then fewer cards, then hourly price (see the module docstring); nothing
    is timed, so there is no fastest. A ``count`` the user named (for no card in
    particular) keeps only the cards that hold the run at that count and are rented that
    many (:func:`card_limit`: 16 GeForce cards are two machines no cloud networks
    together), on no more of its machines than the ``nodes`` named (``2 nodes`` of
    one-GPU GH200 machines are 2 cards, not 16). This loop runs for every card on every
    estimate and what-if, so it is
    plain arithmetic plus at most one step-time evaluation per card (:func:`_timed_best`;
    the fastest reuses the cheapest's timings).
    """
    if keep < 1:
        return Ranking([])
    napkin = sizer.napkin_total is not None
    timed = work.flops is not None
    per_card_nodes = sizer.hsdp and not sizer.nodes  # hsdp's groups: each card's node
    ranked: list[_Ranked] = []
    # With a dataset, each card that holds the run waits with a floor of its time; cards
    # are timed cheapest floor first, until the next floor is above the ``keep``-th best.
    waiting: list[_Waiting] = []
    # Priced plans pay for the idle cards of a machine too (memory-only ones price nothing).
    bill = timed and bills_machines(price_override) and mode is Mode.DETAILED
    # Flagged cards sort after every other card, so they are sized and timed only when
    # fewer than ``keep`` of the others hold the run.
    for flagged in (False, True):
        if flagged and len(waiting if timed else ranked) >= keep:
            break
        for index, card in enumerate(table):
            if card.flagged is not flagged or (count is not None and (
                    count > card.most_cards
                    or (nodes and count > nodes * card.gpu.gpus_per_node))):
                continue  # past the card's limit, or more of its machines than named
            capacity = card.napkin_capacity if napkin else card.capacity
            cap = USABLE_FRACTION * capacity
            node = card.gpu.gpus_per_node if per_card_nodes else None
            gpu = card.gpu
            if count is None:
                limit = sizer.most_cards(gpu, card.most_cards) if sizer.hsdp else card.most_cards
                found = sizer.fewest_for(cap, limit, node)
                if found is not None and (sizer.machines or gpu.rent_step):
                    found = sizer.rentable(found, gpu, cap, node)
            elif gpu.rent_step and count % gpu.rent_step:
                continue  # not rented that many (GB200's trays of 4)
            else:
                found = sizer.at_count_for(cap, count, node)
            if found is None:
                continue
            n, stage, per_gpu = found
            price = hourly_price(gpu, price_override, spot)
            if bill and price is not None and (rented := rented_cards(n, gpu)) != n:
                price *= rented / n  # per card used: the idle cards' hours too
            if timed:
                floor = run_seconds_floor(work, card.gpu, n, stage, mode)
                waiting.append((floor, price, index, card, n, stage))
            else:
                closeness = round(abs(USABLE_FRACTION - per_gpu / capacity) / 0.05)
                hourly = math.inf if price is None else price * n
                key = (card.order[0], card.order[1], float(closeness), float(n), hourly)
                ranked.append((key, index, card, n, stage))
    if not waiting:
        ranked.sort()
        return Ranking([item[2:] for item in ranked[:keep]])
    timer = _Timer(work, mode, offload, nodes)
    ranked = _timed_best(waiting, timer, keep, by_time=False)
    ranked.sort()
    # The fastest of the priced cards on no more cards than the cheapest takes (a card's
    # speed, not a bigger cluster's); an unpriced one only where no card has a price.
    most = ranked[0][3] if ranked else 0
    priced = [w for w in waiting if w[1] is not None and w[4] <= most] or [
        w for w in waiting if w[4] <= most]
    quickest = _timed_best(priced, timer, 1, by_time=True) if fastest and priced else []
    return Ranking([item[2:] for item in ranked[:keep]],
                   min(quickest)[2:] if quickest else None)


class _Timer:
    """GPU-seconds of card choices (:func:`run_seconds`), each computed once per ranking."""

    __slots__ = ("mode", "nodes", "offload", "seconds", "work")

    def __init__(self, work: Compute, mode: Mode, offload: bool, nodes: int | None) -> None:
        self.work, self.mode, self.offload, self.nodes = work, mode, offload, nodes
        self.seconds: dict[int, float] = {}

    def __call__(self, index: int, gpu: GpuSpec, n: int, stage: Sharding) -> float:
        """GPU-seconds of catalog card ``index`` (``gpu``) on ``n`` cards (its one count
        in a ranking)."""
        hit = self.seconds.get(index)
        if hit is None:
            hit = run_seconds(self.work, gpu, n, stage, self.mode, self.offload, self.nodes)
            self.seconds[index] = hit
        return hit


def _timed_best(
    waiting: list[_Waiting],
    timer: _Timer,
    keep: int,
    by_time: bool,
) -> list[_Ranked]:
    """Ranking entries ``(key, index, card, count, sharding)`` for the cards ``waiting``
    to be timed, given as ``(GPU-seconds floor, hourly price, index, card, count,
    sharding)``: timed in order of their key's floor (the cost, or ``by_time`` the
    wall-clock), stopping where the next floor is above the ``keep``-th best timed key, so
    a card left untimed cannot be among the best ``keep`` (a floor never exceeds the time,
    :func:`run_seconds_floor`)."""
    floors: list[tuple[tuple[bool, bool, float], int]] = []
    for k, (floor, price, _, card, n, _) in enumerate(waiting):
        cost = math.inf if price is None else floor / 3600 * price
        first = floor / n if by_time else cost
        floors.append(((card.order[0], card.order[1], first), k))
    floors.sort()  # by floor, then place in the catalog's order
    ranked: list[_Ranked] = []
    best: list[_Key] = []  # the best keys, at most ``keep``
    for floor_key, k in floors:
        if len(best) == keep and floor_key > best[-1][:3]:
            break
        _, price, index, card, n, stage = waiting[k]
        seconds = timer(index, card.gpu, n, stage)
        cost = math.inf if price is None else seconds / 3600 * price
        first, second = (seconds / n, cost) if by_time else (cost, seconds / n)
        key = (card.order[0], card.order[1], first, second, float(n))
        ranked.append((key, index, card, n, stage))
        if len(best) < keep or key < best[-1]:
            bisect.insort(best, key)
            del best[keep:]
    return ranked
