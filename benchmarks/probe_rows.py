"""Turn a gpu_probe.py run into rows for benchmarks/measurements.yaml.

Reads the probe's JSON lines and the same machine's ``host_overhead.py`` output, and
prints one YAML row per completed run, stated as its user would say it:

* the model, method, LoRA rank 16 on all linears with dropout 0, sequence, micro-batch,
  checkpointing, one card, the ``hf`` framework word;
* ``pure-bf16`` for the plain runs (BF16 weights trained without autocast), nothing for
  TRL's path (``*-trl``: BF16 autocast, the Trainer's mixed precision);
* memory on torch's peak reserved (the counter the estimate claims), tokens/s per GPU;
* ``measured_host``: the machine's host time per counted kernel, a tiny Llama layer's
  forward and backward over the kernels ``engine.constants`` counts for it, so the
  accuracy benchmark times the run at its own host's launch time.

Usage::

    python benchmarks/probe_rows.py benchmarks/gpu_runs/h200-2026-12-04.jsonl \\
        benchmarks/gpu_runs/h200-2026-12-04-host.json --prefix ftcost-h200 --gpu h200-sxm

``--predict GRID --launch-us US`` prints instead what the engine expects of every run of a
gpu_probe.py grid before it runs (reserved GB and tokens/s at the current constants and
that host launch time): a prediction kept beside the raw lines is an honest test on
models the estimate has not been scored on.

Not imported by the product.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.append(str(ROOT / "benchmarks"))  # after the root: benchmarks/engine.py is a script

from engine.constants import BACKWARD_KERNELS, KERNELS_PER_LAYER  # noqa: E402

LAYER_KERNELS = KERNELS_PER_LAYER * (1 + BACKWARD_KERNELS)
"""Kernels the time model counts for one decoder layer's forward and backward."""


def request_of(run: dict[str, Any], gpu: str) -> dict[str, Any]:
    """What the run's user would say: the probe's method name carries its flags."""
    base, *flags = run["method"].split("-")
    request: dict[str, Any] = {"model": run["model"], "method": base}
    if base != "full":
        request.update(lora_rank=16, lora_targets="all-linear", lora_dropout=0.0)
    if "trl" not in flags:
        request["state_precision"] = "pure-bf16"
    request.update(
        seq_len=run["seq_len"],
        micro_batch=run["micro_batch"],
        grad_checkpointing="noac" not in flags,
        gpu=gpu,
        gpu_count=1,
        sharding="none",
        framework="hf",
    )
    return request


def notes_of(run: dict[str, Any], env: dict[str, Any]) -> str:
    _, *flags = run["method"].split("-")
    said = []
    if "trl" in flags:
        said.append(
            "TRL's QLoRA path: PEFT's prepare_model_for_kbit_training (norms FP32) "
            "and TRL's BF16 cast-back of adapters, embeddings and head, under BF16 "
            "autocast"
        )
    else:
        said.append(
            "weights loaded in BF16 (torch_dtype=torch.bfloat16) and trained as "
            "they are, no autocast: pure BF16, as the user says it"
        )
        if run["method"].startswith("qlora"):
            said.append(
                "PEFT QLoRA in a plain training loop, without "
                "prepare_model_for_kbit_training (norms stay BF16)"
            )
    if "noac" in flags:
        said.append("no gradient checkpointing")
    return (
        "Random weights, random token ids at a fixed length; 2 untimed then 4 timed "
        "optimizer steps, grad_accum 1; SDPA attention; HF loss (labels=input_ids). "
        + "; ".join(said)
        + f". torch.cuda.max_memory_allocated {run['peak_allocated_gb']:.3f} GB (reserved is "
        "scored: the estimate is reserved plus the context); CUDA context measured apart at "
        f"{env['context_gb']:.2f} GB."
    )


def rows(probe: Path, host: Path, prefix: str, gpu: str) -> list[str]:
    lines = [json.loads(line) for line in probe.read_text(encoding="utf-8").splitlines()]
    env = next(line for line in lines if line.get("kind") == "environment")
    overhead = json.loads(host.read_text(encoding="utf-8"))
    launch_us = overhead["llama_layer_fwd_bwd_us"] / LAYER_KERNELS
    runs = [line for line in lines if "model" in line and not line.get("error")]
    out = []
    for n, run in enumerate(runs, start=1):
        request = request_of(run, gpu)
        source = (
            f"this project's own measurement, benchmarks/gpu_probe.py on one {env['gpu']} "
            f"({env['date']}; torch {env['torch']}, transformers {env['transformers']}, peft "
            f"{env['peft']}, bitsandbytes {env['bitsandbytes']}); raw lines in "
            f"{probe.relative_to(ROOT)}"
        )
        host_source = (
            f"{host.relative_to(ROOT)} (benchmarks/host_overhead.py on the same machine) - a "
            f"tiny Llama decoder layer's forward and backward took "
            f"{overhead['llama_layer_fwd_bwd_us']:,.0f} us of host time, over the "
            f"{LAYER_KERNELS:.0f} kernels engine.constants counts for it (KERNELS_PER_LAYER x "
            "(1 + BACKWARD_KERNELS))"
        )
        out += [
            f"- id: {prefix}-{n:02d}",
            f"  source: {source}",
            "  framework: hf",
            "  trust: A",
            "  request:",
            *[
                f"    {k}: {str(v).lower() if isinstance(v, bool) else v}"
                for k, v in request.items()
            ],
            "  measured:",
            f"    value: {run['peak_reserved_gb']:.3f}",
            "    unit: GB",
            "    counter: reserved",
            f"    peak_gb: {run['peak_reserved_gb']:.3f}",
            f"    tokens_per_sec_per_gpu: {run['tokens_per_sec']:.0f}",
            "  measured_host:",
            f"    launch_us_per_kernel: {launch_us:.1f}",
            f"    source: {host_source}",
            "  seq_note: fixed",
            f"  notes: {json.dumps(notes_of(run, env))}",
        ]
    return out


def predictions(grid: str, gpu: str, launch_us: float) -> list[dict[str, Any]]:
    """The engine's reserved GB and tokens/s per GPU for every run of a gpu_probe.py grid,
    timed at ``launch_us`` of host time per kernel (the measured host's)."""
    from accuracy import Run, Timer
    from gpu_probe import GRIDS

    from catalog.loader import default_catalog
    from engine import Request, estimate
    from engine.constants import CUDA_CONTEXT_GB
    from engine.throughput import DEFAULT_TUNING

    out = []
    for model, method, seq, batch in GRIDS[grid, False]:
        said = {"model": model, "method": method, "seq_len": seq, "micro_batch": batch}
        request = Request(**request_of(said, gpu))
        reserved = estimate(request, default_catalog()).options[0].per_gpu_gb - CUDA_CONTEXT_GB
        run = Run(
            run_id="predicted",
            source="predicted",
            framework="hf",
            method=method,
            request=request,
            measured_gb=0.0,
            counter="reserved",
            sanity_only=False,
            tokens_measured=None,
            time_excluded=None,
            host_launch_s=launch_us * 1e-6,
        )
        out.append(
            {
                **said,
                "gpu": gpu,
                "predicted_reserved_gb": round(reserved, 2),
                "predicted_tokens_per_sec": round(Timer(run).tokens_per_second(DEFAULT_TUNING)),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("probe", type=Path, nargs="?", help="gpu_probe.py's JSON lines")
    parser.add_argument("host", type=Path, nargs="?", help="host_overhead.py's JSON line")
    parser.add_argument("--prefix", default="ftcost-h200", help="row id prefix")
    parser.add_argument("--gpu", default="h200-sxm", help="the catalog's id of the card")
    parser.add_argument(
        "--predict",
        choices=("llama", "families", "large"),
        help="print the engine's expectation of a grid instead",
    )
    parser.add_argument(
        "--launch-us", type=float, default=29.5, help="--predict: host time per kernel, us"
    )
    args = parser.parse_args(argv)
    if args.predict:
        for line in predictions(args.predict, args.gpu, args.launch_us):
            print(json.dumps(line))
        return 0
    if args.probe is None or args.host is None:
        parser.error("give the probe's JSON lines and the host's JSON (or --predict)")
    print("\n".join(rows(args.probe.resolve(), args.host.resolve(), args.prefix, args.gpu)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
