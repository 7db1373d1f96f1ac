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
    assert result["commit"] == "plan"  # the shim's default (yarn.scheduler.dollymp.commit)


def test_bench_service_rejects_bad_sizes() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "pyscheduler", "bench", "service", "--nodes", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2 and "--nodes must be > 0" in out.stderr


def _find_max(*extra: str) -> dict[str, object]:
    args = "bench service --nodes 40 --apps 4 --seconds 1.5 --warmup 0.5 --tasks 2 4 --task-seconds 0.2 0.5"
    out = subprocess.run(
        [sys.executable, "-m", "pyscheduler", *args.split(), "--find-max", *extra],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    found: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])["find_max"]
    return found


def test_find_max_raises_the_rate_until_a_step_does_not_hold() -> None:
    """Each step offers 1.5x the last (from --rate, here 80 node updates/s at 40 nodes); with a bar of
    10 s on round p99 a 40-node service holds both steps; with a bar no round can meet, none is held
    and the failure names the bar."""
    held = _find_max("--rate", "80", "--max-steps", "2", "--p99-ms", "10000")
    steps = held["steps"]
    assert isinstance(steps, list) and [s["target_rate"] for s in steps] == [80.0, 120.0]
    assert all(s["held"] for s in steps) and held["held_rate"] == 120.0 and held["first_failure"] is None
    none = _find_max("--rate", "80", "--max-steps", "3", "--p99-ms", "0.001")
    assert none["held_rate"] is None and len(none["steps"]) == 1  # stops at the first step not held
    assert "round p99" in str(none["first_failure"]) and "0.001 ms" in str(none["first_failure"])
