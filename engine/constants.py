"""Every number the estimate depends on, named and sourced in one place, except each
framework's own facts, which ``engine.framework_facts`` names and sources by framework.

Units: GB = 10^9 bytes; TFLOPs = 10^12 floating-point operations per second.

Sources cited below:

* [napkin] the napkin calculator this product was specified from: 6·P·T rule,
  16 / 2.5 / 0.75 bytes per parameter, 85% usable VRAM, 35% utilization.
* [detailed] the seven-component calculator: NF4 at 4.127 bits, FP32 adapters,
  1.5 GB overhead, ranking by closeness to 85% use.
* [QLoRA] Dettmers et al. 2023, "QLoRA: Efficient Finetuning of Quantized LLMs",
  arXiv:2305.14314, section 2 (double quantization: 0.127 bits of constants per
  parameter; 0.5 without).
* [Korthikanti] Korthikanti et al. 2022, "Reducing Activation Recomputation in
  Large Transformer Models", arXiv:2205.05198, section 4.1.
* [Kaplan] Kaplan et al. 2020, "Scaling Laws for Neural Language Models",
  arXiv:2001.08361, section 2.1 (C ≈ 6·N·D).
* [Adafactor] Shazeer & Stern 2018, "Adafactor: Adaptive Learning Rates with
  Sublinear Memory Cost", arXiv:1804.04235 (factored second moment, no first
  moment by default: O(rows + cols) per matrix, which we count as ~0 B/param
  plus a small factored term; see ``OPTIMIZER_BYTES``).
* [Lion] Chen et al. 2023, "Symbolic Discovery of Optimization Algorithms",
  arXiv:2302.06675 (one momentum buffer).
* [bnb] bitsandbytes 8-bit optimizers, Dettmers et al. 2022, arXiv:2110.02861
  (two 8-bit states: 2 B/param).
"""

from __future__ import annotations

from typing import Final

GB: Final = 1e9
"""Bytes in a gigabyte (decimal, as GPU vendors and both source documents use)."""

# --- request defaults ([napkin], [detailed]) ---------------------------------
DEFAULT_LORA_RANK: Final = 16
DEFAULT_SEQ_LEN: Final = 2048
DEFAULT_EPOCHS: Final = 3.0
DEFAULT_MFU: Final = 0.35

# --- bounds on what a request may say (beyond them the question is a typo) ----
MAX_LORA_RANK: Final = 8192
MAX_SEQ_LEN: Final = 4_194_304  # 4M tokens
MAX_MICRO_BATCH: Final = 4096
MAX_GPU_COUNT: Final = 100_000
MAX_DATASET_TOKENS: Final = 10**15  # 1 quadrillion: far past any fine-tune
MAX_EPOCHS: Final = 1000.0
MAX_PRICE_PER_GPU_HOUR: Final = 1000.0
MAX_GRAD_ACCUM: Final = 4096
MIN_EPOCHS: Final = 0.001  # a thousandth of a pass; below it the cost rounds to nothing
MIN_MFU: Final = 0.01  # 1%: below it GPU-hours run past any plan (1e-320 gave infinity)
MAX_MFU: Final = 1.0
MIN_PRICE_PER_GPU_HOUR: Final = 0.01  # one cent per GPU-hour
MAX_LORA_DROPOUT: Final = 0.9  # PEFT's default is 0, common settings 0.05-0.1
MAX_NODES: Final = 10_000
MAX_TENSOR_PARALLEL: Final = 64  # past any NVLink domain a run would split a layer over
MAX_CONTEXT_PARALLEL: Final = 1024  # a 4M-token sequence in 4k-token shards
MIN_BUDGET_USD: Final = 1.0
MAX_BUDGET_USD: Final = 1e9
MIN_DEADLINE_HOURS: Final = 0.1  # six minutes
MAX_DEADLINE_HOURS: Final = 8760.0 * 5  # five years
MAX_SAMPLES: Final = 10**12
MAX_STEPS: Final = 10**9
MIN_GPU_MEMORY_GB: Final = 1.0
MAX_GPU_MEMORY_GB: Final = 2000.0  # past any single accelerator's memory

SYNTHETIC_MIN_B: Final = 0.1
SYNTHETIC_MAX_B: Final = 2000.0
"""Sizes (billions of parameters) a ``synthetic-<N>b`` model may have: from a 100M toy
(SmolLM2-135M's shape) to twice the largest published dense model; a bare size outside
them is refused."""
SYNTHETIC_TIED_BELOW_B: Final = 8.0
"""Synthetic models below this size tie the LM head to the embeddings, as Llama 3.2 1B
and 3B do (``tie_word_embeddings: true``) and Llama 3.1 8B does not."""

# --- bytes per parameter ------------------------------------------------------
PRECISION_BYTES: Final = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp32": 4.0}
"""Storage of one weight at each base precision ([detailed])."""

NF4_BITS_DOUBLE_QUANT: Final = 4.127
"""NF4 with double quantization, bits per parameter ([QLoRA], [detailed])."""
NF4_BITS: Final = 4.5
"""NF4 without double quantization: one FP32 absmax per 64 weights ([QLoRA])."""
GPTQ_BITS: Final = 4.0 + (16 + 4) / 128
"""GPTQ 4-bit with group size 128 (the usual checkpoints, Qwen's ``-Int4`` among them),
bits per parameter: the 4-bit code plus, per group of 128 inputs of each output column,
an FP16 scale and a packed 4-bit zero point (auto-gptq ``QuantLinear``: ``qweight``,
``scales``, ``qzeros``; the per-input ``g_idx`` adds under 0.01 bit)."""

MASTER_WEIGHT_BYTES: Final = 4.0
"""FP32 master copy kept by mixed-precision training ([detailed])."""

ADAPTER_BYTES: Final = 4.0
"""PEFT keeps LoRA matrices in FP32: 4 B weight, 4 B gradient ([detailed]); 2 B each in
pure BF16 with 16-bit adapters (``engine.memory.lora_adapter_bytes``)."""

OPTIMIZER_BYTES: Final = {
    "adamw": 8.0,  # two FP32 moments ([detailed])
    "adamw-fused": 8.0,  # the same moments, stepped by one kernel
    "adamw-8bit": 2.0,  # two 8-bit moments ([bnb])
    "sgd": 0.0,  # plain SGD without momentum keeps no state
    "lion": 4.0,  # one FP32 momentum ([Lion])
    "adafactor": 4.0 / 64,  # factored second moment only ([Adafactor]); see module doc
}
"""Optimizer state per trainable parameter with FP32 states."""

OPTIMIZER_BYTES_PURE_BF16: Final = {
    "adamw": 4.0,
    "adamw-fused": 4.0,
    "adamw-8bit": 2.0,
    "sgd": 0.0,
    "lion": 2.0,
    "adafactor": 2.0 / 64,
}
"""Optimizer state per trainable parameter when states are kept in BF16."""

# --- napkin mode ([napkin]) ---------------------------------------------------
NAPKIN_BYTES_PER_PARAM: Final = {"full": 16.0, "lora": 2.5, "qlora": 0.75}
"""The napkin rule's bytes per parameter, all in ([napkin])."""
NAPKIN_FULL_SPLIT: Final = {"base_weights": 2.0, "master_weights": 4.0, "gradients": 2.0,
                            "optimizer": 8.0}  # fmt: skip
"""How a napkin full fine-tune's 16 B/param is shown in the memory slots: 16-bit weights
and gradients, an FP32 master copy, AdamW's two FP32 moments ([napkin])."""
NAPKIN_BASE_BYTES: Final = {"lora": 2.0, "qlora": 0.5}
"""A napkin adapter run's base weights per parameter (16-bit; 4-bit for QLoRA): the rest
of its bytes per parameter is shown as the adapters and their training state."""

ZERO3_GATHERED_UNITS: Final = 2
"""Units (layers) ZeRO-3/FSDP holds unsharded at once: the current one and the
prefetched next one (torch.distributed.fsdp ``BackwardPrefetch`` docs)."""

# --- fixed terms ([detailed]) -------------------------------------------------
OVERHEAD_GB: Final = 1.5
"""CUDA context and framework buffers, flat per GPU."""

CARD_GB_BYTES: Final = 2**30
"""Bytes in one "GB" of a GPU's marketed memory size.

Vendors label GPU memory in binary units: an "80 GB" H100 or A100 holds 80 GiB
= 85.9 GB (torch reports ~79.1 GiB usable), a "24 GB" RTX 4090 24 GiB. Detailed
mode compares per-GPU memory with this true capacity; napkin mode uses the label
as the napkin rules do.
"""

USABLE_FRACTION: Final = 0.85
"""A run fits a card when it needs at most 85% of the card's memory ([napkin])."""
FIT_SLACK: Final = 1e-9
"""Float slack in a fit test (GB, or a share of a card): a run whose memory lands on a
line within rounding (``0.85 * cap`` computed two ways) is on it, not past it."""
CEIL_SLACK: Final = 1e-12
"""Float slack before a ceiling: a count that divides exactly stays that count."""

# --- activations ([Korthikanti]) ----------------------------------------------
ACTIVATION_BYTES: Final = 2.0
"""Activations are stored in 16-bit."""
FP32_BYTES: Final = 4.0
"""Bytes of an FP32 element (an RMSNorm's upcast input kept for backward)."""
DORA_SAVED_BYTES: Final = 4.0
"""Bytes per output element of each DoRA-adapted linear kept for backward, beyond LoRA's:
PEFT's ``DoraLinearLayer.forward`` returns ``(mag_norm_scale - 1) * base_result +
mag_norm_scale * lora_result * scaling``, and each product keeps its 16-bit tensor
operand (the base output and the LoRA output, 2 B each) for the magnitude's gradient
(huggingface/peft ``src/peft/tuners/lora/dora.py``)."""
DORA_WEIGHT_BYTES: Final = 12.0
"""HBM bytes per weight of one DoRA forward's weight norm: ``lora_weight`` written (2),
scaled (read 2, write 2), added to the weight (read 2 + 2, write 2), and the column norm
reading the sum (2)... 12 in all, once per forward of every adapted linear (PEFT
recomputes ``get_weight_norm`` on every call; the norm is detached, so backward adds
none)."""
DORA_WORKSPACE_BYTES: Final = 6.0
"""Bytes per weight of the largest adapted linear alive during its DoRA forward: the
16-bit ``lora_weight`` (``lora_B(lora_A(eye))``, d_in x d_out), its scaled copy and the
sum with the weight; beside them the ``torch.eye(d_in)`` PEFT builds to compute it
(``DORA_EYE_BYTES`` per element of d_in x d_in)."""
DORA_EYE_BYTES: Final = 2.0
"""Bytes per element of the d_in x d_in identity in the input's 16-bit dtype."""
DORA_KERNELS_PER_ADAPTER: Final = 20
"""Kernel launches DoRA adds per adapted linear per forward and backward, counted on
PEFT's ``DoraLinearLayer.forward``: the identity, two adapter matmuls and a transpose for
``lora_weight``, the cast, scale, add and norm, the division and view, the two products,
the sum (about 14), and their backward (about 6)."""
PEFT_ADAPTER_CAST_BYTES: Final = {
    ("lora", "autocast"): 13.0, ("qlora", "autocast"): 9.0,
    ("lora", "plain"): 19.5, ("qlora", "plain"): 19.5,
}
"""HBM bytes PEFT's adapter path moves per forward, per element of an adapted linear's
input and output together (``d_in + d_out`` per token), with FP32 adapters on a BF16
base (``PROFILE_FP32_ADAPTERS``), beyond the two small matmuls; by method and by whether
the step runs under BF16 autocast (the Trainer's ``bf16=True``) or plainly in BF16 (a
user who says ``pure bf16``). Counted on ``peft/tuners/lora/layer.py`` ``Linear.forward``
and ``lora/bnb.py`` ``Linear4bit.forward`` (0.21), 2 B a BF16 and 4 B an FP32 element:

* LoRA under autocast: the input cast to FP32 (read 2, write 4) and autocast's cast back
  for ``lora_A`` (read 4, write 2), which reads it (2): 14 per input element;
  ``lora_B``'s output (2), the scaling (read 2, write 2), the add (read 2 + 2, write 2):
  12 per output element; 13 on the average (inputs and outputs are about as wide).
* 4-bit under autocast: no input cast (``requires_conversion`` is off), ``lora_A``
  reads the input (2); the base output's clone (read 2, write 2), then as LoRA: 16 per
  output element; 9 on the average.
* Either plainly in BF16: the FP32 input cast (6), ``lora_A`` reading it (4): 10 per
  input element; ``lora_B``'s FP32 output (4), the scaling (8), the add or the cast back
  (10) and the other (6): 28 per output element; 19.5 on the average.

The backward moves about as much again (the casts' and the scaling's gradients,
``lora_A``'s second read of its input), and checkpointing's recomputed forward once
more."""
PEFT_ADAPTER_KERNELS: Final = {
    ("lora", "autocast"): 8.0, ("qlora", "autocast"): 7.0,
    ("lora", "plain"): 6.0, ("qlora", "plain"): 7.0,
}
"""Kernels one PEFT adapter launches per forward, in place of ``KERNELS_PER_ADAPTER``,
counted as ``PEFT_ADAPTER_CAST_BYTES``: under autocast the input's two casts (LoRA) or the
base output's clone (4-bit), the two weights' casts, the A and B matmuls, the scaling and
the add; plainly, the input cast, the two matmuls, the scaling, the add and the cast
back (and the clone, 4-bit). LoRA dropout above 0 adds its kernel."""
BNB_DEQUANT_KERNELS: Final = 1.0
"""Kernels bitsandbytes' ``dequantize_4bit`` launches per 4-bit matrix per pass before the
BF16 matmul; double quantization first dequantizes the absmax (``dequantize_blockwise``)
and adds its offset: ``BNB_DOUBLE_QUANT_KERNELS`` more (bitsandbytes ``functional.py``)."""
BNB_DOUBLE_QUANT_KERNELS: Final = 2.0
LORA_DROPOUT_BYTES: Final = 3.0
"""Bytes per input element of each adapted linear when LoRA dropout is on: the bool
mask ``native_dropout`` keeps for backward (1 B) and the dropped-out 16-bit input the
adapter's A matrix keeps for its gradient (2 B). PEFT gives every adapted module its
own dropout, so q, k and v each keep one (litgpt's fused QKV keeps one for the three,
which this overcounts). With dropout 0 PEFT uses ``nn.Identity`` and nothing extra is
kept."""
LOGITS_BYTES: Final = 4.0
"""Logits are upcast to FP32 for the cross-entropy loss."""
LARGE_LOGITS_GB: Final = 2.0
"""Logits this large (one FP32 copy) get a warning naming ``hf-loss`` and ``fused-ce``."""
LOGITS_BYTES_HF: Final = 12.0
"""Bytes per logit on Hugging Face transformers' unfused loss path (``hf-loss``): the
BF16 logits the model returns (2), the FP32 copy ``ForCausalLMLoss`` makes with
``logits.float()`` (4; in transformers 4.46-4.49 also a shifted ``.contiguous()`` copy)
and the FP32 log-softmax ``cross_entropy`` keeps for backward (4), plus the shifted
16-bit copy older model code makes before the loss (2: e.g. Qwen's
``lm_logits[..., :-1, :].contiguous()`` under the Trainer's BF16 autocast, which runs
the loss in FP32). 2 + 4 + 4 + 2 = 12. Checked against Qwen's published LoRA runs
(benchmarks/measurements.yaml, qwen-*), whose gap to one FP32 copy is about 8 B per
logit at every length."""

# --- compute ([Kaplan], [napkin], [detailed]) --------------------------------
FLOPS_PER_PARAM_TOKEN: Final = 6.0
"""2 forward + 4 backward FLOPs per parameter per token ([Kaplan])."""

PLANNING_UNCERTAINTY: Final = 0.40
"""The napkin rules' ±40% planning number ([napkin]); napkin mode still says it. The
detailed model states the band its cross-validation measures (``engine.accuracy.BANDS``)."""

# --- fit bands (share of card memory in use) ----------------------------------
# The tight band starts at the planning line, USABLE_FRACTION (85%).
BAND_FULL: Final = 1.0  # above this the run does not fit at all
BAND_GOOD: Final = 0.60  # 60-85%: good use of the card
BAND_LOOSE: Final = 0.30  # 30-60%: roomy; below 30%: oversized

COMM_WARNING_SHARE: Final = 0.15
"""Warn when this share of each step waits on communication."""
ZERO3_HOOKS_WARNING_SHARE: Final = 0.15
"""Warn when DeepSpeed ZeRO-3's per-parameter hooks add this share of each step."""
NATIVE_ATTENTION_TIP_SHARE: Final = 0.05
"""Suggest ``fa3`` when the card's native attention kernels would cut the time by this
share or more (FlashAttention-2 on Hopper and Blackwell, long sequences)."""
PURE_BF16_TIP_SHARE: Final = 0.15
"""An ``hf`` full fine-tune counted with FP32 master weights and moments is told what
pure BF16 (transformers 5's loading) would hold instead when that saves at least this
share of each card's memory."""
SINGLE_DEVICE_RECIPE_TIP_SHARE: Final = 0.15
"""A torchtune full fine-tune on one card counted with plain AdamW is told what its
single-device recipes' 8-bit paged AdamW stepped in backward would hold instead when that
saves at least this share of the card's memory."""
LAUNCH_BOUND_TIP_SHARE: Final = 0.25
"""A run whose step the host's kernel launches bound (the launch floor above the GPU's
own time) is told what a longer micro-batch would save when that is at least this share
of the time: the cheapest fix for a small model, or a short sequence, at batch 1."""
LAUNCH_BOUND_TIP_FACTORS: Final = (8, 4, 2)
"""Micro-batches the launch-bound tip tries, as multiples of the run's, largest first: the
first that holds the run within the planning line is the one it names."""
BF16_ADAPTERS_TIP_SHARE: Final = 0.10
"""Suggest ``bf16 adapters`` when PEFT's FP32 adapter casts take this share of the time or
more (long micro-batches on fast cards, where the casts' memory traffic rivals the
matmuls)."""
CONTEXT_PARALLEL_TIP_SHARE: Final = 0.5
"""Share of each card's memory that one sequence's activations take, on several cards
without context parallelism, from which the reply says ``cp`` would split them: data-
parallel sharding divides the weights and states, never a sequence's activations."""
SMALL_DATASET_TOKENS: Final = 5_000_000
"""Below this many trained tokens, batch 1 leaves the GPU idle between steps."""
FEW_OPTIMIZER_STEPS: Final = 100
"""Fewer optimizer steps than this over a whole run get a warning: a fine-tune's
learning-rate warmup alone is commonly tens of steps (the HF Trainer's ``warmup_ratio``
0.03-0.1 of a few hundred to a few thousand steps), so a run of a handful of huge steps
(thousands of cards at a stated batch) trains little whatever it costs. A judgment line,
not a measurement."""

LONG_SEQ_WARNING: Final = 8192
"""Warn when checkpointing is off at or beyond this sequence length ([detailed])."""

MAX_OPTIONS: Final = 6
"""Cards shown in the table ([detailed])."""


SAC_MATMUL_SAVE_PERIOD: Final = 2
"""Op-level selective activation checkpointing keeps the output of every second matmul
of a checkpointed layer, counting from its first, and of attention, and recomputes the
rest: torchtitan ``models/llama3/infra/parallelize.py`` ``_custom_policy`` (``_save_list``
of ``aten.mm`` and the SDPA kernels; "Saves output of all compute ops, except every
second mm"), copied by torchtune's ``training/_activation_checkpointing.py``."""

# --- mechanisms some frameworks switch on (engine.framework_facts says which) ---
TORCHAO_NF4_EAGER_PEAK_BYTES: Final = 14.0
"""Bytes per weight alive at the peak of one eager torchao NF4 dequantization, counted on
``get_original_weight`` (n weights, n/2 packed bytes): the high and low codes as int64
(``.to(torch.long)``, 4 B per weight each: 8), their BF16 look-ups (1 + 1), the scaled
halves (1 + 1) and ``torch.stack``'s BF16 result (2); the locals live until it returns.
8 + 2 + 2 + 2 = 14, against the 2 B of one fused BF16 copy
(``engine.framework_facts.PROFILE_DEQUANT_BYTES``)."""
TORCHAO_NF4_EAGER_TRAFFIC_BYTES: Final = 33.0
"""Bytes read and written per weight by one eager torchao NF4 dequantization (the same
chain): shift and mask (0.5 + 0.5 each), the int64 casts (0.5 + 4 each), the look-ups
(4 + 1 each), the scaler broadcasts and multiplies (1 + 3 each), the stack (2 + 2).
2 + 9 + 10 + 8 + 4 = 33, against 2.5 for bitsandbytes (``NF4_DEQUANT_BYTES``)."""
TORCHAO_NF4_EAGER_KERNELS: Final = 14
"""Kernels one eager torchao NF4 dequantization launches (the same chain): shift, mask,
two int64 casts, two look-ups, the scalers' divide, cast and add, two broadcast copies,
two multiplies and the stack."""
OFFLOADED_INPUTS_IN_FLIGHT: Final = 2
"""Layer inputs on the GPU under activation offload: the one being recomputed and the
one being fetched back (torchtune's offloading uses a separate stream to prefetch)."""

# --- the time model (engine.throughput) -----------------------------------------
FA_BACKWARD_FLOPS: Final = 2.5
"""FlashAttention-2's backward does 2.5x its forward matmul FLOPs: five matmuls to the
forward's two, since it recomputes the scores (Dao 2023, arXiv:2307.08691, section 3.1)."""
FA_EFFICIENCY: Final = 0.75
"""FlashAttention's FLOP rate relative to a large GEMM's on the same card: FlashAttention-2
reaches 50-73% of the A100's peak (Dao 2023, abstract; forward near the top, backward
lower) where cuBLAS GEMMs reach about 80%: ~0.62 / 0.8."""
EAGER_BACKWARD_FLOPS: Final = 2.0
"""Eager attention's backward: gradients of both score matmuls, 2x the forward."""
NF4_DEQUANT_BYTES: Final = 2.5
"""Bytes moved per NF4 parameter to dequantize it for one matmul: read 0.5 B of codes,
write 2 B of BF16 (bitsandbytes dequantize_4bit before the BF16 GEMM)."""
WEIGHT_READ_BYTES: Final = 2.0
"""A 16-bit weight read once per matmul pass (the memory-bound floor of a GEMM)."""
GRADIENT_READ_BYTES: Final = 2.0
"""A fused optimizer step reads each 16-bit gradient once; with FP32 master weights it
also writes the 16-bit weight copy once (2 B). With the master weight and the states
read and written once each (``engine.workload.fused_step_bytes``), a fused AdamW step
moves 28 B per parameter with FP32 states (DeepSpeed's FusedAdam,
``torch.optim.AdamW(fused=True)``) and 14 B in pure BF16."""
FOREACH_ADAMW_ACCESSES: Final = 21
"""Tensor-element reads and writes per parameter of one unfused ("foreach") AdamW step,
counted on ``torch.optim.adam._multi_tensor_adam`` (the default ``torch.optim.AdamW`` on
CUDA) and ``torch.nn.utils.clip_grad_norm_``: ``_foreach_lerp_`` of the first moment
(3), ``_foreach_mul_`` and ``_foreach_addcmul_`` of the second (2 + 3, the gradient
read once), ``_foreach_sqrt`` into a temporary (2), ``_foreach_div_`` and
``_foreach_add_`` of eps on it (2 + 2), ``_foreach_addcdiv_`` into the weight (4); the
gradient norm (1) and the clip's ``_foreach_mul_`` (2). Weight decay 0 (the Trainer's
default; a decay adds 2). Every tensor has the weight's dtype: FP32 under AMP (the
Trainer keeps FP32 weights, gradients and moments), BF16 in pure BF16."""
FOREACH_ADAMW_STEP_BYTES: Final = {
    "fp32": FOREACH_ADAMW_ACCESSES * 4.0,
    "pure-bf16": FOREACH_ADAMW_ACCESSES * 2.0,
}
"""HBM traffic of one unfused AdamW step per trainable parameter, bytes."""
GPUS_PER_NODE: Final = 8
"""Cards in one server (HGX/DGX boards and most cloud GPU VMs): beyond this a run
spans nodes."""
MACHINE_SIZES: Final = (1, 2, 3, 4, 8)
"""Cards in one rented machine, below a whole node: the counts SkyPilot's public catalog
snapshot offers one machine with (AcceleratorCount over its 11 clouds: 1, 2, 4 and 8
everywhere; 3 on RunPod's newer listing, Vast and Hyperbolic). A plan of 5, 6 or 7 cards
is billed as a machine of 8 (``engine.fit.rented_cards``)."""
MAX_GPUS_PER_NODE: Final = 72
"""The largest NVLink domain a catalog card may declare (GB200 NVL72): a bound on
``GpuSpec.gpus_per_node`` read from outside."""
FLOAT8_CAST_BYTES: Final = 5.0
"""HBM bytes per element of one dynamic FP8 cast (torchao ``float8`` tensorwise scaling,
torchao/float8/README.md: each operand's absolute maximum gives its scale, then it is
cast): the amax pass reads the 16-bit tensor (2), the cast reads it again (2) and writes
FP8 (1). Every decoder linear casts its input and weight in forward and its output
gradient in backward; ``torch.compile`` fuses part of it (``COMPILE_FUSION``)."""
FLOAT8_KERNELS_PER_LINEAR: Final = 6
"""Kernel launches of those casts per linear per micro-batch, before fusion: an amax
reduction and a cast for each of the three operands."""
CP_KV_PASSES: Final = {"forward": 1.0, "backward": 2.0}
"""Times the keys and values go round a context-parallel ring per layer and pass: once
in forward; in backward the keys and values again and their gradients back (ring
attention, Liu et al. 2023, arXiv:2310.01889; torch's ``context_parallel`` ring
``_scaled_dot_product_ring_flash_attention`` and its backward). Each card sends
``(cp - 1) / cp`` of the layer's 16-bit K and V, overlapped with the attention blocks."""
TP_COLLECTIVES_PER_LAYER: Final = 4
"""Collectives each tensor-parallel layer runs per pass over the micro-batch, each moving
the layer's whole ``tokens x hidden`` 16-bit activation: with sequence parallelism an
all-gather before, and a reduce-scatter after, both attention and the MLP (Korthikanti
et al. 2022, arXiv:2205.05198, §4.2.2: each of Megatron's two all-reduces per layer
becomes an all-gather and a reduce-scatter, the same bytes; Shoeybi et al. 2019,
arXiv:1909.08053, Fig. 4: two in forward, two in backward). The backward runs the
conjugate collectives, and a fully recomputed forward repeats the forward's. They sit on
the critical path: torchtitan overlaps them only with ``enable_async_tensor_parallel``."""
INTERNODE_GBPS: Final = {"nvlink": 50.0, "infinity-fabric": 50.0, "pcie": 12.5, "ethernet": 12.5}
"""Bandwidth of one NIC between nodes, GB/s one direction: data-center boards have one
400 Gb/s InfiniBand/RoCE NIC per GPU (NVIDIA DGX H100 reference architecture: 8x
ConnectX-7 400 Gb/s; AMD MI300X platforms alike); PCIe servers about 100 Gb/s a node."""
RAIL_FABRICS: Final = frozenset({"nvlink", "infinity-fabric"})
"""Fabrics whose nodes give every GPU its own NIC on its own rail (the DGX/HGX and MI300X
platforms above). NCCL splits a collective over several rings (channels), each leaving
the node through a different GPU's NIC, so a ring with g cards on a node crosses between
nodes on g NICs at once: per-GPU ring bandwidth min(intra-node link, g x NIC) (NCCL's
rail-local rings; NVIDIA DGX SuperPOD reference architecture, rail-optimized fabric).
Elsewhere the node's NIC carries every ring."""
LINK_GBPS_BY_FABRIC: Final = {
    "nvlink": 300.0,
    "infinity-fabric": 64.0,
    "pcie": 25.0,
    "ethernet": 25.0,
}
"""Fallback per-GPU bandwidth inside a node, GB/s, when the catalog has no ``link_gbps``:
NVLink 3 (A100, 600 GB/s both ways), Infinity Fabric (MI250X), PCIe 4.0 x16."""
NO_P2P_FACTOR: Final = 0.5
"""Without peer-to-peer (GeForce from the RTX 4090 on) every transfer crosses host
memory: down one PCIe link and up another, half the bandwidth."""
HOST_LINK_GBPS: Final = 25.0
"""CPU-GPU bandwidth for offload, GB/s: PCIe 4.0 x16 (32 GB/s raw) at about 80%."""
HOST_MEMORY_GBPS: Final = 200.0
"""DRAM bandwidth of one node's CPUs, GB/s (a two-socket server with 8-12 DDR channels
per socket reaches 200-400 GB/s). The offloaded optimizer step (DeepSpeed CPU-Adam,
torch's fused CPU AdamW) is bound by it: ``fused_step_bytes`` per parameter."""
RUN_STARTUP_S: Final = 600.0
"""Wall-clock seconds every run spends before its first step, on every card: reading the
checkpoint, quantizing it for QLoRA, process-group and FSDP/DeepSpeed set-up, the first
steps' compilation and allocator warm-up; about ten minutes in practice. Paid per card,
it is why a few hundred cards on a small dataset finish no sooner and cost far more."""
HBM_FALLBACK_GBPS: Final = 1000.0
"""Memory bandwidth assumed for a card whose catalog entry gives none (every shipped card
gives one: this guards a team's own catalog), GB/s: an A10-to-L40S-class GDDR card."""
MATMUL_FALLBACK_FRACTION: Final = 0.8
"""Achievable share of the rated dense figure for a card with no measured matmul rate."""

ZERO3_HOST_OPS_GATHER: Final = 42
"""Host-issued PyTorch calls (dispatcher ops and CUDA stream/event calls) DeepSpeed ZeRO-3
makes per micro-batch to fetch and release one gathered weight matrix, on top of the
model's own kernels; each costs about one launch of host time (``LAUNCH_S_PER_KERNEL``).
Counted on DeepSpeed 0.14 (``partitioned_param_coordinator.fetch_sub_module``,
``partition_parameters.free_param``, ``parameter_offload``'s module hooks): a fetch
(about 8: views, the stream context, event create, record and query), a release (about
7: aliases, ``record_stream``, ``torch.empty(0)``), the per-module stream waits and
autograd hook functions (8-10), and a second fetch and release in backward or recompute
for models past ``stage3_max_reuse_distance`` (1e9 elements). With the gradient hook
below, 40-65 a trained matrix without checkpointing and 45-80 with it: 42 + 18 = 60 is
the middle. On one GPU the all-gather itself is skipped; none of the rest is."""
ZERO3_HOST_OPS_GRADIENT: Final = 18
"""The same for the gradient hook of one trained tensor per micro-batch
(``stage3.__add_grad_to_ipg_bucket``: stream wait, bucket copy, ``record_stream``;
``reduce_scatter_coalesced``: flatten, scale, the collective; ``partition_grads``:
narrow, copy or add): frozen tensors have none."""
ZERO3_PERSISTENCE_HIDDEN_MULTIPLE: Final = 10
"""``stage3_param_persistence_threshold`` as the HF Trainer fills DeepSpeed's ``"auto"``:
``10 * hidden_size`` elements (transformers ``integrations/deepspeed.py``,
``trainer_config_finalize``; DeepSpeed's own default is 1e5). Tensors this small (norms,
biases, low-rank LoRA factors) stay whole on every GPU, so only their gradient hook
runs."""
KERNELS_PER_LAYER: Final = 44
"""Kernels one decoder layer launches in eager PyTorch per forward, counted on
transformers' ``LlamaDecoderLayer``: two RMSNorms of 8 each (upcast, square, mean, add
eps, rsqrt, multiply, downcast, weight) = 16; the q/k/v/o projections, 4; RoPE on q
and k (multiply by cos, rotate-half's negate and concatenate, multiply by sin, add),
2 x 5 = 10; two layout copies around attention and attention itself, 3; the gate,
up and down projections, the activation and its product, 5; two residual adds; four
dtype casts."""
DENSE_MLP_KERNELS: Final = 5
"""The MLP's share of ``KERNELS_PER_LAYER``: gate, up and down projections, the activation
and its product."""
MOE_ROUTER_KERNELS: Final = 10
"""Kernels a mixture-of-experts block launches per forward before its experts, counted on
transformers' ``Qwen3MoeSparseMoeBlock``: the router's linear, the FP32 softmax (cast and
softmax), ``topk``, the renormalization (sum, divide), the cast back, and the
``one_hot``/``permute``/``sum``/``nonzero`` that find the experts hit."""
KERNELS_PER_EXPERT: Final = 10
"""Kernels each expert that receives a token launches per forward where the experts run
one after another (``PROFILE_EXPERT_LOOP``), counted on transformers'
``Qwen3MoeSparseMoeBlock`` loop body: ``torch.where`` on its mask (a ``nonzero``), the
gather of its tokens, the gate, up and down projections, the activation and its
product, the gather and multiply by the routing weights, and ``index_add_``."""
KERNELS_PER_ADAPTER: Final = 5
"""Kernels a PEFT LoRA adapter adds to its linear per forward: dropout (or identity),
the A and B matmuls, the scaling multiply and the add."""
FORWARD_SHARE: Final = 1.0 / 3.0
"""The forward's share of a step's elementwise traffic and kernels (a backward does about
twice the forward's): what checkpointing's recomputed forward adds."""
BACKWARD_KERNELS: Final = 2.0
"""A backward launches about twice the forward's kernels (input and weight gradients,
elementwise backward)."""
COMPILE_FUSION: Final = 0.5
"""``torch.compile`` fuses the elementwise chains: about half the kernels and half the
elementwise traffic (torchtune's flags table: compile alone took Llama 3.2 3B from 7,075
to 8,998 tokens/s on an A100, a 1.27x step speed-up, and 60.0 to 51.0 GiB)."""

# Fitted on benchmarks/measurements.yaml (runs from ../shared/reference, and this
# project's own runs on one H200, 2026-12-04) by benchmarks/accuracy.py --fit;
# leave-one-source-out results are printed there.
GEMM_EFFICIENCY: Final = 0.80
"""Share of the card's achievable matmul rate (``GpuSpec.matmul_tflops``) that a training
step's matmuls and attention reach. The catalog figure is a maximum: the best shape of
a search (stas00/ml-engineering's "Maximum Achievable Matmul FLOPS"), timed back to back
on a warm card. A step runs the model's own shapes (the LM head, skinny LoRA factors,
widths that tile badly), cuBLAS's heuristic pick rather than the searched best, and
elementwise kernels between matmuls, so it falls short of that. Fitted on a 0.60-1.00
grid in steps of 0.05; the fit prefers the higher of two equal values (the catalog's
own figure unless the runs say otherwise). Every leave-one-source-out fold gives
0.75-0.80."""
LAUNCH_S_PER_KERNEL: Final = 12.0e-6
"""Host-side seconds per kernel launch, Python dispatch and hooks included: the GPU
cannot run a micro-batch faster than the host issues its kernels, a floor that
dominates small micro-batches. Fitted within the published range of eager PyTorch's
CPU-side cost per op, about 5-25 us (Python, pybind11, autograd and ATen dispatch and
``cudaLaunchKernel``; e.g. "From PyTorch op to kernel launch",
jiahuanglin.xyz/all_lessons/gpu_kernel_serving/18_pytorch_to_kernel.html): the fit may
not leave that range, so a source without small micro-batches cannot drive it to 0.
It is a fact of the host as much as of the framework: fitted on the published runs
only, since this project's own runs are timed at their machine's measured figure
(19-29.5 us a kernel on the sandboxed H200 hosts of two sessions,
benchmarks/host_overhead.py)."""
ELEMENTWISE_PASSES: Final = 19.5
"""HBM bytes moved by the non-matmul kernels (norms, activations, RoPE, residuals,
dropout, the loss) per byte of activation the forward stores. Each stored tensor is
written, read forward and read and written again backward, and eager PyTorch adds
temporaries no one stores (RMSNorm upcasts to FP32 and runs five kernels: about 18
bytes moved per stored byte in its forward alone), so the fit searches 8-20. Fitted."""

CUDA_CONTEXT_GB: Final = 0.5
"""The CUDA context nvidia-smi sees and torch's counters do not (0.5-1 GB in the
published runs' notes; 0.72 GB measured on an H200 with torch 2.11 and CUDA 13,
benchmarks/gpu_runs/h200-2026-12-04.jsonl). The estimate is what the card must hold
(torch peak reserved plus this); ``torch_reserved_gb`` in the JSON takes it off."""

# --- questions that solve for a limit (engine/solve.py) and budgets (engine/constraints.py)
SOLVE_SEQ_STEP: Final = 256
"""A solved sequence length rounds down to a multiple of this (issue 16): kernels and
packing work in such blocks, and users quote contexts in them."""
SOLVE_REFERENCE_GPU: Final = "h100-sxm"
"""The card a limit is solved for when the question names none (the reply says so)."""
BIGGER_CARD_FACTOR: Final = 1.5
""""A bigger card" in a solve reply: the smallest catalog card with at least this many
times the memory (else the largest bigger one), so the step is worth a change of card."""
MAX_CLUSTER_NODES: Final = 64
"""Nodes a budget or deadline option may use at most (64 x 8 = 512 cards): the largest
on-demand clusters the catalog's clouds rent without a reservation."""
NODE_STEP_PAST_CLUSTER: Final = 1.25
"""Past ``MAX_CLUSTER_NODES``, a budget or deadline search tries node counts 25% apart
rather than every one: the cost of a run changes by a few percent between neighbours
there, and thousands of counts per card would stall the bot for seconds."""
