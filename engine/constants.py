"""Every number the estimate depends on, named and sourced in one place.

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

# --- bytes per parameter ------------------------------------------------------
PRECISION_BYTES: Final = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "fp32": 4.0}
"""Storage of one weight at each base precision ([detailed])."""

NF4_BITS_DOUBLE_QUANT: Final = 4.127
"""NF4 with double quantization, bits per parameter ([QLoRA], [detailed])."""
NF4_BITS: Final = 4.5
"""NF4 without double quantization: one FP32 absmax per 64 weights ([QLoRA])."""

MASTER_WEIGHT_BYTES: Final = 4.0
"""FP32 master copy kept by mixed-precision training ([detailed])."""

ADAPTER_BYTES: Final = 4.0
"""PEFT keeps LoRA matrices in FP32: 4 B weight, 4 B gradient ([detailed])."""

OPTIMIZER_BYTES: Final = {
    "adamw": 8.0,  # two FP32 moments ([detailed])
    "adamw-8bit": 2.0,  # two 8-bit moments ([bnb])
    "sgd": 0.0,  # plain SGD without momentum keeps no state
    "lion": 4.0,  # one FP32 momentum ([Lion])
    "adafactor": 4.0 / 64,  # factored second moment only ([Adafactor]); see module doc
}
"""Optimizer state per trainable parameter with FP32 states."""

OPTIMIZER_BYTES_PURE_BF16: Final = {
    "adamw": 4.0,
    "adamw-8bit": 2.0,
    "sgd": 0.0,
    "lion": 2.0,
    "adafactor": 2.0 / 64,
}
"""Optimizer state per trainable parameter when states are kept in BF16."""

# --- napkin mode ([napkin]) ---------------------------------------------------
NAPKIN_BYTES_PER_PARAM: Final = {"full": 16.0, "lora": 2.5, "qlora": 0.75}

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

# --- activations ([Korthikanti]) ----------------------------------------------
ACTIVATION_BYTES: Final = 2.0
"""Activations are stored in 16-bit."""
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
RECOMPUTE_MFU_FACTOR: Final = 6.0 / 8.0
"""Gradient checkpointing reruns the forward pass: 8 FLOPs of work for 6 useful."""

COMM_OVERHEAD: Final = {
    "single": 0.0,
    "nvlink": 0.10,
    "infinity-fabric": 0.15,
    "ethernet": 0.20,
    "pcie": 0.30,
}
"""Multi-GPU communication overhead added to GPU-hours, by interconnect.

The napkin document puts multi-GPU loss at 10-30%. We map the fastest fabrics
(NVLink/NVSwitch) to the low end, PCIe-only cards to the high end, and AMD's
Infinity Fabric and Gaudi's on-die RoCE between them.
"""

PLANNING_UNCERTAINTY: Final = 0.40
"""Every estimate is a ±40% planning number ([napkin])."""

# --- fit bands (share of card memory in use) ----------------------------------
BAND_TIGHT: Final = 0.85  # above this the run does not fit
BAND_GOOD: Final = 0.60  # 60-85%: good use of the card
BAND_LOOSE: Final = 0.30  # 30-60%: roomy; below 30%: oversized

SMALL_DATASET_TOKENS: Final = 5_000_000
"""Below this many trained tokens, batch 1 leaves the GPU idle between steps."""

LONG_SEQ_WARNING: Final = 8192
"""Warn when checkpointing is off at or beyond this sequence length ([detailed])."""

MAX_OPTIONS: Final = 6
"""Cards shown in the table ([detailed])."""
