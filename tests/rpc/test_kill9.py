"""kill -9 in the middle of a stream of decisions: what the log had committed survives the restart."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import grpc
from rpc_harness import Service, Stream, app, ask, full_batch, node, register

from pyscheduler.objects.decision import DecisionKind
from pyscheduler.store import open_store
from pyscheduler.wire import pb


def _drive(svc: Service, rounds: int, first_app: int) -> int:
    """A shim that commits every placement and completes it one tick later; returns placements seen."""
    placed = 0
    with svc.channel() as ch:
        reg = register(ch)
        s = Stream(ch)
        s.send(
            full_batch(
                reg.session_id,
                nodes_upserted=[node(f"h{i}:1", 4096, 4) for i in range(4)],
            )
        )
        running: list[str] = []
        for seq in range(2, rounds + 2):
            n = first_app + seq
            done = [
                pb.ContainerCompletion(container_id=c, exit_kind=pb.CONTAINER_EXIT_SUCCESS) for c in running
            ]
            plan = s.send(
                pb.StateBatch(
                    session_id=reg.session_id,
                    seq=seq,
                    apps_upserted=[app(n, submit_ms=n)],
                    asks=[ask(n, 20, 3)],
                    containers_completed=done,
                )
            )
            running = []
            for p in plan.placements:
                running += [f"c{p.placement_id}-{k}" for k in range(p.count)]
            placed += len(plan.placements)
        s.close()
    return placed


def test_kill9_keeps_committed_decisions(tmp_path: Path) -> None:
    db = tmp_path / "log.db"
    svc = Service(tmp_path, db=db)
    assert _drive(svc, 40, 0) > 0
    # Read what the log has committed now, while decisions keep coming on a second stream.
    deadline = time.monotonic() + 10
    log = open_store(db)
    try:
        while log.count() == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        committed = {d.id: d.decision for d in log.query(limit=10_000).items}
    finally:
        log.close()
    assert any(d.kind is DecisionKind.PLACEMENT for d in committed.values())
    with svc.channel() as ch:
        reg = register(ch, "rm-other")
        s = Stream(ch)
        s.send(
            full_batch(
                reg.session_id,
                nodes_upserted=[node("x:1")],
                apps_upserted=[app(900)],
                asks=[ask(900, 1, 1)],
            )
        )
        s.send(pb.StateBatch(session_id=reg.session_id, seq=2))
        assert svc.stop(signal.SIGKILL) == -signal.SIGKILL  # mid-stream: no graceful anything
        try:
            s.send(pb.StateBatch(session_id=reg.session_id, seq=3))
            raise AssertionError("the stream outlived the process")
        except grpc.RpcError as exc:
            assert exc.code() == grpc.StatusCode.UNAVAILABLE

    svc2 = Service(tmp_path, db=db)
    try:
        log = open_store(db)
        try:
            after = {d.id: d.decision for d in log.query(limit=10_000).items}
            assert all(after.get(i) == d for i, d in committed.items()), "a committed decision was lost"
            last = max(after)
        finally:
            log.close()
        assert _drive(svc2, 5, 1000) > 0
    finally:
        assert svc2.stop() == 0  # graceful stop flushes the writer
    log = open_store(db)
    try:
        new = log.query(cursor=last, limit=10_000).items
        assert new and all(d.id > last for d in new)
        assert any(d.decision.application_id == f"application_1700000000000_{1002:04d}" for d in new)
        assert all(log.get(i) is not None for i in committed)
    finally:
        log.close()
