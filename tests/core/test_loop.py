"""The decision loop with an injected clock, the Dolly policy's budget, delay assignment in a round,
and `dollymp bench engine` run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest

from pyscheduler.core import DecisionLoop, ManualClock
from pyscheduler.objects import DecisionKind
from pyscheduler.policies import Decisions, Snapshot, get_policy

from .helpers import cluster, job


def test_loop_uses_clock_filters_jobs_and_feeds_sinks() -> None:
    clock = ManualClock(5.0)
    seen: list[Decisions] = []
    loop = DecisionLoop(get_policy("dollymp"), clock, sinks=[seen.append])
    c = cluster((8, 8))
    now = job("now", 1.0, ("m", 2, (1, 1), 5, 1, ()))
    later = job("later", 50.0, ("m", 2, (1, 1), 5, 1, ()))
    done = job("done", 0.0, ("m", 1, (1, 1), 5, 1, ()))
    done.phases[0].start_copy(0)
    done.phases[0].end_copy(0, succeeded=True)
    d = loop.round(c, [now, later, done])
    assert d.time == 5.0 and {p.job_id for p in d.placements} == {"now"}
    assert seen == [d] and loop.stats.rounds == 1 and loop.stats.placements == d.num_placements
    clock.advance(100.0)
    d2 = loop.round(c, [now, later, done])
    assert {p.job_id for p in d2.placements} == {"now", "later"} and d2.time == 105.0
    with pytest.raises(ValueError, match="backwards"):
        clock.set(1.0)
    # the same policy called directly on the same snapshot decides the same
    direct = get_policy("dollymp").decide(Snapshot(105.0, c, [now, later]))
    assert [(p.job_id, p.task_index, p.node_id, p.is_clone) for p in direct.placements] == [
        (p.job_id, p.task_index, p.node_id, p.is_clone) for p in d2.placements
    ]


def test_dolly_budget_admission() -> None:
    c = cluster((16, 16), (16, 16))
    jobs = [job(f"j{i}", float(i), ("m", 4, (1, 1), 10, 10, ())) for i in range(3)]
    tight = get_policy("dolly", beta=0.15).decide(Snapshot(0.0, c, jobs))
    grants = {g.job_id: (g.clones, g.reason) for g in tight.clone_grants}
    # alpha = 1 + sqrt 2 (CV 1), p = 2^-(alpha+1) = 0.0937; n = 4, eps = 0.05:
    # c = ceil(log(1 - 0.95^(1/4)) / log p) = ceil(1.84) = 2 copies -> 1 clone per task, cost 4 * 1/32 = 0.125
    assert grants["j0"] == (1, "dolly_admitted")
    assert grants["j1"] == (0, "dolly_budget_exhausted") and grants["j2"][1] == "dolly_budget_exhausted"
    assert {p.job_id for p in tight.placements if p.is_clone} == {"j0"}
    loose = get_policy("dolly", beta=1.0).decide(Snapshot(0.0, c, jobs))
    assert {p.job_id for p in loose.placements if p.is_clone} == {"j0", "j1", "j2"}
    ceiling = get_policy("dolly", beta=1.0, tau=0.3).decide(Snapshot(0.0, c, jobs))
    assert "dolly_utilization_ceiling" in {g.reason for g in ceiling.clone_grants}


def test_downstream_clones_may_outnumber_upstream_copies_and_get_omega() -> None:
    """DollyMP Sec. 5.2: with fewer upstream copies than downstream ones, the first finished upstream copy
    feeds every downstream copy; no limit as Dolly 3.2's (that one is clone_rule "dolly"'s)."""
    c = cluster((32, 32))
    j = job("j", 0.0, ("map", 2, (1, 1), 10, 8, ()), ("red", 2, (1, 1), 10, 8, ("map",)))
    m = j.phase("map")
    m.start_copy(0)
    m.start_copy(0)  # task 0 ran with one clone, task 1 without
    m.start_copy(1)
    for t in (0, 1):
        m.end_copy(t, succeeded=True)
    d = get_policy("dollymp", clone_rule="idle").decide(Snapshot(0.0, c, [j]))
    assert sum(p.is_clone for p in d.placements) == 4  # two clones per reduce task
    assert [(g.phase_id, g.clones, g.reason) for g in d.clone_grants] == [
        ("red", 2, "algorithm2_idle_capacity")
    ]
    assert len(d.omegas) == 1 and d.omegas[0].omega >= 0 and d.omegas[0].reason == "delay_assignment"
    kinds = {r.kind for r in d.to_records()}
    assert {DecisionKind.OMEGA, DecisionKind.CLONE_GRANT, DecisionKind.PLACEMENT} <= kinds


def test_bench_engine_cli_prints_json() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyscheduler",
            "bench",
            "engine",
            "--jobs",
            "30",
            "--nodes",
            "60",
            "--rounds",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result = json.loads(out.stdout)
    assert set(result) >= {"jobs", "nodes", "rounds", "median_ms", "p99_ms", "peak_rss_mb"}
    assert result["jobs"] == 30 and result["nodes"] == 60 and result["rounds"] == 3
    assert 0 < result["median_ms"] <= result["p99_ms"] and result["peak_rss_mb"] > 0
    bad = subprocess.run(
        [sys.executable, "-m", "pyscheduler", "bench", "engine", "--jobs", "0"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad.returncode != 0 and "--jobs" in bad.stderr
    slow = subprocess.run(
        [
            sys.executable,
            "-m",
            "pyscheduler",
            "bench",
            "engine",
            "--jobs",
            "10",
            "--nodes",
            "20",
            "--rounds",
            "2",
            "--max-cpu-median-ms",
            "0",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert slow.returncode == 1 and "threshold exceeded: cpu_median_ms" in slow.stderr


def test_losers_killed_except_upstream_ones_left_to_delay_assignment() -> None:
    from pyscheduler.objects.job import Attempt

    c = cluster((8, 8))
    j = job("j", 0.0, ("map", 1, (1, 1), 5, 1, ()), ("red", 1, (1, 1), 5, 1, ("map",)))
    m, r = j.phase("map"), j.phase("red")
    m.start_copy(0)
    m.start_copy(0)
    m.end_copy(0, succeeded=True)
    r.start_copy(0)
    r.start_copy(0)
    r.end_copy(0, succeeded=True)
    attempts = [
        Attempt("m0b", "j", "map", 0, "n0", True, 0.0),
        Attempt("r0b", "j", "red", 0, "n0", True, 1.0),
    ]
    snap = Snapshot(2.0, c, [j], attempts=attempts)
    assert [k.attempt_id for k in get_policy("dollymp").decide(snap).kills] == ["r0b"]
    assert [k.attempt_id for k in get_policy("fcfs").decide(snap).kills] == ["m0b", "r0b"]


def test_priorities_recomputed_only_when_a_job_arrives() -> None:
    c = cluster((64, 64))
    a = job("a", 0.0, ("m", 4, (1, 1), 10, 1, ()))
    b = job("b", 1.0, ("m", 4, (1, 1), 200, 1, ()), ("r", 1, (1, 1), 10, 1, ("m",)))
    pol = get_policy("dollymp")
    first = {p.job_id: p.priority for p in pol.decide(Snapshot(0.0, c, [a, b])).priorities}
    for t in range(4):  # b's long phase finishes: e_b(t) drops from 212 to 11, but no job arrived
        b.phases[0].start_copy(t)
        b.phases[0].end_copy(t, succeeded=True)
    same = {p.job_id: p.priority for p in pol.decide(Snapshot(1.0, c, [a, b])).priorities}
    assert same == first
    fresh = {
        p.job_id: p.priority
        for p in get_policy("dollymp", recompute="every_round").decide(Snapshot(1.0, c, [a, b])).priorities
    }
    assert fresh["b"] < first["b"]
    new = job("new", 2.0, ("m", 1, (1, 1), 1, 0, ()))
    arrived = {p.job_id: p.priority for p in pol.decide(Snapshot(2.0, c, [a, b, new])).priorities}
    assert arrived["b"] == fresh["b"]  # an arrival triggers Algorithm 1 again


def test_max_clones_three_and_corollary_rule() -> None:
    c = cluster((64, 64))
    j = job("j", 0.0, ("m", 2, (1, 1), 10, 10, ()))
    d3 = get_policy("dollymp", max_clones=3, clone_rule="idle").decide(Snapshot(0.0, c, [j]))
    assert sorted(Counter(p.task_index for p in d3.placements).values()) == [4, 4]
    # paper (Corollary 4.1), e = theta + sigma: e = 1 in class 1 meets 2^0 h(1) >= 1 without clones;
    # e = 6 in class 3 needs h(r) >= 1.5, which alpha = 1 + sqrt 2 never reaches (h(3) = 1.47): cloning
    # cannot move it a class down, no clones
    tiny = job("tiny", 0.0, ("m", 2, (1, 1), 1.0, 0.0, ()))
    dc = get_policy("dollymp", sigma_factor=1.0).decide(Snapshot(0.0, c, [tiny]))
    assert not any(p.is_clone for p in dc.placements)
    assert [(g.clones, g.reason) for g in dc.clone_grants] == [(0, "corollary_4_1_not_packed")]
    wide = job("wide", 0.0, ("m", 2, (1, 1), 3.0, 3.0, ()))
    dw = get_policy("dollymp", sigma_factor=1.0).decide(Snapshot(0.0, c, [wide]))
    assert [p.priority for p in dw.priorities] == [3]
    assert not any(p.is_clone for p in dw.placements)
    assert [(g.clones, g.reason) for g in dw.clone_grants] == [(0, "corollary_4_1_not_packed")]


def test_cached_job_table_sees_refreshed_statistics() -> None:
    c = cluster((64, 64))
    a = job("a", 0.0, ("m", 4, (1, 1), 10, 1, ()))
    b = job("b", 1.0, ("m", 4, (1, 1), 20, 1, ()))
    pol = get_policy("dollymp", recompute="every_round")

    def ranks(d: Decisions) -> list[str]:
        return [p.job_id for p in sorted(d.priorities, key=lambda p: p.rank)]

    assert ranks(pol.decide(Snapshot(0.0, c, [a, b]))) == ["a", "b"]
    a.phases[0].mean = 400.0  # the driver refreshed a's statistics; same Job objects, cached table
    assert ranks(pol.decide(Snapshot(1.0, c, [a, b]))) == ["b", "a"]
