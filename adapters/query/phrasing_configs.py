"""Settings as published runs' logs, configs and READMEs shorten them, beyond
:mod:`adapters.query.phrasing`: a batch and its accumulation glued (``bs16xga4``), LoRA's
alpha right after its rank (``r8 a16``), a node and its cards joined by a slash (``1
node/8 gpus``), a sequence cut ``truncate to 4096``, every sample padded to the longest
allowed (``padding max_length``), a link said absent (``w/o nvlink``), ring attention
beside its ``cp`` degree, and a batch counted in tokens (``tokens/step 1M``) or
``sequence parallel``, which are refused with how to say them.

:func:`published` is the scanner's handler (scan state and word index in, words consumed
out); :func:`check_published` settles what needs every word read first (the card a
``w/o nvlink`` describes, the sample count beside ``padding max_length``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.names import resolve_gpu
from adapters.query.numbers import ALL_UNITS, COUNT_RE, read_number, whole
from adapters.query.phrases import NODE_WORDS
from adapters.query.state import State, require
from adapters.query.steps import card_beneath, field_beneath
from adapters.query.vocabulary import CARD_WORDS, NEGATIONS, TOKEN_WORDS
from engine.request import Request

# --- a batch and its accumulation glued: bs16xga4 -------------------------------------------

_BATCH_BY_ACCUM: Final = re.compile(
    r"^(bs|bsz|mbs|micro-bs|batch)([0-9]+)[x*](ga|gas|accum)([0-9]+)$"
)
"""``bs16xga4``, ``bs4xga8``: the micro-batch times the accumulation, as run names and
logs write them."""


def batch_by_accum(s: State, i: int) -> int:
    """``bs16xga4``: micro-batch 16, accumulation 4 (as ``bs 16 x ga 4`` is read)."""
    found = _BATCH_BY_ACCUM.match(s.low(i))
    if found is None:
        return 0
    word = s.raw(i)
    batch = ALL_UNITS["bs"].convert(require(read_number(found.group(2))), word)
    accum = ALL_UNITS["ga"].convert(require(read_number(found.group(4))), word)
    s.set("micro_batch", batch, word, word)
    s.pending.batch_word = found.group(1)  # "bs16xga4 (8 per device)": a plain batch
    s.set("grad_accum", accum, word, word)
    return 1


# --- LoRA's alpha right after its rank: r8 a16 ----------------------------------------------

_ALPHA: Final = re.compile(r"^(a|alpha|lora-alpha)[0-9]+(?:\.[0-9]+)?$")
_RANK_WORDS: Final = frozenset(w for w, u in ALL_UNITS.items() if u.field == "lora_rank")


def _after_rank(s: State, i: int) -> bool:
    """Whether the two words before ``i`` said the LoRA rank (``r 8``, ``8 r``)."""
    before, last = s.low(i - 2), s.low(i - 1)
    return i >= 2 and "lora_rank" in s.fields and (
        (before in _RANK_WORDS and read_number(last) is not None)
        or (read_number(before) is not None and last in _RANK_WORDS))


def alpha(s: State, i: int) -> int:
    """``alpha16`` anywhere, ``a16`` or ``a 16`` right after a rank (``r8 a16``, ``r 8 a
    16``): LoRA's alpha, read
    and ignored as ``alpha 16`` is (it only scales the update). A card's name is never
    an alpha (``r8 a100`` is the rank and an A100)."""
    if (s.low(i) == "a" and read_number(s.low(i + 1)) is not None and _after_rank(s, i)
            and resolve_gpu(s.catalog, s.low(i + 1)) is None):
        return 2  # "r 8 a 16": the alpha, spaced as the rank is ("r 16 a 4090": a card)
    found = _ALPHA.match(s.low(i))
    if found is None:
        return 0
    if found.group(1) == "a" and (
            resolve_gpu(s.catalog, s.low(i)) is not None or not _after_rank(s, i)):
        return 0
    return 1


# --- a node and its cards joined by a slash: 1 node/8 gpus --------------------------------

_NODE_SLASH: Final = re.compile(r"^(nodes?|machines?|hosts?|servers?)/([0-9]+)$")


def node_slash(s: State, i: int) -> int:
    """``1 node/8 gpus``, ``1 node / 8 gpus``: the nodes, then the cards, as ``1 node, 8
    gpus`` reads them (the count per node when a node holds that many, else the total:
    :func:`adapters.query.phrases.check_nodes`)."""
    low = s.low(i)
    if low == "/" and s.low(i - 1) in NODE_WORDS and "nodes" in s.fields and COUNT_RE.match(
            s.low(i + 1)):
        s.per_node_if_it_fits = True  # "8 gpus" is read next
        return 1
    found = _NODE_SLASH.match(s.low(i + 1))
    if found is None or not COUNT_RE.match(low):
        return 0
    n = 2 + (s.low(i + 2) in CARD_WORDS)
    s.set("nodes", whole(require(read_number(low)).value, s.raw(i), "nodes"), s.raw(i, 2),
          s.raw(i))
    s.set("gpu_count", whole(float(found.group(2)), s.raw(i + 1), "gpu_count"), s.raw(i, n),
          s.raw(i + 1))
    s.per_node_if_it_fits = True
    return n


# --- a sequence cut "to" a length: truncate to 4096 ---------------------------------------

_TRUNCATE: Final = frozenset({"truncate", "truncation", "truncated", "truncating"})


def truncate_to(s: State, i: int) -> int:
    """``truncate to 4096``, ``truncated at 2k tokens``: each sample cut at that length, as
    ``truncate 4096`` (``max_len``; said without a sequence length, also the sequence
    the memory is sized for)."""
    if s.low(i) not in _TRUNCATE:
        return 0
    if s.low(i + 1) not in ("to", "at"):
        # HF's tokenizer(truncation=True, max_length=2048): a switch; its length is said apart
        return 1 if read_number(s.low(i + 1)) is None else 0
    num = read_number(s.low(i + 2))
    if num is None:
        return 0
    n = 3 + (s.low(i + 3) in TOKEN_WORDS)  # "truncated at 2048 tokens"
    value = ALL_UNITS["truncate"].convert(num, s.raw(i + 2))
    s.set("max_len", value, s.raw(i, n), s.raw(i + 2))
    return n


# --- every sample padded to the longest allowed: padding max_length ------------------------

_PAD_WORDS: Final = frozenset({"pad", "padding", "padded"})
_MAX_LENGTH: Final = frozenset({"max-length", "max-len", "maxlen", "max-seq-length",
                                "max-seq-len"})
_PAD_TO_MAX: Final = frozenset({"pad-to-max-length", "padding-max-length"})
"""HF's ``pad_to_max_length`` (older scripts) said as one word."""
PADDING_EXAMPLE: Final = "8b full padding max_length seq 4096 8x a100 50M tokens"


def _padding_to_max(s: State, i: int) -> int:
    """Words at ``i`` that pad every sample to the longest allowed (``padding
    max_length``, ``pad to max length``, ``pad_to_max_length``), or 0."""
    if s.low(i) in _PAD_TO_MAX:
        return 1
    if s.low(i) not in _PAD_WORDS:
        return 0
    j = i + 1 + (s.low(i + 1) == "to")
    return j - i + 1 if s.low(j) in _MAX_LENGTH else 0


def padding(s: State, i: int) -> int:
    """``padding max_length``, ``padding to max length``: every sequence is the sequence
    length long, as the estimate counts a run given in tokens; nothing to set (a sample
    count beside it is settled by :func:`check_published`). A length after it (``pad to
    max length 4096``) is read next, as ``max length 4096``."""
    n = _padding_to_max(s, i)
    if n > 1 and read_number(s.low(i + n)) is not None:
        return n - 1
    return n


# --- a link said absent: w/o nvlink ---------------------------------------------------------

_NO_NVLINK: Final = frozenset({"no-nvlink", "nonvlink", "without-nvlink"})


def _nvlink_off(s: State, i: int) -> int:
    """Words at ``i`` that say the cards have no NVLink (``w/o nvlink``, ``no nvlink``)."""
    if s.low(i) in _NO_NVLINK:
        return 1
    return 2 if s.low(i) in NEGATIONS and s.low(i + 1) == "nvlink" else 0


# --- a batch counted in tokens: refused ---------------------------------------------------

_PER_STEP: Final = frozenset({"tokens/step", "tokens-per-step", "tok/step", "tokens/batch",
                              "tokens-per-batch", "tokens/iter"})
_STEP_NOUNS: Final = frozenset({"step", "batch", "iteration", "iter", "update",
                                "optimizer-step"})
TOKENS_PER_STEP_EXAMPLE: Final = "8b full global batch size 512 seq 2048 8x h100"


def _tokens_per_step(s: State, i: int) -> int:
    """Words at ``i`` that count a step's batch in tokens (``tokens/step 1M``, ``1M
    tokens per step``, ``global batch 4M tokens``), or 0."""
    low, number = s.low(i), read_number(s.low(i)) is not None
    of = s.low(i + 1) == "of"  # "global batch of 4M tokens"
    if (low == "global-batch-size" and read_number(s.low(i + 1 + of))
            and s.low(i + 2 + of) in TOKEN_WORDS):
        return 3 + of
    if low in _PER_STEP:
        return 1 + (read_number(s.low(i + 1)) is not None)
    if number and s.low(i + 1) in _PER_STEP:
        return 2
    if low in TOKEN_WORDS and s.low(i + 1) == "per" and s.low(i + 2) in _STEP_NOUNS:
        return 3 + (read_number(s.low(i + 3)) is not None)
    if number and s.low(i + 1) in TOKEN_WORDS and s.low(i + 2) == "per" and (
            s.low(i + 3) in _STEP_NOUNS):
        return 4
    return 0


def tokens_per_step(s: State, i: int) -> int:
    """``tokens/step 1M``: a global batch counted in tokens, which the language has no
    word for (its global batch counts sequences); refused with how to say it."""
    n = _tokens_per_step(s, i)
    if not n:
        return 0
    phrase = s.raw(i, n)
    raise error(
        f'"{quoted(phrase)}": a batch counted in tokens is not read. Say the global batch '
        'in sequences with their length ("global batch size 512 seq 2048" is 512 x 2,048, '
        'about 1M tokens a step), or the micro-batch and accumulation ("bs 8 accum 8").',
        None if "/" in phrase else phrase,  # never a Hub model's org/name
        example=TOKENS_PER_STEP_EXAMPLE,
    )


# --- sequence splitting said by its kernel's name: ring attention -------------------------

_RING: Final = frozenset({"ring-attention", "ring-attn", "ringattention"})
CP_EXAMPLE: Final = "8b lora seq 128k cp 8 8x h100"


def _ring_attention(s: State, i: int) -> int:
    """Words at ``i`` that name ring attention (``ring attention``, ``ring_attn``), or 0."""
    if s.low(i) in _RING:
        return 1
    return 2 if s.low(i) == "ring" and s.low(i + 1) in ("attention", "attn") else 0


def sequence_parallel(s: State, i: int) -> int:
    """``sequence parallel``: refused with what to say (Megatron's comes with tensor
    parallelism, ``tp``; a sequence split over cards is context parallelism, ``cp``)."""
    if s.low(i) not in ("sequence", "seq") or s.low(i + 1) not in ("parallel",
                                                                    "parallelism"):
        return 0
    phrase = s.raw(i, 2)
    raise error(f'"{quoted(phrase)}" is not read: Megatron\'s sequence parallelism comes with '
                'tensor parallelism (say "tp 8"); to split each sequence over the cards, say '
                'context parallelism and its degree ("cp 8").', phrase, example=CP_EXAMPLE)


# --- nodes times cards with spaces: 2 x 8 h100 -------------------------------------------------

def spaced_grid(s: State, i: int) -> int:
    """``2 x 8 h100``, ``2 × 8 H100``: 2 nodes of 8 cards, as ``2x8 h100`` reads (the
    card is read next)."""
    if not (COUNT_RE.match(s.low(i)) and s.low(i + 1) in ("x", "*")
            and COUNT_RE.match(s.low(i + 2))):
        return 0
    after = s.low(i + 3)
    if after not in CARD_WORDS and resolve_gpu(s.catalog, after) is None:
        return 0
    said = s.raw(i, 3)
    node_count = whole(require(read_number(s.low(i))).value, said, "nodes")
    per_node = whole(require(read_number(s.low(i + 2))).value, said, "gpu_count")
    s.set("nodes", node_count, said)
    s.set("gpu_count", node_count * per_node, said)
    return 3 + (after in CARD_WORDS)


# --- the handler and the checks ---------------------------------------------------------------

_READERS: Final = (batch_by_accum, alpha, node_slash, truncate_to, padding, tokens_per_step,
                   _ring_attention, sequence_parallel, spaced_grid)


def published(s: State, i: int) -> int:
    """The phrasings of this module at word ``i`` (the scanner's handler)."""
    for read in _READERS:
        if consumed := read(s, i):
            return consumed
    return _nvlink_off(s, i)  # settled by check_published once the card is read


def _said(s: State, words: Callable[[State, int], int]) -> str | None:
    """The first phrase the matcher ``words`` (the words it matches at an index) finds
    in the query, as typed; None when there is none."""
    for i in range(len(s.words)):
        if n := words(s, i):
            return s.raw(i, n)
    return None


def _check_nvlink(s: State) -> None:
    """``w/o nvlink`` on a card that has no NVLink (GeForce, the PCIe and professional
    cards, AMD's and Gaudi's) says nothing new: the catalog already times them over
    their own link. On an NVLink card (SXM, NVSwitch) it is refused, naming the card's
    PCIe version where the catalog has one; with no card named it asks for the card."""
    said = _said(s, _nvlink_off)
    if said is None:
        return
    word = None if "/" in said else said
    card_id = s.fields.get("gpu") or card_beneath()
    if not isinstance(card_id, str):
        raise error(f'"{quoted(said)}" says how the cards talk, but no card is named: name '
                    'it ("2x 4090", "8x h100-pcie").', word,
                    example="8b lora 2x 4090 w/o nvlink")
    card = s.catalog.gpu(card_id)
    if card.fabric != "nvlink":
        return
    pcie = resolve_gpu(s.catalog, card_id.replace("sxm", "pcie"))
    if pcie is not None and s.catalog.gpu(pcie).fabric == "nvlink":
        pcie = None  # "b200": no PCIe version in the catalog
    instead = f'its PCIe version, "{pcie}"' if pcie else "a card without it"
    raise error(f'"{quoted(said)}": every machine of the {card.name} joins its cards over '
                f"NVLink ({card.interconnect.replace('(', '').replace(')', '')}): name "
                f'{instead}, or leave "{quoted(said)}" out.', word,
                example=f"8b lora 8x {pcie or 'l40s'} w/o nvlink")


def _check_padding(s: State) -> None:
    """``padding max_length`` beside a sample count, unpacked: every sample would cost
    the sequence length, but the estimate runs each at its average length, so it is
    refused with the samples' length to say instead."""
    said = _said(s, _padding_to_max)
    if said is None or "samples" not in s.fields or s.fields.get("packing") is True:
        return
    seq = s.fields.get("seq_len") or s.fields.get("max_len") or Request.model_fields[
        "seq_len"].default
    raise error(
        f'"{quoted(said)}" pads every sample to the sequence length, but with a sample count '
        "the estimate runs each sample at its average length: to count the padding, give "
        f'the samples that length ("{s.fields["samples"]:,} samples of {seq} tokens"), or '
        "say packing.", None if "/" in said else said, example=PADDING_EXAMPLE,
    )


def _check_ring(s: State) -> None:
    """``ring attention`` says how context parallelism exchanges keys and values: with a
    ``cp`` degree it says nothing more; without one it is refused, asking for it."""
    said = _said(s, _ring_attention)
    degree = s.fields.get("context_parallel") or field_beneath("context_parallel")
    if said is None or (isinstance(degree, int) and degree > 1):
        return
    raise error(f'"{quoted(said)}" is how context parallelism splits each sequence over the '
                'cards: say its degree, e.g. "cp 8".', said, example=CP_EXAMPLE)


def check_published(s: State) -> None:
    """Settle ``w/o nvlink`` against the card, ``padding max_length`` against a sample
    count and ``ring attention`` against a ``cp`` degree (once every word is read)."""
    _check_nvlink(s)
    _check_padding(s)
    _check_ring(s)
