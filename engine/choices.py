"""The choices a request makes: the enumerations its fields take.

Each is a :class:`~enum.StrEnum` whose values are the words a query, a config file or
the JSON reply uses (``lora``, ``zero3``, ``pure-bf16``, ``hf``). The request model
itself is :mod:`engine.request`.
"""

from __future__ import annotations

from enum import StrEnum
from functools import cached_property


class Method(StrEnum):
    """How the model's weights are trained."""

    FULL = "full"
    LORA = "lora"
    QLORA = "qlora"

    @property
    def label(self) -> str:
        """How a sentence names it: ``full``, ``LoRA``, ``QLoRA``."""
        return {"full": "full", "lora": "LoRA", "qlora": "QLoRA"}[self.value]


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
    MLP = "mlp"
    """The MLP's projections only (gate, up, down; every expert's in MoE layers)."""


class Optimizer(StrEnum):
    ADAMW = "adamw"
    """AdamW as the framework runs it: unfused (``foreach``) where its profile says so
    (``PROFILE_FOREACH_ADAMW``), else one fused kernel."""
    ADAMW_FUSED = "adamw-fused"
    """AdamW stepped by one fused kernel whatever the framework's default (HF's
    ``adamw_torch_fused``, ``torch.optim.AdamW(fused=True)``): AdamW's states, no
    step temporary."""
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
    """Data-parallel sharding. ``auto``: none when one card holds the run (and DDP
    replicas on a count named beyond it), otherwise ZeRO-3 across the fewest cards that
    fit (``engine.fit.resolve_stage``).

    ``hsdp`` is FSDP's ``HYBRID_SHARD`` (torchtitan's ``data_parallel_replicate_degree``):
    sharded like ``fsdp`` within each shard group (a node, or the cards over the nodes
    the request names: ``engine.collectives.hsdp_group``), replicated across groups,
    whose copies all-reduce the sharded gradients once per step.

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
    HSDP = "hsdp"

    @cached_property
    def shards_weights(self) -> bool:
        """Stage 3: weights are sharded too (``zero3``, ``fsdp``, ``hsdp``)."""
        return self in (Sharding.ZERO3, Sharding.FSDP, Sharding.HSDP)

    @cached_property
    def is_fsdp(self) -> bool:
        """PyTorch FSDP, fully sharded or hybrid (``fsdp``, ``hsdp``)."""
        return self in (Sharding.FSDP, Sharding.HSDP)

    @cached_property
    def is_zero(self) -> bool:
        """A DeepSpeed ZeRO stage (``zero1``-``zero3``): optimizer state is sharded."""
        # Cached on the member: card sizing asks it tens of times per card and estimate.
        return self in (Sharding.ZERO1, Sharding.ZERO2, Sharding.ZERO3)


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
    STAND_IN = "stand-in"
    """Named by an alias of another checkpoint of the same architecture (``llama 3 8b``
    is counted as Llama 3.1 8B, ``deepseek-r1`` as DeepSeek-V3): the note says so."""
    FAMILY = "family"
    FAMILY_SIZE = "family-size"
    NONE = "none"


class Mode(StrEnum):
    """``detailed``: the seven-component model. ``napkin``: flat bytes per parameter."""

    DETAILED = "detailed"
    NAPKIN = "napkin"
