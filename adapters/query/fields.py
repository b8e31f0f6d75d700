"""Request fields as the parser names them: labels, examples, bounds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import annotated_types
from pydantic import ValidationError

from adapters.query.errors import EXAMPLE, QueryError, error, quoted
from engine.request import Request


@dataclass(frozen=True)
class FieldInfo:
    label: str
    example: str
    show: Callable[[float], str] = lambda v: f"{v:,g}" if v < 1e6 else f"{v:,.0f}"


def human_tokens(value: float) -> str:
    for power, suffix in ((4, "T"), (3, "B"), (2, "M"), (1, "k")):
        if value >= 1000**power:
            return f"{value / 1000**power:g}{suffix}"
    return f"{value:g}"


FIELDS: Final = {
    "model": FieldInfo("model", EXAMPLE),
    "method": FieldInfo("method", EXAMPLE),
    "precision": FieldInfo("precision", "8b lora fp16 50M tokens"),
    "lora_rank": FieldInfo("LoRA rank", "8b lora r64 50M tokens"),
    "lora_targets": FieldInfo("LoRA targets", "8b lora attn 50M tokens"),
    "optimizer": FieldInfo("optimizer", "8b full adamw-8bit 50M tokens"),
    "state_precision": FieldInfo("state precision", "8b full pure-bf16 50M tokens"),
    "offload": FieldInfo("offload switch", "70b full offload 50M tokens"),
    "seq_len": FieldInfo("sequence length", "8b lora seq 8k 50M tokens"),
    "micro_batch": FieldInfo("micro-batch", "8b lora bs 4 50M tokens"),
    "grad_accum": FieldInfo("gradient accumulation", "8b full fsdp 4x a10g accum 8"),
    "lora_dropout": FieldInfo(
        "LoRA dropout", "8b lora dropout 0.05 50M tokens", lambda v: f"{v:g}"
    ),
    "grad_checkpointing": FieldInfo("checkpointing switch", "8b lora no-ckpt 50M tokens"),
    "flash_attention": FieldInfo("FlashAttention switch", "8b lora no-flash 50M tokens"),
    "fused_ce": FieldInfo("fused cross-entropy switch", "8b lora fused-ce 50M tokens"),
    "hf_loss": FieldInfo("Hugging Face loss-path switch", "8b lora hf-loss 50M tokens"),
    "double_quant": FieldInfo("double quantization switch", "70b qlora no-double-quant"),
    "sharding": FieldInfo("sharding", "70b full zero3 8x h100"),
    "gpu": FieldInfo("GPU", EXAMPLE),
    "gpu_count": FieldInfo("GPU count", "70b full 50M tokens 8x h100"),
    "dataset_tokens": FieldInfo("token count", EXAMPLE, human_tokens),
    "epochs": FieldInfo("epoch count", "8b lora 50M tokens 2 epochs"),
    "mfu": FieldInfo("MFU", "8b lora 50M tokens mfu 40%", lambda v: f"{v * 100:g}%"),
    "price_per_gpu_hour": FieldInfo(
        "price per GPU-hour", "70b qlora 50M tokens h100 $2.50/hr", lambda v: f"${v:,g}"
    ),
    "mode": FieldInfo("mode", "70b qlora 50M tokens napkin"),
    "framework": FieldInfo("framework", "8b lora trl 50M tokens"),
    "nodes": FieldInfo("node count", "70b full 2 nodes of 8x h100 50M tokens"),
    "spot": FieldInfo("spot pricing switch", "70b qlora 50M tokens h100 spot"),
    "budget_usd": FieldInfo("budget", "8b lora 50M tokens under $500", lambda v: f"${v:,g}"),
    "deadline_hours": FieldInfo("deadline", "8b lora 50M tokens within 2 days",
                                lambda v: f"{v:,g} hours"),
    "samples": FieldInfo("sample count", "8b lora 10k samples of 512 tokens"),
    "sample_tokens": FieldInfo("average sample length", "8b lora 10k samples of 512 tokens"),
    "packing": FieldInfo("packing switch", "8b lora 10k samples of 512 tokens packing"),
    "max_len": FieldInfo("maximum sample length", "8b lora 10k samples of 512 tokens max-len 2048"),
    "solve": FieldInfo("question", "max seq 8b qlora rtx-4090"),
    "gpu_memory_gb": FieldInfo("card memory", "largest model qlora 24gb",
                               lambda v: f"{v:,g} GB"),
    "model_pick": FieldInfo("model", EXAMPLE),
}


def range_text(field: str) -> str:
    """The allowed range of a Request field, read from its pydantic bounds."""
    low: float | None = None
    high: float | None = None
    strict = strict_high = False
    for bound in Request.model_fields[field].metadata:
        if isinstance(bound, annotated_types.Ge):
            low = float(bound.ge)  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Gt):
            low, strict = float(bound.gt), True  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Le):
            high = float(bound.le)  # type: ignore[arg-type]
        elif isinstance(bound, annotated_types.Lt):
            high, strict_high = float(bound.lt), True  # type: ignore[arg-type]
    show = FIELDS[field].show
    if low is None or high is None:
        return "a valid value"
    if strict_high:
        return f"at least {show(low)} and less than {show(high)}"
    if strict:
        return f"more than {show(low)} and at most {show(high)}"
    return f"between {show(low)} and {show(high)}"


def out_of_range(field: str, word: str) -> QueryError:
    info = FIELDS[field]
    return error(
        f'"{quoted(word)}" is out of range: the {info.label} must be {range_text(field)}.',
        word,
        example=info.example,
    )


def check_field(field: str, value: object, phrase: str, word: str | None) -> None:
    """Raise a QueryError naming the word when ``value`` breaks the field's bounds."""
    probe: dict[str, object] = {"model": "probe", field: value}
    try:
        Request.model_validate(probe)
    except ValidationError as exc:
        raise out_of_range(field, word or phrase) from exc

