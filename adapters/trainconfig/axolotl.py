"""axolotl's YAML, key by key (its config reference: ``base_model``, ``adapter``,
``sequence_len``, ``sample_packing``, ``micro_batch_size``, ``lora_target_linear``...)."""

from __future__ import annotations

from typing import Any

from adapters.trainconfig import defaults
from adapters.trainconfig import mappings as m
from adapters.trainconfig import shared as sh
from adapters.trainconfig.checks import conflict
from adapters.trainconfig.hf import activation_offloading
from adapters.trainconfig.reader import UNSET, Reader, number_range, range_error
from engine.choices import Method
from engine.constants import MAX_GRAD_ACCUM

_KERNELS = ("flash_attention", "sdp_attention", "xformers_attention", "flex_attention")


def read_axolotl(r: Reader) -> None:
    sh.model(r, "base_model")
    _method(r)
    _gptq(r)
    sh.lora(r, "lora_r", "lora_alpha", "lora_dropout")
    if (linear := r.first("lora_target_linear")) and r.flag(*linear):
        m.lora_targets(r, "lora_target_linear", "all-linear")
    elif found := r.first("lora_target_modules"):
        m.lora_targets(r, *found)
        if linear:
            r.take(*linear, "off")
    sh.int_field(r, "seq_len", "sequence", "sequence_len")
    sh.packing(r, "sample_packing")
    sh.int_field(r, "micro_batch", "micro-batch", "micro_batch_size")
    sh.int_field(r, "grad_accum", "accumulation", "gradient_accumulation_steps")
    sh.run_length(r, "num_epochs", "max_steps")
    if found := r.first("optimizer"):
        m.optimizer(r, *found)
    m.precision(r, r.first("bf16"), r.first("fp16"), off_loads_fp32=True)
    if found := r.first("gradient_checkpointing"):
        _checkpointing(r, *found)
    defaults.axolotl(r)  # before activation_offloading, which reads the checkpointing
    _batch_size(r)  # after the defaults: it divides by the micro-batch
    if found := r.first("activation_offloading"):
        activation_offloading(r, *found)
    if found := r.first("torch_compile"):
        m.switch(r, *found, "torch.compile", "compile")
    _attention(r)
    _loss(r)
    if found := r.first("deepspeed"):
        m.deepspeed(r, *found)
    if found := r.first("tensor_parallel_size"):
        m.tensor_parallel(r, *found)
    if found := r.first("context_parallel_size", "sequence_parallel_degree"):
        m.context_parallel(r, *found)
    _fsdp(r)
    if found := r.first("dp_replicate_size"):
        m.replicate(r, *found)


def _method(r: Reader) -> None:
    """``adapter`` with ``load_in_4bit`` / ``load_in_8bit``. axolotl loads a quantized
    base only under an adapter, and QLoRA only in 4 bits: a contradiction between them
    is refused naming both keys."""
    adapter, four, eight = r.first("adapter"), r.first("load_in_4bit"), r.first("load_in_8bit")
    kind = sh.word(r, adapter, "lora, qlora or none")
    if kind not in ("", "none", "null", "lora", "qlora"):
        raise r.bad("adapter", adapter[1] if adapter else kind, "lora, qlora or none")
    four_on = four is not None and r.flag(*four)
    eight_on = eight is not None and r.flag(*eight)
    if four is not None and eight is not None and four_on and eight_on:
        raise conflict(r, four, eight, "a base is loaded in 4 or 8 bits, not both",
                       f"Keep one: {eight[0]}: false for QLoRA")
    said: tuple[str, Any] = adapter if adapter is not None else ("adapter", UNSET)
    if kind in ("", "none", "null"):
        _full(r, said, four if four_on else eight if eight_on else None)
    elif kind == "qlora":
        _qlora(r, said, four, eight)
    else:
        _lora(r, said, four, eight)
    for flag in (four, eight):
        if flag is not None and not r.flag(*flag):
            sh.switch_off(r, flag)


def _full(r: Reader, said: tuple[str, Any], quantized: tuple[str, Any] | None) -> None:
    if quantized is not None:
        bits = 4 if quantized[0] == "load_in_4bit" else 8
        raise conflict(r, quantized, said, f"axolotl loads {sh.bit_base(bits)} only to "
                       "train adapters over it, and without an adapter the whole model is "
                       "fine-tuned", f"Set adapter: {'qlora' if bits == 4 else 'lora'} to "
                       f"train adapters, or {quantized[0]}: false for a full fine-tune")
    if said[1] is UNSET:
        r.absent("adapter", "full fine-tune (no adapter)", method=Method.FULL)
    else:
        sh.method(r, Method.FULL, *said)


def _qlora(
    r: Reader, said: tuple[str, Any], four: tuple[str, Any] | None,
    eight: tuple[str, Any] | None,
) -> None:
    if eight is not None and r.flag(*eight):
        raise conflict(r, said, eight, "QLoRA trains over a 4-bit base, not an 8-bit one",
                       "Set load_in_4bit: true and load_in_8bit: false for QLoRA, or "
                       "adapter: lora for LoRA")
    if four is not None and not r.flag(*four):
        raise conflict(r, said, four, "QLoRA trains over a 4-bit base (axolotl requires "
                       "load_in_4bit for it)", "Set load_in_4bit: true for QLoRA, or "
                       "adapter: lora for LoRA over a 16-bit base")
    sh.method(r, Method.QLORA, *said)
    if four is not None:
        r.take(*four, "the 4-bit base QLoRA trains over")


def _lora(
    r: Reader, said: tuple[str, Any], four: tuple[str, Any] | None,
    eight: tuple[str, Any] | None,
) -> None:
    if four is not None and r.flag(*four):
        r.take(*said, "LoRA adapters")
        r.take(*four, "QLoRA: LoRA over a 4-bit base", method=Method.QLORA)
        return
    sh.method(r, Method.LORA, *said)
    if eight is not None and r.flag(*eight):
        r.take(*eight, f"{sh.bit_base(8)}: not modelled, LoRA on a 16-bit base is estimated")
        r.note("load_in_8bit: an 8-bit base is not modelled; LoRA on a 16-bit base is "
               "estimated (an upper bound on memory).")


def _gptq(r: Reader) -> None:
    """axolotl's ``gptq: true`` loads a GPTQ checkpoint: LoRA on it is QLoRA on that base;
    without an adapter it is refused (a GPTQ model trains only through adapters)."""
    gptq = r.first("gptq")
    if gptq is None:
        return
    if not r.flag(*gptq):
        sh.switch_off(r, gptq)
        return
    if r.fields.get("method") is Method.FULL:
        said = r.first("adapter") or ("adapter", UNSET)
        raise conflict(r, gptq, said, "a GPTQ 4-bit checkpoint trains only through "
                       "adapters, and without an adapter the whole model is fine-tuned",
                       "Set adapter: lora (LoRA over the GPTQ base), or remove gptq")
    r.take(*gptq, "QLoRA on a GPTQ 4-bit base", method=Method.QLORA, gptq=True)


def _batch_size(r: Reader) -> None:
    """axolotl's ``batch_size``: one GPU's micro-batch x accumulation. Without
    ``gradient_accumulation_steps`` the accumulation is ``batch_size // micro_batch_size``
    (``normalize_config`` in axolotl's utils/config); both set is refused, as axolotl's
    ``check_gas_bsz`` refuses it ("please set only one of gradient_accumulation_steps or
    batch_size"), and so is a batch smaller than the micro-batch (no whole step)."""
    found = r.first("batch_size")
    if found is None or found[1] is None:
        return
    total = r.whole(*found)
    if (accum := r.first("gradient_accumulation_steps")) and accum[1]:
        raise conflict(r, accum, found, "axolotl takes one of them (it refuses both: "
                       "\"please set only one of gradient_accumulation_steps or "
                       "batch_size\")", f"Keep one: remove {found[0]}, or "
                       f"{accum[0]}")
    micro = r.fields.get("micro_batch", 1)
    if not micro <= total <= micro * MAX_GRAD_ACCUM:  # whole steps, within accumulation's bound
        raise range_error(r.format.label, found[0], r.text(*found),
                          f"batch (micro-batch {micro:,} x accumulation)",
                          number_range(micro, micro * MAX_GRAD_ACCUM, True))
    steps = total // micro
    kept = f" ({total - steps * micro} left over, as axolotl rounds down)" if total % micro else ""
    r.take(*found, f"accumulation {steps:,} of micro-batch {micro:,}{kept}", grad_accum=steps)


def _checkpointing(r: Reader, path: str, value: object) -> None:
    low = str(value).strip().lower()
    if low in ("offload", "unsloth"):
        r.take(path, value, "gradient checkpointing with activations offloaded to the CPU",
               grad_checkpointing=True, activation_offload=True)
        return
    on = r.flag(path, value)
    r.take(path, value, "gradient checkpointing " + ("on" if on else "off"),
           grad_checkpointing=on)


def _attention(r: Reader) -> None:
    """One attention kernel (axolotl refuses two of flash, sdp, xformers, flex; eager
    beside any of them is a contradiction too). ``flash_attention: false`` alone leaves
    transformers' default, SDPA."""
    on = [f for key in (*_KERNELS, "eager_attention") if (f := r.first(key)) and r.flag(*f)]
    if len(on) > 1:
        raise conflict(r, on[0], on[1], "each chooses the attention kernel, and a run uses "
                       "one", f"Keep one: set {on[1][0]}: false, or {on[0][0]}: false")
    if on and on[0][0] == "eager_attention":
        r.take(*on[0], "eager attention (keeps the scores)", flash_attention=False)
    elif on:
        r.take(*on[0], f"{on[0][0].replace('_', ' ')} (no score matrix)",
               flash_attention=True)
    for key in _KERNELS:
        if (found := r.first(key)) and found[0] not in r.sources.values():
            r.take(*found, "off: transformers' default attention (SDPA, no score matrix)"
                   if not on else "off")
    if (found := r.first("eager_attention")) and not r.flag(*found):
        r.take(*found, "off")


_LOSS_PLUGINS = (("liger_fused_linear_cross_entropy", "liger", "the Liger plugin"),
                 ("cut_cross_entropy", "cut_cross_entropy", "CutCrossEntropyPlugin"))


def _loss(r: Reader) -> None:
    """Liger's or Cut Cross-Entropy's fused loss: the key on, with its plugin listed."""
    plugins = r.value("plugins")
    names = [str(p).lower() for p in plugins] if isinstance(plugins, list) else []
    for key, mark, plugin in _LOSS_PLUGINS:
        found = r.first(key)
        if found is None:
            continue
        if not r.flag(*found):
            r.take(*found, "off")
        elif any(mark in name for name in names):
            r.take(*found, "fused cross-entropy (no logits kept)", fused_ce=True)
            if "plugins" not in {k.key for k in r.read}:
                r.take("plugins", plugins, f"{plugin}, for {key}")
        else:
            r.take(*found, f"no effect: {plugin} is not in plugins")
            r.note(f"{key}: true takes effect only with {plugin} in plugins; the loss is "
                   "counted unfused.")


def _fsdp(r: Reader) -> None:
    """``fsdp`` (a list) with ``fsdp_config``, or FSDP2's form with no list:
    ``fsdp_version: 2`` and an ``fsdp_config`` section."""
    config = {**r.section("fsdp_config")}
    version = r.first("fsdp_version")
    if version is not None:
        config.setdefault("fsdp_version", version[1])
    if (found := r.first("fsdp")) is not None:
        m.fsdp(r, *found, config, "fsdp_config")
        if version is not None:
            r.take(*version, f"FSDP version {r.text(*version)}")
    elif version is not None and str(version[1]).strip() == "2":
        m.fsdp(r, *version, config, "fsdp_config", implied=True)
    elif config:
        m.fsdp(r, "fsdp_config", r.value("fsdp_config"), config, "fsdp_config",
               implied=True)
    elif version is not None:
        r.take(*version, f"FSDP version {r.text(*version)}, with no fsdp list: no FSDP")
