"""Hadoop's stock speculation in the live simulator's AM (sim/live/speculator.py, AppMaster.speculate)."""

from __future__ import annotations

from pyscheduler.sim.live import speculator
from pyscheduler.sim.live.run import LiveOptions, run
from pyscheduler.sim.live.speculator import TaskView, allowed, speculate
from pyscheduler.sim.live.workload import JobSpec, PhaseSpec, Workload, loaded

DONE = {0: [20.0, 22.0, 24.0]}  # mean 22, SD 1.63: slow beyond 23.6 s estimated


def test_nothing_is_speculated_before_an_attempt_of_the_phase_succeeded() -> None:
    slow = TaskView(0, 3, ((0.0, 0.05),))
    assert speculate([slow], {}, 10, 30.0) == []
    assert speculate([slow], {0: []}, 10, 30.0) == []
    assert speculate([slow], DONE, 10, 30.0) == [(0, 3)]


def test_only_a_slow_task_with_one_running_attempt_and_a_gain_is_speculated() -> None:
    on_time = TaskView(0, 1, ((0.0, 0.9),))  # 20 s at 0.9: 22.2 s in all, not beyond 23.6
    no_gain = TaskView(0, 2, ((0.0, 0.5),))  # 24 s in all, ends at 24 s, a fresh one at 12 + 22
    twice = TaskView(0, 3, ((0.0, 0.1), (5.0, 0.1)))  # already has a second attempt
    queued = TaskView(0, 4, ((0.0, 0.1),), waiting=True)  # its speculative attempt waits for a container
    no_progress = TaskView(0, 5, ((0.0, 0.0),))  # still starting: no estimate
    assert speculate([on_time], DONE, 10, 20.0) == []
    assert speculate([no_gain], DONE, 10, 12.0) == []
    assert speculate([twice, queued, no_progress], DONE, 10, 20.0) == []


def test_one_task_per_phase_per_round_the_one_of_highest_value() -> None:
    a = TaskView(0, 1, ((0.0, 0.2),))  # 100 s in all
    b = TaskView(0, 2, ((0.0, 0.1),))  # 200 s in all: the higher value
    r = TaskView(1, 0, ((0.0, 0.1),))
    assert speculate([a, b, r], {**DONE, 1: [10.0]}, 10, 20.0) == [(0, 2), (1, 0)]


def test_the_allowance_counts_speculations_underway() -> None:
    assert allowed(30, 9) == speculator.MINIMUM_ALLOWED_TASKS
    assert allowed(5000, 200) == 50
    underway = [TaskView(0, i, ((0.0, 0.5), (1.0, 0.1))) for i in range(allowed(20, 20))]
    slow = TaskView(0, 99, ((0.0, 0.05),))
    assert speculate([*underway, slow], DONE, 20, 20.0) == []
    assert speculate([*underway[1:], slow], DONE, 20, 20.0) == [(0, 99)]


def test_the_am_speculates_a_straggler_and_the_first_attempt_to_finish_wins() -> None:
    # one job of 3 maps of 10 s base on 4 slots; at seed 3 map 0's original draws 59.9 s of work and its
    # second attempt 29.1 s, maps 1 and 2 about 13 s: once they succeed, map 0 is slow (estimated ~60 s
    # against their ~14 s) and a speculative attempt started ~16 s in wins at ~47 s
    job = JobSpec(1, "spec", 0.0, (PhaseSpec("map", 3, 10.0, 20),))
    wl = Workload("spec", 3, (job,), nodes=1, node_mem_mb=4096, node_vcores=4, startup_s=1.0, cap=8.0)
    assert [round(wl.run_s(0, 0, 0, n), 1) for n in (0, 1)] == [59.9, 29.1]
    capacity = {"policy.name": "capacity"}
    with_spec = run(wl, LiveOptions(service=capacity, am_speculation=True))
    without = run(wl, LiveOptions(service=capacity))
    assert without.clones == [] and next(iter(without.flowtimes.values())) > 60.0
    assert [(c[2][-10:], c[3]) for c in with_spec.clones] == [("m_000000_1", "speculative")]
    assert 15.0 <= with_spec.clones[0][0] <= 20.0
    assert 45.0 <= next(iter(with_spec.flowtimes.values())) <= 50.0
    assert any(k[2].endswith("m_000000_0") and k[5] == "task won" for k in with_spec.kills)  # the loser


def test_the_loaded_mix_speculates_within_the_allowance() -> None:
    rec = run(loaded(1), LiveOptions(service={"policy.name": "capacity"}, am_speculation=True))
    assert len(rec.flowtimes) == len(loaded(1).jobs)
    assert rec.clones and all(c[3] == "speculative" for c in rec.clones)
