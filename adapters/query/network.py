"""How a run's machines are joined: nodes said as an adjective (``a 2-node h100 cluster``,
``two-node setup``) and the network between them (``infiniband``, ``ethernet``).

The engine times the network between nodes from the card alone (``engine.constants``
``INTERNODE_GBPS``, ``RAIL_FABRICS``): data-center boards (SXM, NVSwitch, Infinity Fabric)
with a 400 Gb/s InfiniBand/RoCE NIC per GPU, PCIe servers with one 100 Gb/s NIC a node.
So ``infiniband``, ``ib``, ``roce``, ``efa`` and ``rdma`` name the fabric already assumed
and are read as nothing; a slower network (``ethernet``, ``100gbe``, ``tcp``, ``no
infiniband``) is refused on a data-center card, naming its PCIe version, whose nodes are
timed with one 100 Gb/s NIC, and read as nothing on a PCIe card, whose nodes are timed
so already. A network below 100 Gb/s (``25gbe``) is not modeled on any card. Either is
read as nothing when the run stays on one machine.

:func:`n_node` and :func:`network` are the scanner's handlers (scan state and word index
in, words consumed out); :func:`check_network` settles a slow network against the card
and nodes once every word is read.
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.names import resolve_gpu
from adapters.query.numbers import COUNT_RE, COUNT_X_RE
from adapters.query.state import State
from adapters.query.steps import card_beneath, field_beneath
from adapters.query.vocabulary import CARD_WORDS, NEGATIONS, NUMBER_WORDS
from engine.constants import GPUS_PER_NODE, INTERNODE_GBPS, RAIL_FABRICS
from engine.specs import GpuSpec

# --- nodes said as an adjective: a 2-node h100 cluster ---------------------------------------

_N_NODE: Final = re.compile(
    r"^([0-9]+|[a-z]+)-(?:nodes?|machines?|hosts?|servers?|box|boxes)$")
"""``2-node``, ``two-node``, ``single-node``: a node count said before what it counts."""
_SETUP_WORDS: Final = frozenset({"cluster", "clusters", "setup", "setups", "system",
                                 "systems", "configuration"})
"""Said after ``2-node`` (and the cards: ``a 2-node h100 cluster``), they add nothing."""
_SPREAD_WORDS: Final = frozenset({"across", "over", "on", "in", "between", "spanning"})


def _node_count(low: str) -> int | None:
    """The nodes ``2-node`` / ``two-node`` counts, or None when ``low`` says none."""
    found = _N_NODE.match(low)
    if found is None:
        return None
    digits = NUMBER_WORDS.get(found.group(1), found.group(1))
    return int(digits) if digits.isdigit() and int(digits) > 0 else None


def n_node(s: State, i: int) -> int:
    """``a 2-node h100 cluster``, ``two-node setup``, ``2-node 8x h100``: that many nodes,
    as ``2 nodes`` reads (the card's machines when no count is said; a count after it
    is per node when a node holds that many, as after ``2 nodes``)."""
    count = _node_count(s.low(i))
    if count is None:
        return 0
    word = s.raw(i)
    n = 1 + (s.low(i + 1) in _SETUP_WORDS)
    s.set("nodes", count, s.raw(i, n), word)
    if "gpu_count" in s.fields and s.low(i - 1) not in _SPREAD_WORDS:
        s.per_node_if_full = True  # "8x h100 2-node cluster": two 8-card machines
    nxt = s.low(i + n) if s.low(i + n) not in ("of", "with") else s.low(i + n + 1)
    if COUNT_X_RE.match(nxt) or COUNT_RE.match(nxt):
        s.per_node_if_it_fits = True  # "2-node 8x h100": per node if a node holds 8
    return n


def _cardlike(s: State, j: int) -> bool:
    low = s.low(j)
    return bool(low in CARD_WORDS or COUNT_X_RE.match(low) or COUNT_RE.match(low)
                or resolve_gpu(s.catalog, low) is not None)


def setup_word(s: State, i: int) -> int:
    """``cluster`` after ``2-node`` and the cards it holds (``a 2-node h100 cluster``,
    ``2-node 8x h100 setup``): nothing more."""
    if s.low(i) not in _SETUP_WORDS:
        return 0
    for j in range(i - 1, max(i - 5, -1), -1):
        if _node_count(s.low(j)) is not None:
            return 1
        if not _cardlike(s, j):
            return 0
    return 0


# --- the network between nodes ----------------------------------------------------------------

_FAST: Final = frozenset({"infiniband", "ib", "roce", "rocev2", "roce-v2", "efa", "rdma",
                          "gpudirect-rdma"})
"""The fabric assumed between data-center nodes: InfiniBand, RoCE (RDMA over Ethernet),
AWS's EFA."""
_SLOW: Final = frozenset({"ethernet", "tcp", "tcp/ip", "sockets"})
"""A network without RDMA rails: about a PCIe server's one NIC, 100 Gb/s at best."""
_GBE: Final = re.compile(r"^([0-9]+)g(?:b?e|bit-ethernet)$")
"""``100gbe``, ``25gbe``, ``400ge``: Ethernet of that many Gb/s."""
_RAIL_GBPS: Final = round(INTERNODE_GBPS["nvlink"] * 8)
"""A data-center node's NIC per GPU, Gb/s (400)."""
_PCIE_GBPS: Final = round(INTERNODE_GBPS["pcie"] * 8)
"""A PCIe server's NIC per node, Gb/s (100)."""
NETWORK_EXAMPLE: Final = "70b full 2 nodes of 8x h100-pcie 1B tokens"


def _network_words(s: State, i: int) -> tuple[int, bool, int | None]:
    """The words at ``i`` that name a network: (how many, whether slower than the rail
    fabric, its Gb/s where said); (0, False, None) when none do."""
    low = s.low(i)
    if low in _FAST:
        return 1 + (low == "roce" and s.low(i + 1) == "v2"), False, None
    if low in _SLOW:
        return 1, True, None
    if (gbe := _GBE.match(low)) is not None:
        speed = int(gbe.group(1))
        return 1 + (s.low(i + 1) == "ethernet"), speed < _RAIL_GBPS, speed
    if low.removeprefix("no-") in _FAST and low.startswith("no-"):
        return 1, True, None  # "no-infiniband"
    if low in NEGATIONS and s.low(i + 1) in _FAST:
        return 2, True, None  # "no infiniband", "w/o rdma"
    return 0, False, None


def network(s: State, i: int) -> int:
    """``infiniband``, ``roce``, ``ethernet``, ``100gbe``, ``no infiniband``: read as
    nothing here; a slow one is settled by :func:`check_network`."""
    return _network_words(s, i)[0]


def _slow_network(s: State) -> tuple[str, int | None] | None:
    """The first phrase that names a network slower than the rail fabric, as typed, and
    its Gb/s where said."""
    for i in range(len(s.words)):
        n, slow, speed = _network_words(s, i)
        if n and slow:
            return s.raw(i, n), speed
    return None


def _one_machine(s: State, card: GpuSpec | None) -> bool:
    """Whether the run stays on one machine, so no network between nodes is timed."""
    nodes = s.fields.get("nodes") or field_beneath("nodes")
    count = s.fields.get("gpu_count") or field_beneath("gpu_count")
    per_node = card.gpus_per_node if card is not None else GPUS_PER_NODE
    if nodes == 1 or (card is not None and card.max_nodes == 1):
        return True
    return nodes is None and isinstance(count, int) and count <= per_node


def _pcie_version(s: State, card_id: str) -> str | None:
    pcie = resolve_gpu(s.catalog, card_id.replace("sxm", "pcie"))
    return pcie if pcie is not None and s.catalog.gpu(pcie).fabric not in RAIL_FABRICS \
        else None


def check_network(s: State) -> None:
    """A network slower than the rail fabric (``ethernet``, ``100gbe``, ``no
    infiniband``) on a run that may span nodes: read as nothing on a PCIe card, whose
    nodes are timed with one 100 Gb/s NIC already, refused on a data-center card (and
    with no card named, where the estimate may pick one), naming the PCIe version. Below
    100 Gb/s it is refused on every card."""
    found = _slow_network(s)
    if found is None:
        return
    said, speed = found
    word = None if "/" in said else said
    card_id = s.fields.get("gpu") or card_beneath()
    card = s.catalog.gpu(card_id) if isinstance(card_id, str) else None
    if _one_machine(s, card):
        return
    rails = (f"the estimate times the network between nodes at {_RAIL_GBPS} Gb/s per GPU "
             "(an InfiniBand/RoCE NIC on each GPU's rail, as DGX/HGX and MI300X clusters "
             "are built)")
    if card is not None and card.fabric not in RAIL_FABRICS:
        if speed is None or speed >= _PCIE_GBPS:
            return  # the PCIe server's one 100 Gb/s NIC, as the engine counts it
        raise error(
            f'"{quoted(said)}": {card.name} nodes are timed with one {_PCIE_GBPS} Gb/s NIC '
            f"each; a slower network between nodes is not modeled, so the time would be "
            f'longer than estimated. Leave "{quoted(said)}" out for {_PCIE_GBPS} Gb/s, or '
            "keep the run on one machine (8 cards).", word, example=NETWORK_EXAMPLE)
    pcie = None if card is None else _pcie_version(s, card.id)
    if card is None:
        instead = 'a PCIe card, such as "h100-pcie" or "l40s"'
    else:
        instead = (f'its PCIe version, "{pcie}"' if pcie is not None
                   else 'a PCIe card, such as "h100-pcie"')
        rails = rails.replace("the estimate times", f"on the {card.name} the estimate times")
    raise error(
        f'"{quoted(said)}": {rails}; a slower network is not modeled. Name {instead}, '
        f"whose nodes are timed with one {_PCIE_GBPS} Gb/s NIC each, or leave "
        f'"{quoted(said)}" out for the {_RAIL_GBPS} Gb/s fabric.', word,
        example=NETWORK_EXAMPLE.replace("h100-pcie", pcie or "h100-pcie"))
