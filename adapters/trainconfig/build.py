"""From a config read to a request, with the user's words on top.

A front end asks in three steps, so that its own model lookup (catalog, then the
Hugging Face Hub) stays the one it uses for typed queries:

1. :func:`config_query` gives the query text to parse: the config's model followed by
   the user's words (the words alone when they name a model);
2. the front end parses it as any query (Hub ids resolve as usual);
3. :func:`apply_config` fills every field the words did not name from the config.

So words override the config (``ftcost --config qlora.yml seq 8k`` trains at 8k).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from adapters.query.fields import human_tokens
from adapters.query.parallel import context_parallel_problem, tensor_parallel_problem
from adapters.query.steps import OTHER_LENGTHS, Beneath, count_steps, tokens_per_step
from adapters.trainconfig.load import FORMATS, ConfigError
from adapters.trainconfig.reader import (
    ConfigRead,
    field_bounds,
    number_range,
    range_error,
    shown,
)
from adapters.trainconfig.shared import DATASET_NOTE, MODEL_EXAMPLE
from adapters.trainconfig.torchtune import BUILDER_EXAMPLE
from engine.request import Request, field_meta

MAX_LISTED_KEYS = 24
"""Keys named in a reply's "read"/"ignored" lines before "and N more"."""


def config_query(
    config: ConfigRead,
    words: str,
    names_model: Callable[[str], bool],
    resolves: Callable[[str], bool],
    model_problem: Callable[[str], str | None] | None = None,
) -> str:
    """The query text for ``config`` plus the user's ``words``.

    ``names_model(words)`` says whether the words name a model themselves (then they
    win); ``resolves(ref)`` whether the catalog knows a model reference (the first of the
    config's references it knows is used, else the first, which may be a Hub id);
    ``model_problem(ref)`` why a reference the catalog does not know names no model
    (``which is no model ftcost knows``), None when it may (a Hub id).
    Raises :class:`ConfigError` when neither the config nor the words name a model, and
    when the config's model is no model: the message names the key that set it.
    """
    words = words.strip()
    if words and names_model(words):
        return words
    if not config.model:
        raise ConfigError(
            f"The {config.format.label} config names no model "
            f"({_model_keys(config)}); add it, or name one after the config "
            f"(e.g. `llama-3.1-8b`). ftcost reads {FORMATS}."
        )
    model = model_used(config, resolves) or config.model[0]
    if _local_path(model):
        raise ConfigError(
            f"The config's model '{shown(model)}' is a local folder whose name is no model "
            "ftcost knows: name the model after the config (e.g. `llama-3.1-8b`, or its "
            "Hugging Face id such as meta-llama/Llama-3.1-8B)."
        )
    if any(c.isspace() for c in model):
        raise ConfigError(
            f"The config's model '{shown(model)}' is not a model name or Hugging Face id "
            f"(it has a space): set {_model_keys(config)} to one such as "
            "meta-llama/Llama-3.1-8B, or name one after the config (e.g. `llama-3.1-8b`)."
        )
    if model_problem is not None and not resolves(model):
        problem = model_problem(model)
        if problem is not None:
            raise _not_a_model(config, model, problem)
    return f"{model} {words}".strip()


def _not_a_model(config: ConfigRead, model: str, problem: str) -> ConfigError:
    """The error for a config whose model is no model (``base_model: h100``), naming the
    key that set it (a torchtune builder's name, its ``checkpoint_dir``'s folder...)."""
    key, written = _model_source(config, model)
    names = "" if written == shown(model) else f", whose model is {shown(model)}"
    expected = BUILDER_EXAMPLE if key == "model._component_" else MODEL_EXAMPLE
    return ConfigError(
        f"{config.format.label} config: {key} is '{written}'{names}, {problem}. Set {key} "
        f"to {expected}, or name the model after the config (e.g. `llama-3.1-8b`)."
    )


def _model_source(config: ConfigRead, model: str) -> tuple[str, str]:
    """The key that named the config's model, and its value as written."""
    named = [k for k in config.read if k.meaning == "model"]  # base_model, ...
    named += [k for k in config.read if k.key == "model._component_"]  # torchtune's builder
    if named:
        return named[0].key, named[0].value
    key = "checkpointer.checkpoint_dir" if config.format.value == "torchtune" else (
        _model_keys(config))
    return key, shown(model)


_BENEATH_FIELDS = ("micro_batch", "grad_accum", "tensor_parallel", "context_parallel",
                   "seq_len", "max_len", "samples", "sample_tokens", "steps")
"""The config's fields a global batch in the words divides by or must agree with, and
those that say how long a sequence or the data is (beside them ``8k tokens`` is data)."""


def config_beneath(config: ConfigRead) -> Beneath:
    """The config's fields a typed global batch reads (its micro-batch, accumulation,
    tensor- and context-parallel degrees), each labelled with the key that set it, for
    :func:`adapters.parse.parse_query` (``config=``)."""
    fields = {name: config.fields[name] for name in _BENEATH_FIELDS if name in config.fields}
    return Beneath(fields, {name: config.source_label(name) for name in fields})


def model_used(config: ConfigRead, resolves: Callable[[str], bool]) -> str | None:
    """The config's model reference a question uses: the first of its readings the
    catalog knows (``resolves``), else its first (a Hub id); None when it names none."""
    refs = [name for ref in config.model for name in _readings(ref)]
    return next((ref for ref in refs if resolves(ref)), config.model[0] if refs else None)


def _local_path(ref: str) -> bool:
    """A folder on the training machine (``/workspace/models/Llama-3.1-8B``, ``./ckpt``),
    not a Hugging Face id (``org/name``)."""
    return ref.startswith(("/", "./", "../", "~")) or ref.count("/") > 1


def _readings(ref: str) -> list[str]:
    """``ref``, and for a local folder also its last part (folders are usually named
    after the model they hold)."""
    parts = [p for p in ref.split("/") if p.strip(". ~")]
    return [ref, parts[-1]] if _local_path(ref) and parts else [ref]


def _model_keys(config: ConfigRead) -> str:
    return {
        "axolotl": "base_model",
        "trl": "model_name_or_path",
        "torchtune": "model._component_",
        "llama-factory": "model_name_or_path",
    }[config.format.value]


def apply_config(config: ConfigRead, request: Request) -> Request:
    """``request`` (parsed from :func:`config_query`'s text) with the config's fields for
    every field the words did not name, and the config's framework unless they named one.

    Every value is checked against the request's bounds (and a ``max_steps`` against the
    token bound its steps reach); :class:`ConfigError` names the config key of the first
    that is out of range, its value as written, the range and what to set it to.
    """
    said = request.model_dump(exclude_unset=True)
    fields: dict[str, Any] = {"framework": config.framework, **config.fields}
    merged = {**fields, **said}
    for name in config.fields:
        if name not in said:
            _check_bounds(config, name, merged[name])
    if "steps" not in said and (
        merged.get("gpu_count") is None or any(f in said for f in (*OTHER_LENGTHS, "samples"))
    ):
        # The config's max_steps counts the run only with a card count, and only when
        # the words give no other length.
        merged.pop("steps", None)
    if "steps" in merged and "steps" not in said:
        _check_step_tokens(config, merged)
    # Steps count the config's batch, accumulation and sequence too.
    count_steps(merged)
    # The degrees are checked before the request is built, which refuses QLoRA with tp
    # in the engine's own words and without saying where the degree came from.
    if (problem := tensor_parallel_problem(merged)) is not None:
        from_config = "tensor_parallel" in config.sources and "tensor_parallel" not in said
        lead = (f"{config.format.label} config, {config.sources['tensor_parallel']} "
                if from_config else "tp ")
        raise ConfigError(f"{lead}{merged['tensor_parallel']}: {problem}")
    if (problem := context_parallel_problem(merged)) is not None:
        from_config = "context_parallel" in config.sources and "context_parallel" not in said
        lead = (f"{config.format.label} config, {config.sources['context_parallel']} "
                if from_config else "cp ")
        raise ConfigError(f"{lead}{merged['context_parallel']}: {problem}")
    try:
        request = Request.model_validate(merged)
    except ValidationError as exc:
        # Every number was bounded above; what is left is a value of the wrong kind.
        err = exc.errors()[0]
        if not err["loc"]:  # a rule across fields (Request's validators)
            why = str(err["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"{config.format.label} config: {why}") from exc
        name = str(err["loc"][0])
        key = config.sources.get(name, name)
        raise ConfigError(
            f"{config.format.label} config: {key} = {_written(config, name, merged.get(name))}"
            f" is not accepted for the {field_meta(name).noun}; fix or remove {key}."
        ) from exc
    return request


def _written(config: ConfigRead, name: str, value: object) -> str:
    """The config's text for the key that set the request field ``name``, as written."""
    key = config.sources.get(name)
    return next((k.value for k in config.read if k.key == key), None) or shown(value)


def _check_bounds(config: ConfigRead, name: str, value: object) -> None:
    """Refuse a config's number outside the request field's bounds (LoRA rank and
    dropout reach here unchecked; the reader bounds the rest as it reads them)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    low, high = field_bounds(name)
    if not low <= value <= high:
        whole = isinstance(Request.model_fields[name].default, int)
        raise range_error(
            config.format.label, config.sources.get(name, name), _written(config, name, value),
            field_meta(name).noun, number_range(low, high, whole),
        )


def _check_step_tokens(config: ConfigRead, merged: dict[str, Any]) -> None:
    """Refuse a config's ``max_steps`` whose tokens (steps x data-parallel ranks x
    micro-batch x accumulation x sequence) pass the request's token bound, naming the key
    and the most steps that fit, rather than a token count the user never wrote."""
    steps, cards = merged["steps"], merged.get("gpu_count")
    per_step = tokens_per_step(merged, cards if isinstance(cards, int) else 1)
    _, high = field_bounds("dataset_tokens")
    if isinstance(steps, int) and steps * per_step > high:
        key = config.sources.get("steps", "max_steps")
        most = max(1, int(high) // per_step)
        raise ConfigError(
            f"{config.format.label} config: {key} = {_written(config, 'steps', steps)} is "
            f"{steps * per_step:.3g} tokens at {per_step:,} tokens a step (data-parallel "
            f"ranks x micro-batch x accumulation x sequence), past the {human_tokens(high)} ftcost "
            f"counts. Set {key} to at most {most:,}, or give the run in tokens "
            "(`20M tokens`)."
        )


def _listing(items: list[str]) -> str:
    shown = items[:MAX_LISTED_KEYS]
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def config_notes(config: ConfigRead, counted: bool = False) -> list[str]:
    """The reply's lines about the config: the keys read (with what each set), the keys
    ignored, and how any key was approximated. ``counted``: the question gave a dataset
    size, so the note asking for one is left out."""
    read = [f"{k.key}: {k.value} → {k.meaning}" for k in config.read]
    lines = [f"Read from the {config.format.label} config: " + _listing(read) + "."]
    if config.ignored:
        lines.append("Ignored (no effect on the estimate): " + _listing(list(config.ignored))
                     + ".")
    lines += [n for n in config.notes if not (counted and n == DATASET_NOTE)]
    return lines
