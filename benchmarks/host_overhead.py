"""Host time per eager PyTorch op on this machine: what the launch floor is made of.

Times tiny calls whose GPU work is negligible, so each one costs only its host-side
dispatch and launch: an in-place add on one element, a 64x64 matmul, an ``nn.Linear``
module call, a PEFT LoRA linear (forward, and forward plus backward), and a bitsandbytes
NF4 linear. Each prints microseconds per call. Run beside ``gpu_probe.py`` to tell a
slow host (every op slow) from a framework's own Python overhead (only its modules slow)::

    python benchmarks/host_overhead.py            # CUDA
    python benchmarks/host_overhead.py --cpu      # check the script itself

Not imported by the product or the tests.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from collections.abc import Callable
from datetime import date


def per_call_us(fn: Callable[[], object], calls: int, cuda: bool) -> float:
    """Microseconds per call of ``fn`` over ``calls`` calls after 50 untimed ones."""
    import torch

    for _ in range(50):
        fn()
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    if cuda:
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args(argv)
    import torch

    device = "cpu" if args.cpu else "cuda"
    cuda = device == "cuda"
    dtype = torch.bfloat16
    row: dict[str, object] = {
        "kind": "host_overhead", "date": str(date.today()), "torch": torch.__version__,
        "cpu": platform.processor() or platform.machine(),
        "gpu": torch.cuda.get_device_name(0) if cuda else None,
    }
    one = torch.zeros(1, device=device)
    a = torch.randn(64, 64, device=device, dtype=dtype)
    linear = torch.nn.Linear(64, 64, device=device, dtype=dtype)
    x = torch.randn(8, 64, device=device, dtype=dtype)
    n = args.calls
    row["add_us"] = per_call_us(lambda: one.add_(1), n, cuda)
    row["mm_us"] = per_call_us(lambda: a @ a, n, cuda)
    row["linear_module_us"] = per_call_us(lambda: linear(x), n, cuda)
    xg = x.clone().requires_grad_(True)
    row["linear_fwd_bwd_us"] = per_call_us(lambda: linear(xg).sum().backward(), n // 5, cuda)
    try:
        from peft import LoraConfig, get_peft_model

        holder = torch.nn.Sequential(torch.nn.Linear(64, 64, device=device, dtype=dtype))
        peft = get_peft_model(holder, LoraConfig(r=16, target_modules=["0"]))
        lora = peft.base_model.model[0]
        row["peft_lora_fwd_us"] = per_call_us(lambda: lora(x), n, cuda)
        row["peft_lora_fwd_bwd_us"] = per_call_us(
            lambda: lora(xg).sum().backward(), n // 5, cuda
        )
    except Exception as exc:  # peft missing or changed: say so, go on
        row["peft_error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
    try:
        import bitsandbytes as bnb

        q = bnb.nn.Linear4bit(64, 64, bias=False, compute_dtype=dtype, quant_type="nf4",
                              compress_statistics=True)
        q.weight = bnb.nn.Params4bit(torch.randn(64, 64, dtype=dtype), requires_grad=False,
                                     quant_type="nf4", compress_statistics=True)
        q = q.to(device)
        row["bnb_nf4_fwd_us"] = per_call_us(lambda: q(x), n, cuda)
        row["bnb_nf4_fwd_bwd_us"] = per_call_us(lambda: q(xg).sum().backward(), n // 5, cuda)
    except Exception as exc:  # bitsandbytes missing: say so, go on
        row["bnb_error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
    try:
        row.update(llama_layer_us(device, dtype, n // 50, cuda))
    except Exception as exc:  # transformers missing or changed
        row["llama_error"] = f"{type(exc).__name__}: {str(exc)[:160]}"
    print(json.dumps(row))
    return 0


def llama_layer_us(device: str, dtype: object, calls: int, cuda: bool) -> dict[str, float]:
    """Host time of one tiny Llama decoder layer's forward and backward, without and
    with non-reentrant activation checkpointing (transformers'
    ``gradient_checkpointing_enable``): the difference between a 6-layer and a 2-layer
    model, over 4."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    out = {}
    for ckpt in (False, True):
        times = {}
        for layers in (2, 6):
            config = LlamaConfig(hidden_size=64, intermediate_size=128,
                                 num_hidden_layers=layers, num_attention_heads=4,
                                 num_key_value_heads=2, vocab_size=256,
                                 attn_implementation="sdpa", use_cache=False)
            with torch.device(device):
                model = LlamaForCausalLM(config).to(dtype)  # type: ignore[arg-type]
            if ckpt:
                model.gradient_checkpointing_enable(
                    gradient_checkpointing_kwargs={"use_reentrant": False}
                )
            model.train()
            ids = torch.randint(0, 256, (1, 16), device=device)
            times[layers] = per_call_us(
                lambda m=model, i=ids: m(input_ids=i, labels=i).loss.backward(), calls, cuda
            )
        suffix = "_ckpt" if ckpt else ""
        out[f"llama_step_2_layers{suffix}_us"] = times[2]
        out[f"llama_layer_fwd_bwd{suffix}_us"] = (times[6] - times[2]) / 4
    return out


if __name__ == "__main__":
    raise SystemExit(main())
