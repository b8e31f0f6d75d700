"""What a config says that the estimate refuses, as it refuses the same typed words:
preference and RL training (DPO, ORPO, KTO, PPO, GRPO: the words ``dpo``, ``grpo`` and
``tune run lora_dpo_single_device`` are refused alike), and keys that contradict each
other (:func:`conflict`). Each message names the keys and says what to write instead.
"""

from __future__ import annotations

import re
from typing import Any, Final

from adapters.trainconfig.load import ConfigError
from adapters.trainconfig.reader import ConfigFormat, Reader

PREFERENCE: Final = (
    "preference training (DPO, ORPO, KTO, SimPO, reward models), which is not modeled, "
    "only supervised fine-tuning. DPO runs chosen and rejected sequences together and a "
    "frozen reference model (with LoRA the base serves): estimate it as SFT at twice the "
    "batch"
)
RL: Final = (
    "reinforcement learning (PPO, GRPO), which is not modeled, only supervised "
    "fine-tuning: estimate the policy's update as SFT, without the generation and the "
    "reward and reference models"
)

_SFT_STAGES: Final = frozenset({"sft", "pt"})
"""LLaMA-Factory's stages that train on next-token loss (``pt``: pre-training)."""
_RL_WORDS: Final = frozenset({"ppo", "grpo", "rloo", "online_dpo", "dapo", "dr_grpo", "bnpo"})
_TRL_PREFERENCE_KEYS: Final = (
    "beta", "max_prompt_length", "rpo_alpha", "desirable_weight", "undesirable_weight",
    "precompute_ref_log_probs", "ref_model_init_kwargs", "reference_free", "cpo_alpha",
    "simpo_gamma", "generate_during_eval",
)
"""Keys of TRL's DPOConfig / ORPOConfig / KTOConfig / CPOConfig that SFTConfig lacks."""
_TRL_RL_KEYS: Final = (
    "num_generations", "max_completion_length", "use_vllm", "vllm_mode", "reward_funcs",
    "reward_weights", "reward_model_path", "num_ppo_epochs", "kl_coef",
)
"""Keys of TRL's GRPOConfig / RLOOConfig / PPOConfig / OnlineDPOConfig."""
_SFT_LOSSES: Final = frozenset({"nll", "dft", "chunked_nll"})
"""SFTConfig's own ``loss_type`` values; any other is a preference or RL loss."""
_TUNE_RLHF: Final = re.compile(r"\.rlhf\.|(?:dpo|rso|simpo|ipo|ppo|kto|orpo)loss$", re.I)

_BATCH_KEYS: Final = {
    ConfigFormat.AXOLOTL: ("micro_batch_size", 1, "axolotl's default"),
    ConfigFormat.TRL: ("per_device_train_batch_size", 8, "the Trainer's default"),
    ConfigFormat.LLAMA_FACTORY: ("per_device_train_batch_size", 8, "the Trainer's default"),
    ConfigFormat.TORCHTUNE: ("batch_size", None, ""),
}


def conflict(
    r: Reader, first: tuple[str, Any], second: tuple[str, Any], why: str, fix: str
) -> ConfigError:
    """The error for two keys that contradict each other: both, as written, why they
    cannot both hold, and what to write (``fix``)."""
    a, b = first[0], second[0]
    return ConfigError(
        f"{r.format.label} config: {a} = {r.text(*first)} and {b} = {r.text(*second)} "
        f"contradict each other: {why}. {fix}."
    )


def refuse_preference(r: Reader) -> None:
    """Refuse a preference or RL config (LLaMA-Factory's ``stage: dpo``, axolotl's ``rl:``,
    TRL's DPO/GRPO keys, torchtune's ``torchtune.rlhf`` losses) with the guidance the
    words ``dpo`` and ``grpo`` get, and what to change in the config to ask it as SFT."""
    found = {
        ConfigFormat.AXOLOTL: _axolotl,
        ConfigFormat.TRL: _trl,
        ConfigFormat.LLAMA_FACTORY: _llama_factory,
        ConfigFormat.TORCHTUNE: _torchtune,
    }[r.format](r)
    if found is None:
        return
    evidence, rl, remove = found
    guidance = RL if rl else PREFERENCE
    fix = f"{remove}, at the same batch" if rl else f"{remove}, with {_twice_batch(r)}"
    verb = "say" if " and " in evidence else "says"
    raise ConfigError(f"{r.format.label} config: {evidence} {verb} {guidance}: {fix}.")


def _twice_batch(r: Reader) -> str:
    """``per_device_train_batch_size: 4 (twice 2)``, or twice the trainer's default."""
    key, default, whose = _BATCH_KEYS[r.format]
    value = r.value(key)
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return f"{key}: {2 * value} (twice {value})"
    if default is not None and value is None:
        return f"{key}: {2 * default} (twice {default}, {whose})"
    return f"{key} doubled"


def _said(r: Reader, key: str) -> str:
    return f"{key}: {r.text(key, r.value(key))}"


def _axolotl(r: Reader) -> tuple[str, bool, str] | None:
    rl = r.value("rl")
    if rl not in (None, False, "") and str(rl).strip().lower() not in ("none", "null"):
        word = str(rl).strip().lower()
        return _said(r, "rl"), word in _RL_WORDS, f"remove {_said(r, 'rl')}"
    for key in ("reward_model", "process_reward_model"):
        if r.value(key) is True:
            return _said(r, key), False, f"remove {key}"
    return None


def _llama_factory(r: Reader) -> tuple[str, bool, str] | None:
    stage = r.value("stage")
    if stage is None:
        return None
    word = str(stage).strip().lower() if isinstance(stage, str) else ""
    if word in _SFT_STAGES:
        return None
    if word not in ("dpo", "kto", "rm", "ppo", "orpo", "simpo"):
        raise r.bad("stage", stage, "sft or pt (dpo, kto, rm and ppo are not modeled)")
    return _said(r, "stage"), word == "ppo", "set stage: sft"


def _trl(r: Reader) -> tuple[str, bool, str] | None:
    loss = r.value("loss_type")
    loss_word = loss.strip().lower() if isinstance(loss, str) else ""
    rl_keys = [k for k in _TRL_RL_KEYS if r.value(k) is not None]
    keys = [*rl_keys, *(k for k in _TRL_PREFERENCE_KEYS if r.value(k) is not None)]
    if loss_word and loss_word not in _SFT_LOSSES:
        keys.append("loss_type")
    if not keys:
        return None
    rl = bool(rl_keys) or loss_word in _RL_WORDS
    shown = [_said(r, k) for k in keys[:3]]
    evidence = (shown[0] if len(shown) == 1
                else ", ".join(shown[:-1]) + " and " + shown[-1])
    names = ", ".join(keys)
    remove = f"ask with an SFT config (SFTConfig, without {names})"
    prompt, completion = r.value("max_prompt_length"), r.value("max_completion_length")
    if rl and isinstance(prompt, int) and isinstance(completion, int):
        remove += f" and max_length: {prompt + completion} (the prompt and completion)"
    return evidence, rl, remove


def _torchtune(r: Reader) -> tuple[str, bool, str] | None:
    loss = r.value("loss._component_")
    if not isinstance(loss, str) or not _TUNE_RLHF.search(loss.strip()):
        return None
    rl = "ppo" in loss.lower()
    remove = ("use an SFT loss (loss._component_: "
              "torchtune.modules.loss.LinearCrossEntropyLoss)")
    return f"loss._component_: {r.text('loss._component_', loss)}", rl, remove
