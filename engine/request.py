"""The request model: one fine-tuning question, fully normalized.

Every platform (terminal, Slack, Discord) parses its input into a :class:`Request`
and hands it to :func:`engine.estimate`. The model is frozen: follow-ups build a
new request with ``request.model_copy(update=...)``.

Defaults follow the two source documents: rank 16, AdamW with FP32 states,
batch 1, sequence 2048, gradient checkpointing and FlashAttention on, 3 epochs,
35% model FLOPs utilization (MFU).
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from engine.constants import (
    DEFAULT_EPOCHS,
    DEFAULT_LORA_RANK,
    DEFAULT_MFU,
    DEFAULT_SEQ_LEN,
    MAX_BUDGET_USD,
    MAX_DATASET_TOKENS,
    MAX_DEADLINE_HOURS,
    MAX_EPOCHS,
    MAX_GPU_COUNT,
    MAX_GPU_MEMORY_GB,
    MAX_GRAD_ACCUM,
    MAX_LORA_DROPOUT,
    MAX_LORA_RANK,
    MAX_MFU,
    MAX_MICRO_BATCH,
    MAX_NODES,
    MAX_PRICE_PER_GPU_HOUR,
    MAX_SAMPLES,
    MAX_SEQ_LEN,
    MIN_BUDGET_USD,
    MIN_DEADLINE_HOURS,
    MIN_EPOCHS,
    MIN_GPU_MEMORY_GB,
    MIN_MFU,
    MIN_PRICE_PER_GPU_HOUR,
)


class Method(StrEnum):
    """How the model's weights are trained."""

    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"


class Precision(StrEnum):
    """Storage precision of the base weights."""

    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    FP32 = "fp32"


class LoraTargets(StrEnum):
    """Which linear layers carry LoRA adapters."""

    ALL_LINEAR = "all-linear"
    ATTENTION = "attention"
    QV = "qv"


class Optimizer(StrEnum):
    ADAMW = "adamw"
    ADAMW_8BIT = "adamw-8bit"
    SGD = "sgd"
    ADAFACTOR = "adafactor"
    LION = "lion"


class StatePrecision(StrEnum):
    """Precision of master weights and optimizer states in a full fine-tune.

    ``fp32``: mixed precision as Hugging Face Trainer AMP and DeepSpeed do it
    (FP32 master copy and FP32 optimizer moments).
    ``pure-bf16``: weights, gradients and optimizer states all in BF16 with no
    master copy, as torchtune and litgpt's ``bf16-true`` train.
    """

    FP32 = "fp32"
    PURE_BF16 = "pure-bf16"


class Sharding(StrEnum):
    """Data-parallel sharding. ``auto``: none when one card holds the run,
    otherwise ZeRO-3 across the fewest cards that fit.

    ``fsdp`` shards like ``zero3`` (PyTorch FSDP ``FULL_SHARD``), and models one
    difference that matters for LoRA: FSDP1 wrapped the usual way (a frozen base and
    its adapters in one unit, ``use_orig_params=True``, as Lightning Fabric/litgpt
    do) keeps gradients for the frozen weights too. ``zero3`` is DeepSpeed ZeRO-3 and
    per-parameter sharding (FSDP2, torchtune), where frozen weights get none.
    """

    AUTO = "auto"
    NONE = "none"
    ZERO1 = "zero1"
    ZERO2 = "zero2"
    ZERO3 = "zero3"
    FSDP = "fsdp"

    @property
    def shards_weights(self) -> bool:
        """Stage 3: weights are sharded too (``zero3``, ``fsdp``)."""
        return self in (Sharding.ZERO3, Sharding.FSDP)


class Framework(StrEnum):
    """The training stack the run uses. ``generic`` keeps the specification's
    assumptions; the others set facts of that framework its users do not choose
    (``engine.profiles``). ``hf`` covers transformers, TRL, PEFT, axolotl,
    LLaMA-Factory and ms-swift, which share Hugging Face's model and loss code."""

    GENERIC = "generic"
    HF = "hf"
    UNSLOTH = "unsloth"
    TORCHTUNE = "torchtune"
    LITGPT = "litgpt"
    TORCHTITAN = "torchtitan"


class Solve(StrEnum):
    """The limit a question asks for instead of a cost: the largest sequence length,
    micro-batch or model that fits, or the fewest cards (``max seq``, ``max batch``,
    ``largest model``, ``fewest cards``)."""

    SEQ_LEN = "seq_len"
    MICRO_BATCH = "micro_batch"
    MODEL = "model"
    GPU_COUNT = "gpu_count"


class ModelPick(StrEnum):
    """How the query named the model, where the reply's note depends on it. None (not
    recorded, or a bare size such as ``8b``): the note says which model a bare size
    means. ``exact``: named by id, name or alias (no note). ``family``: a family word
    alone (``mixtral``: its flagship). ``family-size``: a family and a size (``qwen 72b``:
    the newest generation of that size). ``none``: no model named, the question solves
    for it (``largest model``; ``model`` holds the catalog's ``8b`` as a starting point
    and does not restrict the answer)."""

    EXACT = "exact"
    FAMILY = "family"
    FAMILY_SIZE = "family-size"
    NONE = "none"


class Mode(StrEnum):
    """``detailed``: the seven-component model. ``napkin``: flat bytes per parameter."""

    DETAILED = "detailed"
    NAPKIN = "napkin"


class Request(BaseModel):
    """A fine-tuning run to estimate. Sizes are counts; prices are USD.

    ``model`` and ``gpu`` are catalog ids (the parser resolves aliases). A model id
    of the form ``synthetic-<N>b`` is a Llama-style architecture scaled to N
    billion parameters. ``method=None`` means "not said": the headline uses LoRA
    and the what-if panel compares all three methods.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    model: str = Field(min_length=1)
    method: Method | None = None
    precision: Precision = Precision.BF16
    lora_rank: int = Field(default=DEFAULT_LORA_RANK, ge=1, le=MAX_LORA_RANK)
    lora_targets: LoraTargets = LoraTargets.ALL_LINEAR
    lora_dropout: float = Field(default=0.0, ge=0, le=MAX_LORA_DROPOUT)
    """LoRA dropout probability (PEFT's default is 0). Above 0 every adapted linear keeps
    a dropout mask and a dropped-out copy of its input for backward."""
    optimizer: Optimizer = Optimizer.ADAMW
    state_precision: StatePrecision = StatePrecision.FP32
    offload: bool = False
    seq_len: int = Field(default=DEFAULT_SEQ_LEN, ge=1, le=MAX_SEQ_LEN)
    micro_batch: int = Field(default=1, ge=1, le=MAX_MICRO_BATCH)
    grad_accum: int = Field(default=1, ge=1, le=MAX_GRAD_ACCUM)
    """Gradient-accumulation micro-steps per optimizer step on each GPU. Compute is
    unchanged (it is counted in tokens); memory changes only under ``fsdp``, whose
    accumulation (``no_sync``) keeps whole, unsharded gradients between syncs."""
    grad_checkpointing: bool = True
    activation_offload: bool = False
    """Checkpointed layer inputs live in host memory, fetched back for backward
    (torchtune's ``enable_activation_offloading``, Unsloth's
    ``use_gradient_checkpointing="unsloth"``). Only with ``grad_checkpointing``."""
    flash_attention: bool = True
    fused_ce: bool = False
    hf_loss: bool = False
    """Hugging Face transformers' unfused loss path: 12 B per logit instead of one FP32
    copy (``engine.constants.LOGITS_BYTES_HF``). ``fused_ce`` wins when both are set."""
    double_quant: bool = True
    sharding: Sharding = Sharding.AUTO
    gpu: str | None = None
    gpu_count: int | None = Field(default=None, ge=1, le=MAX_GPU_COUNT)
    dataset_tokens: int | None = Field(default=None, ge=1, le=MAX_DATASET_TOKENS)
    epochs: float = Field(default=DEFAULT_EPOCHS, ge=MIN_EPOCHS, le=MAX_EPOCHS)
    mfu: float = Field(default=DEFAULT_MFU, ge=MIN_MFU, le=MAX_MFU)
    price_per_gpu_hour: float | None = Field(
        default=None, ge=MIN_PRICE_PER_GPU_HOUR, le=MAX_PRICE_PER_GPU_HOUR
    )
    mode: Mode = Mode.DETAILED
    framework: Framework = Framework.GENERIC
    """The training framework (``engine.profiles``): its loss path, default precision
    regime, LoRA dropout, FSDP wrapping and kernels, unless the request says otherwise."""
    nodes: int | None = Field(default=None, ge=1, le=MAX_NODES)
    """Machines the cards are spread over (``2 nodes of 8x h100``); None: as few as hold
    them. ``gpu_count`` is the total over all nodes."""
    spot: bool = False
    """Price the cards at spot (interruptible) rates where the catalog has them."""
    budget_usd: float | None = Field(default=None, ge=MIN_BUDGET_USD, le=MAX_BUDGET_USD)
    """The most the whole run may cost, USD (``under $500``)."""
    deadline_hours: float | None = Field(
        default=None, ge=MIN_DEADLINE_HOURS, le=MAX_DEADLINE_HOURS
    )
    """The longest the whole run may take, wall-clock hours (``within 2 days``)."""
    samples: int | None = Field(default=None, ge=1, le=MAX_SAMPLES)
    """Dataset size as the user counted it: samples (rows, examples). With
    ``sample_tokens`` it sets ``dataset_tokens`` = samples x average length."""
    sample_tokens: int | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    """Average tokens per sample, as the user gave it."""
    packing: bool = False
    """Samples are packed into full sequences: the dataset counts as its tokens."""
    max_len: int | None = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    """Without packing, each sample is padded to the batch's longest, at most this."""
    solve: Solve | None = None
    """The limit the question asks for (``max seq``); None: an estimate."""
    gpu_memory_gb: float | None = Field(
        default=None, ge=MIN_GPU_MEMORY_GB, le=MAX_GPU_MEMORY_GB
    )
    """A card named by its memory (``24gb``), GB = 10^9 bytes, instead of by model."""
    model_pick: ModelPick | None = None
    """How the query named the model (:class:`ModelPick`), for the reply's note."""

    @property
    def effective_method(self) -> Method:
        """The method the headline uses: the one asked for, else LoRA."""
        return self.method or Method.LORA

    @property
    def trained_tokens(self) -> float | None:
        """Dataset tokens times epochs, or None when no dataset size was given."""
        if self.dataset_tokens is None:
            return None
        return self.dataset_tokens * self.epochs
