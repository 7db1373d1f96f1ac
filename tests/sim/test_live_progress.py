"""What the simulated AM sees of its attempts' progress (pyscheduler/sim/live/progress.py)."""

from __future__ import annotations

import dataclasses

import pytest

from pyscheduler.estimate.copies import MAP_PHASE_SHARE
from pyscheduler.sim.live import __main__ as live_main
from pyscheduler.sim.live.appmaster import AppMaster
from pyscheduler.sim.live.progress import ProgressModel
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.workload import JobSpec, PhaseSpec, Workload

HADOOP = ProgressModel.named("hadoop")


def test_exact_is_the_share_done_now() -> None:
    exact = ProgressModel.named("exact")
    assert exact.seen_at(17.3, 5.0, 0.4) == 17.3
    assert exact.score(0.42, True, True) == pytest.approx(0.42 * MAP_PHASE_SHARE)
    assert exact.score(0.42, True, False) == pytest.approx(0.42)  # a map-only job's map
    assert exact.score(0.42, False, False) == pytest.approx(0.42)  # a reduce


def test_hadoop_maps_step_and_reduces_start_at_two_thirds() -> None:
    # StragglerJob's record reader: (records read - 1) / 20, so within a step the score stands still
    assert HADOOP.score(0.049, True, False) == 0.0
    assert HADOOP.score(0.051, True, False) == pytest.approx(0.05)
    assert HADOOP.score(0.099, True, True) == pytest.approx(0.05 * MAP_PHASE_SHARE)
    assert HADOOP.score(0.0, False, False) == pytest.approx(2 / 3)  # copy and sort done
    assert HADOOP.score(0.5, False, False) == pytest.approx(2 / 3 + 1 / 6)
    assert HADOOP.score(1.5, False, False) < 1.0  # never done by its score alone


def test_hadoop_reports_lag_by_at_most_one_interval_on_the_tasks_own_grid() -> None:
    seen = [HADOOP.seen_at(10.0 + 0.25 * i, 10.0, 0.5) for i in range(40)]
    assert all(0 <= 10.0 + 0.25 * i - s < 3.0 for i, s in enumerate(seen))
    assert {round((s - 8.5) % 3.0, 9) for s in seen if s > 10.0} == {0.0}  # reports at 8.5 + 3k
    assert HADOOP.seen_at(9.0, 10.0, 0.5) == 9.0  # before its work: nothing to lag


@pytest.mark.parametrize(("field", "value"), [("map_steps", -1), ("report_s", 601.0), ("reduce_from", 1.0)])
def test_a_bad_model_names_its_field(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=f"ProgressModel.{field}"):
        ProgressModel(**{field: value})  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="progress model 'fast'"):
        ProgressModel.named("fast")


def test_the_am_reports_what_its_tasks_last_told_it() -> None:
    wl = Workload(
        "one-job",
        7,
        (JobSpec(1, "j", 0.0, (PhaseSpec("map", 2, 40.0, 20), PhaseSpec("reduce", 1, 20.0, 10, ("map",)))),),
        progress=HADOOP,
    )
    am = AppMaster(wl, 0, LiveRecord())
    am.start_ready(0.0)
    for i, a in enumerate(am.waiting(20)):
        am.launch(a, f"container_{i}", "node00.sim:8041", 0.0)
    begun = wl.startup_s
    scores = {}
    for k in range(1, 400):
        now = begun + 0.1 * k
        for a in am.attempts.values():
            scores.setdefault(a.attempt_id, []).append(am._progress(a, now, {0}))
    for a in am.attempts.values():
        got = scores[a.attempt_id]
        assert got == sorted(got)  # never falls
        assert all(round(s / MAP_PHASE_SHARE * 20, 6).is_integer() for s in got)  # whole steps
        # a step shows at the task's next report, at most 3 s (and a step) after the work reached it
        for k, s in enumerate(got, start=1):
            done = 0.1 * k / a.work_s
            assert s / MAP_PHASE_SHARE <= done + 1e-9
            assert s / MAP_PHASE_SHARE >= min(0.95, done - 0.05 - 3.0 / a.work_s) - 1e-9
    exact = AppMaster(dataclasses.replace(wl, progress=ProgressModel()), 0, LiveRecord())
    exact.start_ready(0.0)
    for i, a in enumerate(exact.waiting(20)):
        exact.launch(a, f"container_{i}", "node00.sim:8041", 0.0)
    a = next(iter(exact.attempts.values()))
    assert exact._progress(a, begun + 5.0, {0}) == pytest.approx(5.0 / a.work_s * MAP_PHASE_SHARE)


def test_the_cli_refuses_an_unknown_model(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        live_main.main(["--progress", "fast", "--workload", "light"])
    assert "--progress" in capsys.readouterr().err
