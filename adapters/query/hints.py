"""Words the query language knows but does not read as settings, each with what to say
instead (the scanner's refusal for them): frameworks without a profile, methods and
parallelisms the engine does not model, clouds (a card is priced at the clouds' median),
LoRA projections named one at a time, an 8-bit base, optimizers it has no states for."""

from __future__ import annotations

from typing import Final

CLOUDS: Final = frozenset(
    {"aws", "ec2", "amazon", "sagemaker", "gcp", "google", "azure", "lambda", "lambdalabs",
     "runpod", "vastai", "coreweave", "nebius", "oci", "paperspace", "fluidstack",
     "hyperbolic", "verda", "crusoe"}
)
"""Clouds' names: alone, refused with how to price a card; beside an instance type, read
as nothing (the instance says which cloud: :func:`adapters.query.tokenizer.
mark_instances`)."""

NOT_SETTINGS: Final = {
    "zero": "name the stage: zero1, zero2 or zero3",
    **dict.fromkeys(
        ("megatron", "megatron-lm", "nemo", "nanotron", "keras", "mlx", "colossalai", "jax",
         "maxtext", "levanter", "lightning", "pytorch-lightning", "fabric"),
        "no profile for that framework: leave it out (generic, the specification's "
        "assumptions) or name the closest of hf, unsloth, torchtune, litgpt, torchtitan",
    ),
    **dict.fromkeys(
        ("stage", "stage-1", "stage-2", "stage-3", "stage1", "stage2", "stage3"),
        'a DeepSpeed ZeRO stage is 1, 2 or 3: say "deepspeed stage 3" or zero3',
    ),
    "chunked-cross-entropy": (
        "chunked cross-entropy keeps BF16 logit chunks: it is torchtune's and litgpt's own "
        "loss path, counted when you say torchtune or litgpt; for a loss that never holds "
        "the logits (Liger, Cut Cross-Entropy) say fused-ce"
    ),
    "lora-alpha": "LoRA alpha only scales the update: it changes neither memory nor time",
    "alpha": "LoRA alpha only scales the update: it changes neither memory nor time",
    **dict.fromkeys(
        ("dpo", "orpo", "kto", "ppo", "grpo", "rlhf", "simpo"),
        "preference and RL training (DPO, ORPO, KTO, PPO, GRPO) is not modeled, only "
        "supervised fine-tuning. DPO runs chosen and rejected sequences together and a frozen "
        "reference model (with LoRA the base serves): estimate it as SFT at twice the batch",
    ),
    **dict.fromkeys(
        ("expert-parallel", "expert-parallelism", "expert-parallel-degree",
         "expert-parallel-size", "expert-model-parallel-size", "ep-size"),  # "ep 2": epochs
        "expert parallelism is not modeled: ask for the same cards with fsdp, which "
        "shards the experts with the rest of the model (all experts are counted resident)",
    ),
    **dict.fromkeys(
        ("muon", "sophia", "galore", "galore-adamw", "lomo", "adalomo", "apollo", "adam-mini",
         "adammini", "schedule-free", "schedulefree", "shampoo", "soap", "came", "prodigy"),
        "that optimizer is not modeled: say the closest of adamw (two FP32 moments a "
        "weight), adamw-8bit, adafactor (a factored second moment), lion (one moment) or "
        "sgd (none)",
    ),
    **dict.fromkeys(
        ("ulysses", "deepspeed-ulysses"),
        "DeepSpeed Ulysses' sequence parallelism is not modeled: context parallelism (ring "
        "attention) splits each sequence over the cards as it does, so say cp and the "
        "degree, e.g. cp 4",
    ),
    **dict.fromkeys(
        ("measured", "observed", "tokens/s", "tokens/sec", "tok/s", "tok/sec", "s/it",
         "samples/s", "tokens/s/gpu", "tokens-per-second", "mem-usage", "step-time"),
        "a measured figure is not an input: ftcost estimates memory and tokens/s from the "
        "run's settings, so leave the figure out and say the settings (model, method, "
        "sequence, batch, cards)",
    ),
    **dict.fromkeys(
        ("vs", "versus", "or"),
        "ask about one run at a time: the reply's what-if table compares full, LoRA and "
        "QLoRA, and a reply in the thread changes one setting (`what if 8x h100`)",
    ),
    **dict.fromkeys(
        ("macbook", "apple", "mps", "m1", "m2", "m3", "m4", "m2-ultra", "tpu", "tpus",
         "tpu-v4", "tpu-v5e", "mlx-lm"),
        "Apple silicon and TPUs are not in the catalog, which holds NVIDIA, AMD and Intel "
        "Gaudi cards: name one of those (the gpus command lists them)",
    ),
    "fsdp-qlora": "say qlora fsdp (FSDP over a 4-bit base, as Answer.AI's fsdp_qlora runs it)",
    **dict.fromkeys(
        CLOUDS,
        "a card is priced at the median of the clouds' cheapest on-demand rates (`/ftcost "
        "prices` in Slack or Discord lists each cloud's), not one cloud's: say your cloud's "
        "rate instead, e.g. `70b qlora 50M tokens h100 $2.49/hr` (an instance type such as "
        "`p4d.24xlarge` names the cards)",
    ),
    **dict.fromkeys(
        ("pp", "pipeline-parallel", "pipeline-parallelism", "pipeline-parallel-degree",
         "pipeline-model-parallel-size", "pp-size"),
        "pipeline parallelism is not modeled: ask for the same cards with fsdp (and tp "
        "within a node); per GPU that holds no more than pipeline stages would",
    ),
    **dict.fromkeys(
        ("q-proj", "k-proj", "v-proj", "o-proj", "gate-proj", "up-proj", "down-proj",
         "qkv-proj", "gate-up-proj", "w1", "w2", "w3", "c-attn", "c-proj"),
        "LoRA targets are read as sets: all-linear, attention (q, k, v, o), qv or mlp "
        "(gate, up, down), not one projection at a time; say the set that covers yours "
        '(the adapters are small: "mlp" for gate_proj and up_proj)',
    ),
    **dict.fromkeys(
        ("int8", "8bit", "8-bit", "load-in-8bit", "llm-int8", "bnb-8bit"),
        "an 8-bit base (bitsandbytes' LLM.int8) is not modeled: say qlora for a 4-bit base "
        "or lora for a 16-bit one (8-bit Adam is adamw-8bit)",
    ),
}
"""Known words that are not settings of the estimate, and what to say instead."""
