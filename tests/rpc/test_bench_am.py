"""`dollymp bench am` runs end to end on a tiny cluster and prints the figures it promises (not timed: no
bar on any latency), and refuses a bad size naming its flag."""

from __future__ import annotations

import json
import subprocess
import sys

from rpc_harness import REPO


def test_bench_am_prints_its_figures() -> None:
    args = "bench am --nodes 50 --apps 5 --tasks 100 --am-containers 20 --seconds 3 --warmup 1 --repeats 1"
    out = subprocess.run(
        [sys.executable, "-m", "pyscheduler", *args.split()],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert (result["tasks"], result["nodes"], result["apps"], result["repeats"]) == (100, 50, 5, 1)
    # the AM's calls were answered, each one way, and timed client side
    assert result["am_calls"] > 0 and result["am_attempts_calls"] > 0
    assert result["am_fresh"] + result["am_deferred"] + result["am_refused"] == result["am_calls"]
    assert result["am_fresh"] + result["am_deferred"] > 0, result[
        "am_reasons"
    ]  # (a loaded host may time one out)
    for key in ("am_plan", "am_report"):
        assert 0 < result[f"{key}_p50_ms"] <= result[f"{key}_p99_ms"], key
    # the cluster's rounds ran in both phases, measured by the service and by the pretend RM
    assert result["rounds_quiet"] > 0 and result["rounds_with_am"] > 0
    for phase in ("quiet", "with_am"):
        for key in ("round_p99_ms", "round_cpu_p99_ms", "batch_p99_ms"):
            assert result[f"{key}_{phase}"] > 0, (key, phase)
    spread = result["spread"]["am_plan_p99_ms"]
    assert spread["min"] <= spread["median"] <= spread["max"]


def test_bench_am_rejects_bad_sizes() -> None:
    for flag, value in (("--tasks", "0"), ("--am-poll", "0"), ("--repeats", "21")):
        out = subprocess.run(
            [sys.executable, "-m", "pyscheduler", "bench", "am", flag, value],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert out.returncode == 2 and f"{flag} must be in" in out.stderr, (flag, out.stderr)
