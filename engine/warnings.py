"""Warnings and headline notes that travel with every estimate.

Warnings are things the user should act on or distrust; notes are short facts the
headline needs (which canonical model a bare size meant, that a model is synthetic, that
no method was given, what whole nodes cost). The assumptions, which say which settings
produced each figure, are :mod:`engine.assumptions`.
"""

from __future__ import annotations

from collections.abc import Callable

from engine.accuracy import uncertainty
from engine.activations import logits_bytes_per_token
from engine.card_tips import card_tips, hsdp_holds
from engine.choices import Framework, Method, Mode, ModelPick, Sharding, Solve
from engine.collectives import group_nodes, link_bytes_per_s, named_node_cards, nodes_for
from engine.compute import uses_flat_rule
from engine.constants import (
    COMM_WARNING_SHARE,
    FEW_OPTIMIZER_STEPS,
    GB,
    GPTQ_BITS,
    GPUS_PER_NODE,
    LARGE_LOGITS_GB,
    LOGITS_BYTES,
    LOGITS_BYTES_HF,
    LONG_SEQ_WARNING,
    SMALL_DATASET_TOKENS,
    USABLE_FRACTION,
)
from engine.fit import Option, not_recommended_reason
from engine.model_caveats import precision_caveat, time_caveat
from engine.profiles import (
    profile,
)
from engine.refused_settings import optimizer_in_backward_accumulation
from engine.request import Request
from engine.specs import Catalog
from engine.warning_context import Context
from engine.wording import machine_sizes_text, share_text


def _smaller_run(r: Request) -> str:
    """``QLoRA, a shorter sequence or `offload```: the memory savers a run has not used."""
    tries = [] if r.effective_method is Method.QLORA else ["QLoRA"]
    tries.append("a shorter sequence")
    if not r.grad_checkpointing:
        tries.append("`ckpt`")
    if r.context_parallel == 1 and r.seq_len >= LONG_SEQ_WARNING:
        tries.append("`cp 2` over the cards")
    if not r.offload:
        tries.append("`offload`")
    return ", ".join(tries[:-1]) + f" or {tries[-1]}" if len(tries) > 1 else tries[0]


def warnings(ctx: Context) -> list[str]:
    """Everything the user should know before trusting the numbers, in the order of
    :data:`_CHECKS`: what does not fit first, the uncertainty band last."""
    out: list[str] = []
    for check in _CHECKS:
        found = check(ctx)
        if isinstance(found, str):
            out.append(found)
        elif found:
            out += found
    return out


def _qlora_one_device(ctx: Context) -> str | None:
    """A QLoRA plan on several cards for a framework that quantizes on one only."""
    r, lead = ctx.request, ctx.lead
    if (r.effective_method is not Method.QLORA or not profile(r.framework).qlora_one_device
            or lead is None or lead.count <= 1):
        return None
    return (
        f"{profile(r.framework).short} refuses QLoRA on more than one card (its finetune "
        "scripts raise NotImplementedError for quantization with several devices): this "
        f"plan is what {lead.count} cards would hold under FSDP. Under LitGPT use one card "
        "that holds the run, LoRA, or `hf` for QLoRA over several cards."
    )


def _fits_nowhere(ctx: Context) -> str | None:
    """No catalog card holds the run (nor the card the user named)."""
    r, lead = ctx.request, ctx.lead
    if ctx.fits_anywhere or (lead is not None and lead.fits):
        return None
    return (
        "No card in the catalog holds this run"
        + (" without sharding: try `zero3`." if r.sharding is Sharding.NONE else ".")
        + f" Try {_smaller_run(r)}."
    )


def _named_card(ctx: Context) -> str | None:
    """The card the user named does not hold the run, or holds it above the planning
    line (the ``tight`` band)."""
    r, lead = ctx.request, ctx.lead
    if lead is None or not lead.named:
        return None
    if not lead.runs:
        need = "no count of them would."
        if lead.needed:
            need = f"{lead.needed}x {lead.gpu.id} would" + (
                ", tight: no count holds it within the 85% planning line."
                if lead.needed_tight else ".")
        maybe = ""
        if lead.timing.gpu_hours is not None:  # within the memory band: timed all the same
            maybe = (" It is over by less than the estimate's own memory uncertainty, so it "
                     "may still start: its time is in the cards table.")
        return (
            f"{lead.count}x {lead.gpu.id} cannot hold this run "
            f"({lead.per_gpu_gb:.1f} GB per GPU of {lead.capacity_gb:.1f} GB); {need}{maybe}"
            + _hsdp_node_hint(ctx, lead) + _offload_zero3_hint(ctx, lead)
        )
    if lead.fits:
        return None
    band = uncertainty(r).memory
    if lead.utilization * (1 - band) > USABLE_FRACTION:
        # Even the low end of the estimate's own memory band is past the planning line.
        runs = (f"It may well not start: the estimate's own memory band is ±{band:.0%}, "
                f"and the planning line is {USABLE_FRACTION:.0%}; ")
    else:
        runs = (f"It runs with little headroom (the planning line is {USABLE_FRACTION:.0%}): "
                "a longer batch or allocator fragmentation can push it over; ")
    return (
        f"Tight: {share_text(lead.utilization)} of {lead.gpu.id}'s memory. {runs}"
        + (f"{lead.needed}x would leave room." if lead.needed and not lead.needed_tight else
           "checkpointing helps." if not r.grad_checkpointing else
           "a shorter sequence or a smaller micro-batch helps.")
    )


def _count_not_honoured(ctx: Context) -> str | None:
    """A count named for no card in particular that no card holds the run on."""
    r, lead = ctx.request, ctx.lead
    if r.gpu is not None or r.gpu_count is None or lead is None or lead.count == r.gpu_count:
        return None
    return (
        f"No card holds this run on exactly {r.gpu_count} card(s) within "
        f"{USABLE_FRACTION:.0%} of its memory; these are the fewest that do, on the "
        f"machines clouds rent. Name a "
        f"card (`{r.gpu_count}x {lead.gpu.id}`) to see it at your count."
    )


def _past_positions(ctx: Context) -> str | None:
    """A sequence longer than the model's learned position table."""
    r, positions = ctx.request, ctx.model.architecture.learned_positions
    if not positions or r.seq_len <= positions:
        return None
    return (
        f"{ctx.model.name}'s learned position table has {positions:,} rows, so sequence "
        f"{r.seq_len:,} cannot run as asked: shorten it (`seq 1024`)."
    )


def _checkpointing_off(ctx: Context) -> str | None:
    """A long sequence without gradient checkpointing."""
    r = ctx.request
    if r.grad_checkpointing or r.seq_len < LONG_SEQ_WARNING or r.mode is not Mode.DETAILED:
        return None
    return (
        f"Gradient checkpointing is off at sequence {r.seq_len:,}: activations dominate; "
        "turn it on (`ckpt`)."
    )


def _float8(ctx: Context) -> str | None:
    """How ``float8`` is counted, or that it does not apply."""
    r = ctx.request
    if not r.float8 or r.mode is not Mode.DETAILED:
        return None
    if r.effective_method is Method.QLORA:
        return "float8 does not apply to QLoRA's 4-bit base: timed at 16-bit speed."
    return (
        "float8: the decoder's linears multiply in FP8 with dynamic scales, timed at "
        "the card's rated FP8/BF16 ratio and not fitted on measured float8 runs; memory is "
        "counted as without it (16-bit weights and saved activations)."
    )


def _lead_card(ctx: Context) -> list[str]:
    """What the headline's card and count imply (:func:`_card_warnings`)."""
    return [] if ctx.lead is None else _card_warnings(ctx, ctx.lead)


def _host_memory(ctx: Context) -> str | None:
    """Under CPU offload: the host memory it needs, per node."""
    r, lead = ctx.request, ctx.lead
    if not r.offload or r.mode is not Mode.DETAILED:
        return None
    if lead is not None:
        stage = lead.stage
    else:
        stage = Sharding.ZERO3 if r.sharding is Sharding.AUTO else r.sharding
    count = lead.count if lead is not None else 1
    # The footprint is one tensor-parallel card's share: sharded, each share is spread
    # over its data-parallel ranks; unsharded, every card offloads its own whole share.
    # HSDP shards within a group and repeats the group: each replica offloads its state.
    sharded = stage.shards_weights or stage.is_zero
    copies = r.tensor_parallel if sharded else count
    if stage is Sharding.HSDP and lead is not None:
        copies *= max(1, lead.count // ctx.hsdp_group_cards)
    host = ctx.footprint.offloaded_gb(stage) * copies
    hosts = nodes_for(count, r.nodes, lead.gpu.host_cards if lead else GPUS_PER_NODE)
    replicas = count // (r.tensor_parallel * r.context_parallel)
    ddp = "" if sharded or replicas <= 1 else (
        f" DDP itself offloads nothing: each of the {replicas} replicas is counted offloading "
        "a whole copy, as ZeRO-Offload does on one card; `zero2 offload` shards it over them.")
    return (
        f"CPU offload{'' if r.offload_weights else ' of the optimizer'} needs about "
        f"{_gb(host)} GB of host memory in total: {_gb(host / hosts)} GB of RAM on each "
        f"of {hosts} host(s), plus pinned buffers; each step moves gradients and weights "
        "over PCIe." + ddp
    )


def _gb(value: float) -> str:
    """``130``, ``2.4``, ``0.05``: GB with the figures a small amount needs."""
    return f"{value:,.0f}" if value >= 10 else f"{value:.2g}"


def _fp8_weights(ctx: Context) -> str | None:
    """FP8 weights are timed at BF16 speed; ``float8`` is the other reading."""
    r = ctx.request
    if r.precision.value != "fp8" or r.mode is not Mode.DETAILED:
        return None
    return (
        "FP8 base weights: time is modeled at BF16 matmul speed; for FP8 matmuls with "
        "16-bit weights (torchao float8, Transformer Engine) say `float8`."
    )


def _small_batch_flat_rule(ctx: Context) -> str | None:
    """Micro-batch 1 on a small dataset under a flat MFU, which assumes a busy GPU."""
    r = ctx.request
    tokens = r.trained_tokens
    if not uses_flat_rule(r) or r.micro_batch != 1 or tokens is None:
        return None
    if tokens >= SMALL_DATASET_TOKENS:
        return None
    return (
        f"Micro-batch 1 on {tokens / 1e6:.1f}M trained tokens wastes GPU utilization: "
        "the MFU assumed here is optimistic."
    )


def _gptq(ctx: Context) -> str | None:
    """``gptq`` outside QLoRA, or how a GPTQ base is counted."""
    r = ctx.request
    if not r.gptq:
        return None
    if r.effective_method is not Method.QLORA:
        return (
            f"`gptq` describes QLoRA's 4-bit base; this {r.effective_method.value} estimate "
            f"keeps a {r.precision.value} base. Say `qlora gptq` for a GPTQ checkpoint."
        )
    if r.mode is not Mode.DETAILED:
        return None
    return (
        f"GPTQ base: its memory is counted at {GPTQ_BITS:.3g} bits per weight; its "
        "dequantization speed (auto-gptq kernels) is timed as bitsandbytes' NF4, which it "
        "may not match."
    )


def _model_time(ctx: Context) -> list[str]:
    """Known ways this run's time differs from the estimate (timed replies only): the
    model's measured one, and FP32 weights timed under autocast."""
    if ctx.compute.flops is None or ctx.compute.workload is None:
        return []
    found = (time_caveat(ctx.model, ctx.request), precision_caveat(ctx.request))
    return [caveat for caveat in found if caveat is not None]


def _mixture_of_experts(ctx: Context) -> str | None:
    """How an MoE model's experts are held and timed."""
    moe = ctx.model.architecture.moe
    if moe is None:
        return None
    method = ctx.request.effective_method
    trained = "trained" if method is Method.FULL else "frozen under the adapters"
    r = ctx.request
    physical = r.mode is Mode.DETAILED and not uses_flat_rule(r)  # kernels are timed
    launches = (
        f"; {profile(r.framework).short} runs the experts one after another, so every "
        "expert a micro-batch reaches launches its own kernels, which can bound the step"
        if physical and profile(r.framework).expert_loop else "")
    if launches and r.framework is Framework.HF:
        launches += (" (transformers 4's loop, as published runs ran it; transformers 5 "
                     "with PyTorch 2.9+ runs them as grouped matmuls by default, about as "
                     "`torchtune` times them)")
    return (
        f"MoE model: all {moe.num_experts} experts' weights are held ({trained}), "
        "sharded with the rest under ZeRO-3/FSDP: expert parallelism, which would place "
        f"whole experts per card, is not modeled. Time counts the {moe.experts_per_token} "
        "experts each token is routed to, as if routing were even (no all-to-all, no "
        f"load imbalance){launches}."
    )


def _napkin(ctx: Context) -> str | None:
    """What napkin mode leaves out."""
    if ctx.request.mode is not Mode.NAPKIN:
        return None
    return (
        "Napkin mode: flat bytes per parameter only; activations, overhead and "
        "communication are not included."
    )


def _band(ctx: Context) -> str:
    """The measured uncertainty of runs of this kind (:func:`engine.accuracy.uncertainty`)."""
    moe = ctx.model.architecture.moe is not None
    return (
        f"Planning estimate: {uncertainty(ctx.request, moe).text()}. Data pipeline stalls and "
        "failed runs are not modeled."
    )


def _few_steps(ctx: Context) -> str | None:
    """Where the cards and batch shown take the whole run in fewer than
    ``FEW_OPTIMIZER_STEPS`` optimizer steps (sequences per step = micro-batch x
    accumulation x data-parallel ranks) although the data would give that many at one
    sequence a step: what a step holds and how to keep the steps."""
    r, lead = ctx.request, ctx.lead
    tokens = r.trained_tokens
    if lead is None or tokens is None or r.mode is Mode.NAPKIN:
        return None
    per_step = r.sequences_per_step(lead.count) * r.seq_len
    steps = tokens / per_step
    if steps >= FEW_OPTIMIZER_STEPS or tokens / r.seq_len < FEW_OPTIMIZER_STEPS:
        return None  # enough steps, or a dataset too small for any batch to help
    fix = "Fewer cards or a smaller batch" if r.micro_batch * r.grad_accum > 1 else "Fewer cards"
    return (
        f"{lead.count}x {lead.gpu.id} at batch {r.micro_batch} x accumulation {r.grad_accum}"
        f" take {per_step:,} tokens an optimizer step, so the {tokens:,.0f} trained tokens "
        f"are only {max(steps, 1):,.0f} step{'s' if steps >= 1.5 else ''}: fine-tunes "
        f"usually take hundreds. {fix} keep more steps; the time here is for the batch as "
        "stated."
    )


def _logits_warning(ctx: Context) -> list[str]:
    """Large logits: what the framework's loss keeps, and what would change it."""
    r = ctx.request
    if r.mode is not Mode.DETAILED or r.fused_ce:
        return []
    # One card's logits: its ring share of the sequence, its share of a vocabulary-parallel
    # loss under tensor parallelism.
    local_seq = -(-r.seq_len // r.context_parallel)
    vocab = ctx.model.architecture.vocab_size
    logits = r.micro_batch * local_seq * vocab / r.tensor_parallel
    one_copy = LOGITS_BYTES * logits / GB
    if one_copy < LARGE_LOGITS_GB:
        return []
    kept = logits_bytes_per_token(ctx.model.architecture, r) / vocab * logits / GB
    if r.framework is Framework.GENERIC and not r.hf_loss:
        extra = (LOGITS_BYTES_HF - LOGITS_BYTES) * logits / GB
        return [
            f"The logits take {one_copy:.1f} GB as one FP32 copy; on Hugging Face's stack "
            f"(`hf`: transformers, TRL, axolotl) the loss keeps about {extra:.1f} GB more, "
            "and a fused cross-entropy (Liger, Unsloth) removes them (`fused-ce`)."
        ]
    if kept < LARGE_LOGITS_GB:
        return []  # the framework's own loss keeps little (Unsloth's fused loss, none)
    return [
        f"The loss keeps {kept:.1f} GB of logits ({profile(r.framework).label}); a fused "
        "cross-entropy (Liger, Unsloth) removes them (`fused-ce`)."
    ]


def _tensor_parallel_warnings(ctx: Context) -> list[str]:
    """What the tensor- and context-parallel degrees cannot do as asked."""
    r, arch = ctx.request, ctx.model.architecture
    degree, out = r.tensor_parallel, []
    if r.context_parallel > 1 and r.mode is Mode.DETAILED and not r.flash_attention:
        out.append(
            "Context parallelism's ring attention runs FlashAttention or SDPA blocks: "
            "without them (`no-flash`) it does not run as asked."
        )
    if degree <= 1:
        return out
    if r.mode is Mode.NAPKIN:
        return [f"Napkin mode divides memory evenly over the cards: `tp {degree}` changes nothing."]
    if arch.num_heads % degree or arch.num_kv_heads % degree:
        out.append(
            f"{ctx.model.name} has {arch.num_heads} attention heads ({arch.num_kv_heads} "
            f"key/value); tensor parallel {degree} does not divide them, so frameworks refuse "
            "it or replicate the key/value heads (not counted here): pick a degree that divides "
            "both."
        )
    lead = ctx.lead
    per_node = named_node_cards(r) or (
        lead.gpu.gpus_per_node if lead is not None else GPUS_PER_NODE
    )
    count = lead.count if lead is not None else degree
    if degree > per_node:
        out.append(
            f"Tensor parallel {degree} spans nodes ({per_node} card{'s' if per_node > 1 else ''}"
            " each): every layer's "
            "collectives cross the network. Keep it within one node and shard data over nodes."
        )
    elif group_nodes(degree, count, per_node) > 1:
        out.append(
            f"Tensor parallel {degree} does not divide a node's {per_node} cards: some groups "
            "straddle two nodes, and their collectives cross the network (counted), setting "
            "every group's pace. Pick a degree that divides the node."
        )
    return out


def _card_warnings(ctx: Context, o: Option) -> list[str]:
    r, out = ctx.request, []
    group = ctx.hsdp_group_cards if r.sharding is Sharding.HSDP else o.count
    if o.count % group:
        out.append(
            f"`hsdp` needs equal shard groups (HYBRID_SHARD's mesh): {o.count} cards leave "
            f"{o.count % group} over groups of {group}, and the estimate counts every card as "
            f"in one. Name a count they divide ({o.count // group * group} or "
            f"{(o.count // group + 1) * group}) or say `fsdp`."
        )
    if r.float8 and r.mode is Mode.DETAILED and not o.gpu.fp8_tflops:
        out.append(
            f"{o.gpu.name} has no FP8 tensor cores (torchao's float8 needs compute capability "
            "8.9+): its matmuls run at BF16 speed, with the casts on top."
        )
    reason = not_recommended_reason(o.gpu)
    if reason is not None:
        out.append(f"{o.gpu.name}: not recommended. {reason[0].upper()}{reason[1:]}.")
    elif (
        o.gpu.flash_attention_2 == "partial"
        and r.flash_attention
        and o.gpu.flash_attention_tflops is None  # else its measured rate is modeled
    ):
        out.append(
            f"{o.gpu.name} has partial FlashAttention-2 support (PyTorch SDPA/cuDNN attention "
            "works): attention speed may differ from the model."
        )
    accumulates = ctx.footprint.accumulates  # whole gradients under no_sync()
    if o.count > 1 and accumulates and r.mode is Mode.DETAILED and r.sharding.is_fsdp:
        whole = ctx.footprint.whole_gradients
        out.append(
            f"FSDP accumulates {r.grad_accum} micro-batches inside no_sync(), which keeps "
            f"whole, unsharded gradients on every GPU ({whole:.1f} GB). Syncing every "
            "micro-batch keeps them sharded (Accelerate's `sync_each_batch`)."
        )
    if o.count > 1 and r.mode is Mode.DETAILED and not uses_flat_rule(r):
        nodes = nodes_for(o.count, r.nodes, o.gpu.gpus_per_node)
        ranks = max(1, o.count // r.tensor_parallel)  # the data-parallel ring's cards
        link = link_bytes_per_s(o.gpu, ranks, nodes) / 1e9
        where = f"{nodes} nodes (between nodes at {link:,.0f} GB/s per GPU)" if nodes > 1 else (
            f"one node ({o.gpu.fabric}, {link:,.0f} GB/s per GPU"
            + ("; no peer-to-peer, through host memory)" if not o.gpu.p2p else ")")
        )
        share = o.timing.comm_overhead
        if share >= COMM_WARNING_SHARE:
            out.append(
                f"{o.count}x {o.gpu.id} on {where}: about {share:.0%} of each step waits on "
                f"communication. {_comm_remedy(o.stage, nodes > 1 and hsdp_holds(ctx, o))} "
                "Fewer, larger cards or a "
                "faster link would help too."
            )
    return out + card_tips(ctx, o)


def _comm_remedy(stage: Sharding, hsdp_helps: bool) -> str:
    """What amortizes ``stage``'s traffic (:func:`engine.collectives.data_parallel_seconds`
    says when each stage sends); ``hsdp_helps``: the run spans nodes and ``hsdp`` holds it
    on these cards (:func:`engine.card_tips.hsdp_holds`)."""
    if stage in (Sharding.ZERO3, Sharding.FSDP, Sharding.HSDP):
        hsdp = " or `hsdp` (its gathers stay inside a node)" if (
            hsdp_helps and stage is not Sharding.HSDP) else ""
        return (f"Every micro-batch gathers the weights again: a larger micro-batch{hsdp} "
                "sends less per token.")
    if stage is Sharding.ZERO2:
        return ("Gradients are reduced every micro-batch: a larger micro-batch sends less per "
                "token.")
    return ("Gradients are reduced once per step: more accumulation (`accum 8`) sends less "
            "per token.")


def _offload_zero3_hint(ctx: Context, lead: Option) -> str:
    """Under ``offload`` without sharding, where ZeRO-3's offload (the weights on the CPU
    too: DeepSpeed's ``offload_param``, FSDP's ``CPUOffload``) holds the run on the cards
    named: that it does, and at how much per GPU."""
    r = ctx.request
    if not r.offload or r.sharding not in (Sharding.AUTO, Sharding.NONE):
        return ""
    if lead.stage is not Sharding.NONE:
        return ""
    per_gpu = ctx.footprint.per_gpu(Sharding.ZERO3, lead.count, True).total
    if per_gpu > USABLE_FRACTION * lead.capacity_gb:
        return ""
    return (f" Without sharding, `offload` moves only the optimizer: `zero3 offload` moves "
            f"the weights too and holds it on {lead.count}x at {per_gpu:.1f} GB per GPU.")


def _hsdp_node_hint(ctx: Context, lead: Option) -> str:
    """Under ``hsdp``, where its shard group holds fewer of the cards than the run has:
    that its state shards within a group only, and ``fsdp`` over every rank."""
    group = ctx.hsdp_group_cards
    if ctx.request.sharding is not Sharding.HSDP or group >= lead.count:
        return ""
    return (f" `hsdp` shards only within a node ({group} of these {lead.count} "
            f"{lead.gpu.id} cards): `fsdp` shards over every one.")


def notes(ctx: Context, catalog: Catalog) -> list[str]:
    """Short facts the headline shows."""
    r, m, out = ctx.request, ctx.model, []
    sizes = [size for size, model_id in catalog.sizes.items() if model_id == m.id]
    if r.solve is Solve.MODEL:
        pass  # the model is the answer, named in the headline
    elif sizes and r.model_pick is None:  # a bare size (or not recorded)
        out.append(f"`{sizes[0]}` means {m.name} here; name another model to change it.")
    elif r.model_pick is ModelPick.FAMILY:
        out.append(f"The family alone means its flagship, {m.name}; name a size to change it.")
    elif r.model_pick is ModelPick.STAND_IN:
        out.append(f"That name is counted as {m.name}, a checkpoint of the same architecture "
                   "(the same memory and time); name another model to change it.")
    elif r.model_pick is ModelPick.FAMILY_SIZE:
        out.append(f"That means {m.name}, the newest generation of that size; name another "
                   "version to change it.")
    if m.synthetic:
        out.append(
            f"{m.name} is synthetic: no catalog model has that size, so a Llama-style "
            "architecture was scaled to it."
        )
    if r.method is None:
        uses = ("LoRA" if r.effective_method is Method.LORA else
                f"a full fine-tune, as {r.framework.value}'s recipes train every weight")
        out.append(f"No method given: the headline uses {uses}; the what-ifs compare all "
                   "three.")
    whole = _whole_nodes(ctx)
    if whole is not None:
        out.append(whole)
    return out


def _whole_nodes(ctx: Context) -> str | None:
    """Where the cards the reply prices leave a machine part-used (19 cards on nodes of
    8; 7 cards, rented as a machine of 8; GB200's trays of 4), the cost pays for the whole
    machines (``Timing.billed_cards``): say so, and how to plan on all their cards. A
    count the user named, or one rounding to a machine would split into uneven groups or
    rings, is such a count; the ranked ones are rounded up to machines already."""
    o = ctx.priced
    whole = None if o is None else o.timing.billed_cards
    if o is None or whole is None:
        return None
    count, per_node = o.count, o.gpu.gpus_per_node
    if o.gpu.rent_step is not None:
        where = f"{o.gpu.id} is rented {o.gpu.rent_step} at a time"
    elif count > per_node:
        where = (f"{count} cards span {nodes_for(count, None, per_node)} nodes of {per_node}, "
                 "and clouds rent whole nodes")
    else:
        where = f"clouds rent machines of {machine_sizes_text(per_node)} {o.gpu.id} cards"
    use = (f"; ask for `{whole}x {o.gpu.id}` to use them all"
           if whole % ctx.footprint.card_step == 0 else "")
    return f"{where}: the cost pays for {whole} cards ({whole - count} idle){use}."


_CHECKS: tuple[Callable[[Context], str | list[str] | None], ...] = (
    _fits_nowhere,
    _named_card,
    _count_not_honoured,
    _past_positions,
    optimizer_in_backward_accumulation,
    _checkpointing_off,
    _logits_warning,
    _tensor_parallel_warnings,
    _float8,
    _lead_card,
    _qlora_one_device,
    _host_memory,
    _fp8_weights,
    _few_steps,
    _small_batch_flat_rule,
    _gptq,
    _model_time,
    _mixture_of_experts,
    _napkin,
    _band,
)
"""The warnings in the order a reply lists them."""
