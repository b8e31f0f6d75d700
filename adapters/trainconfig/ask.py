"""A training config as a question: the request builder the shared service runs
(``bot.service.RequestBuilder``; ``bot.config_questions`` asks it), the ``"config"``
member of the JSON, and the terminal's ``--config FILE``.

Built this way a config is answered like any question: the same Hugging Face Hub retry
for its model id, the same channel defaults, the same report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from adapters.argv import MissingValue, take_option
from adapters.parse import NOTHING_SAID, QueryError, Said, parse_fields, parse_query
from adapters.query.errors import error
from adapters.query.names import resolve_model
from adapters.trainconfig.build import apply_config, config_beneath, config_query, model_used
from adapters.trainconfig.load import ConfigError
from adapters.trainconfig.reader import ConfigRead
from catalog.hub.ref import looks_like_hub_id
from engine import Request
from engine.request import field_meta
from engine.specs import Catalog

CONFIG_EXAMPLE = "ftcost --config qlora.yml 20M tokens h100"


MAX_WORDS_SET_ASIDE = 16
"""Words in error :func:`_names_model` sets aside before it lets the words speak alone."""


def _names_model(words: str, catalog: Catalog) -> bool:
    """Whether the user's ``words`` name a model themselves (then the config's is not put
    in front of them). Words in error (a typo, two GPUs) are set aside to see what the
    rest names: the parse then reports that error itself, never as a conflict with the
    config's model. A word in error that may be a Hugging Face Hub id names a model (the
    parse reads it from the Hub)."""
    for _ in range(MAX_WORDS_SET_ASIDE):
        try:
            return "model" in parse_fields(words, catalog)
        except QueryError as exc:
            word = exc.word
            if word is not None and looks_like_hub_id(word):
                return True
            rest = re.sub(rf"(?<!\S){re.escape(word or '')}(?!\S)", " ", words, count=1)
            if not word or rest == words:
                return True  # the words alone report their own error
            words = rest
    return True


def _model_problem(ref: str, catalog: Catalog) -> str | None:
    """Why the config's model reference ``ref`` names no model, read as a query word
    (``h100``: "which names the GPU, not a model"); None when it names one, or may be a
    Hugging Face Hub id (the Hub says whether it exists)."""
    if looks_like_hub_id(ref):
        return None
    try:
        fields = parse_fields(ref, catalog)
    except QueryError:
        return "which is no model ftcost knows (`models` lists them)"
    if "model" in fields:
        return None
    if not fields:
        return "which is no model ftcost knows (`models` lists them)"
    said = " and ".join(f"the {field_meta(name).noun}" for name in fields)
    return f"which names {said}, not a model"


def builder(
    config: ConfigRead, example: str = CONFIG_EXAMPLE, said: Said = NOTHING_SAID
) -> Callable[[str, Request | None, Catalog], Request]:
    """A request builder for ``config``: its model and the user's words (and the fields
    ``said`` beside them, Discord's options) parsed as a query, then every field they left
    unnamed taken from the config. A config starts a new question, so a previous request
    is not used. ``example``: how the front end's users ask with a config, shown in error
    messages."""

    def build(words: str, previous: Request | None, catalog: Catalog) -> Request:
        try:
            query = config_query(
                config,
                words,
                names_model=lambda text: _names_model(text, catalog),
                resolves=lambda ref: resolve_model(catalog, ref) is not None,
                model_problem=lambda ref: _model_problem(ref, catalog),
            )
        except ConfigError as exc:  # no model: show how this front end names one
            raise error(str(exc), None, example=example) from exc
        request = parse_query(query, catalog, said, config=config_beneath(config))
        try:
            return apply_config(config, request)
        except ConfigError as exc:
            # The message names the config key and says what to set it to; the front
            # end's example (how to ask with a config) would be beside the point.
            raise QueryError(str(exc)) from exc

    return build


def config_json(doc: dict[str, Any], config: ConfigRead) -> dict[str, Any]:
    """The estimate's JSON document with the ``"config"`` member added; its ``model`` is
    the config's reference the question used (``qwen3-0.6b-instruct``, the reading of
    torchtune's ``qwen3_0_6b_instruct`` the catalog knows), not the first guess."""
    from catalog.loader import default_catalog

    catalog = default_catalog()
    used = model_used(config, lambda ref: resolve_model(catalog, ref) is not None)
    return {**doc, "config": config.to_json(used)}


# --------------------------------------------------------------------------------------- #
# the terminal's ``--config FILE``

CONFIG_OPTION = "--config"


def split_config_option(args: list[str]) -> tuple[list[str], str | None]:
    """``args`` without ``--config FILE`` (or ``--config=FILE``), and the file named.

    Raises :class:`ConfigError` when the option has no file or is given twice."""
    try:
        rest, found = take_option(args, CONFIG_OPTION)
    except MissingValue:
        raise ConfigError(f"{CONFIG_OPTION} needs a file, e.g. {CONFIG_EXAMPLE}") from None
    if len(found) > 1:
        raise ConfigError(f"{CONFIG_OPTION} is given {len(found)} times; give one config.")
    return rest, (found[0] if found else None)


def read_config_file(path: str) -> ConfigRead:
    """Read the config file at ``path``: at most ``MAX_CONFIG_BYTES`` are read, so a huge
    or endless file (``/dev/zero``, a pipe) is refused without loading it; the message
    gives a regular file's size, or says "larger than 64 KB" where none is known. A name
    the file system refuses, a folder, a named pipe no one writes to, a terminal and
    ``-`` are refused too (:func:`adapters.trainconfig.files.config_bytes`)."""
    from adapters.trainconfig import read_config
    from adapters.trainconfig.files import config_bytes

    return read_config(config_bytes(path), path)
