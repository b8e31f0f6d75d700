"""Questions that solve for a limit: the longest sequence, the largest micro-batch, the
largest model or the fewest cards that fit a card (issue 16: ``max seq 8b qlora rtx-4090``,
``max batch 8b lora seq 4096 h100``, ``largest model qlora 24gb``, ``fewest cards 70b full
h100``).

Every answer comes from the engine's own memory model, never a second formula: the
per-GPU memory of :func:`engine.memory.footprint` spread by ``Footprint.per_gpu`` exactly
as :func:`engine.estimate` spreads it, compared with the 85% planning line
(``USABLE_FRACTION``) of the card's true capacity (its label read as GiB; the label itself
in napkin mode). Memory grows with sequence length and micro-batch, so those are found by
bisection over the allowed steps (multiples of ``SOLVE_SEQ_STEP``; whole batches); the
model is the largest catalog model that fits, by total parameters, every candidate
evaluated (architectures differ, so size alone does not order memory); the count is
:meth:`engine.fit.Sizer.fewest_for`, the estimate's own sizing.

The card is the one named, else a card memory (``24gb``, read as a label like the
catalog's "24 GB"), else ``SOLVE_REFERENCE_GPU``, and the reply says which. The count is the
one named; without one, one card where one card holds the question's smallest step (a
256-token sequence, a micro-batch of 1; any model), else the fewest that hold it, on the
machines the estimate rents when the run is priced (:func:`solve_count`): the count the
estimate below the answer plans on, so the answer and the priced plan name one cluster.
With a budget or deadline that count is kept for the plan (``Solution.update``), which
would otherwise choose its own. A model with a learned position table (GPT-2, OPT) stops
the sequence at its rows. GB = 10^9 bytes throughout.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from engine.choices import Method, Mode, ModelPick, Sharding, Solve
from engine.constants import (
    BIGGER_CARD_FACTOR,
    FIT_SLACK,
    MAX_MICRO_BATCH,
    MAX_SEQ_LEN,
    SOLVE_REFERENCE_GPU,
    SOLVE_SEQ_STEP,
    USABLE_FRACTION,
)
from engine.fit import (
    MAX_CARDS,
    Option,
    Sizer,
    auto_sharded,
    card_limit,
    not_recommended_reason,
    resolve_stage,
    stage_on,
)
from engine.memory import Breakdown, Footprint, footprint
from engine.profiles import resolve
from engine.request import Request
from engine.specs import Catalog, GpuSpec, ModelSpec, label_capacity_gb

Value = int | str
"""A solved value: a sequence length, a micro-batch or a count (int), or a model id."""


@dataclass(frozen=True, slots=True)
class Target:
    """The card a limit is solved for: a catalog card, or a card memory alone."""

    gpu: GpuSpec | None
    """The catalog card; None when the question gave only a memory (``24gb``)."""
    label_gb: float
    """Memory as labelled ("24 GB"), GB."""
    capacity_gb: float
    """True capacity the fit is judged against, GB (the label read as GiB; the label
    itself in napkin mode), as ``engine.fit.card_capacity``."""
    count: int
    """Cards the run is spread over: the count named, else :func:`solve_count`'s."""
    named: bool = True
    """False when no card was named and the reference card stands in."""
    count_named: bool = True
    """False when the question named no count and :func:`solve_count` chose it."""

    @property
    def usable_gb(self) -> float:
        """The 85% planning line on one card, GB."""
        return USABLE_FRACTION * self.capacity_gb

    @property
    def name(self) -> str:
        """``RTX 4090`` or ``24 GB card``."""
        return self.gpu.name if self.gpu is not None else f"{self.label_gb:g} GB card"

    def holds(self, per_gpu_gb: float) -> bool:
        """Within the planning line, with the same tolerance as ``Option.fits``."""
        return per_gpu_gb / self.capacity_gb <= USABLE_FRACTION + FIT_SLACK


@dataclass(frozen=True, slots=True)
class Raise:
    """A change that raises the limit, and the limit with it."""

    change: str
    """What to change, worded for the reply ("QLoRA", "gradient checkpointing", "1x H200")."""
    value: Value
    update: dict[str, Any]
    """The request fields the change sets (empty for a different card)."""
    gpu: str | None
    """The card the new limit is for (the same one unless the change is a card)."""
    count: int


@dataclass(frozen=True, slots=True)
class Within:
    """``fewest cards`` under a budget or deadline (``engine.solve_limits``): the fewest
    cards that meet it, not only hold the run."""

    budget_usd: float | None
    deadline_hours: float | None
    in_memory: int
    """The fewest cards that hold the run in memory (the answer without the limits)."""
    below: Option | None
    """With an answer: the largest count tried below it, which misses the limits (None
    when the answer is :attr:`in_memory`). Without one: the closest count tried."""
    most: int
    """The most cards tried."""


@dataclass(frozen=True, slots=True)
class Solution:
    """The answer to a limit question, with the step that does not fit."""

    goal: Solve
    target: Target
    value: Value | None
    """The largest sequence/batch/model or the fewest cards that fit; None: nothing does
    (even the smallest step, or no count up to ``engine.fit.MAX_CARDS``)."""
    memory: Breakdown | None
    """Per-GPU memory at :attr:`value` on the target card, GB."""
    next_value: Value | None
    """The next step that does not fit: one step up (``seq + 256``, ``batch + 1``, the
    next larger model), or for a count one card fewer; None when there is none."""
    next_gb: float | None
    """Per-GPU memory at :attr:`next_value`, GB."""
    raises: tuple[Raise, ...] = ()
    notes: tuple[str, ...] = ()
    update: dict[str, Any] = field(default_factory=dict)
    """The request fields that put the estimate at the answer's setting."""
    within: Within | None = None
    """``fewest cards`` under a budget or deadline: how the limits moved the answer."""

    def to_json(self) -> dict[str, Any]:
        """The ``"solve"`` member of the estimate document (docs/questions.md)."""
        t = self.target
        extra: dict[str, Any] = {}
        if self.within is not None:
            b = self.within.below
            extra["within_limits"] = {
                "fewest_in_memory": self.within.in_memory,
                "below": None if b is None else {
                    "gpu_count": b.count,
                    "wall_hours": None if b.timing.wall_hours is None
                    else round(b.timing.wall_hours, 3),
                    "cost_usd": None if b.timing.cost_usd is None
                    else round(b.timing.cost_usd, 2),
                },
            }
        return {
            "for": self.goal.value,
            "value": self.value,
            "next_does_not_fit": self.next_value,
            "per_gpu_gb": None if self.memory is None else round(self.memory.total, 3),
            "next_per_gpu_gb": None if self.next_gb is None else round(self.next_gb, 3),
            "gpu": t.gpu.id if t.gpu is not None else None,
            "gpu_memory_gb": t.label_gb,
            "gpu_count": t.count if self.goal is not Solve.GPU_COUNT else self.value,
            "capacity_gb": round(t.capacity_gb, 3),
            "usable_gb": round(t.usable_gb, 3),
            "raises": [
                {"change": r.change, "value": r.value, "gpu": r.gpu, "gpu_count": r.count}
                for r in self.raises
            ],
            **extra,
        }


# --------------------------------------------------------------------------- #
# the memory function and the searches


def per_gpu(
    model: ModelSpec, request: Request, count: int, gpu: GpuSpec | None = None
) -> Breakdown:
    """Per-GPU memory of ``request`` on ``count`` cards (of ``gpu``, whose nodes bound
    ``hsdp``'s shards, when known), GB: the estimate's own figures (``footprint`` spread
    by ``Footprint.per_gpu`` under the resolved sharding)."""
    fp = _on(footprint(model.architecture, request), gpu)
    stage = (resolve_stage(request.sharding, count, fp.tensor_parallel, sharded=auto_sharded(fp))
             if gpu is None
             else stage_on(fp, request.sharding, gpu, count, request.offload))
    return fp.per_gpu(stage, count, request.offload)


def _on(fp: Footprint, gpu: GpuSpec | None) -> Footprint:
    """``fp`` on ``gpu``'s nodes (``Footprint.on_card``); as it is for a memory alone."""
    return fp if gpu is None else fp.on_card(gpu.gpus_per_node)


def largest(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """The largest ``k`` in ``[lo, hi]`` with ``fits(k)``, for ``fits`` true up to a point
    and false after it (memory grows with the step); None when ``fits(lo)`` is false."""
    if hi < lo or not fits(lo):
        return None
    if fits(hi):
        return hi
    good, bad = lo, hi
    while bad - good > 1:
        mid = (good + bad) // 2
        if fits(mid):
            good = mid
        else:
            bad = mid
    return good


def target_for(request: Request, catalog: Catalog) -> Target:
    """The card named, else the card memory named, else the reference card."""
    napkin = request.mode is Mode.NAPKIN
    count = request.gpu_count or 1
    if request.gpu is not None:
        gpu = catalog.gpu(request.gpu)
        return Target(gpu, gpu.memory_gb, label_capacity_gb(gpu.memory_gb, napkin), count)
    if request.gpu_memory_gb is not None:
        label = request.gpu_memory_gb
        return Target(None, label, label_capacity_gb(label, napkin), count)
    gpu = catalog.gpus.get(SOLVE_REFERENCE_GPU) or max(
        catalog.gpus.values(), key=lambda g: g.memory_gb
    )
    return Target(gpu, gpu.memory_gb, label_capacity_gb(gpu.memory_gb, napkin), count, False)


def _fewest(
    fp: Footprint, request: Request, target: Target, machines: bool
) -> tuple[int, Sharding, float] | None:
    """The fewest cards of the target that hold ``fp`` (``engine.fit.Sizer``, the
    estimate's own sizing), up to the most its machines hold; on the machines clouds rent
    with ``machines`` (a priced plan), else only to a card's ``rent_step``."""
    sizer = Sizer(fp, request.sharding, request.offload, machines)
    most = card_limit(target.gpu) if target.gpu is not None else MAX_CARDS
    node = sizer.node_cards_on(target.gpu)
    if target.gpu is None:
        return sizer.fewest_for(target.usable_gb, most, node)
    return sizer.fewest_rentable(target.gpu, target.usable_gb, most, node, machines=machines)


def _most(fp: Footprint, target: Target) -> int:
    """The most cards of the target a run is sized on, in whole groups and rings."""
    most = card_limit(target.gpu) if target.gpu is not None else MAX_CARDS
    return max(fp.card_step, most - most % fp.card_step)


def solve_count(goal: Solve, request: Request, model: ModelSpec, target: Target) -> int:
    """Cards a limit is solved on when the question names no count: one card (one
    tensor-parallel group, one context-parallel ring) where one holds the question's
    smallest step (a sequence of ``SOLVE_SEQ_STEP`` tokens, a micro-batch of 1; a
    ``largest model`` question always starts from one), else the fewest that hold that
    step, rounded up to the machines clouds rent when the run is priced, as the estimate
    at the answer rents them (``max seq 70b full h100 50M tokens``: 24 H100s, not one card
    that holds nothing beside a plan on 24); the most its machines hold when none do."""
    one = request.tensor_parallel * request.context_parallel  # one group, one ring
    if goal is Solve.SEQ_LEN:
        start = request.model_copy(update={"seq_len": SOLVE_SEQ_STEP})
    elif goal is Solve.MICRO_BATCH:
        start = request.model_copy(update={"micro_batch": 1})
    else:
        return one
    if target.holds(per_gpu(model, start, one, target.gpu).total):
        return one
    fp = _on(footprint(model.architecture, start), target.gpu)
    found = _fewest(fp, start, target, machines=request.trained_tokens is not None)
    return found[0] if found is not None else _most(fp, target)


def _candidates(request: Request, model: ModelSpec, catalog: Catalog) -> list[ModelSpec]:
    """Catalog models a ``largest model`` question chooses from, smallest first: the named
    model's family when the question named one, else every catalog model."""
    family = request.model_pick in (
        ModelPick.FAMILY, ModelPick.FAMILY_SIZE, ModelPick.EXACT, ModelPick.STAND_IN
    )
    pool = [m for m in catalog.models.values() if not m.synthetic]
    if family:
        pool = [m for m in pool if m.family == model.family] or [model]
    # Equal sizes: the canonical one (a bare size resolves to it), then the id.
    return sorted(pool, key=lambda m: (m.params, bool(m.sizes), m.id))


def settled(previous: Request, changes: dict[str, Any]) -> dict[str, Any]:
    """``changes`` to ``previous``, with its limit question dropped when they name the
    value it solved for (``what if seq 8192`` after ``max seq``, a model after ``largest
    model``, a count after ``fewest cards``): the user now asks at that value. A change
    that clears the value (a new card clears its count) keeps the question."""
    goal = previous.solve
    if goal is None or "solve" in changes or changes.get(goal.value) is None:
        return changes
    if goal is Solve.MODEL and changes.get("model_pick") not in _ONE_MODEL:
        return changes  # a family word (`what if qwen`) narrows the search
    return {**changes, "solve": None}


_ONE_MODEL = (ModelPick.EXACT, ModelPick.FAMILY_SIZE, None)
"""How a follow-up names one model rather than a family (None: a bare size, ``8b``)."""


def _as_model(request: Request, model: ModelSpec) -> Request:
    """``request`` on ``model``, with the framework's defaults that depend on the model
    decided for it (``engine.profiles.resolve``)."""
    return resolve(request.model_copy(update={"model": model.id}), model.architecture)


def _limit(
    goal: Solve, request: Request, model: ModelSpec, catalog: Catalog, target: Target
) -> tuple[Value | None, Breakdown | None, Value | None, float | None]:
    """``(value, memory at it, next step that does not fit, its memory)`` for one setting."""
    if goal is Solve.SEQ_LEN:

        def at_seq(k: int) -> Breakdown:
            return per_gpu(model, request.model_copy(update={"seq_len": k * SOLVE_SEQ_STEP}),
                           target.count, target.gpu)

        top = seq_cap(model) // SOLVE_SEQ_STEP
        k = largest(1, top, lambda k: target.holds(at_seq(k).total))
        nxt = 1 if k is None else (k + 1 if k < top else None)
        return (
            None if k is None else k * SOLVE_SEQ_STEP,
            None if k is None else at_seq(k),
            None if nxt is None else nxt * SOLVE_SEQ_STEP,
            None if nxt is None else at_seq(nxt).total,
        )
    if goal is Solve.MICRO_BATCH:

        def at_batch(b: int) -> Breakdown:
            return per_gpu(
                model, request.model_copy(update={"micro_batch": b}), target.count, target.gpu
            )

        b = largest(1, MAX_MICRO_BATCH, lambda b: target.holds(at_batch(b).total))
        nxt_b = 1 if b is None else (b + 1 if b < MAX_MICRO_BATCH else None)
        return (
            b,
            None if b is None else at_batch(b),
            nxt_b,
            None if nxt_b is None else at_batch(nxt_b).total,
        )
    if goal is Solve.MODEL:
        best: tuple[ModelSpec, Breakdown] | None = None
        for m in _candidates(request, model, catalog):
            memory = per_gpu(m, _as_model(request, m), target.count, target.gpu)
            if target.holds(memory.total):
                best = (m, memory)
        floor = best[0].params if best is not None else -1.0
        for m in _candidates(request, model, catalog):
            if m.params <= floor:
                continue
            memory = per_gpu(m, _as_model(request, m), target.count, target.gpu)
            if not target.holds(memory.total):  # the smallest larger model that does not fit
                return (
                    None if best is None else best[0].id,
                    None if best is None else best[1],
                    m.id,
                    memory.total,
                )
        return (None, None, None, None) if best is None else (best[0].id, best[1], None, None)
    # Solve.GPU_COUNT: the estimate's own sizing.
    fp = _on(footprint(model.architecture, request), target.gpu)
    sizer = Sizer(fp, request.sharding, request.offload)
    found = _fewest(fp, request, target, machines=False)  # the fewest, not the billed
    if found is None:  # even the most cards its machines hold: what they would need
        top = _most(fp, target)
        at_top = fp.per_gpu(
            resolve_stage(request.sharding, top, fp.tensor_parallel, sharded=auto_sharded(fp)),
            top, request.offload)
        return None, None, top, at_top.total
    # Whole tensor-parallel groups and rings; under hsdp, on every named node; on a card
    # rented in steps (GB200's trays of 4), whole steps: fewer would not be rented at all.
    n, step = found[0], fp.card_step * (fp.nodes if sizer.hsdp and fp.nodes else 1)
    if target.gpu is not None and target.gpu.rent_step is not None:
        step = math.lcm(step, target.gpu.rent_step)
    memory = fp.per_gpu(found[1], n, request.offload)
    if n <= step:
        return n, memory, None, None
    fewer = n - step
    below = fp.per_gpu(
        resolve_stage(request.sharding, fewer, fp.tensor_parallel, sharded=auto_sharded(fp)),
        fewer, request.offload,
    )
    return n, memory, fewer, below.total


# --------------------------------------------------------------------------- #
# what would raise the limit


def seq_cap(model: ModelSpec) -> int:
    """The longest sequence a ``max seq`` answer may reach: ``MAX_SEQ_LEN``, or the rows
    of the model's learned position table (GPT-2's 1,024, OPT's 2,050) where it has one,
    as ``engine.warnings`` judges a sequence past it: it cannot run at all."""
    positions = model.architecture.learned_positions
    return min(MAX_SEQ_LEN, positions) if positions else MAX_SEQ_LEN


def _better(goal: Solve, new: Value | None, old: Value | None, catalog: Catalog) -> bool:
    if new is None:
        return False
    if old is None:
        return True
    if goal is Solve.MODEL:
        return catalog.model(str(new)).params > catalog.model(str(old)).params
    if goal is Solve.GPU_COUNT:
        return int(new) < int(old)
    return int(new) > int(old)


def bigger_card(target: Target, catalog: Catalog) -> GpuSpec | None:
    """The smallest live card recommended for training with at least
    ``BIGGER_CARD_FACTOR`` times the target's memory (the cheapest of equal size), else
    the largest card bigger than the target; None when no card is bigger."""
    pool = [
        g
        for g in catalog.gpus.values()
        if g.status == "live"
        and not_recommended_reason(g) is None
        and g.memory_gb > target.label_gb
    ]
    if not pool:
        return None
    step = [g for g in pool if g.memory_gb >= BIGGER_CARD_FACTOR * target.label_gb]
    if step:
        return min(step, key=lambda g: (g.memory_gb, g.price_per_gpu_hour or 1e9, g.id))
    return max(pool, key=lambda g: (g.memory_gb, -(g.price_per_gpu_hour or 1e9)))


def _setting_raises(request: Request) -> list[tuple[str, dict[str, Any]]]:
    """Settings that lower memory, each worded as the reply names it."""
    out: list[tuple[str, dict[str, Any]]] = []
    method = request.effective_method
    if method is Method.FULL:
        out.append(("LoRA", {"method": Method.LORA}))
    if method is not Method.QLORA:
        # A 4-bit base is not split by tensor parallelism (Request.with_method).
        if request.tensor_parallel > 1:
            out.append(("QLoRA, no tp", {"method": Method.QLORA, "tensor_parallel": 1}))
        else:
            out.append(("QLoRA", {"method": Method.QLORA}))
    if not request.grad_checkpointing:
        out.append(("gradient checkpointing", {"grad_checkpointing": True}))
    elif request.selective_checkpointing:
        out.append(("full checkpointing", {"selective_checkpointing": False}))
    if not request.fused_ce:
        out.append(("fused cross-entropy (Liger)", {"fused_ce": True}))
    return out


def _raises(
    goal: Solve,
    request: Request,
    model: ModelSpec,
    catalog: Catalog,
    target: Target,
    value: Value | None,
) -> tuple[Raise, ...]:
    """Each change that raises the limit on its own, with the new limit; changes that
    do not raise it are left out."""
    out: list[Raise] = []
    gpu_id = target.gpu.id if target.gpu is not None else None
    # The settings offered are the answer's: its model may take other framework defaults.
    answer = request
    if goal is Solve.MODEL and isinstance(value, str):
        answer = _as_model(request, catalog.model(value))
    for change, update in _setting_raises(answer):
        new = _limit(goal, request.model_copy(update=update), model, catalog, target)[0]
        if new is not None and _better(goal, new, value, catalog):
            count = int(new) if goal is Solve.GPU_COUNT else target.count
            out.append(Raise(change, new, update, gpu_id, count))
    bigger = bigger_card(target, catalog)
    if bigger is not None:
        napkin = request.mode is Mode.NAPKIN
        card = Target(bigger, bigger.memory_gb, label_capacity_gb(bigger.memory_gb, napkin),
                      target.count)
        new = _limit(goal, request, model, catalog, card)[0]
        if new is not None and _better(goal, new, value, catalog):
            if goal is Solve.GPU_COUNT:
                out.append(Raise(bigger.name, new, {}, bigger.id, int(new)))
            else:
                out.append(Raise(f"{card.count}x {bigger.name}", new, {}, bigger.id, card.count))
    return tuple(out)


def _notes(
    goal: Solve, request: Request, model: ModelSpec, target: Target, value: Value | None,
    next_value: Value | None,
) -> list[str]:
    out: list[str] = []
    if not target.named:
        one = ("" if goal is Solve.GPU_COUNT  # the count is the answer
               else "one " if target.count == 1 else f"{target.count}x ")
        out.append(
            f"No card named: solved for {one}{target.name} ({target.label_gb:g} GB); name "
            "one (`on a 4090`, `24gb`) to solve for it."
        )
    elif target.gpu is None:
        out.append(
            f"A {target.label_gb:g} GB card is read as its label in GiB, like the catalog's "
            f"cards: {target.capacity_gb:.1f} GB, planned to {target.usable_gb:.1f} GB "
            f"({USABLE_FRACTION:.0%})."
        )
    if not target.count_named and target.count > 1:
        step = (f"a {SOLVE_SEQ_STEP}-token sequence" if goal is Solve.SEQ_LEN
                else "a micro-batch of 1")
        rented = " in whole machines, as the plan rents them" if (
            request.trained_tokens is not None) else ""
        card = target.gpu.id if target.gpu is not None else f"{target.label_gb:g}gb"
        most = card_limit(target.gpu) if target.gpu is not None else MAX_CARDS
        more = (f"; name a count (`{2 * target.count}x {card}`) to solve for it"
                if 2 * target.count <= most else "")
        out.append(
            f"No count named: solved on {target.count} cards, the fewest that hold {step}"
            f"{rented} (fewer do not){more}."
            if value is not None else
            f"No count named: no count of {card} up to {target.count} holds even {step}."
        )
    positions = model.architecture.learned_positions
    if (goal is Solve.SEQ_LEN and isinstance(value, int) and next_value is None
            and positions and seq_cap(model) < MAX_SEQ_LEN):
        out.append(
            f"{model.name}'s learned position table has {positions:,} rows: no sequence "
            f"runs past it, so the answer stops at {value:,} tokens (memory would hold more)."
        )
    if request.mode is Mode.NAPKIN and goal in (Solve.SEQ_LEN, Solve.MICRO_BATCH):
        out.append("The napkin rule has no activations: sequence and batch do not change its "
                   "memory, so the limit is the largest allowed. Drop `napkin` for a real one.")
    if goal is Solve.SEQ_LEN and value is not None and not request.flash_attention:
        out.append("Without FlashAttention the attention scores grow with the square of the "
                   "sequence: they set this limit.")
    return out


def solve(request: Request, model: ModelSpec, catalog: Catalog) -> Solution:
    """Answer ``request.solve`` for ``request`` (framework defaults already applied,
    ``engine.profiles.resolve``) on the card it names.

    The answer fits the card at the 85% planning line and :attr:`Solution.next_value`
    does not. Raises ``ValueError`` when ``request.solve`` is None.
    """
    goal = request.solve
    if goal is None:
        raise ValueError("solve() needs a request that asks for a limit (request.solve)")
    target = target_for(request, catalog)
    if goal is Solve.GPU_COUNT:
        target = replace(target, count=1)
    elif request.gpu_count is None:
        target = replace(target, count=solve_count(goal, request, model, target),
                         count_named=False)
    value, memory, next_value, next_gb = _limit(goal, request, model, catalog, target)
    update: dict[str, Any] = {}
    if value is not None:
        key = {
            Solve.SEQ_LEN: "seq_len",
            Solve.MICRO_BATCH: "micro_batch",
            Solve.MODEL: "model",
            Solve.GPU_COUNT: "gpu_count",
        }[goal]
        update[key] = value  # how the question named the model (model_pick) stays
        limited = request.budget_usd is not None or request.deadline_hours is not None
        if goal is not Solve.GPU_COUNT and not target.count_named and limited:
            # A budget or deadline would plan its own count (more replicas to finish in
            # time): the plan keeps the count the limit is for, and judges that.
            update["gpu_count"] = target.count
    if not target.named and target.gpu is not None:
        update["gpu"] = target.gpu.id  # the estimate is on the card the limit is for
    return Solution(
        goal=goal,
        target=target,
        value=value,
        memory=memory,
        next_value=next_value,
        next_gb=next_gb,
        raises=_raises(goal, request, model, catalog, target, value),
        notes=tuple(_notes(goal, request, model, target, value, next_value)),
        update=update,
    )


__all__ = [
    "Raise", "Solution", "Target", "Within", "bigger_card", "largest", "per_gpu", "seq_cap",
    "settled", "solve", "solve_count",
]
