"""Measure real training steps on one GPU: peak memory and tokens/s for full, LoRA and QLoRA.

Builds Llama-style models from their config with random weights (no download), trains a
few steps of each method over a small grid of sequence x micro-batch, and records
``torch.cuda.max_memory_allocated`` / ``max_memory_reserved`` and tokens/s per GPU. Each
result is one JSON line, shaped so it can be added to benchmarks/measurements.yaml as this
project's own measured row (with the card and the date).

On the device machine (PyTorch, transformers, peft, accelerate installed; bitsandbytes
carried as a wheel for QLoRA)::

    pip install --no-deps bitsandbytes-*.whl   # optional: QLoRA rows
    python benchmarks/gpu_probe.py --out "$OUT/probe.jsonl" --budget-s 420

Everything is sized to finish in under 8 minutes on one H100/H200 (``--budget-s`` stops
the grid early and says so). ``--smoke`` runs a tiny model on the CPU to check the script
itself (no memory counters there). ``--grid families`` runs other architectures and
vocabularies (Qwen3, Qwen2.5, Gemma 3, Mistral, Phi-3); ``--grid large`` runs Llama 3.1
70B QLoRA, built on the meta device and quantized one linear at a time. Only
tests/test_measurements_file.py imports it (its model shapes against the catalog).

``--attention-sweep`` times only attention, per backend, over 512-32,768 tokens; the
default run starts with a few seconds of attention alone: causal SDPA forward and backward at
2,048 and 8,192 tokens under each backend (its default, FlashAttention-2, cuDNN,
memory-efficient), the check on the catalog's FlashAttention-2 rate for Hopper and
Blackwell (``flash_attention_tflops``) and on what ``fa3`` assumes.
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

MODELS: dict[str, dict[str, Any]] = {
    # Llama 3.2 1B and Llama 3.1 8B shapes (their config.json), random weights.
    "llama-3.2-1b": dict(
        hidden_size=2048,
        intermediate_size=8192,
        num_hidden_layers=16,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=True,
    ),
    "llama-3.1-8b": dict(
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=128256,
        tie_word_embeddings=False,
    ),
    # --grid large: Llama 3.1 70B, QLoRA only (its BF16 weights alone fill an H200), built
    # on the meta device and quantized one linear at a time (build_nf4_from_meta).
    "llama-3.1-70b": dict(
        hidden_size=8192, intermediate_size=28672, num_hidden_layers=80, num_attention_heads=64,
        num_key_value_heads=8, vocab_size=128256, tie_word_embeddings=False, meta_build=True,
    ),
    # --smoke only: a toy with the same structure.
    "tiny": dict(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=512,
        tie_word_embeddings=False,
    ),
    # --grid families: other architectures at their config.json shapes (catalog/models.yaml
    # holds the same; tests/test_measurements_file.py checks it), each built by its own class.
    "qwen3-0.6b": dict(
        config="Qwen3Config",
        hidden_size=1024,
        intermediate_size=3072,
        num_hidden_layers=28,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        vocab_size=151936,
        tie_word_embeddings=True,
    ),
    "qwen2.5-7b": dict(
        config="Qwen2Config",
        hidden_size=3584,
        intermediate_size=18944,
        num_hidden_layers=28,
        num_attention_heads=28,
        num_key_value_heads=4,
        vocab_size=152064,
        tie_word_embeddings=False,
    ),
    "gemma-3-1b": dict(
        config="Gemma3TextConfig",
        hidden_size=1152,
        intermediate_size=6912,
        num_hidden_layers=26,
        num_attention_heads=4,
        num_key_value_heads=1,
        head_dim=256,
        vocab_size=262144,
        tie_word_embeddings=True,
        sliding_window=512,
    ),
    "mistral-7b-v0.3": dict(
        config="MistralConfig",
        hidden_size=4096,
        intermediate_size=14336,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=8,
        vocab_size=32768,
        tie_word_embeddings=False,
        sliding_window=None,
    ),
    "phi-3-mini": dict(
        config="Phi3Config",
        hidden_size=3072,
        intermediate_size=8192,
        num_hidden_layers=32,
        num_attention_heads=32,
        num_key_value_heads=32,
        vocab_size=32064,
        tie_word_embeddings=False,
    ),
}
TINY = dict(
    hidden_size=64,
    intermediate_size=128,
    num_hidden_layers=2,
    num_attention_heads=4,
    num_key_value_heads=2,
    head_dim=16,
    vocab_size=512,
    pad_token_id=None,
    eos_token_id=None,
)
"""--smoke of the families grid: each family's class at toy shapes."""
GRID: list[tuple[str, str, int, int]] = [
    # (model, method, seq_len, micro_batch): small micro-batches show the launch floor,
    # long sequences the attention term, LoRA vs full the frozen-weight backward.
    *[
        ("llama-3.2-1b", m, s, b)
        for m in ("full", "lora", "qlora")
        for s, b in ((512, 1), (512, 8), (2048, 1), (2048, 4), (8192, 1))
    ],
    *[
        ("llama-3.1-8b", m, s, b)
        for m in ("lora", "qlora")
        for s, b in ((512, 1), (2048, 1), (2048, 4), (8192, 1))
    ],
    # A full fine-tune of 8B fits one H200 in pure BF16 (16 bytes a parameter with
    # AdamW): the data-center matmul rate and the foreach optimizer's temporary.
    *[("llama-3.1-8b", "full", s, b) for s, b in ((2048, 1), (2048, 4))],
    # TRL's QLoRA path (PEFT's k-bit preparation, norms left in FP32): the FP32 residual
    # stream engine.framework_facts.PROFILE_KBIT_FP32_NORMS counts for `hf`.
    *[("llama-3.1-8b", "qlora-trl", s, b) for s, b in ((2048, 4), (8192, 1))],
    # Without activation checkpointing (HF Trainer's default): the stored activations.
    ("llama-3.2-1b", "full-noac", 2048, 1),
    ("llama-3.2-1b", "lora-noac", 2048, 4),
    ("llama-3.1-8b", "lora-noac", 2048, 1),
    ("llama-3.1-8b", "qlora-noac", 2048, 1),
]
SMOKE_GRID = [
    *[("tiny", m, s, b) for m in ("full", "lora") for s, b in ((32, 1), (64, 2))],
    ("tiny", "lora-trl", 32, 1),  # the TRL preparation without bitsandbytes
    ("tiny", "qlora", 32, 1),  # bitsandbytes' CPU path, where it is installed
    ("tiny", "qlora-trl", 32, 1),
    ("tiny", "full-noac", 32, 1),
    ("tiny", "lora-noac", 32, 1),
]
FAMILIES_GRID: list[tuple[str, str, int, int]] = [
    # Large vocabularies (152K, 262K) at long sequences: the loss path's FP32 logits and
    # attention that grows with sequence (a 0.6B model at 16K), and typical 7B LoRA/QLoRA
    # runs of other families (Qwen's QKV biases, Mistral, Phi-3's fused projections,
    # Gemma 3's sliding-window layers).
    *[
        ("qwen3-0.6b", m, s, b)
        for m, s, b in (
            ("full", 4096, 4),
            ("full", 16384, 1),
            ("full", 32768, 1),
            ("lora", 16384, 1),
            ("full-noac", 4096, 1),
        )
    ],
    *[
        ("qwen2.5-7b", m, s, b)
        for m, s, b in (
            ("lora", 8192, 1),
            ("qlora", 8192, 1),
            ("qlora-trl", 4096, 2),
            ("lora-noac", 2048, 2),
        )
    ],
    ("gemma-3-1b", "full", 8192, 1),
    ("gemma-3-1b", "lora", 4096, 4),
    ("mistral-7b-v0.3", "qlora", 4096, 2),
    ("mistral-7b-v0.3", "lora", 2048, 4),
    ("phi-3-mini", "lora", 4096, 2),
    ("phi-3-mini", "qlora", 2048, 4),
]
LARGE_GRID: list[tuple[str, str, int, int]] = [
    # The product's headline question (`70b qlora ... h100`) on one card: PEFT's QLoRA in a
    # plain loop, TRL's path, a long micro-batch, a short one, and no checkpointing.
    ("llama-3.1-70b", "qlora", 2048, 1), ("llama-3.1-70b", "qlora-trl", 2048, 1),
    ("llama-3.1-70b", "qlora", 4096, 2), ("llama-3.1-70b", "qlora", 512, 1),
    ("llama-3.1-70b", "qlora-noac", 1024, 1),
]
LARGE_SMOKE_GRID = [("llama-3.1-70b", "qlora", 32, 1), ("llama-3.1-70b", "qlora-trl", 32, 1)]
FAMILIES_SMOKE_GRID = [
    ("qwen3-0.6b", "full", 32, 1),
    ("qwen2.5-7b", "lora", 32, 2),
    ("qwen2.5-7b", "qlora-trl", 32, 1),
    ("gemma-3-1b", "lora", 32, 1),
    ("mistral-7b-v0.3", "qlora", 32, 1),
    ("phi-3-mini", "lora", 32, 1),
    ("qwen3-0.6b", "full-noac", 32, 1),
]
WARMUP_STEPS = 2
TIMED_STEPS = 4
ATTENTION_SHAPES = [(2048, 4), (8192, 1)]
"""(seq_len, batch) of the attention probe: 32 heads of 128, causal, BF16 (Llama 3 8B's
attention without GQA), forward and backward through PyTorch's SDPA."""
ATTENTION_SWEEP = [(512, 16), (1024, 8), (2048, 4), (4096, 2), (8192, 1), (16384, 1), (32768, 1)]
"""``--attention-sweep``: the same heads over sequence lengths at >= 8,192 tokens a call,
the rate's growth with sequence (engine.rates.attention_rate, docs/accuracy.md)."""
ATTENTION_BACKENDS = ("default", "FLASH_ATTENTION", "CUDNN_ATTENTION", "EFFICIENT_ATTENTION")
"""SDPA's own choice, then each backend forced: the catalog's ``flash_attention_tflops``
(FlashAttention-2 on Hopper and Blackwell) against the card's cuDNN kernels (``fa3``)."""


@dataclass
class Result:
    model: str
    method: str
    seq_len: int
    micro_batch: int
    gpu: str
    peak_allocated_gb: float | None
    peak_reserved_gb: float | None
    tokens_per_sec: float | None
    error: str | None = None
    date: str = str(date.today())
    framework: str = "hf"
    notes: str = (
        "benchmarks/gpu_probe.py: transformers + peft, random weights, bf16 params, torch "
        "AdamW (pure BF16 states for full), gradient checkpointing on (not in *-noac), SDPA "
        "attention, LoRA r16 all-linear dropout 0, HF loss; *-trl: PEFT's "
        "prepare_model_for_kbit_training and TRL's bf16 cast-back (norms FP32) under BF16 "
        "autocast"
    )


def build(name: str, method: str, device: str) -> Any:
    import torch
    import transformers

    config = model_config(name, smoke=device == "cpu")
    torch.manual_seed(0)
    base, *flags = method.split("-")  # "qlora-trl": QLoRA on TRL's path; "-noac": no AC
    # Built in BF16 on the device: no FP32 copy to allocate (and cache) first.
    default = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        if MODELS[name].get("meta_build"):
            if base != "qlora":
                raise ValueError(f"{name} is built for QLoRA only")
            model = build_nf4_from_meta(config, device)
        else:
            with torch.device(device):
                model = transformers.AutoModelForCausalLM.from_config(config).to(torch.bfloat16)
            if base == "qlora":
                model = quantize_nf4(model)
    finally:
        torch.set_default_dtype(default)
    trl = "trl" in flags
    if trl:
        from peft import prepare_model_for_kbit_training

        # Every 16-bit parameter that is not 4-bit goes to FP32, as TRL's SFTTrainer does.
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=False)
    if "noac" not in flags:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    if base != "full":
        from peft import LoraConfig, get_peft_model

        model.enable_input_require_grads()
        lora = LoraConfig(r=16, lora_alpha=32, lora_dropout=0.0, target_modules="all-linear")
        model = get_peft_model(model, lora)
    if trl:
        cast_like_trl(model)
    return model


def model_config(name: str, smoke: bool = False) -> Any:
    """The transformers config of ``name`` (a ``MODELS`` key), SDPA attention, no KV cache;
    with ``smoke``, a family model at ``TINY`` shapes (Llama ones are tiny already)."""
    import transformers

    shape = dict(MODELS[name])
    cls = getattr(transformers, shape.pop("config", "LlamaConfig"))
    meta = shape.pop("meta_build", False)
    if smoke and (cls is not transformers.LlamaConfig or meta):
        shape.update(TINY)
        if shape.get("sliding_window"):
            shape["sliding_window"] = 16
    return cls(**shape, attn_implementation="sdpa", use_cache=False)


def cast_like_trl(model: Any) -> None:
    """TRL's ``peft_module_casting_to_bf16`` under ``bf16``: adapters, embeddings and LM
    head back to BF16, norms kept in FP32."""
    import torch
    from peft.tuners.tuners_utils import BaseTunerLayer

    for name, module in model.named_modules():
        if isinstance(module, BaseTunerLayer):
            module.to(torch.bfloat16)
        elif isinstance(module, torch.nn.LayerNorm) or "norm" in name:
            module.to(torch.float32)
        elif any(x in name for x in ("lm_head", "embed_tokens")) and _fp32_weight(module):
            module.to(torch.bfloat16)


def _fp32_weight(module: Any) -> bool:
    import torch

    weight = getattr(module, "weight", None)
    return weight is not None and weight.dtype == torch.float32


def nf4_linear(child: Any, weight: Any) -> Any:
    """A bitsandbytes NF4 layer (double quantization) holding ``weight``, on its device."""
    import bitsandbytes as bnb
    import torch

    layer = bnb.nn.Linear4bit(
        child.in_features,
        child.out_features,
        bias=child.bias is not None,
        compute_dtype=torch.bfloat16,
        quant_type="nf4",
        compress_statistics=True,
        device=weight.device,
    )
    layer.weight = bnb.nn.Params4bit(
        weight, requires_grad=False, quant_type="nf4", compress_statistics=True
    )
    return layer.to(weight.device)


def quantize_nf4(model: Any) -> Any:
    """Replace every decoder linear by a bitsandbytes NF4 layer (double quantization),
    as ``BitsAndBytesConfig(load_in_4bit=True)`` loads a checkpoint."""
    import torch

    for _name, parent in list(model.model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                setattr(parent, child_name, nf4_linear(child, child.weight.data))
    return model


def build_nf4_from_meta(config: Any, device: str) -> Any:
    """A QLoRA model too large to build in BF16 first: its structure on the meta device,
    each decoder linear drawn in BF16 on ``device`` and quantized to NF4 one at a time,
    then the embeddings, norms, LM head and rotary buffers made on ``device``."""
    import torch
    import transformers

    with torch.device("meta"):
        model = transformers.AutoModelForCausalLM.from_config(config)
    for _name, parent in list(model.model.named_modules()):
        for child_name, child in list(parent.named_children()):
            if isinstance(child, torch.nn.Linear):
                weight = torch.randn(
                    child.out_features, child.in_features, device=device, dtype=torch.bfloat16
                ) * 0.02
                setattr(parent, child_name, nf4_linear(child, weight))
                del weight
    for module_name, module in model.named_modules():
        for name, param in list(module.named_parameters(recurse=False)):
            if param.is_meta:
                data = (
                    torch.ones(param.shape, device=device, dtype=torch.bfloat16)
                    if "norm" in module_name
                    else torch.randn(param.shape, device=device, dtype=torch.bfloat16) * 0.02
                )
                setattr(module, name, torch.nn.Parameter(data, requires_grad=param.requires_grad))
    rotary = model.model.rotary_emb
    with torch.device(device):
        model.model.rotary_emb = type(rotary)(config=config)
    if config.tie_word_embeddings:
        model.tie_weights()
    left = [n for n, t in [*model.named_parameters(), *model.named_buffers()] if t.is_meta]
    if left:
        raise RuntimeError(f"still on the meta device: {left[:5]}")
    return model


def timed(cuda: bool, step: Callable[..., object], *args: Any) -> float:
    """Seconds of ``TIMED_STEPS`` calls of ``step(*args)`` after ``WARMUP_STEPS`` untimed
    ones (synchronized on the GPU)."""
    import torch

    for _ in range(WARMUP_STEPS):
        step(*args)
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(TIMED_STEPS):
        step(*args)
    if cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - start


def train_step(model: Any, optimizer: Any, ids: Any, device: str, autocast: bool) -> None:
    """One optimizer step on ``ids`` (BF16 autocast for TRL's path)."""
    import torch

    with torch.autocast(device, dtype=torch.bfloat16, enabled=autocast):
        loss = model(input_ids=ids, labels=ids).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)


def attention_step(q: Any, k: Any, v: Any, grad: Any) -> None:
    """Causal SDPA forward and backward."""
    import torch.nn.functional as F

    F.scaled_dot_product_attention(q, k, v, is_causal=True).backward(grad)


def run_one(name: str, method: str, seq: int, batch: int, device: str) -> Result:
    import torch

    cuda = device == "cuda"
    gpu = torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu"
    model = optimizer = None
    try:
        model = build(name, method, device)
        params = [p for p in model.parameters() if p.requires_grad]
        optimizer = torch.optim.AdamW(params, lr=1e-5)
        vocab = model_config(name, smoke=not cuda).vocab_size
        ids = torch.randint(0, vocab, (batch, seq), device=device)
        if cuda:
            # Blocks freed while building (the 16-bit weights NF4 replaced) leave the
            # cache first, so the peak reserved is the training step's own.
            gc.collect()
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
        seconds = timed(cuda, train_step, model, optimizer, ids, device, method.endswith("-trl"))
        return Result(
            name,
            method,
            seq,
            batch,
            gpu,
            torch.cuda.max_memory_allocated() / 1e9 if cuda else None,
            torch.cuda.max_memory_reserved() / 1e9 if cuda else None,
            TIMED_STEPS * seq * batch / seconds,
        )
    except Exception as exc:  # OOM or a missing bitsandbytes: record it, go on
        return Result(
            name,
            method,
            seq,
            batch,
            gpu,
            None,
            None,
            None,
            f"{type(exc).__name__}: {str(exc)[:200]}",
        )
    finally:
        del model, optimizer
        gc.collect()
        if cuda:
            torch.cuda.empty_cache()


def attention_rates(device: str, smoke: bool, sweep: bool = False) -> Iterator[dict[str, Any]]:
    """Forward+backward TFLOPs of causal SDPA per backend, counted as FlashAttention's
    benchmarks count them: ``4·B·H·S²·D / 2`` forward, 2.5x that backward."""
    import contextlib

    import torch
    from torch.nn.attention import SDPBackend, sdpa_kernel

    cuda = device == "cuda"
    gpu = torch.cuda.get_device_name(0) if cuda else platform.processor() or "cpu"
    heads, dim = (4, 16) if smoke else (32, 128)
    shapes = [(64, 1), (128, 1)] if smoke else ATTENTION_SWEEP if sweep else ATTENTION_SHAPES
    backends = (
        ("default", "MATH") if smoke else ATTENTION_BACKENDS[:3] if sweep else (ATTENTION_BACKENDS)
    )
    for seq, batch in shapes:
        flops = 4 * batch * heads * seq * seq * dim / 2 * (1 + 2.5)
        q, k, v = (
            torch.randn(
                batch, heads, seq, dim, device=device, dtype=torch.bfloat16, requires_grad=True
            )
            for _ in range(3)
        )
        grad = torch.randn(batch, heads, seq, dim, device=device, dtype=torch.bfloat16)
        for name in backends:
            row: dict[str, Any] = {
                "kind": "attention",
                "backend": name,
                "seq_len": seq,
                "micro_batch": batch,
                "heads": heads,
                "head_dim": dim,
                "gpu": gpu,
                "torch": torch.__version__,
                "date": str(date.today()),
            }
            chosen = (
                contextlib.nullcontext()
                if name == "default"
                else sdpa_kernel(getattr(SDPBackend, name))
            )
            try:
                with chosen:
                    seconds = timed(cuda, attention_step, q, k, v, grad)
                row["tflops"] = flops * TIMED_STEPS / seconds / 1e12
            except Exception as exc:  # a backend this card or build does not have
                row["error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
            yield row
        del q, k, v, grad
        if cuda:
            torch.cuda.empty_cache()


def environment(device: str) -> dict[str, Any]:
    """The library versions, and what the card holds that torch's counters do not: the
    CUDA context with cuBLAS's workspace, read as (total - free) - torch reserved after
    one BF16 matmul (engine.constants.CUDA_CONTEXT_GB)."""
    import importlib.metadata as md

    import torch

    row: dict[str, Any] = {
        "kind": "environment",
        "date": str(date.today()),
        "python": platform.python_version(),
    }
    for package in ("torch", "transformers", "peft", "accelerate", "bitsandbytes"):
        try:
            row[package] = md.version(package)
        except md.PackageNotFoundError:
            row[package] = None
    if device == "cuda":
        a = torch.randn(1024, 1024, device=device, dtype=torch.bfloat16)
        (a @ a).sum().item()
        free, total = torch.cuda.mem_get_info()
        row.update(
            gpu=torch.cuda.get_device_name(0),
            total_gb=total / 1e9,
            context_gb=(total - free - torch.cuda.memory_reserved()) / 1e9,
        )
        del a
    return row


GRIDS = {
    ("llama", False): GRID,
    ("llama", True): SMOKE_GRID,
    ("families", False): FAMILIES_GRID,
    ("families", True): FAMILIES_SMOKE_GRID,
    ("large", False): LARGE_GRID,
    ("large", True): LARGE_SMOKE_GRID,
}


def grid(smoke: bool, name: str = "llama") -> Iterator[tuple[str, str, int, int]]:
    yield from GRIDS[name, smoke]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default="-", help="JSON lines file (default: stdout)")
    parser.add_argument("--smoke", action="store_true", help="tiny model on the CPU")
    parser.add_argument("--budget-s", type=float, default=420.0, help="stop the grid after this")
    parser.add_argument(
        "--skip",
        type=int,
        default=0,
        help="resume: skip the attention probe and the grid's first N rows",
    )
    parser.add_argument(
        "--grid",
        choices=("llama", "families", "large"),
        default="llama",
        help="llama: Llama 3 1B/8B (the first run); families: other architectures and vocabularies",
    )
    parser.add_argument(
        "--no-attention", action="store_true", help="skip the attention-alone probe"
    )
    parser.add_argument(
        "--attention-sweep",
        action="store_true",
        help="only the attention probe, over 512-32,768 tokens",
    )
    args = parser.parse_args(argv)
    import torch

    device = "cpu" if args.smoke else "cuda"
    if device == "cuda" and not torch.cuda.is_available():
        print("gpu_probe: no CUDA device (use --smoke on a CPU)", file=sys.stderr)
        return 2
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")  # noqa: SIM115
    began = time.monotonic()
    try:
        print(json.dumps(environment(device)), file=out, flush=True)
        skip_attention = args.skip or args.no_attention
        sweep = args.attention_sweep
        for row in [] if skip_attention else attention_rates(device, args.smoke, sweep):
            print(json.dumps(row), file=out, flush=True)
        if sweep:
            return 0
        for name, method, seq, batch in list(grid(args.smoke, args.grid))[args.skip :]:
            if time.monotonic() - began > args.budget_s:
                print(
                    json.dumps({"stopped": "time budget", "at": [name, method, seq, batch]}),
                    file=out,
                    flush=True,
                )
                break
            result = run_one(name, method, seq, batch, device)
            print(json.dumps(asdict(result)), file=out, flush=True)
        print(
            json.dumps({"done_after_s": round(time.monotonic() - began, 1)}), file=out, flush=True
        )
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
