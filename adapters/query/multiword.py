"""Words typed as several that the tokenizer joins into one before the scan: HF's
argument names with spaces (``batch size``, ``gradient accumulation steps``), ``flash
attention``, PEFT's module lists, and config keys said with their section
(``--training.local_batch_size``, ``zero_optimization.stage``)."""

from __future__ import annotations

from typing import Final

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
    ("or", "under"): "or-under",  # "in 3 days or under"
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
