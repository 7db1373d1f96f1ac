"""Hostile tenant, sessions and streams: another connection's session id, idle stream floods, idle
streams held open, Register floods; each refused naming its limit while a good session keeps scheduling."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import hostile
from rpc_harness import Stream, app, ask, full_batch, in_process_service, node, register

from pyscheduler.wire import pb, pb_grpc

EXHAUSTED = (grpc.StatusCode.RESOURCE_EXHAUSTED,)


def _idle_stream(ch: grpc.Channel) -> tuple[Any, threading.Event]:
    """A Sync stream that sends nothing until `done` is set."""
    done = threading.Event()

    def nothing() -> Iterator[Any]:
        done.wait(30)
        return
        yield  # a generator that yields nothing

    call = pb_grpc.SchedulerServiceStub(ch).Sync(nothing(), timeout=30)
    return call, done


def _ends(calls: list[Any], wait_s: float) -> list[grpc.RpcError | None]:
    """Each stream's error if it ended within `wait_s` (None: still open), read in parallel."""
    out: list[grpc.RpcError | None] = [None] * len(calls)

    def read(i: int) -> None:
        try:
            next(calls[i])
        except grpc.RpcError as exc:
            out[i] = exc
        except StopIteration:
            pass

    threads = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(len(calls))]
    for t in threads:
        t.start()
    deadline = time.monotonic() + wait_s
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    return list(out)


def test_a_batch_with_another_connections_session_is_refused(tmp_path: Path) -> None:
    """The session id is in the decision log for anyone to read; a batch carrying it on another
    connection ends that stream with PERMISSION_DENIED and the real session goes on at its next seq."""
    attack = "another connection's session id"
    svc = in_process_service(tmp_path)
    good = hostile.GoodTenant(svc.port)
    try:
        base = good.median_ms()
        for seq in (good.seq + 1, good.seq + 5, 1):  # the next seq, a gap, a full resync
            with hostile.connection(svc.port) as ch:
                s = Stream(ch)
                batch = pb.StateBatch(
                    session_id=good.reg.session_id,
                    seq=seq,
                    full_resync=seq == 1,
                    nodes_upserted=[node("evil:1", 1 << 20, 1024)],
                    apps_upserted=[app(666)],
                    asks=[ask(666, 1, 100)],
                )
                err = hostile.attempt(
                    attack,
                    lambda b=batch, s=s: s.send(b),
                    (grpc.StatusCode.PERMISSION_DENIED,),
                    "session_id: bound to the connection that registered it",
                )
                assert err is not None and err.code() == grpc.StatusCode.PERMISSION_DENIED, err
                s.close()
        assert good.unaffected(attack, base), good.why  # same seq numbering: nothing was applied
        dump = svc.state_dump()["rm-good"]
        assert "evil:1" not in dump["mirror"]["nodes"] and dump["state"] == "active"
    finally:
        good.close()
        svc.stop()
    r = hostile.row(attack)
    assert r.clear_errors == r.inputs == 3 and r.crashes == r.hangs == r.cross_tenant == 0


def test_idle_stream_floods_leave_register_working(tmp_path: Path) -> None:
    """32 idle Sync streams on one connection, then 32 on as many connections (32 workers): past
    limits.streams_per_peer and past the workers' reserve they are refused at once, Register still
    answers in time, and the good session keeps scheduling."""
    attack = "idle Sync stream flood (streams per peer, in all)"
    svc = in_process_service(tmp_path, **{"grpc.max_workers": 32})
    good = hostile.GoodTenant(svc.port)
    held: list[threading.Event] = []
    channels: list[grpc.Channel] = []
    try:
        base = good.median_ms()
        ch = hostile.connection(svc.port)
        channels.append(ch)
        one_peer = []
        for _ in range(32):
            call, done = _idle_stream(ch)
            held.append(done)
            one_peer.append(call)
        refused = _ends(one_peer, 2.0)
        row = hostile.row(attack)
        for e in refused:
            row.inputs += 1
            if e is not None and e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                assert "limit 4 (limits.streams_per_peer)" in (e.details() or "")
                row.clear_errors += 1
        assert sum(e is not None for e in refused) == 28  # 4 stay open
        row.bounded += 4
        many = []
        for _ in range(32):
            c = hostile.connection(svc.port)
            channels.append(c)
            call, done = _idle_stream(c)
            held.append(done)
            many.append(call)
        errs = _ends(many, 2.0)
        for e in errs:
            row.inputs += 1
            if e is not None and e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                assert "(grpc.max_workers minus limits.stream_reserve)" in (e.details() or "")
                row.clear_errors += 1
        # 28 streams in all (32 workers - 4 reserved): the good one, 4 + 23 of the attacker's
        assert sum(e is not None for e in errs) == 32 - 23, [(e.code(), e.details()) for e in errs if e]
        row.bounded += 23
        t0 = time.monotonic()
        with hostile.connection(svc.port) as fresh:
            register(fresh, "rm-late")
        assert time.monotonic() - t0 < 2.0, "Register waited for a worker"
        assert good.unaffected(attack, base), good.why
    finally:
        for d in held:
            d.set()
        for c in channels:
            c.close()
        good.close()
        svc.stop()
    r = hostile.row(attack)
    assert r.crashes == r.hangs == r.cross_tenant == 0


def test_idle_streams_are_closed_and_sessions_are_bounded_and_reaped(tmp_path: Path) -> None:
    svc = in_process_service(
        tmp_path, **{"limits.sync_idle_s": 1.0, "limits.sessions": 4, "limits.session_idle_s": 3.0}
    )
    good: hostile.GoodTenant | None = None
    try:
        with hostile.connection(svc.port) as ch:
            call, done = _idle_stream(ch)
            t0 = time.monotonic()
            err = hostile.attempt(
                "idle Sync stream (timeout)",
                lambda: next(call),
                (grpc.StatusCode.DEADLINE_EXCEEDED,),
                "no StateBatch for 1 s, limit 1 s (limits.sync_idle_s)",
            )
            done.set()
            assert err is not None and 0.9 < time.monotonic() - t0 < 5
            attack = "Register flood (sessions)"
            good = hostile.GoodTenant(svc.port)  # its stream is never idle for a second
            for i in range(3):  # with the good one: 4 live sessions
                register(ch, f"rm-flood-{i}")
            err = hostile.attempt(
                attack,
                lambda: register(ch, "rm-flood-x"),
                EXHAUSTED,
                "rm_id: 4 live sessions, limit 4 (limits.sessions)",
            )
            assert err is not None
            register(ch, "rm-flood-0")  # a registered rm_id may always register again
            # the good session keeps its stream busy; the flood's sessions go idle and are reaped
            deadline = time.monotonic() + 3.5
            while time.monotonic() < deadline:
                good.round()
                time.sleep(0.2)
            register(ch, "rm-after-reaping")
            assert svc.registry.reaped == 3
            assert {s.rm_id for s in svc.registry.sessions()} == {"rm-good", "rm-after-reaping"}
            hostile.row(attack).bounded += 1
            assert good.round()[0] > 0
    finally:
        if good is not None:
            good.close()
        svc.stop()
    for name in ("idle Sync stream (timeout)", "Register flood (sessions)"):
        r = hostile.row(name)
        assert r.crashes == r.hangs == r.cross_tenant == 0


def test_good_session_survives_a_full_resync_on_its_own_connection(tmp_path: Path) -> None:
    """The binding does not get in the shim's way: it registers again on its connection and resyncs."""
    svc = in_process_service(tmp_path)
    try:
        with hostile.connection(svc.port) as ch:
            for _ in range(2):
                reg = register(ch, "rm-shim")
                s = Stream(ch)
                plan = s.send(
                    full_batch(
                        reg.session_id,
                        nodes_upserted=[node("h:1")],
                        apps_upserted=[app(1)],
                        asks=[ask(1, 1, 1)],
                    )
                )
                assert plan.status == pb.BATCH_ACCEPTED and plan.placements
                s.close()
    finally:
        svc.stop()
