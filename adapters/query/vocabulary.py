"""The fixed words of the query language: keywords, switches, filler."""

from __future__ import annotations

from typing import Final

from adapters.query.conversation import CONVERSATION_WORDS
from engine.choices import (
    Framework,
    LoraTargets,
    Method,
    Mode,
    Optimizer,
    Precision,
    Sharding,
    StatePrecision,
)


def _table(groups: dict[tuple[str, object], tuple[str, ...]]) -> dict[str, tuple[str, object]]:
    """Invert ``{(field, value): words}`` into ``{word: (field, value)}``."""
    return {word: key for key, words in groups.items() for word in words}


KEYWORDS: Final = _table(
    {
        ("method", Method.FULL): (
            "full", "fft", "full-ft", "full-finetune", "full-fine-tune", "full-parameter",
            "full-params", "full-param", "full-parameters", "full-weight", "full-weights",
            "full-finetuning",  # Unsloth's full_finetuning=True
        ),
        ("method", Method.LORA): ("lora", "use-peft"),  # TRL's --use_peft: LoRA
        ("method", Method.QLORA): ("qlora",),
        ("lora_targets", LoraTargets.ALL_LINEAR): (
            "all-linear", "alllinear", "lora-target-linear",  # axolotl's lora_target_linear
        ),
        ("lora_targets", LoraTargets.ATTENTION): (
            "attn", "attention", "attn-only", "qkvo", "qkv",  # q, k, v counted with o
        ),
        ("lora_targets", LoraTargets.QV): ("qv", "qv-only", "q-v"),
        ("lora_targets", LoraTargets.MLP): ("mlp", "mlp-only", "ffn"),
        ("optimizer", Optimizer.ADAMW): (
            "adamw", "adam", "adamw-torch", "adamw-hf", "paged-adamw-32bit", "paged-adamw",
        ),
        ("optimizer", Optimizer.ADAMW_FUSED): (
            "adamw-fused", "fused-adamw", "fused-adam", "adamw-torch-fused",  # HF's optim
            "adamw-apex-fused",
        ),
        ("optimizer", Optimizer.ADAMW_8BIT): (
            "adamw-8bit", "adamw8bit", "adam8bit", "adam-8bit", "8bit-adam", "8bit-adamw",
            "paged-adamw-8bit", "adamw-bnb-8bit", "bnb-adamw-8bit",  # HF's adamw_bnb_8bit
        ),
        ("optimizer", Optimizer.SGD): ("sgd",),
        ("optimizer", Optimizer.ADAFACTOR): ("adafactor",),
        ("optimizer", Optimizer.LION): ("lion",),
        ("precision", Precision.BF16): ("bf16", "bfloat16", "torch.bfloat16"),
        ("precision", Precision.FP16): ("fp16", "float16", "torch.float16"),
        ("precision", Precision.FP8): ("fp8",),
        ("precision", Precision.FP32): ("fp32", "float32", "torch.float32"),
        ("state_precision", StatePrecision.PURE_BF16): ("pure-bf16", "bf16-true"),
        ("state_precision", StatePrecision.FP32): ("fp32-states", "mixed-precision", "amp"),
        ("sharding", Sharding.ZERO1): ("zero1", "zero-1", "z1"),
        # FSDP's SHARD_GRAD_OP shards gradients and states, not weights: ZeRO-2's split
        # (as a config's fsdp: shard_grad_op is read, adapters/trainconfig/mappings.py)
        ("sharding", Sharding.ZERO2): ("zero2", "zero-2", "z2", "shard-grad-op"),
        ("sharding", Sharding.ZERO3): ("zero3", "zero-3", "z3", "zero3++", "zero++"),
        # FSDP's strategy names as HF's ``--fsdp "full_shard auto_wrap"`` and accelerate's
        # ``fsdp_sharding_strategy`` spell them (NO_SHARD is plain data parallelism).
        ("sharding", Sharding.FSDP): (
            "fsdp", "fsdp1", "fsdp2", "full-shard",
            "use-fsdp", "fsdp-config",  # accelerate launch --use_fsdp; a config's fsdp_config:
        ),
        ("sharding", Sharding.NONE): ("ddp", "no-sharding", "no-shard",
                                      "distributed-data-parallel"),
        # FSDP's HYBRID_SHARD: sharded within a node, replicated across nodes
        ("sharding", Sharding.HSDP): ("hsdp", "hybrid-shard", "hybrid-sharding"),
        ("mode", Mode.NAPKIN): ("napkin",),
        ("mode", Mode.DETAILED): ("detailed",),
        ("framework", Framework.HF): (
            "hf", "huggingface", "hugging-face", "transformers", "trl", "peft", "axolotl",
            "llama-factory", "llamafactory", "llamafactory-cli", "swift", "ms-swift",
            "accelerate",
            "hf-trainer", "sfttrainer", "sft-trainer", "transformers-trainer",
            "axolotl.cli.train",  # torchrun/accelerate ... -m axolotl.cli.train
        ),
        ("framework", Framework.UNSLOTH): ("unsloth", "use-unsloth"),  # LLaMA-Factory's key
        ("framework", Framework.TORCHTUNE): ("torchtune",),
        ("framework", Framework.LITGPT): ("litgpt", "lit-gpt"),
        # torchtitan's own launch: torchrun ... -m torchtitan.train
        ("framework", Framework.TORCHTITAN): ("torchtitan", "torchtitan.train"),
        ("framework", Framework.GENERIC): ("generic",),
        ("tensor_parallel", 1): ("no-tp", "no-tensor-parallel", "no-tensor-parallelism"),
        ("context_parallel", 1): ("no-cp", "no-context-parallel", "no-context-parallelism"),
        ("spot", False): ("on-demand", "ondemand"),
        # DeepSpeed's offload_optimizer alone, or with offload_param (FSDP's CPUOffload)
        ("offload_weights", False): ("offload-optimizer", "optimizer-offload"),
        ("offload_weights", True): (
            "offload-param", "offload-params", "param-offload", "offload-weights",
            "offload-parameters", "offload-all",
            "fsdp-offload-params",  # accelerate's (FSDP's CPUOffload(offload_params=True))
        ),
    }
)
"""Words that set one field to one value."""

FLAGS: Final = {
    **dict.fromkeys(
        ("ckpt", "checkpointing", "grad-ckpt", "gradient-checkpointing",
         "ac",  # torchtitan's and torchtune's short name (ac_mode, [activation_checkpoint])
         "activation-checkpointing", "enable-activation-checkpointing",  # torchtune
         "use-gradient-checkpointing",  # Unsloth's get_peft_model
         "fsdp-activation-checkpointing"),  # accelerate's
        "grad_checkpointing",
    ),
    **dict.fromkeys(
        ("flash", "flash-attn", "flash-attention", "flashattention", "fa2", "flash-attention-2",
         "flash-attn-2", "sdpa"),
        "flash_attention",
    ),
    **dict.fromkeys(
        ("fa3", "fa4", "flash-attention-3", "flash-attn-3", "flashattention-3", "flashattention3",
         "flash-attention-4", "flash-attn-4",
         "cudnn-attention", "cudnn-attn", "cudnn-sdpa"),
        "native_attention",
    ),
    **dict.fromkeys(
        ("fused-ce", "fused-cross-entropy", "liger", "liger-kernel", "use-liger-kernel",
         "use-liger",
         # Apple's Cut Cross-Entropy (axolotl's cut_cross_entropy, Unsloth): the logits
         # are never held, as Liger's fused linear cross-entropy does not hold them
         "cut-cross-entropy", "cce"),
        "fused_ce",
    ),
    **dict.fromkeys(("hf-loss", "hf-ce", "unfused-ce"), "hf_loss"),
    # PEFT's get_peft_model(..., autocast_adapter_dtype=...): FP32 adapters on a BF16 base
    **dict.fromkeys(("fp32-adapters", "fp32-adapter", "autocast-adapter-dtype",
                     "fp32-lora"), "fp32_adapters"),
    # PEFT's LoraConfig(use_dora=True), axolotl's peft_use_dora, torchtune's use_dora
    **dict.fromkeys(("dora", "use-dora", "peft-use-dora"), "dora"),
    **dict.fromkeys(("double-quant", "double-quantization",
                     "bnb-4bit-use-double-quant"),  # transformers' BitsAndBytesConfig
                    "double_quant"),
    **dict.fromkeys(("gptq", "gptq-int4", "auto-gptq", "int4-gptq"), "gptq"),
    # torchtune's fsdp_cpu_offload (config key and command-line override), torchtitan's
    # --training.enable_cpu_offload
    **dict.fromkeys(("offload", "cpu-offload", "fsdp-cpu-offload", "enable-cpu-offload",
                     "offloading", "offloaded", "cpu-offloading",
                     # ZeRO-Infinity's NVMe offload: read as host memory (docs/query.md)
                     "nvme", "nvme-offload"),
                    "offload"),
    **dict.fromkeys(("compile", "torch-compile", "torch.compile", "compiled", "compile.enable",
                     # torch.compile's modes (mode="max-autotune"): compiled either way
                     "max-autotune", "max-autotune-no-cudagraphs", "reduce-overhead"),
                    "compile"),
    **dict.fromkeys(
        ("float8", "fp8-training", "float8-training", "float8-linear", "fp8-matmuls",
         "float8-matmuls"),  # torchao's Float8Linear, torchtitan's float8 converter
        "float8",
    ),
    **dict.fromkeys(
        ("optimizer-in-backward", "optimizer-in-bwd", "opt-in-bwd", "optim-in-bwd"),
        "optimizer_in_backward",
    ),
    **dict.fromkeys(
        ("selective-ckpt", "selective-checkpointing", "selective-ac",
         "selective-activation-checkpointing", "sac", "op-sac", "selective"),
        "selective_checkpointing",
    ),
    **dict.fromkeys(
        ("activation-offload", "activation-offloading", "offload-activations",
         "enable-activation-offloading"),  # torchtune
        "activation_offload",
    ),
    **dict.fromkeys(("spot", "spot-price", "spot-prices", "preemptible", "interruptible"),
                    "spot"),
    **dict.fromkeys(("packing", "packed", "pack", "sample-packing"), "packing"),
}
"""Boolean switches: the word turns the field on; ``no-word`` turns it off."""

NEGATIONS: Final = frozenset({"no", "without", "drop", "disable", "remove", "off"})
"""Said before a switch, they turn it off (``no ckpt``, ``turn off offload``)."""

FILLER: Final = frozenset(
    {
        "what", "what's", "whats", "if", "with", "on", "at", "and", "for", "using", "a", "an",
        "the", "to", "of", "in", "how", "about", "instead", "use", "try", "then", "it", "is",
        "would", "will", "does", "cost", "costs", "much", "me", "please", "via", "over",
        "fine-tune", "finetune", "fine-tuning", "finetuning", "train", "training",
        "gpu", "gpus", "card", "cards", "nvidia", "amd", "steps", "+", "&", "-", "–", "—",
        # plain English around a question (issue 15): never changes the estimate
        "fine", "tune", "tuning", "tuned", "sft", "finetuned", "fine-tuned", "my", "our", "we",
        "i", "you", "want", "need", "run", "running", "model", "models", "dataset", "data",
        "corpus", "can", "could", "should", "do", "be", "take", "takes", "long", "estimate",
        "tell", "give", "this", "that", "there", "are", "was", "am", "needed", "required",
        "across", "each", "get", "job", "hi", "hey", "ok", "so", "like", "roughly",
        "approximately", "around", "many", "which", "quote", "price-out",
        "instruct", "instruction", "chat", "base", "pretrained", "weights", "checkpoint",
        # "target q_proj v_proj", "target_modules all-linear": the targets follow
        "target", "targets", "target-modules", "lora-target-modules", "lora-targets",
        "lora-target", "lora-attn-modules",  # LLaMA-Factory's, torchtune's
        # the config keys that only say which method follows (LLaMA-Factory, ms-swift)
        "finetuning-type", "train-type", "adapter",  # axolotl's adapter: lora | qlora
        # where a notebook runs (the card that follows is what counts)
        "colab", "kaggle", "free",  # "free colab"
        # the library behind a word already said (QLoRA's base, 8-bit Adam)
        "bnb", "bitsandbytes",
        "layers", "layer", "only", "modules", "ft",
        # HF's ``--fsdp "full_shard auto_wrap"``: how FSDP wraps, not what it holds
        "auto-wrap",
        # a follow-up's plain English ("same but full", "switch to hf", "make it 2 epochs")
        "same", "but", "now", "again", "let's", "lets", "switch", "make", "change", "enable",
        "enabled", "used", "uses", "go", "have", "has", "had",  # "what if we used unsloth"
        "turn",  # "turn on offload" is offload; "turn off ckpt" reads "off ckpt"
        "memory", "vram", "usage", "peak", "requirement", "requirements",
        # the form factor every card id already defaults to, and the link every card's
        # catalog entry already states
        "sxm", "sxm4", "sxm5", "nvlink",
        # HF's --optim and a config's optimizer: key: the optimizer's name follows
        "optim", "optimizer",
        # keys whose value is read on its own (a dtype, nf4, use_reentrant's switch)
        "torch-dtype", "bnb-4bit-quant-type", "bnb-4bit-compute-dtype", "dtype",
        "compute-dtype",
        # torchtitan's [training] mixed_precision_param: FSDP's parameter dtype
        "mixed-precision-param",
        "bnb-4bit-quant-storage", "gradient-checkpointing-kwargs",
        # how batches are formed, not how long they are
        "group-by-length",
        # TF32 matmuls for FP32 tensors: a BF16 run's matmuls are BF16 already
        "tf32",
        # the software stack under a named card (a version after one is read too)
        "cuda", "rocm", "pytorch", "torch",
        # the learning-rate schedule and NEFTune's noise: no change to memory or time
        "cosine", "cosine-schedule", "linear-schedule", "constant-schedule", "neftune",
        # LoRA variants that change only the adapter's scaling (rsLoRA: alpha / sqrt(r))
        # or its learning rates (LoRA+): the same memory and time as LoRA
        "rslora", "use-rslora", "lora+", "loraplus", "lora-plus",
        # a question as people ask it ("will 8b full fit on a 4090", "is it possible to
        # lora 8b on a 3090", "is a 4090 enough", "cheapest way to lora 8b"): every
        # estimate already says whether and how it fits
        "fit", "fits", "possible", "enough", "way", "ballpark",
    }
) | CONVERSATION_WORDS
"""Words that carry no meaning for the estimate."""

CARD_WORDS: Final = frozenset({"gpu", "gpus", "card", "cards"})
HOURLY: Final = (
    "/hr", "/h", "/hour", "/gpu-hr", "/gpu-hour", "/gpuh", "/gpu/hr", "/gpu/h", "/hr/gpu",
    "hourly", "per-hour", "per-gpu-hour",
)
HOUR_WORDS: Final = frozenset({"hour", "hr", "gpu-hour", "gpu-hr"})
TOKEN_WORDS: Final = frozenset({"tokens", "token", "tok", "toks"})
"""The unit a length or a dataset is counted in."""
FOUR_BIT_WORDS: Final = frozenset({"nf4", "fp4", "4bit", "4-bit", "bnb-4bit", "load-in-4bit"})
"""A 4-bit base: QLoRA, whether or not ``lora`` is said too (``4-bit lora``)."""
NUMBER_WORDS: Final = {
    word: str(n)
    for n, word in enumerate(
        ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
         "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
         "eighteen", "nineteen", "twenty")
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "single": "1", "dual": "2", "quad": "4"}
"""Number words read as digits (``two epochs``, ``eight h100s``, ``dual 4090``)."""
VARIANT_SUFFIXES: Final = (
    "-instruct", "-chat", "-it", "-base", "-hf", "-sft", "-bnb-4bit", "-4bit",
)
"""Checkpoint variants that share their base model's architecture (``-instruct``)."""
VARIANT_WORDS: Final = frozenset(x[1:] for x in VARIANT_SUFFIXES if "4bit" not in x)
"""The same variants said as a word apart (``mistral 7b instruct``)."""
SPELLED_SCALE: Final = {
    "hundred": "00", "thousand": "k", "million": "m", "mil": "m", "mln": "m", "billion": "b",
    "bn": "b", "trillion": "t",
}
SCALE_LETTERS: Final = frozenset({"k", "m", "b"})
"""A scale typed apart from its number (``50 M tokens``, ``seq 8 k``): joined to it."""

