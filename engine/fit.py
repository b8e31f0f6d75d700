"""Which cards hold a run, and how many of them.

A run fits ``N`` cards when its per-GPU memory is at most 85% of a card's memory
(the napkin document's usable fraction; the rest goes to fragmentation and
allocator slack). Napkin mode uses the napkin rule verbatim:
``N = ceil(total / (0.85 · card memory))``.

Fit bands, by the share of card memory in use:

* ``sweet spot``: 60-85%, the card is well used;
* ``roomy``: 30-60%;
* ``oversized``: under 30%, a smaller card would do;
* ``tight``: 85-100%: it runs with little headroom (only for a card the user names;
  85% stays the planning line for picking cards);
* ``does not fit``: over 100% at the count asked for.

The order cards are offered in is :mod:`engine.ranking`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from engine.choices import Mode, Sharding
from engine.collectives import hsdp_group
from engine.compute import Compute, Timing, timing
from engine.constants import (
    BAND_FULL,
    BAND_GOOD,
    BAND_LOOSE,
    CEIL_SLACK,
    FIT_SLACK,
    MACHINE_SIZES,
    MAX_CLUSTER_NODES,
    USABLE_FRACTION,
)
from engine.memory import Breakdown, Footprint
from engine.records import record
from engine.specs import GpuSpec, label_capacity_gb

NO_TIMING = Timing(None, None, None, 0.0)

MAX_CARDS = 4096
"""The most cards a search for a count tries (fewest cards, limit questions): past it the
run "does not fit" (a cluster, not a rental). A count the user names is sized as asked up
to ``MAX_GPU_COUNT`` (engine.constants), the bound on what a query may say."""

FIT_SWEET = "sweet spot"
FIT_ROOMY = "roomy"
FIT_OVERSIZED = "oversized"
FIT_TIGHT = "tight"
FIT_TOO_SMALL = "does not fit"


@record
class Option:
    """One card choice: how many, how full, how long and how much."""

    gpu: GpuSpec
    count: int
    stage: Sharding
    memory: Breakdown
    price_per_gpu_hour: float | None
    timing: Timing
    capacity_gb: float = 0.0
    """Card memory the fit is judged against (true capacity; the label in napkin mode)."""
    named: bool = False
    needed: int | None = None
    """For a named count that is too small: how many cards would hold the run."""
    needed_tight: bool = False
    """``needed`` holds the run only above the planning line (the ``tight`` band): no
    count of the card holds it within 85%."""

    @property
    def per_gpu_gb(self) -> float:
        """Memory each card holds, GB."""
        return self.memory.total

    @property
    def total_gb(self) -> float:
        """Memory over all the cards, GB."""
        return self.memory.total * self.count

    @property
    def utilization(self) -> float:
        """Per-card memory over the card's true capacity (0-1+)."""
        return self.memory.total / self.capacity_gb

    @property
    def fits(self) -> bool:
        """Within the 85% planning line."""
        return self.utilization <= USABLE_FRACTION + FIT_SLACK

    @property
    def runs(self) -> bool:
        """Within the card's memory (``tight`` included): it starts, with little headroom."""
        return self.utilization <= BAND_FULL + FIT_SLACK

    @property
    def band(self) -> str:
        """The fit band of the utilization (``fit_band``)."""
        return fit_band(self.utilization)

    @property
    def recommended_for_training(self) -> bool:
        """False for cards that cannot train well (``not_recommended_reason``)."""
        return not_recommended_reason(self.gpu) is None


def not_recommended_reason(gpu: GpuSpec) -> str | None:
    """Why ``gpu`` is not recommended for training (with the fallback), or None."""
    if gpu.vendor != "NVIDIA":
        return (
            f"{gpu.vendor} cards are not recommended for training: bitsandbytes NF4 and "
            "fused optimizers are CUDA-first"
        )
    reasons = []
    if not gpu.bf16:
        reasons.append("no BF16 (it trains in `fp16` with loss scaling)")
    if gpu.flash_attention_2 == "no":
        reasons.append(
            "no FlashAttention 2 before Ampere (attention falls back to SDPA's memory-efficient "
            "kernel; `no-flash` for eager)"
        )
    return "it has " + " and ".join(reasons) if reasons else None


def fit_band(utilization: float) -> str:
    """Name the band a memory share falls in (see the module docstring)."""
    if utilization > BAND_FULL + FIT_SLACK:
        return FIT_TOO_SMALL
    if utilization > USABLE_FRACTION + FIT_SLACK:
        return FIT_TIGHT
    if utilization >= BAND_GOOD:
        return FIT_SWEET
    if utilization >= BAND_LOOSE:
        return FIT_ROOMY
    return FIT_OVERSIZED


def card_capacity(gpu: GpuSpec, napkin: bool) -> float:
    """GB (10^9 bytes) a card offers: its true capacity (``GpuSpec.capacity_gb``, the
    label read as GiB), or its label under the napkin rules (``label_capacity_gb``)."""
    return label_capacity_gb(gpu.memory_gb, napkin)


def resolve_stage(
    requested: Sharding, count: int, tensor_parallel: int = 1, replica_fits: bool = False,
    sharded: Sharding = Sharding.ZERO3,
) -> Sharding:
    """``auto`` is no sharding on one data-parallel rank (one card, or one
    tensor-parallel group); on several, plain data parallelism (DDP replicas, as
    ``torchrun``/``accelerate launch`` run a script by default) where one rank holds the
    whole run within the planning line (``replica_fits``: :func:`replica_fits`), and
    ``sharded`` where it needs the state spread over the ranks: ZeRO-3, or FSDP on a
    framework that always shards (:func:`auto_sharded`)."""
    if requested is Sharding.AUTO:
        if count <= tensor_parallel or replica_fits:
            return Sharding.NONE
        return sharded
    return requested


def auto_sharded(fp: Footprint) -> Sharding:
    """What ``auto`` shards with on several data-parallel ranks: ``fsdp`` where the
    framework's multi-card recipes always do (``Footprint.always_shards``), else ZeRO-3."""
    return Sharding.FSDP if fp.always_shards else Sharding.ZERO3


def replica_fits(fp: Footprint, gpu: GpuSpec, offload: bool) -> bool:
    """Whether one data-parallel rank of ``gpu`` cards holds the whole run unsharded within
    the planning line (``USABLE_FRACTION``), so ``auto`` runs replicas on more of them.
    Never in napkin mode (it divides every byte over the cards), on a framework that
    always shards (:func:`auto_sharded`), under ``offload`` (DDP offloads nothing; ZeRO-
    Offload and FSDP's ``CPUOffload`` shard what they move) or context parallelism."""
    if fp.napkin or fp.always_shards or offload or fp.context_parallel > 1:
        return False
    one = fp.on_card(gpu.gpus_per_node).per_gpu(Sharding.NONE, fp.tensor_parallel, offload)
    return one.total <= USABLE_FRACTION * card_capacity(gpu, False) + FIT_SLACK


def stage_on(
    fp: Footprint, requested: Sharding, gpu: GpuSpec, count: int, offload: bool
) -> Sharding:
    """The sharding a run of ``fp`` uses on ``count`` cards of ``gpu``
    (:func:`resolve_stage`, with :func:`replica_fits` judged on that card)."""
    if requested is not Sharding.AUTO or count <= fp.tensor_parallel:
        return resolve_stage(requested, count, fp.tensor_parallel)
    return resolve_stage(requested, count, fp.tensor_parallel, replica_fits(fp, gpu, offload),
                         auto_sharded(fp))


class Sizer:
    """Finds the fewest cards of any GPU that hold one footprint.

    Per-GPU memory is ``fixed + sharded / N`` on N data-parallel ranks, so the per-card
    work is a little arithmetic; the footprint is split once per request. Under tensor
    parallelism a rank is a group of ``tp`` cards: counts are whole groups. Under context
    parallelism ranks come in whole rings of ``cp``, which share the sharded state.
    """

    __slots__ = (
        "auto", "cp", "hsdp", "lines", "machines", "multi", "napkin_total", "node_cards",
        "nodes", "one", "one_stage", "step", "tp",
    )

    def __init__(
        self, fp: Footprint, requested: Sharding, offload: bool, machines: bool = False
    ) -> None:
        self.machines = machines and not fp.napkin
        """Round the fewest cards up to the machines clouds rent (:meth:`rentable`): a plan
        that is timed and priced in detailed mode; a memory-only answer, and the napkin
        rules, keep the fewest."""
        self.tp = fp.tensor_parallel
        self.cp = fp.context_parallel
        self.step = fp.card_step
        self.auto = (requested is Sharding.AUTO and not fp.napkin and not offload
                     and not fp.always_shards)
        """``auto`` in detailed mode that may run replicas (:func:`replica_fits`): at a
        named count, replicas where one rank fits."""
        self.hsdp = requested is Sharding.HSDP
        """``hsdp``: the state spreads over one shard group (:func:`hsdp_group`) only."""
        self.nodes = fp.nodes
        """The nodes the request names (its ``hsdp`` groups on every card), or None."""
        self.node_cards = fp.node_cards
        """Cards in a node where the card does not say (``GPUS_PER_NODE``), or the
        request's cards over the nodes it names."""
        self.one_stage = resolve_stage(requested, 1)
        self.multi = resolve_stage(requested, 2, sharded=auto_sharded(fp))
        self.napkin_total = fp.total if fp.napkin else None
        self.one = fp.per_gpu(self.one_stage, self.tp, offload).total
        self.lines: tuple[tuple[float, float], ...]
        """``(fixed, sharded)`` per phase (backward, optimizer step): per-GPU memory on
        N > 1 cards is the largest ``fixed + sharded / N``."""
        if self.multi is Sharding.NONE or fp.napkin:
            self.lines = ((self.one, 0.0),)
        else:
            self.lines = fp.split(self.multi, offload)

    def node_cards_on(self, gpu: GpuSpec | None) -> int:
        """Cards in one node of ``gpu`` (``GpuSpec.gpus_per_node``), or the request's own
        node size where it names its nodes (``Footprint.on_card``)."""
        if gpu is None or self.nodes:
            return self.node_cards
        return gpu.gpus_per_node

    def _per_gpu(self, ranks: int, node_cards: int) -> float:
        """Per-GPU GB on ``ranks`` (> 1) data-parallel ranks on nodes of ``node_cards``
        (read under ``hsdp`` only: its state spreads over one shard group)."""
        if self.hsdp:
            shards = hsdp_group(ranks * self.tp, node_cards, self.nodes) // self.tp
            if ranks > shards:
                ranks = shards  # replicas past one group
            if ranks <= 1:
                return self.one
        if len(self.lines) == 1:  # the usual case: no optimizer-step peak
            fixed, sharded = self.lines[0]
            return fixed + sharded / ranks
        return max(fixed + sharded / ranks for fixed, sharded in self.lines)

    def fewest(self, gpu: GpuSpec) -> tuple[int, Sharding, float] | None:
        """``(count, sharding, per-GPU GB)`` for the fewest cards that fit, or None."""
        cap = USABLE_FRACTION * card_capacity(gpu, self.napkin_total is not None)
        return self.fewest_rentable(gpu, cap, card_limit(gpu), self.node_cards_on(gpu))

    def rentable(
        self, found: tuple[int, Sharding, float] | None, gpu: GpuSpec, cap: float,
        node_cards: int | None = None, machines: bool = True,
    ) -> tuple[int, Sharding, float] | None:
        """``found`` (a :meth:`fewest_for` answer) on the count clouds rent ``gpu`` in
        (:func:`rented_cards`: whole nodes past one, the next machine size below, GB200's
        trays of 4), so the cards paid for all train, where that count is whole
        tensor-parallel groups and rings and holds the run within ``cap`` and the card's
        limit; ``found`` itself where it does not, and in napkin mode, whose rule sizes
        the count alone. ``machines=False`` (or a sizer made without ``machines``): only
        to the card's ``rent_step`` (a count no cloud rents at all), as the fewest-cards
        question and memory-only answers ask."""
        if found is None or self.napkin_total is not None or not (
                (machines and self.machines) or gpu.rent_step):
            return found
        whole = rented_cards(found[0], gpu, machines and self.machines)
        if whole == found[0] or whole % self.step or whole > card_limit(gpu):
            return found
        return self.at_count_for(cap, whole, node_cards) or found

    def most_cards(self, gpu: GpuSpec, most: int) -> int:
        """``most`` cards of ``gpu`` (:func:`card_limit`), and under ``hsdp`` on nodes the
        request names no more than those nodes hold: a shard group grows to a whole node
        of the card (``gpus_per_node``), not past it."""
        if self.hsdp and self.nodes:
            return min(most, self.nodes * gpu.gpus_per_node)
        return most

    def fewest_rentable(
        self, gpu: GpuSpec, cap: float, most: int, node_cards: int | None = None,
        machines: bool = True,
    ) -> tuple[int, Sharding, float] | None:
        """:meth:`fewest_for` on ``gpu`` (within :meth:`most_cards`), on a count it is
        rented in (:meth:`rentable`)."""
        most = self.most_cards(gpu, most)
        return self.rentable(self.fewest_for(cap, most, node_cards), gpu, cap, node_cards,
                             machines)

    def at_count(self, gpu: GpuSpec, count: int) -> tuple[int, Sharding, float] | None:
        """``(count, sharding, per-GPU GB)`` when exactly ``count`` cards of ``gpu`` hold
        the run within the planning line, else None."""
        cap = USABLE_FRACTION * card_capacity(gpu, self.napkin_total is not None)
        return self.at_count_for(cap, count, self.node_cards_on(gpu))

    def at_count_for(
        self, cap: float, count: int, node_cards: int | None = None,
        planning: float | None = None,
    ) -> tuple[int, Sharding, float] | None:
        """As :meth:`at_count`, for a card offering ``cap`` usable GB on nodes of
        ``node_cards`` (:meth:`node_cards_on`; default: the footprint's). Under ``auto``,
        replicas where one rank holds the run within ``planning`` GB (the card's
        planning line; default ``cap``), as :func:`resolve_stage` says."""
        node = node_cards or self.node_cards
        if self.napkin_total is not None:
            per = self.napkin_total / (
                hsdp_group(count, node, self.nodes) if self.hsdp else count
            )
            return (count, resolve_stage(self.one_stage, count), per) if per <= cap else None
        if count % self.step:
            return None  # not whole tensor-parallel groups and context-parallel rings
        if count == self.tp and self.cp == 1:
            return (count, self.one_stage, self.one) if self.one <= cap else None
        if self.auto and self.cp == 1 and self.one <= (planning or cap) + FIT_SLACK:
            return count, Sharding.NONE, self.one  # replicas: `auto` runs DDP (resolve_stage)
        per = self._per_gpu(count // self.tp, node)
        return (count, self.multi, per) if per <= cap + FIT_SLACK else None

    def fewest_for(
        self, cap: float, most_cards: int = MAX_CARDS, node_cards: int | None = None
    ) -> tuple[int, Sharding, float] | None:
        """As :meth:`fewest`, for a card offering ``cap`` usable GB, of which a run can
        have ``most_cards`` (:func:`card_limit`), on nodes of ``node_cards``
        (:meth:`node_cards_on`; default: the footprint's). Under ``hsdp`` memory stops
        falling at one node, so no count past it is sought; on nodes the request names,
        each group holds ``count / nodes`` cards, so the count grows with the group (up to
        a whole node of the card: :meth:`most_cards`)."""
        node = node_cards or self.node_cards
        replicas = self.nodes if self.hsdp and self.nodes else 1  # one group per named node
        if self.napkin_total is not None:
            group = max(1, math.ceil(self.napkin_total / cap - CEIL_SLACK))
            n = group * replicas
            if n > most_cards or (self.hsdp and hsdp_group(n, node, self.nodes) < group):
                return None
            return n, resolve_stage(self.one_stage, n), self.napkin_total / group
        if self.cp == 1 and self.one <= cap:
            if replicas == 1:
                return self.tp, self.one_stage, self.one
            n = replicas * self.tp  # a one-card group on every named node
            return (n, self.multi, self.one) if n <= most_cards else None
        n = self.cp if self.cp > 2 else 2  # data-parallel ranks (no call: hot loop)
        for fixed, sharded in self.lines:
            if sharded <= 0 or fixed >= cap:
                if fixed + sharded / n > cap:
                    return None  # no count brings this phase under the line
                continue
            n = max(n, math.ceil(sharded / (cap - fixed) - CEIL_SLACK))
        most = most_cards // self.tp
        n = -(-n // self.cp) * self.cp  # whole rings
        step = self.cp
        if self.hsdp and self.nodes:  # a group of n ranks (whole rings) on every node
            n *= self.nodes
            step *= self.nodes
        elif self.hsdp:  # one node's ranks, or the first whole ring past it
            most = min(most, max(node // self.tp, self.cp))
        while n <= most and self._per_gpu(n, node) > cap:
            n += step  # guards float rounding at the boundary
        if n > most:
            return None
        return n * self.tp, self.multi, self._per_gpu(n, node)


def rented_cards(count: int, gpu: GpuSpec, machines: bool = True) -> int:
    """Cards a cloud bills for a run of ``count`` cards of ``gpu``: multiples of its
    ``rent_step`` where it has one (GB200's trays of 4); else whole nodes
    (``gpus_per_node``) past one node, and below it the smallest machine size that holds
    ``count`` (``MACHINE_SIZES``: 7 cards are a machine of 8). ``machines=False``: the
    ``rent_step`` alone, ``count`` for other cards."""
    per_node = gpu.gpus_per_node
    if gpu.rent_step is not None:
        return math.ceil(count / gpu.rent_step) * gpu.rent_step
    if not machines:
        return count
    if count > per_node:
        return -(-count // per_node) * per_node
    return min(_MACHINE_FOR[count] if count < len(_MACHINE_FOR) else per_node, per_node)


_MACHINE_FOR: tuple[int, ...] = tuple(
    min((n for n in MACHINE_SIZES if n >= k), default=max(MACHINE_SIZES))
    for k in range(max(MACHINE_SIZES) + 1)
)
"""The smallest machine of ``MACHINE_SIZES`` that holds ``k`` cards, by ``k`` (a lookup:
:func:`rented_cards` runs for every card of every ranking)."""


def bills_machines(price_override: float | None) -> bool:
    """Whether a plan's cost pays for the machines clouds rent: at the catalog's prices.
    A price the user gives (``$2/hr``) is for their own cards, which it pays for alone."""
    return price_override is None


def billed_cards(count: int, gpu: GpuSpec, mode: Mode) -> int | None:
    """The cards a plan of ``count`` pays for at the catalog's prices where clouds rent
    more (:func:`rented_cards`), else None. The napkin rules price the count itself, as
    the specification does."""
    if mode is Mode.NAPKIN:
        return None
    rented = rented_cards(count, gpu)
    return rented if rented > count else None


def priced_option(options: Sequence[Option]) -> Option | None:
    """The option a reply's time and cost are for: the first (the headline's) when it
    holds the run (``Option.runs``: the tight band included), else the same card at the
    count that does, which follows it; None when there is neither."""
    if not options:
        return None
    lead = options[0]
    if lead.runs:
        return lead
    fixed = [o for o in options[1:2]
             if o.gpu.id == lead.gpu.id and (o.runs if lead.needed_tight else o.fits)]
    return fixed[0] if fixed else None


def card_limit(gpu: GpuSpec) -> int:
    """The most cards of ``gpu`` a plan the user did not size is offered on: its machines
    (``GpuSpec.max_nodes``, else ``MAX_CLUSTER_NODES``, the largest cluster the catalog's
    clouds rent without a reservation) times its ``gpus_per_node``. Past that a plan
    spends hundreds of cards to shave a sliver off each (a run whose fixed part nearly
    fills the card); a count the user names is sized as asked."""
    nodes = gpu.max_nodes if gpu.max_nodes is not None else MAX_CLUSTER_NODES
    return min(MAX_CARDS, nodes * gpu.gpus_per_node)


def fewest_cards(
    fp: Footprint, gpu: GpuSpec, requested: Sharding, offload: bool,
    share: float = USABLE_FRACTION, machines: bool = False,
) -> tuple[int, Sharding] | None:
    """The fewest cards of ``gpu`` that hold the run within ``share`` of each card's memory
    (the planning line; ``BAND_FULL`` for the whole card, the ``tight`` band), with the
    sharding used there.

    None when no count up to the card's limit (:func:`card_limit`) does (e.g. the
    unsharded part alone is larger than the card, or sharding is ``none`` and one card is
    too small).
    """
    sizer = Sizer(fp, requested, offload, machines)
    cap = share * card_capacity(gpu, sizer.napkin_total is not None)
    found = sizer.fewest_rentable(gpu, cap, card_limit(gpu), sizer.node_cards_on(gpu))
    return None if found is None else (found[0], found[1])


def count_on_card(
    fp: Footprint, gpu: GpuSpec, requested: Sharding, offload: bool, named: int | None,
    machines: bool = False,
) -> tuple[int, Sharding] | None:
    """The cards of ``gpu`` a run takes, with the sharding used there: the ``named`` count
    when it holds the run within the whole card (the ``tight`` band, as the headline
    allows a count the user named), else the fewest within the planning line (on the
    machines clouds rent, with ``machines``: :class:`Sizer`), and never fewer than named.
    None when no count up to ``MAX_CARDS`` holds it."""
    sizer = Sizer(fp, requested, offload, machines)
    if named is not None:
        capacity = card_capacity(gpu, sizer.napkin_total is not None)
        found = sizer.at_count_for(BAND_FULL * capacity, named, sizer.node_cards_on(gpu),
                                   USABLE_FRACTION * capacity)
        if found is not None:
            return found[0], found[1]
    fewest = sizer.fewest(gpu)
    if fewest is None:
        return None
    if named is None or fewest[0] >= named:
        return fewest[0], fewest[1]
    return named, stage_on(fp, requested, gpu, named, offload)


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
    nodes: int | None = None,
    margin: float = 0.0,
    needed_tight: bool = False,
    billed: bool = False,
) -> Option:
    """An option on ``count`` cards. It is timed when it holds the run: within the
    planning line, or for a card the user named within its full memory (the ``tight``
    band) and ``margin`` beyond it: a count the user named is timed while its estimate
    exceeds the card by less than the estimate's own memory uncertainty, as it may run
    (``engine.accuracy``'s band; the option still reads "does not fit"). ``billed``: its
    cost pays for the machines clouds rent (:func:`billed_cards`)."""
    memory = fp.on_card(gpu.gpus_per_node).per_gpu(stage, count, offload)
    capacity = card_capacity(gpu, fp.napkin)
    limit = (BAND_FULL * (1.0 + margin) if named else USABLE_FRACTION) * capacity
    timed = memory.total <= limit + FIT_SLACK
    rented = billed_cards(count, gpu, mode) if billed else None
    cost = (timing(work, gpu, count, price, mode, stage, offload, nodes, rented) if timed
            else NO_TIMING)
    return Option(gpu, count, stage, memory, price, cost, capacity, named, needed, needed_tight)
