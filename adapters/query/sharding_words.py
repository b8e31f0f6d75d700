"""Sharding as ML engineers say it in words: DeepSpeed's stage (``deepspeed stage-3``,
``zero_stage_3``), ZeRO-Offload and ZeRO-Infinity, ``offload optimizer``, and a
data-parallel or FSDP degree (``dp 8``, ``8-way data parallel``, ``fsdp 8``), checked
against the cards once every word is read (:func:`check_sharding`).

Handlers like :mod:`adapters.query.phrases` (scan state and word index in, words
consumed out).
"""

from __future__ import annotations

import re
from typing import Final

from adapters.query.errors import QueryError, error, quoted
from adapters.query.numbers import ALL_UNITS, COUNT_RE, CP_WORDS, TP_WORDS, read_number
from adapters.query.phrasing import card_span, whole_count
from adapters.query.state import State
from adapters.query.vocabulary import CARD_WORDS
from engine.choices import Sharding

# --- DeepSpeed's stage, ZeRO-Offload and ZeRO-Infinity, and offload words -------------------

_STAGE_WORD: Final = re.compile(r"^(zero-?)?(?:stage|z)-?([123])$")
_STAGES: Final = {"1": Sharding.ZERO1, "2": Sharding.ZERO2, "3": Sharding.ZERO3}
_ZERO_OFFLOADS: Final = {"zero-offload": "offload", "zero-infinity": "infinity",
                         "zerooffload": "offload", "zeroinfinity": "infinity"}
_OFFLOAD_WORDS: Final = frozenset(
    {"offload", "offloading", "offloaded", "cpu-offload", "offload-param", "offload-params",
     "param-offload", "offload-optimizer", "optimizer-offload", "offload-all",
     "offload-weights", "offload-parameters"}
)
_OPTIMIZER_OFFLOAD: Final = frozenset({"offload-optimizer", "optimizer-offload"})
OFFLOAD_EXAMPLE: Final = "70b full zero3 offload optimizer 8x a100"


def deepspeed_words(s: State, i: int) -> int:
    """``deepspeed stage-3``, ``ds stage3``, ``zero_stage_3``: DeepSpeed at that stage;
    ``ZeRO-Offload`` (the optimizer in host memory, on ZeRO-2 unless a stage is said, as
    DeepSpeed's tutorial runs it) and ``ZeRO-Infinity`` (the weights too, on ZeRO-3; its
    NVMe tier is read as host memory, which holds as much off the card); ``offload
    optimizer`` (only the optimizer, unless the weights are said too), and ``cpu`` /
    ``nvme`` after an offload word (where it goes: off the card either way)."""
    low = s.low(i)
    if low in ("deepspeed", "ds") and (stage := _STAGE_WORD.match(s.low(i + 1))):
        s.deepspeed = s.raw(i)
        s.set("sharding", _STAGES[stage.group(2)], s.raw(i, 2))
        return 2
    if (stage := _STAGE_WORD.match(low)) and stage.group(1):  # "zero_stage_3"
        s.deepspeed = s.raw(i)
        s.set("sharding", _STAGES[stage.group(2)], s.raw(i))
        return 1
    kind, n = _ZERO_OFFLOADS.get(low), 1
    if kind is None and s.raw(i).lower() == "zero" and s.low(i + 1) in ("offload", "infinity"):
        kind, n = ("offload" if s.low(i + 1) == "offload" else "infinity"), 2
    if kind is not None:
        word = s.raw(i, n)
        s.pending.zero_offload = (kind, word)
        if kind == "offload":
            s.launch.optimizer_offload = s.launch.optimizer_offload or word
        else:
            s.set("offload_weights", True, word)
        return n
    if low in _OPTIMIZER_OFFLOAD:  # the weights stay unless they are said too (check_launch)
        s.launch.optimizer_offload = s.launch.optimizer_offload or s.raw(i)
        return 1
    if low in ("cpu", "nvme") and s.low(i - 1) in _OFFLOAD_WORDS:
        return 1
    return 0


def _settle_zero_offload(s: State) -> None:
    said = s.pending.zero_offload
    if said is None:
        return
    kind, word = said
    stage = Sharding.ZERO2 if kind == "offload" else Sharding.ZERO3
    sharding = s.fields.get("sharding")
    if sharding is None:
        s.set("sharding", stage, word)
    elif not (isinstance(sharding, Sharding) and sharding.is_zero) or (
            kind == "infinity" and sharding is not Sharding.ZERO3):
        stages = "zero3" if kind == "infinity" else "zero1, zero2 or zero3"
        raise error(
            f'"{quoted(word)}" is DeepSpeed\'s {"ZeRO-3" if kind == "infinity" else "ZeRO"} '
            f'offload, but "{quoted(s.sources["sharding"])}" says {sharding}: say it with '
            f"{stages}, or say {sharding} offload for its own host offload.",
            word, example=OFFLOAD_EXAMPLE,
        )
    s.deepspeed = s.deepspeed or word


# --- data-parallel and FSDP degrees ---------------------------------------------------------

_DP_WORDS: Final = frozenset({"dp", "dp-degree", "dp-size", "data-parallel",
                              "data-parallel-degree", "data-parallel-size"})
_FSDP_WORDS: Final = frozenset({"fsdp", "fsdp1", "fsdp2", "fsdp-degree"})
_WAY: Final = re.compile(r"^([0-9]+)-way$")
DP_EXAMPLE: Final = "8b full dp 8 8x h100"
PARALLEL_WORDS: Final = frozenset({*TP_WORDS, *CP_WORDS, *_DP_WORDS, *_FSDP_WORDS})
"""Degree words that take their own number after them (``dp 4 tp 2``)."""


def _degree(s: State, j: int) -> int | None:
    """A plain whole number at ``j`` that counts nothing after it (not ``8 h100``, ``2
    epochs``, ``8x``): a degree."""
    if not COUNT_RE.match(s.low(j)) or (value := whole_count(s.low(j))) is None:
        return None
    nxt, after = s.low(j + 1), read_number(s.low(j + 2))
    # "dp 4 tp 2": another parallel degree with its own number after it; any other unit
    # after the number is the number's ("fsdp 3 epochs 8k seq": 3 epochs), and so is a
    # degree word whose next word is a model size or a price ("dp 4 tp 70b").
    own_degree = (nxt in PARALLEL_WORDS and after is not None and after.suffix != "b"
                  and not after.is_price)
    claims = nxt in ALL_UNITS and not own_degree
    if claims or nxt in CARD_WORDS or nxt in ("x", "*", "way"):
        return None
    return None if card_span(s, j + 1) is not None else value


def parallel_degree(s: State, i: int) -> int:
    """``dp 8``, ``data parallel``, ``8-way data parallel``: plain data parallelism over
    that many ranks; ``fsdp 8``, ``fsdp=8``, ``fsdp degree 8``: FSDP over that many (both
    checked against the cards by :func:`check_sharding`; ``8-way fsdp`` is refused, as
    N-way before anything but tensor or data parallelism is:
    :func:`adapters.query.parallel.n_way`)."""
    low = s.low(i)
    way, n = _WAY.match(low), 1
    if way is None and COUNT_RE.match(low) and s.low(i + 1) == "way":
        way, n = re.match(r"^([0-9]+)$", low), 2
    if way is not None and (degree := whole_count(way.group(1))) is not None:
        if s.low(i + n) in _DP_WORDS:
            return _set_degree(s, "data_parallel", degree, i, n + 1)
        return 0
    if low in _DP_WORDS:
        degree = _degree(s, i + 1)
        return _set_degree(s, "data_parallel", degree, i, 1 if degree is None else 2)
    if low not in _FSDP_WORDS:
        return 0
    # "fsdp degree 8 h100": the word says the number is the degree, whatever follows it
    degree = whole_count(s.low(i + 1)) if low == "fsdp-degree" else _degree(s, i + 1)
    if degree is not None:
        s.set("sharding", Sharding.FSDP, s.raw(i, 2))
        if low == "fsdp" and degree in (1, 2):
            return 2  # "fsdp 2": FSDP2, the version (as "fsdp2"), not two ranks
        return _set_degree(s, "fsdp_degree", degree, i, 2)
    if low == "fsdp-degree":
        raise error(f'"{quoted(s.raw(i, 2))}": an FSDP degree is a whole number of cards, at '
                    'least 1, e.g. "fsdp degree 8".', s.raw(i), example="8b full fsdp 8 8x h100")
    return 0


def _set_degree(s: State, which: str, degree: int | None, i: int, n: int) -> int:
    """Record a degree said by the ``n`` words at ``i``; return ``n``."""
    phrase = s.raw(i, n)
    said = getattr(s.pending, which)
    if said is not None and said[0] != degree:
        raise error(f'"{quoted(phrase)}" conflicts with "{quoted(said[1])}": both set the '
                    "degree. Pick one.", phrase, example=DP_EXAMPLE)
    setattr(s.pending, which, (degree, phrase))
    return n


def _splits(s: State) -> tuple[int, str]:
    """tp x cp (1 unsaid), and how a message names it (`` over tp 2``)."""
    product, words = 1, []
    for field in ("tensor_parallel", "context_parallel"):
        value = s.fields.get(field)
        if isinstance(value, int) and value > 1:
            product *= value
            words.append(s.sources[field])
    return product, (" x " + " x ".join(f'"{quoted(w)}"' for w in words)) if words else ""


def _settle_degrees(s: State) -> None:
    dp, fsdp = s.pending.data_parallel, s.pending.fsdp_degree
    if dp is not None and "sharding" not in s.fields:
        s.set("sharding", Sharding.NONE, dp[1])  # data parallelism: whole replicas
    for said, replicas in ((dp, 1), (fsdp, s.replicate[0] if s.replicate else 1)):
        if said is None or (degree := said[0]) is None:
            continue
        words = said[1]
        split, over = _splits(s)
        total = degree * replicas * split
        count = s.fields.get("gpu_count")
        if not isinstance(count, int):
            s.set("gpu_count", total, words)
        elif count != total:
            raise _degree_refusal(s, said is fsdp, (degree, words), total, (count, split, over))


def _degree_refusal(
    s: State, fsdp: bool, said: tuple[int, str], total: int, cards: tuple[int, int, str]
) -> QueryError:
    degree, words = said
    count, split, over = cards
    named = s.sources["gpu_count"]
    if fsdp:
        groups = count // (degree * split) if count % (degree * split) == 0 else 0
        hsdp = (f'; {groups} copies of {degree}-card shard groups is hybrid sharding: say '
                f'"hsdp dp_replicate {groups}"') if groups > 1 else ""
        return error(
            f'"{quoted(words)}"{over} shards over {total} cards, but "{quoted(named)}" names '
            f'{count}: say "fsdp" alone to shard over all {count}, or name {total} cards'
            f"{hsdp}.", words, example="8b full fsdp 8 8x h100",
        )
    fits = f', or say "dp {count // split}"' if count % split == 0 else ""
    return error(
        f'"{quoted(words)}"{over} is {total} cards, but "{quoted(named)}" names {count}: '
        f"name {total} cards{fits}.", words, example=DP_EXAMPLE,
    )


def check_sharding(s: State) -> None:
    """Settle ZeRO-Offload's and ZeRO-Infinity's stage, and the data-parallel and FSDP
    degrees against the cards. Runs after :func:`adapters.query.phrasing.check_phrasing`
    (:mod:`adapters.query.scanner`)."""
    _settle_zero_offload(s)
    _settle_degrees(s)
