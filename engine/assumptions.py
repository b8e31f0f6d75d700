"""The assumptions line of every estimate: which settings produced each figure (the
framework and what it changed, memory, fit, compute and time, price), so a reader can
check every number against what they meant to ask.
"""

from __future__ import annotations

from engine.activations import logits_bytes_per_token
from engine.choices import Framework, Method, Mode, Sharding, StatePrecision
from engine.compute import uses_flat_rule
from engine.constants import (
    CUDA_CONTEXT_GB,
    GEMM_EFFICIENCY,
    GPTQ_BITS,
    LOGITS_BYTES_HF,
    NAPKIN_BYTES_PER_PARAM,
    NF4_BITS,
    NF4_BITS_DOUBLE_QUANT,
    OVERHEAD_GB,
    RUN_STARTUP_S,
    USABLE_FRACTION,
)
from engine.profiles import (
    cudnn_attention_from,
    logits_bytes,
    profile,
)
from engine.ranking import user_price
from engine.rates import framework_picks_native_attention, matmul_rate
from engine.request import Request
from engine.specs import GpuSpec
from engine.warning_context import Context
from engine.wording import epochs_text, machine_sizes_text, sharding_text, tokens_text


def assumptions(ctx: Context) -> list[str]:
    """The settings behind each figure, one line each: framework, memory, fit, compute and
    time, and the price where the headline has one."""
    lines = [_framework_line(ctx), _memory_line(ctx), _fit_line(ctx), _compute_line(ctx)]
    price = _price_line(ctx)
    return lines if price is None else [*lines, price]


def _framework_line(ctx: Context) -> str:
    """The framework profile, and what it changed from the specification's assumptions."""
    r = ctx.request
    if r.framework is Framework.GENERIC:
        return (
            "Framework: generic (the specification's assumptions). Say `hf`, `unsloth`, "
            "`torchtune`, `litgpt` or `torchtitan` for that stack's loss, precision and defaults."
        )
    facts = ctx.framework_changes
    changed = "; ".join(facts) or "nothing beyond the specification's assumptions"
    return f"Framework: {profile(r.framework).label}: {changed}."


def _memory_line(ctx: Context) -> str:
    """The settings the memory figure was computed at, and which counter it is."""
    r = ctx.request
    if r.mode is Mode.NAPKIN:
        per = " / ".join(f"{NAPKIN_BYTES_PER_PARAM[m]:g}" for m in ("full", "lora", "qlora"))
        return f"Memory: napkin rule, {per} bytes per parameter (full/LoRA/QLoRA)."
    method = r.effective_method
    parts = [f"{method.value}", f"base {r.precision.value}"]
    if method is Method.QLORA:
        if r.gptq:
            parts[-1] = f"base GPTQ {GPTQ_BITS:.3g} bits"
        else:
            bits = (f"{NF4_BITS_DOUBLE_QUANT:g} bits (double quant)" if r.double_quant
                    else f"{NF4_BITS:g} bits")
            parts[-1] = f"base NF4 {bits}"
    if method is not Method.FULL:
        lora = f"rank {r.lora_rank} on {r.lora_targets.value}"
        if r.dora:
            lora += ", DoRA (magnitudes, two kept outputs per linear, a weight norm per forward)"
        if r.lora_dropout > 0:
            lora += f", dropout {r.lora_dropout:g}"
        parts.append(lora)
    states = "BF16" if r.state_precision is StatePrecision.PURE_BF16 else "FP32"
    parts.append(f"{r.optimizer.value} ({states} states)")
    batch = f"seq {r.seq_len:,} x batch {r.micro_batch}"
    if r.grad_accum > 1:
        batch += f" x {r.grad_accum} accumulation steps"
    parts.append(batch)
    arch = ctx.model.architecture
    per_logit = logits_bytes_per_token(arch, r) / arch.vocab_size
    capped = " (the soft-cap's tanh output included)" if per_logit > logits_bytes(
        r, LOGITS_BYTES_HF) else ""
    savers = [
        _checkpointing(r),
        "FlashAttention" if r.flash_attention else "eager attention",
        "fused CE" if per_logit == 0 else f"loss keeps {per_logit:g} B per logit{capped}",
    ]
    if r.activation_offload and r.grad_checkpointing:
        savers.append("checkpointed activations on CPU")
    parts.append(", ".join(savers))
    return (
        "Memory: " + "; ".join(parts) + f"; {OVERHEAD_GB} GB overhead per GPU. It is what "
        f"the card must hold: torch's peak reserved plus the CUDA context (~{CUDA_CONTEXT_GB}"
        " GB)."
    )


def _auto_several(r: Request) -> str:
    """What ``auto`` runs on several cards for ``r`` (``engine.fit.resolve_stage``)."""
    if profile(r.framework).always_shards:
        return "FSDP, as its multi-card recipes do"
    if r.context_parallel > 1:
        return "ZeRO-3 over the rings' cards from the first ring on"
    if r.offload:
        return "ZeRO-3, which offloads each card's shard, not a whole copy per DDP replica"
    return "DDP replicas where one card holds the run, else ZeRO-3"


def _fit_line(ctx: Context) -> str:
    """The planning line and how the state is spread: sharding, tensor and context
    parallelism."""
    r = ctx.request
    if r.mode is Mode.NAPKIN:
        sharding = "the napkin rules divide every byte evenly over the cards."
    elif r.sharding is Sharding.AUTO:
        sharding = f"sharding auto (none on one card; across several, {_auto_several(r)})."
        lead = ctx.lead
        if lead is not None and lead.count > r.tensor_parallel:
            shown = sharding_text(lead.stage, lead.count // r.tensor_parallel)
            sharding = f"{sharding[:-1]}: {shown} on {lead.count}x {lead.gpu.id}."
    elif r.sharding is Sharding.HSDP:
        sharding = (f"sharding hsdp (sharded within each node of {ctx.hsdp_group_cards}, "
                    "replicated across nodes).")
    else:
        sharding = f"sharding {r.sharding.value}."
    line = f"Fit: at most {USABLE_FRACTION:.0%} of card memory; {sharding}"
    if r.mode is not Mode.DETAILED:
        return line
    if ctx.compute.flops is not None and r.gpu_count is None and r.solve is None:
        line += (" Counts are the fewest that fit, rounded up to the machines clouds rent "
                 f"({machine_sizes_text()} cards, whole nodes past one), whose cards all "
                 "train.")
    if r.tensor_parallel > 1:
        line += (
            f" Tensor parallel {r.tensor_parallel} with sequence parallelism: each card of a "
            f"group holds 1/{r.tensor_parallel} of every layer, its activations and logits; "
            "the sharding runs between the groups."
        )
    if r.context_parallel > 1:
        line += (
            f" Context parallel {r.context_parallel}: each card stores and computes "
            f"{-(-r.seq_len // r.context_parallel):,} of each sequence's {r.seq_len:,} tokens; "
            "keys and values go round the ring beside attention, and the weights are "
            "sharded over the ring's cards too."
        )
    return line


def _price_line(ctx: Context) -> str | None:
    """The headline card's price and where it came from (None without one)."""
    r, lead = ctx.request, ctx.lead
    if lead is None or lead.price_per_gpu_hour is None:
        return None
    g = lead.gpu
    given = user_price(r, g)
    if given is not None:
        return f"Price: ${given:.2f}/GPU-hr as given."
    if r.spot and g.spot_price_per_gpu_hour is not None:
        return (
            f"Price: {g.id} ${lead.price_per_gpu_hour:.2f}/GPU-hr at spot "
            f"({g.spot_price_source}); spot capacity can be reclaimed mid-run, so "
            "checkpoint often."
        )
    when = f", as of {g.price_as_of.isoformat()}" if g.price_as_of else ""
    fallback = (
        f" No spot price for {g.id} (spot prices come only from a price refresh, and none "
        "has one for it): on-demand used."
        if r.spot else ""
    )
    return (
        f"Price: {g.id} ${lead.price_per_gpu_hour:.2f}/GPU-hr ({g.price_source}{when})."
        + fallback
    )


def _compute_line(ctx: Context) -> str:
    """How time was computed: the physical model's rate, or the flat rule's MFU."""
    r = ctx.request
    flat = uses_flat_rule(r)
    mfu = f"MFU {r.mfu:.0%}"
    if ctx.compute.flops is None or r.dataset_tokens is None:
        if r.samples is not None and r.sample_tokens is None:
            return (f"Compute: how long is a sample? Give the {r.samples:,} samples' average "
                    f"length for time and cost (`{r.samples:,} samples of 512 tokens`; in a "
                    "thread, `avg 512 tokens`).")
        return "Compute: add a dataset size (e.g. `50M tokens`) for time and cost."
    counted = f"{tokens_text(r.dataset_tokens)} tokens x {epochs_text(r.epochs)}"
    if r.kept_share < 1:
        counted += f", cut at {r.sample_limit:,} a sample"
    if r.steps is not None:
        counted = (f"{r.steps:,} steps x {r.sequences_per_step(r.gpu_count or 1):,} "
                   f"sequences x {r.seq_len:,} tokens")
    head = (
        f"Compute: 6 x {ctx.model.active_params / 1e9:.2f}B active params x {counted} = "
        f"{tokens_text(r.trained_tokens or 0)} trained tokens = {ctx.compute.flops:.2e} FLOPs"
    )
    if flat:
        rule = ("napkin rule" if r.mode is Mode.NAPKIN else
                "flat rule (MFU as measured: recompute and communication in it)")
        return f"{head}; {rule}: {mfu} of dense BF16."
    lead = ctx.priced or ctx.lead  # the count the time and cost are for
    if lead is None or lead.timing.tokens_per_second is None:
        return f"{head}; time from the physical model (engine.throughput)."
    t = lead.timing
    achievable = matmul_rate(lead.gpu) / 1e12
    return (
        f"{head}. Time: modeled per micro-batch on {lead.count}x {lead.gpu.id}: "
        f"{t.tokens_per_second:,.0f} tokens/s per GPU ({_mfu_words(r, t.mfu or 0)}), "
        f"matmuls by method at {GEMM_EFFICIENCY:.0%} of {achievable:,.0f} TFLOPs achievable, "
        f"{_attention_words(r, lead.gpu)}, "
        f"memory-bound work at "
        f"{lead.gpu.hbm_gbps or 0:,.0f} GB/s, launch floor and communication. "
        f"{_startup_words(lead.count, t.gpu_hours)}The napkin rule (6·P·T at 35%) says "
        f"{t.napkin_gpu_hours or 0:,.1f} GPU-hours."
    )


def _startup_words(count: int, gpu_hours: float | None) -> str:
    """The start-up every card pays before its first step (``RUN_STARTUP_S``), and its
    share of the GPU-hours, so the reply's own numbers add up."""
    startup = count * RUN_STARTUP_S / 3600
    notable = gpu_hours and startup >= 0.01 * gpu_hours
    share = f" ({startup / gpu_hours:.0%} of them)" if gpu_hours and notable else ""
    return (f"GPU-hours include {RUN_STARTUP_S / 60:.0f} min of start-up per card (loading, "
            f"set-up, warm-up): {startup:,.1f} GPU-hours{share}. ")


def _mfu_words(r: Request, mfu: float) -> str:
    """The achieved MFU as replies quote it: on 6·P_active per token, the count a stated
    ``mfu`` is read on, so saying it back gives the same time. Adapters skip the frozen
    weights' gradient matmuls (about 4·P), so theirs can pass 100%: said where it does."""
    if round(mfu, 2) <= 1.0 or r.effective_method is Method.FULL:  # as it prints
        return f"{mfu:.0%} MFU"
    return (f"{mfu:.0%} MFU on 6·P per token: over 100% because {r.effective_method.label} "
            "skips the frozen weights' gradient matmuls")


def _attention_words(r: Request, gpu: GpuSpec) -> str:
    """How the compute line names attention: by sequence, and on FlashAttention-2 where
    the card runs it below its native kernels (Hopper, Blackwell)."""
    fa2 = gpu.flash_attention_tflops
    if not r.flash_attention:
        return "eager attention by sequence"
    if (
        fa2 is None
        or r.native_attention
        or framework_picks_native_attention(gpu, cudnn_attention_from(r))
    ):
        return "attention by sequence"
    return f"attention by sequence on FlashAttention-2 ({fa2:,.0f} TFLOPs on this card)"


def _checkpointing(r: Request) -> str:
    """How the request checkpoints activations, as the assumptions line says it."""
    if not r.grad_checkpointing:
        return "no checkpointing"
    return "selective checkpointing" if r.selective_checkpointing else "checkpointing"
