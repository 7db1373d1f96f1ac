"""The live service on an injected clock (DecisionService(cfg, clock)): its decisions follow that clock,
not wall time, so the simulator can run the service's own code on simulated time."""

from __future__ import annotations

from pathlib import Path

from pyscheduler.core.clock import ManualClock
from pyscheduler.sim.live.records import EPOCH_S
from pyscheduler.sim.live.transport import Direct, service_of
from pyscheduler.wire import pb

APP = "application_1700000000000_0001"
ATTEMPT = "appattempt_1700000000000_0001_000001"


def _batch(session_id: str, seq: int, clock: ManualClock) -> object:
    b = pb.StateBatch(
        session_id=session_id, seq=seq, full_resync=seq == 1, rm_time_ms=int(clock.now() * 1000)
    )
    b.nodes_upserted.add(
        node_id="node00.sim:8041",
        state=pb.NODE_STATE_RUNNING,
        capacity=pb.Resource(memory_mb=4096, vcores=4),
        allocated=pb.Resource(memory_mb=0, vcores=0),
    )
    if seq == 1:
        b.apps_upserted.add(
            application_id=APP, attempt_id=ATTEMPT, queue="default", name="j", submit_time_ms=1
        )
        b.asks.add(
            attempt_id=ATTEMPT,
            priority=20,
            capability=pb.Resource(memory_mb=1024, vcores=1),
            num_containers=1,
            relax_locality=True,
        )
    return b


def test_unconfirmed_placements_expire_on_the_injected_clock(tmp_path: Path) -> None:
    clock = ManualClock(EPOCH_S)
    direct = Direct(service_of(tmp_path, clock, {"policy.name": "fcfs", "sync.outstanding_ttl_s": 30.0}))
    try:
        reg = direct.register(pb.RegisterRequest(rm_id="rm", tick_ms=1000))
        placed = [sum(p.count for p in direct.sync(_batch(reg.session_id, 1, clock)).placements)]
        for seq, dt in ((2, 10.0), (3, 19.0), (4, 2.0)):  # never committed by the shim: 10, 29, 31 s later
            clock.advance(dt)
            placed.append(sum(p.count for p in direct.sync(_batch(reg.session_id, seq, clock)).placements))
    finally:
        direct.close()
    # placed once; the ask is covered by its outstanding placement until it is 30 s old on the clock
    # (a few milliseconds of wall time), then placed again
    assert placed == [1, 0, 0, 1]
