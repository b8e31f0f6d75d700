"""Budgets and deadlines (issue 16: ``under $500``, ``within 2 days``): which card
options meet them, in what order, and what to do when none does.

An option here is any count of a catalog card from the fewest that hold the run up to
``MAX_CLUSTER_NODES`` of its nodes (``GpuSpec.gpus_per_node`` cards each; or the nodes
the request names): every count up to one node, then whole nodes. More cards shorten
the wall-clock and, through communication, usually cost a little more, so for each
card the options worth showing are the cheapest count that meets a deadline and the
fastest count that stays within a budget; every count is evaluated with the estimate's
own time model (:func:`engine.fit.make_option`), none is extrapolated.

Ranking: by cost when a deadline is given (the cheapest way to be done in time), by
wall-clock under a budget alone (the fastest run the money buys). When no option meets
them, the closest are kept instead: each card's option that misses them by the least
(:func:`shortfall`: the cost over the budget, the time over the deadline, the larger of
the two as a multiple of its limit), closest first, with each card's cheapest beside them
under a deadline (what the time would cost at least), and each other method is tried for
the cheapest option that does meet them ("QLoRA on 4x L40S: $410, 1.6 d").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.accuracy import uncertainty
from engine.choices import Method, Mode
from engine.collectives import named_node_cards
from engine.compute import Compute, compute
from engine.constants import (
    FIT_SLACK,
    GPUS_PER_NODE,
    MAX_CLUSTER_NODES,
    NODE_STEP_PAST_CLUSTER,
)
from engine.fit import (
    MAX_CARDS,
    Option,
    Sizer,
    auto_sharded,
    card_limit,
    make_option,
    not_recommended_reason,
    replica_fits,
    resolve_stage,
)
from engine.memory import Footprint, footprint
from engine.ranking import request_bills_machines, request_price
from engine.request import Request
from engine.specs import Catalog, GpuSpec, ModelSpec, gpus_of_memory

DIMINISHING_RETURNS = 1.10
"""Under a budget alone, a card's option is its smallest count within 10% of the fastest
wall-clock the budget buys on it: past that, more cards buy little time."""


@dataclass(frozen=True, slots=True)
class Suggestion:
    """Another method whose cheapest option meets the limits."""

    method: Method
    option: Option


@dataclass(frozen=True, slots=True)
class Constrained:
    """The card options under a budget and/or a deadline."""

    budget_usd: float | None
    deadline_hours: float | None
    met: bool
    """True when at least one option meets every limit given."""
    options: list[Option]
    """Options meeting the limits, ranked; when none does, the closest ones."""
    suggestions: tuple[Suggestion, ...] = ()
    """When none meets them: other methods that do, each with its cheapest option."""
    closest: tuple[Option, ...] = ()
    """When none meets them: each card's option that misses them by the least
    (:func:`shortfall`), closest first; :attr:`options` shows them with each card's
    cheapest."""
    timed: bool = True
    """False when the question gave no dataset size, so nothing can be timed or costed."""

    @property
    def by_cost(self) -> bool:
        """Ranked by cost (a deadline is given), else by wall-clock."""
        return self.deadline_hours is not None

    def to_json(self) -> dict[str, Any]:
        """The ``"constraints"`` member of the estimate document (docs/questions.md)."""
        return {
            "budget_usd": self.budget_usd,
            "deadline_hours": self.deadline_hours,
            "met": self.met,
            "timed": self.timed,
            "ranked_by": "cost" if self.by_cost else "wall_hours",
            "suggestions": [
                {
                    "method": s.method.value,
                    "gpu": s.option.gpu.id,
                    "count": s.option.count,
                    "cost_usd": _r(s.option.timing.cost_usd, 2),
                    "wall_hours": _r(s.option.timing.wall_hours, 3),
                }
                for s in self.suggestions
            ],
        }


def _r(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def meets(option: Option, budget: float | None, deadline: float | None) -> bool:
    """Whether ``option`` fits its cards and stays within the budget and the deadline."""
    t = option.timing
    if not (option.fits or (option.named and option.runs)) or t.wall_hours is None:
        return False  # a count the user named may run in the tight band, as the headline
    if budget is not None and (t.cost_usd is None or t.cost_usd > budget * (1 + FIT_SLACK)):
        return False
    return deadline is None or t.wall_hours <= deadline * (1 + FIT_SLACK)


def shortfall(option: Option, budget: float | None, deadline: float | None) -> float:
    """How far ``option`` misses the limits, as a multiple of each: its cost over the
    budget and its wall-clock over the deadline, the larger of the two (1.0 or less: it
    meets them); infinite when it is not timed."""
    t = option.timing
    ratios = [1.0]
    if budget is not None:
        ratios.append(float("inf") if t.cost_usd is None else t.cost_usd / budget)
    if deadline is not None:
        ratios.append(float("inf") if t.wall_hours is None else t.wall_hours / deadline)
    return max(ratios)


def counts(fewest: int, most: int, per_node: int = GPUS_PER_NODE) -> list[int]:
    """Card counts to try: every count up to one node of ``per_node`` cards, then whole
    nodes up to ``MAX_CLUSTER_NODES``, and past that every ``NODE_STEP_PAST_CLUSTER``-th
    larger whole-node count, up to ``most``: a few dozen counts per card, whatever was
    named."""
    out = [n for n in range(fewest, min(per_node, most) + 1)]
    start = max(2, -(-fewest // per_node))  # whole nodes above the first
    last = most // per_node
    k = start
    while k <= last:
        out.append(k * per_node)
        k = k + 1 if k < MAX_CLUSTER_NODES else max(k + 1, int(k * NODE_STEP_PAST_CLUSTER))
    if fewest > per_node and fewest % per_node and fewest <= most:
        out.append(fewest)
    return sorted(set(out))


def _most_cards(request: Request, per_node: int) -> int:
    """The most cards tried: the nodes named (else ``MAX_CLUSTER_NODES``) of ``per_node``
    cards, and never past ``MAX_CARDS``, the most any card is sized for."""
    nodes = request.nodes or MAX_CLUSTER_NODES
    return min(nodes * per_node, MAX_CARDS)


def card_options(
    fp: Footprint, work: Compute, request: Request, gpu: GpuSpec
) -> Iterable[Option]:
    """Every count of ``gpu`` worth trying, fewest first, each built with the estimate's
    time model (a count the request names alone, where it holds the run)."""
    found = Sizer(fp, request.sharding, request.offload).fewest(gpu)
    if found is None:
        return
    price = request_price(request, gpu)
    billed = request_bills_machines(request, gpu)
    per_node = named_node_cards(request) or gpu.gpus_per_node
    replicas = replica_fits(fp, gpu, request.offload)  # the card's, whatever the count
    most = min(_most_cards(request, per_node), card_limit(gpu))
    tried = counts(found[0], most, per_node)
    if request.gpu_count is not None:
        # A named count is the plan, judged as the headline judges it (the tight band and
        # the memory band's margin); where it cannot hold the run, the fewest that can.
        named = request.gpu_count
        if named % fp.card_step == 0 and named <= most:
            stage = resolve_stage(request.sharding, named, fp.tensor_parallel, replicas,
                                  auto_sharded(fp))
            option = make_option(
                fp, gpu, named, stage, work, price, request.mode, request.offload,
                named=True, nodes=request.nodes, margin=uncertainty(request).memory,
                billed=billed,
            )
            if option.runs:
                yield option
                return
        tried = [found[0]]
    for n in tried:
        if n % fp.card_step:
            continue  # not whole tensor-parallel groups and context-parallel rings
        stage = resolve_stage(request.sharding, n, fp.tensor_parallel, replicas,
                              auto_sharded(fp))
        yield make_option(
            fp, gpu, n, stage, work, price, request.mode, request.offload, nodes=request.nodes,
            billed=billed,
        )


def _rank_key(option: Option, by_cost: bool) -> tuple[bool, float, float]:
    t = option.timing
    cost = t.cost_usd if t.cost_usd is not None else float("inf")
    wall = t.wall_hours if t.wall_hours is not None else float("inf")
    unfit = not_recommended_reason(option.gpu) is not None or option.gpu.status != "live"
    return (unfit, cost, wall) if by_cost else (unfit, wall, cost)


def _best_per_card(
    fp: Footprint, work: Compute, request: Request, gpus: Iterable[GpuSpec], by_cost: bool
) -> tuple[list[Option], list[Option]]:
    """(the best option meeting the limits on each card, every option tried)."""
    budget, deadline = request.budget_usd, request.deadline_hours
    best: list[Option] = []
    tried: list[Option] = []
    for gpu in gpus:
        options = list(card_options(fp, work, request, gpu))
        tried += options
        good = [o for o in options if meets(o, budget, deadline)]
        if good and request.mode is Mode.NAPKIN:
            # The napkin rules cost the same on any count and shorten the wall-clock with
            # every card: the fewest cards that meet the limits, as the estimate plans.
            best.append(min(good, key=lambda o: o.count))
        elif good and by_cost:
            best.append(min(good, key=lambda o: _rank_key(o, True)))
        elif good:
            fastest = min(o.timing.wall_hours or 0.0 for o in good) * DIMINISHING_RETURNS
            near = [o for o in good if (o.timing.wall_hours or 0.0) <= fastest]
            best.append(min(near, key=lambda o: o.count))
    best.sort(key=lambda o: _rank_key(o, by_cost))
    return best, tried


def _per_card(options: list[Option], by_cost: bool) -> list[Option]:
    """Each card's best option by cost (or wall-clock), ranked."""
    best: dict[str, Option] = {}
    for o in options:
        held = best.get(o.gpu.id)
        if held is None or _rank_key(o, by_cost)[1:] < _rank_key(held, by_cost)[1:]:
            best[o.gpu.id] = o
    return sorted(best.values(), key=lambda o: _rank_key(o, by_cost))


def _closest(
    tried: list[Option], request: Request, keep: int
) -> tuple[list[Option], list[Option]]:
    """When nothing meets the limits: ``(the options shown, the closest)``. The closest
    are each card's option that misses them by the least (:func:`shortfall`), closest
    first; under a deadline each card's cheapest is shown beside them (and with a budget
    too, each card's fastest), alternating, without repeats."""
    budget, deadline = request.budget_usd, request.deadline_hours
    timed = [o for o in tried if o.fits and o.timing.wall_hours is not None]
    nearest: dict[str, Option] = {}
    for o in timed:
        held = nearest.get(o.gpu.id)
        if held is None or _near_key(o, budget, deadline) < _near_key(held, budget, deadline):
            nearest[o.gpu.id] = o
    closest = sorted(nearest.values(), key=lambda o: _near_key(o, budget, deadline))
    lists = [closest]
    if deadline is not None:
        lists.append(_per_card(timed, True))
        if budget is not None:
            lists.append(_per_card(timed, False))
    out: list[Option] = []
    for i in range(keep):
        for ranked in lists:
            if i < len(ranked) and all(ranked[i] is not o for o in out):
                out.append(ranked[i])
    return out[:keep], closest[:keep]


def _near_key(
    option: Option, budget: float | None, deadline: float | None
) -> tuple[bool, float, float, float]:
    """Closest to the limits first (:func:`shortfall`), cards fit for training before
    the others, then by cost (under a deadline) or wall-clock."""
    rank = _rank_key(option, deadline is not None)
    return (rank[0], shortfall(option, budget, deadline), rank[1], rank[2])


def _gpus(request: Request, catalog: Catalog) -> list[GpuSpec]:
    """The cards the limits choose among: the one named, or those of the memory named
    (``24gb``: :func:`engine.specs.gpus_of_memory`), or every card."""
    if request.gpu is not None:
        return [catalog.gpu(request.gpu)]
    gpus = list(catalog.gpus.values())
    if request.gpu_memory_gb is None:
        return gpus
    return gpus_of_memory(gpus, request.gpu_memory_gb)


def constrain(
    request: Request, model: ModelSpec, catalog: Catalog, fp: Footprint, work: Compute,
    keep: int,
) -> Constrained:
    """The options of ``request`` (framework defaults applied) that meet its budget and
    deadline, best ``keep`` first; the closest ones and the methods that would make it
    when none does. Without a dataset size nothing is timed: the options are left to the
    estimate (``timed`` False)."""
    budget, deadline = request.budget_usd, request.deadline_hours
    by_cost = deadline is not None
    if work.flops is None:
        return Constrained(budget, deadline, False, [], timed=False)
    gpus = _gpus(request, catalog)
    best, tried = _best_per_card(fp, work, request, gpus, by_cost)
    if best:
        return Constrained(budget, deadline, True, best[:keep])
    suggestions: list[Suggestion] = []
    for method in (Method.QLORA, Method.LORA, Method.FULL):
        if method is request.effective_method:
            continue
        variant = request.with_method(method)
        vfp = footprint(model.architecture, variant)
        vwork = compute(model.active_params, variant, model.architecture)
        found, _ = _best_per_card(vfp, vwork, variant, gpus, True)
        if found:
            suggestions.append(Suggestion(method, found[0]))
    suggestions.sort(key=lambda s: _rank_key(s.option, by_cost))
    shown, closest = _closest(tried, request, keep)
    return Constrained(budget, deadline, False, shown, tuple(suggestions), closest=tuple(closest))


__all__ = [
    "Constrained", "Suggestion", "card_options", "constrain", "counts", "meets", "shortfall",
]
