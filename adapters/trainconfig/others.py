"""Files shared as training configs that are none of the four formats, but that say
something the words can: a DeepSpeed config (``ds_config_zero3.json``), an accelerate
config (``accelerate config``'s ``default_config.yaml``) or a model's own ``config.json``
(the Hugging Face one: ``architectures``, ``hidden_size``, ``num_hidden_layers``...). Each
is refused with what it is and the words that say what it sets. (A TOML file,
torchtitan's format, is refused while loading: :func:`adapters.trainconfig.load.not_toml`.)
"""

from __future__ import annotations

import re
from typing import Any, Final

from adapters.trainconfig.load import FORMATS, ConfigError

_MODEL_KEYS: Final = frozenset({"base_model", "model_name_or_path", "model", "model_id"})
_DEEPSPEED_KEYS: Final = frozenset(
    {"zero_optimization", "train_micro_batch_size_per_gpu", "train_batch_size"}
)
_ACCELERATE_KEYS: Final = frozenset({"compute_environment", "distributed_type"})
_MODEL_CONFIG_KEYS: Final = frozenset(
    {"architectures", "model_type", "hidden_size", "num_hidden_layers",
     "num_attention_heads", "intermediate_size", "vocab_size", "max_position_embeddings",
     "transformers_version", "torch_dtype", "text_config"}
)
"""Keys of a Hugging Face model's ``config.json``; two of them make a file one."""
_HUB_ID: Final = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")
_HUB_EXAMPLE: Final = "meta-llama/Llama-3.1-8B"


def sentence_start(name: str) -> str:
    """``name`` at the start of a sentence: "The config ..." for a description, a file
    name (``accelerate_fsdp.yaml``) as written."""
    return f"T{name[1:]}" if name.startswith("the ") else name


def refuse_other_file(doc: dict[str, Any], name: str) -> None:
    """Refuse a DeepSpeed, accelerate or model config shared on its own, saying what to
    type."""
    keys = set(doc)
    if keys & _MODEL_KEYS:
        return
    if keys & _DEEPSPEED_KEYS:
        words = _deepspeed_words(doc.get("zero_optimization"))
        said = words or "zero1, zero2 or zero3"
        words = words or "zero3"
        raise ConfigError(
            f"{sentence_start(name)} is a DeepSpeed config, not a training config ({FORMATS}"
            f"). Say its stage in the words instead ({said}), e.g. `ftcost --config "
            f"train.yml {words} 8x h100` or `ftcost 8b full {words} 8x h100`, or put it "
            "under `deepspeed:` in the trainer's config."
        )
    if keys & _ACCELERATE_KEYS:
        words = _accelerate_words(doc)
        raise ConfigError(
            f"{sentence_start(name)} is an accelerate config (how the processes start), "
            f"not a training config ({FORMATS}). Say what it sets in the words instead "
            f"({words}, naming your card), beside the training config: `ftcost --config "
            f"train.yml {words}`."
        )
    if len(keys & _MODEL_CONFIG_KEYS) >= 2:
        hub_id = doc.get("_name_or_path")
        if not (isinstance(hub_id, str) and _HUB_ID.fullmatch(hub_id)):
            hub_id = _HUB_EXAMPLE
        raise ConfigError(
            f"{sentence_start(name)} is a model's config (its architecture: layers, sizes), "
            f"not a training config ({FORMATS}). Name the model in the query instead, by "
            f"its Hugging Face Hub id (org/name, e.g. `ftcost {hub_id} lora`) or a catalog "
            "name (`ftcost llama-3.1-8b lora`; `ftcost models` lists them); a training "
            "config names it under base_model or model_name_or_path."
        )


def _deepspeed_words(zero: object) -> str:
    """``zero3 offload optimizer`` for a DeepSpeed ``zero_optimization`` section; empty
    when its stage is not 0-3 (``auto``, or no section)."""
    if not isinstance(zero, dict):
        return ""
    stage = str(zero.get("stage", "")).strip()
    words = {"0": "ddp", "1": "zero1", "2": "zero2", "3": "zero3"}.get(stage, "")
    if not words:
        return ""
    offload = [part for part in ("offload_optimizer", "offload_param")
               if _offloads(zero.get(part))]
    if offload == ["offload_optimizer"]:
        words += " offload optimizer"
    elif offload:
        words += " offload"
    return words


def _offloads(section: object) -> bool:
    if not isinstance(section, dict):
        return False
    device = section.get("device")
    return isinstance(device, str) and device.strip().lower() in ("cpu", "nvme")


_ACCELERATE_TYPES: Final = {
    "fsdp": "fsdp", "deepspeed": "deepspeed zero3", "multi_gpu": "ddp", "no": "",
}


def _accelerate_words(doc: dict[str, Any]) -> str:
    """The words for an accelerate config: the sharding, and the cards it starts."""
    kind = str(doc.get("distributed_type", "")).strip().lower()
    words = _ACCELERATE_TYPES.get(kind, "")
    deepspeed = doc.get("deepspeed_config")
    stage = deepspeed.get("zero_stage") if isinstance(deepspeed, dict) else None
    if kind == "deepspeed" and isinstance(stage, int) and 0 <= stage <= 3:
        words = f"zero{stage}" if stage else "ddp"
    fsdp = doc.get("fsdp_config")
    if kind == "fsdp" and isinstance(fsdp, dict):
        strategy = str(fsdp.get("fsdp_sharding_strategy", "")).strip().upper()
        words = {"SHARD_GRAD_OP": "zero2", "HYBRID_SHARD": "hsdp", "NO_SHARD": "ddp"}.get(
            strategy, "fsdp")
        if str(fsdp.get("fsdp_offload_params", "")).strip().lower() == "true":
            words += " offload"
    count = doc.get("num_processes")
    if isinstance(count, int) and not isinstance(count, bool) and count > 0:
        words = f"{words} {count}x h100".strip()
    return words or "ddp 8x h100"
