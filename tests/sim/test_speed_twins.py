"""Speed paths of sessions 6-7 equal the straightforward expressions they replace, bit for bit: Algorithm
1's size classes in one compiled pass per level, the slowdowns of a round's copies drawn in one call, the
nodes with free room found column by column, the event queue, and the placement kernel's input built in
one compiled pass."""

from __future__ import annotations

import random

import numpy as np
import pytest

from pyscheduler.policies.model import knapsack_level, size_class_count, transient_priorities
from pyscheduler.policies.passes import nodes_with_room
from pyscheduler.sim.straggler import StragglerModel, parse_straggler


def _classes_by_levels(v: np.ndarray, t: np.ndarray, max_share: float) -> np.ndarray:
    """transient_priorities as it was: knapsack_level per level, numpy masks."""
    n = v.size
    g = size_class_count(v, t, max_share)
    p = np.full(n, g + 1, np.int64)
    unset = np.ones(n, bool)
    order = np.argsort(v, kind="stable")
    for level in range(1, g + 1):
        newly = knapsack_level(v, t, level, order) & unset
        p[newly] = level
        unset &= ~newly
        if not unset.any():
            break
    return p


def test_size_classes_equal_the_level_by_level_knapsacks() -> None:
    rng = np.random.default_rng(3)
    for _ in range(600):
        n = int(rng.integers(1, 80))
        v = rng.exponential(float(rng.choice([0.01, 1.0, 100.0])), n)
        v[rng.random(n) < 0.2] = 0.0
        if rng.random() < 0.3:  # ties in volume keep the input order
            v = np.round(v, 1)
        t = rng.exponential(float(rng.choice([1.0, 100.0, 5000.0])), n)
        share = float(rng.random() * 0.9)
        expected = _classes_by_levels(v, t, share)
        got = transient_priorities(v, t, share)
        assert got.dtype == np.int64
        assert got.tolist() == expected.tolist()


@pytest.mark.parametrize(
    "spec", ["pareto:alpha=1.5,cap=20", "pareto:alpha=1.1", "pareto:alpha=2,xm=0.5", "none"]
)
def test_batched_slowdowns_equal_one_by_one(spec: str) -> None:
    model = StragglerModel(parse_straggler(spec), 11)
    r = random.Random(2)
    keys = [(r.randrange(30000), r.randrange(5), r.randrange(5000), r.randrange(4)) for _ in range(5000)]
    one_by_one = [model.slowdown_of(*k) for k in keys]
    jobs, phases, tasks, nths = (list(c) for c in zip(*keys, strict=True))
    batched = model.slowdowns_of(jobs, phases, tasks, nths)
    assert batched == one_by_one
    assert all(type(x) is float for x in batched)
    assert model.slowdowns_of([], [], [], []) == []


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_nodes_with_room_equal_the_axis_reduction(dims: int) -> None:
    rng = np.random.default_rng(dims)
    free = rng.random((500, dims)) * 4
    free[rng.random((500, dims)) < 0.5] = 0.0
    free[::7] = 1e-10  # below the threshold in every dimension
    active = rng.random(500) < 0.8
    expected = np.flatnonzero(active & (free > 1e-9).any(axis=1)).astype(np.int64)
    got = nodes_with_room(free, active)
    assert got.dtype == np.int64
    assert got.tolist() == expected.tolist()
    assert got.size < active.sum()  # the zero rows are dropped


def test_event_queue_pops_in_time_then_push_order() -> None:
    """Simulation's queue (a heap of distinct times, events per time in push order) pops what a heap of
    (time, seq, kind, ref) tuples pops, ties included, also when events join a time being drained."""
    import heapq

    from pyscheduler.sim.engine import SimConfig, Simulation
    from pyscheduler.sim.workload import ClusterSpec, NodeSpec

    sim = Simulation([], ClusterSpec((NodeSpec(4, 8192, 1.0),)), _NoPolicy(), SimConfig(), [])
    rng = random.Random(5)
    reference: list[tuple[float, int, int, int]] = []
    seq = 0
    got, expected = [], []
    for step in range(3000):
        if rng.random() < 0.6 or not reference:
            t = float(rng.choice([1, 2, 3, 2.5, -0.0, 0.0])) + (step // 500)
            kind, ref = rng.randrange(6), rng.randrange(100)
            seq += 1
            heapq.heappush(reference, (t, seq, kind, ref))
            sim._push(t, kind, ref)
        else:
            t, _, kind, ref = heapq.heappop(reference)
            expected.append((t, kind, ref))
            got.append(sim._pop())
    while reference:
        t, _, kind, ref = heapq.heappop(reference)
        expected.append((t, kind, ref))
        got.append(sim._pop())
    assert got == expected
    assert not sim.events and not sim.at_time


class _NoPolicy:
    name = "none"

    def decide(self, snapshot: object) -> object:
        raise AssertionError("not called")


def test_compiled_pass_input_equals_the_numpy_one() -> None:
    """jit.pass_input_compiled gives table.pass_input's seven arrays (entries in lexsort order)."""
    from pyscheduler.objects import Job, Phase, Resources
    from pyscheduler.policies import jit
    from pyscheduler.policies.table import FlatTasks, PhaseTable, pass_input

    rng = np.random.default_rng(8)
    entries = 0
    for trial in range(300):
        jobs = []
        for i in range(int(rng.integers(1, 12))):
            phases = [
                Phase(
                    f"p{k}",
                    int(rng.integers(1, 9)),
                    Resources((float(rng.choice([1.0, 2.0])), float(rng.choice([1024.0, 4096.0])))),
                    10.0,
                    1.0,
                )
                for k in range(int(rng.integers(1, 3)))
            ]
            jobs.append(Job(f"j{trial}-{i}", float(i), phases))
        table = PhaseTable(jobs)
        rows = np.flatnonzero(rng.random(len(table.phases)) < 0.8).astype(np.int64)
        flat = FlatTasks(table, rows)
        mask = rng.random(flat.owner.size) < rng.choice([0.0, 0.3, 1.0])
        cls = rng.integers(1, 4, rows.size).astype(np.int64)  # ties in class, shape and rank occur
        rank = rng.integers(0, 3, rows.size).astype(np.int64)
        shape = table.row_shape[rows]
        want = pass_input(flat, mask, cls, rank, shape)
        got = jit.pass_input_compiled(mask, flat.owner, rows.size, cls, rank, shape, table.shapes)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.dtype and g.shape == w.shape
            assert np.array_equal(g, w)
        entries += want[5].size
    assert entries > 1000
