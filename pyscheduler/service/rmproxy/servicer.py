"""The SchedulerService servicer: Register and the Sync stream.

Sync runs two threads per stream: a reader that deserializes and validates each StateBatch and
puts it on a bounded queue (when the queue is full the reader stops reading, so gRPC flow control
pushes back on the shim: no unbounded growth), and the handler that takes everything queued,
applies it batch by batch and runs ONE decision round for the lot (coalescing when the core is
slower than the shim). A malformed batch ends that stream with INVALID_ARGUMENT naming the field;
other streams are untouched.

Requests are deserialized by `lenient`, which never raises: bytes that are not a valid message
become `Malformed`, answered with INVALID_ARGUMENT (gRPC's own deserializer path says INTERNAL).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import grpc

from pyscheduler import __version__, metrics
from pyscheduler.core.clock import Clock, MonotonicClock
from pyscheduler.echo import detail
from pyscheduler.objects.decision import DecisionRecorder
from pyscheduler.service import roundsfirst
from pyscheduler.service.limits import DEFAULTS, Limits, Refusal
from pyscheduler.service.rmproxy import validate
from pyscheduler.service.rmproxy.callers import caller_of
from pyscheduler.service.rmproxy.gcpace import GcPacer
from pyscheduler.service.rmproxy.session import (
    Denied,
    RoundFn,
    RoundRecords,
    Session,
    SessionRegistry,
)
from pyscheduler.service.rmproxy.stats import ServiceStats
from pyscheduler.service.rmproxy.streams import StreamGate
from pyscheduler.service.state.mirror import ContainerRec, FinishedRuns
from pyscheduler.wire import pb

SERVICE_NAME = "dollymp.v1.SchedulerService"
log = logging.getLogger("dollymp.sync")


@dataclass(frozen=True, slots=True)
class Malformed:
    """What `lenient` returns for bytes that do not parse as the expected message."""

    message_type: str
    error: str

    def describe(self) -> str:
        return f"{self.message_type}: not a valid protobuf message ({self.error or 'parse error'})"


def lenient(message_cls: Any) -> Callable[[bytes], Any]:
    def deserialize(data: bytes) -> Any:
        try:
            return message_cls.FromString(data)
        except Exception as exc:  # google.protobuf.message.DecodeError and friends
            return Malformed(message_cls.DESCRIPTOR.name, str(exc))

    return deserialize


@dataclass(frozen=True, slots=True)
class SyncOptions:
    queue_size: int = 64  # batches buffered per stream before the reader stops reading
    max_coalesce: int = 64  # batches applied before one decision round at most
    outstanding_ttl_s: float = 30.0  # placements never confirmed by the shim are forgotten after this
    limits: Limits = DEFAULTS  # streams, idle time (service/limits.py)
    workers: int = 32  # the gRPC server's worker threads (grpc.max_workers)


_END = object()
_BOUND = "session_id: bound to the connection that registered it"


@dataclass(frozen=True, slots=True)
class _Checked:
    """A validated batch, with its upserted nodes' (node_id, wire bytes) and its containers' records
    (for Mirror.apply)."""

    batch: Any
    node_wires: validate.NodeWires
    containers: list[ContainerRec]


class SchedulerServicer:
    def __init__(
        self,
        registry: SessionRegistry,
        round_fn: RoundFn,
        policy_name: str,
        recorder: DecisionRecorder,
        options: SyncOptions | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.registry = registry
        # the rounds' time for the outstanding placements' TTL (a simulator runs the service on its own)
        self.clock: Clock = clock if clock is not None else MonotonicClock()
        self.round_fn = round_fn
        self.policy_name = policy_name
        self.recorder = recorder
        self.options = options or SyncOptions()
        self.stats = ServiceStats()
        self.draining = threading.Event()
        self.pacer: GcPacer | None = None  # set by DecisionService.start(manage_gc=True)
        self.gate = StreamGate(self.options.limits, self.options.workers)
        # called with a round's records before its plan is sent (DecisionService: log, then send)
        self.before_send: Callable[[list[RoundRecords]], None] | None = None
        # called with the applications the RM removed (their run times), before the next round, off the
        # session's lock (DecisionService: the recurring-job history, service/state/runhistory.py)
        self.on_finished: Callable[[list[FinishedRuns]], None] | None = None

    # ---- Register ----------------------------------------------------------------------------

    def register(self, request: Any, context: grpc.ServicerContext) -> Any:
        if isinstance(request, Malformed):
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, detail(request.describe()))
        if self.draining.is_set():
            context.abort(grpc.StatusCode.UNAVAILABLE, "service shutting down")
        try:
            validate.register_request(request)
        except validate.InvalidMessage as exc:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, detail(str(exc)))
        peer = context.peer()
        try:
            s = self.registry.register(
                request.rm_id, request.tick_ms, list(request.resource_types), peer, caller_of(peer)
            )
        except Denied as exc:
            context.abort(grpc.StatusCode.PERMISSION_DENIED, detail(str(exc)))
        except Refusal as exc:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, detail(str(exc)))
        return pb.RegisterResponse(
            session_id=s.session_id, policy=self.policy_name, service_version=__version__, epoch=s.first_epoch
        )

    # ---- Sync --------------------------------------------------------------------------------

    def sync(self, request_iterator: Iterator[Any], context: grpc.ServicerContext) -> Iterator[Any]:
        peer = context.peer()
        refused = self.gate.enter(peer)
        if refused is not None:
            context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, detail(refused))
        try:
            yield from self._sync(request_iterator, context, peer)
        finally:
            self.gate.leave(peer)

    def _sync(
        self, request_iterator: Iterator[Any], context: grpc.ServicerContext, peer: str
    ) -> Iterator[Any]:
        q: queue.Queue[object] = queue.Queue(maxsize=self.options.queue_size)
        stop = threading.Event()
        context.add_callback(stop.set)
        reader = threading.Thread(target=self._read, args=(request_iterator, q, stop), daemon=True)
        reader.start()
        try:
            while True:
                items = self._take(q, stop)
                if items is None:  # draining, or the client went away
                    if self.draining.is_set():
                        context.abort(grpc.StatusCode.UNAVAILABLE, "service shutting down")
                    return
                if not items:
                    idle = self.options.limits.sync_idle_s
                    context.abort(
                        grpc.StatusCode.DEADLINE_EXCEEDED,
                        f"sync: no StateBatch for {idle:g} s, limit {idle:g} s (limits.sync_idle_s)",
                    )
                records: list[RoundRecords] = []
                with roundsfirst.round_running():  # AM work waits at its checkpoints meanwhile
                    plans, error, ended = self._process(items, records, peer)
                if self.before_send is not None and records:
                    self.before_send(records)  # placements logged before their plan goes out
                    records = []
                try:
                    yield from plans
                finally:  # without `before_send`: logged once their plans are out (or the stream ended)
                    for r in records:
                        self.recorder.append(r.build())
                if self.pacer is not None:  # the gap before the next batch: collect there, not mid-round
                    resync = any(isinstance(i, _Checked) and i.batch.full_resync for i in items)
                    self.pacer.between_rounds(settle=resync)
                if error is not None:
                    with self.stats.lock:
                        self.stats.rejected_batches += 1
                    code = grpc.StatusCode.PERMISSION_DENIED if error.startswith(_BOUND) else None
                    context.abort(code or grpc.StatusCode.INVALID_ARGUMENT, detail(error))
                if ended:
                    return
        finally:
            stop.set()

    def _read(self, it: Iterator[Any], q: queue.Queue[object], stop: threading.Event) -> None:
        memo = validate.NodeMemo()
        try:
            for msg in it:
                if isinstance(msg, Malformed):
                    item: object = msg.describe()
                else:
                    c0 = time.thread_time()
                    try:
                        recs: list[ContainerRec] = []
                        item = _Checked(msg, validate.state_batch(msg, memo, recs), recs)
                    except validate.InvalidMessage as exc:
                        item = str(exc)
                    with self.stats.lock:
                        self.stats.validate_cpu_s += time.thread_time() - c0
                if not self._put(q, item, stop) or isinstance(item, str):
                    return
        except Exception:  # the stream was cancelled or broke: nothing more to read
            pass
        finally:
            self._put(q, _END, stop)

    @staticmethod
    def _put(q: queue.Queue[object], item: object, stop: threading.Event) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.2)
                return True
            except queue.Full:
                continue
        return False

    def _take(self, q: queue.Queue[object], stop: threading.Event) -> list[object] | None:
        """Block for the first item, then drain what is queued (up to max_coalesce); [] when nothing
        came for `limits.sync_idle_s`."""
        idle_until = time.monotonic() + self.options.limits.sync_idle_s
        while True:
            if self.draining.is_set() or stop.is_set():
                return None
            if time.monotonic() > idle_until:
                return []
            try:
                first = q.get(timeout=0.2)
                break
            except queue.Empty:
                continue
        depth = q.qsize()
        metrics.QUEUE_DEPTH.labels(queue="sync").set(depth)
        items = [first]
        while (
            len(items) < self.options.max_coalesce and first is not _END and isinstance(items[-1], _Checked)
        ):
            try:
                items.append(q.get_nowait())
            except queue.Empty:
                break
        with self.stats.lock:
            self.stats.max_queue_depth = max(self.stats.max_queue_depth, depth + 1)
            self.stats.max_coalesced = max(self.stats.max_coalesced, len(items))
        return items

    def _process(
        self, items: list[object], records: list[RoundRecords], peer: str = ""
    ) -> tuple[list[Any], str | None, bool]:
        """Apply the items in order; one decision round per run of batches of the same session (each
        round's decisions go to `records`, for the recorder)."""
        t0, c0 = time.perf_counter(), time.thread_time()
        plans: list[Any] = []
        pending: Session | None = None  # session with applied batches not yet decided on

        def flush() -> None:
            nonlocal pending, t0, c0
            if pending is not None:
                plans.append(self._round(pending, t0, c0, records))
                pending = None
                t0, c0 = time.perf_counter(), time.thread_time()

        for item in items:
            if item is _END:
                flush()
                return plans, None, True
            if isinstance(item, str):
                flush()
                return plans, item, True
            assert isinstance(item, _Checked)
            batch: Any = item.batch
            with self.stats.lock:
                self.stats.batches += 1
                self.stats.node_updates += len(batch.nodes_upserted)
            s = self.registry.get(batch.session_id)
            if s is None:
                flush()
                plans.append(
                    pb.Plan(
                        session_id=batch.session_id,
                        # Never "older" than a plan the shim has seen: epochs start at wall-clock µs.
                        epoch=time.time_ns() // 1000,
                        in_reply_to_seq=batch.seq,
                        status=pb.BATCH_RESYNC_REQUIRED,
                        detail="unknown session: register again and send a full resync",
                    )
                )
                continue
            if s.peer and peer and s.peer != peer:  # another connection's session: refused, untouched
                flush()
                return plans, f"{_BOUND}, not this one: register on this connection", True
            claims: list[tuple[str, tuple[bytes, ...]]] = []
            with s.lock:
                why = s.admit(batch)
                if why is None:
                    ca = time.thread_time()
                    s.apply(batch, item.node_wires, item.containers)
                    self.stats.apply_cpu_s += time.thread_time() - ca  # one writer per stream: no lock
                    apps = s.mirror.apps
                    for a in batch.apps_upserted:
                        rec = apps.get(a.application_id)  # None: removed in the same batch
                        if rec is not None:
                            claims.append((rec.application_id, rec.amrm_tokens))
            if why is None and (claims or batch.apps_removed or batch.full_resync):
                # whose application is whose (the AMs' tokens): off the session's lock, as Register
                # takes the registry's lock before a session's
                self.registry.claim(s, claims, batch.apps_removed, batch.full_resync)
            if why is not None:
                flush()
                with s.lock:
                    plans.append(s.resync_plan(batch.seq, why))
                continue
            if pending is not s:
                flush()
                pending = s
        flush()
        return plans, None, False

    def _round(self, s: Session, t0: float, c0_batches: float, records: list[RoundRecords]) -> Any:
        if s.mirror.finished:
            with s.lock:
                finished = s.mirror.take_finished()
            if self.on_finished is not None:
                try:
                    self.on_finished(finished)
                except Exception:  # the history's database fails: the decisions go on without it
                    log.exception("run times of %d finished application(s) not recorded", len(finished))
        c0 = time.thread_time()
        with s.lock:
            plan, decisions = s.decide(self.round_fn, self.clock.now(), self.options.outstanding_ttl_s)
        if decisions:
            records.append(decisions)
        cpu = time.thread_time() - c0
        ms = (time.perf_counter() - t0) * 1000.0
        with self.stats.lock:
            self.stats.rounds += 1
            self.stats.placements += sum(p.count for p in plan.placements)
            self.stats.round_ms.append(ms)
            self.stats.round_cpu_ms.append((time.thread_time() - c0_batches) * 1000.0)
            self.stats.decide_cpu_s += cpu
        metrics.DECISION_ROUND_SECONDS.observe(ms / 1000.0)
        metrics.PLACEMENTS.inc(sum(p.count for p in plan.placements))
        return plan


def generic_handler(servicer: SchedulerServicer) -> grpc.GenericRpcHandler[Any, Any]:
    """SchedulerService's handlers with the lenient deserializers (instead of the generated ones)."""
    return grpc.method_handlers_generic_handler(
        SERVICE_NAME,
        {
            "Register": grpc.unary_unary_rpc_method_handler(
                servicer.register,
                request_deserializer=lenient(pb.RegisterRequest),
                response_serializer=pb.RegisterResponse.SerializeToString,
            ),
            "Sync": grpc.stream_stream_rpc_method_handler(
                servicer.sync,
                request_deserializer=lenient(pb.StateBatch),
                response_serializer=pb.Plan.SerializeToString,
            ),
        },
    )
