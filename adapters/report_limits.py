"""The report's lines for limit questions and limits (issue 16): the answer to ``max
seq``, ``max batch``, ``largest model`` and ``fewest cards`` in one sentence with what
would raise it, and which options a budget or deadline (``under $500``, ``within 2
days``) kept, or the closest ones and the methods that would meet it.
"""

from __future__ import annotations

from adapters.formats import METHOD_LABELS, fmt_gb, fmt_hours, fmt_money, fmt_params
from engine import Estimate
from engine.choices import Solve
from engine.constants import GPUS_PER_NODE, MAX_CLUSTER_NODES, USABLE_FRACTION
from engine.fit import Option
from engine.solve import Solution

# --------------------------------------------------------------------------- #
# limit questions (issue 16: ``max seq``, ``max batch``, ``largest model``, ``fewest cards``)


def _solved(goal: Solve, value: int | str, est: Estimate) -> str:
    """A solved value as the reply words it: ``14,848 tokens``, ``14``, a model's name."""
    if goal is Solve.SEQ_LEN:
        return f"{int(value):,} tokens"
    if goal is Solve.MODEL:
        if est.model.id == value:
            return f"{est.model.name} ({fmt_params(est.model.params)} params)"
        return str(value)
    if goal is Solve.GPU_COUNT:
        return f"{int(value):,} card" + ("" if int(value) == 1 else "s")
    return f"{int(value):,}"


def solve_headline(est: Estimate, sol: Solution) -> str:
    """The answer to a limit question in one sentence: the value, its memory against the
    85% line, and the next step that does not fit."""
    t = sol.target
    card = f"{t.count}x {t.name}" if sol.goal is not Solve.GPU_COUNT else t.name
    line = (f"{fmt_gb(t.usable_gb, beside=sol.next_gb)} usable at {USABLE_FRACTION:.0%} of "
            f"{t.capacity_gb:.1f} GB")
    method = METHOD_LABELS[est.request.effective_method]
    what = {
        Solve.SEQ_LEN: f"Longest sequence for {method} on {card}",
        Solve.MICRO_BATCH: f"Largest micro-batch at seq {est.request.seq_len:,} on {card}",
        Solve.MODEL: f"Largest model for {method} on {card}",
        Solve.GPU_COUNT: f"Fewest {card} for {method}",
    }[sol.goal]
    if sol.within is not None:
        return _within_headline(est, sol, what, line)
    if sol.value is None or sol.memory is None:
        if sol.next_value is None or sol.next_gb is None:
            return f"{what}: nothing fits ({line})."
        first = sol.next_value  # a model id for the largest-model question, else a number
        shown = first if isinstance(first, str) else f"{int(first):,}"
        smallest = {
            Solve.SEQ_LEN: f"a sequence of {shown} tokens",
            Solve.MICRO_BATCH: f"a micro-batch of {shown}",
            Solve.MODEL: f"the smallest model, {shown},",
            Solve.GPU_COUNT: f"{shown} cards",
        }[sol.goal]
        if sol.goal is Solve.GPU_COUNT:
            return (f"{what}: nothing fits; even {shown} cards, the most its machines hold, "
                    f"need {fmt_gb(sol.next_gb)} per GPU ({line}).")
        return (
            f"{what}: nothing fits; {smallest} already needs {fmt_gb(sol.next_gb)} per GPU "
            f"({line})."
        )
    head = (
        f"{what}: {_solved(sol.goal, sol.value, est)}, {fmt_gb(sol.memory.total)} per GPU "
        f"({line})."
    )
    if sol.next_value is not None and sol.next_gb is not None:
        nxt = sol.next_value if isinstance(sol.next_value, str) else f"{sol.next_value:,}"
        verb = "do not fit" if sol.goal is Solve.GPU_COUNT else "does not fit"
        head += f" {nxt} {verb} ({fmt_gb(sol.next_gb, beside=t.usable_gb)})."
    return head


def _within_headline(est: Estimate, sol: Solution, what: str, line: str) -> str:
    """``fewest cards`` under a budget or deadline: the fewest cards that meet it, the
    count below that does not, and the fewest that only hold the run."""
    w = sol.within
    assert w is not None
    what = f"{what} {_limits(w.budget_usd, w.deadline_hours)}"
    held = f"{w.in_memory:,} hold{'s' if w.in_memory == 1 else ''} it in memory"
    if sol.value is None or sol.memory is None:
        closest = "" if w.below is None else f"; closest: {_option_phrase(w.below)}"
        return (f"{what}: no count up to {w.most:,} cards meets it{closest}. {held} "
                f"({line}).")
    head = (f"{what}: {_solved(sol.goal, sol.value, est)}, {fmt_gb(sol.memory.total)} per "
            f"GPU ({line}).")
    if w.below is not None:
        b = w.below
        head += (f" {b.count:,} miss it ({fmt_money(b.timing.cost_usd)}, "
                 f"{_shown_hours(b, w.deadline_hours)})")
        return head + (f"; {held}." if w.in_memory != b.count else ".")
    return head


def solve_raises(est: Estimate, sol: Solution) -> list[str]:
    """What would raise the limit, each change with its new limit (empty when none does)."""
    if not sol.raises:
        return []
    parts = [f"{r.change} → {_solved(sol.goal, r.value, est)}" for r in sol.raises]
    lead = "To raise it"
    t = sol.target
    if not t.count_named and t.count > 1:  # a follow-up would solve on its own count
        lead = f"To raise it on the same {t.count} cards"
    if sol.goal is Solve.GPU_COUNT:
        lead = ("Fewer cards with" if sol.value is not None
                else "It meets the limit with" if sol.within is not None else "It fits with")
    return [f"{lead}: " + " · ".join(parts) + "."]


# --------------------------------------------------------------------------- #
# budgets and deadlines (issue 16: ``under $500``, ``within 2 days``)


def _limits(budget: float | None, deadline: float | None) -> str:
    parts = []
    if budget is not None:
        parts.append(f"under {fmt_money(budget)}")
    if deadline is not None:
        parts.append(f"within {fmt_hours(deadline)}")
    return " and ".join(parts)


def _option_phrase(o: Option, deadline: float | None = None) -> str:
    """``24x b200: $2,360, 18.7 h``; a time that misses ``deadline`` by less than its
    rounding shows a finer figure (``1.01 h`` past ``1.0 h``, not ``1.0 h``)."""
    return f"{o.count}x {o.gpu.id}: {fmt_money(o.timing.cost_usd)}, {_shown_hours(o, deadline)}"


def _shown_hours(o: Option, deadline: float | None) -> str:
    """``o``'s wall-clock; finer where it misses ``deadline`` by less than its rounding."""
    wall = o.timing.wall_hours
    shown = fmt_hours(wall)
    missed = deadline is not None and wall is not None and wall > deadline
    if missed and wall is not None and shown == fmt_hours(deadline):
        shown = f"{wall:.2f} h" if wall < 48 else f"{wall / 24:,.2f} d"
    return shown


def _what_was_tried(est: Estimate) -> str:
    """The counts and cards a budget or deadline plan chose among (``engine.constraints``):
    the count named, else any count up to the nodes named (or the planning cluster); the
    card named, or the cards of the memory named, or every card."""
    r = est.request
    if r.gpu is not None:
        cards = r.gpu
    elif r.gpu_memory_gb is not None:
        cards = f"a {r.gpu_memory_gb:g} GB card"
    else:
        cards = "a card"
    sol = est.solution
    if sol is not None and sol.within is not None:
        return (f"every count of {cards} from the fewest that hold the run "
                f"({sol.within.in_memory:,}) was tried, fewest first")
    if r.gpu_count is not None and "gpu_count" not in r.model_fields_set:
        return f"{r.gpu_count}x {cards} (the count the limit was solved on) was tried"
    if r.gpu_count is not None:
        return f"{r.gpu_count}x {cards} as named (or the fewest that hold the run) was tried"
    nodes = r.nodes or MAX_CLUSTER_NODES
    return (f"any count of {cards} up to {nodes} of its machine{'s' if nodes > 1 else ''} "
            f"(nodes of {GPUS_PER_NODE}, or as the card is rented) was tried")


def limit_lines(est: Estimate) -> tuple[list[str], list[str]]:
    """``(notes, warnings)`` for a budget or deadline: which options were kept and how
    they are ranked; or that none meets them, the closest, and the methods that would."""
    c = est.constraints
    if c is None:
        return [], []
    limits = _limits(c.budget_usd, c.deadline_hours)
    if not c.timed:
        return [], [
            f"A limit ({limits}) needs a dataset size to time and cost the run: add "
            "`N tokens` or `N samples of L tokens`."
        ]
    if c.met:
        order = "cheapest first" if c.by_cost else "fastest first"
        return [
            f"Only options {limits} are listed ({len(c.options)}, {order}); "
            f"{_what_was_tried(est)}."
        ], []
    near = c.closest or tuple(c.options)
    closest = "; ".join(_option_phrase(o, c.deadline_hours) for o in near[:2])
    line = f"No option stays {limits}." + (
        f" Closest: {closest}." if closest else " No card holds the run as asked.")
    r = est.request
    pinned = (r.gpu_count is not None and "gpu_count" not in r.model_fields_set
              and r.solve is not Solve.GPU_COUNT and r.solve is not None)
    if c.suggestions:
        line += " It would with " + "; ".join(
            f"{METHOD_LABELS[s.method]} on {_option_phrase(s.option)}" for s in c.suggestions
        ) + "."
    elif not pinned:  # on the count a limit was solved on, more cards may meet it (below)
        line += " No other method does either: raise the limit or train on fewer tokens."
    if pinned:
        assert r.gpu_count is not None
        card = r.gpu or "cards"
        line += (f" The plan keeps the {r.gpu_count:,} card{'s' if r.gpu_count > 1 else ''} "
                 f"the limit was solved on: name more (`{max(8, 2 * r.gpu_count)}x {card}`) "
                 "to solve and plan on them.")
    return [], [line]
