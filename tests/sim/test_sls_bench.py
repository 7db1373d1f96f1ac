"""`dollymp bench sls`'s figures (pyscheduler/bench/sls.py): the JSON keys, ratios, medians and spread."""

from __future__ import annotations

from typing import Any

import pytest

from pyscheduler.bench.sls import combine, parse_shim_conf, summarise

KEYS = (
    "nodes",
    "jobs",
    "utilisation",
    "capacity_avg_s",
    "fair_avg_s",
    "dollymp_avg_s",
    "ratio_capacity",
    "ratio_fair",
    "predicted_ratio_capacity",
    "predicted_ratio_fair",
    "round_p99_ms",
    "stale_frac",
    "heartbeat_p99_added_ms",
)


def _run(flowtimes: list[float], p99: float, **extra: Any) -> dict[str, Any]:
    records = [
        {"flowtime_s": f, "tasks": 3 if i % 2 else 40, "clones": 1, "clones_won": i % 2, "killed": 1}
        for i, f in enumerate(flowtimes)
    ]
    run = {
        "records": records,
        "jobs_finished": len(records),
        "utilisation": {"vcores": 0.8, "memory": 0.4},
        "node_update_p99_ms": p99,
        "shim_proposals": 0,
        "shim_stale": 0,
        "wall_s": 10.0,
    }
    run.update(extra)
    return run


def _summary(scale: float) -> dict[str, Any]:
    runs = {
        "capacity": _run([10 * scale, 30 * scale], 0.5),
        "fair": _run([20 * scale, 20 * scale], 0.0),
        "dollymp": _run(
            [7 * scale, 13 * scale], 0.8, shim_proposals=200, shim_stale=2, service={"round_p99_ms": 12.5}
        ),
    }
    return summarise(runs, {"capacity": 20.0, "fair": 25.0, "dollymp": 15.0}, nodes=1000, jobs=2)


def test_one_seed_has_the_issue_keys_and_ratios() -> None:
    s = _summary(1.0)
    assert set(KEYS) <= set(s)
    assert (s["capacity_avg_s"], s["fair_avg_s"], s["dollymp_avg_s"]) == (20.0, 20.0, 10.0)
    assert s["ratio_capacity"] == 0.5 and s["ratio_fair"] == 0.5
    assert s["predicted_ratio_capacity"] == 0.75 and s["predicted_ratio_fair"] == 0.6
    assert s["stale_frac"] == 0.01 and s["round_p99_ms"] == 12.5
    assert s["heartbeat_p99_added_ms"] == pytest.approx(0.3)
    assert s["small_jobs_avg_s"]["dollymp"] == 13.0
    assert s["extra_copies"]["dollymp"] == {"launched": 2, "won": 1, "killed": 2}


def test_seeds_give_medians_and_spread() -> None:
    out = combine([_summary(1.0), _summary(2.0), _summary(4.0)], [1, 2, 3])
    assert out["seeds"] == [1, 2, 3]
    assert out["capacity_avg_s"] == 40.0 and out["spread"]["capacity_avg_s"] == [20.0, 80.0]
    assert out["ratio_capacity"] == 0.5 and out["spread"]["ratio_capacity"] == [0.5, 0.5]
    assert out["jobs_finished"] == {"capacity": 2, "fair": 2, "dollymp": 2}


def test_shim_conf_items_are_checked_and_kept_in_order() -> None:
    assert parse_shim_conf(["commit=heartbeat", "tick-ms=50"]) == (("commit", "heartbeat"), ("tick-ms", "50"))
    assert parse_shim_conf([]) == ()
    for bad in ("commit", "=plan", "Commit=plan", "x" * 65 + "=1", "commit=a;b", "commit=" + "v" * 257):
        with pytest.raises(SystemExit, match="--shim-conf"):
            parse_shim_conf([bad])
