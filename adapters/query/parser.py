"""The public entry points: a query or a follow-up in, a :class:`Request` out."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from pydantic import ValidationError

from adapters.query.articles import keep_fewest_cards
from adapters.query.errors import (
    EXAMPLE,
    FOLLOWUP_EXAMPLE,
    QueryError,
    as_followup,
    error,
    quoted,
)
from adapters.query.fields import FIELDS, out_of_range
from adapters.query.parallel import (
    check_context_parallel,
    check_tensor_parallel,
    full_also_method,
)
from adapters.query.phrases import (
    check_expert_parallel_word,
    check_qlora_base,
    says_only_what_costs_nothing,
)
from adapters.query.phrasing import fp8_as_float8, sample_length_as_sequence
from adapters.query.relative import (
    apply_relative,
    bare_context,
    check_them,
    refuse_asks,
    refuse_relative,
)
from adapters.query.samples import answers_sample_length, check_samples
from adapters.query.scanner import scan
from adapters.query.state import State
from adapters.query.steps import (
    LENGTH_FIELDS,
    OTHER_LENGTHS,
    Beneath,
    beneath,
    check_one_length,
    count_steps,
    tokens_as_sequence,
)
from adapters.values import show_value
from catalog.loader import default_catalog
from engine.choices import Method, ModelPick, Solve
from engine.estimate import answered, estimate
from engine.request import Request, field_meta
from engine.solve import settled
from engine.specs import Catalog, UnknownId


@dataclass(frozen=True, slots=True)
class Said:
    """Fields said beside the text (Discord's options), each with the source that said
    it (``seq``: the option's name) and how that reads in a message (``seq: 8k``)."""

    fields: Mapping[str, object] = field(default_factory=dict)
    sources: Mapping[str, str] = field(default_factory=dict)
    phrases: Mapping[str, str] = field(default_factory=dict)


NOTHING_SAID = Said()


def merge_said(fields: dict[str, object], said: Said, sources: dict[str, str]) -> None:
    """Add ``said``'s fields to the text's ``fields`` (and their phrases to ``sources``),
    in place. A field both name differently is a QueryError naming the option and both
    values: say it once."""
    for key, value in said.fields.items():
        if key in fields and fields[key] != value:
            raise QueryError(
                f"The query says {field_meta(key).noun} {show_value(key, fields[key])} but "
                f"the {said.sources.get(key, key)} option says {show_value(key, value)}. "
                "Give it once.", show_value(key, value),
            )
        fields[key] = value
        sources[key] = said.phrases.get(key, key)


def parse_fields(text: str, catalog: Catalog | None = None) -> dict[str, object]:
    """The Request fields ``text`` names, each checked against its bounds. A change by a
    factor (``double the batch``) is refused: there is no earlier value here."""
    fields, state = _fields(text, catalog)
    refuse_relative(state)
    return fields


def _fields(text: str, catalog: Catalog | None) -> tuple[dict[str, object], State]:
    """The fields ``text`` names, and the scan's state: how it named the model (bare
    size, family word) and the words that said each field."""
    state = scan(text, catalog if catalog is not None else default_catalog())
    fields = dict(state.fields)
    if "max_len" in fields and "seq_len" not in fields:
        # A sample cap said alone (HF's max_length) is the longest sequence a batch
        # reaches, so the memory is sized for it.
        fields["seq_len"] = fields["max_len"]
    return fields, state


def build(fields: dict[str, object]) -> Request:
    try:
        return Request.model_validate(fields)
    except ValidationError as exc:
        loc = exc.errors()[0]["loc"]
        field = str(loc[0]) if loc else ""
        if field in FIELDS:
            raise out_of_range(field, str(fields.get(field))) from exc
        why = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        raise error(f"That request is not valid: {why}") from exc


def which_model(catalog: Catalog) -> QueryError:
    favourites = [size for size in ("8b", "70b") if catalog.model_for_size(size)]
    names = [*(favourites or list(catalog.sizes)[:2]), *list(catalog.models)[:1]] or ["70b"]
    return error(
        f"Which model? Name one, e.g. {', '.join(names)}, or any size such as 20b.",
        None,
        example=EXAMPLE,
    )


_SOLVED: Final = {
    Solve.SEQ_LEN: ("sequence length", "max seq 8b qlora rtx-4090"),
    Solve.MICRO_BATCH: ("micro-batch", "max batch 8b lora seq 4096 h100"),
    Solve.MODEL: ("model", "largest model llama qlora on a 4090"),
    Solve.GPU_COUNT: ("card count", "fewest cards 70b qlora h100"),
}
"""What each limit question finds, and a question that asks it."""
_SEARCHES_FAMILY: Final = (ModelPick.EXACT, ModelPick.STAND_IN, ModelPick.FAMILY,
                           ModelPick.FAMILY_SIZE)
"""How a ``largest model`` question may name a model: to search its family."""


def check_solved_value(
    fields: Mapping[str, object], sources: Mapping[str, str], pick: ModelPick | None
) -> None:
    """A limit question finds its value itself, so the same words also stating it (``max
    seq ... seq 4k``, ``fewest cards ... 4x h100``) are refused rather than one silently
    dropped. ``largest model`` may name a model or family, whose family it searches
    (``engine.solve``); a bare size (``70b``) names none."""
    goal = fields.get("solve")
    if not isinstance(goal, Solve) or goal.value not in sources:
        return
    if goal is Solve.MODEL and pick in _SEARCHES_FAMILY:
        return
    noun, example = _SOLVED[goal]
    stated, asked = sources[goal.value], sources.get("solve", goal.value)
    raise error(
        f'"{quoted(stated)}" conflicts with "{quoted(asked)}": the question finds the '
        f"{noun} itself. Drop one: \"{quoted(asked)}\" for the limit, \"{quoted(stated)}\" "
        "for an estimate at it.",
        stated,
        example=example,
    )


def seed_largest_model(fields: dict[str, object], catalog: Catalog) -> None:
    """A ``largest model`` question that names no model searches every catalog model:
    ``fields`` get a seed model that only anchors the request (``ModelPick.NONE``)."""
    if "model" not in fields and fields.get("solve") is Solve.MODEL:
        fields["model"] = catalog.model_for_size("8b") or next(iter(catalog.models))
        fields["model_pick"] = ModelPick.NONE


def parse_query(
    text: str,
    catalog: Catalog | None = None,
    said: Said = NOTHING_SAID,
    config: Beneath | None = None,
) -> Request:
    """Parse a one-line query, with the fields ``said`` beside it; QueryError (with a
    message for the user) if it can't. ``config``: the fields a training config sets
    beneath the words (applied after, by :func:`adapters.trainconfig.apply_config`): a
    global batch in the words divides by its micro-batch and must agree with its
    accumulation, as with ``said``'s."""
    catalog = catalog if catalog is not None else default_catalog()
    with beneath(_beneath(said, config)):
        fields, state = _fields(text, catalog)
    refuse_relative(state)
    refuse_asks(state, "8b lora 50M tokens under $500")
    pick, sources = state.model_pick, state.sources
    merge_said(fields, said, sources)
    counted = "samples" in said.fields or (config is not None and "samples" in config.fields)
    sample_length_as_sequence(fields, sources, state, counted)
    beside = [*said.fields, *(config.fields if config is not None else ())]
    tokens_as_sequence(fields, sources, state, any(f in beside for f in LENGTH_FIELDS))
    check_solved_value(fields, sources, ModelPick.EXACT if "model" in said.fields else pick)
    if said.fields:  # the options beside the words (Discord's), checked as the words are
        check_tensor_parallel(fields, sources.get("tensor_parallel"))
        check_context_parallel(fields, sources.get("context_parallel"))
    check_them(state, fields, None)
    if "model" in said.fields:  # the option named it: `largest model` searches its family
        pick = ModelPick.EXACT if fields.get("solve") is Solve.MODEL else None
    dora_is_lora(fields, sources)  # before "full ac" makes a method-less query full
    full_also_method(fields, sources, state.full_ac)
    check_qlora_base(fields, sources)
    fp8_as_float8(fields, sources)
    if pick is not None:
        fields["model_pick"] = pick
    seed_largest_model(fields, catalog)
    if "model" not in fields:
        raise which_model(catalog)
    check_one_length(fields, sources)
    check_samples(fields, strict=True)
    count_steps(fields)
    return build(fields)


def _beneath(said: Said, config: Beneath | None) -> Beneath | None:
    """The fields beneath a query's words: the options said beside it over a config's."""
    if not said.fields and config is None:
        return None
    under = config or Beneath()
    labels = {key: f"the {said.sources.get(key, key)} option" for key in said.fields}
    return Beneath({**under.fields, **said.fields}, {**under.labels, **labels},
                   under.fixed | frozenset(said.fields))


def dora_is_lora(
    fields: dict[str, object], sources: dict[str, str], previous: Request | None = None
) -> None:
    """DoRA decomposes LoRA adapters, so ``dora`` with no method said is LoRA as said (not
    the default): in a query, or in a follow-up on an estimate that named no method or a
    full fine-tune (one on QLoRA keeps it: QDoRA)."""
    if fields.get("dora") is not True or "method" in fields:
        return
    if previous is not None and previous.method not in (None, Method.FULL):
        return
    fields["method"] = Method.LORA
    sources["method"] = sources.get("dora", "dora")


def _relative_base(previous: Request, state: State, catalog: Catalog | None) -> Request:
    """The request a follow-up's factor multiplies: the earlier answer's when the factor
    changes the value a limit question solved for (``double the seq`` after ``max seq``
    doubles the sequence it found), else ``previous``."""
    goal = previous.solve
    if goal is None or goal.value not in state.relative:
        return previous
    return answered(previous, catalog)


def keep_found_model(
    previous: Request, changes: dict[str, object], catalog: Catalog | None
) -> None:
    """A follow-up that turns a ``largest model`` question into another (``fewest
    cards``, ``max seq``) keeps the model its answer found (``changes`` gain it, as named
    exactly): the question's own model is only the search's seed (or, for ``largest
    llama``, the family it searched), not what the reply answered for. A follow-up that
    keeps the question (``what if qlora``) searches again; one that names a model asks
    at it; an answer that found no model leaves the request as it was."""
    if previous.solve is not Solve.MODEL or "model" in changes:
        return
    if changes.get("solve", Solve.MODEL) is Solve.MODEL:
        return
    try:
        solution = estimate(previous, catalog).solution
    except UnknownId:  # a Hub model dropped from the cache: nothing to keep
        return
    found = solution.value if solution is not None else None
    if isinstance(found, str):
        changes.update(model=found, model_pick=ModelPick.EXACT)


def apply_followup(
    previous: Request, text: str, catalog: Catalog | None = None, said: Said = NOTHING_SAID
) -> Request:
    """``previous`` with only the fields ``text`` (and ``said`` beside it) names changed
    ("what if 8k seq?").

    Naming a card (or a card memory, ``on 24gb``) without a count clears the count, and
    each clears the other; naming a model switches model. A change by a factor
    (``double the batch``, ``half the gpus``) multiplies the earlier value.
    """
    catalog = catalog if catalog is not None else default_catalog()
    # The earlier card sizes its nodes ("2 nodes 72 gpus" in a GB200 thread), and its
    # context parallelism is what "ring attention" names.
    thread = {"gpu": previous.gpu, "context_parallel": previous.context_parallel}
    thread_fields = Beneath({k: v for k, v in thread.items() if v and v != 1})
    try:
        with beneath(thread_fields if thread_fields.fields else None):
            changes, state = _fields(bare_context(text, catalog) or text, catalog)
    except QueryError as err:
        raise as_followup(err) from None
    pick, sources = state.model_pick, state.sources
    keep_fewest_cards(changes, state, previous.solve)  # "on an a100": the card, not 1
    apply_relative(_relative_base(previous, state, catalog), state, changes)
    refuse_asks(state, "under $500 | within 2 days | on 2x rtx-4090")
    merge_said(changes, said, sources)
    counted = "samples" in said.fields or previous.samples is not None
    sample_length_as_sequence(changes, sources, state, counted)
    earlier = previous.model_fields_set & set(LENGTH_FIELDS)
    tokens_as_sequence(changes, sources, state,
                       bool(earlier) or any(f in said.fields for f in LENGTH_FIELDS))
    check_them(state, changes, previous)
    if "model" in said.fields:  # the option named it: `largest model` searches its family
        pick = ModelPick.EXACT if changes.get("solve", previous.solve) is Solve.MODEL else None
    # "max seq seq 8k" in one follow-up (an option names its model exactly)
    check_solved_value(changes, sources, ModelPick.EXACT if "model" in said.fields else pick)
    dora_is_lora(changes, sources, previous)
    if not changes and (free := says_only_what_costs_nothing(state)) is not None:
        raise error(
            f'Nothing to change: "{quoted(free)}" changes neither memory nor time (LoRA '
            "alpha only scales the update; learning rate, warmup and seed set no size).",
            None, example=FOLLOWUP_EXAMPLE,
        )
    if not changes:
        raise error(
            f'I didn\'t find anything to change in "{quoted(str(text).strip())}".',
            None,
            example=FOLLOWUP_EXAMPLE,
        )
    if "gpu_memory_gb" in changes and "gpu" not in changes:
        changes["gpu"] = None  # "on 24gb": a card of that memory in place of the named one
    if ("gpu" in changes or "gpu_memory_gb" in changes) and "gpu_count" not in changes:
        changes["gpu_count"] = None
        changes.setdefault("nodes", None)
    if changes.get("gpu") is not None:
        changes.setdefault("gpu_memory_gb", None)  # "on h100": the card, not the memory
    if (previous.gpu is not None and changes.get("gpu", previous.gpu) != previous.gpu
            and previous.price_per_gpu_hour is not None):
        # A price said with a card is that card's rent (engine.ranking.user_price): another
        # card is priced from the catalog unless this message gives its price too.
        changes.setdefault("price_per_gpu_hour", None)
    if "model" in changes:
        changes["model_pick"] = pick
    if answers_sample_length(previous, changes):
        changes["sample_tokens"] = changes.pop("dataset_tokens")  # "300 tokens": the length
    recount = "samples" in changes or "sample_tokens" in changes
    if "dataset_tokens" in changes and not recount:
        changes.update(samples=None, sample_tokens=None)
    if "steps" in changes:
        check_one_length(changes, sources)
        changes.update(samples=None, sample_tokens=None)
    elif any(f in changes for f in (*OTHER_LENGTHS, "sample_tokens")):
        changes["steps"] = None  # the run is counted another way now
    keep_found_model(previous, changes, catalog)  # "fewest cards" after "largest model"
    # Only what was said before (model_fields_set) carries over as said: a framework
    # profile still fills the rest (engine.profiles.resolve).
    merged = {**previous.model_dump(exclude_unset=True), **settled(previous, changes)}
    if recount:
        merged.pop("dataset_tokens", None)
        check_samples(merged, strict=True)
    check_qlora_base(merged, sources, followup=True)
    fp8_as_float8(merged, sources, previous)
    check_tensor_parallel(merged, sources.get("tensor_parallel"))
    check_context_parallel(merged, sources.get("context_parallel"))
    check_expert_parallel_word(merged, sources.get("epochs"), catalog)
    count_steps(merged)
    return build(merged)
