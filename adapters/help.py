"""The query language reference shown by ``ftcost --help``, Slack ``/ftcost help``
and Discord ``/ftcost-help``.

Plain text that reads the same in a terminal, Slack and Discord: no tables, no
Markdown beyond indentation. It stays under Discord's 2,000-character message
limit (checked in the tests), and every entry of :data:`EXAMPLES` parses.
"""

from __future__ import annotations

from typing import Final

EXAMPLES: Final[list[str]] = [
    "70b qlora 50M tokens h100",
    "llama-3.1-8b lora 200M tokens 2 epochs seq 4k",
    "8b full 1B tokens 8x h100 zero3",
    "70b lora r64 attn 100M tokens 4x h100 $2.50/hr",
    "20b full adamw-8bit pure-bf16 500M tokens 8 h100 fsdp",
    "8b qlora 20M tokens l40s napkin",
]
"""Queries that parse against the shipped catalog, for help text and docs."""

_EXAMPLE_LINES: Final = "\n".join(f"  {example}" for example in EXAMPLES)

QUERY_HELP: Final[str] = f"""\
Ask in one line, words in any order, any case:
  70b qlora 50M tokens h100

Model      8b, 70b, llama-3.1-8b, qwen 72b, mixtral; a Hub org/name[@rev]
Method     full, lora, qlora (unsaid: LoRA, full under torchtitan); dora
Framework  hf (trl, peft, axolotl, llama-factory), unsloth, torchtune,
           litgpt, torchtitan; generic (default, the spec's assumptions)
Data       50M tokens; 10k samples of 512 tokens; 1000 steps; packing;
           max-len 2048
Epochs     3 epochs, 0.5 epochs (default 3)
GPUs       h100, 2x h100, 8 gpus, 2 nodes of 8x h100, 24gb; spot
Sequence   seq 8k, ctx 4096 (default 2k)   Batch  bs 4, accum 8
LoRA       r64, all-linear, attn, qv, mlp; dropout 0.05; no-double-quant; gptq
Optimizer  adamw, adamw-8bit, sgd, adafactor, lion; optimizer-in-backward
Precision  bf16, fp16, fp8 (FP8 weights), fp32; float8 (FP8 matmuls);
           pure-bf16 (BF16 optimizer states)
Memory     ckpt / no-ckpt, flash / no-flash, fa3, fused-ce, hf-loss, offload,
           activation-offload, compile
Sharding   zero1, zero2, zero3 (deepspeed zero3), fsdp, hsdp, ddp; tp 8, cp 8
Limits     under $500, within 2 days; max seq, max batch, largest model,
           fewest cards
Price      $2.50/hr per GPU-hour; mfu 40% uses the flat 6·P·T rule
Output     napkin (the bytes-per-parameter rules); chart (a PNG)

Follow-ups change only what they name:
  what if 8k seq?   on 4x a100   with full and zero3   trl

Examples:
{_EXAMPLE_LINES}
"""
