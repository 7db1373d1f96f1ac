"""`dollymp bench streams`: other HTTP queries and the server's memory under many live SSE subscribers.

A `dollymp serve` process (its own SQLite log, HTTP API on loopback, stream limits raised to admit the
subscribers unless given) is started; this process appends `--rate` decisions per second to the same log
throughout. Three phases of `--seconds` each:

- before: no subscriber;
- during: `--subscribers` real HTTP connections on GET /v1/decisions/stream, each read continuously;
- after: every subscriber has closed its connection (then `--settle` seconds pass).

In each phase a probe sends, one after another, GET /v1/decisions?limit=100 (a page of the log),
/v1/state and /healthz on fresh connections and times each answer. Measured: the probes' p50 and p99, and
the serve process's resident memory (VmRSS) at the end of each phase. Prints a table and, last, one JSON
line. Not a timed test: run it by hand.

Measured (2 shared cores, `--subscribers 1000 --seconds 10 --settle 5`, 20 decisions/s, 3 runs, median
[min, max]): other queries' p99 before 12.7 ms [12.0, 12.8], during 112.6 ms [96.6, 318.4], after 10.6 ms
[9.0, 18.0]; serve's RSS after minus before +46.9 MB [45.8, 49.9] (189 MB before, ~250 MB during). At
`--rate 200` (every subscriber unfiltered: ~180 MB/s of events wanted) the server is CPU-bound sending
and the figures are far off: p99 during 1.7 s, RSS after +104 MB (one run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from pyscheduler.bench.store import synthetic
from pyscheduler.bench.ui import free_port, pct, wait_listening
from pyscheduler.store import open_store

_SERVE = (sys.executable, "-m", "pyscheduler", "serve", "--grpc-port", "0", "--log-level", "warning")
PROBES = ("/v1/decisions?limit=100", "/v1/state", "/healthz")


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--subscribers", type=int, default=1000, help="SSE connections opened (default 1000)")
    p.add_argument("--seconds", type=float, default=15.0, help="length of each phase (default 15)")
    p.add_argument("--settle", type=float, default=5.0, help="wait after subscribers leave (default 5)")
    p.add_argument("--rate", type=int, default=20, help="decisions appended per second (default 20)")
    p.add_argument("--prefill", type=int, default=50_000, help="decisions in the log at start")
    p.add_argument(
        "--max-per-caller",
        type=int,
        default=None,
        help="http.stream_max_per_caller of the server (default: the subscribers, all from one address)",
    )


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024.0
    raise RuntimeError(f"no VmRSS for pid {pid}")


async def _get(port: int, path: str) -> tuple[int, float]:
    start = time.perf_counter()
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    elapsed = (time.perf_counter() - start) * 1e3
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, elapsed


async def _probe(port: int, seconds: float) -> tuple[list[float], int]:
    times: list[float] = []
    errors = 0
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        try:
            status, ms = await asyncio.wait_for(_get(port, PROBES[i % len(PROBES)]), 30)
        except (OSError, TimeoutError):
            errors += 1
            continue
        finally:
            i += 1
        if status != 200:
            errors += 1
        times.append(ms)
        await asyncio.sleep(0.02)
    return times, errors


class _Subscriber:
    def __init__(self) -> None:
        self.status = 0
        self.bytes = 0
        self.writer: asyncio.StreamWriter | None = None
        self.task: asyncio.Task[None] | None = None

    async def run(self, port: int, opened: asyncio.Event) -> None:
        try:
            reader, self.writer = await asyncio.open_connection("127.0.0.1", port)
            self.writer.write(
                b"GET /v1/decisions/stream HTTP/1.1\r\nHost: bench\r\nAccept: text/event-stream\r\n\r\n"
            )
            await self.writer.drain()
            head = await reader.readuntil(b"\r\n\r\n")
            self.status = int(head.split(b" ", 2)[1])
            opened.set()
            while chunk := await reader.read(65536):
                self.bytes += len(chunk)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            opened.set()

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        if self.task is not None:
            self.task.cancel()


def _phase(name: str, times: list[float], errors: int, pid: int, extra: dict[str, Any]) -> dict[str, Any]:
    return {
        "phase": name,
        "queries": len(times),
        "errors": errors,
        "p50_ms": round(pct(times, 0.5), 1),
        "p99_ms": round(pct(times, 0.99), 1),
        "rss_mb": round(rss_mb(pid), 1),
        **extra,
    }


async def _subscribe(port: int, n: int, conn: Connection) -> None:
    subs = [_Subscriber() for _ in range(n)]
    events = [asyncio.Event() for _ in subs]
    start = time.perf_counter()
    for i, (sub, opened) in enumerate(zip(subs, events, strict=True)):
        sub.task = asyncio.get_running_loop().create_task(sub.run(port, opened))
        if i % 50 == 49:
            await asyncio.sleep(0.01)  # do not overflow the listen backlog
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 120)
    conn.send((sum(1 for s in subs if s.status == 200), time.perf_counter() - start))
    while not conn.poll():
        await asyncio.sleep(0.1)
    for s in subs:
        s.close()
    await asyncio.gather(*(s.task for s in subs if s.task is not None), return_exceptions=True)
    conn.send(sum(s.bytes for s in subs))


def _subscribers_main(port: int, n: int, conn: Connection) -> None:
    """The subscribers' own process: their reading does not delay the probe's clock."""
    asyncio.run(_subscribe(port, n, conn))


async def _bench(args: argparse.Namespace, port: int, pid: int) -> list[dict[str, Any]]:
    phases = []
    times, errors = await _probe(port, args.seconds)
    phases.append(_phase("before", times, errors, pid, {"subscribers": 0}))

    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(
        target=_subscribers_main, args=(port, args.subscribers, theirs), daemon=True
    )
    child.start()
    loop = asyncio.get_running_loop()
    admitted, open_s = await loop.run_in_executor(None, ours.recv)
    times, errors = await _probe(port, args.seconds)
    during = _phase("during", times, errors, pid, {"subscribers": admitted, "open_s": round(open_s, 2)})
    ours.send("close")
    streamed = await loop.run_in_executor(None, ours.recv)
    during["streamed_mb"] = round(streamed / 1e6, 1)
    phases.append(during)
    child.join(30)
    await asyncio.sleep(args.settle)
    times, errors = await _probe(port, args.seconds)
    phases.append(_phase("after", times, errors, pid, {"subscribers": 0}))
    return phases


def _append_forever(db: Path, rate: int, stop: threading.Event) -> None:
    store = open_store(db)
    batch = max(1, rate // 10)
    seed = 1_000_000
    while not stop.wait(0.1):
        store.append(list(synthetic(batch, seed=seed, apps=200)))
        seed += 1
    store.close()


def run(args: argparse.Namespace) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = args.subscribers * 2 + 256  # this process's sockets and the server's
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, want), hard))  # inherited by serve
    tmp = Path(tempfile.mkdtemp(prefix="dollymp-bench-streams-"))
    db = tmp / "decisions.db"
    store = open_store(db)
    for start in range(0, args.prefill, 10_000):
        store.append(list(synthetic(min(10_000, args.prefill - start), seed=start, apps=200)))
    store.close()
    port = free_port()
    per_caller = args.max_per_caller if args.max_per_caller is not None else max(args.subscribers, 1)
    env = {
        **os.environ,
        "DOLLYMP_HTTP_STREAM_MAX_TOTAL": str(max(args.subscribers, 1000)),
        "DOLLYMP_HTTP_STREAM_MAX_PER_CALLER": str(per_caller),
    }
    err = (tmp / "serve.err").open("w")
    serve = subprocess.Popen(
        [*_SERVE, "--db", str(db), "--http-port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=err,
    )
    stop = threading.Event()
    writer = threading.Thread(target=_append_forever, args=(db, args.rate, stop), daemon=True)
    try:
        wait_listening(serve, port, tmp / "serve.err")
        writer.start()
        phases = asyncio.run(_bench(args, port, serve.pid))
    finally:
        stop.set()
        serve.terminate()
        serve.wait(30)
        err.close()
    print(
        f"{args.subscribers} SSE subscribers, {args.rate} decisions/s appended, "
        f"probes {', '.join(PROBES)} ({args.seconds:g} s a phase)"
    )
    head = ("subscribers", "queries", "errors", "p50 ms", "p99 ms", "RSS MB")
    keys = ("subscribers", "queries", "errors", "p50_ms", "p99_ms", "rss_mb")
    print(f"{'phase':<8} " + " ".join(f"{h:>11}" for h in head))
    for p in phases:
        print(f"{p['phase']:<8} " + " ".join(f"{p[k]:>11}" for k in keys))
    before, during, after = phases
    result = {
        "subscribers": args.subscribers,
        "admitted": during["subscribers"],
        "open_s": during["open_s"],
        "streamed_mb": during["streamed_mb"],
        "p50_ms": {p["phase"]: p["p50_ms"] for p in phases},
        "p99_ms": {p["phase"]: p["p99_ms"] for p in phases},
        "errors": {p["phase"]: p["errors"] for p in phases},
        "rss_mb": {p["phase"]: p["rss_mb"] for p in phases},
        "rss_after_minus_before_mb": round(after["rss_mb"] - before["rss_mb"], 1),
    }
    print(json.dumps(result))
    return 0
