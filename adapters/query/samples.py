"""Datasets counted in samples: ``10k samples of 512 tokens``, ``20k examples avg 800
tokens``, ``packed to 4k``, and the check that turns samples x average length into the
dataset's tokens once every word is read.

Each handler takes the scan state and the word index and returns the words it consumed
(0: not its phrase), like the handlers in :mod:`adapters.query.scanner`.
"""

from __future__ import annotations

from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import FIELDS, range_text
from adapters.query.numbers import ALL_UNITS, Num, read_number, whole
from adapters.query.state import State
from adapters.query.vocabulary import TOKEN_WORDS
from engine.constants import MAX_DATASET_TOKENS
from engine.request import Request

SAMPLE_WORDS: Final = frozenset(
    {"samples", "sample", "examples", "example", "rows", "row", "conversations",
     "conversation", "records", "record", "documents", "docs", "pairs", "instances",
     "sequences", "dialogues", "items", "prompts", "lines"}
)
_SAMPLE_KEYS: Final = frozenset({"samples", "examples", "num-samples", "num-examples"})
"""Before a number: ``samples 10k``, HF Trainer's log line ``Num examples = 10,000``."""
LENGTH_JOINS: Final = frozenset(
    {"of", "x", "*", "avg", "average", "mean", "at", "@", "with", "each", "~", "approx",
     "about", "around", "averaging", "avg-len", "avg-length", "typically"}
)
"""Words between a sample count and its length (``10k samples of 512 tokens``; also after
a dataset's count, ``alpaca 52k x 300 tokens``)."""
MAX_SAMPLE_TOKENS_ASKED: Final = 1_000_000
"""A token count beside a sample count below this may be their average length (the
refusal asks); above it, it can only be the dataset's size."""
_LENGTH_TAILS: Final = frozenset({"each", "avg", "average", "on-average", "per-sample", "mean"})
_AVG_WORDS: Final = frozenset({"avg", "average", "mean", "avg-len", "avg-length", "averaging"})


def samples(s: State, i: int) -> int:
    """``10k samples of 512 tokens``, ``20k examples avg 800 tokens``,
    ``50k rows x 1.2k tok``, ``samples 10k``; the count alone (``10k samples``) sets only
    ``samples``."""
    num, at = s.count_before(i, SAMPLE_WORDS), i
    if num is None and s.low(i) in _SAMPLE_KEYS:
        num, at = read_number(s.low(i + 1)), i + 1  # "samples 10k", "num_examples 10k"
    if num is None:
        return 0
    word = s.raw(at)
    s.set("samples", _count(num, word, "samples"), s.raw(i, 2), word)
    j = i + 2
    while s.low(j) in LENGTH_JOINS:
        j += 1
    length = read_number(s.low(j))
    if j > i + 2 and length is not None and s.low(j + 1) in TOKEN_WORDS:
        end = j + 2 + (s.low(j + 2) in _LENGTH_TAILS)
        s.set("sample_tokens", _count(length, s.raw(j), "sample_tokens"), s.raw(j, 2),
              s.raw(j))
        return end - i
    if s.low(i + 2) == "of" and length is not None:  # "52k samples of 300 a100"
        said, number = s.raw(i, 4), s.raw(j)
        raise error(f'"{quoted(said)}": {quoted(number)} what? Say the samples\' average '
                    f'length in tokens, "{quoted(said)} tokens".', number,
                    example=FIELDS["samples"].example)
    return 2


_PACKED_WORDS: Final = frozenset({"packed", "packing", "pack"})


def packed_to(s: State, i: int) -> int:
    """``packed 8192``, ``packed to 4k``, ``packing 2048``: samples packed into sequences
    of that length, so the number is the sequence length (torchtune's and TRL's packed
    datasets). A number that a unit claims (``packing 2 epochs``) is left to it."""
    if s.low(i) not in _PACKED_WORDS:
        return 0
    j = i + 1 + (s.low(i + 1) == "to")
    num = read_number(s.low(j))
    if num is None or s.low(j + 1) in ALL_UNITS or s.low(j + 1) in SAMPLE_WORDS:
        return 0
    s.set("packing", True, s.raw(i))
    seq = ALL_UNITS["seq"].convert(num, s.raw(j))  # as "seq 4k" reads it: k = 1,024
    s.set("seq_len", seq, s.raw(i, j - i + 1), s.raw(j))
    return j - i + 1


def sample_length(s: State, i: int) -> int:
    """``avg 800 tokens``, ``average length 800``, ``800 tokens each``."""
    if s.low(i) in _AVG_WORDS:
        j = i + 1 + (s.low(i + 1) in ("len", "length", "of"))
        num = read_number(s.low(j))
        if num is None:
            return 0
        end = j + 1 + (s.low(j + 1) in TOKEN_WORDS)
        s.set("sample_tokens", _count(num, s.raw(j), "sample_tokens"), s.raw(i, end - i),
              s.raw(j))
        return end - i
    num = read_number(s.low(i))
    if num is not None and s.low(i + 1) in TOKEN_WORDS and (
        s.low(i + 2) in ("each", "per-sample", "avg", "average")
        or (s.low(i + 2) == "per" and s.low(i + 3) in SAMPLE_WORDS)
    ):
        n = 4 if s.low(i + 2) == "per" else 3
        s.set("sample_tokens", _count(num, s.raw(i), "sample_tokens"), s.raw(i, n), s.raw(i))
        return n
    return 0


def _count(num: Num, word: str, field: str) -> int:
    if num.is_price or num.percent:
        raise error(f'"{quoted(word)}" must be a plain count for the {FIELDS[field].label}.',
                    word, example=FIELDS[field].example)
    return whole(num.scaled(), word, field)



def check_samples(fields: dict[str, object], strict: bool) -> None:
    """Samples x average length gives the dataset tokens. A count without a length sets
    no size (the reply gives memory and asks for the length, ``engine.assumptions``); a
    length without a count is refused."""
    count, length = fields.get("samples"), fields.get("sample_tokens")
    if isinstance(count, int) and isinstance(length, int):
        if "dataset_tokens" in fields and fields["dataset_tokens"] != count * length:
            raise error("Give the dataset either as tokens or as samples of a length, not "
                        "both.", None, example=FIELDS["samples"].example)
        if count * length > MAX_DATASET_TOKENS:  # named as said, not as a product never typed
            total = FIELDS["dataset_tokens"].show(count * length)
            raise error(f"{count:,} samples of {length:,} tokens is {total} tokens: the token "
                        f"count must be {range_text('dataset_tokens')}.",
                        None, example=FIELDS["samples"].example)
        fields["dataset_tokens"] = count * length
    elif isinstance(count, int) and isinstance(tokens := fields.get("dataset_tokens"), int):
        # "10k samples 512 tokens": a length, most likely, but never guessed
        question = (f'is {tokens:,} their average length? Say "{count:,} samples of '
                    f'{tokens:,} tokens", or give' if tokens < MAX_SAMPLE_TOKENS_ASKED
                    else "give")
        raise error(f"{count:,} samples beside {tokens:,} tokens: {question} the dataset as "
                    "tokens or as samples of a length, not both.", None,
                    example=FIELDS["samples"].example)
    elif strict and length is not None and count is None:
        raise error(
            "An average sample length needs a sample count, e.g. \"10k samples of 512 "
            'tokens".', None, example=FIELDS["samples"].example,
        )


LONGEST_SAMPLE_TOKENS: Final = 131_072
"""The longest average sample length a follow-up's bare token count is read as."""


def answers_sample_length(previous: Request, changes: dict[str, object]) -> bool:
    """Whether a follow-up's bare token count (``300 tokens``) answers the earlier
    reply's question: the thread counted samples without their length, and the count is
    no more than :data:`LONGEST_SAMPLE_TOKENS` (a dataset that small is not one)."""
    tokens = changes.get("dataset_tokens")
    return (previous.samples is not None and previous.sample_tokens is None
            and "samples" not in changes and "sample_tokens" not in changes
            and isinstance(tokens, int) and tokens <= LONGEST_SAMPLE_TOKENS)
