"""Tips about the card choice shown: what a setting the user did not say would change on
it, each naming the word that says it (``fa3``, ``bf16 adapters``, ``pure bf16``,
``cp 2``), and the ZeRO-3 hooks' share of a step. Each returns no line or one; a tip
appears only where its saving passes its threshold in :mod:`engine.constants`."""

from __future__ import annotations

from dataclasses import replace

from engine.choices import Framework, Method, Mode, Optimizer, Sharding
from engine.constants import (
    BAND_FULL,
    BF16_ADAPTERS_TIP_SHARE,
    CONTEXT_PARALLEL_TIP_SHARE,
    LAUNCH_BOUND_TIP_FACTORS,
    LAUNCH_BOUND_TIP_SHARE,
    MAX_MICRO_BATCH,
    NATIVE_ATTENTION_TIP_SHARE,
    OPTIMIZER_BYTES,
    OPTIMIZER_BYTES_PURE_BF16,
    PURE_BF16_TIP_SHARE,
    SINGLE_DEVICE_RECIPE_TIP_SHARE,
    USABLE_FRACTION,
    ZERO3_HOOKS_WARNING_SHARE,
)
from engine.fit import Option, card_capacity
from engine.memory import footprint
from engine.profiles import fp32_residual_stream
from engine.rates import framework_picks_native_attention
from engine.throughput import step_time, zero3_hook_share
from engine.warning_context import Context
from engine.workload import Workload, workload


def card_tips(ctx: Context, o: Option) -> list[str]:
    """Every tip that applies to ``o``, in the order a reply shows them."""
    return [
        *_zero3_hooks_warning(ctx, o),
        *_launch_bound_tip(ctx, o),
        *_native_attention_tip(ctx, o),
        *_bf16_adapters_tip(ctx, o),
        *_pure_bf16_tip(ctx, o),
        *_single_device_recipe_tip(ctx, o),
        *_context_parallel_tip(ctx, o),
        *_whole_layer_checkpointing_tip(ctx, o),
        *_arm_host_tip(o),
    ]


def hsdp_holds(ctx: Context, o: Option) -> bool:
    """Whether ``hsdp`` (sharded within each node of ``o``'s card, replicated across
    nodes) holds the run on ``o``'s cards within the planning line: a remedy for traffic
    between nodes only where it does (one node's shard of a 70B full fine-tune does not
    fit an 80 GB card)."""
    fp = ctx.footprint.on_card(o.gpu.gpus_per_node)
    per_gpu = fp.per_gpu(Sharding.HSDP, o.count, ctx.request.offload).total
    return per_gpu <= USABLE_FRACTION * card_capacity(o.gpu, fp.napkin)


def _time_saved(ctx: Context, o: Option, faster: Workload) -> float:
    """The share of ``o``'s time that running ``faster`` instead would save."""
    r = ctx.request
    fast = step_time(faster, o.gpu, o.count, o.stage, r.offload, r.nodes).tokens_per_second
    return 1.0 - (o.timing.tokens_per_second or fast) / fast


def _launch_bound_tip(ctx: Context, o: Option) -> list[str]:
    """A step the host's kernel launches bound (``StepTime.launch_floor_s`` above the
    GPU's own ``compute_s``): the longest micro-batch of ``LAUNCH_BOUND_TIP_FACTORS`` that
    still holds the run within the planning line, and the time it would save. Not beside
    DeepSpeed ZeRO-3, whose hooks' own warning says the same."""
    r, work = ctx.request, ctx.compute.workload
    if work is None or o.timing.tokens_per_second is None or o.stage is Sharding.ZERO3:
        return []
    step = step_time(work, o.gpu, o.count, o.stage, r.offload, r.nodes)
    if step.launch_floor_s <= step.compute_s:
        return []
    arch = ctx.model.architecture
    for factor in LAUNCH_BOUND_TIP_FACTORS:
        batch = r.micro_batch * factor
        if batch > MAX_MICRO_BATCH:
            continue
        longer = r.model_copy(update={"micro_batch": batch})
        gb = footprint(arch, longer).on_card(o.gpu.gpus_per_node).per_gpu(
            o.stage, o.count, r.offload).total
        if gb > USABLE_FRACTION * o.capacity_gb:
            continue
        saving = _time_saved(ctx, o, workload(arch, longer))
        if saving < LAUNCH_BOUND_TIP_SHARE:
            return []
        idle = 1.0 - step.compute_s / step.launch_floor_s
        accum = (f", and 1/{factor} of the accumulation to keep the global batch"
                 if r.grad_accum % factor == 0 else
                 f"; the global batch grows {factor}x, so there are fewer optimizer steps")
        return [
            f"At micro-batch {r.micro_batch} the host's kernel launches set the pace on "
            f"{o.count}x {o.gpu.id}: the GPU waits on them {idle:.0%} of each step. "
            f"Micro-batch {batch} (`batch {batch}`{accum}) would take about {saving:.0%} "
            f"less time, at {gb:.1f} GB per GPU ({gb / o.capacity_gb:.0%} of the card)."
        ]
    return []


def _context_parallel_tip(ctx: Context, o: Option) -> list[str]:
    """Several cards held up by one sequence's activations, which sharding cannot split."""
    r = ctx.request
    if r.mode is not Mode.DETAILED or r.context_parallel > 1 or o.count < 2:
        return []
    share = o.memory.activations / o.capacity_gb  # of the card, not of what is used
    if share < CONTEXT_PARALLEL_TIP_SHARE:
        return []
    what = (f"One {r.seq_len:,}-token sequence's activations" if r.micro_batch == 1 else
            f"A micro-batch's activations ({r.micro_batch} x {r.seq_len:,} tokens)")
    return [
        f"{what} take {o.memory.activations:.1f} GB ({share:.0%} of the card) on each of "
        f"the {o.count} cards, whatever their number: sharding "
        "splits weights and states, not them. Context parallelism (`cp 2`, `cp 4`: ring "
        "attention, as torchtitan and axolotl run it) splits the sequence over the cards."
        + (" So does a smaller micro-batch, with more accumulation." if r.micro_batch > 1 else "")
    ]


def _bf16_adapters_tip(ctx: Context, o: Option) -> list[str]:
    """PEFT's FP32 adapters slowing a LoRA run: what keeping them in BF16 would save."""
    r, work = ctx.request, ctx.compute.workload
    if work is None or o.timing.tokens_per_second is None or not work.adapter_casts[0]:
        return []
    if fp32_residual_stream(r, o.stage):
        return []  # TRL's k-bit path: BF16 adapters already, the FP32 stream costs the same
    cast_bytes, cast_kernels = work.adapter_casts
    bf16 = replace(work, dequant_bytes=work.dequant_bytes - cast_bytes,
                   kernels=work.kernels - cast_kernels, adapter_casts=(0.0, 0.0))
    saving = _time_saved(ctx, o, bf16)
    if saving < BF16_ADAPTERS_TIP_SHARE:
        return []
    return [
        f"PEFT keeps the LoRA weights in FP32 and casts every adapted layer's input to "
        f"them: about {saving:.0%} of the time on {o.count}x {o.gpu.id}. BF16 adapters "
        f"(`bf16 adapters`: `get_peft_model(..., autocast_adapter_dtype=False)`) skip "
        f"the casts."
    ]


def _pure_bf16_tip(ctx: Context, o: Option) -> list[str]:
    """An ``hf`` full fine-tune counted as transformers 4 ran it (FP32 weights under the
    Trainer's BF16 autocast; AdamW: 16 B a parameter) where transformers 5 loads a BF16
    checkpoint as BF16 (``from_pretrained``'s ``dtype="auto"`` default) and the optimizer
    keeps BF16 states (none for SGD; 8-bit AdamW's stay 8-bit): what saying ``pure bf16``
    would take off each card. Not under ZeRO, whose FP32 partition DeepSpeed keeps either
    way."""
    r = ctx.request
    if (
        r.framework is not Framework.HF
        or r.effective_method is not Method.FULL
        or "state_precision" in r.model_fields_set  # hf's profile never picks pure BF16
        or r.precision.value != "bf16"
        or o.stage.is_zero
    ):
        return []
    fp32, bf16 = OPTIMIZER_BYTES[r.optimizer.value], OPTIMIZER_BYTES_PURE_BF16[r.optimizer.value]
    kept = bf16 / fp32 if fp32 else 1.0  # a stateless optimizer (plain SGD) saves none
    saving = o.memory.master_weights + o.memory.optimizer * (1.0 - kept)
    if saving < PURE_BF16_TIP_SHARE * o.per_gpu_gb:
        return []
    states = kept < 1.0  # FP32 states that pure BF16 halves (not SGD's none, 8-bit's own)
    return [
        "Counted as transformers 4 ran a full fine-tune: FP32 weights under the Trainer's "
        "BF16 autocast" + (", FP32 optimizer states" if states else "") + ". transformers 5 "
        "loads a BF16 checkpoint as BF16"
        + (" and the optimizer then keeps BF16 states" if states else "")
        + f", about {saving:,.0f} GB less on each of {o.count}x {o.gpu.id}: say `pure bf16` "
        "if that is your run."
    ]


def _single_device_recipe_tip(ctx: Context, o: Option) -> list[str]:
    """A torchtune full fine-tune on one card, counted with the AdamW the user did not
    name: torchtune's single-device full recipes ship ``bitsandbytes.optim.PagedAdamW8bit``
    with ``optimizer_in_bwd: True`` (recipes/configs/llama3_1/8B_full_single_device.yaml,
    llama3_2/3B_full_single_device.yaml), so their runs hold 8-bit moments and about one
    layer's gradients: what saying so would take off the card. Only without accumulation,
    which the optimizer step in backward does not allow."""
    r = ctx.request
    said = r.model_fields_set
    if (
        r.framework is not Framework.TORCHTUNE
        or r.effective_method is not Method.FULL
        or o.count != 1
        or r.grad_accum > 1
        or r.optimizer is not Optimizer.ADAMW
        or {"optimizer", "optimizer_in_backward"} & said
    ):
        return []
    recipe = r.model_copy(update={"optimizer": Optimizer.ADAMW_8BIT,
                                  "optimizer_in_backward": True})
    fp = footprint(ctx.model.architecture, recipe)
    saving = o.per_gpu_gb - fp.per_gpu(o.stage, o.count, r.offload).total
    if saving < SINGLE_DEVICE_RECIPE_TIP_SHARE * o.per_gpu_gb:
        return []
    return [
        "Counted with AdamW: torchtune's single-device full recipes ship bitsandbytes' "
        f"PagedAdamW8bit stepped in backward (`optimizer_in_bwd: True`), about {saving:,.0f} "
        f"GB less on 1x {o.gpu.id}: say `adamw-8bit optimizer-in-backward` if that is your "
        "run."
    ]


def _native_attention_tip(ctx: Context, o: Option) -> list[str]:
    """FlashAttention-2 holding a Hopper or Blackwell card back: what ``fa3`` would save."""
    r, work = ctx.request, ctx.compute.workload
    fa2 = o.gpu.flash_attention_tflops
    if (
        work is None
        or fa2 is None
        or o.timing.tokens_per_second is None
        or not r.flash_attention
        or r.native_attention
        or framework_picks_native_attention(o.gpu, work.cudnn_attention_from)
    ):
        return []
    saving = _time_saved(ctx, o, replace(work, native_attention=True))
    if saving < NATIVE_ATTENTION_TIP_SHARE:
        return []
    blackwell = (o.gpu.compute_capability or 0.0) >= 10.0
    kernels = (
        "cuDNN attention or FlashAttention-4 (`cudnn attention`)"
        if blackwell
        else "FlashAttention-3 or cuDNN attention (`fa3`)"
    )
    return [
        f"On {o.gpu.id}, FlashAttention-2 (what `flash_attention_2` and PyTorch's SDPA "
        f"before 2.11 run) "
        f"reaches about {fa2:,.0f} TFLOPs, {fa2 / o.gpu.train_tflops:.0%} of the card's peak: "
        f"{kernels} would cut the time by about {saving:.0%}."
    ]


def _zero3_hooks_warning(ctx: Context, o: Option) -> list[str]:
    """DeepSpeed ZeRO-3's hooks setting the pace: small models, short micro-batches."""
    work = ctx.compute.workload
    if work is None or o.stage is not Sharding.ZERO3:
        return []
    r = ctx.request
    share = zero3_hook_share(work, o.gpu, o.count, r.offload, r.nodes)
    if share < ZERO3_HOOKS_WARNING_SHARE:
        return []
    instead = (
        "Dropping `zero3` (one GPU needs no sharding)"
        if o.count == 1
        else "`zero2` (if the weights fit unsharded) or FSDP"
    )
    return [
        f"DeepSpeed ZeRO-3's per-parameter hooks take about {share:.0%} of each step on "
        f"{o.count}x {o.gpu.id} (host time for {work.zero3_host_ops:,.0f} calls per "
        f"micro-batch). {instead}, or longer micro-batches, would be faster."
    ]


def _whole_layer_checkpointing_tip(ctx: Context, o: Option) -> list[str]:
    """A selectively checkpointed run over the planning line on ``o``: what whole-layer
    checkpointing (torchtitan's ``mode = "full"``) would hold per card, and the time its
    recompute adds."""
    r = ctx.request
    if not (r.selective_checkpointing and r.grad_checkpointing) or o.fits:
        return []
    arch = ctx.model.architecture
    full = r.model_copy(update={"selective_checkpointing": False})
    gb = footprint(arch, full).per_gpu(o.stage, o.count, r.offload).total
    if gb >= o.per_gpu_gb or gb > BAND_FULL * o.capacity_gb:
        return []  # no saving, or whole layers do not fit the card either
    line = (
        f"Selective checkpointing keeps {o.per_gpu_gb:.1f} GB per GPU on {o.count}x "
        f"{o.gpu.id}; whole-layer checkpointing (`ckpt`, torchtitan's `mode = \"full\"`) "
        f"keeps {gb:.1f} GB ({gb / o.capacity_gb:.0%} of the card)"
    )
    if ctx.compute.workload is not None:  # timed: what the recompute costs
        now = step_time(ctx.compute.workload, o.gpu, o.count, o.stage, r.offload, r.nodes)
        slower = step_time(workload(arch, full), o.gpu, o.count, o.stage, r.offload, r.nodes)
        line += f", about {now.tokens_per_second / slower.tokens_per_second - 1:.0%} slower"
    return [line + "."]


def _arm_host_tip(o: Option) -> list[str]:
    """A card on an Arm host (Grace: GH200, GB200), whose Python packages with compiled
    code need aarch64 builds."""
    if o.gpu.host_arch != "aarch64":
        return []
    return [
        f"{o.gpu.id}'s host CPU is Arm (aarch64, NVIDIA Grace): check that your stack's "
        "compiled packages (bitsandbytes, flash-attn, DeepSpeed's ops) have aarch64 builds "
        "for your CUDA before renting, or build them there."
    ]
