"""Carbyne (OSDI'16): altruism donates what a job does not need now to keep its completion time."""

from __future__ import annotations

import numpy as np
import pytest

from pyscheduler.objects import ClusterState, Job, Node, Phase, Resources
from pyscheduler.policies import Snapshot, get_policy, policy_names
from pyscheduler.sim.engine import SimConfig, Simulation
from pyscheduler.sim.runner import compare, draw_bases, parse_policy
from pyscheduler.sim.straggler import StragglerSpec
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec, PhaseSpec

NONE = StragglerSpec("none")


def _flowtimes(jobs: list[JobSpec], cluster: ClusterSpec, policy: str) -> dict[str, float]:
    config = SimConfig(straggler=NONE, tick=0.5)
    _label, name, opts = parse_policy(policy)
    sim = Simulation(jobs, cluster, get_policy(name, **opts), config, draw_bases(jobs, config))
    m = sim.run()
    assert m.jobs_completed == len(jobs)
    return {j.id: float(f) for j, f in zip(jobs, m.flowtimes, strict=True)}


def test_long_jobs_leftover_goes_to_the_short_job() -> None:
    # 4 slots; DRF gives each job 2. The long job (5 x 10 s) needs 3 waves with 2 slots and finishes at 30 s
    # whatever it does first, so its as-late-as-possible plan starts 1 task now and donates 1 slot; the
    # short job (3 x 10 s) takes the leftover by SRTF and finishes in one wave instead of two.
    cluster = ClusterSpec((NodeSpec(4, 4096, 1.0),))
    jobs = [
        JobSpec("long", 0.0, (PhaseSpec("m", 5, 1.0, 512.0, 10.0, 0.0),)),
        JobSpec("short", 0.0, (PhaseSpec("m", 3, 1.0, 512.0, 10.0, 0.0),)),
    ]
    drf = _flowtimes(jobs, cluster, "drf(batch=1)")
    carbyne = _flowtimes(jobs, cluster, "carbyne")
    selfish = _flowtimes(jobs, cluster, "carbyne(altruism=0)")  # the altruistic step removed
    assert carbyne["short"] == pytest.approx(10.0) and drf["short"] == pytest.approx(20.0)
    assert carbyne["long"] == pytest.approx(drf["long"]) == pytest.approx(20.0)
    assert selfish["short"] == pytest.approx(20.0)


def _dag_job(jid: str) -> Job:
    # a long branch (4 x 30 s) and a short one (2 x 10 s) joining: the short branch has 50 s of slack
    return Job(
        jid,
        0.0,
        [
            Phase("long", 4, Resources.of(1, 1), 30.0, 0.0),
            Phase("short", 2, Resources.of(1, 1), 10.0, 0.0),
            Phase("join", 1, Resources.of(1, 1), 10.0, 0.0, ("long", "short")),
        ],
    )


def test_dag_branch_with_slack_waits_and_wakes_the_scheduler() -> None:
    c = ClusterState.from_nodes([Node("n0", Resources.of(4, 4))], dims=("cpu", "mem"))
    other = Job("other", 0.0, [Phase("m", 6, Resources.of(1, 1), 10.0, 0.0)])
    d = get_policy("carbyne").decide(Snapshot(0.0, c, [_dag_job("dag"), other]))
    got: dict[tuple[str, str], int] = {}
    for p in d.placements:
        got[(p.job_id, p.phase_id)] = got.get((p.job_id, p.phase_id), 0) + 1
    # fair share 2 slots each: the critical branch needs 2 waves of 2, the short branch can start at 50 s
    assert got == {("dag", "long"): 2, ("other", "m"): 2}
    assert d.wake_at == pytest.approx(50.0)
    alone = get_policy("carbyne").decide(Snapshot(0.0, c, [_dag_job("dag")]))
    assert len(alone.placements) == 4  # no contention: everything that fits runs (work-conserving)


def test_carbyne_is_registered_and_runs_a_workload_to_completion() -> None:
    assert "carbyne" in policy_names()
    rng = np.random.default_rng(11)
    cluster = ClusterSpec(tuple([NodeSpec(8, 16384, 1.0)] * 3 + [NodeSpec(4, 8192, 0.5)] * 2))
    jobs = []
    for i in range(30):
        phases = [PhaseSpec("map", int(rng.integers(1, 25)), 1.0, 1024.0, float(rng.uniform(2, 30)), 0.0)]
        if rng.random() < 0.6:
            phases.append(PhaseSpec("reduce", int(rng.integers(1, 5)), 1.0, 2048.0, 10.0, 0.0, ("map",)))
        jobs.append(JobSpec(f"j{i}", float(rng.uniform(0, 150)), tuple(phases)))
    jobs.sort(key=lambda j: j.arrival)
    cmp = compare(jobs, cluster, ["carbyne", "drf"], SimConfig(seed=4))
    for name, m in cmp.results.items():
        assert m.jobs_completed == len(jobs), name
        assert m.avg_flowtime >= cmp.bound.avg, name
        assert m.clones_launched == 0, name
