"""Late tasks judged from attempt columns (policies/attempts.py, sim/running.py) decide exactly what the
object path decides (tests/sim/late_object_path.py, the judge as it read Snapshot.attempts one by one)."""

from __future__ import annotations

import math
import random
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest

from pyscheduler.core import ManualClock
from pyscheduler.objects import Attempt, ClusterState, Job, Phase, Resources, TaskState
from pyscheduler.policies import get_policy
from pyscheduler.policies.attempts import AttemptColumns
from pyscheduler.policies.base import Decisions, Policy, Snapshot
from pyscheduler.policies.late import LateTasks
from pyscheduler.policies.table import FlatTasks, PhaseTable, RoundView
from pyscheduler.service.round.amjob import ReportedAttempt
from pyscheduler.sim.engine import SimAttempt, SimConfig, Simulation
from pyscheduler.sim.loaders import SwimDerivation, load_workload
from pyscheduler.sim.runner import draw_bases
from pyscheduler.sim.running import progress_at
from pyscheduler.sim.straggler import StragglerSpec
from pyscheduler.sim.workload import ClusterSpec, NodeSpec

from .late_object_path import object_path_judge

COLUMNS = [f.name for f in fields(AttemptColumns)]


def _same_columns(got: AttemptColumns, want: AttemptColumns) -> None:
    for name in COLUMNS:
        a, b = getattr(got, name), getattr(want, name)
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), name


class _CheckColumns:
    """Runs `inner` and, from round `after` on, checks that the simulator's columns equal the columns of
    its SimAttempt objects (a real policy wrapped, not a mock)."""

    def __init__(self, inner: Policy, after: int) -> None:
        self.inner, self.after, self.seen, self.checked, self.looked_up = inner, after, 0, 0, 0
        self.name = inner.name
        self.timer_driven = getattr(inner, "timer_driven", True)

    def decide(self, snapshot: Snapshot) -> Decisions:
        self.seen += 1
        if self.seen > self.after:
            got = snapshot.attempt_columns()
            # AttemptColumns.index looks one copy up (before the list is built) ...
            picked = {i: snapshot.attempts[i] for i in got.index[:: max(1, len(got) // 7)].tolist()}
            everything = list(snapshot.attempts)
            want = AttemptColumns.from_attempts(everything, snapshot.jobs)
            _same_columns(got, want)
            # ... and finds the very attempt a pass over Snapshot.attempts finds there
            assert all(everything[i] is a for i, a in picked.items())
            self.looked_up += len(picked)
            self.checked += len(want)
        return self.inner.decide(snapshot)


@pytest.mark.parametrize("after", [0, 40])  # columns kept from the start / filled in mid-run
def test_simulator_columns_are_its_attempt_objects(traces: Path, after: int) -> None:
    jobs, _ = load_workload(
        traces / "swim_facebook" / "FB-2010_samples_24_times_1hr_0.tsv",
        "swim",
        limit=60,
        swim=SwimDerivation(),
    )
    cluster = ClusterSpec(tuple([NodeSpec(16, 32768, 1.0)] * 6 + [NodeSpec(8, 16384, 0.75)] * 2))
    config = SimConfig(straggler=StragglerSpec("pareto", 1.5, 1.0, 20.0), seed=2, tick=5.0)
    policy = _CheckColumns(get_policy("dollymp-ext", max_clones=2), after)
    sim = Simulation(jobs, cluster, policy, config, draw_bases(jobs, config))
    assert sim.run().jobs_completed == len(jobs)
    assert policy.checked > 1000  # many running copies compared
    assert policy.looked_up > 100


def test_progress_at_is_sim_attempt_progress() -> None:
    clock = ManualClock()
    rng = np.random.default_rng(3)
    start = rng.uniform(0, 100, 200)
    end = np.where(rng.random(200) < 0.1, start, start + rng.exponential(30, 200))
    for now in (0.0, 50.0, 120.0, 400.0):
        clock.set(now)
        objs = [
            SimAttempt("a", "j", "m", 0, "n", False, s, expected_end=e, clock=clock)
            for s, e in zip(start.tolist(), end.tolist(), strict=True)
        ]
        want = np.array([a.progress for a in objs])
        assert np.array_equal(progress_at(now, start, end), want)


def test_columns_from_objects_leave_out_unknown_copies() -> None:
    j = Job("j", 0.0, [Phase("m", 2, Resources((1.0, 1.0)), 10.0, 1.0)])
    atts = [
        ReportedAttempt("a0", "j", "m", 1, "n0", False, 3.0, 0.5),
        Attempt("a1", "j", "m", 0, "n0", True, 4.0),  # no progress attribute: nan
        Attempt("a2", "other", "m", 0, "n0", False, 0.0),  # not an active job
        Attempt("a3", "j", "r", 0, "n0", False, 0.0),  # no such phase
        Attempt("a4", "j", "m", 2, "n0", False, 0.0),  # no such task
    ]
    cols = AttemptColumns.from_attempts(atts, [j])
    assert cols.task_index.tolist() == [1, 0] and cols.start_time.tolist() == [3.0, 4.0]
    assert cols.progress[0] == 0.5 and math.isnan(cols.progress[1]) and len(cols) == 2
    assert cols.index.tolist() == [0, 1]  # positions in the attempt list


def _random_round(rng: random.Random, jobs: list[Job], now: float) -> list[Attempt]:
    """Moves every job's tasks on at random and lists one attempt per running copy."""
    atts: list[Attempt] = []
    for j in jobs:
        for k, ph in enumerate(j.phases):
            if not j.ready(k):
                continue
            for t in range(ph.num_tasks):
                x = rng.random()
                if ph.state[t] != TaskState.FINISHED and x < 0.5 and ph.copies[t] < 3:
                    ph.start_copy(t)
                elif ph.copies[t] > 0 and x < 0.6:
                    ph.end_copy(t, rng.random() < 0.7)
                for c in range(int(ph.copies[t])):
                    start = now - rng.uniform(0.0, 80.0)
                    p = rng.choice([math.nan, 0.0, 1.0, rng.random(), rng.random()])
                    aid = f"{j.job_id}/{ph.phase_id}/{t}/{c}"
                    if rng.random() < 0.1:  # a driver reporting no progress
                        atts.append(Attempt(aid, j.job_id, ph.phase_id, t, "n0", c > 0, start))
                    else:
                        atts.append(ReportedAttempt(aid, j.job_id, ph.phase_id, t, "n0", c > 0, start, p))
    rng.shuffle(atts)
    atts.append(Attempt("x", "gone", "m", 0, "n0", False, 0.0))  # a job no longer active
    return atts


def _random_jobs(rng: random.Random, n: int, first: int = 0) -> list[Job]:
    out = []
    for i in range(first, first + n):
        phases = []
        for k in range(rng.randint(1, 3)):
            parents = tuple(f"p{q}" for q in range(k) if rng.random() < 0.6)
            sd = rng.choice([0.0, 2.0, 10.0])
            phases.append(
                Phase(f"p{k}", rng.randint(1, 6), Resources((1.0, 1.0)), rng.uniform(5, 30), sd, parents)
            )
        out.append(Job(f"j{i}", 0.0, phases))
    return out


@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"late_by": "elapsed"},
        {"upstream_cap": True, "progress_factor": 1.0, "progress_after": 0.0},
        {"residual_factor": 0.5, "progress_after": 30.0},
    ],
)
def test_judge_from_columns_equals_object_path(opts: dict[str, object]) -> None:
    rng = random.Random(11)
    cap = np.array([[1e9, 1e9]])
    cluster = ClusterState.from_arrays(["n0"], cap, cap.copy())
    fast, ref = LateTasks(2, **opts), LateTasks(2, **opts)  # type: ignore[arg-type]
    jobs = _random_jobs(rng, 12)
    late_seen = progress_seen = 0
    for step in range(60):
        now = 10.0 * step
        atts = _random_round(rng, jobs, now)
        active = [j for j in jobs if not j.finished]
        if rng.random() < 0.2:
            active = active + _random_jobs(rng, 2, len(jobs))
            jobs += active[-2:]
        snap = Snapshot(now, cluster, active, atts)
        snap.validate()
        table = PhaseTable(active)
        view = RoundView(table, None)
        flat = FlatTasks(table, np.flatnonzero(view.ready & ~view.finished))
        got_r: dict[int, tuple[int, str]] = {}
        want_r: dict[int, tuple[int, str]] = {}
        got, wake, got_left = fast.judge(snap, view, flat, got_r)
        want, want_wake, want_left = object_path_judge(ref, snap, view, flat, want_r)
        assert np.array_equal(got, want) and wake == want_wake
        assert np.array_equal(got_left, want_left, equal_nan=True)
        assert list(got_r.items()) == list(want_r.items())
        late_seen += int(want.sum())
        progress_seen += sum(r == "late_progress_rate" for _, r in want_r.values())
    assert late_seen > 0
    assert progress_seen > 0 or opts.get("late_by") == "elapsed"
