"""Settings as ML engineers write them in published runs and model cards: a batch said
per device beside the global one (``batch size 16 (8 per device)``), a sequence said in
tokens (``16k tokens per sequence``, ``2048-token sequences``), a node named by its
cards (``a single 8xH100 node``, ``2 8xH100 nodes``), and words that say a framework or
a card count (``Trainer``, ``single device``). DeepSpeed's stages and offloads and the
data-parallel and FSDP degrees are :mod:`adapters.query.sharding_words`'.

Handlers like :mod:`adapters.query.phrases` (scan state and word index in, words
consumed out); what needs every word read first is settled by :func:`check_phrasing`,
and what needs a follow-up's earlier estimate or the options beside a query by
:func:`sample_length_as_sequence` and :func:`fp8_as_float8` (called by the parser).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import check_field
from adapters.query.names import resolve_gpu
from adapters.query.numbers import (
    ALL_UNITS,
    COUNT_RE,
    COUNT_X_RE,
    PREFIX_UNITS,
    SIZE_RE,
    Num,
    read_number,
    whole,
)
from adapters.query.state import State
from adapters.query.vocabulary import KEYWORDS, TOKEN_WORDS
from engine.choices import Framework, Method, Precision
from engine.request import Request

_BATCH_WORDS: Final = frozenset(w for w, u in ALL_UNITS.items() if u.field == "micro_batch")
_PLAIN_BATCH: Final = frozenset({"bs", "bsz", "batch", "batch-size"})
"""Batch words that say nothing of where the batch is counted: beside a batch said per
device, the one they set is the global batch."""
_ACCUM_WORDS: Final = frozenset(w for w, u in ALL_UNITS.items() if u.field == "grad_accum")
_NODE_WORDS: Final = frozenset({"nodes", "node", "machines", "machine", "hosts", "host",
                                "servers", "server", "boxes", "box"})
_ONE_NODE: Final = frozenset({"node", "machine", "host", "server", "box"})

# --- the batch said per device, and the global batch beside it ---------------------------

_DEVICE_WORDS: Final = frozenset({"device", "gpu", "card", "rank", "worker", "process"})
_PER_DEVICE: Final = frozenset({"per-device", "per-gpu", "per-card", "per-rank"})
_SEQUENCES: Final = frozenset({"sequences", "samples", "examples", "seqs", "sequence",
                               "sample"})
"""Said between a batch and ``per gpu``: ``2 sequences per gpu``."""
_BATCH_EXAMPLE: Final = "8b full batch size 16 (8 per device) 2x a100"


def _per_device_words(s: State, j: int, bare: bool) -> int:
    """Words at ``j`` that say "per device" (``per gpu``, ``per_device``; ``device`` alone
    when ``bare``, as ``2/device`` is read; ``gpu batch`` with no number after, as
    ``4/gpu batch`` is read), or 0."""
    if s.low(j) == "per" and s.low(j + 1) in _DEVICE_WORDS:
        return 2
    if (s.low(j) in _DEVICE_WORDS and s.low(j + 1) in _BATCH_WORDS
            and read_number(s.low(j + 2)) is None):
        return 2
    return 1 if s.low(j) in _PER_DEVICE or (bare and s.low(j) == "device") else 0


def _after_batch(s: State, i: int) -> bool:
    """Whether the two words before ``i`` said the micro-batch (``bs 2``, ``2 bs``)."""
    before = (s.low(i - 2), s.low(i - 1))
    said = (before[0] in _BATCH_WORDS and read_number(before[1]) is not None) or (
        read_number(before[0]) is not None and before[1] in _BATCH_WORDS)
    return i >= 2 and said and "micro_batch" in s.fields


def per_device(s: State, i: int) -> int:
    """``8 per device``, ``2 sequences per gpu``: a micro-batch said per device (settled
    beside any other batch by :func:`check_phrasing`); ``per gpu`` or ``/device`` right
    after a batch (``bs 2 per gpu``) says it was per device already."""
    if _after_batch(s, i) and (n := _per_device_words(s, i, bare=True)):
        return n
    num = read_number(s.low(i))
    if num is None or SIZE_RE.match(s.low(i)) or num.is_price or num.percent or num.suffix:
        return 0
    j = i + 1 + (s.low(i + 1) in _SEQUENCES)
    n = _per_device_words(s, j, bare=False)
    if not n:
        return 0
    phrase, word = s.raw(i, j + n - i), s.raw(i)
    value = whole(num.value, word, "micro_batch")
    check_field("micro_batch", value, phrase, word)
    said = s.pending.per_device
    if said is not None and said[0] != value:
        raise error(f'"{quoted(phrase)}" conflicts with "{quoted(said[1])}": both set the '
                    "micro-batch. Pick one.", phrase, example=_BATCH_EXAMPLE)
    s.pending.per_device = (value, phrase)
    return j + n - i


_GLOBAL_AFTER: Final = frozenset({"global", "effective", "total"})


def batch_scope(s: State, i: int) -> int:
    """``batch size 64 (global)``, ``batch_size 64 global``: the batch just said is the
    global batch (sequences per optimizer step over all cards), not the micro-batch."""
    if s.low(i) not in _GLOBAL_AFTER or read_number(s.low(i + 1)) is not None:
        return 0  # "effective 32" is a global batch of its own (adapters/query/steps.py)
    if not _after_batch(s, i) or s.pending.batch_word not in _PLAIN_BATCH:
        return 0
    phrase = s.raw(i - 2, 3)
    if s.global_batch is not None:
        raise error(f'"{quoted(phrase)}" conflicts with "{quoted(s.global_batch[1])}": both '
                    "set the global batch. Pick one.", phrase, example=_BATCH_EXAMPLE)
    value = s.fields.pop("micro_batch")
    s.sources.pop("micro_batch")
    assert isinstance(value, int)
    s.global_batch = (float(value), phrase)
    s.pending.batch_word = None
    return 1


_ACCUMULATE: Final = frozenset({"accumulate", "accumulating", "accumulates", "accumulated"})
_ACCUMULATE_JOINS: Final = frozenset({"gradients", "gradient", "grads", "over", "for",
                                      "across", "of"})
_ACCUMULATE_TAILS: Final = frozenset({"steps", "step", "micro-batches", "microbatches",
                                      "batches", "micro-steps"})


def accumulate(s: State, i: int) -> int:
    """``accumulate 8 steps``, ``accumulate gradients over 8 steps``: the accumulation;
    the ``x`` in ``bs 4 x 8 accum`` joins the batch and the accumulation."""
    low = s.low(i)
    if low in ("x", "*") and _after_batch(s, i):
        nxt, after = s.low(i + 1), s.low(i + 2)
        if (read_number(nxt) is not None and after in _ACCUM_WORDS) or (
                nxt in _ACCUM_WORDS and read_number(after) is not None):
            return 1
        return 0
    if low not in _ACCUMULATE:
        return 0
    j = i + 1
    while s.low(j) in _ACCUMULATE_JOINS:
        j += 1
    num = read_number(s.low(j))
    if num is None:
        raise error(f'"{quoted(s.raw(i))}" needs the micro-batches it accumulates, e.g. '
                    '"accumulate 8 steps" (or "accum 8").', s.raw(i),
                    example="8b full fsdp 4x a10g accumulate 8 steps")
    end = j + 1 + (s.low(j + 1) in _ACCUMULATE_TAILS)
    value = ALL_UNITS["accum"].convert(num, s.raw(j))
    s.set("grad_accum", value, s.raw(i, end - i), s.raw(j))
    return end - i


_OF_FIELDS: Final = frozenset({"seq_len", "max_len", "micro_batch", "grad_accum",
                               "lora_rank"})


def unit_of(s: State, i: int) -> int:
    """``sequence length of 2048 tokens``, ``context of 4096 tokens``, ``gradient
    accumulation of 8``, ``batch size of 8``: a unit, ``of``, its number (and ``tokens``
    after a length)."""
    unit = PREFIX_UNITS.get(s.low(i))
    if unit is None or unit.field not in _OF_FIELDS or s.low(i + 1) != "of":
        return 0
    num = read_number(s.low(i + 2))
    if num is None:
        return 0
    end = i + 3 + (unit.field in ("seq_len", "max_len") and s.low(i + 3) in TOKEN_WORDS)
    s.set(unit.field, unit.convert(num, s.raw(i + 2)), s.raw(i, end - i), s.raw(i + 2))
    if unit.field == "micro_batch":
        s.pending.batch_word = s.low(i)
    return end - i


# --- the sequence said in tokens -----------------------------------------------------------

_PER_LENGTH: Final = frozenset({"sequence", "seq", "sample", "example", "row", "sequences",
                                "samples", "examples"})
_SEQUENCE_WORDS: Final = frozenset({"sequences", "sequence", "seqs"})
_CONTEXT_WORDS: Final = _SEQUENCE_WORDS | {"seq", "context", "ctx", "context-length",
                                           "window"}
_GLUED_TOKENS: Final = re.compile(r"^([0-9]+(?:\.[0-9]+)?k?)-tokens?$")
"""``2048-token``, ``16k-token``: a length glued to its unit."""


def _length(num: Num | None) -> bool:
    """Whether ``num`` can be a sequence length said in tokens (``4096``, ``16k``; not
    ``50M``, a dataset's size)."""
    return num is not None and num.suffix in ("", "k") and not (num.is_price or num.percent)


def _sequence(s: State, num: Num, word: str, phrase: str) -> None:
    s.set("seq_len", ALL_UNITS["seq"].convert(num, word), phrase, word)  # k = 1,024


def sequence(s: State, i: int) -> int:
    """``2048-token sequences``, ``16k token sequences``, ``8k tokens seq``, ``sequences of
    4096 tokens``, ``max 4096 tokens``: the sequence length; ``16k tokens per sequence``
    (or ``per sample``) is a sample's length, and the sequence length when no sample count
    is said (:func:`sample_length_as_sequence`)."""
    low = s.low(i)
    glued = _GLUED_TOKENS.match(low)
    if glued and s.low(i + 1) in _CONTEXT_WORDS and _length(num := read_number(glued.group(1))):
        assert num is not None
        _sequence(s, num, s.raw(i), s.raw(i, 2))
        return 2
    if (low in ("max", "maximum") and _length(num := read_number(s.low(i + 1)))
            and s.low(i + 2) in TOKEN_WORDS and s.low(i + 3) != "per"):
        assert num is not None
        _sequence(s, num, s.raw(i + 1), s.raw(i, 3))
        return 3
    if (low in _SEQUENCE_WORDS and s.low(i + 1) == "of"
            and _length(num := read_number(s.low(i + 2))) and s.low(i + 3) in TOKEN_WORDS):
        assert num is not None
        _sequence(s, num, s.raw(i + 2), s.raw(i, 4))
        return 4
    num = read_number(low)
    if num is None or SIZE_RE.match(low) or s.low(i + 1) not in TOKEN_WORDS:
        return 0
    if s.low(i + 2) == "per" and s.low(i + 3) in _PER_LENGTH:
        if num.is_price or num.percent:
            raise error(f'"{quoted(s.raw(i))}" must be a plain count of tokens.', s.raw(i),
                        example="8b lora 16k tokens per sequence h100")
        phrase = s.raw(i, 4)
        s.set("sample_tokens", whole(num.scaled(), s.raw(i), "sample_tokens"), phrase,
              s.raw(i))
        s.pending.per_sample = (num, phrase, s.raw(i))
        return 4
    if (s.low(i + 2) in _SEQUENCE_WORDS | {"seq"} and read_number(s.low(i + 3)) is None
            and _length(num)):  # "2048 tokens seq bs 4": the number before is the length
        _sequence(s, num, s.raw(i), s.raw(i, 3))
        return 3
    return 0


def sample_length_as_sequence(
    fields: dict[str, object], sources: dict[str, str], state: State, counted: bool
) -> None:
    """``16k tokens per sequence`` with no sample count (``counted``: one is said beside
    the words, in an option, a config or the earlier estimate) is the sequence length, as
    ``seq 16k`` reads it; with a count it stays each sample's average length."""
    said = state.pending.per_sample
    if said is None or counted or "samples" in fields or "seq_len" in fields:
        return
    if fields.get("sample_tokens") is None:
        return
    num, phrase, word = said
    del fields["sample_tokens"]
    sources.pop("sample_tokens", None)
    value = ALL_UNITS["seq"].convert(num, word)
    check_field("seq_len", value, phrase, word)
    fields["seq_len"] = value
    sources["seq_len"] = phrase


# --- a node named by its cards ----------------------------------------------------------------

_N_GPU: Final = re.compile(r"^([0-9]+)-(?:gpus?|cards?)$")
"""``8-GPU``: a count of cards glued to the word."""


def whole_count(text: str) -> int | None:
    """A whole count of 1 or more written as ``text`` (no scale), else None."""
    num = read_number(text)
    if num is None or num.suffix or not math.isfinite(num.value) or num.value < 1:
        return None
    return int(num.value) if num.value == int(num.value) else None


def _cards_in_node(s: State, j: int) -> tuple[int, int] | None:
    """The count at ``j`` that a node's cards are said with (``8x``, ``8 x``, ``8-gpu``)
    and the word after it."""
    low = s.low(j)
    if (glued := COUNT_X_RE.match(low) or _N_GPU.match(low)) is not None:
        count = whole_count(glued.group(1))
        return None if count is None else (count, j + 1)
    if COUNT_RE.match(low) and s.low(j + 1) in ("x", "*") and (count := whole_count(low)):
        return count, j + 2
    return None


def card_span(s: State, j: int) -> tuple[str, int] | None:
    """A card id for the longest run of up to three words at ``j`` that names one."""
    for n in (3, 2, 1):
        if j + n <= len(s.words):
            found = resolve_gpu(s.catalog, " ".join(w.low for w in s.words[j : j + n]))
            if found:
                return found, n
    return None


def node_of_cards(s: State, i: int) -> int:
    """``a single 8xH100 node``, ``one 8x h100 node``, ``an 8-GPU A100 node`` (1 node of
    8), ``2 8xH100 nodes``, ``2 x 8xH100 nodes``, ``8xh100 x 2 nodes`` (2 nodes of 8:
    16 cards); ``8-GPU A100`` alone is 8 cards."""
    nodes, j = None, i
    if COUNT_RE.match(s.low(i)) and (count := whole_count(s.low(i))) is not None:
        k = i + 1 + (s.low(i + 1) in ("x", "*"))
        if _cards_in_node(s, k) is not None:
            nodes, j = count, k
    inner = _cards_in_node(s, j)
    if inner is None:
        return 0
    per_node, k = inner
    card = card_span(s, k)
    glued_gpus = bool(_N_GPU.match(s.low(j)))
    if card is None and not (glued_gpus and s.low(k) in _NODE_WORDS):
        return 0
    end = k + (card[1] if card else 0)
    if nodes is not None:
        if s.low(end) not in _NODE_WORDS:
            return 0
        end += 1
    elif s.low(end) in _ONE_NODE:
        if read_number(s.low(end + 1)) is not None and s.low(end + 2) not in ALL_UNITS:
            return 0  # "8x h100 node 2": the nodes' count, read as "nodes 2" is
        nodes, end = 1, end + 1
    elif (s.low(end) in ("x", "*") and (after := whole_count(s.low(end + 1))) is not None
          and COUNT_RE.match(s.low(end + 1)) and s.low(end + 2) in _NODE_WORDS):
        nodes, end = after, end + 3
    elif not glued_gpus:
        return 0
    phrase = s.raw(i, end - i)
    if card is not None:
        s.set("gpu", card[0], s.raw(k, card[1]))
    s.set("gpu_count", per_node * (nodes or 1), phrase, s.raw(j))
    if nodes is not None:
        s.set("nodes", nodes, phrase)
    return end - i


_DGX_CARDS: Final = frozenset({"a100-80gb-sxm", "a100-40gb-sxm", "h100-sxm", "h200-sxm",
                               "b200", "b300"})
"""The cards an NVIDIA DGX holds 8 of (DGX A100, H100, H200, B200, B300)."""
_DGX_EXAMPLE: Final = "70b full 10M tokens dgx h100"


def dgx(s: State, i: int) -> int:
    """``dgx h100`` (``dgx-h100``): one DGX, a node of 8 of its card, as ``1 node of 8x
    h100`` reads; ``2 dgx h100``, ``2x dgx h100s``, ``2 dgx h100 nodes``: 2 such nodes.
    A DGX of another card (``dgx v100``: a DGX-1 or DGX-2), or none, is refused with the
    count to name instead."""
    j = i
    if (glued := COUNT_X_RE.match(s.low(i))) or COUNT_RE.match(s.low(i)):
        j = i + 1 + (not glued and s.low(i + 1) in ("x", "*"))
    low = s.low(j)
    if low != "dgx" and not low.startswith("dgx-"):
        return 0
    nodes = whole_count(glued.group(1) if glued else s.low(i)) if j > i else 1
    if nodes is None:
        return 0
    card = card_span(s, j + 1) if low == "dgx" else (resolve_gpu(s.catalog, low[4:]), 0)
    if card is None or card[0] is None or card[0] not in _DGX_CARDS:
        size = card[1] if card and card[0] else 0
        named, cards = s.raw(j, 1 + size), s.raw(j + 1, size) if size else "h100"
        raise error(f'"{quoted(named)}": a DGX is read as one node of 8 cards for DGX A100, '
                    f'H100, H200, B200 and B300; for another, name its cards ("8x '
                    f'{quoted(cards)}").', named, example=_DGX_EXAMPLE)
    end = j + 1 + card[1]
    end += s.low(end) in _NODE_WORDS  # "dgx h100 node", "2 dgx h100 nodes"
    phrase = s.raw(i, end - i)
    s.set("gpu", card[0], s.raw(j, end - j))
    s.set("gpu_count", 8 * nodes, phrase, s.raw(i))
    s.set("nodes", nodes, phrase)
    return end - i


# --- words for a framework, a card count, a precision ----------------------------------------

_PRECISION_WORDS: Final = frozenset(w for w, (f, _) in KEYWORDS.items() if f == "precision")


def framework_words(s: State, i: int) -> int:
    """``Trainer`` (the Hugging Face Trainer: ``hf`` unless another framework is said),
    torchtune's ``single device`` (one card), and ``full precision`` beside a precision
    (read with it; alone it could be FP32 or an unquantized 16-bit base, so it is asked
    about)."""
    low = s.low(i)
    if low == "trainer":
        s.launch.hf_launcher = s.launch.hf_launcher or s.raw(i)
        return 1
    single = low == "1" and s.raw(i).lower() == "single" and s.low(i + 1) == "device"
    if low == "single-device" or single:
        s.launch.counts.append((1, False, s.raw(i, 1 + single)))
        return 1 + single
    if low != "full-precision":
        return 0
    if any(w.low in _PRECISION_WORDS for w in s.words):
        return 1
    raise error(f'"{quoted(s.raw(i))}" could mean FP32 weights or an unquantized 16-bit base '
                "(no QLoRA): say fp32 or bf16.", s.raw(i), example="8b lora bf16 50M tokens")


# --- once every word is read -------------------------------------------------------------------


def check_phrasing(s: State) -> None:
    """Settle the batch said per device (beside a plain batch, that one is the global
    batch). Runs after the nodes are counted, before the sharding words
    (:func:`adapters.query.sharding_words.check_sharding`), the global batch and DeepSpeed
    are (:mod:`adapters.query.scanner`)."""
    said = s.pending.per_device
    if said is not None:
        value, phrase = said
        micro = s.fields.get("micro_batch")
        if isinstance(micro, int) and micro != value and s.global_batch is None and (
                s.pending.batch_word in _PLAIN_BATCH):
            # "batch size 16 (8 per device)": 16 sequences a step over all cards
            s.global_batch = (float(micro), s.sources.pop("micro_batch"))
            del s.fields["micro_batch"]
        s.set("micro_batch", value, phrase)


def fp8_as_float8(
    fields: dict[str, object], sources: Mapping[str, str], previous: Request | None = None
) -> None:
    """``fp8`` under torchtitan (a full fine-tune, said or its default) is its float8
    converter: torchtitan trains 16-bit weights, so its FP8 is FP8 matmuls (``float8``),
    never an FP8 base. ``fields``: a query's, or a follow-up's merged with its thread's
    (``previous``); only an ``fp8`` said this time is read so."""
    said = sources.get("precision", "")
    if fields.get("precision") is not Precision.FP8 or said.lower() != "fp8":
        return
    if fields.get("framework") is not Framework.TORCHTITAN:
        return
    if fields.get("method") in (Method.LORA, Method.QLORA):
        return
    earlier = previous.precision if previous is not None else None
    if previous is not None and "precision" in previous.model_fields_set and (
            earlier is not Precision.FP8):
        fields["precision"] = earlier
    else:
        del fields["precision"]
    fields["float8"] = True

