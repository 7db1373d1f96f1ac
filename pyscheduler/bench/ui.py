"""`dollymp bench ui`: the operator page under a stream of decisions, in headless Chromium.

A `dollymp serve` process (its own SQLite log, HTTP API with a token) is started; its log is first filled
with `--prefill` decisions, then this process appends `--rate` decisions per minute to the same log in
100 ms batches (as a shim's ticks arrive) for `--seconds`, each stamped with the wall clock when it is
made. The page (Debian's chromium and chromedriver, driven by selenium: `pip install .[dev]`) shows one
busy application's timeline while it follows the live stream. Measured:

- time to first render: from navigation start to the first complete render of the cluster view and of
  the application's timeline (`window.dollymp.firstRenderMs`, performance.now() in the page);
- update latency: for every streamed decision, the time from its making to the page's render of it
  (`window.dollymp.latencies`: Date.now() in the frame that shows it in the live feed minus the
  decision's time), and for the open application's decisions to the re-render of its timeline, which
  runs at most once a second (`timelineLatencies`);
- responsiveness: round trips of a trivial script through the page's main thread while it streams.

Prints a table and, last, one JSON line. Not a timed test: run it by hand.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pyscheduler.bench.store import synthetic
from pyscheduler.objects.decision import Decision
from pyscheduler.store import open_store

TOKEN = "bench-ui-token"


def add_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rate", type=int, default=10_000, help="decisions per minute streamed (default 10000)")
    p.add_argument("--seconds", type=float, default=60.0, help="how long to stream (default 60)")
    p.add_argument("--prefill", type=int, default=100_000, help="decisions in the log before the page loads")
    p.add_argument("--apps", type=int, default=200, help="applications the decisions are spread over")
    p.add_argument("--screenshot", type=Path, default=None, help="save the page at the end here (PNG)")


def free_port() -> int:
    """A loopback TCP port free now (the benchmarks' servers bind it next)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_listening(serve: subprocess.Popen[bytes], port: int, err: Path, timeout_s: float = 60.0) -> None:
    """Wait until the benchmark's `dollymp serve` accepts connections on `port`; exit with its stderr
    if it dies or takes longer than `timeout_s`."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if serve.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"serve did not start: {err.read_text()}") from None
            time.sleep(0.1)


def pct(xs: list[float], q: float) -> float:
    """The q-quantile of xs (nearest rank); NaN for none."""
    if not xs:
        return float("nan")
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def _decisions(n: int, apps: int, seed: int, busy: str, now: float) -> list[Decision]:
    out = []
    for i, d in enumerate(synthetic(n, seed=seed, apps=apps)):
        app = busy if i % 10 == 0 else d.application_id  # a tenth to the application on screen
        out.append(Decision(now, d.kind, d.reason, app, d.job_id, d.task_id, d.node_id, d.detail, d.inputs))
    return out


def chromium() -> Any:
    """Headless Debian chromium through its chromedriver (selenium; also used by the browser tests)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not browser or not driver:
        raise SystemExit(
            "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)"
        )
    opts = webdriver.ChromeOptions()
    opts.binary_location = browser
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1400,1000",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(options=opts, service=Service(executable_path=driver))


def _wait(driver: Any, script: str, timeout: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = driver.execute_script(script)
        if got is not None:
            return got
        time.sleep(0.02)
    raise TimeoutError(f"page: {script!r} gave nothing within {timeout} s")


def run(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="dollymp-bench-ui-"))
    db = tmp / "decisions.db"
    busy = "application_1763700000000_9999"
    store = open_store(db)
    now = time.time()
    for start in range(0, args.prefill, 20_000):
        store.append(_decisions(min(20_000, args.prefill - start), args.apps, start, busy, now - 600))
    port = free_port()
    env = {**os.environ, "DOLLYMP_HTTP_TOKEN": TOKEN}
    serve = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pyscheduler",
            "serve",
            "--db",
            str(db),
            "--grpc-port",
            "0",
            "--http-port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp / "serve.err").open("w"),
    )
    driver = None
    try:
        base = f"http://127.0.0.1:{port}"
        wait_listening(serve, port, tmp / "serve.err")
        driver = chromium()
        driver.get(base + "/ui/")
        driver.execute_script(f"sessionStorage.setItem('dollymp.token', {json.dumps(TOKEN)})")
        driver.get(base + "/ui/#cluster")
        driver.refresh()
        cluster_ms = float(_wait(driver, "return window.dollymp && window.dollymp.firstRenderMs"))
        driver.get(base + "/ui/#app=" + busy)
        driver.refresh()
        app_ms = float(_wait(driver, "return window.dollymp && window.dollymp.firstRenderMs"))
        shown = int(_wait(driver, "return document.querySelectorAll('#events tbody tr').length || null"))
        _wait(driver, "return document.getElementById('live').className.includes('on') || null", 30)

        per_tick = args.rate / 600.0  # 100 ms ticks
        sent, owed, seed = 0, 0.0, 10_000_000
        rtts: list[float] = []
        t_end = time.monotonic() + args.seconds
        next_tick = time.monotonic()
        while time.monotonic() < t_end:
            owed += per_tick
            n = int(owed)
            owed -= n
            if n:
                store.append(_decisions(n, args.apps, seed + sent, busy, time.time()))
                sent += n
            if int(next_tick * 10) % 10 == 0:  # about once a second: a round trip through the page
                t0 = time.perf_counter()
                driver.execute_script("return 1")
                rtts.append((time.perf_counter() - t0) * 1000)
            next_tick += 0.1
            time.sleep(max(0.0, next_tick - time.monotonic()))
        time.sleep(3.0)  # let the last batches arrive
        lat = [float(x) for x in driver.execute_script("return window.dollymp.latencies")]
        tl = [float(x) for x in driver.execute_script("return window.dollymp.timelineLatencies")]
        events = int(driver.execute_script("return window.dollymp.events"))
        if args.screenshot:
            driver.save_screenshot(str(args.screenshot))
    finally:
        if driver is not None:
            driver.quit()
        serve.terminate()
        serve.wait(30)
        store.close()
        shutil.rmtree(tmp, ignore_errors=True)
    result = {
        "rate_per_min": args.rate,
        "seconds": args.seconds,
        "prefill": args.prefill,
        "first_render_cluster_ms": round(cluster_ms, 1),
        "first_render_timeline_ms": round(app_ms, 1),
        "timeline_rows_shown": shown,
        "sent": sent,
        "received": events,
        "update_latency_ms_p50": round(statistics.median(lat), 1) if lat else None,
        "update_latency_ms_p95": round(pct(lat, 0.95), 1),
        "update_latency_ms_p99": round(pct(lat, 0.99), 1),
        "update_latency_ms_max": round(max(lat), 1) if lat else None,
        "timeline_update_latency_ms_p50": round(statistics.median(tl), 1) if tl else None,
        "timeline_update_latency_ms_p99": round(pct(tl, 0.99), 1),
        "script_roundtrip_ms_p99": round(pct(rtts, 0.99), 1),
    }
    width = max(len(k) for k in result)
    for k, v in result.items():
        print(f"{k:<{width}}  {v}")
    print(json.dumps(result))
    return 0 if events >= sent else 1
