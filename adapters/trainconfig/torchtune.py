"""torchtune's recipe configs, key by key (``model._component_`` such as
``torchtune.models.llama3_1.qlora_llama3_1_8b``, ``batch_size``,
``enable_activation_checkpointing``...). ``_component_`` paths are read as names only."""

from __future__ import annotations

import re
from typing import Any, Final

from adapters.trainconfig import mappings as m
from adapters.trainconfig import shared as sh
from adapters.trainconfig.checks import conflict
from adapters.trainconfig.reader import Reader
from engine.choices import Method, Optimizer

_TUNE_NAME = re.compile(r"^(?:q?lora_)?(?P<name>[a-z0-9_]+)$")
BUILDER_EXAMPLE: Final = "a model builder such as torchtune.models.llama3_1.lora_llama3_1_8b"
_LORA_KEYS: Final = ("lora_rank", "lora_alpha", "lora_dropout", "lora_attn_modules",
                     "apply_lora_to_mlp", "apply_lora_to_output", "quantize_base", "use_dora")
"""Arguments of torchtune's ``lora_``/``qlora_`` builders that a full builder lacks."""


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


def read_torchtune(r: Reader) -> None:
    model = r.section("model")
    _builder(r, model.get("_component_"))
    checkpoint = r.value("checkpointer.checkpoint_dir")
    if isinstance(checkpoint, str) and checkpoint.strip("/ "):
        r.model.append([p for p in checkpoint.strip().split("/") if p][-1])
    _quantize_base(r)
    if found := r.first("model.lora_rank"):
        rank = r.whole(*found, "lora_rank")  # bounded when the request is built
        r.take(*found, f"LoRA rank {r.text(*found)}", lora_rank=rank)
    if found := r.first("model.lora_alpha"):
        r.take(*found, "LoRA alpha (scales the update; no effect on memory or time)")
    if found := r.first("model.lora_dropout"):
        value_f = r.number(*found, "lora_dropout", check_range=False)
        r.take(*found, f"LoRA dropout {value_f:g}", lora_dropout=value_f)
    sh.dora(r, "model.use_dora")
    _targets(r, model)
    sh.int_field(r, "seq_len", "sequence", "tokenizer.max_seq_len")
    sh.packing(r, "dataset.packed")
    sh.int_field(r, "micro_batch", "micro-batch", "batch_size")
    sh.int_field(r, "grad_accum", "accumulation", "gradient_accumulation_steps")
    if found := r.first("epochs"):
        epochs = r.number(*found, "epochs")
        r.take(*found, f"{epochs:g} epoch" + ("" if epochs == 1 else "s"), epochs=epochs)
    _optimizer(r)
    if found := r.first("optimizer_in_bwd"):
        m.switch(r, *found, "optimizer step in backward", "optimizer_in_backward")
    if found := r.first("compile"):
        m.switch(r, *found, "torch.compile", "compile")
    if found := r.first("dtype"):
        sh.dtype(r, *found)
    _memory(r)
    if found := r.first("loss._component_"):
        # Both chunked losses keep each chunk's FP32 log-softmax unless compiled: the
        # torchtune profile's loss path (engine.framework_facts, [tt-loss]).
        r.take(*found, "torchtune's chunked cross-entropy")
    if found := r.first("fsdp_cpu_offload"):
        on = r.flag(*found)
        r.take(*found, "FSDP2 with CPU offload" if on else "FSDP2", offload=on)
    if found := r.first("tensor_parallel_dim"):
        m.tensor_parallel(r, *found)
    if found := r.first("data_parallel_replicate_dim"):
        m.replicate(r, *found)


def _builder(r: Reader, component: object) -> None:
    """The model builder: the model's names and the method. A full-model builder beside
    LoRA arguments (``lora_rank``...) is refused: torchtune's full builders take none."""
    if component is None:
        return
    if not isinstance(component, str):
        raise r.bad("model._component_", component, BUILDER_EXAMPLE)
    sh.refuse_control(r, "model._component_", component, BUILDER_EXAMPLE)
    parsed = tune_model_name(component)
    if parsed is None:
        return
    method, names = parsed
    builder = component.strip().rsplit(".", 1)[-1]
    lora_key = next((k for k in _LORA_KEYS if r.value(f"model.{k}") is not None), None)
    if method is Method.FULL and lora_key is not None:
        path = f"model.{lora_key}"
        module, _, _ = component.strip().rpartition(".")
        raise conflict(r, ("model._component_", component), (path, r.value(path)),
                       f"the full-model builder {builder} takes no LoRA arguments",
                       f"Use {module}.lora_{builder} for LoRA, or remove {path} (and the "
                       "other LoRA arguments) for a full fine-tune")
    r.model.extend(names)
    r.take("model._component_", component, f"model builder {builder}: {method.value}",
           method=method)


def _quantize_base(r: Reader) -> None:
    if (found := r.first("model.quantize_base")) is None:
        return
    if r.flag(*found):
        r.take(*found, "base quantized to NF4: QLoRA", method=Method.QLORA)
    elif r.fields.get("method") is Method.QLORA:  # a qlora_ builder, overridden
        r.take(*found, "base not quantized: LoRA", method=Method.LORA)
    else:
        r.take(*found, "base not quantized")


def _optimizer(r: Reader) -> None:
    """``optimizer._component_``, and ``optimizer.fused`` on AdamW (a fused step)."""
    if found := r.first("optimizer._component_"):
        m.optimizer(r, *found)
    if (fused := r.first("optimizer.fused")) is None:
        return
    if r.fields.get("optimizer") is Optimizer.ADAMW and r.flag(*fused):
        r.take(*fused, "fused AdamW step", optimizer=Optimizer.ADAMW_FUSED)
    elif r.flag(*fused):
        r.ignore(fused[0])  # a fused step of an optimizer ftcost keeps as it is
    else:
        r.take(*fused, "unfused step")


def _memory(r: Reader) -> None:
    """Activation checkpointing (``enable_activation_checkpointing``, ``ac_mode``) and
    offloading (``enable_activation_offloading``)."""
    if found := r.first("enable_activation_checkpointing"):
        on = r.flag(*found)
        r.take(*found, "activation checkpointing " + ("on" if on else "off"),
               grad_checkpointing=on)
    if found := r.first("ac_mode"):
        _ac_mode(r, *found)
    if found := r.first("enable_activation_offloading"):
        on = r.flag(*found)
        r.take(*found, "activation offloading " + ("on" if on else "off"),
               activation_offload=on)


def _ac_mode(r: Reader, path: str, value: object) -> None:
    """torchtune's ``ac_mode: selective`` with ``ac_option: op`` is torchtitan's op-level
    selective checkpointing; a layer interval (``ac_option: 2``) is not modeled."""
    option = r.first("ac_option")
    if str(value).strip().lower() != "selective":
        r.take(path, value, f"ac_mode {r.text(path, value)}: full activation checkpointing")
        if option is not None:
            r.ignore(option[0])
        return
    if option is not None and str(option[1]).strip().lower() != "op":
        r.take(path, value, "selective checkpointing every few layers (counted as full)")
        r.take(*option, "a layer interval: checkpointing counted on every layer")
        r.note("ac_option as a layer interval is not modeled; checkpointing is counted on "
               "every layer.")
        return
    if option is not None:
        r.take(*option, "op-level selection")
    r.take(path, value, "op-level selective activation checkpointing",
           grad_checkpointing=True, selective_checkpointing=True)


def _targets(r: Reader, model: dict[str, Any]) -> None:
    """``apply_lora_to_mlp: true`` puts adapters on every linear layer with the attention
    modules listed (counted as all-linear); else ``lora_attn_modules`` says the set."""
    attn = model.get("lora_attn_modules")
    mlp = model.get("apply_lora_to_mlp")
    if mlp is not None and r.flag("model.apply_lora_to_mlp", mlp):
        m.lora_targets(r, "model.apply_lora_to_mlp", "all-linear")
        if attn is not None:
            r.take("model.lora_attn_modules", attn, "with the MLP: counted as all-linear")
        return
    if mlp is not None:
        r.take("model.apply_lora_to_mlp", mlp, "no LoRA on the MLP")
    if attn is not None:
        m.lora_targets(r, "model.lora_attn_modules", attn)
