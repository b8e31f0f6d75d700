"""Follow-ups as people type them in an estimate's thread.

* A change by a factor of the earlier estimate's value: ``double the batch``, ``half the
  seq``, ``2x longer sequences``, ``4x the data``, ``triple the epochs``, ``double the
  h100s``. The scan records it (:class:`~adapters.query.state.Relative`); a follow-up
  settles it against the earlier request (:func:`apply_relative`); a new question, which
  has no earlier value, refuses it (:func:`refuse_relative`).
* A comparative with its value (``bigger batch: 8``): the value wins. Without one
  (``more gpus``) it is refused: say how many.
* ``h100 instead of a100``: the phrase after ``instead of`` (or ``rather than``) names
  the value being replaced, and is skipped (:func:`replaced`).
* ``cheaper?``, ``fastest``: what every estimate already shows. Beside a setting they
  carry no meaning; alone they are refused with how to ask for a plan (:func:`refuse_asks`).

Each handler takes the scan state and the word index and returns the words it consumed
(0: not its phrase), like the handlers in :mod:`adapters.query.scanner`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from adapters.query.errors import QueryError, error, quoted
from adapters.query.fields import FIELDS, check_field, field_bounds, out_of_range
from adapters.query.names import resolve_gpu
from adapters.query.numbers import (
    ALL_UNITS,
    COUNT_RE,
    COUNT_X_RE,
    PREFIX_UNITS,
    UNITS,
    Num,
    read_number,
    whole,
)
from adapters.query.state import Relative, State
from adapters.query.tokenizer import tokenize
from adapters.query.vocabulary import CARD_WORDS, FILLER
from engine.request import Request
from engine.specs import Catalog

FACTOR_WORDS: Final = {
    "double": 2.0, "twice": 2.0, "triple": 3.0, "treble": 3.0, "thrice": 3.0,
    "quadruple": 4.0, "half": 0.5, "halve": 0.5,
}
"""Words that multiply the earlier value (``Nx`` and ``N times`` are read as numbers)."""
RELATIVE_FIELDS: Final = (
    "micro_batch", "seq_len", "dataset_tokens", "gpu_count", "epochs", "grad_accum",
    "lora_rank",
)
"""The fields a factor can change."""
_EXTRA_FIELD_WORDS: Final = {
    "batches": "micro_batch",
    "sequences": "seq_len", "seqs": "seq_len", "contexts": "seq_len",
    "data": "dataset_tokens", "dataset": "dataset_tokens", "datasets": "dataset_tokens",
    "corpus": "dataset_tokens",
    **dict.fromkeys(CARD_WORDS, "gpu_count"),
    "ranks": "lora_rank",
}
FIELD_WORDS: Final = {
    **{w: u.field for u in UNITS if u.field in RELATIVE_FIELDS for w in u.words},
    **_EXTRA_FIELD_WORDS,
}
"""Words that name a field a factor changes: its units' words (``batch``, ``seq``,
``tokens``, ``epochs``, ``accum``, ``rank``), plurals and ``data``, ``gpus``, ``cards``
(a card's name counts the cards too: ``double the h100s``)."""
_LINKS: Final = frozenset(
    {"the", "my", "our", "a", "an", "as", "many", "much", "of", "more", "longer", "bigger",
     "larger", "higher", "long", "big", "large", "number", "amount", "size", "length"}
)
"""Words between a factor and its field (``twice as many gpus``, ``2x longer sequences``,
``double the number of cards``)."""
_SHRINKS: Final = frozenset({"fewer", "smaller", "shorter", "less", "lower"})
"""After a factor they leave unclear what it divides (``2x smaller batch``)."""
COMPARATIVES: Final = frozenset({"more", "bigger", "larger", "longer", "higher"}) | _SHRINKS
"""``bigger batch: 8``: the value that follows wins; without one, say how much."""
ASK_WORDS: Final = frozenset({"cheaper", "cheapest", "faster", "fastest", "quicker", "quickest"})
"""Words that ask what every estimate shows: the cheapest cards that fit and the fastest."""
VALUES: Final = {
    "micro_batch": "bs 8", "seq_len": "seq 8k", "dataset_tokens": "200M tokens",
    "gpu_count": "on 8x h100", "epochs": "2 epochs", "grad_accum": "accum 8",
    "lora_rank": "r 64",
}
"""A value of each field as a follow-up says it, for messages."""
_NOUNS: Final = {
    "micro_batch": "batch", "seq_len": "seq", "dataset_tokens": "data",
    "gpu_count": "gpus", "epochs": "epochs", "grad_accum": "accum", "lora_rank": "rank",
}
"""How a message names a field after a factor word (``double the batch``)."""
_REPLACING: Final = (("instead", "of"), ("rather", "than"))


def _field_at(s: State, k: int) -> tuple[str, int, str | None] | None:
    """The field named at word ``k``, the words naming it and the card a count was named
    by (``h100s``): None when none is named there."""
    field = FIELD_WORDS.get(s.low(k))
    if field is not None:
        return field, 1, None
    for n in (2, 1):
        if k + n <= len(s.words) and s.low(k) not in FILLER:
            card = resolve_gpu(s.catalog, " ".join(s.low(k + m) for m in range(n)))
            if card:
                return "gpu_count", n, card
    return None


def _factor(s: State, i: int) -> tuple[float, int, bool] | None:
    """The factor said at word ``i``, the index after it and whether it was written as a
    number (``2x``, ``3 times``); None when there is none."""
    low = s.low(i)
    if low in FACTOR_WORDS:
        return FACTOR_WORDS[low], i + 1, False
    glued = COUNT_X_RE.match(low)
    if glued:
        return float(glued.group(1)), i + 1, True
    if COUNT_RE.match(low) and s.low(i + 1) == "times":
        return float(low), i + 2, True
    return None


def _value_at(s: State, k: int) -> Num | None:
    """A plain number at ``k`` that nothing after it claims (``8``, not ``8 epochs`` or
    ``8x h100``): the value a phrase before it gives."""
    num = read_number(s.low(k))
    if num is None or num.is_price or num.percent:
        return None
    nxt = s.low(k + 1)
    if nxt in ALL_UNITS or nxt in CARD_WORDS or nxt in ("x", "*"):
        return None
    if resolve_gpu(s.catalog, nxt) or COUNT_X_RE.match(s.low(k)):
        return None
    return num


def _phrase(field: str, factor_word: str) -> str:
    return f"{factor_word} the {_NOUNS[field]}"


def relative(s: State, i: int) -> int:
    """``double the batch``, ``half the seq``, ``2x longer sequences``, ``4x the data``,
    ``3 times the tokens``, ``twice as many gpus``, ``double the h100s``. ``2x gpus`` and
    ``2x h100`` stay card counts; a word factor before nothing it can change is refused."""
    found = _factor(s, i)
    if found is None:
        return 0
    factor, j, numeric = found
    if s.low(i) == "half" and s.low(j) in ("a", "an") and s.low(j + 1) == "epoch":
        return _half_an_epoch(s, i)
    k = j
    while s.low(k) in _LINKS | _SHRINKS and k - j < 4:
        k += 1
    named = _field_at(s, k)
    if named is None or (numeric and k == j and named[0] == "gpu_count"):
        if numeric:
            return 0  # "2x h100", "2x gpus": a card count, read as one
        raise error(
            f'"{quoted(s.raw(i, k - i + 1))}": say what to change by "{quoted(s.raw(i))}": '
            "the batch, seq, tokens, gpus, epochs, accum or rank.", s.raw(i),
            example=f"{s.low(i)} the batch",
        )
    field, span, card = named
    phrase = s.raw(i, k + span - i)
    if any(s.low(m) in _SHRINKS for m in range(j, k)):
        word = "half" if factor > 1 else "double"
        raise error(
            f'"{quoted(phrase)}": say "{_phrase(field, word)}", or the value '
            f'("{VALUES[field]}").', phrase, example=_phrase(field, word),
        )
    if not (math.isfinite(factor) and factor > 0):
        raise error(
            f'"{quoted(phrase)}": a factor must be above 0: say "{_phrase(field, "half")}", '
            f'or the value ("{VALUES[field]}").', phrase, example=_phrase(field, "half"),
        )
    end = k + span + (s.low(k + span) in ("to", "="))
    if _value_at(s, end) is not None:
        raise error(
            f'"{quoted(phrase)}" conflicts with "{quoted(s.raw(end))}": both set the '
            f"{FIELDS[field].label}. Pick one.", phrase, example=FIELDS[field].example,
        )
    said = s.relative.get(field)
    if said is not None and said.factor != factor:
        raise error(
            f'"{quoted(phrase)}" conflicts with "{quoted(said.phrase)}": both change the '
            f"{FIELDS[field].label}. Pick one.", phrase, example=said.phrase,
        )
    s.relative[field] = Relative(factor, phrase, card)
    return k + span - i


_MORE: Final = frozenset({"more", "extra", "additional"})
"""After a count, cards added to the earlier ones (``2 more h100s``)."""
_ONE_MORE: Final = frozenset({"second", "extra", "additional"})
"""After ``a``, one card added (``a second 4090``, ``an extra gpu``)."""


def _added(s: State, j: int, add: bool) -> tuple[int, int] | None:
    """The cards added at word ``j`` (``another``, ``a second``, ``2 more``; after ``add``
    also ``2``, ``2x`` and ``a``) and the index after those words; None when none."""
    low = s.low(j)
    count = COUNT_X_RE.match(low) if add else None
    if low == "another":
        return 1, j + 1
    if low in ("a", "an") and s.low(j + 1) in _ONE_MORE:
        return 1, j + 2
    if COUNT_RE.match(low) and s.low(j + 1) in _MORE:
        return whole(float(low), s.raw(j), "gpu_count"), j + 2
    if add and (COUNT_RE.match(low) or count):
        return whole(float(count.group(1) if count else low), s.raw(j), "gpu_count"), j + 1
    if add and low in ("a", "an"):
        return 1, j + 1
    return None


def more_cards(s: State, i: int) -> int:
    """``one more gpu``, ``2 more h100s``, ``another 4090``, ``add a second 4090``, ``add 2
    gpus``: cards added to the earlier estimate's count (a follow-up's; a new question
    has none to add to and refuses it, as a factor)."""
    add = s.low(i) == "add"
    found = _added(s, i + add, add)
    if found is None:
        return 0
    plus, k = found
    named = _field_at(s, k)
    if named is None or named[0] != "gpu_count":
        return 0
    end = k + named[1]
    phrase = s.raw(i, end - i)
    if plus < 1:
        raise error(f'"{quoted(phrase)}": say how many cards to add, 1 or more.', phrase,
                    example="one more gpu")
    if "gpu_count" in s.relative:
        raise error(
            f'"{quoted(phrase)}" conflicts with "{quoted(s.relative["gpu_count"].phrase)}": '
            "both change the GPU count. Pick one.", phrase, example="one more gpu",
        )
    s.relative["gpu_count"] = Relative(1.0, phrase, named[2], plus)
    return end - i


_THEM: Final = frozenset({"them", "those", "these"})


def of_them(s: State, i: int) -> int:
    """``use 2 of them``, ``what about 4 of those``: that many of the cards the thread's
    estimate ran on (the card stays; :func:`check_them` refuses it when there is none)."""
    j = i + 1 + (s.low(i + 1) == "of")  # "a pair of them" reads "2 them"
    if not COUNT_RE.match(s.low(i)) or s.low(j) not in _THEM:
        return 0
    phrase = s.raw(i, j - i + 1)
    s.set("gpu_count", whole(float(s.low(i)), s.raw(i), "gpu_count"), phrase, s.raw(i))
    s.them = phrase
    return j - i + 1


def check_them(s: State, fields: Mapping[str, object], previous: Request | None) -> None:
    """``2 of them`` counts cards already named (by the query's ``fields``, options
    included, or the thread's estimate, ``previous``): with none named, refused with how
    to name them."""
    if s.them is None or "gpu" in fields or "gpu_memory_gb" in fields:
        return
    if previous is not None and (previous.gpu or previous.gpu_memory_gb):
        return
    count = s.fields.get("gpu_count")
    why = " (the earlier estimate picked its cards itself)" if previous is not None else ""
    raise error(
        f'"{quoted(s.them)}": no card is named for "them" to count{why}: name the card '
        f'("on {count}x h100").', s.them, example=f"on {count}x h100",
    )


CONTEXT_K: Final = re.compile(r"^(1|2|4|8|16|32|64|128|256|512|1024)k$")
"""A power-of-two ``k`` (``8k``, ``128k``): what a context length is said as."""


def bare_context(text: str, catalog: Catalog) -> str | None:
    """A follow-up that says only ``8k`` (``what if 8k?``, ``32k?``): the sequence length
    people mean by it in an estimate's thread, as ``seq 8k``; None for any other text. A
    new question never reads it so (``8k`` alone there could count anything)."""
    try:
        words = [w for w in tokenize(text, catalog) if w.low not in FILLER]
    except QueryError:
        return None
    if len(words) != 1 or not CONTEXT_K.match(words[0].low):
        return None
    return f"seq {words[0].raw}"


def _half_an_epoch(s: State, i: int) -> int:
    """``half an epoch``: a value (0.5 epochs), not half of the earlier epochs."""
    phrase = s.raw(i, 3)
    s.set("epochs", 0.5, phrase, phrase)
    return 3


def comparative(s: State, i: int) -> int:
    """``bigger batch: 8``, ``more gpus: 8``, ``more data: 200M``: the value wins. Said
    without one (``more gpus``, ``longer sequences``) it is refused: say how much."""
    if s.low(i) not in COMPARATIVES:
        return 0
    k = i + 1
    while s.low(k) in ("the", "of", "a") and k - i < 3:
        k += 1
    named = _field_at(s, k)
    if named is None:
        return 0
    field, span, card = named
    at = k + span + (s.low(k + span) in ("to", "="))
    if read_number(s.low(at)) is not None or COUNT_X_RE.match(s.low(at)):
        if s.low(k) in PREFIX_UNITS and at == k + span:
            return k - i  # "bigger batch 8": the unit reads its number next
        num = _value_at(s, at)
        if num is None:
            return at - i  # "more data 200M tokens", "more gpus 8x h100": read next
        _set_value(s, field, num, s.raw(k, at - k + 1), s.raw(at))
        if card is not None:
            s.set("gpu", card, s.raw(k, span))
        return at + 1 - i
    phrase = s.raw(i, k + span - i)
    much = "many" if field in ("gpu_count", "epochs") else "much"
    up = s.low(i) not in _SHRINKS
    raise error(
        f'"{quoted(phrase)}": say how {much}: the value ("{VALUES[field]}"), or by how '
        f'much ("{_phrase(field, "double" if up else "half")}").', phrase,
        example=FIELDS[field].example,
    )


def _set_value(s: State, field: str, num: Num, phrase: str, word: str) -> None:
    if field == "gpu_count":
        s.set(field, whole(num.scaled(), word, field), phrase, word)
        return
    unit = next(u for u in UNITS if u.field == field)
    s.set(field, unit.convert(num, word), phrase, word)


def asks(s: State, i: int) -> int:
    """``cheaper?``, ``fastest``: noted, and read as nothing (see :func:`refuse_asks`)."""
    if s.low(i) not in ASK_WORDS:
        return 0
    s.asks = s.asks or s.raw(i)
    return 1


def replaced(s: State, i: int, handlers: Sequence[Callable[[State, int], int]]) -> int:
    """``h100 instead of a100``, ``instead of fsdp, zero3``, ``rather than lora``: the
    phrase after ``instead of`` names the value being replaced and sets nothing. Its
    length is what the scan's ``handlers`` would read there, tried on a throwaway state;
    a word none reads is skipped alone."""
    if (s.low(i), s.low(i + 1)) not in _REPLACING:
        return 0
    j = i + 2
    while s.low(j) in FILLER and s.low(j) not in CARD_WORDS:
        j += 1
    if j >= len(s.words):
        return j - i
    probe = State(s.words, s.catalog)
    for handler in handlers:
        try:
            consumed = handler(probe, j)
        except QueryError:
            consumed = 1
        if consumed:
            return j + consumed - i
    return j + 1 - i


def check_relative(s: State) -> None:
    """Refuse a factor and a value of the same field in one text (``double the batch bs
    8``), naming both, as other conflicts are."""
    for field, rel in s.relative.items():
        if field in s.fields:
            raise error(
                f'"{quoted(rel.phrase)}" conflicts with "{quoted(s.sources[field])}": both '
                f"set the {FIELDS[field].label}. Pick one.", rel.phrase,
                example=FIELDS[field].example,
            )


def refuse_relative(s: State) -> None:
    """A new question has no earlier value to change: refuse a factor in it."""
    for field, rel in s.relative.items():
        raise error(
            f'"{quoted(rel.phrase)}" changes an earlier estimate, and this is a new question: '
            f'ask the whole question first, then reply "{quoted(rel.phrase)}" in its thread '
            f'(or say the value: "{_value_for(field, rel)}").', rel.phrase,
            example=FIELDS[field].example,
        )


def _value_for(field: str, rel: Relative) -> str:
    """A value to say in place of a factor in a new question: the factor's epochs for
    ``half the epochs`` (0.5 epochs: of one epoch, the only unit there is), else an
    example value of the field."""
    if field == "epochs" and not rel.plus:
        return f"{rel.factor:g} epochs"
    return VALUES[field]


def refuse_asks(s: State, example: str) -> None:
    """``cheaper?`` alone: every estimate already shows it; say how to ask for a plan."""
    if s.asks is None or s.fields or s.relative:
        return
    raise error(
        f'"{quoted(s.asks)}": every estimate already picks the cheapest cards that fit and '
        "names the fastest beside them, and prices each card in its table. To ask for a "
        'plan, give a budget ("under $500"), a deadline ("within 2 days") or the cards '
        '("on 2x rtx-4090").', s.asks, example=example,
    )


def apply_relative(previous: Request, s: State, changes: dict[str, object]) -> None:
    """Set each field the follow-up changed by a factor in ``changes``: the earlier value
    times the factor, whole where the field is, within the field's bounds. A card count
    the earlier estimate did not name (it picked one), or a dataset it did not size, is
    refused: there is nothing to multiply."""
    for field, rel in s.relative.items():
        base = _count_base(previous, rel, s.catalog) if field == "gpu_count" else getattr(
            previous, field)
        if base is None:
            raise error(
                f'"{quoted(rel.phrase)}": the earlier estimate named no '
                f"{FIELDS[field].label} to change: say it (\"{VALUES[field]}\").", rel.phrase,
                example=f"what if {VALUES[field]}",
            )
        exact = float(base) * rel.factor + rel.plus
        integer = field != "epochs"
        value: float = math.floor(exact + 0.5) if integer else exact
        said = f"{rel.phrase} ({value:,g})" if not integer else f"{rel.phrase} ({value:,})"
        if not math.isfinite(exact) or exact < field_bounds(field).low:
            raise out_of_range(field, f"{rel.phrase} ({exact:,g})")
        check_field(field, int(value) if integer else value, said, said)
        changes[field] = int(value) if integer else value
        if field == "gpu_count":
            changes.setdefault("nodes", None)  # as few as hold the new count


def _count_base(previous: Request, rel: Relative, catalog: Catalog) -> int:
    """The earlier estimate's card count, for ``double the gpus``; a QueryError when it
    named none or ran on other cards than ``double the h100s`` names."""
    if rel.card is not None and rel.card != previous.gpu:
        new = _card_word(catalog, rel.card)
        ran = (f"ran on the {_card_word(catalog, previous.gpu)}, not the {new}"
               if previous.gpu else "named no card")
        same = (f"{rel.plus} more gpu{'s' if rel.plus > 1 else ''}" if rel.plus
                else f"{rel.phrase.split()[0]} the gpus")
        raise error(
            f'"{quoted(rel.phrase)}": the earlier estimate {ran}: say "{same}", or name the '
            f'new cards ("on 4x {new}").', rel.phrase, example=f"on 4x {new}",
        )
    if previous.gpu_count is None:
        card = _card_word(catalog, previous.gpu) if previous.gpu else "h100"
        count = 1 + rel.plus if rel.plus else 4  # "a second 4090": two of them
        raise error(
            f'"{quoted(rel.phrase)}": the earlier estimate named no card count (it picked '
            f'one), so there is none to change: say how many ("on {count}x {card}").',
            rel.phrase, example=f"on {count}x {card}",
        )
    return previous.gpu_count


def _card_word(catalog: Catalog, gpu: str | None) -> str:
    """A card as people type it (its first alias: ``a100``), else its id."""
    if gpu is None or gpu not in catalog.gpus:
        return str(gpu)
    aliases = catalog.gpu(gpu).aliases
    return aliases[0] if aliases else gpu
