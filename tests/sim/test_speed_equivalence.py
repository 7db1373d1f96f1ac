"""The simulator's speed paths decide exactly what the straightforward paths decide.

Each optimised path has a reference twin kept in the code (numpy placement, a PhaseTable built from
scratch, np.unique, the numpy start-time update, recomputed phase counters, late tasks judged from the
Attempt objects: tests/sim/late_object_path.py); whole simulations on a slice
of the FB-2010 trace and on a DAG workload with shuffles must give bit-identical completion times and
resource accounting either way.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import numpy.typing as npt
import pytest

from pyscheduler.objects import Job, Phase, Resources, TaskState
from pyscheduler.policies import get_policy, jit, placement, residual, table
from pyscheduler.policies.jit import observe_starts
from pyscheduler.policies.late import LateTasks
from pyscheduler.policies.table import PhaseTable, _unique_rows
from pyscheduler.policies.table_kernel import extend_columns
from pyscheduler.sim import straggler
from pyscheduler.sim.engine import SimConfig, Simulation
from pyscheduler.sim.loaders import SwimDerivation, load_workload
from pyscheduler.sim.runner import draw_bases, parse_policy
from pyscheduler.sim.straggler import StragglerSpec
from pyscheduler.sim.workload import ClusterSpec, JobSpec, NodeSpec, PhaseSpec

from .late_object_path import object_path_judge

TABLE_COLUMNS = (
    "row_job",
    "row_k",
    "n_tasks",
    "demand",
    "shapes",
    "row_shape",
    "job_ptr",
    "arrival",
    "depth",
    "edge_child",
    "edge_parent",
    "has_parent",
)


def _numpy_observe(
    seen: npt.NDArray[np.float64], count: npt.NDArray[np.int8], copies: npt.NDArray[np.int8], now: float
) -> None:
    seen[(copies > 0) & (np.isinf(seen) | (copies > count))] = now
    seen[copies == 0] = math.inf
    count[:] = copies


def _numpy_unique_rows(a: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    if not a.shape[0]:
        return a, np.zeros(0, np.int64)
    shapes, inv = np.unique(a, axis=0, return_inverse=True)
    return shapes, inv.reshape(-1).astype(np.int64)


def _numpy_clone_candidates(
    copies: npt.NDArray[np.int64],
    state: npt.NDArray[np.int8],
    allowed: npt.NDArray[np.int64],
    owner: npt.NDArray[np.int64],
    have: int,
    finished: int,
) -> npt.NDArray[np.bool_]:
    result: npt.NDArray[np.bool_] = (copies == have) & (state != finished) & (allowed[owner] > have)
    return result


def _numpy_started(
    copies: npt.NDArray[np.int64],
    state: npt.NDArray[np.int8],
    flat: npt.NDArray[np.int64],
    pending: int,
    running: int,
) -> None:
    np.add.at(copies, flat, 1)
    state[flat] = np.where(state[flat] == pending, running, state[flat])


def _numpy_pass_input(*args: npt.NDArray[np.generic] | int) -> tuple[npt.NDArray[np.int64], ...]:
    """table.pass_input (numpy) behind jit.pass_input_compiled's signature (mask, owner, rows, class,
    rank, shape, shapes)."""
    mask, owner, n_rows, row_class, row_rank, row_shape, shapes = args
    flat = SimpleNamespace(owner=owner, rows=np.empty(n_rows), table=SimpleNamespace(shapes=shapes))
    result: tuple[npt.NDArray[np.int64], ...] = table.pass_input(
        flat,  # type: ignore[arg-type]
        mask,
        row_class,
        row_rank,
        row_shape,
    )
    return result


def _use_reference_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swap every speed path for its straightforward twin (not a mock: the reference implementation)."""
    monkeypatch.setattr(placement, "USE_COMPILED", False)
    monkeypatch.setattr(PhaseTable, "following", classmethod(lambda cls, prev, jobs: cls(jobs)))
    monkeypatch.setattr(table, "_unique_rows", _numpy_unique_rows)
    monkeypatch.setattr(residual, "observe_starts", _numpy_observe)
    monkeypatch.setattr(jit, "clone_candidates", _numpy_clone_candidates)
    monkeypatch.setattr(jit, "started", _numpy_started)
    monkeypatch.setattr(jit, "pass_input_compiled", _numpy_pass_input)
    monkeypatch.setattr(LateTasks, "judge", object_path_judge)  # late tasks from the Attempt objects


def _fingerprint(
    jobs: list[JobSpec], cluster: ClusterSpec, policy: str, config: SimConfig
) -> tuple[object, ...]:
    _label, name, opts = parse_policy(policy)
    sim = Simulation(jobs, cluster, get_policy(name, **opts), config, draw_bases(jobs, config))
    m = sim.run()
    assert m.jobs_completed == len(jobs)
    return (
        tuple(sim.completion),
        m.useful_resource_s,
        m.wasted_resource_s,
        m.clones_launched,
        m.rounds,
        sim.stale,
    )


def _dag_jobs(n: int, seed: int) -> list[JobSpec]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        maps = rng.randint(1, 12)
        phases = [PhaseSpec("map", maps, rng.choice([1.0, 2.0]), rng.choice([1024.0, 2048.0]), 20.0, 8.0)]
        if rng.random() < 0.7:
            phases.append(
                PhaseSpec("reduce", rng.randint(1, 4), 1.0, 2048.0, 15.0, 5.0, ("map",), read_mb=200.0)
            )
        out.append(JobSpec(f"d{i}", i * rng.uniform(0.5, 3.0), tuple(phases), name=f"n{i % 7}"))
    return out


SMALL = ClusterSpec(tuple([NodeSpec(16, 32768, 1.0)] * 8 + [NodeSpec(8, 16384, 0.75)] * 4))


@pytest.mark.parametrize("policy", ["fifo", "dollymp2", "dollymp(max_clones=1;clone_rule=paper)", "drf"])
def test_fb_slice_same_schedule_on_reference_paths(
    traces: Path, policy: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs, _ = load_workload(
        traces / "swim_facebook" / "FB-2010_samples_24_times_1hr_0.tsv",
        "swim",
        limit=150,
        swim=SwimDerivation(),
    )
    config = SimConfig(straggler=StragglerSpec("pareto", 1.5, 1.0, 20.0), seed=3, tick=5.0)
    fast = _fingerprint(jobs, SMALL, policy, config)
    _use_reference_paths(monkeypatch)
    assert _fingerprint(jobs, SMALL, policy, config) == fast


@pytest.mark.parametrize("shuffle", ["delay", "cc"])
def test_dag_shuffle_workload_same_schedule_on_reference_paths(
    shuffle: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    jobs = _dag_jobs(120, seed=4)
    config = SimConfig(straggler=StragglerSpec("pareto", 1.5, 1.0, 20.0), seed=5, tick=1.0, shuffle=shuffle)
    fast = {p: _fingerprint(jobs, SMALL, p, config) for p in ("dollymp2", "fifo", "tetris")}
    _use_reference_paths(monkeypatch)
    assert {p: _fingerprint(jobs, SMALL, p, config) for p in fast} == fast


def _random_job(rng: random.Random, i: int) -> Job:
    phases = []
    for k in range(rng.randint(1, 4)):
        parents = tuple(f"p{q}" for q in range(k) if rng.random() < 0.5)
        demand = Resources((rng.choice([1.0, 2.0, 4.0]), rng.choice([1024.0, 2048.0])))
        phases.append(Phase(f"p{k}", rng.randint(1, 5), demand, 10.0, 1.0, parents))
    return Job(f"j{i}", float(i), phases)


def test_phase_table_following_equals_fresh_build() -> None:
    rng = random.Random(5)
    jobs: list[Job] = []
    prev: PhaseTable | None = None
    made = 0
    for _ in range(300):
        keep = [j for j in jobs if rng.random() > 0.2]
        if rng.random() < 0.1:
            keep = keep[::-1]  # reordered: must fall back to a fresh build
        jobs = keep + [_random_job(rng, made + i) for i in range(rng.randint(0, 4))]
        made += 5
        got, want = PhaseTable.following(prev, jobs), PhaseTable(jobs)
        for name in TABLE_COLUMNS:
            a, b = getattr(got, name), getattr(want, name)
            assert a.dtype == b.dtype and np.array_equal(a, b), name
        assert got.job_ids == want.job_ids and got.phase_ids == want.phase_ids and got.key == want.key
        assert len(got.phases) == len(want.phases) and all(
            x is y for x, y in zip(got.phases, want.phases, strict=True)
        )
        assert [lv.tolist() for lv in got.levels] == [lv.tolist() for lv in want.levels]
        if want.demand.shape[0]:
            shapes, inv = np.unique(want.demand, axis=0, return_inverse=True)
            assert np.array_equal(got.shapes, shapes) and np.array_equal(got.row_shape, inv.reshape(-1))
        prev = got


def _numpy_extend(prev: PhaseTable, kept: npt.NDArray[np.int64], part: PhaseTable) -> list[np.ndarray]:
    """table_kernel.extend_columns as its docstring's numpy composition (what _extend did before)."""
    keep_job = np.zeros(len(prev.jobs), bool)
    keep_job[kept] = True
    keep_row = keep_job[prev.row_job]
    new_pos = np.full(len(prev.jobs), -1, np.int64)
    new_pos[kept] = np.arange(kept.size)
    new_row = np.cumsum(keep_row) - 1
    m = int(keep_row.sum())
    keep_edge = keep_row[prev.edge_child]
    per_job = np.concatenate([np.diff(prev.job_ptr)[kept], np.diff(part.job_ptr)])
    return [
        keep_row,
        np.concatenate([new_pos[prev.row_job[keep_row]], part.row_job + kept.size]),
        *(np.concatenate([getattr(prev, c)[keep_row], getattr(part, c)]) for c in ("row_k", "n_tasks")),
        np.concatenate([prev.demand[keep_row], part.demand]),
        np.concatenate([prev.depth[keep_row], part.depth]),
        np.concatenate([[0], np.cumsum(per_job)]),
        np.concatenate([prev.arrival[kept], part.arrival]),
        np.concatenate([new_row[prev.edge_child[keep_edge]], part.edge_child + m]),
        np.concatenate([new_row[prev.edge_parent[keep_edge]], part.edge_parent + m]),
        np.isin(np.arange(len(prev.shapes)), prev.row_shape[keep_row]),
        prev.row_shape[keep_row],
    ]


KERNEL_COLUMNS = (
    "row_job",
    "row_k",
    "n_tasks",
    "demand",
    "depth",
    "job_ptr",
    "arrival",
    "edge_child",
    "edge_parent",
)


def test_extend_kernel_matches_numpy() -> None:
    rng = random.Random(9)
    for trial in range(60):
        prev = PhaseTable([_random_job(rng, i) for i in range(rng.randint(1, 12))])
        kept = np.array(sorted(rng.sample(range(len(prev.jobs)), rng.randint(0, len(prev.jobs)))), np.int64)
        added = [_random_job(rng, 100 + i) for i in range(trial % 3)]  # none: what _extend passes
        part = PhaseTable(added, derive=False) if added else table._no_rows(prev.demand.shape[1])
        got = extend_columns(
            *(getattr(prev, c) for c in KERNEL_COLUMNS),
            prev.row_shape,
            len(prev.shapes),
            kept,
            *(getattr(part, c) for c in KERNEL_COLUMNS),
        )
        want = _numpy_extend(prev, kept, part)
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g, np.asarray(w).astype(g.dtype)) and g.shape == np.asarray(w).shape


def test_round_view_ready_matches_add_at() -> None:
    # RoundView.ready counts each row's unfinished parents with a bincount; np.add.at is the plain twin
    rng = random.Random(11)
    jobs = [_random_job(rng, i) for i in range(40)]
    for j in jobs:  # finish some phases, tasks of others part-way
        for p in j.phases:
            for t in range(rng.randint(0, p.num_tasks)):
                p.start_copy(t)
                p.end_copy(t, True)
    t = PhaseTable(jobs)
    view = table.RoundView(t, None)
    blocked = np.zeros(len(t.phases), np.int64)
    np.add.at(blocked, t.edge_child, ~view.finished[t.edge_parent])
    assert np.array_equal(view.ready, blocked == 0)
    assert view.ready.any() and not view.ready.all()
    empty = table.RoundView(PhaseTable([]), None)
    assert empty.ready.shape == (0,)


def test_unique_rows_matches_numpy() -> None:
    rng = np.random.default_rng(1)
    for n in range(1, 80):
        a = rng.choice([0.5, 1.0, 2.0, 3.0], size=(n, 2)) * np.array([1.0, 1024.0])
        assert all(np.array_equal(x, y) for x, y in zip(_unique_rows(a), _numpy_unique_rows(a), strict=True))


def test_observe_starts_matches_numpy() -> None:
    rng = np.random.default_rng(0)
    for _ in range(500):
        n = int(rng.integers(1, 30))
        seen = np.where(rng.random(n) < 0.5, np.inf, rng.random(n) * 100)
        count = rng.integers(0, 4, n).astype(np.int8)
        copies = rng.integers(0, 4, n).astype(np.int8)
        now = float(rng.random() * 200)
        ref_seen, ref_count = seen.copy(), count.copy()
        _numpy_observe(ref_seen, ref_count, copies, now)
        observe_starts(seen, count, copies, now)
        assert np.array_equal(seen, ref_seen) and np.array_equal(count, ref_count)


def test_phase_counters_follow_the_task_arrays() -> None:
    """num_losers, peak_min() and version agree with the arrays after any sequence of copy events."""
    rng = random.Random(9)
    p = Phase("m", 6, Resources((1.0, 1024.0)), 10.0, 1.0)
    last_version = p.version
    for _ in range(3000):
        t = rng.randrange(6)
        if p.state[t] != TaskState.FINISHED and rng.random() < 0.5:
            p.start_copy(t)
        elif p.copies[t] > 0:
            p.end_copy(t, rng.random() < 0.4)
        else:
            continue
        assert p.version > last_version
        last_version = p.version
        finished = p.state == TaskState.FINISHED
        assert p.num_losers == int(p.copies[finished].sum())
        assert p.peak_min() == int(p.peak.min())
        assert p.num_finished == int(finished.sum()) and p.num_pending == int(
            (p.state == TaskState.PENDING).sum()
        )


def test_flat_task_kernels_match_numpy() -> None:
    rng = np.random.default_rng(2)
    for _ in range(300):
        n, rows = int(rng.integers(1, 200)), int(rng.integers(1, 10))
        copies = rng.integers(0, 4, n).astype(np.int64)
        state = rng.integers(0, 3, n).astype(np.int8)
        owner = np.sort(rng.integers(0, rows, n)).astype(np.int64)
        allowed = rng.integers(0, 4, rows).astype(np.int64)
        for have in (1, 2, 3):
            want = _numpy_clone_candidates(copies, state, allowed, owner, have, 2)
            assert np.array_equal(jit.clone_candidates(copies, state, allowed, owner, have, 2), want)
        flat = rng.integers(0, n, int(rng.integers(0, 20))).astype(np.int64)  # repeats count twice
        ref_copies, ref_state = copies.copy(), state.copy()
        _numpy_started(ref_copies, ref_state, flat, 0, 1)
        jit.started(copies, state, flat, 0, 1)
        assert np.array_equal(copies, ref_copies) and np.array_equal(state, ref_state)


def test_compiled_copy_unit_matches_python() -> None:
    """The simulator draws through the compiled twin of straggler.copy_unit (uint64 arithmetic)."""
    rng = random.Random(1)
    for _ in range(20000):
        seed = rng.choice([0, 1, 7, -5, rng.getrandbits(64), rng.getrandbits(63)])
        job, phase, task, nth = (
            rng.choice([rng.randrange(4), rng.randrange(1000), rng.getrandbits(40)]) for _ in range(4)
        )
        stream = rng.randrange(2)
        want = straggler.copy_unit(seed, job, phase, task, nth, stream=stream)
        assert straggler._copy_unit_u(straggler._as_int64(seed), job, phase, task, nth, stream) == want


@pytest.mark.parametrize(
    "spec",
    [
        StragglerSpec("pareto", 1.5, 1.0, 20.0),
        StragglerSpec("pareto", 1.1, 1.0),
        StragglerSpec("pareto", 2.5, 0.5, 3.0),
    ],
)
def test_slowdown_of_equals_the_inverse_cdf_of_the_copy_draw(spec: StragglerSpec) -> None:
    """slowdown_of inlines _pareto_inverse with its constants computed once: the same values, bit for bit."""
    model = straggler.StragglerModel(spec, 9)
    rng = random.Random(2)
    for _ in range(5000):
        key = (rng.randrange(30000), rng.randrange(4), rng.randrange(5000), rng.randrange(3))
        want = float(straggler._pareto_inverse(spec, straggler.copy_unit(9, *key)))
        assert model.slowdown_of(*key) == want
