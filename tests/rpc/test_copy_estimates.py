"""The copy estimator (estimate/copies.py) on AttemptReports as the AM sends them: when a copy's work
began, its finish at its rate, its earliest finish without a new progress step, which copies straggle or
stall, which tasks are covered, and the start-up estimate."""

from __future__ import annotations

from typing import Any

import pytest
from am_reports import (
    attempt,
    finish_at_least_ms,
    finish_at_rate_ms,
    judge_reports,
    slow_waiting_reports,
    straggling,
)

from pyscheduler.estimate.copies import (
    STALL_FRAC,
    STALL_MIN_S,
    StartupEstimate,
    work_start,
)
from pyscheduler.wire import pb


def test_work_start_leaves_the_start_up_out_of_the_rate() -> None:
    launch = 100.0
    assert work_start(launch, None, (130.0, 0.5)) is None  # one report: no rate yet
    assert work_start(launch, (120.0, 0.2), (120.0, 0.2)) is None
    # 20% at 120 s, 60% at 130 s: 4%/s, so work began at 115 s (15 s of JVM start-up left out)
    assert work_start(launch, (120.0, 0.2), (130.0, 0.6)) == 115.0
    assert work_start(launch, (101.0, 0.5), (102.0, 0.6)) == launch  # never before the launch


def test_a_copys_finish_is_estimated_at_its_rate_since_its_work_began() -> None:
    a = pb.AttemptReport(state=pb.ATTEMPT_RUNNING, progress=0.6, time_ms=130_000, launch_time_ms=100_000)
    assert finish_at_rate_ms(a, None) is None  # one report: no rate yet
    # work began at 115 s (20% at 120 s, 60% at 130 s): the rest, 40% at 4%/s, ends at 140 s; LATE's
    # estimate from the launch would say 150 s
    assert finish_at_rate_ms(a, (120.0, 0.2)) == pytest.approx(140_000.0)


def test_a_copys_earliest_finish_grows_while_its_progress_shows_no_new_step() -> None:
    """`finish_at_least_ms`: work of D s that reached p1 by t1 and is below p + p1 at t takes more than
    (t - t1) / p, and begins after the launch (on the cluster benchmark: a 752 s straggler's second step came
    75 s into its work, so it had no rate until then)."""
    a = pb.AttemptReport(state=pb.ATTEMPT_RUNNING, progress=0.05, time_ms=260_000, launch_time_ms=209_000)
    assert finish_at_least_ms(a, None) is None
    # first step (5%) reported at 251 s, still 5% at 260 s: the work takes more than 9 / 0.05 = 180 s
    assert finish_at_least_ms(a, (251.0, 0.05)) == pytest.approx(389_000.0)
    assert finish_at_rate_ms(a, (251.0, 0.05)) is None  # no second step: no rate
    # a copy of 752 s drawn: true at every report of its first two steps (5% at 251 s, 10% at 288.6 s)
    for t_s, p in ((251.0, 0.05), (270.0, 0.05), (288.0, 0.05), (289.0, 0.1), (320.0, 0.1)):
        a.time_ms, a.progress = int(t_s * 1000), p
        got = finish_at_least_ms(a, (251.0, 0.05))
        assert got is not None and got <= (213.4 + 752.0) * 1000  # work began at 213.4 s
    # it straggles at 260 s, and its waiting clones are named late: at least 129 s left > a fresh ~50 s
    a.time_ms, a.progress = 260_000, 0.05
    a.task_id, a.attempt_id, a.phase_id, a.container_id = (
        "task_1700000000000_0001_m_000000", "attempt_1700000000000_0001_m_000000_0", "map", "c0",
    )  # fmt: skip
    done = attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED)
    done.duration_s = 50.0
    clones = [attempt("map", 0, k, pb.ATTEMPT_WAITING, clone=True) for k in (1, 2)]
    first = {a.attempt_id: (251.0, 0.05)}
    assert straggling([a, done, *clones], first, 260.0) == {a.task_id}
    assert slow_waiting_reports([a, done, *clones], first, 260.0, ()) == {a.task_id: 2}
    # at 252 s, 1 s after its first step, it may still be on pace: at least 20 s, not judged
    a.time_ms = 252_000
    assert straggling([a, done, *clones], first, 252.0) == set()
    assert slow_waiting_reports([a, done, *clones], first, 252.0, ()) == {}


def test_a_task_whose_launch_clones_wait_while_its_copies_straggle_is_named_late() -> None:
    def running(task: int, progress: float, at_s: float) -> Any:
        a = attempt("map", task, 0, pb.ATTEMPT_RUNNING)
        a.progress, a.time_ms, a.launch_time_ms = progress, int(at_s * 1000), 80_000
        return a

    def waiting(task: int) -> list[Any]:
        return [attempt("map", task, k, pb.ATTEMPT_WAITING, clone=True) for k in (1, 2)]

    first = {  # the first report with progress of each running original, at 100 s
        "attempt_1700000000000_0001_m_000000_0": (100.0, 0.05),
        "attempt_1700000000000_0001_m_000002_0": (100.0, 0.3),
        "attempt_1700000000000_0001_m_000003_0": (100.0, 0.3),
    }
    reports = [
        running(0, 0.10, 110.0),  # 0.5%/s since 90 s: ends at 290 s, 180 s left
        *waiting(0),
        attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED),  # 20 s
        running(2, 0.5, 110.0),  # 2%/s since 85 s: ends at 135 s, 55 s after its launch at 80 s
        running(3, 0.5, 110.0),  # on pace: 25 s left, less than a fresh copy's ~55 s
        *waiting(3),
        running(4, 0.02, 110.0),  # one report: no rate yet
        *waiting(4),
    ]
    assert slow_waiting_reports(reports, first, 110.0, ()) == {"task_1700000000000_0001_m_000000": 2}
    assert slow_waiting_reports(reports, first, 110.0, {"task_1700000000000_0001_m_000000"}) == {}
    # a running clone of map 0 with no rate yet may still win: not judged
    young = attempt("map", 0, 3, pb.ATTEMPT_RUNNING, clone=True)
    assert slow_waiting_reports([*reports, young], first, 110.0, ()) == {}
    # ... but the task straggles, by the copies timed at their rates: its young clone does not yield
    # (service/round/yielding.py Copy.straggling); map 3, on pace, and map 4, untimed, do not straggle
    assert straggling([*reports, young], first, 110.0) == {"task_1700000000000_0001_m_000000"}
    # a timed clone of map 0 on pace (2%/s since 100 s: ends at 150 s, 40 s left) ends the straggle
    quick = attempt("map", 0, 4, pb.ATTEMPT_RUNNING, clone=True)
    quick.progress, quick.time_ms, quick.launch_time_ms = 0.2, 110_000, 95_000
    first_quick = {**first, quick.attempt_id: (105.0, 0.1)}
    assert straggling([*reports, quick], first_quick, 110.0) == set()


def test_a_task_is_covered_when_a_copy_timed_at_its_rate_has_at_most_a_fresh_copys_time_left() -> None:
    """`judge`: map 3's original, timed at its rate, ends 25 s from now, less than a fresh copy's run time
    (the phase's other copies, about 55 s): covered, and its clones yield first (service/round/yielding.py).
    Map 0's timed copy has 180 s left (it straggles, not covered); map 4 has one report, no rate: not
    covered."""

    def running(task: int, progress: float) -> Any:
        a = attempt("map", task, 0, pb.ATTEMPT_RUNNING)
        a.progress, a.time_ms, a.launch_time_ms = progress, 110_000, 80_000
        return a

    first = {
        "attempt_1700000000000_0001_m_000000_0": (100.0, 0.05),
        "attempt_1700000000000_0001_m_000002_0": (100.0, 0.3),
        "attempt_1700000000000_0001_m_000003_0": (100.0, 0.3),
    }
    reports = [
        running(0, 0.10),
        attempt("map", 1, 0, pb.ATTEMPT_SUCCEEDED),
        running(2, 0.5),
        running(3, 0.5),
        running(4, 0.02),
        attempt("map", 3, 1, pb.ATTEMPT_RUNNING, clone=True),
    ]
    slow, covered = judge_reports(reports, first, 110.0)
    assert slow == {"task_1700000000000_0001_m_000000"}
    assert covered == {"task_1700000000000_0001_m_000002", "task_1700000000000_0001_m_000003"}
    assert slow == straggling(reports, first, 110.0)


def test_a_copy_stalled_at_progress_0_past_a_fraction_of_a_fresh_copys_run_straggles() -> None:
    """On the cluster benchmark: a map whose original drew 752 s shows its first step after 37.6 s of work,
    and until then it had neither a rate nor an earliest finish. With the usual start-up known (5 s here), a
    copy at progress 0 that has worked more than STALL_MIN_S and STALL_FRAC of a fresh copy's run time
    (the phase's other maps: 100 s) straggles: its young clone does not yield, and its waiting clones are
    named late."""
    assert (STALL_MIN_S, STALL_FRAC) == (10.0, 0.15)

    def report(task: int, copy: int, progress: float, launch_s: float, clone: bool = False) -> Any:
        a = attempt("map", task, copy, pb.ATTEMPT_RUNNING, clone=clone)
        a.progress, a.time_ms, a.launch_time_ms = progress, 200_000, int(launch_s * 1000)
        return a

    done = [attempt("map", i, 0, pb.ATTEMPT_SUCCEEDED) for i in (1, 2, 3)]
    for a in done:
        a.duration_s = 100.0
    stuck = report(0, 0, 0.0, 180.0)  # launched 20 s ago: 15 s of work, the cut is max(10, 15) s
    young = report(0, 1, 0.0, 198.0, clone=True)  # 2 s ago: still starting
    waits = [attempt("map", 0, 2, pb.ATTEMPT_WAITING, clone=True)]
    task = "task_1700000000000_0001_m_000000"
    assert straggling([*done, stuck, young], {}, 200.0) == set()  # no start-up known: not judged
    assert straggling([*done, stuck, young], {}, 200.0, startup_s=5.0) == set()  # 15 s: not past the cut
    assert straggling([*done, stuck, young], {}, 201.0, startup_s=5.0) == {task}  # 16 s of work
    assert slow_waiting_reports([*done, stuck, *waits], {}, 201.0, (), startup_s=5.0) == {task: 1}
    stuck.progress = 0.05  # its first step: judged by its earliest finish from now on, not stalled
    assert straggling([*done, stuck, young], {stuck.attempt_id: (201.0, 0.05)}, 201.0, startup_s=5.0) == set()


def test_startup_estimate_is_the_median_of_recent_start_ups_once_a_few_were_seen() -> None:
    e = StartupEstimate(keep=4, least=3)
    e.add(5.0)
    e.add(9.0)
    assert e.median() is None
    e.add(float("nan"))  # ignored
    e.add(-1.0)  # ignored
    e.add(6.0)
    assert e.median() == 6.0
    for x in (20.0, 21.0, 22.0):  # only the last 4 count
        e.add(x)
    assert e.median() == 20.5
