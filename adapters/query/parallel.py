"""How a run splits over its cards, as torchtitan, Megatron and vLLM users say it: the
tensor-parallel degree (``tp 8``, ``8-way tensor parallel``), activation checkpointing's
mode (``ac full``, ``selective ac``, ``ac none``) and hybrid sharding's replicate degree.

The plain ``tp 8`` / ``tensor_parallel_degree 8`` forms are a unit
(:data:`adapters.query.numbers.TP_WORDS`); the handlers here read the rest, like the
handlers in :mod:`adapters.query.phrases` (scan state and word index in, words consumed
out). :func:`tensor_parallel_problem` checks the degree against the card count and the
method once the whole query (or a follow-up merged with its thread) is read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import FIELDS
from adapters.query.numbers import TP_WORDS, read_number, whole
from adapters.query.state import State
from engine.choices import Method, Sharding
from engine.constants import MAX_NODES
from engine.request import QLORA_TP_REFUSAL

TP_EXAMPLE: Final = FIELDS["tensor_parallel"].example

# --- "8-way tensor parallel" -----------------------------------------------------------

_WAY_RE: Final = re.compile(r"^([0-9]+(?:\.[0-9]+)?)-way$")
_TP_AFTER_WAY: Final = frozenset(TP_WORDS)


def n_way(s: State, i: int) -> int:
    """``8-way tensor parallel``, ``8-way tp``, ``8 way tp``: the tensor-parallel degree."""
    glued = _WAY_RE.match(s.low(i))
    if glued:
        number, n = glued.group(1), 1
    elif s.low(i + 1) == "way" and read_number(s.low(i)) is not None:
        number, n = s.low(i), 2
    else:
        return 0
    if s.low(i + n) not in _TP_AFTER_WAY:
        if glued:
            raise error(
                f'"{quoted(s.raw(i, n + 1))}": only tensor parallelism is read as N-way '
                '("8-way tensor parallel"; "8-way data parallel" is dp 8); say sharding as '
                'fsdp or zero3 (fsdp 8 for FSDP over 8 cards).',
                s.raw(i), example=TP_EXAMPLE,
            )
        return 0
    word = s.raw(i)
    num = read_number(number)
    assert num is not None
    s.set("tensor_parallel", whole(num.value, word, "tensor_parallel"), s.raw(i, n + 1), word)
    return n + 1


# --- activation checkpointing's mode -----------------------------------------------------

_AC_WORDS: Final = frozenset({"ac", "activation-checkpointing"})
"""Said after ``full`` (``full ac``): full checkpointing, not the method."""
_AC_KEYS: Final = _AC_WORDS | {"ac-mode", "mode"}
"""Said before a mode (``ac full``, ``ac_mode selective``, torchtitan's
``--activation_checkpoint.mode selective`` and ``mode = "selective"``)."""
_MODES: Final = {
    "full": "full", "selective": "selective", "op": "selective",
    "none": "none", "off": "none", "disabled": "none",
}
_MODE_FIELDS: Final[dict[str, tuple[tuple[str, bool], ...]]] = {
    "full": (("grad_checkpointing", True), ("selective_checkpointing", False)),
    "selective": (("grad_checkpointing", True), ("selective_checkpointing", True)),
    "none": (("grad_checkpointing", False),),
}
"""torchtitan's ``[activation_checkpoint] mode`` values (``selective_ac_option = "op"``
is the op-level selective checkpointing modeled) and what each sets."""


def checkpoint_mode(s: State, i: int) -> int:
    """``ac full``, ``full ac``, ``ac selective``, ``ac none``, ``ac_mode selective``,
    ``mode selective``: checkpointing on (every layer's input kept, the rest
    recomputed), op-level selective, or off. A ``full`` that says the mode is also the
    method when the query names no other (:func:`full_also_method`)."""
    low = s.low(i)
    if low == "full" and s.low(i + 1) in _AC_WORDS and s.low(i + 2) not in _MODES:
        # "full ac none": the method, then the mode
        mode, n = "full", 2
    elif low in _AC_KEYS and s.low(i + 1) in _MODES:
        mode, n = _MODES[s.low(i + 1)], 2
    else:
        return 0
    phrase = s.raw(i, n)
    for field, value in _MODE_FIELDS[mode]:
        s.set(field, value, phrase)
    if mode == "full":
        s.full_ac = phrase
    return n


def full_also_method(
    fields: dict[str, object], sources: dict[str, str], said: str | None
) -> None:
    """A query's ``full ac`` with no method named: the run is a full fine-tune too (the
    word says both; a follow-up's ``full ac`` changes only the checkpointing)."""
    if said is not None and "method" not in fields:
        fields["method"] = Method.FULL
        sources["method"] = said


# --- hybrid sharding (HSDP) --------------------------------------------------------------
# ``hsdp``, ``hybrid_shard``, ``HYBRID_SHARD`` and ``hybrid sharding`` are keywords
# (sharding ``hsdp``, adapters/query/vocabulary.py); what is left here is the replicate
# degree and FSDP's ZeRO-2 flavour of it.

_REPLICATE_KEYS: Final = frozenset(
    {"data-parallel-replicate-degree", "dp-replicate", "dp-replicate-size",
     "data-parallel-replicate-dim", "dp-replicate-degree"}
)
"""torchtitan's ``data_parallel_replicate_degree``, axolotl's ``dp_replicate_size``,
torchtune's ``data_parallel_replicate_dim``: above 1, copies of a sharded group (HSDP)."""
HSDP_EXAMPLE: Final = "70b full hsdp 2 nodes of 8x h100 1B tokens"


def replicate_degree(s: State, i: int) -> int:
    """``data_parallel_replicate_degree 2``: HSDP over that many copies (checked and set
    once all words are read, :func:`check_replicate`); 1 reads as nothing. Refuses FSDP's
    ``_HYBRID_SHARD_ZERO2``, which is not modeled."""
    low = s.low(i)
    if low == "hybrid-shard-zero2":
        raise error(
            f'"{quoted(s.raw(i))}" (FSDP\'s _HYBRID_SHARD_ZERO2: gradients and states '
            "sharded within a node, weights kept whole) is not modeled: say hsdp for "
            "HYBRID_SHARD or zero2 for SHARD_GRAD_OP.", s.raw(i), example=HSDP_EXAMPLE,
        )
    if low not in _REPLICATE_KEYS or (num := read_number(s.low(i + 1))) is None:
        return 0
    word = s.raw(i + 1)
    if num.is_price or num.percent:
        raise error(f'"{quoted(word)}" must be a plain count of replicas.', word,
                    example=HSDP_EXAMPLE)
    value = num.scaled()  # inf and nan fail every comparison below but the first
    if not 1 <= value <= MAX_NODES or value != int(value):
        raise error(f'"{quoted(s.raw(i, 2))}": the replicate degree is a whole count of '
                    f"copies, 1 to {MAX_NODES:,}.", word, example=HSDP_EXAMPLE)
    degree = int(value)
    if degree > 1:
        s.replicate = (degree, s.raw(i, 2))
    return 2


def check_replicate(s: State) -> None:
    """A replicate degree above 1 is HSDP: with ``fsdp`` (torchtitan's FSDP plus
    replicas) or no sharding said. The replicas are named as the run's nodes, so each
    shard group holds count / degree cards whatever machines hold them (a GH200 is rented
    one to a machine); a count the degree does not divide, or other nodes, is refused."""
    if s.replicate is None:
        return
    degree, phrase = s.replicate
    said = s.fields.get("sharding")
    if said is not None and said not in (Sharding.FSDP, Sharding.HSDP):
        raise error(
            f'"{quoted(phrase)}" means hybrid sharding (hsdp), but '
            f'"{quoted(s.sources["sharding"])}" says {said}: say one.',
            phrase, example=HSDP_EXAMPLE,
        )
    count, nodes = s.fields.get("gpu_count"), s.fields.get("nodes")
    if isinstance(nodes, int) and nodes != degree:
        raise error(
            f'"{quoted(phrase)}" on {nodes} nodes: HSDP is modeled with one shard group per '
            f"node, so {degree} replicas are {degree} nodes: name them "
            f'("{degree} nodes of 8x h100 hsdp"), or say fsdp.',
            phrase, example=HSDP_EXAMPLE,
        )
    if isinstance(count, int) and count % degree:
        raise error(
            f'"{quoted(phrase)}" on {count} cards: {degree} replicas need a count they '
            f"divide into equal shard groups (e.g. {degree * (count // degree + 1)}), or say "
            f"fsdp to shard over all {count}.",
            phrase, example=HSDP_EXAMPLE,
        )
    s.fields["sharding"] = Sharding.HSDP
    s.sources["sharding"] = phrase
    if not isinstance(nodes, int):
        s.fields["nodes"] = degree
        s.sources["nodes"] = phrase


# --- the degree against the cards and the method --------------------------------------------


def _power_of_two_divisor(count: int, limit: int) -> int:
    """The largest power of two that divides ``count`` and is at most ``limit``."""
    degree = 1
    while count % (degree * 2) == 0 and degree * 2 <= limit:
        degree *= 2
    return degree


def tensor_parallel_problem(fields: Mapping[str, object]) -> str | None:
    """What is wrong with the tensor-parallel degree in ``fields``, or None.

    The cards must split into whole groups of ``tensor_parallel`` (each group holds one
    copy of the model, split layer by layer), and a 4-bit base is not split: bitsandbytes'
    NF4 layers are not DTensor-sharded by PyTorch's tensor parallelism. QLoRA is refused
    only when it is named (``qlora``, ``nf4``), not as a framework's default."""
    tp = fields.get("tensor_parallel")
    if not isinstance(tp, int) or tp <= 1:
        return None
    if fields.get("method") is Method.QLORA:
        return QLORA_TP_REFUSAL
    count = fields.get("gpu_count")
    if not isinstance(count, int):
        return None
    if count % tp == 0:
        return None
    smaller = _power_of_two_divisor(count, tp)
    degree = f"a degree that divides {count} (tp {smaller})" if smaller > 1 else "drop tp"
    if tp > count:
        return (f"tensor-parallel degree {tp} needs at least {tp} cards, but "
                f'{count} {"is" if count == 1 else "are"} named: name {tp} cards or a multiple '
                f'("{tp}x h100"), or {degree}.')
    fits = -(-count // tp) * tp
    return (f"{_cards_do_not(count)} split into tensor-parallel groups of {tp}: name a "
            f"multiple of {tp} cards ({fits}), or {degree}.")


def _cards_do_not(count: int) -> str:
    """``1 card does not`` / ``3 cards do not``."""
    return "1 card does not" if count == 1 else f"{count} cards do not"


CP_EXAMPLE: Final = FIELDS["context_parallel"].example


def context_parallel_problem(fields: Mapping[str, object]) -> str | None:
    """What is wrong with the context-parallel degree in ``fields``, or None: the cards
    must split into whole rings of ``cp`` tensor-parallel groups, and each card needs at
    least one token of the sequence."""
    cp = fields.get("context_parallel")
    if not isinstance(cp, int) or cp <= 1:
        return None
    seq = fields.get("seq_len")
    if isinstance(seq, int) and seq < cp:
        return (f"context parallel {cp} splits each sequence over {cp} cards, but the "
                f"sequence is {seq:,} tokens: use a degree up to the sequence length.")
    count = fields.get("gpu_count")
    tp = fields.get("tensor_parallel")
    group = cp * (tp if isinstance(tp, int) and tp > 1 else 1)
    if not isinstance(count, int) or count % group == 0:
        return None
    within = f"context-parallel rings of {cp}" + (
        f" ranks of {group // cp} tensor-parallel cards each ({group} cards)"
        if group > cp else ""
    )
    fits = -(-count // group) * group
    return (f"{_cards_do_not(count)} split into {within}: name a multiple of {group} cards "
            f"({fits}), or a degree that divides {count}.")


def check_context_parallel(fields: Mapping[str, object], said: str | None = None) -> None:
    """Raise a QueryError when :func:`context_parallel_problem` finds one."""
    problem = context_parallel_problem(fields)
    if problem is None:
        return
    lead = f'"{quoted(said)}": ' if said else ""
    raise error(lead + problem, said, example=CP_EXAMPLE)


def check_tensor_parallel(fields: Mapping[str, object], said: str | None = None) -> None:
    """Raise a QueryError when :func:`tensor_parallel_problem` finds one. ``said``: the
    words that set the degree, quoted at the start of the message."""
    problem = tensor_parallel_problem(fields)
    if problem is None:
        return
    if fields.get("method") is Method.QLORA:
        example = "70b lora tp 2 2x h100 50M tokens"
    else:
        example = TP_EXAMPLE
    lead = f'"{quoted(said)}": ' if said else ""
    raise error(lead + problem, said, example=example)
