"""The four config formats: how each is recognized and what each key means.

Key names follow each project's documentation: axolotl's config reference
(``base_model``, ``adapter``, ``sequence_len``, ``sample_packing``, ``micro_batch_size``,
``lora_target_linear``...), TRL's ``SFTConfig``/``ModelConfig`` and Transformers'
``TrainingArguments`` (``model_name_or_path``, ``per_device_train_batch_size``,
``max_length``/``max_seq_length``, ``packing``, ``use_peft``, ``load_in_4bit``...),
torchtune's recipe configs (``model._component_`` such as
``torchtune.models.llama3_1.qlora_llama3_1_8b``, ``batch_size``,
``enable_activation_checkpointing``...) and LLaMA-Factory's (``finetuning_type``,
``quantization_bit``, ``cutoff_len``, ``lora_target``...). Each format's reader is its
own module (:mod:`.axolotl`, :mod:`.hf`, :mod:`.torchtune`); keys they share are in
:mod:`.shared` and :mod:`.mappings`, trainer defaults in :mod:`.defaults`, and what is
refused (preference training, contradictions) in :mod:`.checks`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from adapters.trainconfig.axolotl import read_axolotl
from adapters.trainconfig.checks import refuse_preference
from adapters.trainconfig.hf import read_llama_factory, read_trl
from adapters.trainconfig.reader import ConfigFormat, ConfigRead, Reader
from adapters.trainconfig.shared import DATASET_NOTE
from adapters.trainconfig.torchtune import read_torchtune, tune_model_name
from engine.choices import Framework

_LLAMA_FACTORY_KEYS = frozenset(
    {"finetuning_type", "cutoff_len", "quantization_bit", "lora_target", "template",
     "flash_attn", "enable_liger_kernel", "use_unsloth"}
)
_AXOLOTL_KEYS = frozenset(
    {"base_model", "sequence_len", "micro_batch_size", "sample_packing", "lora_target_linear",
     "num_epochs", "adapter"}
)
_TRL_KEYS = frozenset(
    {"model_name_or_path", "per_device_train_batch_size", "num_train_epochs", "max_seq_length",
     "max_length", "packing", "use_peft", "optim", "output_dir", "gradient_accumulation_steps"}
)
_READERS: dict[ConfigFormat, Callable[[Reader], None]] = {
    ConfigFormat.AXOLOTL: read_axolotl,
    ConfigFormat.TRL: read_trl,
    ConfigFormat.TORCHTUNE: read_torchtune,
    ConfigFormat.LLAMA_FACTORY: read_llama_factory,
}


def detect(doc: dict[str, Any]) -> ConfigFormat | None:
    """The format of a config mapping, or None when it is none of the four."""
    keys = set(doc)
    model = doc.get("model")
    if (isinstance(model, dict) and "_component_" in model) or any(
        isinstance(v, dict) and "_component_" in v for v in doc.values()
    ):
        return ConfigFormat.TORCHTUNE
    if keys & _LLAMA_FACTORY_KEYS and ("finetuning_type" in keys or "cutoff_len" in keys
                                       or "stage" in keys or "template" in keys):
        return ConfigFormat.LLAMA_FACTORY
    if "base_model" in keys or len(keys & _AXOLOTL_KEYS) >= 2:
        return ConfigFormat.AXOLOTL
    if keys & _TRL_KEYS:
        return ConfigFormat.TRL
    return None


def read(
    doc: dict[str, Any], fmt: ConfigFormat, written: Mapping[str, str] | None = None
) -> ConfigRead:
    """Read ``doc`` as ``fmt``; ``written``: each key's text as the file wrote it, for
    messages (:class:`adapters.trainconfig.load.Document`). A preference or RL config is
    refused before its keys are read (:func:`adapters.trainconfig.checks.refuse_preference`)."""
    framework = Framework.TORCHTUNE if fmt is ConfigFormat.TORCHTUNE else Framework.HF
    r = Reader(doc, fmt, framework, written)
    refuse_preference(r)
    _READERS[fmt](r)
    if r.first("datasets", "dataset", "dataset_name", "train_file"):
        r.note(DATASET_NOTE)
    return r.result()


__all__ = ["DATASET_NOTE", "detect", "read", "tune_model_name"]
