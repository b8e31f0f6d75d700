"""The platform-neutral report: an estimate turned into words, numbers and tables.

Every front end (terminal, Slack, Discord) renders a :class:`Report`; none of
them looks inside the :class:`engine.Estimate` again. Renderers only map: a
title, a headline, the breakdown bar, two tables (cards and what-ifs), notes,
warnings and assumptions, all already worded and formatted here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from adapters.formats import (
    METHOD_LABELS,
    fmt_age,
    fmt_gb,
    fmt_hours,
    fmt_money,
    fmt_params,
    fmt_tokens,
)
from adapters.report_limits import limit_lines, solve_headline, solve_raises
from engine import Estimate
from engine.choices import Framework, Method, Mode, Solve
from engine.constants import MAX_SEQ_LEN
from engine.fit import FIT_TIGHT, FIT_TOO_SMALL, Option
from engine.memory import COMPONENTS
from engine.profiles import PROFILES
from engine.ranking import user_price
from engine.request import Request
from engine.result import option_nodes
from engine.specs import ModelSpec
from engine.wording import epochs_text, share_text

COMPONENT_LABELS: dict[str, str] = {
    "base_weights": "base weights",
    "master_weights": "master weights (fp32)",
    "gradients": "gradients",
    "optimizer": "optimizer",
    "adapter": "adapter",
    "activations": "activations",
    "overhead": "overhead",
}
NAPKIN_REMAINDER_LABEL = "adapters + the rest"
"""The napkin rules' second slot for LoRA and QLoRA: their flat bytes per parameter over
the frozen base (0.5 and 0.25 B/param: the adapters, their gradients and moments, the
activations and everything else the rule does not itemize), not the adapters alone."""


def component_labels(napkin: bool) -> dict[str, str]:
    """Each memory component's label; in napkin mode the adapter slot is the rules'
    remainder (:data:`NAPKIN_REMAINDER_LABEL`)."""
    return {**COMPONENT_LABELS, "adapter": NAPKIN_REMAINDER_LABEL} if napkin else COMPONENT_LABELS


COMPONENT_GLYPHS: dict[str, str] = {
    "base_weights": "█",
    "master_weights": "▓",
    "gradients": "▒",
    "optimizer": "░",
    "adapter": "▚",
    "activations": "▞",
    "overhead": "·",
}
COMPONENT_COLOURS: dict[str, str] = {
    "base_weights": "#0072B2",  # Okabe-Ito blue
    "master_weights": "#56B4E9",  # sky blue
    "gradients": "#E69F00",  # orange
    "optimizer": "#D55E00",  # vermillion
    "adapter": "#CC79A7",  # reddish purple
    "activations": "#009E73",  # bluish green
    "overhead": "#999999",  # grey
}
"""One colour per component, for every renderer that draws the breakdown in colour (the
chart, ``adapters/chart.py``). Okabe & Ito's colour-blind-safe palette ("Color Universal
Design", 2008), neighbours in the stack told apart by lightness too."""
FRAMEWORK_LABELS: dict[Framework, str] = {f: p.short for f, p in PROFILES.items()}
"""How the platforms name a framework (Slack's framework menu, Discord's embed line): the
profiles' own short names (``engine.profiles``)."""
NO_FIT = "no fit"
FASTEST_SAVING = 0.10
"""The share of the pick's wall-clock the catalog's fastest card must save for the
headline to name it (``fastest: ...``): a near-tie is no reason to switch cards."""


@dataclass(frozen=True, slots=True)
class Segment:
    """One component of the breakdown bar."""

    key: str
    label: str
    glyph: str
    gb: float
    share: float


@dataclass(frozen=True, slots=True)
class Table:
    columns: list[str]
    rows: list[list[str]]
    align: str
    """One character per column: ``l`` or ``r``."""

    def render(self, max_rows: int | None = None) -> str:
        """Monospace rendering (for terminals and code blocks)."""
        rows = self.rows if max_rows is None else self.rows[:max_rows]
        widths = [
            max(len(c), *(len(r[i]) for r in rows)) if rows else len(c)
            for i, c in enumerate(self.columns)
        ]

        def line(cells: list[str]) -> str:
            out = []
            for cell, width, a in zip(cells, widths, self.align, strict=True):
                out.append(cell.rjust(width) if a == "r" else cell.ljust(width))
            return "  ".join(out).rstrip()

        return "\n".join([line(self.columns), *(line(r) for r in rows)])


@dataclass(frozen=True, slots=True)
class Report:
    """Everything a renderer shows, already worded."""

    title: str
    subtitle: str
    headline: str
    cost_line: str | None
    band: str
    """Fit band of the recommended option (renderers colour by it)."""
    segments: list[Segment]
    cards: Table
    what_if: Table
    notes: list[str]
    warnings: list[str]
    assumptions: list[str]
    per_gpu_gb: float
    total_gb: float
    request: Request
    top_gpus: list[tuple[str, str]] = field(default_factory=list)
    """``(gpu id, label)`` of the cards in the table, for "other cards" pickers."""
    price_line: str | None = None
    """The lead card's price, its source and age ("h100-sxm $2.49/hr, lowest on-demand
    across aws, gcp, lambda, runpod (lambda), refreshed 3 h ago"); None without a price."""

    @property
    def other_methods(self) -> list[Method]:
        """The methods the estimate offers to switch to: not its own, and not QLoRA
        under tensor parallelism (which refuses a 4-bit base)."""
        r = self.request
        return [m for m in Method if m is not r.effective_method
                and not (m is Method.QLORA and r.tensor_parallel > 1)]

    @property
    def doubles_seq(self) -> bool:
        """Whether the estimate offers "2x seq": not past the longest sequence the engine
        takes, and not on a ``max seq`` answer (twice the longest that fits does not)."""
        request = self.request
        return request.solve is not Solve.SEQ_LEN and request.seq_len * 2 <= MAX_SEQ_LEN

    def bar(self, width: int = 40) -> str:
        """A stacked bar of the components, one glyph per component."""
        total = sum(s.gb for s in self.segments) or 1.0
        text = "".join(seg.glyph * round(seg.gb / total * width) for seg in self.segments)
        return (text + COMPONENT_GLYPHS["overhead"] * width)[:width]

    def legend(self) -> list[str]:
        """One line per non-zero component: glyph, label, GB and share."""
        return [
            f"{s.glyph} {s.label:<22} {s.gb:7.2f} GB  {s.share:4.0%}"
            for s in self.segments
            if s.gb > 0.005
        ]


def _price(o: Option) -> str:
    return "no price" if o.price_per_gpu_hour is None else f"${o.price_per_gpu_hour:.2f}"


def _card_label(o: Option) -> str:
    flag = "" if o.recommended_for_training else " (not rec.)"
    eol = " (EOL)" if o.gpu.status != "live" else ""
    return f"{o.count}x {o.gpu.id}{flag}{eol}"


# --------------------------------------------------------------------------- #


def _title(est: Estimate) -> tuple[str, str]:
    r = est.request
    method = METHOD_LABELS[r.effective_method]
    if r.method is None:  # "Full (torchtitan's default)": its recipes train every weight
        owner = f"{r.framework.value}'s " if r.effective_method is not Method.LORA else ""
        method += f" ({owner}default)"
    title = f"{est.model.name} · {method}"
    if r.mode is Mode.NAPKIN:
        title += " · napkin"
    parts = [f"{fmt_params(est.model.params)} params"]
    if est.model.is_moe:
        parts[0] += f" ({fmt_params(est.model.active_params)} active)"
    r = est.effective  # the sequence as run: a dataset of long samples may have set it
    if r.steps is not None and r.dataset_tokens is not None:
        parts.append(f"{r.steps:,} steps = {fmt_tokens(r.dataset_tokens)} trained tokens")
    elif r.dataset_tokens is not None:
        cut = f", cut at {r.sample_limit:,} a sample" if r.kept_share < 1 else ""
        parts.append(
            f"{fmt_tokens(r.dataset_tokens)} tokens x {epochs_text(r.epochs)}{cut} = "
            f"{fmt_tokens(r.trained_tokens or 0)} trained tokens"
        )
    parts.append(f"seq {r.seq_len:,}")
    return title, " · ".join(parts)


def _parallel_groups(r: Request, count: int) -> str:
    """`` in 8 groups of tp 8`` (`` of tp 2 x cp 4``): how the cards split each
    micro-batch; empty without tensor or context parallelism (and in napkin mode)."""
    if r.mode is not Mode.DETAILED:
        return ""
    parts = [f"{name} {n}" for name, n in (("tp", r.tensor_parallel), ("cp", r.context_parallel))
             if n > 1]
    if not parts:
        return ""
    n = count // (r.tensor_parallel * r.context_parallel)
    return f" in {n} group{'' if n == 1 else 's'} of {' x '.join(parts)}"


def _headline(est: Estimate) -> tuple[str, str | None, str]:
    lead = est.options[0] if est.options else None
    per, total = est.memory.total, est.total_gb
    if lead is None or (not lead.fits and not lead.named):
        return (
            f"{fmt_gb(per)} per GPU on one card: no card in the catalog holds it.",
            None,
            NO_FIT,
        )
    groups = _parallel_groups(est.request, lead.count)
    head = (
        f"{fmt_gb(per)} per GPU x {lead.count} = {fmt_gb(total)} on "
        f"{lead.count}x {lead.gpu.name}{groups} ({share_text(lead.utilization)} of "
        f"{lead.capacity_gb:.1f} GB, {lead.band})"
    )
    if not lead.runs:
        need = "no count fits"
        if lead.needed:
            need = f"{lead.needed} would" + (" (tight)" if lead.needed_tight else "")
        head = f"{head}: {need}."
    priced = est.priced  # time and cost only mean something on a count that holds the run
    cost = None
    if priced is not None and priced.timing.gpu_hours is not None:
        t = priced.timing
        money = fmt_money(t.cost_usd) if t.cost_usd is not None else "no listed price"
        cost = (
            f"{money} · {t.gpu_hours:,.1f} GPU-hours · "
            f"{fmt_hours(t.wall_hours)} wall-clock on {priced.count}x {priced.gpu.id}"
        )
        if priced.price_per_gpu_hour is not None:
            cost += f" at ${priced.price_per_gpu_hour:.2f}/GPU-hr"
        else:
            cost += f" (no price listed for {priced.gpu.id}: add yours, e.g. `$4/hr`)"
        if t.napkin_gpu_hours is not None and est.request.mode is Mode.DETAILED:
            cost += f" (napkin rule: {t.napkin_gpu_hours:,.1f} GPU-hours)"
        fastest = _fastest(est, priced)
        if fastest:
            cost += f" · fastest: {fastest}"
    return head, cost, lead.band if lead.runs else FIT_TOO_SMALL


def _fastest(est: Estimate, pick: Option) -> str | None:
    """The catalog's fastest card (:attr:`Estimate.fastest`) when it is not the pick and
    finishes at least ``FASTEST_SAVING`` sooner (a near-tie is no reason to switch); with
    no price for the pick, any, else only a priced one."""
    best, mine = est.fastest, pick.timing.wall_hours
    if best is None or best.timing.wall_hours is None or mine is None:
        return None
    if (best.gpu.id, best.count) == (pick.gpu.id, pick.count):
        return None
    if best.timing.wall_hours > mine * (1.0 - FASTEST_SAVING):
        return None
    if best.timing.cost_usd is None and pick.timing.cost_usd is not None:
        return None
    arm = " (Arm host)" if best.gpu.host_arch == "aarch64" else ""
    return (
        f"{best.count}x {best.gpu.id}{arm}, {fmt_hours(best.timing.wall_hours)}, "
        f"{fmt_money(best.timing.cost_usd)}"
    )


def _link(o: Option, request: Request) -> str:
    """The links a card choice's collectives run over: the card's own fabric inside a
    node, plus the network (``net``) when the run spans nodes (:func:`option_nodes`);
    ``net`` alone for cards rented one to a machine."""
    if o.count <= 1 or option_nodes(o, request) <= 1:
        return o.gpu.fabric
    return "net" if o.gpu.gpus_per_node <= 1 else f"{o.gpu.fabric}+net"


def _cards(est: Estimate) -> Table:
    rows = []
    for o in est.options:
        t = o.timing
        rows.append(
            [
                _card_label(o),
                f"{o.per_gpu_gb:.1f}",
                share_text(o.utilization),
                o.band,
                _link(o, est.request),
                _price(o),
                fmt_hours(t.wall_hours),
                fmt_money(t.cost_usd),
            ]
        )
    return Table(
        ["card", "GB/GPU", "use", "fit", "link", "$/hr", "time", "cost"], rows, "lrrllrrr"
    )


def _what_if(est: Estimate) -> Table:
    rows = []
    budget, deadline = est.request.budget_usd, est.request.deadline_hours
    own = next((w.sharding for w in est.what_if if w.current), None)
    for w in est.what_if:
        card = f"{w.count}x {w.gpu.id}" if w.gpu is not None and w.count else NO_FIT
        if w.sharding and own and w.sharding != own and not w.note:
            card = f"{card} {w.sharding}"  # `auto` runs it otherwise: say so beside its GB
        if w.note and w.gpu is not None:
            card = f"{card} (not on the pick)"
        elif w.note:
            card = "no card holds it"
        elif w.fit in (FIT_TIGHT, FIT_TOO_SMALL):
            card = f"{card} ({w.fit})"  # a named count held above the planning line
        if budget is not None and w.cost_usd is not None and w.cost_usd > budget:
            card = f"{card} (over {fmt_money(budget)})"  # rows are not sized to the limits
        elif deadline is not None and w.wall_hours is not None and w.wall_hours > deadline:
            card = f"{card} (past {fmt_hours(deadline)})"
        label = ("» " if w.current else "  ") + w.label
        rows.append(
            [label, f"{w.per_gpu_gb:.1f}", card, _hours(w.gpu_hours), fmt_money(w.cost_usd)]
        )
    return Table(["what if", "GB/GPU", "cards", "GPU-h", "cost"], rows, "lrlrr")


def _hours(h: float | None) -> str:
    return "n/a" if h is None else f"{h:,.1f}"


def _price_line(est: Estimate, now: datetime | None) -> str | None:
    """Where the lead card's price comes from and how old it is."""
    lead = est.options[0] if est.options else None
    if lead is None or lead.price_per_gpu_hour is None:
        return None
    g = lead.gpu
    given = user_price(est.request, g)
    if given is not None:
        return f"${given:.2f}/hr as given"
    head = f"{g.id} ${lead.price_per_gpu_hour:.2f}/hr"
    spot = est.request.spot and g.spot_price_per_gpu_hour is not None
    if est.request.spot and not spot:
        head += " on-demand (no spot price)"
    if g.price_refreshed_at is None and not spot:
        when = f" as of {g.price_as_of.isoformat()}" if g.price_as_of else ""
        return f"{head}, built-in catalog price{when}"
    source = f"at spot, {g.spot_price_source}" if spot else g.price_source
    if g.price_refreshed_at is None:
        return f"{head} {source}"
    if now is None:
        age = f"refreshed {g.price_refreshed_at:%Y-%m-%d %H:%M} UTC"
    else:
        seconds = max(0.0, (now - g.price_refreshed_at).total_seconds())
        age = "refreshed just now" if seconds < 60 else f"refreshed {fmt_age(seconds)} ago"
    return f"{head}{' ' if spot else ', '}{source}, {age}"


def _segments(est: Estimate) -> list[Segment]:
    values = est.memory.as_dict()
    total = sum(values.values()) or 1.0
    labels = component_labels(est.request.mode is Mode.NAPKIN)
    return [
        Segment(k, labels[k], COMPONENT_GLYPHS[k], values[k], values[k] / total)
        for k in COMPONENTS
    ]


HUB_CROSSCHECK_TOLERANCE = 0.02
"""Relative gap between the config's and the checkpoint's parameter counts above which a
Hub model's reply warns (the issue's 2%)."""


def _hub_gap(model: ModelSpec) -> float | None:
    hub = model.hub
    if hub is None or not hub.checkpoint_params:
        return None
    return abs(model.params - hub.checkpoint_params) / hub.checkpoint_params


def hub_notes(model: ModelSpec) -> list[str]:
    """Where a Hugging Face Hub model came from and how its size was checked (empty for
    catalog models): revision, commit, family, and the safetensors comparison."""
    hub = model.hub
    if hub is None:
        return []
    where = f"revision {hub.revision}"
    if hub.commit and hub.commit != hub.revision:
        where += f", commit {hub.commit[:12]}"
    notes = [
        f"{hub.repo} read from the Hugging Face Hub ({where}): {hub.model_type} "
        f"architecture from its config.json, {fmt_params(model.params)} parameters "
        "counted from it."
    ]
    gap = _hub_gap(model)
    if hub.language_model_only and hub.checkpoint_params:
        notes.append(
            f"The checkpoint holds {fmt_params(hub.checkpoint_params)} with its vision "
            "encoder; the estimate covers the language model."
        )
    elif gap is not None and gap <= HUB_CROSSCHECK_TOLERANCE:
        notes.append(
            f"Matches the checkpoint: {fmt_params(hub.checkpoint_params or 0)} in "
            f"{hub.checkpoint_source.split(':')[0]} ({gap:.1%} apart)."
        )
    elif hub.check_skipped:
        notes.append(f"Not checked against the weights: {hub.check_skipped}.")
    notes += list(hub.notes)
    return notes


def hub_warnings(model: ModelSpec) -> list[str]:
    """A warning when a Hub model's config and checkpoint disagree by more than 2%."""
    hub = model.hub
    gap = _hub_gap(model)
    if hub is None or gap is None or hub.language_model_only or gap <= HUB_CROSSCHECK_TOLERANCE:
        return []
    return [
        f"{hub.repo}: its config.json gives {fmt_params(model.params)} parameters but the "
        f"checkpoint holds {fmt_params(hub.checkpoint_params or 0)} ({gap:.0%} apart; "
        f"{hub.checkpoint_source}). The config may not describe these weights: check the "
        "repository before trusting the memory figures."
    ]


def build_report(est: Estimate, now: datetime | None = None) -> Report:
    """Word and format an estimate for any front end. ``now`` (aware UTC) words the age of
    refreshed prices ("refreshed 3 h ago"); without it the refresh time is shown."""
    title, subtitle = _title(est)
    headline, cost_line, band = _headline(est)
    answer: list[str] = []
    if est.solution is not None:  # issue 16: a limit question leads with its answer
        headline, answer = solve_headline(est, est.solution), solve_raises(est, est.solution)
    limits_note, limits_warnings = limit_lines(est)  # issue 16: budget and deadline
    return Report(
        title=title,
        subtitle=subtitle,
        headline=headline,
        cost_line=cost_line,
        band=band,
        segments=_segments(est),
        cards=_cards(est),
        what_if=_what_if(est),
        notes=[*answer, *limits_note, *hub_notes(est.model), *est.notes],
        warnings=[*limits_warnings, *hub_warnings(est.model), *est.warnings],
        assumptions=list(est.assumptions),
        per_gpu_gb=est.memory.total,
        total_gb=est.total_gb,
        request=est.request,
        top_gpus=[(o.gpu.id, f"{o.count}x {o.gpu.name}") for o in est.options],
        price_line=_price_line(est, now),
    )
