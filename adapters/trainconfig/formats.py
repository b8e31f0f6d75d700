"""The four config formats: how each is recognized and what each key means.

Key names follow each project's documentation: axolotl's config reference
(``base_model``, ``adapter``, ``sequence_len``, ``sample_packing``, ``micro_batch_size``,
``lora_target_linear``...), TRL's ``SFTConfig``/``ModelConfig`` and Transformers'
``TrainingArguments`` (``model_name_or_path``, ``per_device_train_batch_size``,
``max_length``/``max_seq_length``, ``packing``, ``use_peft``, ``load_in_4bit``...),
torchtune's recipe configs (``model._component_`` such as
``torchtune.models.llama3_1.qlora_llama3_1_8b``, ``batch_size``,
``enable_activation_checkpointing``...) and LLaMA-Factory's (``finetuning_type``,
``quantization_bit``, ``cutoff_len``, ``lora_target``...).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from adapters.trainconfig import mappings as m
from adapters.trainconfig.reader import ConfigFormat, ConfigRead, Reader
from engine.request import Framework, Method, Optimizer, Precision

DATASET_NOTE = (
    "The datasets are named but not counted: add `N tokens` (or `N samples of L tokens`) "
    "for time and cost."
)

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
    messages (:class:`adapters.trainconfig.load.Document`)."""
    readers = {
        ConfigFormat.AXOLOTL: _axolotl,
        ConfigFormat.TRL: _trl,
        ConfigFormat.TORCHTUNE: _torchtune,
        ConfigFormat.LLAMA_FACTORY: _llama_factory,
    }
    framework = Framework.TORCHTUNE if fmt is ConfigFormat.TORCHTUNE else Framework.HF
    r = Reader(doc, fmt, framework, written)
    readers[fmt](r)
    if r.first("datasets", "dataset", "dataset_name", "train_file"):
        r.note(DATASET_NOTE)
    return r.result()


# --------------------------------------------------------------------------------------- #
# shared by several formats


def _model(r: Reader, *paths: str) -> None:
    if found := r.first(*paths):
        path, value = found
        if not isinstance(value, str) or not value.strip():
            raise r.bad(path, value, "a model name or Hugging Face id")
        r.model.append(value.strip())
        r.take(path, value, "model")


def _lora(r: Reader, rank: str, alpha: str, dropout: str) -> None:
    # Rank and dropout are checked whole/finite here and against the request's bounds
    # when the request is built (build.apply_config), like every field the words leave.
    if found := r.first(rank):
        value = r.whole(*found, "lora_rank")
        r.take(*found, f"LoRA rank {r.text(*found)}", lora_rank=value)
    if found := r.first(alpha):
        r.take(*found, "LoRA alpha (scales the update; no effect on memory or time)")
    if found := r.first(dropout):
        value_f = r.number(*found, "lora_dropout", check_range=False)
        r.take(*found, f"LoRA dropout {value_f:g}", lora_dropout=value_f)
    _dora(r, "use_dora", "peft_use_dora")


def _dora(r: Reader, *paths: str) -> None:
    """DoRA on the adapters (PEFT's ``use_dora``, axolotl's ``peft_use_dora``,
    torchtune's ``use_dora``)."""
    if found := r.first(*paths):
        on = r.flag(*found)
        r.take(*found, "DoRA (weight-decomposed LoRA)" if on else "plain LoRA", dora=on)


def _int_field(r: Reader, field: str, label: str, *paths: str) -> None:
    if found := r.first(*paths):
        value = r.integer(*found, field)
        r.take(*found, f"{label} {value:,}", **{field: value})


def _epochs(epochs: float) -> str:
    return f"{epochs:g} epoch" + ("" if epochs == 1 else "s")


def _packing(r: Reader, *paths: str) -> None:
    if found := r.first(*paths):
        on = r.flag(*found)
        r.take(*found, "packing " + ("on" if on else "off"), packing=on)


def _method(r: Reader, method: Method, path: str, value: object) -> None:
    r.take(path, value, {Method.FULL: "full fine-tune", Method.LORA: "LoRA",
                         Method.QLORA: "QLoRA (4-bit base)"}[method], method=method)


def _word(r: Reader, found: tuple[str, Any] | None, expected: str) -> str:
    """A one-word choice (``adapter: qlora``), lower case; empty when absent or null."""
    if found is None:
        return ""
    path, value = found
    if not isinstance(value, str):
        raise r.bad(path, value, expected)
    return value.strip().lower()


_QUANT_BITS: Final = (2, 3, 4, 5, 6, 8)
"""LLaMA-Factory's ``quantization_bit`` choices (bitsandbytes 4/8, HQQ and EETQ others)."""


def _bits(r: Reader, path: str, value: object) -> int:
    bits = r.whole(path, value)
    if bits not in _QUANT_BITS:
        raise r.bad(path, value, "one of " + ", ".join(map(str, _QUANT_BITS[:-1]))
                    + f" or {_QUANT_BITS[-1]}")
    return bits


# --------------------------------------------------------------------------------------- #
# the formats


def _axolotl(r: Reader) -> None:
    _model(r, "base_model")
    adapter = r.first("adapter")
    four_bit = r.first("load_in_4bit")
    eight_bit = r.first("load_in_8bit")
    kind = _word(r, adapter, "lora, qlora or none")
    if kind == "qlora" or (kind == "lora" and four_bit and r.flag(*four_bit)):
        _method(r, Method.QLORA, "adapter", kind)
    elif kind == "lora":
        _method(r, Method.LORA, "adapter", kind)
        if eight_bit and r.flag(*eight_bit):
            r.note("load_in_8bit: an 8-bit base is not modelled; LoRA on a 16-bit base is "
                   "estimated (an upper bound on memory).")
    elif adapter is None or kind in ("", "none", "null"):
        _method(r, Method.FULL, "adapter", "none (full fine-tune)")
    else:
        raise r.bad("adapter", adapter[1], "lora, qlora or none")
    for flag in (four_bit, eight_bit):
        if flag:
            r.used(flag[0])
    if (gptq := r.first("gptq")) and r.flag(*gptq) and kind in ("lora", "qlora"):
        # axolotl's `gptq: true` loads a GPTQ checkpoint; LoRA on it is QLoRA on that base.
        r.take(*gptq, "QLoRA on a GPTQ 4-bit base", method=Method.QLORA, gptq=True)
    elif gptq:
        r.used(gptq[0])
    _lora(r, "lora_r", "lora_alpha", "lora_dropout")
    if (linear := r.first("lora_target_linear")) and r.flag(*linear):
        m.lora_targets(r, "lora_target_linear", "all-linear")
    elif found := r.first("lora_target_modules"):
        m.lora_targets(r, *found)
    _int_field(r, "seq_len", "sequence", "sequence_len")
    _packing(r, "sample_packing")
    _int_field(r, "micro_batch", "micro-batch", "micro_batch_size")
    _int_field(r, "grad_accum", "accumulation", "gradient_accumulation_steps")
    if found := r.first("num_epochs"):
        epochs = r.number(*found, "epochs")
        r.take(*found, _epochs(epochs), epochs=epochs)
    if found := r.first("max_steps"):
        m.max_steps(r, *found)
    if found := r.first("optimizer"):
        m.optimizer(r, *found)
    m.precision(r, r.first("bf16"), r.first("fp16"), off_loads_fp32=True)
    if found := r.first("gradient_checkpointing"):
        _axolotl_checkpointing(r, *found)
    if found := r.first("torch_compile"):
        m.switch(r, *found, "torch.compile", "compile")
    _axolotl_attention(r)
    _axolotl_loss(r)
    if found := r.first("deepspeed"):
        m.deepspeed(r, *found)
    if found := r.first("tensor_parallel_size"):
        m.tensor_parallel(r, *found)
    if found := r.first("context_parallel_size", "sequence_parallel_degree"):
        m.context_parallel(r, *found)
    config = {**r.section("fsdp_config")}
    version = r.first("fsdp_version")
    if version is not None:
        config.setdefault("fsdp_version", version[1])
    # FSDP2's form has no `fsdp` list: `fsdp_version: 2` and an `fsdp_config` section
    found = r.first("fsdp") or (("fsdp_config", True) if config else None)
    if found is not None:
        if version is not None:
            r.used("fsdp_version")
        m.fsdp(r, found[0], found[1], config, "fsdp_config")
    if found := r.first("dp_replicate_size"):
        m.replicate(r, *found)


def _axolotl_checkpointing(r: Reader, path: str, value: object) -> None:
    low = str(value).strip().lower()
    if low in ("offload", "unsloth"):
        r.take(path, value, "gradient checkpointing with activations offloaded to the CPU",
               grad_checkpointing=True, activation_offload=True)
        return
    on = r.flag(path, value)
    r.take(path, value, "gradient checkpointing " + ("on" if on else "off"),
           grad_checkpointing=on)


def _axolotl_attention(r: Reader) -> None:
    for key in ("flash_attention", "sdp_attention", "xformers_attention", "flex_attention"):
        if (found := r.first(key)) and r.flag(*found):
            r.take(*found, f"{key.replace('_', ' ')} (no score matrix)", flash_attention=True)
            return
    if (found := r.first("eager_attention")) and r.flag(*found):
        r.take(*found, "eager attention (keeps the scores)", flash_attention=False)
        return
    for key in ("flash_attention", "sdp_attention", "xformers_attention", "flex_attention"):
        if found := r.first(key):  # off: axolotl leaves transformers' default, SDPA
            r.take(*found, "off: transformers' default attention (SDPA, no score matrix)")


def _axolotl_loss(r: Reader) -> None:
    plugins = r.value("plugins")
    names = [str(p).lower() for p in plugins] if isinstance(plugins, list) else []
    liger = any("liger" in p for p in names)
    cce = any("cut_cross_entropy" in p for p in names)
    for key, on in (("liger_fused_linear_cross_entropy", liger), ("cut_cross_entropy", cce)):
        if (found := r.first(key)) and on and r.flag(*found):
            r.take(*found, "fused cross-entropy (no logits kept)", fused_ce=True)
            r.used("plugins")
            return
        if found:
            r.used(found[0])
    if names:
        r.used("plugins")


def _trl(r: Reader) -> None:
    _model(r, "model_name_or_path", "model_id", "model")
    peft = r.first("use_peft")
    four_bit = r.first("load_in_4bit")
    if peft and r.flag(*peft):
        if four_bit and r.flag(*four_bit):
            _method(r, Method.QLORA, "load_in_4bit", four_bit[1])
            r.used("use_peft")
        else:
            _method(r, Method.LORA, "use_peft", peft[1])
    elif peft is not None:
        _method(r, Method.FULL, "use_peft", peft[1])
    if four_bit:
        r.used(four_bit[0])
    if (eight := r.first("load_in_8bit")) and r.flag(*eight):
        r.used(eight[0])
        r.note("load_in_8bit: an 8-bit base is not modelled; a 16-bit base is estimated.")
    if found := r.first("use_bnb_nested_quant"):
        on = r.flag(*found)
        r.take(*found, "double quantization " + ("on" if on else "off"), double_quant=on)
    _lora(r, "lora_r", "lora_alpha", "lora_dropout")
    if found := r.first("lora_target_modules"):
        m.lora_targets(r, *found)
    _int_field(r, "seq_len", "sequence", "max_length", "max_seq_length")
    _packing(r, "packing")
    if found := r.first("use_liger"):
        on = r.flag(*found)
        r.take(*found, "Liger fused cross-entropy" if on else "no Liger kernels", fused_ce=on)
    if found := r.first("attn_implementation"):
        m.attention(r, *found)
    if found := r.first("torch_dtype", "dtype"):
        _dtype(r, *found)
    m.training_arguments(r)
    if "method" not in r.fields:
        _method(r, Method.FULL, "use_peft", "absent (full fine-tune)")


def _dtype(r: Reader, path: str, value: object) -> None:
    low = str(value).strip().lower().removeprefix("torch.") if isinstance(value, str) else ""
    choice = {"bfloat16": Precision.BF16, "bf16": Precision.BF16, "float16": Precision.FP16,
              "fp16": Precision.FP16, "float32": Precision.FP32, "fp32": Precision.FP32}.get(low)
    if choice is None:
        r.used(path)
        if low != "auto":  # auto: the checkpoint's own dtype
            r.note(f"{path}: {r.text(path, value)} is not a dtype ftcost reads (bfloat16, "
                   "float16, float32); the precision is left as the rest of the config "
                   "sets it.")
        return
    r.take(path, value, f"weights in {choice.value.upper()}", precision=choice)


def _llama_factory(r: Reader) -> None:
    _model(r, "model_name_or_path")
    kind = r.first("finetuning_type")
    bits = r.first("quantization_bit")
    ftype = _word(r, kind, "lora, full or freeze") or "lora"  # LLaMA-Factory's default
    quant = _bits(r, *bits) if bits else None
    if ftype == "lora" and quant == 4:
        _method(r, Method.QLORA, "quantization_bit", 4)
        if kind:
            r.used("finetuning_type")
    elif ftype == "lora":
        _method(r, Method.LORA, "finetuning_type", kind[1] if kind else "lora (default)")
        if quant is not None:
            r.used("quantization_bit")
            r.note(f"quantization_bit: a {quant}-bit base is not modelled; a 16-bit base is "
                   "estimated (an upper bound on memory).")
    elif ftype in ("full", "freeze"):
        _method(r, Method.FULL, "finetuning_type", ftype)
        if ftype == "freeze":
            r.note("finetuning_type freeze trains only some layers: estimated as a full "
                   "fine-tune (an upper bound).")
    else:
        raise r.bad("finetuning_type", ftype, "lora, full or freeze")
    _lora(r, "lora_rank", "lora_alpha", "lora_dropout")
    if found := r.first("lora_target"):
        m.lora_targets(r, *found)
    _int_field(r, "seq_len", "sequence", "cutoff_len")
    _packing(r, "packing", "neat_packing")
    if found := r.first("flash_attn"):
        m.attention(r, *found)
    if found := r.first("enable_liger_kernel"):
        on = r.flag(*found)
        r.take(*found, "Liger fused cross-entropy" if on else "no Liger kernels", fused_ce=on)
    if (found := r.first("use_unsloth")) and r.flag(*found):
        r.framework = Framework.UNSLOTH
        r.take(*found, "Unsloth's kernels and loss")
    if found := r.first("disable_gradient_checkpointing"):
        off = r.flag(*found)
        r.take(*found, "gradient checkpointing " + ("off" if off else "on"),
               grad_checkpointing=not off)
    m.training_arguments(r)


_TUNE_NAME = re.compile(r"^(?:q?lora_)?(?P<name>[a-z0-9_]+)$")


def tune_model_name(component: str) -> tuple[Method, tuple[str, ...]] | None:
    """``torchtune.models.llama3_1.qlora_llama3_1_8b`` -> (QLoRA, names): the method from
    the builder's prefix and the model names it may mean, most likely first, for the
    catalog to pick the one it reads. An underscore between digits is a version dot
    (``llama3_1``, ``qwen2_5``), a size's decimal point (``qwen3_0_6b``: 0.6B) or neither
    (``llama3_8b``): the names are each reading, in that order."""
    builder = component.strip().rsplit(".", 1)[-1].lower()
    match = _TUNE_NAME.match(builder)
    if match is None:
        return None
    method = (
        Method.QLORA if builder.startswith("qlora_")
        else Method.LORA if builder.startswith("lora_") else Method.FULL
    )
    name = match.group("name")
    readings = (
        re.sub(r"(\d)_(\d)", r"\1.\2", name),  # versions and sizes: llama3.1_8b, qwen2.5_0.5b
        re.sub(r"(\d)_(\d+b)(?=_|$)", r"\1.\2", name),  # the size only: qwen3_0.6b
        name,  # neither: llama3_8b
    )
    return method, tuple(dict.fromkeys(n.replace("_", "-") for n in readings))


def _torchtune(r: Reader) -> None:
    model = r.section("model")
    component = model.get("_component_")
    if component is not None and not isinstance(component, str):
        raise r.bad("model._component_", component,
                    "a model builder such as torchtune.models.llama3_1.lora_llama3_1_8b")
    parsed = tune_model_name(component) if component else None
    if component and parsed is not None:
        method, names = parsed
        r.model.extend(names)
        builder = component.strip().rsplit(".", 1)[-1]
        r.take("model._component_", component, f"model builder {builder}: {method.value}",
               method=method)
    checkpoint = r.value("checkpointer.checkpoint_dir")
    if isinstance(checkpoint, str) and checkpoint.strip("/ "):
        r.model.append([p for p in checkpoint.strip().split("/") if p][-1])
    if (found := r.first("model.quantize_base")) and r.flag(*found):
        r.take(*found, "base quantized to NF4: QLoRA", method=Method.QLORA)
    elif found and r.fields.get("method") is Method.QLORA:  # a qlora_ builder, overridden
        r.take(*found, "base not quantized: LoRA", method=Method.LORA)
    elif found:
        r.used(found[0])
    if found := r.first("model.lora_rank"):
        rank = r.whole(*found, "lora_rank")  # bounded when the request is built, as _lora's
        r.take(*found, f"LoRA rank {r.text(*found)}", lora_rank=rank)
    if found := r.first("model.lora_alpha"):
        r.take(*found, "LoRA alpha (scales the update; no effect on memory or time)")
    if found := r.first("model.lora_dropout"):
        value_f = r.number(*found, "lora_dropout", check_range=False)
        r.take(*found, f"LoRA dropout {value_f:g}", lora_dropout=value_f)
    _dora(r, "model.use_dora")
    _torchtune_targets(r, model)
    _int_field(r, "seq_len", "sequence", "tokenizer.max_seq_len")
    _packing(r, "dataset.packed")
    _int_field(r, "micro_batch", "micro-batch", "batch_size")
    _int_field(r, "grad_accum", "accumulation", "gradient_accumulation_steps")
    if found := r.first("epochs"):
        epochs = r.number(*found, "epochs")
        r.take(*found, _epochs(epochs), epochs=epochs)
    if found := r.first("optimizer._component_"):
        m.optimizer(r, *found)
        if (fused := r.first("optimizer.fused")) and r.flag(*fused) and (
            r.fields.get("optimizer") is Optimizer.ADAMW
        ):
            r.take(*fused, "fused AdamW step", optimizer=Optimizer.ADAMW_FUSED)
    if found := r.first("optimizer_in_bwd"):
        m.switch(r, *found, "optimizer step in backward", "optimizer_in_backward")
    if found := r.first("compile"):
        m.switch(r, *found, "torch.compile", "compile")
    if found := r.first("dtype"):
        _dtype(r, *found)
    if found := r.first("enable_activation_checkpointing"):
        on = r.flag(*found)
        r.take(*found, "activation checkpointing " + ("on" if on else "off"),
               grad_checkpointing=on)
    if found := r.first("ac_mode"):
        _torchtune_ac_mode(r, *found)
    if found := r.first("enable_activation_offloading"):
        on = r.flag(*found)
        r.take(*found, "activation offloading " + ("on" if on else "off"),
               activation_offload=on)
    if found := r.first("loss._component_"):
        if "linearcrossentropy" in str(found[1]).lower().replace("_", ""):
            r.take(*found, "fused linear cross-entropy (no logits kept)", fused_ce=True)
        else:
            r.take(*found, "torchtune's chunked cross-entropy")
    if found := r.first("fsdp_cpu_offload"):
        on = r.flag(*found)
        r.take(*found, "FSDP2 with CPU offload" if on else "FSDP2", offload=on)
    if found := r.first("tensor_parallel_dim"):
        m.tensor_parallel(r, *found)
    if found := r.first("data_parallel_replicate_dim"):
        m.replicate(r, *found)


def _torchtune_ac_mode(r: Reader, path: str, value: object) -> None:
    """torchtune's ``ac_mode: selective`` with ``ac_option: op`` is torchtitan's op-level
    selective checkpointing; a layer interval (``ac_option: 2``) is not modeled."""
    option = r.value("ac_option")
    if str(value).strip().lower() != "selective":
        r.take(path, value, f"ac_mode {r.text(path, value)}: full activation checkpointing")
        return
    if option is not None and str(option).strip().lower() != "op":
        r.take(path, value, "selective checkpointing every few layers (counted as full)")
        r.used("ac_option")
        r.note("ac_option as a layer interval is not modeled; checkpointing is counted on "
               "every layer.")
        return
    if option is not None:
        r.used("ac_option")
    r.take(path, value, "op-level selective activation checkpointing",
           grad_checkpointing=True, selective_checkpointing=True)


def _torchtune_targets(r: Reader, model: dict[str, Any]) -> None:
    attn = model.get("lora_attn_modules")
    mlp = model.get("apply_lora_to_mlp")
    if attn is None and mlp is None:
        return
    if mlp is not None and r.flag("model.apply_lora_to_mlp", mlp):
        m.lora_targets(r, "model.apply_lora_to_mlp", "all-linear")
        r.used("model")
        return
    if isinstance(attn, list):
        m.lora_targets(r, "model.lora_attn_modules", attn)
