"""The translation's caches (cluster rows, jobs) give exactly what a fresh translation gives."""

from __future__ import annotations

import random

import numpy as np
from round_memories import memory_of
from rpc_harness import app, ask, attempt, full_batch, node

from pyscheduler.service.round.clusterview import cluster_of
from pyscheduler.service.round.translate import to_snapshot
from pyscheduler.service.state.mirror import Mirror, OutstandingPlacement
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb


def test_incremental_rows_match_a_full_rebuild() -> None:
    rng = random.Random(7)
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node(f"h{i:02d}:1", 8192, 8) for i in range(20)],
            apps_upserted=[app(1)],
            asks=[ask(1, 20, 5)],
        )
    )
    to_snapshot(m, memory_of(m), 0.0)
    for seq in range(2, 40):
        b = pb.StateBatch(session_id="s", seq=seq)
        for i in rng.sample(range(20), 5):
            state = pb.NODE_STATE_UNHEALTHY if rng.random() < 0.1 else pb.NODE_STATE_RUNNING
            b.nodes_upserted.append(
                node(f"h{i:02d}:1", 8192, 8, alloc=(rng.randint(0, 8) * 1024, rng.randint(0, 8)), state=state)
            )
        cid = f"c{seq}"
        b.containers_allocated.add(
            container_id=cid,
            attempt_id=attempt(1),
            node_id=f"h{seq % 20:02d}:1",
            priority=20,
            allocation_request_id=-1,
            resource=pb.Resource(memory_mb=512, vcores=1),
        )
        if seq % 3 == 0:
            b.containers_completed.add(container_id=f"c{seq - 1}", exit_kind=pb.CONTAINER_EXIT_SUCCESS)
        m.apply(b)
        if seq % 4 == 0:
            nid = f"h{rng.randrange(20):02d}:1"
            if nid in m.nodes:
                m.add_placement(
                    OutstandingPlacement(f"p{seq}", (attempt(1), 20, -1), nid, Res(1024, 1), 1, 0.0)
                )
        got = cluster_of(m, memory_of(m))
        memory_of(m).cluster = None
        want = cluster_of(m, memory_of(m))  # built from scratch
        assert got.node_ids == want.node_ids
        assert np.array_equal(got.capacity, want.capacity)
        assert np.array_equal(got.free, want.free), seq


def test_jobs_are_reused_until_their_asks_change() -> None:
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("h1:1")],
            apps_upserted=[app(1), app(2)],
            asks=[ask(1, 20, 5), ask(2, 20, 2)],
        )
    )
    snap1, _, _ = to_snapshot(m, memory_of(m), 0.0)
    snap2, _, _ = to_snapshot(m, memory_of(m), 1.0)
    assert [id(j) for j in snap1.jobs] == [id(j) for j in snap2.jobs]
    m.apply(pb.StateBatch(session_id="s", seq=2, asks=[ask(2, 20, 1)]))
    snap3, index, _ = to_snapshot(m, memory_of(m), 2.0)
    assert snap3.jobs[0] is snap1.jobs[0] and snap3.jobs[1] is not snap1.jobs[1]
    assert [p.num_tasks for p in snap3.jobs[1].phases] == [1]
    assert index[(snap3.jobs[1].job_id, snap3.jobs[1].phases[0].phase_id)].key == (attempt(2), 20, -1)
    m.apply(pb.StateBatch(session_id="s", seq=3, apps_removed=["application_1700000000000_0001"]))
    snap4, _, _ = to_snapshot(m, memory_of(m), 3.0)
    assert [j.job_id for j in snap4.jobs] == ["application_1700000000000_0002"]
    assert set(memory_of(m).jobs) == {"application_1700000000000_0002"}


def test_an_application_without_an_am_helper_is_profiled_from_its_own_containers() -> None:
    """No hint for app 1's priority 20 (no AM helper): θ is 1 s until one of its task containers ends
    successfully, then the mean and SD of their run times; the AM's container, a killed container and
    another priority's say nothing about it, and an application that leaves takes its figures along."""
    m = Mirror()
    m.apply(
        full_batch("s", nodes_upserted=[node("h1:1", 8192, 8)], apps_upserted=[app(1)], asks=[ask(1, 20, 3)])
    )
    (job,) = to_snapshot(m, memory_of(m), 0.0)[0].jobs
    assert (job.phases[0].mean, job.phases[0].sd) == (1.0, 0.0)
    b = pb.StateBatch(session_id="s", seq=2)
    for cid, prio, am, start in (("am", 0, True, 1000), ("t1", 20, False, 2000), ("t2", 20, False, 2000),
                                 ("k1", 20, False, 2000), ("o1", 30, False, 2000)):  # fmt: skip
        b.containers_allocated.add(
            container_id=cid, attempt_id=attempt(1), node_id="h1:1", priority=prio, am_container=am,
            allocation_request_id=-1, resource=pb.Resource(memory_mb=512, vcores=1), start_time_ms=start,
        )  # fmt: skip
    m.apply(b)
    done = pb.StateBatch(session_id="s", seq=3)
    ok, killed = pb.CONTAINER_EXIT_SUCCESS, pb.CONTAINER_EXIT_KILLED
    for cid, kind, end in (("am", ok, 90_000), ("t1", ok, 12_000), ("t2", ok, 22_000), ("k1", killed, 99_000),
                           ("o1", ok, 99_000)):  # fmt: skip
        done.containers_completed.add(container_id=cid, exit_kind=kind, finish_time_ms=end)
    m.apply(done)
    (job,) = to_snapshot(m, memory_of(m), 0.0)[0].jobs
    assert job.phases[0].mean == 15.0  # t1 ran 10 s, t2 20 s
    assert job.phases[0].sd == np.std([10.0, 20.0], ddof=1)
    m.apply(pb.StateBatch(session_id="s", seq=4, apps_removed=[app(1).application_id]))
    assert m.run_times == {}
