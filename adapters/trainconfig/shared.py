"""Keys several formats read alike: the model, LoRA's rank, alpha, dropout and DoRA,
whole-number fields, the run's length (epochs and ``max_steps``), packing, the method,
one-word choices, quantization bits and the weights' dtype."""

from __future__ import annotations

import unicodedata
from typing import Any, Final

from adapters.trainconfig import mappings as m
from adapters.trainconfig.checks import conflict
from adapters.trainconfig.defaults import epochs_meaning
from adapters.trainconfig.load import ConfigError
from adapters.trainconfig.reader import Reader
from engine.choices import Method, Precision

DATASET_NOTE: Final = (
    "The datasets are named but not counted: add `N tokens` (or `N samples of L tokens`) "
    "for time and cost."
)
MODEL_EXAMPLE: Final = "a model name or Hugging Face id such as meta-llama/Llama-3.1-8B"


def refuse_control(r: Reader, path: str, value: str, expected: str) -> None:
    """Refuse a name with a control or format character (an escape sequence, a
    right-to-left override): it would reach the query, whose message would not name
    the config key."""
    bad = next((c for c in value if unicodedata.category(c) in ("Cc", "Cf")), None)
    if bad is not None:
        raise ConfigError(
            f"{r.format.label} config: {path} is '{r.text(path, value)}', which has a control "
            f"character (U+{ord(bad):04X}); expected {expected}. Set {path} to {expected}."
        )


def model(r: Reader, *paths: str) -> None:
    if found := r.first(*paths):
        path, value = found
        if not isinstance(value, str) or not value.strip():
            raise r.bad(path, value, MODEL_EXAMPLE)
        refuse_control(r, path, value, MODEL_EXAMPLE)
        r.model.append(value.strip())
        r.take(path, value, "model")


def lora(r: Reader, rank: str, alpha: str, dropout: str) -> None:
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
    dora(r, "use_dora", "peft_use_dora")


def dora(r: Reader, *paths: str) -> None:
    """DoRA on the adapters (PEFT's ``use_dora``, axolotl's ``peft_use_dora``,
    torchtune's ``use_dora``)."""
    if found := r.first(*paths):
        on = r.flag(*found)
        r.take(*found, "DoRA (weight-decomposed LoRA)" if on else "plain LoRA", dora=on)


def int_field(r: Reader, field: str, label: str, *paths: str) -> None:
    if found := r.first(*paths):
        value = r.integer(*found, field)
        r.take(*found, f"{label} {value:,}", **{field: value})


def sequence(r: Reader, *paths: str) -> None:
    """The sequence length from the first of ``paths``; two of them set to different
    lengths (TRL's ``max_seq_length``, renamed ``max_length``) are refused."""
    said = [(p, r.value(p)) for p in paths if r.value(p) is not None]
    if not said:
        return
    first = said[0]
    length = r.integer(*first, "seq_len")
    r.take(*first, f"sequence {length:,}", seq_len=length)
    for other in said[1:]:
        if r.integer(*other, "seq_len") != length:
            raise conflict(r, first, other, "both set the sequence length",
                           f"Keep one ({first[0]}, the current name), or set both to "
                           "the same length")
        r.take(*other, f"sequence {length:,}, as {first[0]}")


def run_length(r: Reader, epochs_path: str, steps_path: str) -> None:
    """The epochs and ``max_steps``: a positive ``max_steps`` overrides the epochs, as the
    Trainer does, and the epochs' line says so."""
    if found := r.first(steps_path):
        m.max_steps(r, *found)
    if found := r.first(epochs_path):
        epochs = r.number(*found, "epochs")
        r.take(*found, epochs_meaning(epochs, r), epochs=epochs)


def liger(r: Reader, *paths: str) -> None:
    """Liger's kernels switch (``use_liger_kernel``, ``use_liger``, ``enable_liger_kernel``):
    its fused cross-entropy keeps no logits."""
    if found := r.first(*paths):
        on = r.flag(*found)
        r.take(*found, "Liger fused cross-entropy" if on else "no Liger kernels", fused_ce=on)


def packing(r: Reader, *paths: str) -> None:
    if found := r.first(*paths):
        on = r.flag(*found)
        r.take(*found, "packing " + ("on" if on else "off"), packing=on)


METHOD_LABELS: Final = {Method.FULL: "full fine-tune", Method.LORA: "LoRA",
                        Method.QLORA: "QLoRA (4-bit base)"}


def method(r: Reader, chosen: Method, path: str, value: object) -> None:
    r.take(path, value, METHOD_LABELS[chosen], method=chosen)


def switch_off(r: Reader, found: tuple[str, Any] | None) -> None:
    """List a switch the config turns off (``load_in_8bit: false``) as read: off."""
    if found is not None:
        r.take(*found, "off")


def word(r: Reader, found: tuple[str, Any] | None, expected: str) -> str:
    """A one-word choice (``adapter: qlora``), lower case; empty when absent or null."""
    if found is None:
        return ""
    path, value = found
    if not isinstance(value, str):
        raise r.bad(path, value, expected)
    return value.strip().lower()


QUANT_BITS: Final = (2, 3, 4, 5, 6, 8)
"""LLaMA-Factory's ``quantization_bit`` choices (bitsandbytes 4/8, HQQ and EETQ others)."""


def bits(r: Reader, path: str, value: object) -> int:
    count = r.whole(path, value)
    if count not in QUANT_BITS:
        raise r.bad(path, value, "one of " + ", ".join(map(str, QUANT_BITS[:-1]))
                    + f" or {QUANT_BITS[-1]}")
    return count


def bit_base(count: int) -> str:
    """``a 4-bit base``, ``an 8-bit base``."""
    return f"{'an' if count == 8 else 'a'} {count}-bit base"


_DTYPES: Final = {"bfloat16": Precision.BF16, "bf16": Precision.BF16,
                  "float16": Precision.FP16, "fp16": Precision.FP16,
                  "float32": Precision.FP32, "fp32": Precision.FP32}


def dtype(r: Reader, path: str, value: object) -> None:
    low = str(value).strip().lower().removeprefix("torch.") if isinstance(value, str) else ""
    choice = _DTYPES.get(low)
    if choice is not None:
        r.take(path, value, f"weights in {choice.value.upper()}", precision=choice)
    elif low == "auto":
        r.take(path, value, "the checkpoint's own dtype (the precision is left as the rest "
               "of the config sets it)")
    else:
        r.take(path, value, "not a dtype ftcost reads")
        r.note(f"{path}: {r.text(path, value)} is not a dtype ftcost reads (bfloat16, "
               "float16, float32); the precision is left as the rest of the config sets it.")
