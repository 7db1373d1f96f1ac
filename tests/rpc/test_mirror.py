"""The mirror's accounting of placements not yet confirmed by the shim."""

from __future__ import annotations

from rpc_harness import app, ask, attempt, full_batch, node

from pyscheduler.service.state.mirror import Mirror, OutstandingPlacement
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb

KEY = (attempt(1), 20, -1)


def _mirror() -> Mirror:
    m = Mirror()
    m.apply(
        full_batch("s", nodes_upserted=[node("h1:1", 8192, 8)], apps_upserted=[app(1)], asks=[ask(1, 20, 4)])
    )
    m.add_placement(OutstandingPlacement("p1", KEY, "h1:1", Res(1024, 1), 3, created_s=100.0))
    return m


def _container(cid: str, placement_id: str = "p1") -> pb.ContainerInfo:
    return pb.ContainerInfo(
        container_id=cid,
        attempt_id=attempt(1),
        node_id="h1:1",
        priority=20,
        allocation_request_id=-1,
        resource=pb.Resource(memory_mb=1024, vcores=1),
        placement_id=placement_id,
    )


def test_outcomes_and_containers_are_not_double_counted() -> None:
    m = _mirror()
    assert m.nodes["h1:1"].free() == Res(8192 - 3072, 8 - 3) and m.asks[KEY].outstanding == 3
    # The shim reports the commit of 2 containers twice over: an outcome and the containers themselves.
    m.apply(
        pb.StateBatch(
            session_id="s",
            seq=2,
            outcomes=[pb.PlacementOutcome(placement_id="p1", kind=pb.PLACEMENT_COMMITTED, containers=2)],
        )
    )
    assert m.outstanding["p1"].remaining() == 1 and m.asks[KEY].outstanding == 1
    m.apply(pb.StateBatch(session_id="s", seq=3, containers_allocated=[_container("c1"), _container("c2")]))
    assert m.outstanding["p1"].remaining() == 1  # max(outcomes, containers), not their sum
    # 2 containers used + 1 outstanding.
    assert m.nodes["h1:1"].free() == Res(8192 - 3072, 8 - 3)
    m.apply(
        pb.StateBatch(
            session_id="s",
            seq=4,
            outcomes=[pb.PlacementOutcome(placement_id="p1", kind=pb.PLACEMENT_DROPPED_DOES_NOT_FIT)],
        )
    )
    assert "p1" not in m.outstanding and m.asks[KEY].outstanding == 0
    assert m.nodes["h1:1"].free() == Res(8192 - 2048, 8 - 2)


def test_unconfirmed_placements_age_out() -> None:
    m = _mirror()
    assert m.expire(now_s=110.0, ttl_s=30.0) == 0 and "p1" in m.outstanding
    assert m.expire(now_s=131.0, ttl_s=30.0) == 1 and not m.outstanding
    assert m.nodes["h1:1"].free() == Res(8192, 8) and m.asks[KEY].outstanding == 0


def test_removing_a_node_or_app_forgets_its_records() -> None:
    m = _mirror()
    m.apply(pb.StateBatch(session_id="s", seq=2, containers_allocated=[_container("c9", "")]))
    m.apply(pb.StateBatch(session_id="s", seq=3, nodes_removed=["h1:1"]))
    assert not m.nodes and not m.containers and not m.outstanding and m.asks[KEY].outstanding == 0
    m.apply(pb.StateBatch(session_id="s", seq=4, apps_removed=["application_1700000000000_0001"]))
    assert not m.asks and not m.apps
    assert m.app_ids_with_asks() == set() and m.containers_of("application_1700000000000_0001") == 0
