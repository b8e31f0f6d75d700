"""The result model: everything an estimate computed, as front ends render it, and its
stable JSON document (:meth:`Estimate.to_json`, keys documented in docs/cli.md).

:func:`engine.estimate.estimate` builds it; nothing here computes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.accuracy import Uncertainty
from engine.activations import logits_bytes_per_token
from engine.choices import Method, Mode
from engine.collectives import nodes_for
from engine.compute import Compute, uses_flat_rule
from engine.constants import CUDA_CONTEXT_GB
from engine.constraints import Constrained
from engine.fit import Option, billed_cards, priced_option
from engine.memory import Breakdown
from engine.ranking import request_bills_machines
from engine.records import record
from engine.request import Request
from engine.solve import Solution
from engine.specs import GpuSpec, ModelSpec
from engine.wording import sharding_text


@record
class WhatIf:
    """One alternative setting and its best card."""

    label: str
    request: Request
    per_gpu_gb: float
    gpu: GpuSpec | None
    count: int | None
    gpu_hours: float | None
    cost_usd: float | None
    current: bool = False
    """True for the row that matches the request itself."""
    note: str | None = None
    """Why the row is not on the pick's card ("no count of t4 holds it; smallest: ...")."""
    wall_hours: float | None = None
    fit: str | None = None
    """The fit band of the card and count shown (``engine.fit.fit_band``): ``tight`` where
    a count the user named holds the row only above the planning line."""
    sharding: str | None = None
    """How the row's cards share the state (``engine.wording.sharding_text``: ``DDP``,
    ``ZeRO-3``...); None without a card."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """Everything a front end renders. GB = 10^9 bytes; money in USD."""

    request: Request
    model: ModelSpec
    memory: Breakdown
    """Per-GPU memory on the recommended option (one card if nothing fits)."""
    count: int
    """Cards in the recommended option."""
    options: list[Option]
    """Recommended first; at most six unless a named card adds one."""
    what_if: list[WhatIf]
    compute: Compute
    warnings: list[str]
    assumptions: list[str]
    fits_anywhere: bool = True
    notes: list[str] = field(default_factory=list)
    """Short facts for the headline (bare size mapping, synthetic model, method default)."""
    resolved: Request | None = None
    """The request as computed: the framework profile's defaults applied
    (``engine.profiles.resolve``); None means the same as :attr:`request`."""
    uncertainty: Uncertainty | None = None
    """The band cross-validation measured for runs of this kind."""
    solution: Solution | None = None
    """The answer to a limit question (``max seq``...; ``engine.solve``); the estimate is
    at the answer's setting."""
    constraints: Constrained | None = None
    """A budget or deadline (``engine.constraints``): the options are those meeting it."""
    framework_changes: list[str] = field(default_factory=list)
    """The framework profile's facts that touch this run on the card choice shown
    (``Context.framework_changes``)."""
    fastest: Option | None = None
    """The card with the shortest wall-clock at its fewest cards (as the options are
    sized), over the whole catalog, whether or not it is among the options; None when
    untimed or under a budget or deadline (which choose their own options)."""

    @property
    def effective(self) -> Request:
        """The request as computed (profile defaults applied)."""
        return self.resolved or self.request

    @property
    def recommended(self) -> Option | None:
        """The headline option when it fits within the planning line, else None."""
        return self.options[0] if self.options and self.options[0].fits else None

    @property
    def priced(self) -> Option | None:
        """The option the headline's time and cost are for (:func:`priced_option`)."""
        return priced_option(self.options)

    @property
    def total_gb(self) -> float:
        """Memory over the headline option's cards, GB."""
        return self.memory.total * self.count

    def to_json(self) -> dict[str, Any]:
        """The stable JSON document (keys documented in docs/cli.md)."""
        req = self.effective.model_dump(mode="json")  # as run: the profile's defaults in
        req["said"] = sorted(self.request.model_fields_set)  # and which the user gave
        req["method"] = self.request.effective_method.value
        req["method_given"] = self.request.method is not None
        req["trained_tokens"] = self.request.trained_tokens
        return {
            "request": req,
            "model": {
                "id": self.model.id,
                "name": self.model.name,
                "params": self.model.params,
                "active_params": self.model.active_params,
                "synthetic": self.model.synthetic,
            },
            "memory": {
                "per_gpu_gb": _r(self.memory.total),
                "total_gb": _r(self.total_gb),
                "components": {k: _r(v) for k, v in self.memory.as_dict().items()},
                "counter": "card: torch peak reserved plus the CUDA context",
                "torch_reserved_gb": _r(max(0.0, self.memory.total - CUDA_CONTEXT_GB)),
            },
            "framework": {
                "name": self.request.framework.value,
                "changes": self.framework_changes,
                "state_precision": self.effective.state_precision.value,
                "lora_dropout": None if self.effective.effective_method is Method.FULL
                else self.effective.lora_dropout,  # no adapters, no dropout
                # the loss path as run; request.fused_ce / hf_loss are only the user's switches
                "loss_bytes_per_logit": logits_bytes_per_token(
                    self.model.architecture, self.effective) / self.model.architecture.vocab_size,
            },
            "uncertainty": None if self.uncertainty is None else self.uncertainty.to_json(),
            "options": [_option_json(o, self.effective) for o in self.options],
            "priced": None if self.priced is None else self.options.index(self.priced),
            "fastest": None if self.fastest is None else _option_json(self.fastest,
                                                                      self.effective),
            "what_if": [
                {
                    "label": w.label,
                    "current": w.current,
                    "per_gpu_gb": _r(w.per_gpu_gb),
                    "gpu": w.gpu.id if w.gpu else None,
                    "count": w.count,
                    "gpu_hours": _r(w.gpu_hours),
                    "wall_hours": _r(w.wall_hours),
                    "cost_usd": _r(w.cost_usd),
                    "note": w.note,
                    "fit": w.fit,
                    "sharding": w.sharding,
                }
                for w in self.what_if
            ],
            "compute": {
                "flops": self.compute.flops,
                "trained_tokens": self.compute.trained_tokens,
                "mfu_effective": round(self.compute.mfu_effective, 6)
                if uses_flat_rule(self.effective) else None,  # the physical model timed it
            },
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            **({} if self.solution is None else {"solve": self.solution.to_json()}),
            **({} if self.constraints is None else {"constraints": self.constraints.to_json()}),
        }


def _r(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def option_nodes(o: Option, request: Request) -> int:
    """Machines ``o``'s cards span: the nodes the user named, for the card they named (or
    for any card where they named none), else the card's own (``gpus_per_node`` each)."""
    named = request.nodes if request.gpu in (None, o.gpu.id) else None
    return nodes_for(o.count, named, o.gpu.gpus_per_node)


def option_sharding(o: Option, request: Request) -> str:
    """How ``o``'s cards share the state, as replies name it (``DDP``, ``ZeRO-3``...): its
    data-parallel ranks are its cards over the tensor-parallel degree. The napkin rules
    divide every byte evenly over the cards (``even split``)."""
    if request.mode is Mode.NAPKIN and o.count > 1:
        return "even split"
    return sharding_text(o.stage, o.count // max(1, request.tensor_parallel))


def _option_json(o: Option, request: Request) -> dict[str, Any]:
    return {
        "gpu": o.gpu.id,
        "name": o.gpu.name,
        "count": o.count,
        "per_gpu_gb": _r(o.per_gpu_gb),
        "utilization": _r(o.utilization, 4),
        "fit": o.band,
        "sharding": option_sharding(o, request),
        "interconnect": o.gpu.interconnect,
        "nodes": option_nodes(o, request),
        "billed_cards": (billed_cards(o.count, o.gpu, request.mode)
                         if request_bills_machines(request, o.gpu) else None) or o.count,
        "price_per_gpu_hour": o.price_per_gpu_hour,
        "gpu_hours": _r(o.timing.gpu_hours),
        "wall_hours": _r(o.timing.wall_hours),
        "cost_usd": _r(o.timing.cost_usd, 2),
        "tokens_per_second_per_gpu": _r(o.timing.tokens_per_second, 1),
        "mfu": _r(o.timing.mfu, 4),
        "napkin_gpu_hours": _r(o.timing.napkin_gpu_hours),
    }
