"""How many sequences one optimizer step takes and how many steps a run is.

* A global batch (``global batch size 64``, litgpt's and torchtitan's
  ``global_batch_size``) gives the accumulation per card: global / (micro-batch x
  data-parallel ranks). Beside a training config or options said with the text
  (:class:`Beneath`), the micro-batch and degrees the words leave are theirs, and their
  accumulation must agree.
* A run counted in optimizer steps (``1000 steps``, HF's ``max_steps``) gives the tokens
  it computes, steps x micro-batch x accumulation x data-parallel ranks x sequence, every
  position of every sequence a step runs (padding too).

Data-parallel ranks are the cards over tensor and context parallelism
(:func:`engine.request.data_parallel_ranks`): a tensor-parallel group, or a
context-parallel ring, shares one micro-batch.

``steps`` is a :class:`~engine.request.Request` field, so a follow-up or a config that
changes the batch, the accumulation, the cards or the sequence recounts the tokens
(:func:`count_steps`); the estimate itself reads only ``dataset_tokens``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Final

from adapters.query.errors import error, quoted
from adapters.query.fields import out_of_range
from adapters.query.numbers import finite, read_number, whole
from adapters.query.state import State
from adapters.query.vocabulary import TOKEN_WORDS
from engine.choices import Solve
from engine.constants import MAX_DATASET_TOKENS
from engine.request import Request, data_parallel_ranks

STEPS_EXAMPLE: Final = "8b lora 1000 steps bs 8 seq 2048 4x a100"
OTHER_LENGTHS: Final = ("dataset_tokens", "samples", "epochs")
"""The other ways to say how long a run is; one query says one."""
_FACTORS: Final = ("micro_batch", "grad_accum", "seq_len")
_SOLVED_FACTORS: Final = {
    Solve.MICRO_BATCH: "micro-batch",
    Solve.SEQ_LEN: "sequence length",
    Solve.GPU_COUNT: "card count",
}
"""Questions that solve for a factor of a step's tokens: steps cannot count those runs."""


def count_steps(fields: dict[str, object]) -> None:
    """Set ``fields["dataset_tokens"]`` from ``fields["steps"]``, in place, when steps
    are given, and the epochs to one: the steps are the whole run (a step budget overrides
    epochs, as HF's ``max_steps`` overrides ``num_train_epochs``, and the default of 3
    epochs does not apply). A card named with no count is one card (``60 steps on a t4``,
    as a notebook runs); QueryError with neither, or when the tokens pass their bound."""
    steps = fields.get("steps")
    if not isinstance(steps, int):
        return
    said = f"{steps:,} steps"
    solve = fields.get("solve")
    if isinstance(solve, Solve) and solve in _SOLVED_FACTORS:
        raise error(
            f'"{said}" counts tokens from the {_SOLVED_FACTORS[solve]}, which this question '
            "solves for: give the run in tokens instead (\"16M tokens\").", said,
            example="max batch 8b lora 16M tokens 4x a100",
        )
    count = fields.get("gpu_count")
    if count is None and isinstance(fields.get("gpu"), str) and fields.get("nodes") is None:
        count = fields["gpu_count"] = 1  # "60 steps on a t4": one card, as a notebook runs
    if not isinstance(count, int):
        raise error(
            f'"{said}": steps need the number of cards to give the tokens (steps x batch x '
            'accumulation x cards x sequence): name them ("4x a100"), or say the tokens '
            '("16M tokens").', said, example=STEPS_EXAMPLE,
        )
    tokens = steps * tokens_per_step(fields, count)
    if tokens > MAX_DATASET_TOKENS:
        raise out_of_range("dataset_tokens", said)
    fields["dataset_tokens"] = tokens
    fields["epochs"] = 1.0


def tokens_per_step(fields: dict[str, object], cards: int) -> int:
    """Tokens one optimizer step computes on ``cards``: micro-batch x accumulation x
    data-parallel ranks x sequence, each as said or its default."""
    tokens = data_parallel_ranks(cards, *_splits(fields))
    for name in _FACTORS:
        value = fields.get(name)
        tokens *= value if isinstance(value, int) else Request.model_fields[name].default
    return tokens


def _splits(fields: dict[str, object]) -> tuple[int, int]:
    """The tensor- and context-parallel degrees said (1 unsaid)."""
    tp, cp = fields.get("tensor_parallel", 1), fields.get("context_parallel", 1)
    return (tp if isinstance(tp, int) else 1, cp if isinstance(cp, int) else 1)


def check_one_length(fields: dict[str, object], sources: dict[str, str]) -> None:
    """Refuse a query that gives steps and another length of the run (tokens, samples,
    epochs) together."""
    if "steps" not in fields:
        return
    other = next((f for f in OTHER_LENGTHS if f in fields), None)
    if other is not None:
        raise error(
            f'Give the run\'s length once: "{quoted(sources["steps"])}" or '
            f'"{quoted(sources.get(other, other))}", not both.',
            sources["steps"], example=STEPS_EXAMPLE,
        )


# --- a global batch ------------------------------------------------------------------

_GLOBAL_BATCH_WORDS: Final = frozenset(
    {"global-batch-size", "gbs", "global-batch", "effective-batch-size", "total-batch-size",
     "train-batch-size",  # DeepSpeed's train_batch_size: micro x accumulation x ranks
     "effective"}  # "grad accum 8 (effective 32)"
)
_GLOBAL_EXAMPLE: Final = "8b lora global batch size 64 bs 4 8x h100"


def global_batch(s: State, i: int) -> int:
    """``global batch size 64``, ``gbs 64``, ``64 global batch``: the sequences one
    optimizer step takes over all cards (litgpt's and torchtitan's ``global_batch_size``,
    HF's "total train batch size"), ``a global batch of 128``; read once all words are
    (:func:`check_global_batch`)."""
    if s.low(i) in _GLOBAL_BATCH_WORDS:
        at = i + 1 + (s.low(i + 1) == "of" and read_number(s.low(i + 2)) is not None)
        num = read_number(s.low(at))
    elif (counted := s.count_before(i, _GLOBAL_BATCH_WORDS)) is not None:
        num, at = counted, i
    else:
        return 0
    if num is None:
        raise error(f'"{quoted(s.raw(i))}" needs a number: the sequences per optimizer step '
                    "over all cards.", s.raw(i), example=_GLOBAL_EXAMPLE)
    if num.is_price or num.percent:
        raise error(f'"{quoted(s.raw(at))}" must be a plain count of sequences.', s.raw(at),
                    example=_GLOBAL_EXAMPLE)
    n = max(at - i + 1, 2)  # "global batch of 128": three words
    # An infinite one would be an infinite accumulation: refused in the same words.
    value = finite(num.scaled(), s.raw(i, n), "grad_accum")
    if s.global_batch is not None and s.global_batch[0] != value:
        raise error(f'"{quoted(s.raw(i, n))}" conflicts with "{quoted(s.global_batch[1])}": '
                    "both set the global batch. Pick one.", s.raw(i, n),
                    example=_GLOBAL_EXAMPLE)
    s.global_batch = (value, s.raw(i, n))
    return n


@dataclass(frozen=True, slots=True)
class Beneath:
    """Fields set beneath the words: a training config's (``--config``), and options said
    beside the text (Discord's). A global batch typed with them divides by their
    micro-batch and data-parallel ranks when the words name none, and must agree with
    their accumulation (:func:`check_global_batch`)."""

    fields: Mapping[str, object] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    """Field -> where it was set, as a message names it (``the config's
    micro_batch_size``, ``the batch option``)."""
    fixed: frozenset[str] = frozenset()
    """Fields the words cannot override (an option's: naming it twice is refused)."""

    def label(self, name: str) -> str:
        return self.labels.get(name, f"the {name}")


_BENEATH: ContextVar[Beneath | None] = ContextVar("ftcost_beneath", default=None)
"""What :func:`beneath` sets while one query is scanned (the scanner takes no such
argument); unset, a global batch reads the words alone."""


@contextmanager
def beneath(fields: Beneath | None) -> Iterator[None]:
    """Scan a query with ``fields`` beneath its words (see :class:`Beneath`)."""
    token = _BENEATH.set(fields)
    try:
        yield
    finally:
        _BENEATH.reset(token)


def card_beneath() -> str | None:
    """The card set beneath the words (a follow-up's earlier estimate's), or None."""
    card = field_beneath("gpu")
    return card if isinstance(card, str) else None


def field_beneath(name: str) -> object:
    """A field set beneath the words (a follow-up's earlier estimate's, a config's), or
    None."""
    return (_BENEATH.get() or Beneath()).fields.get(name)


def _said_or_beneath(s: State, name: str, under: Beneath) -> tuple[object, str | None]:
    """A field as the words say it, else as set beneath them (and where: its label)."""
    if name in s.fields:
        return s.fields[name], None
    if name in under.fields:
        return under.fields[name], under.label(name)
    return None, None


def check_global_batch(s: State) -> None:
    """Turn a global batch into gradient accumulation: global / (micro-batch x
    data-parallel ranks).

    It needs the card count, divides evenly, and agrees with an accumulation said
    outright or set beneath the words (a config's). The micro-batch, tensor- and
    context-parallel degrees are the words', else those set beneath them, else 1."""
    if s.global_batch is None:
        return
    value, phrase = s.global_batch
    under = _BENEATH.get() or Beneath()
    count = s.fields.get("gpu_count")
    if not isinstance(count, int) and _cards_from_batches(s, value, phrase, under):
        return
    if not isinstance(count, int):
        raise error(
            f'"{quoted(phrase)}": a global batch needs the number of cards to give the '
            'accumulation per card: name them ("8x h100"), or say the accumulation ("accum 8").',
            phrase, example=_GLOBAL_EXAMPLE,
        )
    micro, micro_from = _said_or_beneath(s, "micro_batch", under)
    micro = micro if isinstance(micro, int) else 1
    ranks = data_parallel_ranks(count, *_splits({**under.fields, **s.fields}))
    per_step = micro * ranks
    accum = value / per_step
    if accum < 1 or abs(accum - round(accum)) > 1e-9:
        over = "cards" if ranks == count else "data-parallel ranks"
        batch = f"{micro}, {micro_from}," if micro_from else f"{micro}"
        raise error(
            f'"{quoted(phrase)}" is not a whole multiple of the micro-batch x {over} '
            f"({batch} x {ranks} = {per_step:,}): say a global batch that divides, or the "
            'accumulation ("accum 8").', phrase, example=_GLOBAL_EXAMPLE,
        )
    batch = f"{micro} ({micro_from})" if micro_from else f"{micro}"
    _agrees(s, phrase, round(accum), (count, ranks, micro), batch, under)
    if "grad_accum" not in s.fields and "grad_accum" not in under.fields:
        s.set("grad_accum", whole(accum, phrase, "grad_accum"), phrase)


def _cards_from_batches(s: State, value: float, phrase: str, under: Beneath) -> bool:
    """``bs 4 accum 8 (effective 32)`` with no cards named: the global batch over the
    micro-batch and accumulation is the card count (here 1), set when it is whole and no
    tensor or context parallelism splits the cards; False when it cannot be read so."""
    micro, _ = _said_or_beneath(s, "micro_batch", under)
    accum, _ = _said_or_beneath(s, "grad_accum", under)
    if not isinstance(accum, int) or _splits({**under.fields, **s.fields}) != (1, 1):
        return False
    per_card = (micro if isinstance(micro, int) else 1) * accum
    cards = value / per_card
    if cards < 1 or abs(cards - round(cards)) > 1e-9:
        raise error(
            f'"{quoted(phrase)}" is not a whole multiple of the micro-batch x accumulation '
            f"({per_card:,} sequences per card and step): name the cards (\"8x h100\") or a "
            "global batch that divides.", phrase, example=_GLOBAL_EXAMPLE,
        )
    s.set("gpu_count", whole(cards, phrase, "gpu_count"), phrase)
    return True


def _agrees(
    s: State, phrase: str, accum: int, step: tuple[int, int, int], batch: str,
    under: Beneath,
) -> None:
    """Refuse a global batch whose accumulation differs from one said outright (``accum
    4``) or set beneath the words (a config's ``gradient_accumulation_steps``). ``step``:
    the cards, their data-parallel ranks and the micro-batch; ``batch``: the micro-batch
    as the message says it (with where it was set)."""
    count, ranks, micro = step
    said = s.fields.get("grad_accum")
    if said is not None and said != accum:
        raise error(
            f'"{quoted(phrase)}" means an accumulation of {accum:,} on {count} cards at '
            f'batch {batch}, but "{quoted(s.sources["grad_accum"])}" says {said}: say one.',
            phrase, example=_GLOBAL_EXAMPLE,
        )
    set_under = under.fields.get("grad_accum")
    if said is None and isinstance(set_under, int) and set_under != accum:
        raise error(
            f'"{quoted(phrase)}" means an accumulation of {accum:,} on {count} cards at '
            f"batch {batch}, but {under.label('grad_accum')} says {set_under} (a global "
            f"batch of {micro * ranks * set_under:,}): "
            + ("say one." if "grad_accum" in under.fixed else
               f'leave the global batch out, or add "accum {accum}" to override it.'),
            phrase, example=_GLOBAL_EXAMPLE,
        )


# --- a run counted in optimizer steps --------------------------------------------------

_STEP_WORDS: Final = frozenset(
    {"steps", "step", "iters", "iterations", "optimizer-steps", "training-steps"}
)
"""After a number: ``1000 steps``."""
_STEP_KEYS: Final = frozenset({"max-steps", "train-steps", "training-steps", "total-steps",
                               "num-steps", "steps"})
"""Before a number, as configs name it: HF's and litgpt's ``max_steps``, torchtitan's
``steps``."""


def steps(s: State, i: int) -> int:
    """``1000 steps``, ``max_steps 1000``: how long the run is, in optimizer steps (the
    tokens follow from the batch and cards: :func:`count_steps`)."""
    num, at = s.count_before(i, _STEP_WORDS), i
    if num is None and s.low(i) in _STEP_KEYS:
        num, at = read_number(s.low(i + 1)), i + 1
    if num is None:
        return 0
    if num.is_price or num.percent:
        raise error(f'"{quoted(s.raw(at))}" must be a plain count of steps.', s.raw(at),
                    example=STEPS_EXAMPLE)
    s.set("steps", whole(num.scaled(), s.raw(at), "steps"), s.raw(i, 2), s.raw(at))
    return 2



SEQUENCE_LIKE_TOKENS: Final = (512, 131_072)
"""Token counts, powers of two in this range, that read as a sequence length when nothing
else says how long a sequence or the data is (``8b lora 8k tokens h100``): a dataset of
a few sequences is no fine-tune, and these are the lengths people train at."""
_DATA_WORDS: Final = frozenset({"data", "dataset", "datasets", "corpus"})
LENGTH_FIELDS: Final = ("seq_len", "max_len", "samples", "sample_tokens", "steps")
"""Fields that say how long a sequence or the data is: beside any of them (in the words,
an option, a config or the earlier estimate) a token count is the dataset."""
_DATA_FIELDS: Final = ("epochs", "budget_usd", "deadline_hours")
"""Fields said only of a dataset: beside them a token count is the data."""


def tokens_as_sequence(fields: dict[str, object], sources: dict[str, str], state: State,
                       length_said: bool) -> None:
    """``8b lora 8k tokens h100``: a power-of-two count of tokens from 512 to 128k, written
    plain or in ``k`` (then 1,024), is the sequence length when nothing else says how
    long a sequence or the data is: no sequence, sample or step count in the words or
    beside them (``length_said``: an option, a config, the earlier estimate), no epochs,
    budget or deadline, and no word naming the data (``dataset of 8k tokens``). Any other
    count stays the dataset (``10k tokens``, ``50M tokens``)."""
    if length_said or any(f in fields for f in (*LENGTH_FIELDS, *_DATA_FIELDS)):
        return
    if not isinstance(fields.get("dataset_tokens"), int) or any(
        w.low in _DATA_WORDS for w in state.words
    ):
        return
    phrase = sources.get("dataset_tokens", "")
    words = phrase.lower().split()
    if not TOKEN_WORDS & set(words):
        return
    num = next((n for n in map(read_number, words) if n is not None), None)
    if num is None or num.is_price or num.percent or num.suffix not in ("", "k"):
        return
    length = num.scaled(binary=True)
    low, high = SEQUENCE_LIKE_TOKENS
    if not (low <= length <= high and length == int(length) and int(length).bit_count() == 1):
        return
    del fields["dataset_tokens"]
    sources.pop("dataset_tokens", None)
    fields["seq_len"] = int(length)
    sources["seq_len"] = phrase
