"""Workloads of the live-mechanism simulator (pyscheduler/sim/live/workload.py)."""

from __future__ import annotations

from pathlib import Path

from pyscheduler.deploy import benchmix
from pyscheduler.deploy.draws import attempt_ms
from pyscheduler.sim.live.workload import light, loaded, small_mapreduce, swim_fb2010


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


def test_the_benchmarks_mixes_draw_what_its_straggler_job_sleeps() -> None:
    """A bench mix's copy n of a task runs what StragglerJob draws for that task's attempt n at the seed
    (deploy/draws.py, pinned against the Java job), with the benchmark's shape and cap."""
    for seed in (1, 2):
        wl = light(seed)
        assert (wl.alpha, wl.cap) == (benchmix.STRAGGLER_SHAPE, benchmix.STRAGGLER_CAP)
        name = benchmix.mix("light")[3].name
        assert wl.jobs[3].name == name
        for nth in range(3):
            want_map = attempt_ms(name, f"m2.{nth}", benchmix.BASE_MS["light"], 1.5, 20.0, seed) / 1000.0
            want_reduce = attempt_ms(name, f"r0.{nth}", benchmix.BASE_MS["light"] // 2, 1.5, 20.0, seed)
            assert wl.run_s(3, 0, 2, nth) == want_map
            assert wl.run_s(3, 1, 0, nth) == want_reduce / 1000.0
    assert light(1).run_s(3, 0, 2, 0) != light(2).run_s(3, 0, 2, 0)
