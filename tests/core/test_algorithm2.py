"""Algorithm 2 (online placement) on random snapshots: invariants (hypothesis) and a literal reference."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from pyscheduler.objects import ClusterState, Job, Phase, Resources, TaskState
from pyscheduler.policies import Decisions, Snapshot, get_policy

EPS = 1e-9


def random_snapshot(seed: int, n_nodes: int, n_jobs: int, dims: int) -> Snapshot:
    rng = np.random.default_rng(seed)
    cap = rng.integers(1, 9, size=(n_nodes, dims)).astype(float)
    free = np.floor(cap * rng.random((n_nodes, dims)))
    cluster = ClusterState.from_arrays(
        [f"n{i}" for i in range(n_nodes)], cap, free, tuple(f"r{d}" for d in range(dims))
    )
    jobs = []
    for j in range(n_jobs):
        phases = []
        for k in range(int(rng.integers(1, 4))):
            parents = tuple(f"p{q}" for q in range(k) if rng.random() < 0.6)
            demand = tuple(float(x) for x in rng.integers(0, 4, size=dims))
            if not any(demand):
                demand = (1.0,) * dims
            mean = float(rng.uniform(1, 60))
            phases.append(
                Phase(
                    f"p{k}",
                    int(rng.integers(1, 7)),
                    Resources(demand),
                    mean,
                    mean * float(rng.uniform(0, 1.2)),
                    parents,
                )
            )
        job = Job(f"j{j}", float(rng.integers(0, 5)), phases)
        for k in job.topo:  # random progress, respecting the DAG
            p = job.phases[k]
            if not job.ready(k):
                continue
            for t in range(p.num_tasks):
                u = rng.random()
                if u < 0.3:
                    p.start_copy(t)
                    p.end_copy(t, succeeded=True)
                elif u < 0.6:
                    for _ in range(int(rng.integers(1, 4))):
                        p.start_copy(t)
        jobs.append(job)
    return Snapshot(10.0, cluster, jobs)


def check_invariants(snap: Snapshot, d: Decisions, max_clones: int) -> None:
    jobs = {j.job_id: j for j in snap.jobs}
    c = snap.cluster
    used = np.zeros_like(c.free)
    new_copies: Counter[tuple[str, str, int]] = Counter()
    clone_on: dict[int, np.ndarray] = defaultdict(lambda: np.zeros(len(c.dims)))
    originals: set[tuple[str, str, int]] = set()
    any_clone = False
    for p in d.iter_placements():
        job = jobs[p.job_id]
        k = job.phase_index[p.phase_id]
        phase = job.phases[k]
        row = c.index[p.node_id]
        used[row] += phase.demand.as_array()
        assert job.ready(k), f"{p}: a parent phase is unfinished"
        assert phase.state[p.task_index] != TaskState.FINISHED
        key = (p.job_id, p.phase_id, p.task_index)
        new_copies[key] += 1
        if p.is_clone:
            any_clone = True
            clone_on[row] += phase.demand.as_array()
            assert phase.state[p.task_index] == TaskState.RUNNING or key in originals
        else:
            assert phase.state[p.task_index] == TaskState.PENDING and key not in originals
            originals.add(key)
    # never more than a node's free resources, in any dimension
    assert (used <= c.free + EPS).all()
    # never more than max_clones clones per task (copies already running count)
    for (jid, pid, t), n in new_copies.items():
        phase = jobs[jid].phase(pid)
        assert int(phase.copies[t]) + n <= 1 + max_clones
    # never a clone while an original that fits waits
    if any_clone:
        remaining = c.free - used
        for job in snap.jobs:
            for k in job.topo:
                phase = job.phases[k]
                if not job.ready(k):
                    continue
                waiting = [
                    t
                    for t in np.flatnonzero(phase.state == TaskState.PENDING).tolist()
                    if (job.job_id, phase.phase_id, t) not in originals
                ]
                if waiting:
                    dem = phase.demand.as_array()
                    for row, cl in clone_on.items():
                        assert not (remaining[row] + cl + EPS >= dem).all(), "a clone took an original's room"


@settings(max_examples=80, deadline=None)
@given(
    st.integers(0, 10_000),
    st.integers(1, 12),
    st.integers(1, 10),
    st.integers(1, 3),
    st.integers(0, 3),
    st.sampled_from(["idle", "paper", "none", "dolly"]),
)
def test_algorithm2_invariants(
    seed: int, n_nodes: int, n_jobs: int, dims: int, max_clones: int, rule: str
) -> None:
    snap = random_snapshot(seed, n_nodes, n_jobs, dims)
    policy = get_policy("dollymp", max_clones=max_clones, clone_rule=rule, beta=0.5)
    d = policy.decide(snap)
    check_invariants(snap, d, max_clones)
    assert d.num_placements == len(d.placements)


def reference(snap: Snapshot, d: Decisions, max_clones: int) -> Counter[tuple[str, str, int, str, bool]]:
    """Algorithm 2 as printed, one task at a time, server by server (pure Python, slow, literal)."""
    prio = {p.job_id: (p.priority, p.rank) for p in d.priorities}
    free = {nid: snap.cluster.free[i].copy() for i, nid in enumerate(snap.cluster.node_ids)}
    copies = {(j.job_id, p.phase_id): p.copies.astype(int).copy() for j in snap.jobs for p in j.phases}
    out: Counter[tuple[str, str, int, str, bool]] = Counter()
    for have in range(0, max_clones + 1):  # pass 1 (have = 0 copies) then the clone passes
        queues = {}
        for j in snap.jobs:
            for k in j.topo:
                p = j.phases[k]
                if not j.ready(k) or p.finished:
                    continue
                cp = copies[(j.job_id, p.phase_id)]
                state = p.state
                # No upstream limit: DollyMP Sec. 5.2 lets downstream copies outnumber upstream ones (the
                # first finished upstream copy then feeds them all); Dolly 3.2's limit is the "dolly" rule's.
                limit = 1 + max_clones
                if have == 0:
                    tasks = [t for t in range(p.num_tasks) if state[t] == TaskState.PENDING]
                elif have >= limit:
                    tasks = []
                else:
                    tasks = [
                        t for t in range(p.num_tasks) if cp[t] == have and state[t] != TaskState.FINISHED
                    ]
                fits_somewhere = any(
                    (snap.cluster.capacity[i] + EPS >= p.demand.as_array()).all()
                    for i in range(snap.cluster.size)
                )
                if tasks and fits_somewhere:  # ties: the phase earlier in the job's topological order
                    queues[(j.job_id, k)] = (prio[j.job_id], p, tasks, list(j.topo).index(k))
        for nid in snap.cluster.node_ids:
            for level in sorted({q[0][0] for q in queues.values()}):
                while True:
                    best = None
                    for (jid, _k), ((lv, rank), p, tasks, pos) in queues.items():
                        dem = p.demand.as_array()
                        if lv != level or not tasks or not (free[nid] + EPS >= dem).all():
                            continue
                        key = (-float(free[nid] @ dem), p.demand.values, rank, pos)
                        if best is None or key < best[0]:
                            best = (key, jid, p, tasks)
                    if best is None:
                        break
                    _, jid, p, tasks = best
                    t = tasks.pop(0)
                    free[nid] -= p.demand.as_array()
                    copies[(jid, p.phase_id)][t] += 1
                    out[(jid, p.phase_id, t, nid, have > 0)] += 1
    return out


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 8), st.integers(1, 8), st.integers(1, 3), st.integers(0, 3))
def test_kernel_matches_literal_algorithm2(
    seed: int, n_nodes: int, n_jobs: int, dims: int, max_clones: int
) -> None:
    snap = random_snapshot(seed, n_nodes, n_jobs, dims)
    d = get_policy("dollymp", max_clones=max_clones, clone_rule="idle").decide(snap)
    got = Counter((p.job_id, p.phase_id, p.task_index, p.node_id, p.is_clone) for p in d.iter_placements())
    assert got == reference(snap, d, max_clones)


def test_two_clones_at_most_and_clones_only_with_leftovers() -> None:
    cluster = ClusterState.from_arrays(
        ["a", "b"], np.array([[4.0, 4.0], [4.0, 4.0]]), np.array([[4.0, 4.0], [4.0, 4.0]])
    )
    small = Job("small", 0.0, [Phase("m", 2, Resources.of(1, 1), 5.0, 5.0)])
    d = get_policy("dollymp", clone_rule="idle").decide(Snapshot(0.0, cluster, [small]))
    per_task = Counter(p.task_index for p in d.placements)
    assert per_task == {0: 3, 1: 3}  # original + two clones each, although room is left for more
    assert sum(not p.is_clone for p in d.placements) == 2
    d0 = get_policy("dollymp", max_clones=0).decide(Snapshot(0.0, cluster, [small]))
    assert all(not p.is_clone for p in d0.placements) and d0.num_placements == 2
