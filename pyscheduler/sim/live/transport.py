"""How the simulated RM and AMs reach the real decision service: in-process (`direct`: the servicers'
handlers called with the protobuf messages, each serialized and parsed on the way so the wire format is
exercised) or over a real gRPC channel to the service's server on 127.0.0.1 (`grpc`). Lockstep either way:
one StateBatch sent, its Plan taken; one AM call, its answer taken."""

from __future__ import annotations

import queue
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol

import grpc

from pyscheduler import config
from pyscheduler.core.clock import Clock
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.wire import pb, pb_grpc

TRANSPORTS = ("direct", "grpc")
_END = object()


class Transport(Protocol):
    def register(self, request: Any) -> Any: ...
    def sync(self, batch: Any) -> Any: ...
    def report_job_profile(self, request: Any) -> Any: ...
    def report_attempts(self, request: Any) -> Any: ...
    def get_clone_plan(self, request: Any) -> Any: ...
    def close(self) -> None: ...


def service_of(store_dir: Path, clock: Clock, overrides: dict[str, Any]) -> DecisionService:
    """The assembled DecisionService, as `dollymp serve` builds it, on `clock`: a SQLite log in
    `store_dir`, an ephemeral loopback port, no HTTP API."""
    base = {"store.url": str(store_dir / "decisions.db"), "grpc.port": 0, "http.port": -1}
    cfg = config.load(None, env={}, overrides={**base, **overrides})
    return DecisionService(cfg, clock)


class _Requests:
    """A request stream fed one message at a time (the Sync stream's client side)."""

    def __init__(self) -> None:
        self.q: queue.Queue[object] = queue.Queue()

    def __iter__(self) -> Iterator[Any]:
        while (item := self.q.get()) is not _END:
            yield item


class Aborted(RuntimeError):
    pass


class _Context:
    """The part of grpc.ServicerContext the handlers use."""

    def __init__(self) -> None:
        self.callbacks: list[Any] = []

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    def add_callback(self, fn: Any) -> bool:
        self.callbacks.append(fn)
        return True

    def abort(self, code: Any, details: str) -> None:
        raise Aborted(f"{code}: {details}")


def _wire(message: Any) -> Any:
    return type(message).FromString(message.SerializeToString())


class Direct:
    """The servicers' handlers in this process."""

    def __init__(self, svc: DecisionService) -> None:
        self.svc = svc
        self.context = _Context()
        self.requests = _Requests()
        self.plans: Iterator[Any] | None = None

    def register(self, request: Any) -> Any:
        return _wire(self.svc.servicer.register(_wire(request), self.context))  # type: ignore[arg-type]

    def sync(self, batch: Any) -> Any:
        if self.plans is None:
            self.plans = self.svc.servicer.sync(iter(self.requests), self.context)  # type: ignore[arg-type]
        self.requests.q.put(_wire(batch))
        return _wire(next(self.plans))

    def report_job_profile(self, request: Any) -> Any:
        return _wire(self.svc.appmaster.report_job_profile(_wire(request), self.context))  # type: ignore[arg-type]

    def report_attempts(self, request: Any) -> Any:
        return _wire(self.svc.appmaster.report_attempts(_wire(request), self.context))  # type: ignore[arg-type]

    def get_clone_plan(self, request: Any) -> Any:
        return _wire(self.svc.appmaster.get_clone_plan(_wire(request), self.context))  # type: ignore[arg-type]

    def close(self) -> None:
        self.requests.q.put(_END)
        for fn in self.context.callbacks:
            fn()
        self.svc.stop()


class Grpc:
    """A real channel to the service's gRPC server."""

    def __init__(self, svc: DecisionService) -> None:
        self.svc = svc
        svc.start()
        self.channel = grpc.insecure_channel(f"127.0.0.1:{svc.port}")
        self.rm = pb_grpc.SchedulerServiceStub(self.channel)
        self.am = pb_grpc.AppMasterServiceStub(self.channel)
        self.requests = _Requests()
        self.plans: Any = None

    def register(self, request: Any) -> Any:
        return self.rm.Register(request, timeout=30)

    def sync(self, batch: Any) -> Any:
        if self.plans is None:
            self.plans = self.rm.Sync(iter(self.requests), timeout=3600)
        self.requests.q.put(batch)
        return next(self.plans)

    def report_job_profile(self, request: Any) -> Any:
        return self.am.ReportJobProfile(request, timeout=30)

    def report_attempts(self, request: Any) -> Any:
        return self.am.ReportAttempts(request, timeout=30)

    def get_clone_plan(self, request: Any) -> Any:
        return self.am.GetClonePlan(request, timeout=30)

    def close(self) -> None:
        self.requests.q.put(_END)
        self.channel.close()
        self.svc.stop()


class Tap(Protocol):
    """Told of every call to the service and its answer: `call` the Transport method's name, and the
    service's reasons for kills it decided so far, by container (the decision log's, as run.py hears them)."""

    def __call__(self, call: str, request: Any, response: Any, kill_why: Mapping[str, str]) -> None: ...


class Tapped:
    """`inner` with every answer also handed to `tap`; the calls and answers themselves unchanged."""

    def __init__(self, inner: Transport, tap: Tap, kill_why: Mapping[str, str]) -> None:
        self.inner, self.tap, self.kill_why = inner, tap, kill_why

    def _told(self, call: str, request: Any, response: Any) -> Any:
        self.tap(call, request, response, self.kill_why)
        return response

    def register(self, request: Any) -> Any:
        return self._told("register", request, self.inner.register(request))

    def sync(self, batch: Any) -> Any:
        return self._told("sync", batch, self.inner.sync(batch))

    def report_job_profile(self, request: Any) -> Any:
        return self._told("report_job_profile", request, self.inner.report_job_profile(request))

    def report_attempts(self, request: Any) -> Any:
        return self._told("report_attempts", request, self.inner.report_attempts(request))

    def get_clone_plan(self, request: Any) -> Any:
        return self._told("get_clone_plan", request, self.inner.get_clone_plan(request))

    def close(self) -> None:
        self.inner.close()


def connect(kind: str, svc: DecisionService) -> Transport:
    if kind == "direct":
        return Direct(svc)
    if kind == "grpc":
        return Grpc(svc)
    raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, got {kind!r}")


__all__ = [
    "TRANSPORTS",
    "Aborted",
    "Direct",
    "Grpc",
    "Tap",
    "Tapped",
    "Transport",
    "connect",
    "pb",
    "service_of",
]
