"""Framework profiles: facts of a training stack that its users do not know they chose.

A user who types ``8b lora trl`` knows the model, the method and that they use TRL.
They rarely know that TRL's loss keeps three FP32-sized copies of the logits, that
the Trainer keeps FP32 master weights and optimizer moments, or that its example
configs set LoRA dropout 0.05. A :class:`Profile` carries those facts, each sourced
in ``engine.framework_facts``; :func:`resolve` applies them to a
request for every field the user did not set (``Request.model_fields_set``), so the
words a user types always win.

``generic`` keeps the specification's assumptions (one FP32 copy of the logits, FP32
master weights and states, no dropout), so its worked figures hold.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

from engine.architecture import Architecture
from engine.choices import Framework, Method, Precision, Sharding, StatePrecision
from engine.datasets import sequence_for_samples
from engine.framework_facts import (
    FSDP_ACCUMULATES_UNSHARDED,
    FSDP_FROZEN_GRADS,
    FSDP_ROOT_UNIT_GATHERED,
    PROFILE_ACTIVATION_OFFLOAD,
    PROFILE_ALWAYS_SHARDS,
    PROFILE_CUDNN_ATTENTION_FROM,
    PROFILE_DEEPSPEED_ZERO,
    PROFILE_DEQUANT_BYTES,
    PROFILE_EAGER_LOGITS_BYTES,
    PROFILE_EAGER_NF4,
    PROFILE_ELEMENTWISE_SCALE,
    PROFILE_EXPERT_LOOP,
    PROFILE_FOREACH_ADAMW,
    PROFILE_FP32_ADAPTERS,
    PROFILE_KBIT_FP32_NORMS,
    PROFILE_LOGITS_BYTES,
    PROFILE_LORA_DROPOUT,
    PROFILE_OFFLOAD_GRADIENTS,
    PROFILE_PURE_BF16,
    PROFILE_QLORA_ONE_DEVICE,
    PROFILE_QUANTIZED_HEAD,
    PROFILE_QUANTIZED_SAVES_INPUTS,
    PROFILE_SELECTIVE_CHECKPOINTING_UP_TO,
    PROFILE_SOFTCAP_BYTES,
    PROFILE_SPEC_ACTIVATIONS,
    PROFILE_TRAINS_EVERY_WEIGHT,
    PROFILE_UNTIED_HEAD,
)
from engine.request import Request

Scope = Literal[
    "any", "adapters", "fp32-adapters", "full", "zero", "full-outside-zero", "qlora-eager",
    "qlora-fp32", "tied", "offload", "selective", "fsdp-accum", "compiled", "fsdp",
    "fsdp-full", "several", "method-unsaid", "dropout-unsaid",
]
"""Which runs a profile fact touches: every run, LoRA/QLoRA, LoRA/QLoRA with adapters
kept in FP32 (``fp32_adapters``, the profile's unless said), full fine-tunes, runs that
may shard with DeepSpeed ZeRO (a ``zero*`` stage, or ``auto``, ZeRO-3 on several cards),
full fine-tunes that do not, QLoRA without ``torch.compile``, QLoRA whose weights are
not sharded, models with tied embeddings, offloaded runs, runs checkpointed
selectively on a model the framework checkpoints selectively by default, runs that
accumulate micro-batches under FSDP, runs under ``torch.compile``, runs FSDP1 shards
(full fine-tunes among them), ``auto`` runs on several cards, runs that name no
method, or LoRA/QLoRA runs that name no dropout (a config's or the query's own stands)."""


@dataclass(frozen=True, slots=True)
class Profile:
    """What one framework does that the request does not say."""

    framework: Framework
    label: str
    """How replies name it in a sentence (``Hugging Face (transformers, TRL, PEFT...)``)."""
    short: str
    """A menu-sized name (``HF / TRL / PEFT``)."""
    logits_bytes: float
    """Bytes per logit its loss path keeps for backward (0: fused, never materialized)."""
    eager_logits_bytes: float
    """The same without ``torch.compile`` (``PROFILE_EAGER_LOGITS_BYTES``)."""
    softcap_bytes: float
    """Bytes per logit more on a model that soft-caps its logits (``PROFILE_SOFTCAP_BYTES``)."""
    state_precision: StatePrecision
    """FP32 master weights and moments, or pure BF16."""
    lora_dropout: float
    """LoRA dropout of its default or example configs."""
    fsdp_frozen_grads: bool
    """Its FSDP wraps a frozen base and its adapters in one flat parameter, so frozen
    weights get gradients (FSDP1 with ``use_orig_params=True``)."""
    fsdp_accumulates_unsharded: bool
    """Its FSDP accumulates micro-batches with gradient sync off (``no_sync()``): whole
    gradients until the window's last backward, reduced once a step
    (``FSDP_ACCUMULATES_UNSHARDED``); else reduce-scattered every micro-batch."""
    fsdp_root_unit: bool
    """Its FSDP1 keeps the root unit (embeddings, LM head) gathered through forward and
    backward, with its whole gradient (``FSDP_ROOT_UNIT_GATHERED``)."""
    activation_offload: bool
    """Its usual setup keeps checkpointed activations in host memory."""
    selective_checkpointing_up_to: float
    """Models up to this many parameters are checkpointed selectively (op policy) unless
    the request says how it checkpoints; 0: never (``PROFILE_SELECTIVE_CHECKPOINTING_UP_TO``)."""
    elementwise_scale: float
    """Memory-bound (non-matmul) traffic relative to unfused PyTorch eager: below 1
    for fused kernels or ``torch.compile``."""
    spec_activations: bool
    """Activations counted as the specification does (``generic``); otherwise as
    autograd keeps them (``PROFILE_SPEC_ACTIVATIONS``)."""
    quantized_inputs_saved: bool
    """QLoRA's 4-bit linears keep their input for backward (bitsandbytes does)."""
    deepspeed_zero: bool
    """Its ZeRO is DeepSpeed's: the optimizer partition keeps FP32 gradients too, and
    ZeRO-3 runs Python hooks per parameter."""
    dequant_bytes: float
    """Bytes per weight of the 16-bit copy its QLoRA matmul makes of a 4-bit matrix."""
    quantized_head: bool
    """Its QLoRA quantizes the LM head too (its dequantized copy is the workspace)."""
    eager_nf4: bool
    """Its QLoRA dequantizes through torchao's unfused eager chain unless compiled."""
    foreach_adamw: bool
    """Its AdamW runs unfused, one kernel per operation (outside DeepSpeed)."""
    kbit_fp32_norms: bool
    """Its QLoRA keeps the norms in FP32 unless the weights are sharded, so the residual
    stream and the MLP's intermediates are FP32 (``PROFILE_KBIT_FP32_NORMS``)."""
    untied_head: bool
    """It gives a model with tied embeddings a separate LM head (``PROFILE_UNTIED_HEAD``)."""
    offload_gradients: bool
    """Its offloaded optimizer moves the gradients to host memory too, when the weights
    are not sharded (``PROFILE_OFFLOAD_GRADIENTS``)."""
    fp32_adapters: bool
    """Its LoRA adapters are FP32 on a 16-bit base, each casting its own input
    (``PROFILE_FP32_ADAPTERS``)."""
    qlora_one_device: bool
    """Its QLoRA runs on one card only (``PROFILE_QLORA_ONE_DEVICE``)."""
    expert_loop: bool
    """Its mixture-of-experts layers run their experts one after another, each launching
    its own kernels (``PROFILE_EXPERT_LOOP``); else in grouped matmuls."""
    always_shards: bool
    """Its multi-card recipes always shard with FSDP: ``auto`` on several data-parallel
    ranks is ``fsdp``, never DDP replicas (``PROFILE_ALWAYS_SHARDS``)."""
    cudnn_attention_from: float | None
    """The compute capability from which its attention runs cuDNN's kernels instead of
    FlashAttention-2 (``PROFILE_CUDNN_ATTENTION_FROM``)."""
    changes: tuple[tuple[str, Scope], ...] = field(default=())
    """One line per fact that differs from ``generic``, with the runs it applies to
    (:func:`changes_for` picks a request's)."""


def _profile(framework: Framework, label: str, short: str) -> Profile:
    key = framework.value
    pure = PROFILE_PURE_BF16[key]
    logits = PROFILE_LOGITS_BYTES[key]
    dropout = PROFILE_LORA_DROPOUT[key]
    frozen = FSDP_FROZEN_GRADS[key]
    generic = Framework.GENERIC.value
    changes: list[tuple[str, Scope]] = []
    eager_logits = PROFILE_EAGER_LOGITS_BYTES.get(key, logits)
    spec_logits = PROFILE_LOGITS_BYTES[generic]
    if logits != spec_logits:
        changes.append((
            "fused loss: no logits kept"
            if logits == 0
            else f"loss keeps {logits:g} B per logit"
            + (" under torch.compile" if eager_logits != logits else "")
            + f" (spec: {spec_logits:g})",
            "any" if eager_logits == logits else "compiled",
        ))
    if eager_logits not in (logits, spec_logits):
        changes.append((f"loss keeps {eager_logits:g} B per logit without torch.compile "
                        f"(spec: {spec_logits:g})", "any"))
    if key in PROFILE_TRAINS_EVERY_WEIGHT:
        changes.append(("a full fine-tune when no method is said (its recipes train every "
                        "weight)", "method-unsaid"))
    if pure != PROFILE_PURE_BF16[generic]:
        changes.append(("pure BF16 weights and optimizer states", "any"))
    if dropout != PROFILE_LORA_DROPOUT[generic]:
        changes.append((f"LoRA dropout {dropout:g}", "dropout-unsaid"))
    if frozen:
        frozen_grads = "FSDP keeps gradients for frozen weights wrapped with adapters"
        changes.append((frozen_grads, "adapters"))
    if not FSDP_ACCUMULATES_UNSHARDED[key]:
        changes.append(("FSDP reduce-scatters every micro-batch's gradients (no no_sync)",
                        "fsdp-accum"))
    if FSDP_ROOT_UNIT_GATHERED[key]:
        changes.append(("FSDP1: the root unit (embeddings, LM head) stays gathered from the "
                        "forward to the end of the backward", "fsdp"))
        changes.append(("FSDP1 holds the root unit's whole gradient until the backward ends",
                        "fsdp-full"))
    if PROFILE_ACTIVATION_OFFLOAD[key]:
        changes.append(("checkpointed activations offloaded to CPU", "any"))
    selective_up_to = PROFILE_SELECTIVE_CHECKPOINTING_UP_TO[key]
    if selective_up_to:
        changes.append((
            f"selective (op) checkpointing for models up to {selective_up_to / 1e9:g}B params",
            "selective",
        ))
    if PROFILE_ELEMENTWISE_SCALE[key] != 1.0:
        changes.append(("fused kernels", "any"))
    if PROFILE_DEEPSPEED_ZERO[key]:
        changes.append((
            "DeepSpeed ZeRO: FP32 gradients in its optimizer partition, per-parameter hooks",
            "zero",
        ))
    if PROFILE_FOREACH_ADAMW[key]:
        changes.append(("unfused (foreach) AdamW step, with a moment-sized temporary",
                        "full-outside-zero"))
    if PROFILE_EAGER_NF4[key]:
        changes.append(("torchao NF4 dequantized by unfused kernels (no torch.compile)",
                        "qlora-eager"))
    if PROFILE_KBIT_FP32_NORMS[key]:
        changes.append(("QLoRA norms in FP32 (PEFT's prepare_model_for_kbit_training): "
                        "FP32 residual stream and MLP activations", "qlora-fp32"))
    if PROFILE_FP32_ADAPTERS[key]:
        changes.append(("FP32 LoRA adapters (PEFT): casts around every adapted linear, "
                        "and each adapter keeps its own copy of its input", "fp32-adapters"))
    if PROFILE_UNTIED_HEAD[key]:
        changes.append(("the tied embedding copied into a separate LM head", "tied"))
    if not PROFILE_OFFLOAD_GRADIENTS[key]:
        changes.append(("an offloaded optimizer leaves the gradients on the GPU", "offload"))
    if PROFILE_ALWAYS_SHARDS[key]:
        changes.append(("several cards shard with FSDP (its multi-card recipes run no DDP)",
                         "several"))
    cudnn_from = PROFILE_CUDNN_ATTENTION_FROM[key]
    if cudnn_from is not None:
        cards = "Hopper and Blackwell (H100, B200)" if cudnn_from < 10 else "Blackwell (B200)"
        changes.append((f"cuDNN attention on {cards}, FlashAttention-2 on older cards", "any"))
    if not PROFILE_SPEC_ACTIVATIONS[key]:
        changes.append(("activations as autograd keeps them, not the spec's formula", "any"))
    return Profile(
        framework=framework,
        label=label,
        short=short,
        logits_bytes=logits,
        eager_logits_bytes=eager_logits,
        softcap_bytes=PROFILE_SOFTCAP_BYTES.get(key, 0.0),
        state_precision=StatePrecision.PURE_BF16 if pure else StatePrecision.FP32,
        lora_dropout=dropout,
        fsdp_frozen_grads=frozen,
        fsdp_accumulates_unsharded=FSDP_ACCUMULATES_UNSHARDED[key],
        fsdp_root_unit=FSDP_ROOT_UNIT_GATHERED[key],
        activation_offload=PROFILE_ACTIVATION_OFFLOAD[key],
        selective_checkpointing_up_to=selective_up_to,
        elementwise_scale=PROFILE_ELEMENTWISE_SCALE[key],
        spec_activations=PROFILE_SPEC_ACTIVATIONS[key],
        quantized_inputs_saved=PROFILE_QUANTIZED_SAVES_INPUTS[key],
        deepspeed_zero=PROFILE_DEEPSPEED_ZERO[key],
        dequant_bytes=PROFILE_DEQUANT_BYTES[key],
        quantized_head=PROFILE_QUANTIZED_HEAD[key],
        eager_nf4=PROFILE_EAGER_NF4[key],
        foreach_adamw=PROFILE_FOREACH_ADAMW[key],
        kbit_fp32_norms=PROFILE_KBIT_FP32_NORMS[key],
        untied_head=PROFILE_UNTIED_HEAD[key],
        offload_gradients=PROFILE_OFFLOAD_GRADIENTS[key],
        fp32_adapters=PROFILE_FP32_ADAPTERS[key],
        always_shards=PROFILE_ALWAYS_SHARDS[key],
        expert_loop=PROFILE_EXPERT_LOOP[key],
        qlora_one_device=key in PROFILE_QLORA_ONE_DEVICE,
        cudnn_attention_from=PROFILE_CUDNN_ATTENTION_FROM[key],
        changes=tuple(changes),
    )


PROFILES: dict[Framework, Profile] = {
    Framework.GENERIC: _profile(
        Framework.GENERIC, "generic (the specification's assumptions)", "Generic (spec)"
    ),
    Framework.HF: _profile(
        Framework.HF, "Hugging Face (transformers, TRL, PEFT, axolotl...)", "HF / TRL / PEFT"
    ),
    Framework.UNSLOTH: _profile(Framework.UNSLOTH, "Unsloth", "Unsloth"),
    Framework.TORCHTUNE: _profile(Framework.TORCHTUNE, "torchtune", "torchtune"),
    Framework.LITGPT: _profile(Framework.LITGPT, "LitGPT", "LitGPT"),
    Framework.TORCHTITAN: _profile(Framework.TORCHTITAN, "torchtitan", "torchtitan"),
}


def profile(framework: Framework) -> Profile:
    """The profile of ``framework``."""
    return PROFILES[framework]


def changes_for(
    request: Request, stage: Sharding | None = None, arch: Architecture | None = None,
    shard_ranks: int | None = None,
) -> list[str]:
    """The profile's facts that touch ``request``: LoRA dropout only for adapters, the
    optimizer's step only for full fine-tunes, DeepSpeed's only where ZeRO runs: on
    ``stage``, the sharding of the card choice shown, when there is one; else wherever
    the request's sharding may be ZeRO (a ``zero*`` stage, or ``auto``). Facts about
    tied embeddings only when ``arch`` is given and ties them; FSDP1's root unit only
    where FSDP gathers anything: over ``shard_ranks`` > 1 (the card choice's, when there
    is one; else the cards the request names), without tensor or context parallelism."""
    full = request.effective_method is Method.FULL
    if stage is not None:
        zero = stage.is_zero
    else:
        zero = request.sharding.is_zero or request.sharding is Sharding.AUTO
    applies = {
        "any": True,
        "adapters": not full,
        "fp32-adapters": not full and request.fp32_adapters,
        "full": full,
        "zero": zero,
        "full-outside-zero": full and not zero,
        "qlora-eager": eager_nf4_dequant(request),
        "qlora-fp32": fp32_residual_stream(request, stage),
        "tied": arch is not None and arch.tie_embeddings,
        "offload": request.offload,
        "selective": request.selective_checkpointing
        and arch is not None
        and selective_by_default(request.framework, arch),
        "fsdp-accum": request.grad_accum > 1
        and (stage.is_fsdp if stage is not None else request.sharding.is_fsdp),
        "compiled": request.compile,
        "fsdp": fsdp1_gathers(request, stage, shard_ranks),
        "fsdp-full": full and fsdp1_gathers(request, stage, shard_ranks),
        "method-unsaid": request.method is None,
        "dropout-unsaid": not full and "lora_dropout" not in request.model_fields_set,
        "several": request.sharding is Sharding.AUTO and (
            stage.is_fsdp if stage is not None else (request.gpu_count or 1) > 1
        ),
    }
    return [text for text, scope in PROFILES[request.framework].changes if applies[scope]]


def fsdp1_gathers(
    request: Request, stage: Sharding | None = None, shard_ranks: int | None = None
) -> bool:
    """Whether ``request`` runs FSDP1 that gathers units: ``fsdp``/``hsdp`` over more
    than one shard rank (one rank is ``NO_SHARD``) on a framework that keeps FSDP1's root
    unit (:func:`keeps_fsdp1_root`)."""
    sharded = stage.is_fsdp if stage is not None else request.sharding.is_fsdp
    if shard_ranks is None:
        shard_ranks = request.gpu_count or 1
    return sharded and shard_ranks > 1 and keeps_fsdp1_root(request)


def keeps_fsdp1_root(request: Request) -> bool:
    """Whether ``request``'s framework keeps FSDP1's root unit gathered
    (``Profile.fsdp_root_unit``): not under tensor or context parallelism, where
    Accelerate runs FSDP2 beside a plan that splits the embeddings and head, not modelled
    (``engine.fsdp_units``)."""
    return (
        PROFILES[request.framework].fsdp_root_unit
        and request.tensor_parallel == 1 and request.context_parallel == 1
    )


def eager_nf4_dequant(request: Request) -> bool:
    """Whether ``request`` dequantizes 4-bit weights through torchao's unfused eager
    chain: QLoRA on a framework that uses torchao's ``NF4Tensor``, without
    ``torch.compile``."""
    return (
        request.effective_method is Method.QLORA
        and PROFILES[request.framework].eager_nf4
        and not request.compile
    )


def trained_architecture(arch: Architecture, request: Request) -> Architecture:
    """``arch`` as ``request``'s framework trains it: with a separate LM head where the
    framework never ties the embedding (``PROFILE_UNTIED_HEAD``)."""
    if PROFILES[request.framework].untied_head and arch.tie_embeddings:
        return _untied(arch)
    return arch


@lru_cache(maxsize=64)
def _untied(arch: Architecture) -> Architecture:
    """``arch`` with a separate LM head, built once per architecture.

    A fresh, validated model (``model_copy`` would carry the tied model's cached counts
    over), cached here rather than on the architecture: pydantic's ``__eq__`` compares
    ``__dict__``, where ``cached_property`` values live, so an architecture caching a
    reference to itself made two equal architectures (Llama 3.1 and 3.3 70B) compare
    without end inside the engine's per-architecture caches."""
    return type(arch).model_validate({**arch.model_dump(), "tie_embeddings": False})


def fp32_residual_stream(request: Request, stage: Sharding | None = None) -> bool:
    """Whether ``request`` runs its residual stream in FP32: QLoRA on a framework whose
    4-bit preparation keeps the norms in FP32 (``PROFILE_KBIT_FP32_NORMS``), with
    weights not sharded (TRL skips that preparation for FSDP and ZeRO-3 QLoRA) and a
    bitsandbytes base (PEFT casts nothing for a GPTQ model). ``stage``: the sharding
    the run uses, when known (``auto`` shards on several cards); else the request's."""
    sharding = request.sharding if stage is None else stage
    return (
        request.effective_method is Method.QLORA
        and PROFILES[request.framework].kbit_fp32_norms
        and not sharding.shards_weights
        and not request.gptq
    )


def selective_by_default(framework: Framework, arch: Architecture) -> bool:
    """Whether ``framework`` checkpoints ``arch`` selectively (op policy) when the
    request does not say how (``Profile.selective_checkpointing_up_to``)."""
    return arch.total_params <= PROFILES[framework].selective_checkpointing_up_to


CHECKPOINTING_FIELDS = ("grad_checkpointing", "selective_checkpointing")
"""The fields that say how a run checkpoints; saying either keeps the profile's
selective default (:func:`selective_by_default`) out."""


def resolve(request: Request, arch: Architecture | None = None) -> Request:
    """``request`` with its framework's defaults for every field the user left unset.

    ``state_precision``, ``lora_dropout``, ``activation_offload`` and ``fp32_adapters``
    come from the profile. Given the model's ``arch``, so does ``selective_checkpointing``
    where the request says nothing of checkpointing: on where the framework checkpoints
    that model selectively, off elsewhere. A dataset of samples longer than the default
    sequence sets ``seq_len`` where no limit is said
    (:func:`engine.datasets.sequence_for_samples`). What is set here stays unsaid in the
    result, so resolving it again (another framework, another model) decides it afresh.
    The loss path is read from the profile by :func:`logits_bytes` unless the request
    says ``fused_ce`` or ``hf_loss``. Returns ``request`` itself when nothing changes.
    """
    p = PROFILES[request.framework]
    said = request.model_fields_set
    update: dict[str, object] = {}
    state = p.state_precision
    if state is StatePrecision.PURE_BF16 and request.precision is Precision.FP32:
        # A pure regime keeps the states in the weights' dtype: FP32 weights (torchtune's
        # `dtype: fp32`, litgpt's `32-true`) train with FP32 gradients and moments.
        state = StatePrecision.FP32
    if "state_precision" not in said and request.state_precision is not state:
        update["state_precision"] = state
    if "lora_dropout" not in said and request.lora_dropout != p.lora_dropout:
        update["lora_dropout"] = p.lora_dropout
    if "activation_offload" not in said and request.activation_offload != p.activation_offload:
        update["activation_offload"] = p.activation_offload
    if "fp32_adapters" not in said and request.fp32_adapters != p.fp32_adapters:
        update["fp32_adapters"] = p.fp32_adapters
    seq = sequence_for_samples(request)  # a dataset of long samples sizes the sequence
    if seq is not None and seq != request.seq_len:
        update["seq_len"] = seq
    if arch is not None and said.isdisjoint(CHECKPOINTING_FIELDS):
        selective = request.grad_checkpointing and selective_by_default(request.framework, arch)
        if request.selective_checkpointing != selective:
            update["selective_checkpointing"] = selective
    if not update:
        return request
    out = request.model_copy(update=update)
    # Decided here, not said (model_copy marks every update as set): resolving again under
    # another framework, or for another model, decides each afresh.
    out.__pydantic_fields_set__.difference_update(update)
    return out


def cudnn_attention_from(request: Request) -> float | None:
    """The compute capability from which ``request`` runs cuDNN's attention unasked: its
    framework's (``Profile.cudnn_attention_from``), unless the request names its kernels
    (``fa3``/``cudnn-sdpa``, or FlashAttention-2 by name: ``fa2``, ``no fa3``)."""
    if "native_attention" in request.model_fields_set:
        return None
    return PROFILES[request.framework].cudnn_attention_from


def logits_bytes(request: Request, hf_bytes: float) -> float:
    """Bytes per logit kept for the loss: 0 with ``fused_ce``, ``hf_bytes`` with
    ``hf_loss``, else the framework's loss path (compiled or eager, as the request runs)."""
    if request.fused_ce:
        return 0.0
    if request.hf_loss:
        return hf_bytes
    p = PROFILES[request.framework]
    return p.logits_bytes if request.compile else p.eager_logits_bytes
