"""Chart speed and size: how long the memory chart takes to draw and how big the PNG is.

Prints, for a 70B full-vs-QLoRA chart with the cost panel and a 0.5B memory-only chart:
* the first render in a fresh process, matplotlib's import included (what the first
  "Show chart" after a bot start costs), median of a few processes;
* warm renders (chart data + figure + PNG) in this process: median and p95 over N;
* the PNG's size in KB and pixels.

Target: well under a second per chart (the bot draws on a worker thread, so the event
loop never waits for it anyway).

Run: python benchmarks/chart.py [--renders N] [--cold-runs N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from adapters.chart import chart_data, chart_size, render_png  # noqa: E402
from adapters.parse import parse_query  # noqa: E402
from catalog.loader import default_catalog  # noqa: E402

CASES = {
    "70B full vs QLoRA, with cost": "70b qlora 50M tokens h100",
    "0.5B, memory only": "0.5b lora",
}

_COLD = """
import sys, time
sys.path.insert(0, {root!r})
from adapters.chart import chart_data, render_png
from adapters.parse import parse_query
from catalog.loader import default_catalog
request = parse_query({query!r}, default_catalog())
assert "matplotlib" not in sys.modules
t0 = time.perf_counter()
render_png(chart_data(request))
print(time.perf_counter() - t0)
"""


def cold_render(query: str, runs: int) -> float:
    """Median seconds of the first render in a fresh interpreter (import included)."""
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", _COLD.format(root=str(ROOT), query=query)],
            check=True, capture_output=True, text=True, cwd=ROOT,
        )
        times.append(float(done.stdout.strip()))
    return statistics.median(times)


def warm_renders(query: str, renders: int) -> tuple[float, float, int, tuple[int, int]]:
    """Median and p95 seconds per chart (data + drawing + PNG), PNG bytes and pixels."""
    catalog = default_catalog()
    request = parse_query(query, catalog)
    render_png(chart_data(request, catalog))  # warm: import, fonts
    times = []
    png = b""
    for _ in range(renders):
        t0 = time.perf_counter()
        data = chart_data(request, catalog)
        png = render_png(data)
        times.append(time.perf_counter() - t0)
    times.sort()
    p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
    return statistics.median(times), p95, len(png), chart_size(chart_data(request, catalog))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--renders", type=int, default=30)
    parser.add_argument("--cold-runs", type=int, default=3)
    args = parser.parse_args()
    for name, query in CASES.items():
        cold = cold_render(query, args.cold_runs)
        median, p95, size, (width, height) = warm_renders(query, args.renders)
        print(f"{name} ({query!r})")
        print(f"  first render incl. matplotlib import: {cold * 1000:6.0f} ms "
              f"(median of {args.cold_runs} fresh processes)")
        print(f"  warm render: median {median * 1000:6.0f} ms, p95 {p95 * 1000:6.0f} ms "
              f"over {args.renders}")
        print(f"  PNG: {size / 1024:.0f} KB, {width} x {height} px")


if __name__ == "__main__":
    main()
