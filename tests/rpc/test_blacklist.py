"""An attempt's blacklist (Ask.blacklist: the AM's own, or the RM's AM blacklist for the AM container) is
honoured by every path that places containers: the yarn-fcfs placer, a core policy's round (such asks go to
the placer after the core, which knows no node constraints), AM spreading and the wire validation."""

from __future__ import annotations

import pytest
from round_memories import memory_of, run_round
from rpc_harness import app, ask, full_batch, node

from pyscheduler import policies
from pyscheduler.service.rmproxy.validate import InvalidMessage, state_batch
from pyscheduler.service.round.coreround import core_round
from pyscheduler.service.round.policy import round_for
from pyscheduler.service.round.translate import to_snapshot
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.wire import pb

NODES = [node(f"h{i}:1", 8192, 8, rack="/r1" if i < 2 else "/r2") for i in range(4)]


def _mirror(*asks: pb.Ask) -> Mirror:
    m = Mirror()
    m.apply(
        full_batch("s", nodes_upserted=NODES, apps_upserted=[app(1), app(2, submit_ms=2000)], asks=list(asks))
    )
    return m


def _nodes(result: object, m: Mirror, n: int) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in result.placements:  # type: ignore[attr-defined]
        if p.key[0].endswith(f"_{n:04d}_000001"):
            out[p.node_id] = out.get(p.node_id, 0) + p.count
    return out


@pytest.mark.parametrize("round_name", ["yarn-fcfs", "dollymp", "fcfs"])
def test_no_container_goes_to_a_blacklisted_node_or_rack(round_name: str) -> None:
    # app 1 excludes node h0 (by node id) and rack /r2 (h2, h3): only h1 may take its 12 containers
    m = _mirror(
        ask(1, 20, 12, mem=1024, cores=1, blacklist=["h0:1", "/r2"]), ask(2, 20, 4, mem=1024, cores=1)
    )
    result = run_round(round_for(round_name), m)
    placed = _nodes(result, m, 1)
    assert placed == {"h1:1": 8}, placed  # h1 has room for 8; the rest waits
    deferred = [d for d in result.deferrals if d.key[0].endswith("_0001_000001")]
    assert deferred and "off its blacklist" in deferred[0].detail
    assert sum(_nodes(result, m, 2).values()) == 4  # the other application is unaffected


def test_a_host_name_blacklists_every_node_of_that_host() -> None:
    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("a:1"), node("a:2"), node("b:1")],
            apps_upserted=[app(1)],
            asks=[ask(1, 20, 3, mem=512, blacklist=["a"])],
        )
    )
    assert set(_nodes(run_round(round_for("yarn-fcfs"), m), m, 1)) == {"b:1"}


def test_blacklisted_asks_are_left_to_the_placer_and_am_spreading_avoids_them() -> None:
    m = _mirror(ask(1, 0, 1, mem=512, am=True, blacklist=["h0:1", "h1:1", "h2:1"]), ask(2, 20, 2, mem=512))
    _, index, _ = to_snapshot(m, memory_of(m), 10.0)
    assert all(a.key[0].endswith("_0002_000001") for a in index.values())  # the core sees app 2 only
    result = core_round(policies.get_policy("dollymp"), clock=lambda: 10.0)(m, memory_of(m))
    assert _nodes(result, m, 1) == {"h3:1": 1}
    assert sum(_nodes(result, m, 2).values()) == 2


def test_the_mirror_keeps_the_blacklist_and_a_later_ask_replaces_it() -> None:
    m = _mirror(ask(1, 20, 2, blacklist=["h0:1"]))
    assert m.asks[next(iter(m.asks))].blacklist == ("h0:1",)
    m.apply(pb.StateBatch(session_id="s", seq=2, asks=[ask(1, 20, 2)]))
    assert m.asks[next(iter(m.asks))].blacklist == ()
    assert set(_nodes(run_round(round_for("yarn-fcfs"), m), m, 1)) == {"h0:1"}


def test_an_empty_blacklist_entry_is_rejected_with_its_field_path() -> None:
    batch = full_batch(
        "s", nodes_upserted=NODES, apps_upserted=[app(1)], asks=[ask(1, 20, 1, blacklist=["h0:1", ""])]
    )
    with pytest.raises(InvalidMessage, match=r"asks\[0\]\.blacklist\[1\]"):
        state_batch(batch)
