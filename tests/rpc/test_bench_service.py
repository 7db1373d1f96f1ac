"""`dollymp bench service` runs end to end on a small cluster and prints every figure it promises."""

from __future__ import annotations

import json
import subprocess
import sys

from rpc_harness import REPO


def test_bench_service_prints_its_figures() -> None:
    args = "bench service --nodes 40 --apps 4 --seconds 2 --warmup 0.5 --tasks 2 4 --task-seconds 0.2 0.5"
    out = subprocess.run(
        [sys.executable, "-m", "pyscheduler", *args.split(), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    # The keys, then what tells a noisy machine from a slow service.
    for key in ("node_updates_per_s", "round_p50_ms", "round_p99_ms", "placements_per_s", "peak_rss_mb"):
        assert isinstance(result[key], int | float), key
    assert result["node_updates_per_s"] > 0 and result["placements_per_s"] > 0
    assert result["round_p50_ms"] <= result["round_p99_ms"]
    assert 0 < result["rss_start_mb"] <= result["peak_rss_mb"] and result["rss_every_5s_mb"]
    # the state the service holds, sampled beside its memory (state growth is not a leak)
    assert len(result["containers_every_5s"]) == len(result["rss_every_5s_mb"])
    assert all(0 <= n <= 40 * 8 for n in (result["containers_start"], result["containers_end"]))
    assert result["service_cpu_wait_per_s"] >= 0 and len(result["load_avg"]) == 2
    assert result["service_rounds"] > 0 and result["service_gc_collections"] >= 1
    assert result["commit"] == "heartbeat"


def test_bench_service_rejects_bad_sizes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pyscheduler", "bench", "service", "--nodes", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--nodes must be > 0" in out.stderr
