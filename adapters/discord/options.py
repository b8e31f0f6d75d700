"""``/ftcost``'s structured options combined with its free-text ``query``.

Every option is read by the shared parser (``adapters.parse``), as the phrase a user
would type: ``tokens: 50M`` is ``50M tokens``, ``seq: 8k`` is ``seq 8k``, ``gpu: 8x h100``
is ``8x h100``. So options and text accept the same words and fail with the same
messages. Where both name a field they must agree; a disagreement is a
:class:`~adapters.parse.QueryError` naming the option and both values.

:meth:`Options.builder` is what the handlers hand the service
(:class:`bot.service.Ask`): it replaces the parser with one that reads the options beside
the text; without options the parser reads the text alone.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from adapters.parse import QueryError, Said, apply_followup, parse_fields, parse_query
from bot.service import Reply, RequestBuilder, Service
from catalog.echo import quoted
from engine import Request
from engine.choices import Framework
from engine.request import field_metas
from engine.specs import Catalog


@dataclass(frozen=True, slots=True)
class Options:
    """The structured options of ``/ftcost`` as Discord delivered them (None: not given)."""

    model: str | None = None
    gpu: str | None = None
    method: str | None = None
    tokens: str | None = None
    seq: str | None = None
    epochs: float | None = None
    framework: str | None = None
    """A :class:`~engine.choices.Framework` value (the option is a choice)."""

    @property
    def given(self) -> bool:
        return any(getattr(self, f.name) not in (None, "") for f in fields(self))

    def builder(self) -> RequestBuilder | None:
        """What reads the question with these options said beside its text
        (:func:`build_request`); None without options (the parser alone)."""
        if not self.given:
            return None
        return OptionsBuilder(self)

    def as_words(self, catalog: Catalog) -> str:
        """The options as the query words they stand for (``70b 50M tokens seq 8k``): for
        a question read from its words alone (a thread whose estimate can't be read). Each
        is written as the phrase that reads it (``tokens: 50M tokens`` stays ``50M
        tokens``), the option's own first where none does, so the error says so."""
        return " ".join(
            _option_words(f.name, getattr(self, f.name), catalog)
            for f in fields(self)
            if getattr(self, f.name) not in (None, "")
        )

    def describe(self) -> str:
        """``model:70b tokens:50M`` (for footers and logs)."""
        return " ".join(
            f"{f.name}:{_plain(getattr(self, f.name))}"
            for f in fields(self)
            if getattr(self, f.name) not in (None, "")
        )


NO_OPTIONS = Options()


@dataclass(frozen=True, slots=True)
class OptionsBuilder:
    """:meth:`Options.builder`: a :data:`~bot.ask.RequestBuilder` that also names what the
    options said (:attr:`said`, ``method:qlora``), for the replies that quote a message
    (:func:`bot.followups.nothing_changed`)."""

    options: Options

    @property
    def said(self) -> str:
        return self.options.describe()

    def __call__(self, words: str, previous: Request | None, catalog: Catalog) -> Request:
        return build_request(words, self.options, previous, catalog)


def _plain(value: Any) -> str:
    """An option's value as the user gave it: a number as typed (``2``, ``0.5``,
    ``1234567``; Discord sends it as a float), text with its spaces collapsed."""
    return f"{value:.15g}" if isinstance(value, float) else " ".join(str(value).split())


@dataclass(frozen=True, slots=True)
class _Spec:
    phrases: tuple[Callable[[str], str], ...]
    """How the option's value reads as a query phrase, tried in order."""
    allowed: frozenset[str]
    """Fields the option may set."""
    required: str
    """The field it must set."""


_SPECS: dict[str, _Spec] = {
    "model": _Spec((lambda v: v,), frozenset({"model"}), "model"),
    "gpu": _Spec((lambda v: v,), frozenset({"gpu", "gpu_count"}), "gpu"),
    "method": _Spec((lambda v: v,), frozenset({"method"}), "method"),
    "tokens": _Spec((lambda v: f"{v} tokens", lambda v: v), frozenset({"dataset_tokens"}),
                    "dataset_tokens"),
    "seq": _Spec((lambda v: f"seq {v}", lambda v: v), frozenset({"seq_len"}), "seq_len"),
    "epochs": _Spec((lambda v: f"{v} epochs", lambda v: v), frozenset({"epochs"}), "epochs"),
    "framework": _Spec((lambda v: v,), frozenset({"framework"}), "framework"),
}
_OPTION_EXAMPLES: dict[str, tuple[str, ...]] = {
    "model": ("70b", "llama-3.1-8b", "qwen2.5 7b"),
    "gpu": ("h100", "8x a100-80gb-sxm"),
    "method": ("full", "lora", "qlora"),
    "tokens": ("50M", "1.2B"),
    "seq": ("8k", "4096"),
    "epochs": ("2", "0.5"),
    "framework": tuple(f.value for f in Framework),
}
_OPTION_HINTS: dict[str, tuple[frozenset[str], str]] = {
    "seq": (frozenset({"max", "maximum", "longest", "most"}),
            'For the longest sequence that fits, ask "max seq" in the query option.'),
}
"""Said after a value that is no such thing when it has one of these words (``seq:
max``): what was likely meant."""


def _examples(name: str) -> str:
    """``8k or 4096``: the option's examples."""
    *rest, final = _OPTION_EXAMPLES[name]
    return f"{', '.join(rest)} or {final}" if rest else final


def _how(name: str) -> str:
    """How the option is written: ``Write the seq option like 8k or 4096.``"""
    return f"Write the {name} option like {_examples(name)}."


def _a(noun: str) -> str:
    return f"{'an' if noun[:1].lower() in 'aeiou' else 'a'} {noun}"


def _names_what_was_typed(err: QueryError, value: str) -> bool:
    """Whether ``err`` is about words of ``value`` itself, not a word the option's phrase
    added (``"seq" needs a number`` for ``seq: max``, read as ``seq max``)."""
    if not err.word:
        return False
    typed = {w.strip(".,;:!?").lower() for w in value.split()}
    return all(w.strip(".,;:!?").lower() in typed for w in err.word.split())


def _option_words(name: str, raw: Any, catalog: Catalog) -> str:
    """The words option ``name`` stands for: the first of its phrases that reads as the
    option's field alone (as :func:`_option_fields` accepts it)."""
    spec, value = _SPECS[name], _plain(raw)
    for phrase in spec.phrases:
        try:
            found = parse_fields(phrase(value), catalog)
        except QueryError:
            continue
        if spec.required in found and set(found) <= spec.allowed:
            return phrase(value)
    return spec.phrases[0](value)


def _option_fields(name: str, raw: Any, catalog: Catalog) -> dict[str, object]:
    spec = _SPECS[name]
    value = _plain(raw)
    if name == "model" and (model_id := catalog.find_model(value)):
        return {"model": model_id}  # an autocomplete pick: a catalog id
    if name == "gpu" and (gpu_id := catalog.find_gpu(value)):
        return {"gpu": gpu_id}
    if name == "framework" and value in {f.value for f in Framework}:
        return {"framework": Framework(value)}  # a choice: the framework's own name
    first_error: QueryError | None = None
    more: set[str] = set()
    instead: set[str] = set()
    for index, phrase in enumerate(spec.phrases):
        try:
            found = parse_fields(phrase(value), catalog)
        except QueryError as err:
            if index == 0:
                first_error = err  # the option's own reading: its error, if about the value
            continue
        if spec.required in found and set(found) <= spec.allowed:
            return found
        if spec.required in found:
            more |= set(found) - spec.allowed
        else:
            instead |= set(found)
    shown = quoted(value, 60)
    noun = field_metas()[spec.required].noun
    if more:  # ``seq: 8k bs 4``: read, but it says more than its option
        raise QueryError(
            f"The {name} option takes only {_a(noun)} "
            f"(e.g. {', '.join(_OPTION_EXAMPLES[name])}), but "
            f'"{shown}" also says {_labels(more)}: put that in the query option.',
            value,
        )
    if instead:  # ``tokens: 20M samples``: a value of another field
        raise QueryError(
            f'The {name} option "{shown}" gives {_nouns(instead)}, not {_a(noun)}. '
            f'{_how(name)[:-1]}, or put "{shown}" in the query option.',
            value,
        )
    if first_error is not None and _names_what_was_typed(first_error, value):
        problem = first_error.message.rsplit(" Example: ", 1)[0]
        raise QueryError(
            f"The {name} option: {problem} {_how(name)}", first_error.word,
            first_error.suggestions,
        )
    triggers, hint = _OPTION_HINTS.get(name, (frozenset(), ""))
    hinted = bool(triggers & {w.lower() for w in value.split()})
    raise QueryError(
        f'The {name} option "{shown}" is not {_a(noun)}. {_how(name)}'
        + (f" {hint}" if hinted else ""),
        value,
    )


def _nouns(names: set[str]) -> str:
    """``a sample count``: request fields as the messages name them."""
    metas = field_metas()
    return " and ".join(_a(metas[n].noun if n in metas else n) for n in sorted(names))


def _labels(names: set[str]) -> str:
    """``batch, method``: request fields as the replies label them."""
    metas = field_metas()
    return ", ".join(sorted(metas[n].label or n if n in metas else n for n in names))


def option_fields(options: Options, catalog: Catalog) -> Said:
    """The fields the options set, each with the option that set it and how it reads
    (``seq: 8k``) in a message."""
    found: dict[str, object] = {}
    sources: dict[str, str] = {}
    phrases: dict[str, str] = {}
    for f in fields(options):
        raw = getattr(options, f.name)
        if raw in (None, ""):
            continue
        for key, value in _option_fields(f.name, raw, catalog).items():
            found[key] = value
            sources[key] = f.name
            phrases[key] = f"{f.name}: {_plain(raw)}"
    return Said(found, sources, phrases)


def build_request(
    text: str, options: Options, previous: Request | None, catalog: Catalog
) -> Request:
    """The request ``text`` and ``options`` describe, as a change of ``previous`` when
    given: the parser's own path with the options said beside the text, so they are
    checked, counted (steps, samples) and carried over as the words would be."""
    text = " ".join(str(text or "").split())
    said = option_fields(options, catalog)
    if previous is None:
        return parse_query(text, catalog, said)
    return apply_followup(previous, text, catalog, said)


def answer(
    service: Service,
    text: str | None,
    options: Options = NO_OPTIONS,
    previous: Request | None = None,
    workspace: str | None = None,
    defaults: Mapping[str, object] | None = None,
) -> Reply:
    """The reply to ``/ftcost`` (or a message): help, a listing, an estimate or an error.
    ``workspace`` (``discord:<guild id>``) picks the team price sheet in force;
    ``defaults`` (the channel's settings) fill what a new question does not name.

    ``previous`` is the thread's last request (``text`` and the options then change it);
    ``new ...`` starts over as in a Slack thread. The service answers its own words
    (help, models, gpus, chart) first; the options only replace the parser."""
    return service.answer(" ".join(str(text or "").split()), previous, workspace, defaults,
                          options.builder())
