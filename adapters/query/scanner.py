"""The scanner: phrase handlers tried in order at each word."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from adapters.query import (
    articles,
    datasets,
    families,
    instances,
    launchers,
    network,
    parallel,
    phrases,
    phrasing,
    phrasing_configs,
    recipes,
    relative,
    samples,
    sharding_words,
    steps,
    unlisted,
    versions,
)
from adapters.query.errors import EXAMPLE, QueryError, error, quoted
from adapters.query.fields import FIELDS
from adapters.query.hints import NOT_SETTINGS
from adapters.query.names import (
    names_another_checkpoint,
    resolve_gpu,
    resolve_model,
    size_model,
)
from adapters.query.numbers import (
    ALL_UNITS,
    COUNT_RE,
    COUNT_X_RE,
    POSTFIX_UNITS,
    PREFIX_UNITS,
    SIZE_RE,
    X_COUNT_RE,
    fits,
    read_number,
    to_price,
    whole,
)
from adapters.query.spelling import suggest
from adapters.query.state import State, require
from adapters.query.tokenizer import settings_joined, tokenize
from adapters.query.unknown_cards import CARD_MAKERS, unknown_card
from adapters.query.vocabulary import (
    CARD_WORDS,
    FILLER,
    FLAGS,
    HOURLY,
    KEYWORDS,
    NEGATIONS,
    VARIANT_WORDS,
)
from engine.choices import ModelPick
from engine.specs import Catalog, normalize_name

Handler = Callable[[State, int], int]
"""Try to read a phrase at word ``i``; return the words consumed (0: no match)."""


def _filler(s: State, i: int) -> int:
    return 1 if s.low(i) in FILLER else 0


def _keyword(s: State, i: int) -> int:
    hit = KEYWORDS.get(s.low(i))
    if hit is None:
        return 0
    s.set(hit[0], hit[1], s.raw(i))
    return 1


_OFF_WORDS: Final = frozenset({"off", "disabled"})
"""Said after a switch, they turn it off (``flash attention off``)."""


def _flag(s: State, i: int) -> int:
    low = s.low(i)
    if low in FLAGS:
        off = s.low(i + 1) in _OFF_WORDS  # "flash attention off"
        s.set(FLAGS[low], not off, s.raw(i, 1 + off))
        return 1 + off
    for stem in (low.removeprefix("no-"), low.removeprefix("no")):
        if stem != low and stem in FLAGS:
            s.set(FLAGS[stem], False, s.raw(i))
            return 1
    if low not in NEGATIONS:
        return 0
    nxt = s.low(i + 1)
    if nxt in FLAGS:
        s.set(FLAGS[nxt], False, s.raw(i, 2))
        return 2
    if f"no-{nxt}" in KEYWORDS:
        field, value = KEYWORDS[f"no-{nxt}"]
        s.set(field, value, s.raw(i, 2))
        return 2
    raise error(f'"{quoted(s.raw(i, 2))}": "{low}" must come before a switch such as ckpt, '
                 "flash, fused-ce, offload or double-quant.", s.raw(i),
                 example="8b lora no-ckpt 50M tokens")


def _price(s: State, i: int) -> int:
    """``$2.49/hr``, ``2.49/hr``, ``$2.49 per hour``: a rate per GPU-hour. A dollar
    amount that says neither per hour nor a budget (``$500``) is asked about."""
    num = read_number(s.low(i))
    if num is None or not num.is_price:
        return 0
    tail = 1 if s.low(i + 1) in HOURLY else 0
    if not (num.hourly or tail):
        raise _bare_dollars(s.raw(i))
    value = to_price(num, s.raw(i))
    s.set("price_per_gpu_hour", value, s.raw(i, 1 + tail), s.raw(i))
    return 1 + tail


def _bare_dollars(word: str) -> QueryError:
    """``$500`` alone could be the whole run's budget or a rate per GPU-hour: read as
    either, it would price every card wrong, so the query must say which."""
    amount = quoted(word.replace(" ", ""))
    return error(
        f'"{quoted(word)}": a budget (say "under {amount}") or a rate per GPU-hour (say '
        f'"{amount}/hr")?', word, example="8b lora 50M tokens under $500",
    )


def _alternating_run(s: State, i: int) -> int:
    """Length of the number, unit, number, unit... run starting at ``i``. A number that
    counts cards (``8 gpus``, ``8 h100``) ends it: it pairs with the card, not a unit."""
    j = i
    while read_number(s.low(j)) if (j - i) % 2 == 0 else s.low(j) in POSTFIX_UNITS:
        if (j - i) % 2 == 0 and _counts_cards(s, j):
            break
        j += 1
    return j - i


def _token_count(s: State, j: int) -> bool:
    """Whether the word at ``j`` can only be a dataset's token count: a plain number with
    a scale (``50M``, ``1.2B``) or of 10,000 and more. After ``70b tokens`` it is the
    data, whatever follows it (``70b tokens 50M seq 4096``)."""
    num = read_number(s.low(j))
    if num is None or num.is_price or num.percent:
        return False
    return bool(num.suffix) or num.scaled() >= TOKEN_COUNT_FLOOR


def _counts_cards(s: State, j: int) -> bool:
    """Whether the number at ``j`` is followed by a card word or a card's name (a model
    size never counts cards: ``70b tokens 1.2b h100`` is 1.2B tokens on the 70B)."""
    if SIZE_RE.match(s.low(j)):
        return False
    nxt = j + 1 + (s.low(j + 1) in ("x", "*"))
    return s.low(nxt) in CARD_WORDS or _match_span(s, nxt, resolve_gpu) is not None


TOKEN_COUNT_FLOOR: Final = 10_000
"""A plain number from this up, after ``tokens``, counts tokens: no epoch count, card
count or batch runs so high that it would pair with a unit after it instead."""
BILLIONS_FIELDS: Final = frozenset({"dataset_tokens"})
"""Fields a number in billions can count (``1b tokens``); before any other unit, a
``Nb`` is the model's size."""


def _number_then_unit(s: State, i: int) -> int:
    unit = POSTFIX_UNITS.get(s.low(i + 1))
    if unit is None or read_number(s.low(i)) is None:
        return 0
    if s.raw(i + 1).startswith("-"):
        return 0  # "4090 --nnodes 2": an option's value follows it, never comes before
    if unit.field == "gpu_memory_gb" and (_match_span(s, i, resolve_gpu) or ("", 0))[1] > 2:
        return 0  # "40gb a100": the card's memory said first, read with its name (_named)
    named = "model" in s.fields  # "8b lora 1B tokens": the model is said, so 1B is data
    if SIZE_RE.match(s.low(i)) and not named and (
        _token_count(s, i + 2) or _alternating_run(s, i) % 2 == 1
    ):
        return 0  # "70b tokens 50M": the size is the model, "tokens 50M" the data
    if SIZE_RE.match(s.low(i)) and unit.field not in BILLIONS_FIELDS:
        return 0  # "8b tp": a model size, not 8 billion of anything else
    if unit.prefix and read_number(s.low(i + 2)) and resolve_gpu(s.catalog, s.low(i)):
        return 0  # "4090 bs 4": the card, then its batch (not a batch of 4,090)
    if _takes_the_next(s, i, unit.prefix):
        return 0  # "8k mfu 40%": the mfu's number is after it; "8k" is left to say its unit
    return s.set_number(unit, i, i)


def _takes_the_next(s: State, i: int, prefix: bool) -> bool:
    """Whether the unit at ``i + 1``, between two numbers, takes the one after it: the
    one before does not fit it (``8k mfu 40%``: 8k is no MFU) and nothing else claims
    the one after (``5000 epochs 50M tokens`` stays 5,000 epochs, out of range)."""
    if not prefix or read_number(s.low(i + 2)) is None:
        return False
    if s.low(i + 3) in POSTFIX_UNITS or _counts_cards(s, i + 2):
        return False
    return not fits(POSTFIX_UNITS[s.low(i + 1)], s.low(i))


def _unit_then_number(s: State, i: int) -> int:
    unit = PREFIX_UNITS.get(s.low(i))
    if unit is None or read_number(s.low(i + 1)) is None:
        return 0
    return s.set_number(unit, i + 1, i)


def _match_span(
    s: State, i: int, resolve: Callable[[Catalog, str], str | None]
) -> tuple[str, int] | None:
    """A catalog id for the longest run of up to six words at ``i`` that names one (a
    size inside a name is two words: ``a100 40 gb pcie``; ``nvidia-smi`` prints ``RTX PRO
    6000 Blackwell Workstation Edition``)."""
    if i >= len(s.words):
        return None
    for n in (6, 5, 4, 3, 2, 1):
        if i + n > len(s.words) or (n > 1 and s.low(i) in FILLER):
            continue
        found = resolve(s.catalog, " ".join(w.low for w in s.words[i : i + n]))
        if found:
            return found, n
    return None


def _count(s: State, text: str, phrase: str, word: str) -> None:
    num = require(read_number(text))
    s.set("gpu_count", whole(num.value, word, "gpu_count"), phrase, word)


def _count_tail(s: State, j: int, card_at: int) -> int:
    """An ``x8`` or ``x 8`` after a card: set the count, return words consumed."""
    glued = X_COUNT_RE.match(s.low(j))
    if glued:
        _count(s, glued.group(1), s.raw(card_at, j - card_at + 1), s.raw(j))
        return 1
    if s.low(j) in ("x", "*") and COUNT_RE.match(s.low(j + 1)):
        _count(s, s.low(j + 1), s.raw(card_at, j - card_at + 2), s.raw(j + 1))
        return 2
    return 0


def _named(s: State, i: int) -> int:
    model = _match_span(s, i, resolve_model)
    if model:
        s.set("model", model[0], s.raw(i, model[1]))
        if s.raw(i, model[1]).lower().endswith(("-bnb-4bit", "-4bit")):
            s.four_bit = s.four_bit or s.raw(i, model[1])  # a 4-bit checkpoint: QLoRA
        other = names_another_checkpoint(s.catalog, s.raw(i, model[1]), model[0])
        s.model_pick = ModelPick.STAND_IN if other else ModelPick.EXACT
        return model[1]
    gpu = _match_span(s, i, resolve_gpu)
    if gpu is None:
        return 0
    s.set("gpu", gpu[0], s.raw(i, gpu[1]))
    j = i + gpu[1]
    memory = _own_memory(s, j, s.catalog.gpu(gpu[0]).memory_gb)
    if memory and (tail := _count_tail(s, j + memory, i)):
        # "rtx 4090 24gb x2": the card's own memory, then its count. Without a count
        # after it, the memory is left to be read as it always was.
        return j + memory + tail - i
    return j - i + _count_tail(s, j, i)


def _nodes_of(s: State, j: int) -> bool:
    """Whether the word at ``j`` is a node word that takes no count after it: ``2 h100
    nodes`` and ``2 h100 nodes 10M tokens``, not ``16 h100 nodes 2`` (``--nnodes 2``)."""
    after, unit = s.low(j + 1), s.low(j + 2)
    counted = bool(COUNT_RE.match(after)) and unit not in ALL_UNITS
    return s.low(j) in phrases.NODE_WORDS and not counted


def _own_memory(s: State, j: int, memory_gb: float) -> int:
    """Words at ``j`` that state ``memory_gb`` (``24gb`` reaches here as ``24 gb``):
    2, or 0 when they state none or another size."""
    num = read_number(s.low(j))
    if num is None or s.low(j + 1) != "gb" or abs(num.value - memory_gb) > 1.0:
        return 0
    return 2


def _count_then_card(s: State, i: int) -> int:
    low = s.low(i)
    glued = COUNT_X_RE.match(low)
    if glued:
        count, j = glued.group(1), i + 1
    elif COUNT_RE.match(low):
        count, j = low, i + 1 + (s.low(i + 1) in ("x", "*"))
    else:
        return 0
    j += _card_maker(s, j)  # "2x geforce 4090": the maker's word is read as nothing
    card = _match_span(s, j, resolve_gpu)
    if card is None and s.low(j + 1) == "gb" and read_number(s.low(j)) is not None:
        # "2x 24gb": cards named by their memory, which is read next as "24gb" alone is;
        # "3060 12gb" is a GeForce the catalog lacks (refused as "rtx 3060 12gb" is),
        # never 3,060 cards of 12 GB
        if not glued and j == i + 1 and (unlisted := unknown_card(s, i)) is not None:
            raise unlisted
        _count(s, count, s.raw(i, j - i + 2), s.raw(i))
        return j - i
    if card:
        end = j + card[1]
        if not glued and j == i + 1 and _nodes_of(s, end):
            # "2 h100 nodes": two machines of the card, their cards counted per node
            # (phrases.check_nodes); "2x h100 nodes" stays two cards.
            word = s.raw(end)
            s.set("nodes", whole(require(read_number(count)).value, word, "nodes"),
                  s.raw(i, end - i + 1), word)  # fmt: skip
            s.set("gpu", card[0], s.raw(j, card[1]))
            return end - i + 1
        _count(s, count, s.raw(i, j - i + card[1]), s.raw(i))
        s.set("gpu", card[0], s.raw(j, card[1]))
        return j - i + card[1]
    if s.low(j) in CARD_WORDS:
        _count(s, count, s.raw(i, j - i + 1), s.raw(i))
        return j - i + 1
    if glued or j > i + 1:
        count_words = quoted(s.raw(i, j - i))
        if j < len(s.words) and (card_error := unknown_card(s, j)) is not None:
            raise card_error  # "2x 4070", "2x rtx a4500": a card the catalog lacks
        if j < len(s.words) and read_number(s.low(j)) is None:  # a word that is no card
            word = s.raw(j)
            raise error(f'"{count_words}" needs a card after it, and I don\'t know the card '
                        f'"{quoted(word)}".', word, suggest(s.low(j), s.catalog),
                        example="70b full 50M tokens 4x h100")
        raise error(f'"{count_words}" needs a card after it.', s.raw(i),
                    example="70b full 50M tokens 4x h100")
    return 0


_MILLIONS_RE: Final = re.compile(r"^[0-9]+(?:\.[0-9]+)?m$")
"""A size in millions of parameters (``opt 350m``, ``pythia 410m``)."""


def _family_size(s: State, i: int) -> int:
    """``qwen 72b``, ``opt 350m``: the newest generation of that size in the family. A
    size in millions that a unit claims (``llama 50m tokens``) is the unit's."""
    family, size = s.low(i), s.low(i + 1)
    millions = _MILLIONS_RE.match(size) and s.low(i + 2) not in ALL_UNITS
    if not (SIZE_RE.match(size) or millions):
        return 0
    if normalize_name(family) not in families.families(s.catalog):
        return 0
    longer = _match_span(s, i, resolve_model)
    if longer is not None and longer[1] > 2 and not all(
        w.low in VARIANT_WORDS for w in s.words[i + 2 : i + longer[1]]
    ):  # "mistral 7b instruct" is "mistral 7b": a variant shares its base's architecture
        return 0  # "mistral 7b instruct v0.3": a name over more words, read by _named
    canonical = f"{float(size[:-1]):g}{size[-1]}"
    fits = families.newest_of_size(s.catalog, family, canonical)
    if not fits and resolve_model(s.catalog, f"{family} {size}"):
        return 0  # an alias names it ("bloom 7b": bloom-7b1): read as a name
    if len(fits) != 1:
        members = families.families(s.catalog)[normalize_name(family)]
        names = fits or [m.model.id for m in members]
        problem = f'Which model is "{quoted(s.raw(i, 2))}"?'
        if not fits:
            problem += (f" The catalog has no {quoted(s.raw(i, 1))} of that size; any Hugging "
                        "Face model can be named by its repository (org/name).")
        raise error(problem, s.raw(i, 2), names, example=f"{names[0]} lora 50M tokens")
    s.set("model", fits[0], s.raw(i, 2))
    s.model_pick = ModelPick.FAMILY_SIZE
    return 2


def _family(s: State, i: int) -> int:
    """``mixtral`` alone: the family's flagship."""
    found = families.flagship(s.catalog, s.low(i))
    if found is None:
        return 0
    s.set("model", found, s.raw(i))
    s.model_pick = ModelPick.FAMILY
    return 1


def _bare_size(s: State, i: int) -> int:
    low = s.low(i)
    if not SIZE_RE.match(low):
        return 0
    s.set("model", size_model(s.catalog, low, s.raw(i)), s.raw(i))
    return 1


def _card_maker(s: State, i: int) -> int:
    """``quadro rtx a6000``, ``geforce 4090``: a maker's words before a card's name that
    the name itself does not hold, read as nothing (the card is read next)."""
    j = i
    while s.low(j) in CARD_MAKERS and _match_span(s, j, resolve_gpu) is None:
        j += 1  # "nvidia rtx 6000 ada generation": the name may hold a maker's word too
    if j == i or (_match_span(s, j, resolve_gpu) is None and s.low(j) not in CARD_WORDS):
        return 0  # "8 nvidia gpus": the maker's word before "gpus" is read as nothing too
    return j - i


def _dangling(s: State, i: int) -> int:
    """Explain a unit without a number or a number without a unit."""
    low, word = s.low(i), s.raw(i)
    unit = ALL_UNITS.get(low)
    if unit is not None:
        gigs = s.low(i - 2) if i > 1 and s.low(i - 1) == "gb" else ""
        if unit.field == "dataset_tokens" and re.fullmatch(r"[0-9]+(?:\.[0-9]+)?", gigs):
            # "50G tokens": the G is read as a card's GB
            raise error(f'"{quoted(word)}" needs a number: "{quoted(s.raw(i - 1))}" reads as a '
                        f'card\'s memory; for {gigs} billion tokens say "{gigs}B tokens".',
                        word, example=f"70b qlora {gigs}B tokens h100")
        raise error(f'"{quoted(word)}" needs a number.', word,
                     example=FIELDS[unit.field].example)
    # "4070", "2 4070s": a card the catalog lacks (or a count of one), not a count
    card = unknown_card(s, i) or (unknown_card(s, i + 1) if COUNT_RE.match(low) else None)
    if card is not None:
        raise card
    if (version := unlisted.unlisted_version(s, i)) is not None:
        raise version  # "llama 4 scout": a generation the catalog lacks, not a count
    if read_number(low) or COUNT_X_RE.match(low) or low in ("x", "*"):
        # "50M tokns": a unit's word misspelt right after the number
        nxt = s.low(i + 1)  # not a plural's other form: "4 ranks" is no typo of "rank"
        unit_typo = [w for w in suggest(nxt, s.catalog)
                     if w in ALL_UNITS and nxt not in (w + "s", w[:-1])][:1]
        if unit_typo and nxt not in ALL_UNITS:
            meant = f"{quoted(word)} {unit_typo[0]}"
            raise error(f'"{quoted(s.raw(i + 1))}" after "{quoted(word)}": did you mean '
                        f'"{meant}"?',
                        s.raw(i + 1), example=f"8b lora {meant}")
        context = relative.CONTEXT_K.match(low)  # "8k": most likely a sequence length
        raise error(
            f'"{quoted(word)}" needs a unit: say what it counts '
            "(tokens, epochs, seq, bs, accum, r, dropout, mfu, or a GPU after a count)"
            + (f', e.g. "seq {quoted(word)}" for the sequence length.' if context else "."),
            word, example=f"8b lora seq {quoted(word)} 50M tokens" if context else EXAMPLE,
        )
    return 0


def _replaced(s: State, i: int) -> int:
    """``instead of a100``: the replaced value, read by the handlers and dropped."""
    return relative.replaced(s, i, _HANDLERS)


_HANDLERS: Final[tuple[Handler, ...]] = (
    _replaced,
    articles.article,
    instances.instance,
    phrases.limit,
    phrases.solve,
    phrasing.per_device,
    phrasing.batch_scope,
    phrasing.accumulate,
    phrasing.unit_of,
    phrasing.sequence,
    phrasing.node_of_cards,
    phrasing.dgx,
    sharding_words.deepspeed_words,
    sharding_words.parallel_degree,
    phrasing.framework_words,
    phrasing_configs.published,
    network.network,
    network.n_node,
    network.setup_word,
    samples.samples,
    samples.sample_length,
    samples.packed_to,
    phrases.nodes,
    phrases.node_grid,
    phrases.no_effect,
    launchers.launcher,
    recipes.recipe,
    phrases.deepspeed,
    phrases.four_bit,
    parallel.replicate_degree,
    parallel.n_way,
    parallel.checkpoint_mode,
    steps.global_batch,
    steps.steps,
    relative.relative,
    relative.more_cards,
    relative.of_them,
    relative.comparative,
    relative.asks,
    _filler,
    _keyword,
    _flag,
    _price,
    _number_then_unit,
    _unit_then_number,
    _family_size,
    _named,
    versions.family_version,
    _count_then_card,
    _family,
    _bare_size,
    _card_maker,
    datasets.dataset_name,
    _dangling,
)
"""Tried in order at each word; the first that matches consumes its phrase."""


def _unknown(s: State, i: int) -> QueryError:
    word = s.raw(i)
    hint = NOT_SETTINGS.get(s.low(i))
    if hint is not None:  # a slashed word ("tokens/s") is no Hub model's org/name
        return error(f'"{quoted(word)}" is not a setting here: {hint}.',
                     None if "/" in word else word)
    card = unknown_card(s, i) or instances.unknown_instance(s, i)
    if card is not None:
        return card
    if settings_joined(s.low(i)):  # no word for a Hub lookup: it names no repository
        return error(f'I don\'t know "{quoted(word)}": write its words apart, each as a '
                     'setting ("seq 4096", "no ckpt"), or a Hugging Face model as org/name.')
    model = unlisted.unlisted_version(s, i) or unlisted.unlisted_model(s, i)
    if model is not None:  # "llama-4-scout", "codestral": a model the catalog lacks
        return model
    return error(f'I don\'t know "{quoted(word)}".', word, suggest(s.low(i), s.catalog))


def _check_card_memory(s: State) -> None:
    """A size beside a named card must be that card's memory (``rtx 4090 24gb`` says
    nothing more; ``rtx 4090 48gb`` is refused rather than silently read as 24 GB)."""
    gpu, memory = s.fields.get("gpu"), s.fields.get("gpu_memory_gb")
    if not isinstance(gpu, str) or not isinstance(memory, float):
        return
    spec = s.catalog.gpu(gpu)
    said = s.sources.pop("gpu_memory_gb")
    del s.fields["gpu_memory_gb"]
    if round(spec.memory_gb) != round(memory):
        raise error(
            f'"{quoted(said)}" is not the memory of the {spec.name} ({spec.memory_gb:g} GB): '
            "name a card of that size, or leave the size out.", said,
            example="70b qlora 2x rtx-3090",
        )


def scan(text: str, catalog: Catalog) -> State:
    state = State(tokenize(text, catalog), catalog)
    i = 0
    while i < len(state.words):
        for handler in _HANDLERS:
            consumed = handler(state, i)
            if consumed:
                i += consumed
                break
        else:
            raise _unknown(state, i)
    launchers.check_launch(state)
    instances.check_instance(state)
    phrases.check_nodes(state)
    articles.check_article(state)  # the weakest count: after every other way to say one
    phrasing.check_phrasing(state)
    sharding_words.check_sharding(state)
    phrasing_configs.check_published(state)
    network.check_network(state)
    _check_card_memory(state)
    steps.check_global_batch(state)
    phrases.check_deepspeed(state)
    phrases.check_four_bit(state)
    phrases.check_offload_weights(state)
    phrases.check_dora(state)
    phrases.check_native_attention(state)
    phrases.check_expert_parallel_word(state.fields, state.sources.get("epochs"), catalog)
    parallel.check_replicate(state)
    parallel.check_tensor_parallel(state.fields, state.sources.get("tensor_parallel"))
    parallel.check_context_parallel(state.fields, state.sources.get("context_parallel"))
    relative.check_relative(state)
    return state

