"""Section 4.1's cloning analysis and Algorithm 1 (transient scheduling): classes, knapsack, time bound."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyscheduler.estimate import speedup
from pyscheduler.policies import Snapshot, get_policy
from pyscheduler.policies.model import job_order, knapsack_level, size_class_count, transient_priorities

from .helpers import cluster, job


def flows(n: int, alpha: float) -> tuple[float, float, float]:
    """Section 4.1: flow1 = N-1+1/h(2), flow2 = sum_j j/h(2^j), flow3 = (N+1)/h(2)."""

    def h(r: int) -> float:
        return speedup(alpha, r)

    flow1 = n - 1 + 1 / h(2)
    flow2 = sum(j / h(2**j) for j in range(1, n + 1))
    flow3 = (n + 1) / h(2)
    return flow1, flow2, flow3


@pytest.mark.parametrize("alpha", [2.0, 2.5, 3.0, 5.0])
def test_section_4_1_flow3_lt_flow1_lt_flow2(alpha: float) -> None:
    # conditions: N > 2 alpha - 1 (so h(2) > N/(N-1)) and h(2^j) < j for every j >= 2, which is
    # "j >= alpha/(alpha-1)" for all j >= 2, i.e. alpha >= 2
    n0 = math.floor(2 * alpha - 1) + 1
    for n in range(max(n0, 3), n0 + 12):
        flow1, flow2, flow3 = flows(n, alpha)
        assert flow3 < flow1 < flow2, (alpha, n)
        h2 = speedup(alpha, 2)
        # the paper's closed forms for the differences
        assert flow1 - flow3 == pytest.approx(n - 1 - n / h2)
        terms = [(speedup(alpha, 2**j) - j) / speedup(alpha, 2**j) for j in range(2, n + 1)]
        assert flow1 - flow2 == pytest.approx(sum(terms))


@pytest.mark.parametrize("alpha", [1.2, 1.5])
def test_section_4_1_heavy_tails_need_more_jobs(alpha: float) -> None:
    """For alpha < 2 the first terms of flow1 - flow2 are positive (h(4) > 2): the ordering holds only once N
    is large enough for the terms with j >= alpha/(alpha-1) to dominate -- and then for every larger N."""
    ok = [n for n in range(3, 80) if flows(n, alpha)[2] < flows(n, alpha)[0] < flows(n, alpha)[1]]
    assert ok and ok == list(range(ok[0], 80))
    assert flows(3, alpha)[1] < flows(3, alpha)[0]  # with few jobs, cloning every job wins over flow1


def test_section_4_1_condition_matters() -> None:
    # alpha = 3, N = 3 <= 2 alpha - 1: h(2) = 1.25 < N/(N-1) = 1.5, and cloning everything loses
    flow1, _, flow3 = flows(3, 3.0)
    assert flow3 > flow1


def test_priorities_favour_short_jobs() -> None:
    times = np.array([100.0, 1.0, 30.0, 7.0, 3.0])
    vols = np.full(5, 0.5)
    p = transient_priorities(vols, times, 0.1)
    assert list(np.argsort(p, kind="stable")) == [1, 4, 3, 2, 0]


def test_classes_are_first_packed_levels() -> None:
    # hand-computed: g = max(ceil(log2(3.8 / 0.8)), ceil(log2 10)) = 4
    vols, times = np.array([0.1, 0.5, 0.2, 3.0]), np.array([1.5, 3.0, 10.0, 2.0])
    assert size_class_count(vols, times, 0.2) == 4
    assert transient_priorities(vols, times, 0.2).tolist() == [1, 2, 4, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.01, 6.0), st.floats(0.1, 20.0)), min_size=1, max_size=9), st.integers(1, 5)
)
def test_knapsack_packs_the_most_jobs(items: list[tuple[float, float]], level: int) -> None:
    vols = np.array([v for v, _ in items])
    times = np.array([t for _, t in items])
    x = knapsack_level(vols, times, level)
    cap = 2.0**level
    assert vols[x].sum() <= cap + 1e-9 and (times[x] <= cap).all()
    eligible = [i for i in range(len(items)) if times[i] <= cap]
    best = 0
    for k in range(len(eligible), 0, -1):
        if any(vols[list(c)].sum() <= cap for c in itertools.combinations(eligible, k)):
            best = k
            break
    assert int(x.sum()) == best  # within a class, as many jobs as can be packed


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.01, 0.3), st.integers(1, 12)), min_size=1, max_size=25))
def test_time_bound_of_section_4_2_1(items: list[tuple[float, int]]) -> None:
    """One server of capacity 1, single-task jobs: scheduling in Algorithm 1's order (greedy list scheduling)
    finishes every job by sum v_j / (1 - max d_j) plus the last job's own length (the final slot)."""
    d = np.array([a for a, _ in items])
    theta = np.array([float(b) for _, b in items])
    vols = d * theta
    prio = transient_priorities(vols, theta, float(d.max()))
    assert (prio >= 1).all() and (prio <= size_class_count(vols, theta, float(d.max()))).all()
    order = sorted(range(len(items)), key=lambda j: (prio[j], j))
    running: list[tuple[float, float]] = []  # (end, demand)
    t, used, makespan = 0.0, 0.0, 0.0
    for j in order:
        while used + d[j] > 1 + 1e-12:
            end, dem = min(running)
            running.remove((end, dem))
            t, used = max(t, end), used - dem
        running.append((t + theta[j], d[j]))
        used += d[j]
        makespan = max(makespan, t + theta[j])
    assert makespan <= vols.sum() / (1 - d.max()) + theta.max() + 1e-9


def test_order_inside_a_class_is_arrival_for_the_paper_and_volume_for_the_extension() -> None:
    c = cluster((4.0,))
    big = job("big", 0.0, ("m", 3, (1.0,), 1.0, 0.0, ()))  # v = 3 x 1 s x 1/4, e = 1 s
    small = job("small", 1.0, ("m", 1, (1.0,), 1.0, 0.0, ()))  # v = 1/4, e = 1 s: the same class
    long = job("long", 2.0, ("m", 1, (0.01,), 100.0, 0.0, ()))  # v = 1/4 too, but e = 100 s: a later class
    snap = Snapshot(0.0, c, [big, small, long])

    def ranked(**options: object) -> list[tuple[str, int]]:
        d = get_policy("dollymp", max_clones=0, **options).decide(snap)
        return [(p.job_id, p.priority) for p in sorted(d.priorities, key=lambda p: p.rank)]

    paper = ranked()
    assert [j for j, _ in paper] == ["big", "small", "long"]
    assert paper[0][1] == paper[1][1] < paper[2][1]
    assert [j for j, _ in ranked(order="size_class_volume")] == ["small", "big", "long"]
    # every priority names the order that ranked it
    reasons = {
        o: {p.reason for p in get_policy("dollymp", max_clones=0, order=o).decide(snap).priorities}
        for o in ("size_class", "size_class_volume", "arrival", "volume")
    }
    assert reasons == {
        "size_class": {"size_class"},
        "size_class_volume": {"size_class_volume"},
        "arrival": {"arrival_order"},
        "volume": {"volume"},
    }
    with pytest.raises(ValueError, match="order"):
        get_policy("dollymp", order="volumes")


def test_volume_order_serves_smallest_volume_first_and_keeps_the_classes() -> None:
    big = job("big", 0.0, ("m", 3, (1.0,), 1.0, 0.0, ()))  # v = 3/4, e = 1 s
    small = job("small", 1.0, ("m", 1, (1.0,), 1.0, 0.0, ()))  # v = 1/4, e = 1 s
    long = job("long", 2.0, ("m", 1, (0.01,), 100.0, 0.0, ()))  # v = 1/4, e = 100 s: a later class
    snap = Snapshot(0.0, cluster((4.0,)), [big, small, long])
    d = get_policy("dollymp", max_clones=0, order="volume").decide(snap)
    ranked = sorted(d.priorities, key=lambda p: p.rank)
    assert [p.job_id for p in ranked] == ["small", "long", "big"]  # volume, then arrival
    paper = {p.job_id: p.priority for p in get_policy("dollymp", max_clones=0).decide(snap).priorities}
    assert {p.job_id: p.priority for p in ranked} == paper  # Algorithm 1's classes (clone counts) kept
    # one node of 1: "short" (v = 1, e = 1 s: class 0) fills it under the paper; the extension serves
    # "long" (v = 0.5, e = 10 s: class 4) first, and then one of short's tasks still fits
    one = Snapshot(
        0.0,
        cluster((1.0,)),
        [
            job("short", 0.0, ("m", 2, (0.5,), 1.0, 0.0, ())),
            job("long", 1.0, ("m", 1, (0.05,), 10.0, 0.0, ())),
        ],
    )
    placed = {
        o: sorted(
            p.job_id for p in get_policy("dollymp", max_clones=0, order=o).decide(one).iter_placements()
        )
        for o in ("size_class", "volume")
    }
    assert placed == {"size_class": ["short", "short"], "volume": ["long", "short"]}


def test_job_order_takes_volume_after_class_and_application_priority() -> None:
    classes = np.array([1, 1, 1, 0])
    arrival = np.array([0.0, 1.0, 2.0, 3.0])
    volumes = np.array([5.0, 1.0, 3.0, 9.0])
    assert job_order(classes, arrival, np.zeros(4, np.int64), volumes).tolist() == [3, 1, 2, 0]
    assert job_order(classes, arrival, np.array([0, 0, 2, 0]), volumes).tolist() == [3, 2, 1, 0]
