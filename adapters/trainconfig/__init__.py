"""Estimate from a training config: axolotl, TRL/Transformers (``TrainingArguments``,
``SFTConfig``), torchtune recipes and LLaMA-Factory, as YAML or JSON.

:func:`read_config` turns the text into a :class:`ConfigRead`: the request fields each
key the estimate uses maps to, the model reference, the framework, and the keys read and
ignored for the reply. Parsing is ``yaml.safe_load`` under a 64 KB cap with anchors and
aliases refused (:mod:`adapters.trainconfig.load`); nothing in a config is executed or
imported. :mod:`adapters.trainconfig.build` turns a read into a request with the user's
words on top.
"""

from __future__ import annotations

from adapters.trainconfig.build import apply_config, config_notes, config_query
from adapters.trainconfig.formats import detect, read
from adapters.trainconfig.load import (
    FORMATS,
    MAX_CONFIG_BYTES,
    ConfigError,
    load,
    load_document,
    strip_code_fence,
)
from adapters.trainconfig.others import refuse_other_file, sentence_start
from adapters.trainconfig.reader import ConfigFormat, ConfigRead, KeyRead


def read_config(data: str | bytes, name: str = "the config") -> ConfigRead:
    """Read a training config's text (YAML or JSON; a Markdown code block is unwrapped).

    Raises :class:`ConfigError` (the message says what is read) for text over 64 KB,
    text that does not parse, anchors/aliases, nesting over 16 levels, TOML, a DeepSpeed
    or accelerate config on its own, a mapping in none of the four formats, preference
    or RL training, keys that contradict each other, and a key whose value is the wrong
    type, not finite or out of its range (the message names the key, quotes its value as
    written and says what to write). Nothing else escapes: front ends catch only
    :class:`ConfigError`.
    """
    document = load(data, name)
    doc = document.values
    refuse_other_file(doc, name)
    fmt = detect(doc)
    if fmt is None:
        raise ConfigError(
            f"{sentence_start(name)} is not a training config ftcost knows: it reads "
            f"{FORMATS}. Keys such as base_model (axolotl), model_name_or_path with "
            "per_device_train_batch_size (TRL), model._component_ (torchtune) or "
            "finetuning_type (LLaMA-Factory) tell them apart."
        )
    return read(doc, fmt, document.written)


__all__ = [
    "FORMATS",
    "MAX_CONFIG_BYTES",
    "ConfigError",
    "ConfigFormat",
    "ConfigRead",
    "KeyRead",
    "apply_config",
    "config_notes",
    "config_query",
    "detect",
    "load_document",
    "read_config",
    "strip_code_fence",
]
