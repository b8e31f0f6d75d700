"""Engine speed: full estimates per second, and `ftcost --json` start-up cost.

Prints:
* estimates/s for a mix of requests, each ranking every catalog card and
  computing the what-if panel with the physical time model on every card (target: a
  full estimate under 1 ms on one core, i.e. >= 1,000/s), and Python function calls per
  estimate (cProfile), which the machine's load does not move;
* whole-process time of `ftcost --json 70b qlora 50M tokens h100` as a ratio to
  `python -c "import pydantic, yaml"` measured in the same run (target: <= 3);
* whether the CLI imported any Slack or Discord module, or aiohttp, redis, matplotlib or
  asyncio
  (it must not: the terminal goes through the shared Service, which loads them lazily).

Run: python benchmarks/engine.py [--seconds N]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from catalog.loader import default_catalog  # noqa: E402
from engine import Request, estimate  # noqa: E402

REQUESTS = [
    Request(model="llama-3.1-70b", method="qlora", dataset_tokens=50_000_000, gpu="h100-sxm"),
    Request(model="llama-3.1-8b", dataset_tokens=10_000_000),
    Request(model="llama-3.1-70b", method="full", dataset_tokens=1_000_000_000),
    Request(model="llama-3.1-8b", method="full", seq_len=8192, grad_checkpointing=False),
    Request(model="llama-3.1-70b", method="lora", mode="napkin"),
]


def estimates_per_second(seconds: float, windows: int = 10) -> tuple[float, float, int]:
    """Estimates per second over ``windows`` equal slices of ``seconds``: the fastest
    slice's rate and the median slice's. The fastest is the figure to compare (as
    Python's ``timeit`` advises, slower repeats are other processes interfering); the
    median says how loaded the machine was."""
    catalog = default_catalog()
    for r in REQUESTS:  # warm caches
        estimate(r, catalog)
    rates = []
    for _ in range(windows):
        done, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds / windows:
            for r in REQUESTS:
                estimate(r, catalog)
            done += len(REQUESTS)
        rates.append(done / (time.perf_counter() - start))
    return max(rates), statistics.median(rates), len(catalog.gpus)


def calls_per_estimate(rounds: int = 100) -> float:
    """Python function calls per estimate, counted by cProfile over the same mix: a
    figure the machine's load does not move, to compare changes by when the timing
    swings run to run."""
    catalog = default_catalog()
    for r in REQUESTS:
        estimate(r, catalog)
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(rounds):
        for r in REQUESTS:
            estimate(r, catalog)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=io.StringIO())
    return float(stats.total_calls) / (rounds * len(REQUESTS))  # type: ignore[attr-defined]


def _time_process(argv: list[str], runs: int) -> float:
    """Median seconds of ``argv`` as a fresh process, after one untimed run. Bytecode may
    be written (any non-empty PYTHONDONTWRITEBYTECODE, "0" included, forbids it), so the
    timed runs load compiled modules, as an installed package does, rather than
    recompiling every module edited since the last write."""
    times = []
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run(argv, check=True, capture_output=True, env=env, cwd=ROOT)
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True, env=env, cwd=ROOT)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def cli_ratio(runs: int) -> tuple[float, float, float]:
    py = sys.executable
    baseline = _time_process([py, "-c", "import pydantic, yaml"], runs)
    query = ["70b", "qlora", "50M", "tokens", "h100"]
    cli = _time_process([py, "-m", "adapters.cli", "--json", *query], runs)
    return cli, baseline, cli / baseline


def cli_imports_platforms() -> list[str]:
    code = (
        "import sys, io, contextlib\n"
        "from adapters.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    main(['--json', '70b', 'qlora', '50M', 'tokens', 'h100'])\n"
        "print(','.join(m for m in sys.modules if m.split('.')[0] in "
        "('slack_bolt', 'slack_sdk', 'discord', 'aiohttp', 'redis', 'matplotlib', 'asyncio')"
        " or m.startswith(('adapters.slack', 'adapters.discord'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=ROOT
    )
    return [m for m in out.stdout.strip().split(",") if m]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    rate, median, cards = estimates_per_second(args.seconds)
    print(f"estimates/s (one core, {cards} cards ranked + what-if panel): {rate:,.0f} "
          f"({1000 / rate:.2f} ms each; fastest of 10 slices, median {1000 / median:.2f} ms)"
          f"  [target < 1 ms] {'OK' if rate >= 1000 else 'MISS'}")
    print(f"function calls per estimate (cProfile, load-independent): "
          f"{calls_per_estimate():,.0f}")
    print(f"machine: {platform.machine()} {platform.processor() or ''}, "
          f"{os.cpu_count()} cores, {date.today()}")
    cli, base, ratio = cli_ratio(args.runs)
    print(f"ftcost --json: {cli * 1000:.0f} ms; import pydantic, yaml: {base * 1000:.0f} ms;"
          f" ratio {ratio:.2f}  [target <= 3] {'OK' if ratio <= 3 else 'MISS'}")
    leaked = cli_imports_platforms()
    print(f"platform modules imported by the CLI: {leaked or 'none'}"
          f"  {'OK' if not leaked else 'MISS'}")


if __name__ == "__main__":
    main()
