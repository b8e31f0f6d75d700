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
PHRASES: Final = {
    # sizes and lengths
    ("batch", "size"): "batch-size",
    ("micro", "batch"): "micro-batch",
    ("micro", "batch", "size"): "micro-batch",
    ("global", "batch", "size"): "global-batch-size",
    ("global", "batch"): "global-batch-size",
    ("effective", "batch", "size"): "global-batch-size",
    ("effective", "batch"): "global-batch-size",
    ("total", "batch", "size"): "global-batch-size",
    ("total", "train", "batch", "size"): "global-batch-size",
    ("per", "device", "batch", "size"): "per-device-batch-size",
    ("per", "device", "train", "batch", "size"): "per-device-train-batch-size",
    ("gradient", "accumulation"): "gradient-accumulation",
    ("gradient", "accumulation", "steps"): "gradient-accumulation",
    ("accumulation", "steps"): "accumulation-steps",
    ("accum", "steps"): "accum-steps",
    ("grad", "accum", "steps"): "grad-accum",
    ("grad", "accum"): "grad-accum",
    ("sequence", "length"): "sequence-length",
    ("seq", "length"): "seq-len",
    ("seq", "len"): "seq-len",
    ("per-device", "batch"): "per-device-batch",
    ("per-device", "batch", "size"): "per-device-batch-size",
    ("per-device", "train", "batch", "size"): "per-device-train-batch-size",
    ("per-gpu", "batch"): "per-gpu-batch-size",
    # the batch said per device in words ("per device batch 8", "batch per gpu 2")
    ("per", "device", "batch"): "per-device-batch",
    ("per", "gpu", "batch"): "per-gpu-batch-size",
    ("per", "gpu", "batch", "size"): "per-gpu-batch-size",
    ("batch", "per", "gpu"): "batch-size-per-gpu",
    ("batch", "per", "device"): "batch-size-per-gpu",
    ("batch", "size", "per", "gpu"): "batch-size-per-gpu",
    ("batch", "size", "per", "device"): "batch-size-per-gpu",
    ("bs", "per", "gpu"): "batch-size-per-gpu",
    ("bs", "per", "device"): "batch-size-per-gpu",
    ("per-gpu", "batch", "size"): "per-gpu-batch-size",
    ("local", "batch"): "local-batch-size",  # torchtitan's local_batch_size
    ("local", "batch", "size"): "local-batch-size",
    ("max", "length"): "max-length",  # HF's max_length, spaced
    ("max", "len"): "max-len",
    ("max", "seq", "length"): "max-seq-length",
    ("max", "seq", "len"): "max-seq-len",
    ("max", "sequence", "length"): "max-seq-length",
    ("context", "length"): "context-length",
    ("context", "window"): "context-length",
    ("tokens", "context"): "ctx",
    ("token", "context"): "ctx",
    ("tokens", "of", "context"): "ctx",
    ("tokens", "context", "window"): "ctx",
    ("token", "context", "window"): "ctx",
    ("tokens", "per", "epoch"): "tokens",  # the dataset is what one epoch reads
    ("tokens", "an", "epoch"): "tokens",
    # switches
    ("gradient", "checkpointing"): "gradient-checkpointing",
    ("grad", "checkpointing"): "gradient-checkpointing",
    ("grad", "ckpt"): "grad-ckpt",
    # HF's attn_implementation: "eager" is the unfused attention, the others FlashAttention
    ("eager", "attention"): "no-flash",
    ("bf16", "adapters"): "no-fp32-adapters",
    ("bf16", "adapter"): "no-fp32-adapters",
    ("fp32", "adapters"): "fp32-adapters",
    ("fp32", "adapter"): "fp32-adapters",
    ("attn-implementation", "eager"): "no-flash",
    ("attn-implementation", "sdpa"): "sdpa",
    ("attn-implementation", "flash-attention-2"): "flash-attention-2",
    ("activation", "checkpointing"): "activation-checkpointing",
    ("flash", "attention"): "flash-attention",
    # tensor parallelism and hybrid sharding (adapters/query/parallel.py)
    ("tensor", "parallel"): "tensor-parallel",
    ("context", "parallel"): "context-parallel",
    ("pipeline", "parallel"): "pipeline-parallel",
    ("expert", "parallel"): "expert-parallel",
    ("expert", "parallelism"): "expert-parallelism",
    ("pipeline", "parallelism"): "pipeline-parallelism",
    ("context", "parallelism"): "context-parallelism",
    ("context", "parallel", "size"): "context-parallel-size",
    ("context", "parallel", "degree"): "context-parallel-degree",
    ("tensor", "parallelism"): "tensor-parallelism",
    ("tensor", "parallel", "size"): "tensor-parallel-size",
    ("tensor", "parallel", "degree"): "tensor-parallel-degree",
    ("tensor", "model", "parallel", "size"): "tensor-model-parallel-size",
    ("tp", "size"): "tp-size",
    ("tp", "degree"): "tp-degree",
    ("hybrid", "shard"): "hybrid-shard",
    ("hybrid", "sharding"): "hybrid-sharding",
    ("hybrid", "sharded"): "hybrid-sharding",
    ("hybrid", "fsdp"): "hsdp",
    ("fsdp", "hybrid-shard"): "hsdp",  # HF's --fsdp "hybrid_shard auto_wrap"
    ("fsdp", "hybrid", "shard"): "hsdp",
    # HF's --fsdp "full_shard auto_wrap" / "shard_grad_op auto_wrap", spaced
    ("full", "shard"): "full-shard",
    ("auto", "wrap"): "auto-wrap",
    ("shard", "grad", "op"): "shard-grad-op",
    ("fsdp", "shard-grad-op"): "shard-grad-op",
    ("fsdp", "shard", "grad", "op"): "shard-grad-op",
    # DeepSpeed's stage written apart ("zero" is not read as the number 0 before a stage)
    ("zero", "1"): "zero1",
    ("zero", "2"): "zero2",
    ("zero", "3"): "zero3",
    ("flash", "attention", "2"): "flash-attention-2",
    ("flash", "attention", "3"): "flash-attention-3",
    ("flash", "attention", "4"): "flash-attention-4",
    ("flash", "attn"): "flash-attn",
    ("flash", "attn", "2"): "flash-attn-2",  # "flash attn 2 h100": FA2 on one card
    ("flash", "attn", "3"): "flash-attn-3",
    ("flash", "attn", "4"): "flash-attn-4",
    ("cudnn", "attention"): "cudnn-attention",
    ("cudnn", "sdpa"): "cudnn-sdpa",
    ("mixed", "precision"): "mixed-precision",
    ("cpu", "offload"): "cpu-offload",
    ("cpu", "offloading"): "cpu-offload",
    ("offload", "to", "cpu"): "cpu-offload",
    ("offloaded", "to", "cpu"): "cpu-offload",
    ("offloading", "to", "cpu"): "cpu-offload",
    ("optimizer", "state", "offload"): "optimizer-offload",
    ("optimizer", "states", "offload"): "optimizer-offload",
    ("optimizer", "state", "offloading"): "optimizer-offload",
    ("optimizer", "states", "offloading"): "optimizer-offload",
    ("offload", "optimizer", "state"): "offload-optimizer",
    ("offload", "optimizer", "states"): "offload-optimizer",
    ("optimizer", "offloading"): "optimizer-offload",
    ("offload", "optimizer", "and", "params"): "offload-all",
    ("offload", "optimizer", "and", "param"): "offload-all",
    ("offload", "optimizer", "and", "parameters"): "offload-all",
    ("offload", "optimizer", "and", "weights"): "offload-all",
    ("offload", "params", "and", "optimizer"): "offload-all",
    ("offload", "parameters", "and", "optimizer"): "offload-all",
    ("activation", "offload"): "activation-offload",
    ("activation", "offloading"): "activation-offloading",
    ("activations", "offloading"): "activation-offloading",
    ("offload", "activations"): "offload-activations",
    ("offloading", "activations"): "offload-activations",
    ("offload", "optimizer"): "offload-optimizer",
    ("optimizer", "offload"): "optimizer-offload",
    ("offload", "params"): "offload-params",
    ("offload", "param"): "offload-param",
    ("offload", "weights"): "offload-weights",
    ("offload", "all"): "offload-all",
    ("param", "offload"): "param-offload",
    ("fused", "cross", "entropy"): "fused-cross-entropy",
    ("cut", "cross", "entropy"): "cut-cross-entropy",
    ("chunked", "cross", "entropy"): "chunked-cross-entropy",  # refused (scanner's hints)
    ("chunked", "ce"): "chunked-cross-entropy",
    ("chunked", "loss"): "chunked-cross-entropy",
    ("torch", "compile"): "torch-compile",
    ("mode", "max-autotune"): "max-autotune",  # torch.compile(mode="max-autotune")
    ("mode", "max-autotune-no-cudagraphs"): "max-autotune-no-cudagraphs",
    ("mode", "reduce-overhead"): "reduce-overhead",
    # torchtune's optimizer_in_bwd, in words
    ("optimizer", "in", "backward"): "optimizer-in-backward",
    ("optimizer", "in", "bwd"): "optimizer-in-bwd",
    ("optim", "in", "bwd"): "optimizer-in-bwd",
    ("fp8", "training"): "fp8-training",
    ("float8", "training"): "float8-training",
    ("fp8", "matmuls"): "fp8-matmuls",
    ("float8", "linear"): "float8-linear",
    ("converters", "float8"): "float8",  # torchtitan's --model.converters float8
    ("sample", "packing"): "sample-packing",
    ("full", "parameter"): "full-parameter",
    ("full", "parameters"): "full-parameters",
    ("full", "params"): "full-params",
    ("full", "param"): "full-param",
    ("full", "weight"): "full-weight",
    ("full", "weights"): "full-weights",
    ("full", "precision"): "full-precision",  # a precision, never the method
    # a state precision said as the states ("fp32 master weights", "bf16 optimizer states")
    ("fp32", "master", "weights"): "fp32-states",
    ("fp32", "master", "weight"): "fp32-states",
    ("fp32", "master", "copy"): "fp32-states",
    ("fp32", "master"): "fp32-states",
    ("fp32", "optimizer", "states"): "fp32-states",
    ("fp32", "optimizer", "state"): "fp32-states",
    ("fp32", "states"): "fp32-states",
    ("bf16", "optimizer", "states"): "pure-bf16",
    ("bf16", "optimizer", "state"): "pure-bf16",
    ("bf16", "states"): "pure-bf16",
    ("bf16", "weights", "and", "optimizer", "states"): "pure-bf16",
    ("bf16", "weights", "and", "optimizer", "state"): "pure-bf16",
    ("bf16", "params", "and", "optimizer", "states"): "pure-bf16",
    # the precision matmuls run in ("bf16 compute", QLoRA's bnb_4bit_compute_dtype)
    ("bf16", "compute"): "bf16",
    ("bfloat16", "compute"): "bfloat16",
    ("fp16", "compute"): "fp16",
    ("float16", "compute"): "float16",
    ("compute", "dtype"): "compute-dtype",
    ("full", "ft"): "full-ft",
    ("hf", "trainer"): "hf-trainer",
    ("llama", "factory"): "llama-factory",
    # data parallelism said in words (adapters/query/phrasing.py)
    ("data", "parallel"): "data-parallel",
    ("data", "parallelism"): "data-parallel",
    ("data", "parallel", "degree"): "data-parallel-degree",
    ("data", "parallel", "size"): "data-parallel-size",
    ("fsdp", "degree"): "fsdp-degree",  # "fsdp degree 8": FSDP over 8 ranks
    ("fully", "sharded", "data", "parallel"): "fsdp",
    ("fully", "sharded", "data", "parallelism"): "fsdp",
    ("distributed", "data", "parallel"): "distributed-data-parallel",
    ("huggingface", "trainer"): "hf-trainer",
    ("transformers", "trainer"): "hf-trainer",
    ("double", "quant"): "double-quant",
    # a DeepSpeed config pasted as JSON: "zero_optimization": {"stage": 3},
    # "offload_optimizer": {"device": "cpu"} (read as accelerate's --zero_stage and
    # --offload_optimizer_device are)
    ("zero-optimization", "stage"): "zero-stage",
    ("offload-optimizer", "device"): "offload-optimizer-device",
    ("offload-param", "device"): "offload-param-device",
    ("double", "quantization"): "double-quantization",
    # 8-bit Adam in two words (never an 8-bit base, which is refused with a hint)
    ("8-bit", "adam"): "8bit-adam",
    ("8-bit", "adamw"): "8bit-adamw",
    ("8bit", "adam"): "8bit-adam",
    ("8bit", "adamw"): "8bit-adamw",
    ("adam", "8bit"): "adam8bit",
    ("adamw", "8bit"): "adamw-8bit",
    ("adam", "8-bit"): "adam8bit",
    ("adamw", "8-bit"): "adamw-8bit",
    ("paged", "adamw", "8bit"): "paged-adamw-8bit",
    ("paged", "adamw", "32bit"): "paged-adamw-32bit",
    ("paged", "adamw"): "paged-adamw-32bit",  # bitsandbytes' PagedAdamW: 32-bit states
    ("pure", "bf16"): "pure-bf16",
    ("fused", "adamw"): "fused-adamw",
    ("fused", "adam"): "fused-adam",
    ("adamw", "fused"): "adamw-fused",
    ("liger", "kernel"): "liger",
    ("liger", "kernels"): "liger",
    # spot and on-demand said with what they price ("on spot instances", "spot pricing");
    # "spot price $1.20" stays the switch and a rate
    ("spot", "instances"): "spot",
    ("spot", "instance"): "spot",
    ("spot", "pricing"): "spot",
    ("on", "demand"): "on-demand",
    ("on", "demand", "instances"): "on-demand",
    ("on", "demand", "pricing"): "on-demand",
    ("on-demand", "instances"): "on-demand",
    ("on-demand", "pricing"): "on-demand",
    # how rough an answer is wanted: the napkin mode, or any estimate
    ("napkin", "math"): "napkin",
    ("rough", "estimate"): "estimate",
    ("quick", "estimate"): "estimate",
    # two cards said in words ("a pair of 4090s"; "dual 4090" is a number word)
    ("pair", "of"): "2",
    # a rate said in words ("$2.49 per gpu hour")
    ("per", "gpu", "hour"): "/hr",
    ("per", "gpu", "hr"): "/hr",
    # a budget said in words ("less than $500", "$500 or less", "at most $500")
    ("less", "than"): "less-than",
    ("at", "most"): "at-most",
    ("or", "less"): "or-less",
    ("max", "budget"): "max-budget",
    ("budget", "is"): "budget",  # "my budget is $1000"
    ("up", "to"): "at-most",  # "up to 3 epochs", "up to $500"
    ("training", "steps"): "steps",  # "500 training steps"
    ("train", "steps"): "steps",
    ("lora", "adapters"): "lora",
    ("lora", "adapter"): "lora",
    ("dynamic", "4bit"): "4bit",  # Unsloth's dynamic 4-bit checkpoints: NF4 bases
    ("dynamic", "4-bit"): "4-bit",
    # settings read and ignored
    ("weight", "decay"): "weight-decay",
    ("learning", "rate"): "learning-rate",
    ("warmup", "ratio"): "warmup-ratio",
    ("warmup", "steps"): "warmup-steps",
    ("logging", "steps"): "logging-steps",
    ("save", "steps"): "save-steps",
    ("eval", "steps"): "eval-steps",
    # LoRA targets: words, projection letters, PEFT's module lists
    ("all", "linear"): "all-linear",
    ("lora-target", "all"): "all-linear",  # LLaMA-Factory's lora_target: all
    ("target", "all"): "all-linear",
    ("targets", "all"): "all-linear",
    # a 4-bit base as LLaMA-Factory (quantization_bit) and ms-swift (quant_bits) say it
    ("quantization-bit", "4"): "4-bit",
    ("quant-bits", "4"): "4-bit",
    ("4bit", "quantization"): "4bit",
    ("4-bit", "quantization"): "4-bit",
    ("4bit", "quantized"): "4bit",
    ("4-bit", "quantized"): "4-bit",
    ("nf4", "quantization"): "nf4",
    ("8bit", "quantization"): "8bit",  # refused (an 8-bit base)
    ("8-bit", "quantization"): "8-bit",
    ("stage", "sft"): "sft",  # LLaMA-Factory's stage: sft (a bare "stage" means DeepSpeed's)
    ("q", "v"): "qv",
    ("q", "k", "v"): "qkv",
    ("q", "k", "v", "o"): "qkvo",
    ("q-proj", "v-proj"): "qv",
    ("q-proj", "k-proj", "v-proj"): "qkv",
    ("q-proj", "k-proj", "v-proj", "o-proj"): "attn",
    ("gate-proj", "up-proj", "down-proj"): "mlp",
    ("q-proj", "k-proj", "v-proj", "o-proj", "gate-proj", "up-proj", "down-proj"): "all-linear",
    ("c-attn", "c-proj", "w1", "w2"): "all-linear",  # Qwen (1)'s finetune.py: every linear
    # attention and the MLP together: every linear of a layer
    ("attention", "and", "mlp"): "all-linear",
    ("attn", "and", "mlp"): "all-linear",
    ("attention", "mlp"): "all-linear",
    ("attn", "mlp"): "all-linear",
    ("mlp", "and", "attention"): "all-linear",
    ("mlp", "and", "attn"): "all-linear",
    ("attention", "+", "mlp"): "all-linear",
    ("attn", "+", "mlp"): "all-linear",
}
"""Phrases typed as several words (HF's argument names with spaces, ``flash attention``,
PEFT's module lists) and the one word each means. Read longest first, so ``flash
attention`` is never the switch ``flash`` and the LoRA target ``attention``. A phrase
whose first word would be lost (``lora rank 64``: the method, then the rank) is left to
be read word by word; ``full parameter`` keeps ``full``'s meaning. ``q, k, v`` is
counted as ``attn`` (with o), the nearest target set."""
SECTION_PREFIXES: Final = {
    "training.": "", "parallelism.": "", "activation-checkpoint.": "ac-", "model.": "",
    "job.": "", "train.": "", "trainer.": "", "optimizer.": "", "lr-scheduler.": "",
    "dataset.": "", "tokenizer.": "",
    # DeepSpeed's config keys said with their section (zero_optimization.stage 3)
    "zero-optimization.offload-optimizer.": "offload-optimizer-",
    "zero-optimization.offload-param.": "offload-param-",
    "zero-optimization.": "zero-",
}
"""torchtitan's config sections as its command line names them
(``--training.local_batch_size 2``, ``--parallelism.tensor_parallel_degree 8``,
``--activation_checkpoint.mode selective``, ``--model.converters float8``,
``--job.config_file``, ``--optimizer.lr``, ``--lr_scheduler.warmup_steps``), litgpt's
(``--train.micro_batch_size 4``), Lightning's (``--trainer.devices 4``) and torchtune's
overrides (``dataset.packed=True``, ``tokenizer.max_seq_len=4096``), and DeepSpeed's
``zero_optimization.stage`` (accelerate's ``zero_stage``): the key is read without its
section. A file's name (``train.py``) is never cut."""
PHRASE_LENGTHS: Final = tuple(sorted({len(k) for k in PHRASES}, reverse=True))
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
SPELLED_SCALE: Final = {
    "hundred": "00", "thousand": "k", "million": "m", "mil": "m", "mln": "m", "billion": "b",
    "bn": "b", "trillion": "t",
}
SCALE_LETTERS: Final = frozenset({"k", "m", "b"})
"""A scale typed apart from its number (``50 M tokens``, ``seq 8 k``): joined to it."""

