"""Warnings, assumptions and headline notes that travel with every estimate.

Warnings are things the user should act on or distrust; assumptions say which
settings produced each figure; notes are short facts the headline needs (which
canonical model a bare size meant, that a model is synthetic, that no method was
given).
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.compute import Compute
from engine.constants import (
    COMM_OVERHEAD,
    GB,
    LARGE_LOGITS_GB,
    LOGITS_BYTES,
    LOGITS_BYTES_HF,
    LONG_SEQ_WARNING,
    OVERHEAD_GB,
    PLANNING_UNCERTAINTY,
    SMALL_DATASET_TOKENS,
    USABLE_FRACTION,
)
from engine.fit import Option
from engine.memory import Footprint
from engine.request import Method, Mode, Request, Sharding, StatePrecision
from engine.specs import Catalog, ModelSpec


@dataclass(frozen=True, slots=True)
class Context:
    request: Request
    model: ModelSpec
    footprint: Footprint
    options: list[Option]
    compute: Compute
    mfu_effective: float
    fits_anywhere: bool


def _lead(ctx: Context) -> Option | None:
    return ctx.options[0] if ctx.options else None


def warnings(ctx: Context) -> list[str]:
    """Everything the user should know before trusting the numbers."""
    r, out = ctx.request, []
    lead = _lead(ctx)
    if not ctx.fits_anywhere and (lead is None or not lead.fits):
        out.append(
            "No card in the catalog holds this run"
            + (" without sharding: try `zero3`." if r.sharding is Sharding.NONE else ".")
            + " Try QLoRA, a shorter sequence or `offload`."
        )
    if lead is not None and lead.named and not lead.fits:
        need = f"{lead.needed}x {lead.gpu.id} would." if lead.needed else "no count of them would."
        out.append(
            f"{lead.count}x {lead.gpu.id} cannot hold this run "
            f"({lead.per_gpu_gb:.1f} GB per GPU of {lead.capacity_gb:.1f} GB); {need}"
        )
    if not r.grad_checkpointing and r.seq_len >= LONG_SEQ_WARNING and r.mode is Mode.DETAILED:
        out.append(
            f"Gradient checkpointing is off at sequence {r.seq_len:,}: activations dominate; "
            "turn it on (`ckpt`)."
        )
    if r.mode is Mode.DETAILED and not r.fused_ce and not r.hf_loss:
        logits_b = LOGITS_BYTES * r.micro_batch * r.seq_len * ctx.model.architecture.vocab_size
        if logits_b / GB >= LARGE_LOGITS_GB:
            extra = (LOGITS_BYTES_HF - LOGITS_BYTES) / LOGITS_BYTES * logits_b / GB
            out.append(
                f"The logits take {logits_b / GB:.1f} GB as one FP32 copy; Hugging Face's "
                f"unfused loss keeps about {extra:.1f} GB more (say `hf-loss`), and a fused "
                "cross-entropy (Liger, Unsloth) removes them (`fused-ce`)."
            )
    cards = [o for o in ctx.options[:1]]
    for o in cards:
        if o.gpu.vendor != "NVIDIA":
            out.append(
                f"{o.gpu.name}: {o.gpu.vendor} cards are not recommended for training here "
                "(bitsandbytes NF4 and fused optimizers are CUDA-first)."
            )
        if not o.gpu.bf16:
            out.append(f"{o.gpu.name} has no BF16: training runs in FP16 with loss scaling.")
        if o.gpu.flash_attention_2 != "yes" and r.flash_attention:
            level = "partial" if o.gpu.flash_attention_2 == "partial" else "no"
            out.append(
                f"{o.gpu.name} has {level} FlashAttention-2 support: attention memory and "
                "speed may be worse than modeled."
            )
        if (
            o.count > 1
            and r.grad_accum > 1
            and r.mode is Mode.DETAILED
            and r.sharding is Sharding.FSDP
        ):
            whole = ctx.footprint.whole_gradients
            out.append(
                f"FSDP accumulates {r.grad_accum} micro-batches inside no_sync(), which keeps "
                f"whole, unsharded gradients on every GPU ({whole:.1f} GB). Syncing every "
                "micro-batch keeps them sharded (Accelerate's `sync_each_batch`)."
            )
        if o.count > 1 and r.mode is Mode.DETAILED:
            out.append(
                f"{o.count} cards: communication is modeled only as a "
                f"{COMM_OVERHEAD[o.gpu.fabric]:.0%} time overhead ({o.gpu.fabric})."
            )
    tokens = r.trained_tokens
    if r.micro_batch == 1 and tokens is not None and tokens < SMALL_DATASET_TOKENS:
        out.append(
            f"Micro-batch 1 on {tokens / 1e6:.1f}M trained tokens wastes GPU utilization: "
            "the MFU assumed here is optimistic."
        )
    if ctx.model.is_moe:
        out.append("MoE model: all experts are treated as trainable and resident on the GPU.")
    if r.mode is Mode.NAPKIN:
        out.append(
            "Napkin mode: flat bytes per parameter only; activations, overhead and "
            "communication are not included."
        )
    out.append(
        f"Planning estimate: expect ±{PLANNING_UNCERTAINTY:.0%} in practice "
        "(data pipeline stalls, failed runs and framework buffers are not modeled)."
    )
    return out


def assumptions(ctx: Context) -> list[str]:
    """The settings behind each figure, one line each."""
    r = ctx.request
    out = []
    method = r.effective_method
    if r.mode is Mode.NAPKIN:
        out.append("Memory: napkin rule, 16 / 2.5 / 0.75 bytes per parameter (full/LoRA/QLoRA).")
    else:
        parts = [f"{method.value}", f"base {r.precision.value}"]
        if method is Method.QLORA:
            bits = "4.127 bits (double quant)" if r.double_quant else "4.5 bits"
            parts[-1] = f"base NF4 {bits}"
        if method is not Method.FULL:
            lora = f"rank {r.lora_rank} on {r.lora_targets.value}"
            if r.lora_dropout > 0:
                lora += f", dropout {r.lora_dropout:g}"
            parts.append(lora)
        opt = r.optimizer.value
        states = "BF16" if r.state_precision is StatePrecision.PURE_BF16 else "FP32"
        parts.append(f"{opt} ({states} states)")
        batch = f"seq {r.seq_len:,} x batch {r.micro_batch}"
        if r.grad_accum > 1:
            batch += f" x {r.grad_accum} accumulation steps"
        parts.append(batch)
        savers = [
            "checkpointing" if r.grad_checkpointing else "no checkpointing",
            "FlashAttention" if r.flash_attention else "eager attention",
            "fused CE" if r.fused_ce else "HF unfused loss" if r.hf_loss else "FP32 logits",
        ]
        parts.append(", ".join(savers))
        out.append("Memory: " + "; ".join(parts) + f"; {OVERHEAD_GB} GB overhead per GPU.")
        if r.offload:
            stage = Sharding.ZERO3 if r.sharding is Sharding.AUTO else r.sharding
            out.append(
                f"CPU offload: about {ctx.footprint.offloaded_gb(stage):.0f} GB of host "
                "memory in total; steps slow down with PCIe traffic."
            )
    out.append(
        f"Fit: at most {USABLE_FRACTION:.0%} of card memory; "
        + (
            "sharding auto (none on one card, ZeRO-3 across several)."
            if r.sharding is Sharding.AUTO
            else f"sharding {r.sharding.value}."
        )
    )
    mfu = f"MFU {r.mfu:.0%}"
    if ctx.mfu_effective != r.mfu:
        mfu += f" x 6/8 checkpoint recompute = {ctx.mfu_effective:.1%}"
    if ctx.compute.flops is not None and r.dataset_tokens is not None:
        out.append(
            f"Compute: 6 x {ctx.model.active_params / 1e9:.2f}B active params x "
            f"{_tokens(r.dataset_tokens)} tokens x {r.epochs:g} epochs = "
            f"{_tokens(r.trained_tokens or 0)} trained tokens = {ctx.compute.flops:.2e} FLOPs; "
            f"{mfu} of dense BF16."
        )
    else:
        out.append(f"Compute: add a dataset size (e.g. `50M tokens`) for time and cost; {mfu}.")
    lead = _lead(ctx)
    if lead is not None and lead.price_per_gpu_hour is not None:
        if r.price_per_gpu_hour is not None:
            out.append(f"Price: ${r.price_per_gpu_hour:.2f}/GPU-hr as given.")
        else:
            g = lead.gpu
            when = f", as of {g.price_as_of.isoformat()}" if g.price_as_of else ""
            out.append(
                f"Price: {g.id} ${g.price_per_gpu_hour:.2f}/GPU-hr ({g.price_source}{when})."
            )
    return out


def notes(ctx: Context, catalog: Catalog) -> list[str]:
    """Short facts the headline shows."""
    r, m, out = ctx.request, ctx.model, []
    sizes = [size for size, model_id in catalog.sizes.items() if model_id == m.id]
    if sizes:
        out.append(f"`{sizes[0]}` means {m.name} here; name another model to change it.")
    if m.synthetic:
        out.append(
            f"{m.name} is synthetic: no catalog model has that size, so a Llama-style "
            "architecture was scaled to it."
        )
    if r.method is None:
        out.append("No method given: the headline uses LoRA; the what-ifs compare all three.")
    return out


def _tokens(n: float) -> str:
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= scale:
            return f"{n / scale:g}{suffix}"
    return f"{n:g}"
