"""State store latency: the calls a reply makes, on SQLite and on Redis.

For each backend, times ``first_seen`` (Slack retry de-duplication), ``get_thread`` and
``save_thread`` (a follow-up), ``hit`` (the rate limit) and ``cache_get``, one call at a
time (median and 99th percentile, milliseconds), then ``first_seen`` with 100 calls in
flight (calls per second). SQLite is a file in a temporary directory; Redis is
``--redis URL`` or a ``redis-server`` from PATH started on a free port (persistence off:
the figures are the round trip, not the disk).

Run: python benchmarks/store.py [--redis redis://127.0.0.1:6379/0] [-n 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.store import Store, ThreadKey
from bot.store_redis import RedisStore
from bot.store_sqlite import SQLiteStore
from engine import Method, Request

REQUEST = Request(model="llama-3.1-70b", method=Method.QLORA, gpu="h100-sxm",
                  dataset_tokens=50_000_000)  # fmt: skip


async def timed(n: int, call: Callable[[int], Awaitable[object]]) -> tuple[float, float]:
    """Median and p99 of ``n`` sequential calls, in milliseconds."""
    samples = []
    for i in range(n):
        start = time.perf_counter()
        await call(i)
        samples.append((time.perf_counter() - start) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


async def measure(name: str, store: Store, n: int) -> None:
    key = ThreadKey("slack", "C1", "1700000000.000100")
    await store.save_thread(key, REQUEST, "1")
    await store.cache_put("hf:config", '{"hidden_size": 8192}', 3600)
    run = uuid.uuid4().hex
    calls: dict[str, Callable[[int], Awaitable[object]]] = {
        "first_seen": lambda i: store.first_seen(f"{run}:{i}", 60),
        "get_thread": lambda i: store.get_thread(key),
        "save_thread": lambda i: store.save_thread(key, REQUEST, str(i)),
        "hit": lambda i: store.hit(f"rate:{run}", 60),
        "cache_get": lambda i: store.cache_get("hf:config"),
    }
    for op, call in calls.items():
        median, p99 = await timed(n, call)
        print(f"{name:7} {op:12} median {median:6.3f} ms   p99 {p99:6.3f} ms")
    gate = asyncio.Semaphore(100)

    async def one(i: int) -> None:
        async with gate:
            await store.first_seen(f"{run}:c{i}", 60)

    start = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    rate = n / (time.perf_counter() - start)
    print(f"{name:7} {'first_seen':12} 100 in flight: {rate:8.0f} calls/s")


async def main(redis_url: str | None, n: int) -> None:
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        async with SQLiteStore(tmp / "bench.sqlite3") as sqlite:
            await measure("sqlite", sqlite, n)
        if redis_url is None:
            from tests.redis_server import RedisServer, redis_server_path

            if redis_server_path() is None:
                print("redis   skipped: no --redis URL and no redis-server on PATH")
                return
            redis_url = stack.enter_context(RedisServer()).url
        from tests.redis_server import delete_prefix

        prefix = f"ftcost-bench:{uuid.uuid4().hex}:"
        try:
            async with RedisStore(redis_url, prefix=prefix) as redis:
                await measure("redis", redis, n)
        finally:
            delete_prefix(redis_url, prefix)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis", metavar="URL", help="a Redis to use (default: start one)")
    parser.add_argument("-n", type=int, default=2000, help="calls per operation")
    args = parser.parse_args()
    asyncio.run(main(args.redis, args.n))
