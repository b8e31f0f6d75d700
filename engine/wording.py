"""How numbers read in the engine's own lines (assumptions, dataset notes) and in the
replies built on them: one spelling of a token count and of an epoch count everywhere."""

from __future__ import annotations

from engine.choices import Sharding
from engine.constants import BAND_FULL, GPUS_PER_NODE, MACHINE_SIZES, USABLE_FRACTION


def tokens_text(n: float) -> str:
    """``50M``, ``1.5B``, ``3T``: three significant figures, never an exponent
    (``1,000T``); under a thousand, the whole number."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            value = n / scale
            return f"{value:,.0f}{suffix}" if value >= 999.5 else f"{value:.3g}{suffix}"
    return f"{n:,.0f}"


def epochs_text(epochs: float) -> str:
    """``1 epoch``, ``3 epochs``, ``0.5 epochs``."""
    return f"{epochs:g} epoch" + ("" if epochs == 1 else "s")


def share_text(share: float) -> str:
    """A card's memory use as a whole percent (``57%``), with one decimal where the whole
    percent would land on the other side of a fit band's line (``85.4%`` is tight, not
    the ``85%`` that is the planning line; ``100.4%`` does not fit; ``99.5%`` is not the
    whole card)."""
    whole = round(share * 100) / 100
    for line in (USABLE_FRACTION, BAND_FULL):
        if (share > line) != (whole > line):
            return f"{share:.1%}"
    if whole == BAND_FULL and share < BAND_FULL:
        return f"{share:.1%}"  # 99.5% is not the whole card
    return f"{share:.0%}"


SHARDING_LABELS = {
    Sharding.ZERO1: "ZeRO-1", Sharding.ZERO2: "ZeRO-2", Sharding.ZERO3: "ZeRO-3",
    Sharding.FSDP: "FSDP", Sharding.HSDP: "HSDP",
}


def sharding_text(stage: Sharding, ranks: int) -> str:
    """How a plan's sharding reads: ``ZeRO-3``, ``FSDP``; unsharded, ``DDP`` on several
    data-parallel ranks (replicas) and ``unsharded`` on one."""
    if stage in SHARDING_LABELS:
        return SHARDING_LABELS[stage]
    return "DDP" if ranks > 1 else "unsharded"


def machine_sizes_text(per_node: int = GPUS_PER_NODE) -> str:
    """The machine sizes clouds rent a card in, up to ``per_node``: ``1, 2, 3, 4 or 8``."""
    *smaller, largest = [str(n) for n in MACHINE_SIZES if n <= per_node] or [str(per_node)]
    return f"{', '.join(smaller)} or {largest}" if smaller else largest
