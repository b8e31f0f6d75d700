"""``fewest cards`` under a budget or deadline (issue 16): the fewest cards that meet
them, not only hold the run (``fewest cards 70b full h100 100M tokens within 2 hours``:
the 19 H100s that hold a 70B full fine-tune take 5.2 h; the fewest that finish in time
are the answer).

The counts tried and their times are the budget search's own
(:func:`engine.constraints.card_options`: every count from the fewest that hold the run
up to one node, then whole nodes, each timed with the estimate's model), read fewest
first; the first that meets the limits (:func:`engine.constraints.meets`) is the answer.
What would lower it is judged the same way: each change of :func:`engine.solve.solve`'s
list, and the bigger card, at the fewest of its cards that meet the limits.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.choices import Solve
from engine.compute import Compute, compute
from engine.constraints import card_options, meets, shortfall
from engine.fit import Option, card_limit, count_on_card, make_option, not_recommended_reason
from engine.memory import Footprint, footprint
from engine.ranking import request_bills_machines, request_price
from engine.request import Request
from engine.solve import Raise, Solution, Within, _setting_raises, bigger_card
from engine.specs import Catalog, GpuSpec, ModelSpec, gpus_of_memory


def limited(request: Request) -> bool:
    """Whether ``request`` asks for ``fewest cards`` under a budget or deadline with a
    dataset size to time it (the limits can decide the count)."""
    return (
        request.solve is Solve.GPU_COUNT
        and (request.budget_usd is not None or request.deadline_hours is not None)
        and request.trained_tokens is not None
    )


def fewest_meeting(
    request: Request, model: ModelSpec, gpu: GpuSpec, work: Compute | None = None,
) -> tuple[Option | None, Option | None]:
    """``(the fewest cards of gpu that meet the limits, the count tried just below it)``;
    without an answer ``(None, the closest count tried)``, and ``(None, None)`` when no
    count holds the run. The request's own count, if any, is not kept: every count is
    tried."""
    free = request.model_copy(update={"gpu_count": None, "gpu": gpu.id})
    fp = footprint(model.architecture, free)
    work = work or compute(model.active_params, free, model.architecture)
    budget, deadline = free.budget_usd, free.deadline_hours
    below: Option | None = None
    closest: Option | None = None
    for option in card_options(fp, work, free, gpu):
        if meets(option, budget, deadline):
            return option, below
        below = option
        if option.fits and (closest is None or shortfall(option, budget, deadline)
                            < shortfall(closest, budget, deadline)):
            closest = option
    return None, closest


def _cards(solution: Solution, catalog: Catalog) -> list[GpuSpec]:
    """The cards the answer is for: the one named (or the reference card), else those of
    the memory named (``24gb``: :func:`engine.specs.gpus_of_memory`, as the plan)."""
    t = solution.target
    if t.gpu is not None:
        return [t.gpu]
    return gpus_of_memory(list(catalog.gpus.values()), t.label_gb)


def _preferred(option: Option) -> tuple[bool, int, float]:
    """Cards fit for training first (live, recommended), then fewer cards, then cost."""
    unfit = not_recommended_reason(option.gpu) is not None or option.gpu.status != "live"
    return unfit, option.count, option.timing.cost_usd or float("inf")


def _fewest_on(
    request: Request, model: ModelSpec, gpus: list[GpuSpec]
) -> tuple[Option | None, Option | None]:
    """:func:`fewest_meeting` over ``gpus``: the fewest cards of any of them, with the
    count below it on that card; without one, the closest over them all."""
    best: tuple[Option, Option | None] | None = None
    closest: Option | None = None
    budget, deadline = request.budget_usd, request.deadline_hours
    for gpu in gpus:
        found, other = fewest_meeting(request, model, gpu)
        if found is not None:
            if best is None or _preferred(found) < _preferred(best[0]):
                best = (found, other)
        elif other is not None and (closest is None or shortfall(other, budget, deadline)
                                    < shortfall(closest, budget, deadline)):
            closest = other
    return best if best is not None else (None, closest)


def within_limits(
    solution: Solution, request: Request, model: ModelSpec, catalog: Catalog
) -> Solution:
    """``solution`` to ``fewest cards`` moved to the fewest cards that meet the request's
    budget or deadline (:func:`fewest_meeting`), with the changes that would lower that
    count; ``solution`` itself without limits or a dataset size, or when no count holds
    the run at all."""
    if not limited(request) or solution.value is None:
        return solution
    gpus = _cards(solution, catalog)
    found, below = _fewest_on(request, model, gpus)
    within = Within(request.budget_usd, request.deadline_hours, int(solution.value), below,
                    max(card_limit(g) for g in gpus))
    raises = _raises(request, model, catalog, solution, found)
    if found is None:
        update = {k: v for k, v in solution.update.items() if k != "gpu_count"}
        return replace(solution, value=None, memory=None, next_value=None, next_gb=None,
                       raises=raises, update=update, within=within)
    return replace(
        solution, value=found.count, memory=found.memory,
        next_value=None if below is None else below.count,
        next_gb=None if below is None else below.memory.total,
        raises=raises, update={**solution.update, "gpu_count": found.count}, within=within,
    )


def _raises(
    request: Request, model: ModelSpec, catalog: Catalog, solution: Solution,
    found: Option | None,
) -> tuple[Raise, ...]:
    """Each change that meets the limits on fewer cards than ``found`` (or at all, when
    nothing does), with that count."""
    gpus = _cards(solution, catalog)
    out: list[Raise] = []
    tries: list[tuple[str, dict[str, Any], list[GpuSpec]]] = [
        (change, update, gpus) for change, update in _setting_raises(request)
    ]
    bigger = bigger_card(solution.target, catalog)
    if bigger is not None:
        tries.append((bigger.name, {}, [bigger]))
    for change, update, cards in tries:
        new, _ = _fewest_on(request.model_copy(update=update), model, cards)
        if new is not None and (found is None or new.count < found.count):
            gpu = solution.target.gpu.id if solution.target.gpu is not None else None
            out.append(Raise(change, new.count, update, gpu if update else new.gpu.id,
                             new.count))
    return tuple(out)


def fewest_row(
    variant: Request, model: ModelSpec, fp: Footprint, work: Compute, gpu: GpuSpec
) -> Option | None:
    """A what-if row of a ``fewest cards`` answer: ``variant`` on its own fewest cards of
    ``gpu``, as the answer's "Fewer cards with" note counts them (LoRA on 3 H100s beside a
    full fine-tune on 19): the fewest that meet the limits where the question has some and
    a count does, else the fewest that hold it, not rounded up to machines, as the answer
    is not. None when no count of ``gpu`` holds it."""
    if limited(variant):
        met, _ = fewest_meeting(variant, model, gpu, work)
        if met is not None:
            return met
    found = count_on_card(fp, gpu, variant.sharding, variant.offload, None)
    if found is None:
        return None
    return make_option(
        fp, gpu, found[0], found[1], work, request_price(variant, gpu), variant.mode,
        variant.offload, nodes=variant.nodes, billed=request_bills_machines(variant, gpu),
    )


__all__ = ["fewest_meeting", "fewest_row", "limited", "within_limits"]
