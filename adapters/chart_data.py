"""The chart's numbers and words, computed from the estimate; nothing drawn here.

:func:`chart_data` is the pure step of the memory chart (:mod:`adapters.chart` draws it):
for the request's model, sequence length and micro-batch, the engine's seven memory
components for each of the three methods; the lines of the cards to compare with; and,
when the request has a dataset size, cost and wall-clock on the top picks of the
request's own method. It imports no matplotlib, so its figures can be checked (and used
by the terminal's ``--json``) without drawing.

What the bars measure
---------------------
Each bar is the memory one GPU must hold to train the run alone, by component, in GB
(10^9 bytes): the engine's footprint on one card with no sharding across cards
(``engine.memory.Footprint.per_gpu`` at ``resolve_stage(sharding, 1)``, the same figure
the estimate reports when no card holds a run). That is the apples-to-apples
comparison: a 70B full fine-tune needs about 1,135 GB where QLoRA needs 48.8 GB. How the
engine would spread each method over cards (its recommended option) is written under
the bar.

The horizontal lines are the most one card holds for training: 85% of its true
capacity (``engine.constants.USABLE_FRACTION``, a "24 GB" label being 24 GiB), for the
recommended card of the request's method and for a 24 GB and an 80 GB card. A line more
than :data:`LINE_HEADROOM` times the tallest bar is left off (it would squash the bars
into the bottom of the chart) and named in the footnote instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from adapters.report import (
    METHOD_LABELS,
    fmt_gb,
    fmt_hours,
    fmt_money,
    fmt_params,
    fmt_tokens,
)
from engine import Estimate, Method, Mode, Request, estimate
from engine.choices import Solve
from engine.constants import USABLE_FRACTION
from engine.fit import Option, resolve_stage
from engine.memory import COMPONENTS, Breakdown, footprint
from engine.profiles import resolve
from engine.specs import Catalog, ModelSpec, label_capacity_gb

CHART_FILENAME = "chart.png"
"""The name the chart is uploaded under (Slack) and attached as (Discord)."""

REFERENCE_CARDS: tuple[float, ...] = (24.0, 80.0)
"""Card sizes (vendor labels, GiB) always compared with: a consumer/L4-class card and an
H100/A100-class card."""
LINE_HEADROOM = 1.5
"""A card line more than this many times the tallest bar is named, not drawn."""
LINE_MIN_GAP = 0.03
"""Lines closer than this share of the axis height to a line already drawn are named in
the footnote instead: two dashed lines a few pixels apart read as one thick one."""
MAX_PICKS = 5
"""Cards in the cost and wall-clock panel."""


@dataclass(frozen=True, slots=True)
class MethodBar:
    """One stacked bar: a method's memory on one GPU, by component (GB)."""

    method: Method
    label: str
    """``QLoRA``, ``QLoRA (asked)`` or ``LoRA (default)``."""
    components: Mapping[str, float]
    """The seven components in :data:`engine.memory.COMPONENTS` order, GB."""
    plan: tuple[str, ...]
    """How the engine would run it: ``("10x h200-sxm", "125 GB/GPU")``, or
    ``("no card holds it",)``."""
    requested: bool

    @property
    def total(self) -> float:
        return sum(self.components.values())


@dataclass(frozen=True, slots=True)
class CardLine:
    """The most one card holds for training (85% of its capacity), GB."""

    label: str
    limit_gb: float
    recommended: bool


@dataclass(frozen=True, slots=True)
class Pick:
    """One card choice in the cost and wall-clock panel."""

    label: str
    cost_usd: float
    wall_hours: float
    gpu_hours: float


@dataclass(frozen=True, slots=True)
class ChartData:
    """Everything the figure shows, already computed and worded."""

    title: str
    subtitle: str
    bars: tuple[MethodBar, ...]
    lines: tuple[CardLine, ...]
    """Drawn, lowest first."""
    off_scale: tuple[CardLine, ...]
    """Too far above the bars to draw; named in the footnote."""
    crowded: tuple[CardLine, ...]
    """Too close to a line drawn to be told apart; named in the footnote."""
    picks: tuple[Pick, ...]
    picks_title: str | None
    """None without a dataset size: then the chart has the memory panel only."""
    picks_note: str
    """``150M trained tokens``."""
    y_top: float
    """Top of the memory axis, GB."""
    alt_text: str
    napkin: bool = False
    """Napkin mode: the adapter slot is the rules' remainder (``component_labels``)."""

    @property
    def wide(self) -> bool:
        return self.picks_title is not None


def one_card_memory(request: Request, model: ModelSpec) -> Breakdown:
    """Memory on one GPU holding the whole run (no sharding across cards, and no tensor or
    context parallelism, which would show one card's share of a group), GB, with the
    framework's defaults applied as the engine applies them (``engine.profiles.resolve``)."""
    whole = {"tensor_parallel": 1, "context_parallel": 1}
    request = resolve(request.model_copy(update=whole), model.architecture)
    fp = footprint(model.architecture, request)
    return fp.per_gpu(resolve_stage(request.sharding, 1), 1, request.offload)


def card_limit_gb(label_gb: float, napkin: bool = False) -> float:
    """The most a card labelled ``label_gb`` holds for training: 85% of its true
    capacity (the label is GiB), or of the label itself in napkin mode."""
    return label_capacity_gb(label_gb, napkin) * USABLE_FRACTION


def _lead(est: Estimate) -> Option | None:
    """The option the estimate leads with, at a count that holds the run."""
    if est.recommended is not None:
        return est.recommended
    if est.options and est.options[0].named:
        fixed = [o for o in est.options[1:2] if o.gpu.id == est.options[0].gpu.id and o.fits]
        return fixed[0] if fixed else None
    return None


def _plan(est: Estimate) -> tuple[str, ...]:
    lead = _lead(est)
    if lead is None:
        return ("no card holds it",)
    return (f"{lead.count}x {lead.gpu.id}", f"{fmt_gb(lead.per_gpu_gb)}/GPU")


def _bar_label(method: Method, request: Request) -> str:
    label = METHOD_LABELS[method]
    if request.with_method(method).tensor_parallel != request.tensor_parallel:
        label += ", no tp"  # as the what-if panel says it
    if method is request.effective_method:
        label += " (asked)" if request.method is not None else " (default)"
    return label


def _lines(
    est: Estimate, tallest: float
) -> tuple[list[CardLine], list[CardLine], list[CardLine]]:
    """The card lines to draw (lowest first), the ones above the scale, and the ones
    too close to a line drawn already to be told apart (the recommended card's line
    goes first, then the larger reference card's)."""
    napkin = est.request.mode is Mode.NAPKIN
    found: dict[float, list[tuple[str, bool]]] = {}
    lead = _lead(est)
    if lead is not None:
        limit = round(card_limit_gb(lead.gpu.memory_gb, napkin), 1)
        found.setdefault(limit, []).append((f"{lead.gpu.id} (pick)", True))
    for label_gb in REFERENCE_CARDS:
        limit = round(card_limit_gb(label_gb, napkin), 1)
        found.setdefault(limit, []).append((f"{label_gb:g} GB card", False))
    lines = []
    for limit, names in found.items():
        # the reference size first ("80 GB card, h100-sxm (pick)"): it is the shorter name
        names.sort(key=lambda n: n[1])
        label = ", ".join(n for n, _ in names)
        lines.append(CardLine(label, limit, any(rec for _, rec in names)))
    above = [ln for ln in lines if ln.limit_gb > LINE_HEADROOM * tallest]
    candidates = [ln for ln in lines if ln not in above]
    top = _axis_top(tallest, candidates)
    kept: list[CardLine] = []
    crowded: list[CardLine] = []
    for line in sorted(candidates, key=lambda ln: (not ln.recommended, -ln.limit_gb)):
        if any(abs(line.limit_gb - k.limit_gb) < LINE_MIN_GAP * top for k in kept):
            crowded.append(line)
        else:
            kept.append(line)
    by_limit = sorted(kept, key=lambda ln: ln.limit_gb)
    return by_limit, sorted(above, key=lambda ln: ln.limit_gb), crowded


def _axis_top(tallest: float, lines: list[CardLine]) -> float:
    return max([tallest, *(ln.limit_gb for ln in lines)]) * 1.14


def _picks(est: Estimate) -> list[Pick]:
    picks = []
    for o in est.options:
        t = o.timing
        if not o.fits or t.cost_usd is None or t.wall_hours is None or t.gpu_hours is None:
            continue
        picks.append(Pick(f"{o.count}x {o.gpu.id}", t.cost_usd, t.wall_hours, t.gpu_hours))
    return picks[:MAX_PICKS]


def _alt_text(data_title: str, bars: list[MethodBar], lines: list[CardLine],
              off: list[CardLine], picks: list[Pick]) -> str:
    parts = [f"Bar chart, {data_title}. Memory to train on one GPU: "]
    parts.append(", ".join(f"{b.label} {fmt_gb(b.total)}" for b in bars) + ".")
    cards = [*lines, *off]
    if cards:
        parts.append(" One card holds for training: " + ", ".join(
            f"{ln.label} {ln.limit_gb:.1f} GB" for ln in sorted(cards, key=lambda c: c.limit_gb)
        ) + ".")
    if picks:
        p = picks[0]
        parts.append(f" Top pick {p.label}: {fmt_money(p.cost_usd)}, "
                     f"{fmt_hours(p.wall_hours)} wall-clock.")
    return "".join(parts)[:1000]


def chart_data(
    request: Request, catalog: Catalog | None = None, est: Estimate | None = None
) -> ChartData:
    """The numbers and words of the chart for ``request`` (``est``: its estimate, when the
    caller already has it). A limit question (``max seq``) is drawn at its answer, each
    method at that setting. Pure: runs the engine, draws nothing."""
    if catalog is None:
        from catalog.loader import default_catalog

        catalog = default_catalog()
    if est is None:
        est = estimate(request, catalog)
    request = est.request  # the answer's setting applied, when the question asked a limit
    model = catalog.model(request.model)
    at_answer: dict[str, object] = {"solve": None}
    if request.solve is Solve.GPU_COUNT:
        at_answer["gpu_count"] = None  # each method on its own fewest cards
    bars = []
    for method in Method:
        # with_method: QLoRA runs without tensor parallelism (a 4-bit base is not split)
        variant = request.with_method(method).model_copy(update=at_answer)
        est_m = est if method is request.effective_method else estimate(variant, catalog)
        memory = one_card_memory(variant, model).as_dict()
        bars.append(
            MethodBar(
                method=method,
                label=_bar_label(method, request),
                components={k: memory[k] for k in COMPONENTS},
                plan=_plan(est_m),
                requested=method is request.effective_method,
            )
        )
    tallest = max(b.total for b in bars)
    lines, off, crowded = _lines(est, tallest)
    top = _axis_top(tallest, lines)
    title = f"{model.name} · seq {request.seq_len:,} · batch {request.micro_batch}"
    if request.mode is Mode.NAPKIN:
        title += " · napkin"
    subtitle = (
        f"{fmt_params(model.params)} params · memory to train on one GPU, by component "
        "(GB = 10⁹ bytes)"
    )
    picks_title = None
    picks_note = ""
    picks: list[Pick] = []
    if request.trained_tokens is not None:
        picks = _picks(est)
        picks_title = f"{METHOD_LABELS[request.effective_method]} on the top picks"
        picks_note = f"{fmt_tokens(request.trained_tokens)} trained tokens"
    return ChartData(
        title=title,
        subtitle=subtitle,
        bars=tuple(bars),
        lines=tuple(lines),
        off_scale=tuple(off),
        crowded=tuple(crowded),
        picks=tuple(picks),
        picks_title=picks_title,
        picks_note=picks_note,
        y_top=top,
        alt_text=_alt_text(title, bars, lines, [*off, *crowded], picks),
        napkin=request.mode is Mode.NAPKIN,
    )


__all__ = [
    "CHART_FILENAME",
    "LINE_HEADROOM",
    "LINE_MIN_GAP",
    "MAX_PICKS",
    "REFERENCE_CARDS",
    "CardLine",
    "ChartData",
    "MethodBar",
    "Pick",
    "card_limit_gb",
    "chart_data",
    "one_card_memory",
]
