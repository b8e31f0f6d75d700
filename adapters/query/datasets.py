"""Datasets named as people name them: ``8b lora alpaca a100``.

A dataset's name says what the data is, not how much of it there is: it is read as naming
the data, like the word ``dataset`` itself, and sets nothing. Its size still comes from
the words that give one (``50M tokens``, ``52k samples of 300 tokens``); with none, the
reply gives memory and asks for a size for time and cost, as it does for any question
without one. A count right after the name is its samples (``alpaca 52k``), which, like
any count of samples, needs their average length.

Only words no other rule reads reach this one, so a model of the same name (a Guanaco
checkpoint, say) stays the model.
"""

from __future__ import annotations

from typing import Final

from adapters.query.names import resolve_gpu
from adapters.query.numbers import ALL_UNITS, SIZE_RE, read_number, whole
from adapters.query.samples import LENGTH_JOINS, SAMPLE_WORDS
from adapters.query.state import State
from adapters.query.vocabulary import CARD_WORDS, TOKEN_WORDS

DATASET_WORDS: Final = frozenset(
    {
        # Stanford Alpaca and its derivatives
        "alpaca", "alpaca-cleaned", "alpaca-gpt4", "stanford-alpaca", "code-alpaca",
        "codealpaca", "tatsu-lab/alpaca", "yahma/alpaca-cleaned", "vicgalle/alpaca-gpt4",
        # Databricks Dolly
        "dolly", "dolly-15k", "databricks-dolly-15k", "databricks/databricks-dolly-15k",
        # OpenAssistant
        "oasst", "oasst1", "oasst2", "openassistant", "openassistant-guanaco", "guanaco",
        "timdettmers/openassistant-guanaco", "openassistant/oasst1",
        # math and reasoning
        "metamathqa", "meta-math/metamathqa", "gsm8k", "openai/gsm8k",
        # chat and instruction mixtures
        "ultrachat", "ultrachat-200k", "huggingfaceh4/ultrachat-200k", "slimorca",
        "open-orca/slimorca", "openorca", "open-orca/openorca", "sharegpt", "lima",
        "no-robots", "huggingfaceh4/no-robots", "samsum",
        # plain text
        "tinystories", "wikitext", "wikitext-2", "wikitext-103",
    }
)
"""Datasets fine-tuning posts and tutorials name (Hub ids as ``org/name``, lower case,
``_`` read as ``-``)."""
MAX_CARDS_AFTER: Final = 1_024
"""A plain number up to this before a card is the card count (``alpaca 1000 h100``); a
larger one, or one in thousands (``52k``), is the samples."""
MIN_SAMPLES: Final = 1_000
"""A plain number after a dataset's name below this is not its sample count (``alpaca 2
h100``: two cards; ``gsm8k 8 h100``), as no fine-tuning set that people name is smaller."""


def dataset_name(s: State, i: int) -> int:
    """``alpaca``, ``tatsu-lab/alpaca``, ``wikitext 103``: read as naming the data
    (nothing set); ``alpaca 52k``: 52,000 samples; ``alpaca 52k of 300 tokens``: and
    their length (:func:`_samples_after`)."""
    low = s.low(i)
    if low not in DATASET_WORDS:
        return 0
    if f"{low}-{s.low(i + 1)}" in DATASET_WORDS:
        return 2  # "wikitext 103", "dolly 15k": the name's own number
    return 1 + _samples_after(s, i + 1)


def _samples_after(s: State, j: int) -> int:
    """Words at ``j`` that count the named dataset's samples, or 0: a plain count of at
    least :data:`MIN_SAMPLES` that nothing after it claims (a unit said after its number,
    a sample word, which the samples rule reads, or a card), then an optional ``of 300
    tokens``. A card's name (``alpaca 4090``) or a model size (``7b``) is never a count."""
    num, word = read_number(s.low(j)), s.raw(j)
    if (num is None or num.is_price or num.percent or num.scaled() < MIN_SAMPLES
            or SIZE_RE.match(s.low(j)) or resolve_gpu(s.catalog, s.low(j))
            or _claimed(s, j + 1, cards=num.scaled() <= MAX_CARDS_AFTER and s.low(j)[-1:]
                        not in ("k", "m"))):
        return 0
    s.set("samples", whole(num.scaled(), word, "samples"), s.raw(j - 1, 2), word)
    length = read_number(s.low(j + 2))
    if s.low(j + 1) in LENGTH_JOINS and length is not None and s.low(j + 3) in TOKEN_WORDS:
        s.set("sample_tokens", whole(length.scaled(), s.raw(j + 2), "sample_tokens"),
              s.raw(j + 1, 3), s.raw(j + 2))
        return 4
    return 1


_NUMBER_AFTER: Final = frozenset(
    {"micro_batch", "grad_accum", "seq_len", "max_len", "lora_rank", "lora_dropout", "mfu",
     "tensor_parallel", "context_parallel"}
)
"""Fields whose unit people write before its number (``bs 4``, ``seq 2048``, ``r 16``)."""


def _claimed(s: State, j: int, cards: bool) -> bool:
    """Whether the word at ``j`` claims the number before it: a sample word (the samples
    rule reads ``alpaca 52k conversations``), a card or a card count's word after a number
    that could count cards (``cards``: ``alpaca 1000 h100``; ``alpaca 52k a100`` and
    ``alpaca 52002 a100`` are samples on an A100), or a unit
    said after its number (``alpaca 3 epochs``). A unit whose number follows it (``alpaca
    52k bs 4``) leaves the count to the dataset."""
    after = s.low(j)
    if after in SAMPLE_WORDS or (
            cards and (after in CARD_WORDS or resolve_gpu(s.catalog, after))):
        return True
    unit = ALL_UNITS.get(after)
    if unit is None:
        return False
    return unit.field not in _NUMBER_AFTER or read_number(s.low(j + 1)) is None
