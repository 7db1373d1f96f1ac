"""Workloads of the live-mechanism simulator (pyscheduler/sim/live/workload.py)."""

from __future__ import annotations

from pathlib import Path

from pyscheduler.deploy import benchmix
from pyscheduler.sim.live.workload import loaded, small_mapreduce, swim_fb2010


def test_run_times_are_each_copys_own_draw() -> None:
    wl = small_mapreduce(3)
    assert wl.run_s(0, 0, 1, 0) == small_mapreduce(3).run_s(0, 0, 1, 0)  # the same copy: the same time
    times = [wl.run_s(0, 0, 1, nth) for nth in range(20)]
    base = wl.jobs[0].phases[0].base_s
    assert len(set(times)) == 20  # clones draw afresh
    assert all(base <= t <= base * wl.cap for t in times)


def test_the_benchmarks_loaded_mix() -> None:
    wl = loaded(1)
    mix = benchmix.mix("loaded")
    assert [j.phases[0].tasks for j in wl.jobs] == [j.maps for j in mix]
    assert [j.submit_s for j in wl.jobs] == [j.delay_s for j in mix]
    assert wl.node_vcores == benchmix.NM_VCORES["loaded"]


def test_the_swim_slice(traces: Path) -> None:
    wl = swim_fb2010(1, traces=traces)
    assert len(wl.jobs) == 16 and wl.jobs[0].submit_s == 0.0
    assert [j.submit_s for j in wl.jobs] == sorted(j.submit_s for j in wl.jobs)
    assert max(ph.tasks for j in wl.jobs for ph in j.phases) == 24  # its large jobs, cut
    for j in wl.jobs:
        assert j.phases[0].phase_id == "map"
        assert all(ph.parents == ("map",) for ph in j.phases[1:])
