"""The request model: one fine-tuning question, fully normalized.

Every platform (terminal, Slack, Discord) parses its input into a :class:`Request`
and hands it to :func:`engine.estimate`. The model is frozen: follow-ups build a
new request with ``request.model_copy(update=...)``.

Defaults follow the two source documents: rank 16, AdamW with FP32 states,
batch 1, sequence 2048, gradient checkpointing and FlashAttention on, 3 epochs,
35% model FLOPs utilization (MFU).
"""

from __future__ import annotations

from typing import Annotated, Final

from pydantic import BaseModel, ConfigDict, Field, model_validator

from engine.choices import (
    Framework,
    LoraTargets,
    Method,
    Mode,
    ModelPick,
    Optimizer,
    Precision,
    Sharding,
    Solve,
    StatePrecision,
)
from engine.constants import (
    DEFAULT_EPOCHS,
    DEFAULT_LORA_RANK,
    DEFAULT_MFU,
    DEFAULT_SEQ_LEN,
    MAX_BUDGET_USD,
    MAX_CONTEXT_PARALLEL,
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
    MAX_STEPS,
    MAX_TENSOR_PARALLEL,
    MIN_BUDGET_USD,
    MIN_DEADLINE_HOURS,
    MIN_EPOCHS,
    MIN_GPU_MEMORY_GB,
    MIN_MFU,
    MIN_PRICE_PER_GPU_HOUR,
)
from engine.fields import Display, FieldMeta
from engine.framework_facts import PROFILE_TRAINS_EVERY_WEIGHT

EXAMPLE_QUERY: Final = "70b qlora 50M tokens h100"
"""A whole query (the stand-in example of a field without metadata)."""


QLORA_TP_REFUSAL: Final = (
    "tensor parallelism over a 4-bit base is not modeled: bitsandbytes NF4 layers are not "
    "split by TP; use lora or full, or drop tp."
)
"""Why a request for QLoRA with ``tensor_parallel`` above 1 is refused (engine and query)."""


ADAPTER_FIELDS: Final = frozenset(
    {"lora_rank", "lora_targets", "dora", "fp32_adapters", "lora_dropout"}
)
"""Request fields that only adapters have (their metadata's ``adapters_only``): said with
no method, they say LoRA where a framework's default is a full fine-tune."""


class Request(BaseModel):
    """A fine-tuning run to estimate. Sizes are counts; prices are USD.

    ``model`` and ``gpu`` are catalog ids (the parser resolves aliases). A model id
    of the form ``synthetic-<N>b`` is a Llama-style architecture scaled to N
    billion parameters. ``method=None`` means "not said": the headline uses LoRA
    and the what-if panel compares all three methods.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)

    model: Annotated[str, FieldMeta(
        label="model", noun="model", key="m", example=EXAMPLE_QUERY,
    )] = Field(min_length=1)
    method: Annotated[Method | None, FieldMeta(
        label="method", noun="method", key="M", example=EXAMPLE_QUERY,
        display=Display.METHOD, unset="default (LoRA)",
    )] = None
    precision: Annotated[Precision, FieldMeta(
        label="precision", noun="precision", key="p", example="8b lora fp16 50M tokens",
    )] = Precision.BF16
    lora_rank: Annotated[int, FieldMeta(
        label="rank", noun="LoRA rank", key="r", example="8b lora r64 50M tokens",
        display=Display.COUNT, adapters_only=True,
    )] = Field(default=DEFAULT_LORA_RANK, ge=1, le=MAX_LORA_RANK)
    lora_targets: Annotated[LoraTargets, FieldMeta(
        label="LoRA targets", noun="LoRA targets", key="t", example="8b lora attn 50M tokens",
        adapters_only=True,
    )] = LoraTargets.ALL_LINEAR
    dora: Annotated[bool, FieldMeta(
        label="DoRA", noun="DoRA switch", key="z", example="8b lora dora 50M tokens",
        adapters_only=True,
    )] = False
    """DoRA (weight-decomposed LoRA, PEFT's ``use_dora=True``): every adapted linear also
    trains a magnitude per output and, on every forward, recomputes the norm of its
    weight plus the LoRA update, and keeps two more output-sized tensors for backward.
    LoRA and QLoRA only."""
    fp32_adapters: Annotated[bool, FieldMeta(
        label="FP32 adapters", noun="FP32 adapter switch", key="J",
        example="8b lora fp32-adapters 50M tokens", adapters_only=True,
    )] = False
    """LoRA weights kept in FP32 on a 16-bit base, each adapter casting its own input
    (PEFT's ``get_peft_model(..., autocast_adapter_dtype=True)``, its default: on for
    ``hf``). Off (``bf16 adapters``) the adapters take the base's dtype, nothing is cast,
    and only pure BF16 also stores them in 16 bits (mixed precision keeps FP32 masters)."""
    lora_dropout: Annotated[float, FieldMeta(
        label="LoRA dropout", noun="LoRA dropout", key="D",
        example="8b lora dropout 0.05 50M tokens", display=Display.NUMBER,
        adapters_only=True,
    )] = Field(default=0.0, ge=0, le=MAX_LORA_DROPOUT)
    """LoRA dropout probability (PEFT's default is 0). Above 0 every adapted linear keeps
    a dropout mask and a dropped-out copy of its input for backward."""
    optimizer: Annotated[Optimizer, FieldMeta(
        label="optimizer", noun="optimizer", key="o", example="8b full adamw-8bit 50M tokens",
    )] = Optimizer.ADAMW
    state_precision: Annotated[StatePrecision, FieldMeta(
        label="states", noun="state precision", key="s", example="8b full pure-bf16 50M tokens",
    )] = StatePrecision.FP32
    offload: Annotated[bool, FieldMeta(
        label="offload", noun="offload switch", key="O", example="70b full offload 50M tokens",
    )] = False
    offload_weights: Annotated[bool, FieldMeta(
        label="offload weights", noun="weight offload switch", key="y",
        example="70b full zero3 offload optimizer 8x a100 50M tokens",
    )] = True
    """With ``offload`` under ZeRO-3/FSDP, the sharded weights live in host memory too
    (DeepSpeed's ``offload_param``, FSDP's ``CPUOffload(offload_params=True)``); False:
    only the optimizer (DeepSpeed's ``offload_optimizer`` alone), so each GPU keeps its
    weight shard. No effect without ``offload`` or on unsharded weights."""
    seq_len: Annotated[int, FieldMeta(
        label="seq", noun="sequence length", key="q", example="8b lora seq 8k 50M tokens",
        display=Display.COUNT,
    )] = Field(default=DEFAULT_SEQ_LEN, ge=1, le=MAX_SEQ_LEN)
    micro_batch: Annotated[int, FieldMeta(
        label="batch", noun="micro-batch", key="b", example="8b lora bs 4 50M tokens",
        display=Display.COUNT,
    )] = Field(default=1, ge=1, le=MAX_MICRO_BATCH)
    grad_accum: Annotated[int, FieldMeta(
        label="accumulation", noun="gradient accumulation", key="a",
        example="8b full fsdp 4x a10g accum 8", display=Display.COUNT,
    )] = Field(default=1, ge=1, le=MAX_GRAD_ACCUM)
    """Gradient-accumulation micro-steps per optimizer step on each GPU. Compute is
    unchanged (it is counted in tokens); memory changes only under ``fsdp``, whose
    accumulation (``no_sync``) keeps whole, unsharded gradients between syncs."""
    grad_checkpointing: Annotated[bool, FieldMeta(
        label="checkpointing", noun="checkpointing switch", key="c",
        example="8b lora no-ckpt 50M tokens",
    )] = True
    selective_checkpointing: Annotated[bool, FieldMeta(
        label="selective checkpointing", noun="selective checkpointing switch", key="j",
        example="8b full selective-ckpt 8x h100 50M tokens",
    )] = False
    """Op-level selective activation checkpointing (torchtitan's ``[activation_checkpoint]
    mode = "selective"``, ``selective_ac_option = "op"``; torchtune's ``ac_mode:
    selective``): inside each checkpointed layer every other matmul's output and
    attention's output are kept, the rest recomputed (:mod:`engine.selective`). Only with
    ``grad_checkpointing``."""
    activation_offload: Annotated[bool, FieldMeta(
        label="activation offload", noun="activation offload switch", key="A",
        example="8b lora activation-offload 50M tokens",
    )] = False
    """Checkpointed layer inputs live in host memory, fetched back for backward
    (torchtune's ``enable_activation_offloading``, Unsloth's
    ``use_gradient_checkpointing="unsloth"``). Only with ``grad_checkpointing``."""
    optimizer_in_backward: Annotated[bool, FieldMeta(
        label="optimizer in backward", noun="optimizer-in-backward switch", key="E",
        example="8b full optimizer-in-backward 50M tokens",
    )] = False
    """Each parameter's optimizer step runs as soon as its gradient is ready and the
    gradient is freed (torchtune's ``optimizer_in_bwd``): a full fine-tune holds one
    layer's gradients instead of all. One card or DDP only (not with ZeRO/FSDP
    sharding)."""
    compile: Annotated[bool, FieldMeta(
        label="compile", noun="torch.compile switch", key="C",
        example="8b lora compile 50M tokens",
    )] = False
    """``torch.compile`` on (torchtune's ``compile=True``, the HF Trainer's
    ``torch_compile``): fused elementwise kernels, so fewer launches, less traffic and
    a gated MLP that keeps two of its four intermediate tensors."""
    flash_attention: Annotated[bool, FieldMeta(
        label="flash attention", noun="FlashAttention switch", key="f",
        example="8b lora no-flash 50M tokens",
    )] = True
    native_attention: Annotated[bool, FieldMeta(
        label="native attention kernels", noun="native attention kernel switch", key="w",
        example="8b lora fa3 seq 8192 h100 50M tokens",
    )] = False
    """Attention runs on the card's own newest kernels (FlashAttention-3 on Hopper,
    cuDNN's fused attention, FlashAttention-4 on Blackwell) instead of FlashAttention-2,
    which transformers' ``flash_attention_2`` and PyTorch's SDPA before 2.11 run: at
    ``FA_EFFICIENCY`` of the matmul rate on every card, where FlashAttention-2 reaches
    less on Hopper and Blackwell (``GpuSpec.flash_attention_tflops``). Left unsaid, the
    framework decides (``hf``'s SDPA picks cuDNN on Hopper and Blackwell); said either
    way (``fa3``, or ``fa2``/``no fa3``), it holds. Time only."""
    fused_ce: Annotated[bool, FieldMeta(
        label="fused CE", noun="fused cross-entropy switch", key="F",
        example="8b lora fused-ce 50M tokens",
    )] = False
    hf_loss: Annotated[bool, FieldMeta(
        label="HF loss", noun="Hugging Face loss-path switch", key="h",
        example="8b lora hf-loss 50M tokens",
    )] = False
    """Hugging Face transformers' unfused loss path: 12 B per logit instead of one FP32
    copy (``engine.constants.LOGITS_BYTES_HF``). ``fused_ce`` wins when both are set."""
    double_quant: Annotated[bool, FieldMeta(
        label="double quant", noun="double quantization switch", key="d",
        example="70b qlora no-double-quant",
    )] = True
    float8: Annotated[bool, FieldMeta(
        label="float8", noun="float8 training switch", key="v",
        example="8b full float8 compile 8x h100 1B tokens",
    )] = False
    """Float8 training (torchao's ``Float8Linear``, torchtitan's ``float8`` converter):
    the decoder's linear layers multiply in FP8 with dynamic per-tensor scales, while
    weights, gradients, optimizer states and the saved activations stay as they are, so
    memory does not change; time does, on cards with FP8 tensor cores."""
    gptq: Annotated[bool, FieldMeta(
        label="GPTQ base", noun="GPTQ switch", key="Y",
        example="qwen2.5-7b qlora gptq 10M tokens",
    )] = False
    """QLoRA's 4-bit base is a GPTQ checkpoint (auto-gptq or optimum kernels; Qwen's
    ``-Int4`` chat models) rather than bitsandbytes NF4: ``GPTQ_BITS`` per weight, and
    PEFT's k-bit preparation leaves a GPTQ model's norms in 16-bit. QLoRA only."""
    sharding: Annotated[Sharding, FieldMeta(
        label="sharding", noun="sharding", key="S", example="70b full zero3 8x h100",
    )] = Sharding.AUTO
    gpu: Annotated[str | None, FieldMeta(
        label="card", noun="GPU", key="g", example=EXAMPLE_QUERY, unset="any",
    )] = None
    gpu_count: Annotated[int | None, FieldMeta(
        label="cards", noun="GPU count", key="n", example="70b full 50M tokens 8x h100",
        display=Display.COUNT, unset="auto",
    )] = Field(default=None, ge=1, le=MAX_GPU_COUNT)
    dataset_tokens: Annotated[int | None, FieldMeta(
        label="tokens", noun="token count", key="T", example=EXAMPLE_QUERY,
        display=Display.TOKENS,
    )] = Field(default=None, ge=1, le=MAX_DATASET_TOKENS)
    epochs: Annotated[float, FieldMeta(
        label="epochs", noun="epoch count", key="e", example="8b lora 50M tokens 2 epochs",
        display=Display.NUMBER,
    )] = Field(default=DEFAULT_EPOCHS, ge=MIN_EPOCHS, le=MAX_EPOCHS)
    mfu: Annotated[float, FieldMeta(
        label="MFU", noun="MFU", key="u", example="8b lora 50M tokens mfu 40%",
        display=Display.PERCENT,
    )] = Field(default=DEFAULT_MFU, ge=MIN_MFU, le=MAX_MFU)
    price_per_gpu_hour: Annotated[float | None, FieldMeta(
        label="price", noun="price per GPU-hour", key="P",
        example="70b qlora 50M tokens h100 $2.50/hr", display=Display.USD_PER_HOUR,
        unset="catalog's",
    )] = Field(
        default=None, ge=MIN_PRICE_PER_GPU_HOUR, le=MAX_PRICE_PER_GPU_HOUR
    )
    mode: Annotated[Mode, FieldMeta(
        label="mode", noun="mode", key="N", example="70b qlora 50M tokens napkin",
    )] = Mode.DETAILED
    framework: Annotated[Framework, FieldMeta(
        label="framework", noun="framework", key="k", example="8b lora trl 50M tokens",
    )] = Framework.GENERIC
    """The training framework (``engine.profiles``): its loss path, default precision
    regime, LoRA dropout, FSDP wrapping and kernels, unless the request says otherwise."""
    nodes: Annotated[int | None, FieldMeta(
        label="nodes", noun="node count", key="W",
        example="70b full 2 nodes of 8x h100 50M tokens", display=Display.COUNT,
    )] = Field(default=None, ge=1, le=MAX_NODES)
    """Machines the cards are spread over (``2 nodes of 8x h100``); None: as few as hold
    them. ``gpu_count`` is the total over all nodes."""
    tensor_parallel: Annotated[int, FieldMeta(
        label="tensor parallel", noun="tensor-parallel degree", key="Z",
        example="70b full tp 8 32x h100 1B tokens", display=Display.COUNT,
    )] = Field(default=1, ge=1, le=MAX_TENSOR_PARALLEL)
    """Cards that split every layer between them (Megatron-style tensor parallelism with
    sequence parallelism, as torchtitan's ``tensor_parallel_degree``): each holds 1/tp of
    every weight and of the activations. 1: none. Cards in all are ``gpu_count``; the
    data-parallel sharding (``sharding``) runs over ``gpu_count / tensor_parallel``."""
    context_parallel: Annotated[int, FieldMeta(
        label="context parallel", noun="context-parallel degree", key="x",
        example="8b full cp 8 8x h100 seq 128k 1B tokens", display=Display.COUNT,
    )] = Field(default=1, ge=1, le=MAX_CONTEXT_PARALLEL)
    """Cards that split every sequence between them (ring attention: torchtitan's
    ``context_parallel_degree``, accelerate's ``cp_size``): each computes and stores
    ``seq_len / cp`` tokens, attending to the others' keys and values as they pass round
    the ring. 1: none. The weights are sharded over these cards too (FSDP's mesh
    includes them), so cards in all are a multiple of ``tensor_parallel x cp``."""
    spot: Annotated[bool, FieldMeta(
        label="spot pricing", noun="spot pricing switch", key="V",
        example="70b qlora 50M tokens h100 spot",
    )] = False
    """Price the cards at spot (interruptible) rates where the catalog has them."""
    budget_usd: Annotated[float | None, FieldMeta(
        label="budget", noun="budget", key="B", example="8b lora 50M tokens under $500",
        display=Display.USD,
    )] = Field(default=None, ge=MIN_BUDGET_USD, le=MAX_BUDGET_USD)
    """The most the whole run may cost, USD (``under $500``)."""
    deadline_hours: Annotated[float | None, FieldMeta(
        label="deadline", noun="deadline", key="H", example="8b lora 50M tokens within 2 days",
        display=Display.HOURS,
    )] = Field(
        default=None, ge=MIN_DEADLINE_HOURS, le=MAX_DEADLINE_HOURS
    )
    """The longest the whole run may take, wall-clock hours (``within 2 days``)."""
    steps: Annotated[int | None, FieldMeta(
        label="steps", noun="step count", key="U",
        example="8b lora 1000 steps bs 8 4x a100", display=Display.COUNT,
    )] = Field(default=None, ge=1, le=MAX_STEPS)
    """The run's length as the user counted it: optimizer steps (HF's ``max_steps``). With
    the card count it sets ``dataset_tokens`` = steps x micro-batch x accumulation x cards
    x sequence (``adapters.query.steps``)."""
    samples: Annotated[int | None, FieldMeta(
        label="samples", noun="sample count", key="R",
        example="8b lora 10k samples of 512 tokens", display=Display.COUNT,
    )] = Field(default=None, ge=1, le=MAX_SAMPLES)
    """Dataset size as the user counted it: samples (rows, examples). With
    ``sample_tokens`` it sets ``dataset_tokens`` = samples x average length."""
    sample_tokens: Annotated[int | None, FieldMeta(
        label="sample length", noun="average sample length", key="L",
        example="8b lora 10k samples of 512 tokens", display=Display.COUNT,
    )] = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    """Average tokens per sample, as the user gave it."""
    packing: Annotated[bool, FieldMeta(
        label="packing", noun="packing switch", key="K",
        example="8b lora 10k samples of 512 tokens packing",
    )] = False
    """Samples are packed into full sequences: the dataset counts as its tokens."""
    max_len: Annotated[int | None, FieldMeta(
        label="max length", noun="maximum sample length", key="X",
        example="8b lora 10k samples of 512 tokens max-len 2048", display=Display.COUNT,
    )] = Field(default=None, ge=1, le=MAX_SEQ_LEN)
    """Without packing, each sample is padded to the batch's longest, at most this."""
    solve: Annotated[Solve | None, FieldMeta(
        label="question", noun="question", key="Q", example="max seq 8b qlora rtx-4090",
        unset="estimate",
    )] = None
    """The limit the question asks for (``max seq``); None: an estimate."""
    gpu_memory_gb: Annotated[float | None, FieldMeta(
        label="card memory", noun="card memory", key="G", example="largest model qlora 24gb",
        display=Display.GB,
    )] = Field(
        default=None, ge=MIN_GPU_MEMORY_GB, le=MAX_GPU_MEMORY_GB
    )
    """A card named by its memory (``24gb``), GB = 10^9 bytes, instead of by model."""
    model_pick: Annotated[ModelPick | None, FieldMeta(
        label=None, noun="model", key="i", example=EXAMPLE_QUERY,
    )] = None
    """How the query named the model (:class:`ModelPick`), for the reply's note."""

    @model_validator(mode="after")
    def _no_tensor_parallel_qlora(self) -> Request:
        """QLoRA with tensor parallelism is refused: a 4-bit base is not split (the query
        refuses ``qlora tp`` in the same words; ``with_method`` drops the degree)."""
        if self.method is Method.QLORA and self.tensor_parallel > 1:
            raise ValueError(QLORA_TP_REFUSAL)
        return self

    @property
    def effective_method(self) -> Method:
        """The method the headline uses: the one asked for, else the framework's own
        (full for those that train every weight, ``PROFILE_TRAINS_EVERY_WEIGHT``, unless
        an adapter's setting is said), else LoRA."""
        if self.method is not None:
            return self.method
        if self.framework.value in PROFILE_TRAINS_EVERY_WEIGHT and self.model_fields_set.isdisjoint(
            ADAPTER_FIELDS
        ):  # "r 64" or "qv" on torchtitan says adapters: LoRA
            return Method.FULL
        return Method.LORA

    def with_method(self, method: Method) -> Request:
        """This request with ``method``: as QLoRA without tensor parallelism, which a 4-bit
        base does not have (bitsandbytes' NF4 layers are not split by PyTorch's tensor
        parallelism), so every comparison of methods prices QLoRA as it can run."""
        update: dict[str, object] = {"method": method}
        if method is Method.QLORA and self.tensor_parallel > 1:
            update["tensor_parallel"] = 1
        return self.model_copy(update=update)

    @property
    def sample_limit(self) -> int:
        """Tokens a sample is cut at when not packed: ``max_len``, at most the sequence."""
        return min(self.max_len or self.seq_len, self.seq_len)

    @property
    def kept_share(self) -> float:
        """Share of the dataset's tokens a run computes: unpacked samples longer on
        average than :attr:`sample_limit` are cut there (tokenizers' ``truncation``)."""
        length = self.sample_tokens
        if self.packing or self.samples is None or length is None:
            return 1.0
        return min(1.0, self.sample_limit / length)

    @property
    def trained_tokens(self) -> float | None:
        """Dataset tokens x epochs x :attr:`kept_share`; None without a dataset size."""
        if self.dataset_tokens is None:
            return None
        return self.dataset_tokens * self.epochs * self.kept_share

    def sequences_per_step(self, cards: int) -> int:
        """Sequences one optimizer step takes on ``cards`` cards: micro-batch x
        accumulation x data-parallel ranks (:func:`data_parallel_ranks`)."""
        return self.micro_batch * self.grad_accum * data_parallel_ranks(
            cards, self.tensor_parallel, self.context_parallel)


def data_parallel_ranks(cards: int, tensor_parallel: int = 1, context_parallel: int = 1) -> int:
    """Data-parallel ranks among ``cards``: each tensor-parallel group, or context-parallel
    ring of them, takes one micro-batch (Megatron-LM's and torchtitan's
    ``dp = world / (tp x cp)``), at least one."""
    return max(1, cards // max(1, tensor_parallel * context_parallel))


def field_meta(name: str) -> FieldMeta:
    """The :class:`FieldMeta` declared on the :class:`Request` field ``name``.

    A field declared without one still works everywhere (a stand-in is derived from its
    name, with no custom-id key, so its estimate buttons fall back to the store), and
    ``tests/test_request_fields.py`` fails until it is declared. Raises KeyError for a
    name that is not a field."""
    info = Request.model_fields[name]
    for item in info.metadata:
        if isinstance(item, FieldMeta):
            return item
    words = name.replace("_", " ")
    return FieldMeta(label=words, noun=words, key="", example=EXAMPLE_QUERY)


def has_field_meta(name: str) -> bool:
    """Whether the field ``name`` declares its :class:`FieldMeta` (tests require it)."""
    return any(isinstance(item, FieldMeta) for item in Request.model_fields[name].metadata)


def field_metas() -> dict[str, FieldMeta]:
    """Every :class:`Request` field's metadata, in declaration order."""
    return {name: field_meta(name) for name in Request.model_fields}
