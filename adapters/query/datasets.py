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

from adapters.query.numbers import ALL_UNITS, read_number, whole
from adapters.query.state import State
from adapters.query.vocabulary import TOKEN_WORDS

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
_COUNT_STOPS: Final = frozenset({"samples", "sample", "examples", "rows", "steps", "x"})
"""Words after a number that make it something else than the dataset's samples (the
samples rule reads ``alpaca 52k samples`` itself)."""
_NUMBER_AFTER: Final = frozenset(
    {"micro_batch", "grad_accum", "seq_len", "max_len", "lora_rank", "lora_dropout", "mfu",
     "tensor_parallel", "context_parallel"}
)
"""Fields whose unit people write before its number (``bs 4``, ``seq 2048``, ``r 16``)."""
_LENGTH_JOINS: Final = frozenset({"of", "x", "*", "at", "@", "avg", "averaging", "each"})


def dataset_name(s: State, i: int) -> int:
    """``alpaca``, ``tatsu-lab/alpaca``: read as naming the data (nothing set);
    ``alpaca 52k``: 52,000 samples; ``alpaca 52k of 300 tokens``: and their length."""
    if s.low(i) not in DATASET_WORDS:
        return 0
    num = read_number(s.low(i + 1))
    if num is None or num.is_price or num.percent or _claimed(s, i + 2):
        return 1
    word = s.raw(i + 1)
    s.set("samples", whole(num.scaled(), word, "samples"), s.raw(i, 2), word)
    length = read_number(s.low(i + 3))
    if s.low(i + 2) in _LENGTH_JOINS and length is not None and s.low(i + 4) in TOKEN_WORDS:
        s.set("sample_tokens", whole(length.scaled(), s.raw(i + 3), "sample_tokens"),
              s.raw(i + 2, 3), s.raw(i + 3))
        return 5
    return 2


def _claimed(s: State, j: int) -> bool:
    """Whether the word at ``j`` claims the number before it: a unit said after its
    number (``alpaca 3 epochs``), or a word that makes it something else than samples.
    A unit whose number follows it (``alpaca 52k bs 4``) leaves the count to the
    dataset."""
    after = s.low(j)
    if after in _COUNT_STOPS:
        return True
    unit = ALL_UNITS.get(after)
    if unit is None:
        return False
    return unit.field not in _NUMBER_AFTER or read_number(s.low(j + 1)) is None
