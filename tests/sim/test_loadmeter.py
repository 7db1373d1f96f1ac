"""Measured load (sim/loadmeter.py): utilisation integrated exactly over the arrival span, the share of
rounds that leave an original waiting for room, and both in the `--json` record and the table."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from pyscheduler.cli import main
from pyscheduler.policies import get_policy
from pyscheduler.sim.engine import SimConfig, Simulation
from pyscheduler.sim.loadmeter import LoadMeter
from pyscheduler.sim.metrics import RunMetrics
from pyscheduler.sim.runner import draw_bases, parse_policy
from pyscheduler.sim.straggler import StragglerSpec
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec, PhaseSpec

NONE = StragglerSpec("none")
ONE_NODE = ClusterSpec((NodeSpec(4, 4096, 1.0),))


def _job(jid: str, arrival: float, tasks: int, cpu: float, mem: float, secs: float) -> JobSpec:
    return JobSpec(jid, arrival, (PhaseSpec("map", tasks, cpu, mem, secs, 0.0),))


def _run(jobs: list[JobSpec], cluster: ClusterSpec, policy: str = "fifo", **cfg: object) -> RunMetrics:
    config = SimConfig(**cfg)  # type: ignore[arg-type]
    _label, name, opts = parse_policy(policy)
    return Simulation(jobs, cluster, get_policy(name, **opts), config, draw_bases(jobs, config)).run()


def test_utilisation_of_a_hand_built_run_is_exact() -> None:
    # one node of 4 cores and 4096 MB; no stragglers, so each task runs its mean:
    #   a: 2 cores, 1024 MB, [0, 10)    b: 1 core, 2048 MB, [5, 25)    c arrives at 40 and ends the span
    # dominant utilisation: [0,5) max(2/4, 1/4) = 0.5; [5,10) max(3/4, 3/4) = 0.75; [10,25) max(1/4, 2/4)
    # = 0.5; [25,40) 0. Integral 2.5 + 3.75 + 7.5 = 13.75 over 40 s. (The sum of the copies' own dominant
    # shares would give 1.0 on [5,10): the measure is the cluster's, max over dimensions of the sums.)
    jobs = [
        _job("a", 0.0, 1, 2.0, 1024.0, 10.0),
        _job("b", 5.0, 1, 1.0, 2048.0, 20.0),
        _job("c", 40.0, 1, 1.0, 1024.0, 3.0),
    ]
    for policy in ("fifo", "tetris", "dollymp0"):
        m = _run(jobs, ONE_NODE, policy, straggler=NONE, tick=1.0)
        assert m.jobs_completed == 3
        assert m.utilisation == pytest.approx(13.75 / 40, abs=1e-12)
        # per resource: cpu 2x10 + 1x20 = 40 core-seconds of 4 x 40; memory (1024 x 10 + 2048 x 20) of
        # 4096 x 40 (each below the dominant's, which takes the larger at each moment)
        per = m.extra["utilisation_by_resource"]
        assert per["cpu"] == pytest.approx(40 / 160, abs=1e-12)
        assert per["mem"] == pytest.approx((10240 + 40960) / (4096 * 40), abs=1e-12)
        assert per["dominant"] == m.utilisation


def test_killed_copies_count_until_they_are_killed() -> None:
    meter = LoadMeter([0.0, 20.0], np.array([[4.0, 4096.0]]), np.array([4.0, 4096.0]))
    meter.started(0.0, [10.0, 30.0], [2.0, 1.0], [1024.0, 2048.0])
    meter.cut_short(5.0, 30.0, 1.0, 2048.0)  # the second copy killed at 5, not ended at 30
    # [0,5) max(3/4, 3/4) = 0.75; [5,10) max(2/4, 1/4) = 0.5; [10,20) 0
    assert meter.utilisation(100.0) == pytest.approx((3.75 + 2.5) / 20)
    assert meter.utilisation(10.0) == pytest.approx(6.25 / 10)  # the run stopped at 10
    assert math.isnan(LoadMeter([3.0], np.ones((1, 2)), np.ones(2)).utilisation(10.0))  # no span


def test_utilisation_matches_resource_seconds_with_clones_and_kills() -> None:
    # every copy is CPU-dominant, so the cluster's dominant utilisation is the sum of the copies' dominant
    # shares: over a span that outlasts the run its integral is the run's resource-seconds (winners and
    # the clones that lost, killed or not). The last job can never run (no node holds 64 cores): it only
    # marks the end of the span, and it is no original waiting for room.
    cluster = ClusterSpec(tuple([NodeSpec(8, 65536, 1.0)] * 3 + [NodeSpec(4, 32768, 0.5)] * 2))
    jobs = [_job(f"j{i}", 3.0 * i, 1 + i % 6, 1.0, 1024.0, 10.0 + i % 4) for i in range(30)]
    jobs.append(_job("never", 5000.0, 1, 64.0, 1024.0, 1.0))
    m = _run(jobs, cluster, "dollymp2", straggler=StragglerSpec("pareto", 1.5, cap=20.0), seed=4)
    assert m.clones_launched > 0 and m.wasted_resource_s > 0 and m.jobs_unfinished == 1
    assert m.utilisation * 5000.0 == pytest.approx(m.resource_s, rel=1e-9)


def test_wait_rounds_zero_on_a_roomy_cluster_and_positive_when_tasks_queue() -> None:
    spaced = [_job(f"j{i}", 20.0 * i, 2, 1.0, 1024.0, 5.0) for i in range(10)]
    roomy = _run(spaced, ONE_NODE, straggler=NONE)
    assert roomy.wait_rounds == 0.0 and roomy.extra["span_rounds"] > 0
    # twelve one-core tasks at once on four cores: three waves of 10 s, the span runs to 25 s
    crowded = [_job("big", 0.0, 12, 1.0, 256.0, 10.0), _job("late", 25.0, 1, 1.0, 256.0, 1.0)]
    m = _run(crowded, ONE_NODE, straggler=NONE, tick=1.0)
    assert 0.0 < m.wait_rounds <= 1.0
    assert m.utilisation == pytest.approx(1.0)  # all four cores busy from 0 to 25 s
    # a task that fits no node's capacity is not an original waiting for room
    never = [_job("never", 0.0, 1, 8.0, 256.0, 1.0), _job("a", 1.0, 1, 1.0, 256.0, 1.0)]
    never.append(_job("b", 30.0, 1, 1.0, 256.0, 1.0))
    assert _run(never, ONE_NODE, straggler=NONE).wait_rounds == 0.0


def _workload(path: Path, n: int) -> None:
    lines = [
        json.dumps(
            {
                "id": f"j{i}",
                "arrival": 2.0 * i,
                "phases": [
                    {"id": "map", "tasks": 1 + i % 5, "cpu": 1, "mem_mb": 1024, "mean": 8.0, "sd": 2.0}
                ],
            }
        )
        for i in range(n)
    ]
    path.write_text("\n".join(lines) + "\n")


def test_json_and_table_carry_the_measured_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    wl, cl, out = tmp_path / "w.jsonl", tmp_path / "c.json", tmp_path / "r.json"
    _workload(wl, 40)
    cl.write_text('{"nodes": [{"count": 4, "cpu": 8, "mem_mb": 16384, "speed": 1.0}]}')
    args = ["simulate", "--workload", str(wl), "--cluster", str(cl), "--policies", "fifo,dollymp2"]
    assert main([*args, "--every", "2", "--cluster-scale", "0.5", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "kept 20" in text and "thinned (--every 2): 20" in text and "cluster 4 -> 2 nodes" in text
    head = next(line for line in text.splitlines() if line.startswith("policy"))
    assert " util" in head and "wait%" in head and " cpu" in head and " mem" in head
    data = json.loads(out.read_text())
    assert data["settings"]["jobs"] == 20 and data["settings"]["nodes"] == 2
    for rec in data["policies"].values():
        assert 0.0 < rec["utilisation"] <= 1.0 and 0.0 <= rec["wait_rounds"] <= 1.0
        per = rec["utilisation_by_resource"]
        assert max(per["cpu"], per["mem"]) <= per["dominant"] == rec["utilisation"]
        assert rec["span_rounds"] > 0
    assert main([*args, "--every", "0", "--quiet"]) == 2
    assert "--every must be an integer >= 1" in capsys.readouterr().err
