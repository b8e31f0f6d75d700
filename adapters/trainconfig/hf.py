"""The Hugging Face configs: TRL/Transformers (``TrainingArguments``, ``SFTConfig`` with
TRL's ``ModelConfig``) and LLaMA-Factory's YAML, which takes the same
``TrainingArguments`` keys."""

from __future__ import annotations

from typing import Any

from adapters.trainconfig import defaults
from adapters.trainconfig import mappings as m
from adapters.trainconfig import shared as sh
from adapters.trainconfig.checks import conflict
from adapters.trainconfig.reader import Reader
from engine.choices import Framework, Method


def training_arguments(r: Reader) -> None:
    """The Transformers ``TrainingArguments`` keys the estimate uses."""
    sh.int_field(r, "micro_batch", "micro-batch", "per_device_train_batch_size")
    sh.int_field(r, "grad_accum", "accumulation", "gradient_accumulation_steps")
    sh.run_length(r, "num_train_epochs", "max_steps")
    if found := r.first("optim"):
        m.optimizer(r, *found)
    m.precision(r, r.first("bf16"), r.first("fp16"))
    if found := r.first("gradient_checkpointing"):
        m.switch(r, *found, "gradient checkpointing", "grad_checkpointing")
    if found := r.first("torch_compile"):
        m.switch(r, *found, "torch.compile", "compile")
    sh.liger(r, "use_liger_kernel")
    if found := r.first("deepspeed"):
        m.deepspeed(r, *found)
    if found := r.first("fsdp"):
        m.fsdp(r, *found, r.section("fsdp_config"), "fsdp_config")


def activation_offloading(r: Reader, path: str, value: object) -> None:
    """TRL's ``activation_offloading`` and axolotl's: the activations kept for backward
    in host memory. Modelled for checkpointed layer inputs only, so with checkpointing
    off it is counted as no offload (a note says so)."""
    on = r.flag(path, value)
    if on and r.fields.get("grad_checkpointing") is False:
        r.take(path, value, "not counted: offloading without gradient checkpointing is "
               "not modelled")
        r.note(f"{path}: activation offloading is modelled for checkpointed layers; with "
               "gradient checkpointing off it is counted as no offload (an upper bound on "
               "memory). Add `ckpt` to count both.")
        return
    r.take(path, value, "activations offloaded to the CPU" if on else "activation offload "
           "off", activation_offload=on)


def read_trl(r: Reader) -> None:
    sh.model(r, "model_name_or_path", "model_id", "model")
    _trl_method(r)
    if found := r.first("use_bnb_nested_quant"):
        on = r.flag(*found)
        r.take(*found, "double quantization " + ("on" if on else "off"), double_quant=on)
    sh.lora(r, "lora_r", "lora_alpha", "lora_dropout")
    if found := r.first("lora_target_modules"):
        m.lora_targets(r, *found)
    sh.sequence(r, "max_length", "max_seq_length")
    sh.packing(r, "packing")
    sh.liger(r, "use_liger")
    if found := r.first("attn_implementation"):
        m.attention(r, *found)
    if found := r.first("torch_dtype", "dtype"):
        sh.dtype(r, *found)
    training_arguments(r)
    if found := r.first("activation_offloading"):
        activation_offloading(r, *found)
    defaults.trl(r)


def _trl_method(r: Reader) -> None:
    """``use_peft`` with ``load_in_4bit`` / ``load_in_8bit`` (TRL's ``ModelConfig``: the
    quantized bases "work only with LoRA"). A quantized base without PEFT, or both bit
    widths, is refused."""
    peft, four, eight = r.first("use_peft"), r.first("load_in_4bit"), r.first("load_in_8bit")
    peft_on = peft is not None and r.flag(*peft)
    four_on = four is not None and r.flag(*four)
    eight_on = eight is not None and r.flag(*eight)
    if four is not None and eight is not None and four_on and eight_on:
        raise conflict(r, four, eight, "a base is loaded in 4 or 8 bits, not both",
                       f"Keep one: {eight[0]}: false for QLoRA")
    quantized = four if four_on else eight if eight_on else None
    if quantized is not None and not peft_on:
        said = peft if peft is not None else ("use_peft", "(unset)")
        raise conflict(r, quantized, said, "a quantized base trains only through "
                       "adapters, and without use_peft the whole model is fine-tuned",
                       f"Set use_peft: true for LoRA over it, or {quantized[0]}: false for a "
                       "full fine-tune")
    if peft is None or not peft_on:
        if peft is not None:
            r.take(*peft, "full fine-tune (no adapters)", method=Method.FULL)
        else:
            r.absent("use_peft", "full fine-tune (TRL's default: no adapters)",
                     method=Method.FULL)
    elif four is not None and four_on:
        r.take(*peft, "LoRA adapters")
        r.take(*four, "QLoRA: LoRA over a 4-bit base", method=Method.QLORA)
    else:
        sh.method(r, Method.LORA, *peft)
        if eight is not None and eight_on:
            r.take(*eight, f"{sh.bit_base(8)}: not modelled, a 16-bit base is estimated")
            r.note("load_in_8bit: an 8-bit base is not modelled; a 16-bit base is estimated "
                   "(an upper bound on memory).")
    for flag in (four, eight):
        if flag is not None and not r.flag(*flag):
            sh.switch_off(r, flag)


def read_llama_factory(r: Reader) -> None:
    sh.model(r, "model_name_or_path")
    if found := r.first("stage"):
        r.take(*found, "supervised fine-tuning" if str(found[1]).strip().lower() == "sft"
               else "pre-training (next-token loss, counted as SFT)")
    _llama_factory_method(r)
    sh.lora(r, "lora_rank", "lora_alpha", "lora_dropout")
    if found := r.first("lora_target"):
        m.lora_targets(r, *found)
    sh.int_field(r, "seq_len", "sequence", "cutoff_len")
    sh.packing(r, "packing", "neat_packing")
    if found := r.first("flash_attn"):
        m.attention(r, *found)
    sh.liger(r, "enable_liger_kernel")
    if (found := r.first("use_unsloth")) and r.flag(*found):
        r.framework = Framework.UNSLOTH
        r.take(*found, "Unsloth's kernels and loss")
    elif found:
        r.take(*found, "off")
    if found := r.first("disable_gradient_checkpointing"):
        off = r.flag(*found)
        r.take(*found, "gradient checkpointing " + ("off" if off else "on"),
               grad_checkpointing=not off)
    training_arguments(r)
    defaults.llama_factory(r)


def _llama_factory_method(r: Reader) -> None:
    """``finetuning_type`` (LLaMA-Factory's default: lora) with ``quantization_bit``:
    LoRA over a 4-bit base is QLoRA; a quantized base beside a full or freeze fine-tune is
    refused (LLaMA-Factory trains a quantized model only with adapters)."""
    kind, found_bits = r.first("finetuning_type"), r.first("quantization_bit")
    ftype = sh.word(r, kind, "lora, full or freeze") or "lora"
    quant = sh.bits(r, *found_bits) if found_bits else None
    if ftype not in ("lora", "full", "freeze"):
        raise r.bad("finetuning_type", ftype, "lora, full or freeze")
    if ftype != "lora" and found_bits is not None and kind is not None:
        raise conflict(r, found_bits, kind, "a quantized base trains only through LoRA "
                       "adapters", f"Set finetuning_type: lora (QLoRA with {found_bits[0]}: "
                       f"4), or remove {found_bits[0]} for a {ftype} fine-tune")
    said: tuple[str, Any] = kind if kind is not None else ("finetuning_type", "lora")
    if ftype == "lora" and quant == 4 and found_bits is not None:
        _lora_taken(r, kind, "LoRA adapters")
        r.take(*found_bits, "QLoRA: LoRA over a 4-bit base", method=Method.QLORA)
    elif ftype == "lora":
        _lora_taken(r, kind, "LoRA", method=Method.LORA)
        if quant is not None and found_bits is not None:
            r.take(*found_bits, f"{sh.bit_base(quant)}: not modelled, a 16-bit base is "
                   "estimated")
            r.note(f"quantization_bit: {sh.bit_base(quant)} is not modelled; a 16-bit base is "
                   "estimated (an upper bound on memory).")
    else:
        sh.method(r, Method.FULL, *said)
        if ftype == "freeze":
            r.note("finetuning_type freeze trains only some layers: estimated as a full "
                   "fine-tune (an upper bound).")


def _lora_taken(r: Reader, kind: tuple[str, Any] | None, meaning: str, **fields: Any) -> None:
    """``finetuning_type: lora`` as written, or unset: LoRA, LLaMA-Factory's default."""
    if kind is not None:
        r.take(*kind, meaning, **fields)
    else:
        r.absent("finetuning_type", f"{meaning} (LLaMA-Factory's default)", **fields)
