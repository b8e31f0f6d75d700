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

Model      8b, 70b, 0.5b (any size: 20b), or a name: llama-3.1-8b,
           meta-llama/Llama-3.1-8B, llama 3.1 8b, qwen2.5 7b; any Hugging
           Face Hub model as org/name or org/name@revision
Method     full (fft), lora, qlora. Unsaid: LoRA, compared with the others
Data       50M tokens, 1.2B tok, tokens 500k, 2e9 tokens
Epochs     3 epochs, 1ep, epochs 2, 0.5 epochs (default 3)
GPUs       h100, a100s, 2x h100, 8xa100-80, h100x8, 8 h100, 8 gpus
Sequence   seq 8k, ctx 4096, 8k context, seq=8192 (default 2k; 1k = 1024)
Batch      bs 4, batch=4 (default 1); accum 8 (gradient accumulation)
LoRA       r64, rank 64 (default 16); all-linear, attn, qv; dropout 0.05;
           no-double-quant
Optimizer  adamw, adamw-8bit, sgd, adafactor, lion
Precision  bf16, fp16, fp8, fp32; pure-bf16 keeps optimizer states in BF16
Memory     ckpt / no-ckpt, flash / no-flash, fused-ce / no-fused-ce, offload;
           hf-loss: the Trainer's unfused loss (12 B per logit, not 4)
Sharding   zero1, zero2, zero3, fsdp (FSDP1: LoRA pays frozen grads), ddp
Speed      mfu 40%, mfu 0.4 (default 35%)
Price      $2.50/hr, 2.5/hr per GPU-hour (default: the card's typical rate)
Output     napkin (bytes-per-parameter rule) or detailed (default);
           chart adds a PNG of the memory (Full vs LoRA vs QLoRA)

Numbers take k, M, B, T: decimal for tokens (500k = 500,000), powers of
two for sequence length (8k = 8192). A size alone (8b) is the model;
before a unit it is a number (8B tokens).

Follow-ups change only what they name:
  what if 8k seq?   on 4x a100   with full and zero3   r64 and 2 epochs   napkin

Examples:
{_EXAMPLE_LINES}
"""
