"""Keys several formats share, mapped to request fields: optimizers, LoRA targets,
precision, attention kernels, DeepSpeed and FSDP, and the Transformers
``TrainingArguments`` that TRL, LLaMA-Factory and (in part) axolotl accept.

Optimizer names are those of ``transformers.training_args.OptimizerNames`` (``optim``),
axolotl's ``optimizer`` (the same names) and torchtune's ``optimizer._component_``
classes. DeepSpeed is read from an inline JSON object (``zero_optimization.stage``,
``offload_optimizer``/``offload_param``); a path is not opened, and its file name's
usual words (``zero3``, ``z3``, ``offload``) are read with a note saying so.
"""

from __future__ import annotations

import json
import re
from typing import Any, Final

from adapters.trainconfig.checks import conflict
from adapters.trainconfig.load import ConfigError
from adapters.trainconfig.reader import Reader, shown
from engine.choices import LoraTargets, Optimizer, Precision, Sharding

_OPTIMIZERS: Final[dict[str, tuple[Optimizer, str | None]]] = {
    **dict.fromkeys(
        ("adamw_torch", "adamw_hf", "adamw", "adamw_torch_xla", "adamw_anyprecision", "adam",
         "torch.optim.adamw", "torch.optim.adam"),
        (Optimizer.ADAMW, None),
    ),
    **dict.fromkeys(
        ("adamw_torch_fused", "adamw_apex_fused", "adamw_torch_npu_fused"),
        (Optimizer.ADAMW_FUSED, None),
    ),
    **dict.fromkeys(
        ("adamw_bnb_8bit", "adamw_8bit", "bnb_adamw_8bit", "adam_8bit",
         "bitsandbytes.optim.adamw8bit", "torchao.optim.adamw8bit",
         "torchao.prototype.low_bit_optim.adamw8bit"),
        (Optimizer.ADAMW_8BIT, None),
    ),
    **dict.fromkeys(
        ("paged_adamw_8bit", "bitsandbytes.optim.pagedadamw8bit"),
        (Optimizer.ADAMW_8BIT, "paged: 8-bit AdamW states that page to host memory only "
                               "under memory pressure, counted on the GPU"),
    ),
    **dict.fromkeys(
        ("paged_adamw_32bit", "paged_adamw", "bitsandbytes.optim.pagedadamw",
         "bitsandbytes.optim.pagedadamw32bit"),
        (Optimizer.ADAMW, "paged: AdamW states that page to host memory only under memory "
                          "pressure, counted on the GPU"),
    ),
    **dict.fromkeys(
        ("adafactor", "transformers.optimization.adafactor"), (Optimizer.ADAFACTOR, None)
    ),
    **dict.fromkeys(("sgd", "torch.optim.sgd"), (Optimizer.SGD, None)),
    **dict.fromkeys(
        ("lion_32bit", "paged_lion_32bit", "lion", "bitsandbytes.optim.lion"),
        (Optimizer.LION, None),
    ),
    **dict.fromkeys(
        ("lion_8bit", "paged_lion_8bit", "bitsandbytes.optim.lion8bit",
         "bitsandbytes.optim.pagedlion8bit"),
        (Optimizer.LION, "8-bit Lion counted at Lion's 32-bit state (an upper bound)"),
    ),
}
"""Optimizer name (lower case) -> the optimizer modelled and a note when approximated."""

_ATTENTION_MODULES: Final = frozenset(
    {"q_proj", "k_proj", "v_proj", "o_proj", "out_proj", "output_proj", "qkv_proj", "wqkv",
     "query_key_value", "c_attn", "c_proj", "query", "key", "value", "dense", "q", "k", "v",
     "o", "self_attn"}
)
_QV_MODULES: Final = frozenset({"q_proj", "v_proj", "q", "v", "query", "value"})
_MLP_MODULES: Final = frozenset(
    {"gate_proj", "up_proj", "down_proj", "w1", "w2", "w3", "fc1", "fc2", "c_fc", "mlp",
     "dense_h_to_4h", "dense_4h_to_h", "gate_up_proj"}
)
_LINEAR_WORDS: Final = frozenset({"all-linear", "all_linear", "all"})
_TARGET_SETS: Final = {
    LoraTargets.MLP: (frozenset({"gate_proj", "up_proj", "down_proj"}),
                      "the MLP (gate, up, down)"),
    LoraTargets.QV: (frozenset({"q_proj", "v_proj"}), "q and v"),
    LoraTargets.ATTENTION: (frozenset({"q_proj", "k_proj", "v_proj", "o_proj"}),
                            "attention (q, k, v, o)"),
}
"""The usual module names of each set counted, for a note when a config names fewer."""


def optimizer(r: Reader, path: str, name: object) -> None:
    """``optim``/``optimizer`` by name, or torchtune's ``optimizer._component_``."""
    key = r.string(path, name, "an optimizer name such as adamw_torch").lower()
    found = _OPTIMIZERS.get(key)
    if found is None:
        r.take(path, name, "not modelled: AdamW with FP32 states is kept")
        r.note(f"{path}: {r.text(path, name)} is not modelled; the estimate keeps AdamW with "
               "FP32 states.")
        return
    choice, note = found
    r.take(path, name, f"optimizer {choice.value}", optimizer=choice)
    if note:
        r.note(f"{path}: {note}.")


def lora_targets(r: Reader, path: str, modules: object) -> None:
    """LoRA target modules: a list, a comma-separated string, or ``all``/``all-linear``."""
    expected = "a list of module names (q_proj, v_proj, ...) or all-linear"
    if isinstance(modules, str):
        names = [m.strip() for m in modules.split(",") if m.strip()]
    elif isinstance(modules, list) and all(isinstance(m, str) for m in modules):
        names = [m.strip() for m in modules if m.strip()]
    else:
        raise r.bad(path, modules, expected)
    if not names:
        raise r.bad(path, modules, expected)
    low = {n.lower() for n in names}
    unknown = sorted(low - _ATTENTION_MODULES - _MLP_MODULES - _LINEAR_WORDS)
    if low & _LINEAR_WORDS:
        target = LoraTargets.ALL_LINEAR
    elif low <= _MLP_MODULES:
        target = LoraTargets.MLP
    elif low <= _QV_MODULES:
        target = LoraTargets.QV
    elif low <= _ATTENTION_MODULES:
        target = LoraTargets.ATTENTION
    else:
        target = LoraTargets.ALL_LINEAR
    written = r.value(path)  # the key's own value (lora_target_linear: true), as written
    r.take(path, written if written is not None else modules, f"LoRA on {target.value}",
           lora_targets=target)
    if (covered := _TARGET_SETS.get(target)) is not None and low < covered[0]:
        r.note(f"{path}: {shown(', '.join(sorted(low)))} is part of {covered[1]}; the "
               f"adapters are counted as on all of it ({target.value}, an upper bound: "
               "they are small).")
    if target is LoraTargets.ALL_LINEAR and unknown and not low & _LINEAR_WORDS:
        verb = "is not a module" if len(unknown) == 1 else "are not modules"
        r.note(f"{path}: {shown(', '.join(unknown))} {verb} ftcost knows; the adapters are "
               "counted as on every linear layer (an upper bound).")
    elif target is LoraTargets.ALL_LINEAR and not low & _LINEAR_WORDS and len(low) < 7:
        r.note(f"{path}: adapters on some MLP layers are counted as on every linear layer.")


def precision(
    r: Reader, bf16: tuple[str, Any] | None, fp16: tuple[str, Any] | None,
    *, off_loads_fp32: bool = False,
) -> None:
    """``bf16``/``fp16`` switches (``auto`` counts as on); both on is refused. Both off:
    FP32 where the loader then loads the weights in FP32 (``off_loads_fp32``: axolotl sets
    ``torch_dtype`` from them); elsewhere (the Trainer) the weights keep the dtype they
    were loaded in: the config's ``torch_dtype`` when it set one, else unsaid (a note,
    BF16 assumed). Neither said: BF16 (axolotl's schema defaults ``bf16`` to ``auto``)."""
    bf16_on = bf16 is not None and r.flag(*bf16)
    fp16_on = fp16 is not None and r.flag(*fp16)
    if bf16 is not None and fp16 is not None and bf16_on and fp16_on:
        raise conflict(r, bf16, fp16, "mixed precision is BF16 or FP16, not both",
                       f"Keep one: set {fp16[0]}: false for BF16, or {bf16[0]}: false for "
                       "FP16")
    if bf16 is not None and bf16_on:
        r.take(*bf16, "BF16", precision=Precision.BF16)
        _off(r, fp16)
    elif fp16 is not None and fp16_on:
        r.take(*fp16, "FP16", precision=Precision.FP16)
        _off(r, bf16)
    elif (said := bf16 or fp16) is not None and off_loads_fp32:
        r.take(*said, "FP32 (bf16 and fp16 off)", precision=Precision.FP32)
        _off(r, fp16 if said is bf16 else None)
    elif (said := bf16 or fp16) is not None:
        loaded = r.fields.get("precision")
        if loaded is not None:
            r.take(*said, f"no mixed precision: the weights train in the dtype they load in "
                   f"({loaded.value.upper()}, {r.sources['precision']})")
        else:
            r.take(*said, "no mixed precision: the weights stay in the dtype they were "
                   "loaded in (BF16 assumed; add `fp32` if they load in FP32)")
        _off(r, fp16 if said is bf16 else None)


def _off(r: Reader, found: tuple[str, Any] | None) -> None:
    """A precision switch the other one overrides or that is off: listed, no field."""
    if found is not None:
        r.take(*found, "on" if r.flag(*found) else "off")


def attention(r: Reader, path: str, value: object) -> None:
    """``attn_implementation`` (``flash_attention_2``, ``sdpa``, ``eager``) or
    LLaMA-Factory's ``flash_attn`` (``fa2``, ``sdpa``, ``auto``, ``disabled``)."""
    if not isinstance(value, str | bool):
        raise r.bad(path, value, "an attention kernel such as flash_attention_2, sdpa or eager")
    low = str(value).strip().lower()
    if low in ("eager", "disabled", "false", "none"):
        r.take(path, value, "no FlashAttention (eager attention keeps the scores)",
               flash_attention=False)
    elif low in ("flash_attention_3", "fa3", "kernels-community/vllm-flash-attn3",
                 "kernels-community/flash-attn3"):
        r.take(path, value, "FlashAttention-3 (the card's native attention kernels)",
               flash_attention=True, native_attention=True)
    elif low in ("flash_attention_2", "fa2"):
        r.take(path, value, "FlashAttention-2 (flash-attn's kernels, not the card's native "
               "ones)", flash_attention=True, native_attention=False)
    elif low in ("sdpa", "auto", "true", "flex_attention"):
        r.take(path, value, "FlashAttention-style attention (no score matrix)",
               flash_attention=True)
    else:
        r.take(path, value, "not a known kernel: FlashAttention assumed")
        r.note(f"{path}: {r.text(path, value)} is not a known attention kernel; "
               "FlashAttention assumed.")


class _RepeatedKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's members, refusing a key given twice with different values (JSON
    would keep the last; the same value twice is harmless)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen and seen[key] != value:
            raise _RepeatedKey(key)
        seen[key] = value
    return seen


def deepspeed(r: Reader, path: str, value: object) -> None:
    """A DeepSpeed config: inline (a mapping, or JSON text) or a file path (not opened)."""
    expected = "a DeepSpeed JSON object or a file path"
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value, object_pairs_hook=_unique_keys)
        except _RepeatedKey as exc:
            raise ConfigError(
                f"{r.format.label} config: {path} sets {shown(exc.key)} twice in its JSON to "
                "different values, so "
                "one of them would be ignored: keep the one you mean and delete the other."
            ) from None
        except (ValueError, RecursionError) as exc:
            raise r.bad(path, value, expected) from exc
    if isinstance(value, dict):
        _deepspeed_object(r, path, value)
        return
    text = r.string(path, value, expected)
    name = text.rsplit("/", 1)[-1].lower()
    match = re.search(r"(?:zero|z|ds_z|stage)[_-]?([0-3])", name)
    if match is None:
        r.take(path, value, "DeepSpeed, its stage unknown: the file is not opened")
        r.note(f"{path}: {r.text(path, value)} is a file ftcost does not open; paste its "
               "JSON inline (deepspeed: {...}) or say zero2/zero3 to include it.")
        return
    _zero(r, path, int(match.group(1)), "offload" in name, value)
    r.note(f"{path}: the ZeRO stage is read from the file name; the file is not opened.")


def _deepspeed_object(r: Reader, path: str, value: dict[str, Any]) -> None:
    """An inline DeepSpeed config: ``zero_optimization`` (``stage``, ``offload_optimizer``
    / ``offload_param`` with ``device``) and AutoTP's ``tensor_parallel.autotp_size``."""
    key = f"{path}.zero_optimization"
    zero = value.get("zero_optimization")
    if zero is None:
        zero = {}
    elif not isinstance(zero, dict):
        raise r.bad(key, zero, 'a mapping such as {"stage": 3}')
    stage_value = zero.get("stage", 0)
    if isinstance(stage_value, bool) or not isinstance(stage_value, int | float | str) or (
        isinstance(stage_value, str) and not stage_value.strip().isdigit()
    ):  # "auto" is the HF integration's placeholder for other keys, never the stage
        raise r.bad(f"{key}.stage", stage_value, "0, 1, 2 or 3, the ZeRO stage")
    stage = r.whole(f"{key}.stage", stage_value)
    on: dict[str, bool] = {}
    for part in ("offload_optimizer", "offload_param"):
        offload = zero.get(part)
        if offload is not None and not isinstance(offload, dict):
            raise r.bad(f"{key}.{part}", offload, 'a mapping such as {"device": "cpu"}')
        device = offload.get("device", "none") if offload else "none"
        on[part] = isinstance(device, str) and device.strip().lower() in ("cpu", "nvme")
    offload_any = on["offload_optimizer"] or on["offload_param"]
    _zero(r, path, stage, offload_any, value, weights=on["offload_param"])
    autotp = value.get("tensor_parallel")
    if isinstance(autotp, dict) and autotp.get("autotp_size") is not None:
        # DeepSpeed's AutoTP training: "tensor_parallel": {"autotp_size": 4}
        tensor_parallel(r, f"{path}.tensor_parallel.autotp_size", autotp["autotp_size"])


def _zero(
    r: Reader, path: str, stage: int, offload: bool, value: object, weights: bool = True
) -> None:
    """ZeRO ``stage``, with CPU offload of the optimizer and, when ``weights``, of the
    parameters too (``offload_param``; a file name's ``offload`` is read as both)."""
    sharding = {0: Sharding.NONE, 1: Sharding.ZERO1, 2: Sharding.ZERO2, 3: Sharding.ZERO3}.get(
        stage
    )
    if sharding is None:
        raise r.bad(f"{path}.zero_optimization.stage", stage, "0, 1, 2 or 3")
    fields: dict[str, Any] = {"sharding": sharding}
    meaning = f"DeepSpeed ZeRO-{stage}" if stage else "DeepSpeed without ZeRO"
    if offload:
        fields["offload"] = True
        fields["offload_weights"] = weights
        meaning += " with CPU offload" + ("" if weights else " of the optimizer only")
    r.take(path, value, meaning, **fields)


_FSDP_WORDS: Final = frozenset(
    {"full_shard", "shard_grad_op", "no_shard", "hybrid_shard", "hybrid_shard_zero2",
     "_hybrid_shard_zero2", "offload", "auto_wrap", "true"}
)
"""``fsdp`` words: Transformers' ``FSDPOption`` values (and ``true``, axolotl's switch)."""
_FSDP_OFF: Final = frozenset({"false", "", "none", "no"})


def fsdp(
    r: Reader, path: str, value: object, config: dict[str, Any], config_path: str,
    *, implied: bool = False,
) -> None:
    """Transformers/axolotl ``fsdp`` (``full_shard auto_wrap``, a list, or true) with
    ``fsdp_config`` (``fsdp_version``, ``offload_params``/``fsdp_offload_params``,
    ``sharding_strategy``). Strategy numbers are torch's ``ShardingStrategy`` values.
    ``implied``: ``path`` is axolotl's FSDP2 form (``fsdp_version: 2`` or an
    ``fsdp_config`` section, no ``fsdp`` list), a full shard unless its settings say
    otherwise. Beside a DeepSpeed config it is refused: two ways to shard."""
    low = {"true"} if implied else _fsdp_words(r, path, value)
    if not low or low <= _FSDP_OFF:
        r.take(path, value, "FSDP off")
        return
    if (ds := r.first("deepspeed")) is not None:
        raise conflict(r, ds, (path, value), "DeepSpeed and FSDP are two ways to shard the "
                       "model, and a run uses one", f"Keep one: remove {ds[0]} or {path}")
    version = config.get("fsdp_version", config.get("version", 1))
    strategy = config.get("fsdp_sharding_strategy", config.get("sharding_strategy", ""))
    strategy = str(strategy).strip().upper() if isinstance(strategy, str | int) else ""
    if not strategy and not _reshards(r, config, config_path):
        strategy = "SHARD_GRAD_OP"  # FSDP2's reshard_after_forward: false
    offload = "offload" in low or _offload_params(r, config, config_path)
    sharding, meaning = _fsdp_sharding(r, path, low, strategy, str(version) == "2")
    fields: dict[str, Any] = {"sharding": sharding}
    if offload:
        fields["offload"] = True
        meaning += " with CPU offload"
    r.take(path, value, meaning, **fields)
    if r.section(config_path) and path != config_path:
        r.take(config_path, r.value(config_path), f"read with {path}")


def _fsdp_words(r: Reader, path: str, value: object) -> set[str]:
    """The ``fsdp`` option's words, lower case (a string, a list, or a switch)."""
    expected = ("FSDP options (full_shard, shard_grad_op, hybrid_shard, no_shard, offload, "
                "auto_wrap), as a string or a list, or true/false")
    if isinstance(value, bool):
        words = [str(value)]
    elif isinstance(value, str):
        words = value.replace(",", " ").split()
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = [w for item in value for w in item.replace(",", " ").split()]
    else:
        raise r.bad(path, value, expected)
    low = {w.strip().lower() for w in words}
    if not low <= _FSDP_WORDS | _FSDP_OFF:
        raise r.bad(path, value, expected)
    return low


def _reshards(r: Reader, config: dict[str, Any], config_path: str) -> bool:
    """FSDP2's ``reshard_after_forward`` (default true), a switch read as every other is."""
    for key in ("fsdp_reshard_after_forward", "reshard_after_forward"):
        if config.get(key) is not None:
            return r.flag(f"{config_path}.{key}", config[key])
    return True


def _offload_params(r: Reader, config: dict[str, Any], config_path: str) -> bool:
    """``fsdp_config``'s ``fsdp_offload_params`` / ``offload_params``, a switch read as
    every other is (``"true"`` as a string too)."""
    for key in ("fsdp_offload_params", "offload_params"):
        if config.get(key) is not None:
            return r.flag(f"{config_path}.{key}", config[key])
    return False


def _fsdp_sharding(
    r: Reader, path: str, low: set[str], strategy: str, two: bool
) -> tuple[Sharding, str]:
    """The sharding an FSDP option or strategy means, and how the reply words it."""
    if "shard_grad_op" in low or strategy in ("SHARD_GRAD_OP", "2"):
        return Sharding.ZERO2, "FSDP SHARD_GRAD_OP (as ZeRO-2)"
    if low & {"hybrid_shard_zero2", "_hybrid_shard_zero2"} or strategy in (
        "_HYBRID_SHARD_ZERO2", "HYBRID_SHARD_ZERO2", "5"
    ):
        r.note(f"{path}: _HYBRID_SHARD_ZERO2 shards gradients and states within a node only; "
               "the estimate shards them over all the cards (ZeRO-2), less memory per card.")
        return Sharding.ZERO2, "FSDP _HYBRID_SHARD_ZERO2 (as ZeRO-2)"
    if "hybrid_shard" in low or strategy in ("HYBRID_SHARD", "4"):
        return Sharding.HSDP, "FSDP HYBRID_SHARD (HSDP: sharded within a node)"
    if "no_shard" in low or strategy in ("NO_SHARD", "3"):
        return Sharding.NONE, "FSDP NO_SHARD (as DDP: every card holds it all)"
    # FSDP1 and FSDP2 alike: the framework's own FSDP, not DeepSpeed (whose facts the
    # hf profile attaches to the zero stages).
    return Sharding.FSDP, "FSDP2 full shard" if two else "FSDP full shard"


def max_steps(r: Reader, path: str, value: object) -> None:
    """``max_steps`` (the Trainer's, axolotl's): above 0, the run's length in optimizer
    steps; 0 or less (HF's default -1) is no limit, and the epochs count the run."""
    if r.whole(path, value, "steps") > 0:
        steps = r.integer(path, value, "steps")
        r.take(path, value, f"{steps:,} steps", steps=steps)
        r.note(f"max_steps {steps}: the run is counted by its steps when the card count "
               "is given (`4x a100`); otherwise give `N tokens` (or samples of a length) "
               "for time and cost.")
    else:
        r.take(path, value, "no step limit: the epochs count the run")


def switch(r: Reader, path: str, value: object, label: str, field: str) -> None:
    """A true/false key that sets one request field (``auto`` counts as on)."""
    on = r.flag(path, value)
    r.take(path, value, f"{label} {'on' if on else 'off'}", **{field: on})


def tensor_parallel(r: Reader, path: str, value: object) -> None:
    """A tensor-parallel degree (axolotl's ``tensor_parallel_size``, torchtune's
    ``tensor_parallel_dim``, DeepSpeed's ``tensor_parallel.autotp_size``); 1 is none.
    Checked against the card count when the request is built
    (:func:`adapters.trainconfig.build.apply_config`)."""
    degree = r.integer(path, value, "tensor_parallel")
    meaning = f"tensor parallel over {degree} cards" if degree > 1 else "no tensor parallelism"
    r.take(path, value, meaning, tensor_parallel=degree)


def context_parallel(r: Reader, path: str, value: object) -> None:
    """A context-parallel degree (axolotl's ``context_parallel_size`` and its older
    ``sequence_parallel_degree``, ring-flash-attn); 1 is none. Checked against the card
    count when the request is built (:func:`adapters.trainconfig.build.apply_config`)."""
    degree = r.integer(path, value, "context_parallel")
    meaning = (f"context parallel: each sequence split over {degree} cards" if degree > 1
               else "no context parallelism")
    r.take(path, value, meaning, context_parallel=degree)


def replicate(r: Reader, path: str, value: object) -> None:
    """A data-parallel replicate degree (axolotl's ``dp_replicate_size``, torchtune's
    ``data_parallel_replicate_dim``): above 1, copies of a sharded group, FSDP's
    HYBRID_SHARD (``hsdp``), the replicas named as the run's nodes so that each group
    holds count / degree cards, as the query's ``dp-replicate`` reads. Read after
    ``fsdp``, whose full shard it turns hybrid."""
    degree = r.integer(path, value, "nodes")  # replicas: bounded as a node count
    if degree <= 1:
        r.take(path, value, "no replicas")
        return
    if (source := r.sources.get("sharding")) is not None and r.fields["sharding"] in (
        Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3
    ):
        raise ConfigError(
            f"{r.format.label} config: {path} {degree} asks for HSDP replicas, and "
            f"{source} for {r.fields['sharding'].value}: they are two ways to shard. Keep "
            f"one (remove {path} or {source})."
        )
    r.take(path, value, f"HSDP: {degree} replicas of a sharded group",
           sharding=Sharding.HSDP, nodes=degree)
    r.note(f"{path} {degree}: HSDP over {degree} replicas, each shard group holding the "
           f"cards over {degree}.")
