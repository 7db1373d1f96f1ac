"""Running `dollymp serve` as a real subprocess on a real socket, and building wire messages."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc

from pyscheduler import config
from pyscheduler.service.rmproxy.service import DecisionService
from pyscheduler.wire import pb, pb_grpc

REPO = Path(__file__).resolve().parents[2]


# A bound on a start that hangs, not a speed check: on a loaded machine (test workers side by side,
# load average 10 on 2 cores) a cold `serve` has taken close to 30 s to import and listen.
START_S = 90


class Service:
    """A `dollymp serve` process with the fcfs policy and no HTTP API (`extra` flags come last and win);
    `port` is read from its --port-file."""

    def __init__(
        self, tmp: Path, extra: Sequence[str] = (), db: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.tmp = tmp
        self.db = db or tmp / "decisions.db"
        self.port_file = tmp / f"port-{time.monotonic_ns()}"
        self.stdout = tmp / "serve.out"
        self.stderr = tmp / "serve.err"
        cmd = [
            sys.executable,
            "-m",
            "pyscheduler",
            "serve",
            "--grpc-port",
            "0",
            "--port-file",
            str(self.port_file),
            "--db",
            str(self.db),
            "--policy",
            "fcfs",
            "--http-port",
            "-1",
            *extra,
        ]
        self.proc = subprocess.Popen(
            cmd,
            cwd=REPO,
            stdout=self.stdout.open("w"),
            stderr=self.stderr.open("w"),
            env={**os.environ, **(env or {})},
        )
        deadline = time.monotonic() + START_S
        while not self.port_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited {self.proc.returncode}: {self.stderr.read_text()}")
            if time.monotonic() > deadline:
                self.proc.kill()
                raise TimeoutError(f"serve did not write its port file within {START_S} s")
            time.sleep(0.05)
        self.port = int(self.port_file.read_text())
        self.address = f"127.0.0.1:{self.port}"

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout)


def res(mem: int, cores: int) -> Any:
    return pb.Resource(memory_mb=mem, vcores=cores)


def node(
    node_id: str,
    mem: int = 4096,
    cores: int = 4,
    alloc: tuple[int, int] = (0, 0),
    rack: str = "/r1",
    state: int = pb.NODE_STATE_RUNNING,
    speed: float = 1.0,
) -> Any:
    return pb.NodeInfo(
        node_id=node_id, rack=rack, capacity=res(mem, cores), allocated=res(*alloc), state=state, speed=speed
    )


def app(n: int, submit_ms: int = 1000) -> Any:
    return pb.ApplicationInfo(
        application_id=f"application_1700000000000_{n:04d}",
        attempt_id=attempt(n),
        queue="default",
        user="u",
        name=f"job{n}",
        submit_time_ms=submit_ms,
        application_type="MAPREDUCE",
    )


def attempt(n: int) -> str:
    return f"appattempt_1700000000000_{n:04d}_000001"


def ask(
    n: int,
    priority: int,
    count: int,
    mem: int = 1024,
    cores: int = 1,
    am: bool = False,
    locations: Sequence[str] = (),
    relax: bool = True,
    blacklist: Sequence[str] = (),
) -> Any:
    return pb.Ask(
        attempt_id=attempt(n),
        priority=priority,
        allocation_request_id=-1,
        capability=res(mem, cores),
        num_containers=count,
        am_container=am,
        locations=list(locations),
        relax_locality=relax,
        blacklist=list(blacklist),
    )


def register(ch: grpc.Channel, rm_id: str = "rm-test", metadata: Any = None) -> Any:
    return pb_grpc.SchedulerServiceStub(ch).Register(
        pb.RegisterRequest(rm_id=rm_id, tick_ms=100), timeout=10, metadata=metadata
    )


class Stream:
    """A Sync stream driven one batch at a time (send, then read the plan)."""

    def __init__(self, ch: grpc.Channel, metadata: Any = None) -> None:
        import queue

        self._q: queue.Queue[Any] = queue.Queue()
        self._done = object()

        def requests() -> Any:
            while True:
                item = self._q.get()
                if item is self._done:
                    return
                yield item

        self.call = pb_grpc.SchedulerServiceStub(ch).Sync(requests(), timeout=60, metadata=metadata)

    def send(self, batch: Any) -> Any:
        self._q.put(batch)
        return next(self.call)

    def close(self) -> None:
        self._q.put(self._done)


def placed_per_node(plan: Any) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for p in plan.placements:
        m, c = out.get(p.node_id, (0, 0))
        out[p.node_id] = (m + p.capability.memory_mb * p.count, c + p.capability.vcores * p.count)
    return out


def full_batch(session_id: str, seq: int = 1, **fields: Any) -> Any:
    """A full-resync StateBatch (the first batch after Register)."""
    return pb.StateBatch(session_id=session_id, seq=seq, full_resync=True, rm_time_ms=1, **fields)


def two_app_mirror(free_cores: int, asks: list[Any]) -> Any:
    """A Mirror of one node with `free_cores` vcores (1 GB each), applications 1 and 2 (submitted at 1 s
    and 2 s) and `asks`."""
    from pyscheduler.service.state.mirror import Mirror

    m = Mirror()
    m.apply(
        full_batch(
            "s",
            nodes_upserted=[node("h1:1", mem=free_cores * 1024, cores=free_cores)],
            apps_upserted=[app(1, submit_ms=1000), app(2, submit_ms=2000)],
            asks=asks,
        )
    )
    return m


# dollymp-ext with no clones at launch by Corollary 4.1 and r = 1: the live path's tests of the extensions
# (late copies, small-job and phase-tail clones, yielding) run the configuration they were written for
FORMER: dict[str, Any] = {"clone_rule": "none", "sigma_factor": 1.0}


def in_process_service(tmp_path: Path, **overrides: Any) -> DecisionService:
    """The assembled DecisionService in this process, on a real loopback socket (an ephemeral port, no
    HTTP API unless `overrides` say otherwise), with a SQLite log. The AM calls' CPU budgets
    (service/rmproxy/amgate.py) are ample unless `overrides` set them: they are the subject of
    test_hostile_fairness.py and test_hostile_bounds.py, and elsewhere a call's CPU on a loaded xdist worker
    (637 ms for the first three calls of one AM once in CI, ~50 ms alone) must not defer a test's plan."""
    base = {
        "store.url": str(tmp_path / "d.db"),
        "grpc.port": 0,
        "http.port": -1,
        "appmaster.app_cpu_ms_per_s": 100_000.0,
        "appmaster.queue_cpu_ms_per_s": 100_000.0,
    }
    cfg = config.load(None, env={}, overrides={**base, **overrides})
    svc = DecisionService(cfg)
    svc.start()
    return svc


@contextlib.contextmanager
def am_session(port: int, **first_batch: Any) -> Iterator[tuple[Any, Stream, Any]]:
    """A registered shim session on a real socket whose first (full-resync) batch carries `first_batch`,
    its Sync stream and an AppMasterService stub on the same channel: (registration, stream, stub)."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        reg = register(ch)
        stream = Stream(ch)
        stream.send(full_batch(reg.session_id, **first_batch))
        try:
            yield reg, stream, pb_grpc.AppMasterServiceStub(ch)
        finally:
            stream.close()


def attempt_report(
    phase: str,
    task: int,
    copy: int,
    state: int,
    *,
    clone: bool = False,
    progress: float = 0.0,
    duration: float = 0.0,
    launch_ms: int = 0,
) -> Any:
    """What the AM helper reports of copy `copy` of application 1's task `task` (node h<copy>:1)."""
    kind = "m" if phase == "map" else "r"
    return pb.AttemptReport(
        task_id=f"task_1700000000000_0001_{kind}_{task:06d}",
        attempt_id=f"attempt_1700000000000_0001_{kind}_{task:06d}_{copy}",
        phase_id=phase,
        container_id=f"container_1700000000000_0001_01_{task * 10 + copy:06d}",
        node_id=f"h{copy}:1",
        is_clone=clone,
        state=state,
        duration_s=duration,
        progress=progress,
        time_ms=int(time.time() * 1000),
        launch_time_ms=launch_ms,
    )


def phase_profile(phase_id: str, tasks: int, priority: int, parents: tuple[str, ...] = ()) -> Any:
    """A job profile's phase of `tasks` tasks of 1 GB and 1 vcore each, asked at YARN `priority`."""
    return pb.PhaseProfile(
        phase_id=phase_id,
        tasks=tasks,
        demand=pb.Resource(memory_mb=1024, vcores=1),
        parents=parents,
        yarn_priority=priority,
    )


def map_read(map_task: int, copy: int, kind: int, waited_s: float, reason: str, time_ms: int = 0) -> Any:
    """A reduce copy's read of copy `copy` of application 1's map task `map_task` (a MapRead)."""
    return pb.MapRead(
        map_task_id=f"task_1700000000000_0001_m_{map_task:06d}",
        map_attempt_id=f"attempt_1700000000000_0001_m_{map_task:06d}_{copy}",
        kind=kind,
        waited_s=waited_s,
        reason=reason,
        time_ms=time_ms or 1_700_000_000_000,
    )
