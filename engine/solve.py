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

The card is the one named (one card unless a count is named), else a card memory
(``24gb``, read as a label like the catalog's "24 GB"), else ``SOLVE_REFERENCE_GPU``, and
the reply says which. GB = 10^9 bytes throughout.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.choices import Method, Mode, ModelPick, Solve
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
    """Cards the run is spread over (1 unless the question named a count)."""
    named: bool = True
    """False when no card was named and the reference card stands in."""

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

    def to_json(self) -> dict[str, Any]:
        """The ``"solve"`` member of the estimate document (docs/questions.md)."""
        t = self.target
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

        top = MAX_SEQ_LEN // SOLVE_SEQ_STEP
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
    most = card_limit(target.gpu) if target.gpu is not None else MAX_CARDS  # its machines
    node = sizer.node_cards_on(target.gpu)
    found = (sizer.fewest_for(target.usable_gb, most, node) if target.gpu is None
             else sizer.fewest_rentable(target.gpu, target.usable_gb, most, node,
                                        machines=False))  # the fewest, not the billed
    if found is None:  # even the most cards its machines hold: what they would need
        top = max(fp.card_step, most - most % fp.card_step)
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


def _notes(goal: Solve, request: Request, target: Target, value: Value | None) -> list[str]:
    out: list[str] = []
    if not target.named:
        out.append(
            f"No card named: solved for one {target.name} ({target.label_gb:g} GB); name one "
            "(`on a 4090`, `24gb`) to solve for it."
        )
    elif target.gpu is None:
        out.append(
            f"A {target.label_gb:g} GB card is read as its label in GiB, like the catalog's "
            f"cards: {target.capacity_gb:.1f} GB, planned to {target.usable_gb:.1f} GB "
            f"({USABLE_FRACTION:.0%})."
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
        target = Target(target.gpu, target.label_gb, target.capacity_gb, 1, target.named)
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
        notes=tuple(_notes(goal, request, target, value)),
        update=update,
    )


__all__ = [
    "Raise", "Solution", "Target", "bigger_card", "largest", "per_gpu", "settled", "solve",
]
