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
from engine import Request
from engine.request import Framework, field_metas
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
    """A :class:`~engine.request.Framework` value (the option is a choice)."""

    @property
    def given(self) -> bool:
        return any(getattr(self, f.name) not in (None, "") for f in fields(self))

    def builder(self) -> RequestBuilder | None:
        """What reads the question with these options said beside its text
        (:func:`build_request`); None without options (the parser alone)."""
        if not self.given:
            return None
        return lambda words, base, catalog: build_request(words, self, base, catalog)

    def describe(self) -> str:
        """``model:70b tokens:50M`` (for footers and logs)."""
        return " ".join(
            f"{f.name}:{_plain(getattr(self, f.name))}"
            for f in fields(self)
            if getattr(self, f.name) not in (None, "")
        )


NO_OPTIONS = Options()


def _plain(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else " ".join(str(value).split())


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
_OPTION_EXAMPLES = {
    "model": "70b, llama-3.1-8b, qwen2.5 7b",
    "gpu": "h100, 8x a100-80gb-sxm",
    "method": "full, lora, qlora",
    "tokens": "50M, 1.2B",
    "seq": "8k, 4096",
    "epochs": "2, 0.5",
    "framework": ", ".join(f.value for f in Framework),
}


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
    for phrase in spec.phrases:
        try:
            found = parse_fields(phrase(value), catalog)
        except QueryError as err:
            first_error = first_error or err
            continue
        if spec.required in found and set(found) <= spec.allowed:
            return found
        if spec.required in found:
            more |= set(found) - spec.allowed
    if more:  # ``seq: 8k bs 4``: read, but it says more than its option
        raise QueryError(
            f'The {name} option takes only a {name} (e.g. {_OPTION_EXAMPLES[name]}), but '
            f'"{value}" also says {_labels(more)}: put that in the query option.',
            value,
        )
    if first_error is not None:
        raise QueryError(
            f"The {name} option: {first_error.message}", first_error.word,
            first_error.suggestions,
        )
    raise QueryError(
        f'The {name} option "{value}" is not a {name} (e.g. {_OPTION_EXAMPLES[name]}).', value
    )


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
