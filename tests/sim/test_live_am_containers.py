"""AM containers in the live-mechanism simulator (sim/live/cluster.py): each application's AM asks for
its own container first, acts only once it has started, and holds it until its job ends."""

from __future__ import annotations

import dataclasses

import pytest

from pyscheduler.sim.live.appmaster import CLUSTER_TS
from pyscheduler.sim.live.run import LiveOptions, run
from pyscheduler.sim.live.workload import AM_STARTUP_S, JobSpec, PhaseSpec, Workload, light, loaded
from pyscheduler.wire import pb


def _one_job(am_mem_mb: int) -> Workload:
    job = JobSpec(1, "one", 0.0, (PhaseSpec("map", 2, 10.0, 20),))
    return Workload(
        "one",
        1,
        (job,),
        nodes=1,
        node_mem_mb=2048,
        node_vcores=2,
        startup_s=1.0,
        cap=1.0,
        am_mem_mb=am_mem_mb,
        am_startup_s=3.0,
    )


def test_an_am_container_takes_a_slot_the_tasks_cannot_use() -> None:
    # 2 slots, 2 maps of 10 s (+1 s start-up): side by side without an AM container; one after the
    # other behind the AM's own container, which starts first and whose AM asks 3 s later
    free = run(_one_job(0))
    held = run(_one_job(1024))
    starts = sorted(t for t, *_ in held.containers)
    assert len(starts) == 2 and starts[0] >= 3.0 and starts[1] >= starts[0] + 11.0
    together = sorted(t for t, *_ in free.containers)
    assert len(together) == 2 and together[0] == together[1] < 3.0
    assert (
        held.flowtimes[f"application_{CLUSTER_TS}_0001"]
        > free.flowtimes[f"application_{CLUSTER_TS}_0001"] + 11
    )
    am = [p for p in held.placements if p[6] == pb.REASON_AM_CONTAINER]
    assert len(am) == 1 and am[0][2] == 0  # the RM's AM ask, at priority 0
    # the AM container is in no copy's container-seconds: two 11 s copies
    assert sum(held.held_s.values()) == pytest.approx(22.0, abs=1.0)


def test_the_benchmarks_mixes_run_their_ams_in_containers() -> None:
    for wl in (light(1), loaded(1)):
        assert wl.am_mem_mb == 1024 and wl.am_startup_s == AM_STARTUP_S
    rec = run(loaded(1))
    am = {p[1] for p in rec.placements if p[6] == pb.REASON_AM_CONTAINER}
    assert len(am) == len(loaded(1).jobs) == len(rec.flowtimes)
    first = {}
    for t, _cid, attempt_id, *_ in rec.containers:
        n = int(attempt_id.split("_")[2])
        first.setdefault(n, t)
    for job in loaded(1).jobs:
        assert first[job.n] >= job.submit_s + loaded(1).startup_fixed_s + AM_STARTUP_S


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"draws": "pareto"}, "Workload.draws"),
        ({"am_mem_mb": 99999}, "Workload.am_mem_mb"),
        ({"am_startup_s": -1.0}, "Workload.am_startup_s"),
    ],
)
def test_a_workloads_bad_field_is_refused_by_name(change: dict[str, object], field: str) -> None:
    with pytest.raises(ValueError, match=field):
        dataclasses.replace(_one_job(0), **change)  # type: ignore[arg-type]


# The paper's DollyMP, which grants a cold service no clone: both maps start in one heartbeat, alone
PAPER = LiveOptions(service={"policy.name": "dollymp"})


def _pair(cores: float, fixed_s: float = 0.0) -> Workload:
    # 2 maps of 10 s work on 4 slots, both placed in the same heartbeat; start-up 2 s (CPU-seconds)
    job = JobSpec(1, "pair", 0.0, (PhaseSpec("map", 2, 10.0, 20),))
    wl = Workload("pair", 1, (job,), nodes=1, node_mem_mb=4096, node_vcores=4, startup_s=2.0, cap=1.0)
    return dataclasses.replace(wl, host_cores=cores, startup_fixed_s=fixed_s)


def _span(wl: Workload) -> float:
    rec = run(wl, PAPER)
    starts = {t for t, *_ in rec.containers}
    assert len(starts) == 1
    return rec.flowtimes[f"application_{CLUSTER_TS}_0001"] - starts.pop()


def test_a_start_ups_fixed_wait_comes_before_its_shared_cpu() -> None:
    # the 3 s wait takes no CPU: on one core the two start-ups still share 4 s, after it; flat, it adds
    assert _span(_pair(1.0, 3.0)) == pytest.approx(_span(_pair(1.0)) + 3.0, abs=0.01)
    assert _span(_pair(0.0, 3.0)) == pytest.approx(_span(_pair(0.0)) + 3.0, abs=0.01)
    with pytest.raises(ValueError, match=r"Workload\.startup_fixed_s"):
        _pair(1.0, -1.0)


def test_start_ups_share_the_hosts_cores() -> None:
    # flat: each map's work begins 2 s after its container, the job ends 12 s after both started; on one
    # core the two start-ups share it, 4 s each; on 2 cores each has its own, as flat
    ends = {}
    for cores in (0.0, 1.0, 2.0):
        rec = run(_pair(cores), PAPER)
        starts = {t for t, *_ in rec.containers}
        assert len(starts) == 1
        ends[cores] = rec.flowtimes[f"application_{CLUSTER_TS}_0001"] - starts.pop()
    assert ends[0.0] == pytest.approx(12.0, abs=1.0)
    assert ends[1.0] == pytest.approx(14.0, abs=1.0)
    assert ends[2.0] == pytest.approx(ends[0.0], abs=0.01)
    with pytest.raises(ValueError, match=r"Workload\.host_cores"):
        _pair(-1.0)
