"""The live mechanism in the simulator (pyscheduler/sim/live): one small seeded workload through the real
decision service in-process and over gRPC yields the same placements, containers, clones and kills."""

from __future__ import annotations

from pyscheduler.sim.live import LiveOptions, LiveRecord, run, small_mapreduce
from pyscheduler.sim.live.compare import bench_service

# 4 MapReduce jobs on 4 nodes of 4 vcores under the cluster benchmark's policy (clones at launch for small
# jobs, late copies, phase tails): with this seed's draws the AM kills the losing copies and the service
# preempts clones both to make room for waiting originals and as beaten by their task's lead
SEED = 4


def _run(seed: int = SEED, transport: str = "direct") -> LiveRecord:
    options = LiveOptions(transport=transport, service=bench_service())
    return run(small_mapreduce(seed), options)


def test_direct_and_grpc_decide_alike() -> None:
    direct = _run(transport="direct")
    over_grpc = _run(transport="grpc")
    assert direct.placements == over_grpc.placements
    assert direct.containers == over_grpc.containers
    assert direct.clones == over_grpc.clones
    assert direct.kills == over_grpc.kills
    assert direct.key() == over_grpc.key()
    # non-trivial: clones launched, copies killed (by the AM and by the service's plan), every job done
    assert direct.clones
    assert any(k[4] == "am" for k in direct.kills)
    assert {k[5] for k in direct.kills if k[4] == "service"} == {"clone_yields", "clone_beaten"}
    assert len(direct.flowtimes) == len(small_mapreduce(SEED).jobs)
    assert all(f > 0 for f in direct.flowtimes.values())


def test_same_seed_same_record_other_seed_another() -> None:
    first, again = _run(), _run()
    assert first.key() == again.key()
    other = _run(seed=SEED + 1)
    assert other.key() != first.key()
    assert sorted(other.flowtimes.values()) != sorted(first.flowtimes.values())


def test_every_container_is_a_placement_of_the_plan_before() -> None:
    rec = _run()
    placed = {(t, node) for t, _, _, node, _, _, _ in rec.placements}
    for t, _, _, node, _ in rec.containers:
        assert (t, node) in placed  # committed as the plan arrives (commit=plan, the shim's default)
    started = {c[2] for c in rec.containers}
    for _, _, attempt, container, who, _ in rec.kills:
        if who == "service":
            assert container and attempt in started
