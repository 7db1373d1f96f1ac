"""Backpressure: a shim faster than the core gets coalesced plans and bounded queues, not growth."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator

import grpc
import pytest
from rpc_harness import app, ask, full_batch, node

from pyscheduler.objects.decision import NullRecorder
from pyscheduler.service.rmproxy.server import GrpcServer, ServerOptions
from pyscheduler.service.rmproxy.servicer import SchedulerServicer, SyncOptions
from pyscheduler.service.rmproxy.session import SessionRegistry
from pyscheduler.service.round.plan import RoundResult
from pyscheduler.service.round.policy import round_for
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.state.mirror import Mirror
from pyscheduler.wire import pb, pb_grpc


def test_slow_core_coalesces_and_bounds_the_queue() -> None:
    fcfs = round_for("yarn-fcfs")

    def slow_round(m: Mirror, memory: RoundMemory) -> RoundResult:
        # Fault injection (a core slower than the shim cannot be caused on demand otherwise): 50 ms a round.
        time.sleep(0.05)
        return fcfs(m, memory)

    servicer = SchedulerServicer(
        SessionRegistry(), slow_round, "slow", NullRecorder(), SyncOptions(queue_size=4)
    )
    server = GrpcServer(servicer, ServerOptions(port=0))
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
            stub = pb_grpc.SchedulerServiceStub(ch)
            sid = stub.Register(pb.RegisterRequest(rm_id="fast-shim"), timeout=10).session_id
            n = 200

            def batches() -> Iterator[pb.StateBatch]:
                yield full_batch(sid, nodes_upserted=[node("h1:1", 1 << 20, 1 << 10)], apps_upserted=[app(1)])
                for seq in range(2, n + 1):  # as fast as gRPC takes them
                    yield pb.StateBatch(session_id=sid, seq=seq, asks=[ask(1, 20, seq)])

            start = time.monotonic()
            plans = list(stub.Sync(batches(), timeout=60))
            elapsed = time.monotonic() - start
        seqs = [p.in_reply_to_seq for p in plans]
        assert seqs == sorted(set(seqs)) and seqs[-1] == n  # every batch answered, in order, none twice
        assert all(p.status == pb.BATCH_ACCEPTED for p in plans)
        assert len(plans) <= n / 3, f"{len(plans)} rounds for {n} batches: not coalesced"
        assert elapsed < 0.05 * n / 2  # far less than one slow round per batch
        epochs = [p.epoch for p in plans]
        assert epochs == sorted(set(epochs))
        # The last plan places the final ask (replace semantics: 200 containers) in full, across rounds.
        assert sum(pl.count for p in plans for pl in p.placements) == n
        st = servicer.stats
        assert st.max_queue_depth <= 4 and st.max_coalesced >= 3 and st.batches == n
    finally:
        server.stop(1.0)


def test_shutdown_finishes_the_round_in_flight() -> None:
    fcfs = round_for("yarn-fcfs")
    started = threading.Event()

    def slow_round(m: Mirror, memory: RoundMemory) -> RoundResult:
        started.set()
        time.sleep(0.5)  # fault injection: a long round, so that the stop lands in the middle of it
        return fcfs(m, memory)

    servicer = SchedulerServicer(SessionRegistry(), slow_round, "slow", NullRecorder())
    server = GrpcServer(servicer, ServerOptions(port=0))
    server.start()
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as ch:
        stub = pb_grpc.SchedulerServiceStub(ch)
        sid = stub.Register(pb.RegisterRequest(rm_id="rm"), timeout=10).session_id
        outbox: queue.Queue[pb.StateBatch | None] = queue.Queue()
        outbox.put(
            full_batch(sid, nodes_upserted=[node("h1:1")], apps_upserted=[app(1)], asks=[ask(1, 1, 1)])
        )
        call = stub.Sync(iter(outbox.get, None), timeout=30)
        assert started.wait(10)
        stopper = threading.Thread(target=server.stop, args=(5.0,))
        stopper.start()
        plan = next(call)  # the round in flight still answers
        assert plan.status == pb.BATCH_ACCEPTED and len(plan.placements) == 1
        with pytest.raises(grpc.RpcError) as err:
            next(call)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE and "shutting down" in (
            err.value.details() or ""
        )
        outbox.put(None)
        stopper.join(10)
        with pytest.raises(grpc.RpcError):
            stub.Register(pb.RegisterRequest(rm_id="rm"), timeout=2)
