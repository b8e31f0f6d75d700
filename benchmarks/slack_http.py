"""Slack HTTP-mode load benchmark (a benchmark, not a test).

Starts the real bot (``python -m bot``, HTTP mode, SQLite store in a temp dir) as a
subprocess on 127.0.0.1 and the local fake Slack Web API in this process, then fires
signed ``/ftcost`` slash commands at ``/slack/events`` in bursts of increasing
concurrency. For each level it prints the acknowledgement latency (request sent ->
HTTP 200) p50 / p99 / max and the delivered replies per second, and checks that
every command got exactly one ``chat.postMessage`` (none lost, none duplicated).

Target (2-core machine): p99 acknowledgement under 100 ms at 100 concurrent
commands, no lost or duplicated replies.

    .venv/bin/python benchmarks/slack_http.py [--levels 1,10,50,100] [--rounds 5]

Traffic goes to loopback only; every loop is bounded by count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing.connection import Connection
from pathlib import Path

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fakes import FakeSlack, request_headers, slash_command_body  # noqa: E402
from tests.fakes.piped_process import PipedProcess  # noqa: E402

SECRET = "bench-signing-secret"
TOKEN = "xoxb-bench-token"
QUERIES = [
    "70b qlora 50M tokens h100",
    "8b lora 200M tokens 2 epochs seq 4k",
    "8b full 1B tokens 8x h100 zero3",
    "mixtral-8x7b qlora 20M tokens a100",
]
TARGET_P99_MS = 100.0
TARGET_LEVEL = 100
DEADLINE_S = 120.0  # per level: replies must all arrive within this


def _fake_slack_process(conn: Connection) -> None:
    """Child process: serve FakeSlack and answer the parent's questions over ``conn``."""
    with FakeSlack.run_in_thread() as slack:
        conn.send(slack.base_url)
        while True:
            try:
                command = conn.recv()
            except EOFError:
                return
            if command == "stop":
                return
            calls = slack.calls_to("chat.postMessage")
            conn.send({
                "posts": [(c.args.get("channel"), c.ok, c.time) for c in calls],
                "violations": len(slack.violations),
            })


class RemoteSlack(PipedProcess):
    """The fake Slack Web API in its own process, so that serving the bot's replies
    does not slow the load generator that measures acknowledgements."""

    def __init__(self) -> None:
        super().__init__(_fake_slack_process, start_timeout_s=30)

    @property
    def base_url(self) -> str:
        return str(self.hello)

    def stats(self) -> dict:
        return self.ask("stats")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    k = max(0, min(len(ordered) - 1, round(q * (len(ordered) - 1))))
    return ordered[k]


async def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"the bot exited with status {proc.returncode}")
            try:
                async with session.get(url) as resp:
                    if resp.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.1)
    raise TimeoutError("the bot did not become healthy")


async def fire(session: aiohttp.ClientSession, url: str, body: bytes,
               headers: dict[str, str]) -> float:
    started = time.perf_counter()
    async with session.post(url, data=body, headers=headers) as resp:
        await resp.read()
        if resp.status != 200:
            raise RuntimeError(f"HTTP {resp.status}")
    return (time.perf_counter() - started) * 1000


async def wait_replies(slack: RemoteSlack, expected: int, seen_before: int) -> dict:
    deadline = time.monotonic() + DEADLINE_S
    while True:
        stats = await asyncio.to_thread(slack.stats)
        if len(stats["posts"]) - seen_before >= expected or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.05)
    await asyncio.sleep(0.3)  # let any duplicate show up
    return await asyncio.to_thread(slack.stats)


async def run_level(
    slack: RemoteSlack, session: aiohttp.ClientSession, url: str, level: int, rounds: int
) -> dict[str, float]:
    latencies: list[float] = []
    channels: list[str] = []
    before = len((await asyncio.to_thread(slack.stats))["posts"])
    started = time.time()
    for r in range(rounds):
        batch = [f"C{level:04d}R{r:02d}N{i:04d}" for i in range(level)]
        channels += batch
        # Build and sign every request first: the burst measures the bot, not the signer.
        requests = []
        for i, channel in enumerate(batch):
            # One user per command: the bot's per-user rate limit must not turn the
            # burst into private "slow down" notices.
            body = slash_command_body(QUERIES[i % len(QUERIES)], channel_id=channel,
                                      user_id=f"U{channel}")
            requests.append((body.encode(), request_headers(body, SECRET)))
        latencies += await asyncio.gather(*(fire(session, url, b, h) for b, h in requests))
    stats = await wait_replies(slack, len(channels), before)
    posts = stats["posts"][before:]
    elapsed = max((t for _, _, t in posts), default=time.time()) - started
    per_channel = Counter(ch for ch, ok, _ in posts if ok)
    lost = sum(1 for ch in channels if per_channel[ch] == 0)
    dup = sum(n - 1 for n in per_channel.values() if n > 1)
    return {
        "level": level,
        "sent": len(channels),
        "p50": statistics.median(latencies),
        "p99": percentile(latencies, 0.99),
        "max": max(latencies),
        "replies": sum(per_channel.values()),
        "rps": sum(per_channel.values()) / elapsed if elapsed > 0 else float("nan"),
        "lost": lost,
        "dup": dup,
        "invalid": stats["violations"],
    }


async def main_async(levels: list[int], rounds: int, settings: dict) -> int:
    port = free_port()
    with RemoteSlack() as slack, tempfile.TemporaryDirectory(prefix="ftcost-bench-") as tmp:
        cfg = Path(tmp) / "bot.yml"
        cfg.write_text(json.dumps(settings))
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "DISCORD"))},
            "SLACK_BOT_TOKEN": TOKEN,
            "SLACK_SIGNING_SECRET": SECRET,
            "SLACK_API_BASE_URL": slack.base_url,
            "PORT": str(port),
            "FTCOST_STORE": str(Path(tmp) / "bench.sqlite3"),
            "FTCOST_LOG_LEVEL": "INFO",
        }
        log_path = Path(tmp) / "bot.log"
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-m", "bot", "--config", str(cfg)],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            )
            try:
                await wait_healthy(f"http://127.0.0.1:{port}/healthz", proc)
                url = f"http://127.0.0.1:{port}/slack/events"
                connector = aiohttp.TCPConnector(limit=0)
                timeout = aiohttp.ClientTimeout(total=60)
                async with aiohttp.ClientSession(connector=connector,
                                                 timeout=timeout) as session:
                    # warm-up: auth.test, first estimates, a pool of open connections
                    await run_level(slack, session, url, max(levels), 1)
                    results = [await run_level(slack, session, url, lv, rounds)
                               for lv in levels]
            finally:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
        command_lines = sum(1 for line in log_path.read_text().splitlines()
                            if "ftcost.command" in line)

    print(f"ftcost Slack HTTP benchmark ({os.cpu_count()} CPUs, {rounds} back-to-back bursts "
          f"per level, bot and fake Web API in their own processes; bot settings {settings})")
    print(f"{'concurrent':>10} {'sent':>6} {'ack p50':>9} {'ack p99':>9} {'ack max':>9} "
          f"{'replies/s':>10} {'lost':>5} {'dup':>4}")
    ok = True
    for r in results:
        print(f"{r['level']:>10} {r['sent']:>6} {r['p50']:>7.1f}ms {r['p99']:>7.1f}ms "
              f"{r['max']:>7.1f}ms {r['rps']:>10.1f} {r['lost']:>5} {r['dup']:>4}")
        ok &= r["lost"] == 0 and r["dup"] == 0 and r["invalid"] == 0
        if r["level"] == TARGET_LEVEL:
            ok &= r["p99"] < TARGET_P99_MS
    total = sum(r["sent"] for r in results) + max(levels)
    print(f"log lines (one per command): {command_lines} for {total} commands")
    verdict = "OK" if ok else "MISS"
    print(f"target: p99 ack < {TARGET_P99_MS:.0f} ms at {TARGET_LEVEL} concurrent, "
          f"no lost or duplicated replies: {verdict}")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="1,10,50,100",
                        help="comma-separated concurrency levels (default 1,10,50,100)")
    parser.add_argument("--rounds", type=int, default=5, help="bursts per level (default 5)")
    parser.add_argument("--reply-concurrency", type=int, default=None,
                        help="the bot's slack.reply_concurrency (default: the bot's default)")
    parser.add_argument("--estimate-threads", type=int, default=None,
                        help="the bot's estimate_threads (default: the bot's default)")
    args = parser.parse_args()
    settings: dict = {"slack": {"host": "127.0.0.1"}}
    if args.reply_concurrency is not None:
        settings["slack"]["reply_concurrency"] = args.reply_concurrency
    if args.estimate_threads is not None:
        settings["estimate_threads"] = args.estimate_threads
    levels = [int(x) for x in args.levels.split(",") if x.strip()]
    if not levels or min(levels) < 1 or max(levels) > 1000 or not 1 <= args.rounds <= 50:
        parser.error("levels must be 1..1000 and rounds 1..50")
    return asyncio.run(main_async(levels, args.rounds, settings))


if __name__ == "__main__":
    raise SystemExit(main())
