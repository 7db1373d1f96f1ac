"""The pretend ResourceManager behind `dollymp bench service` (pyscheduler.bench.service_load drives it).

It holds nodes, applications with one pending ask each, and running containers; `tick_wire` encodes
the StateBatch a shim would send for one tick (`tick`: the same, parsed). `on_plan` takes a plan's
placements and commits each as the shim's yarn.scheduler.dollymp.commit says: with "plan" (the shim's
default) the whole plan at once as it arrives, with "heartbeat" on the next heartbeat of its node; either
way only if it still fits the node and the ask is still pending, else it is reported dropped.

Start (`start`):
- "warm": the full resync hands over a busy cluster, as when the service registers with a
  running ResourceManager: each application has finished a random part of its containers, runs
  some of the rest (the cluster filled application by application, as far as it goes) and asks for
  the others; each application's running containers end within its own horizon, uniform in
  (0, longest task), so applications finish, and new ones arrive, spread over time;
- "cold" (the default here; `dollymp bench service` starts warm): an empty cluster and every
  application just submitted. All of them run their first containers at once and finish within
  the same few seconds about one longest task later, so the run goes in waves: a second commit
  wave of ~10^4 containers per tick about 30 s in (and smaller ones after).

A heartbeat's NodeInfo is encoded once per (node, allocation) and the batch is assembled from bytes
(a repeated field's encodings concatenate): the generator shares the cores with the service it
measures, so it should cost little.
"""

from __future__ import annotations

import heapq
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from pyscheduler.sim.live.cluster import SHIM_COMMIT
from pyscheduler.wire import pb

NODE_MEM, NODE_CORES = 16384, 8  # 8 containers per node: a busy cluster, asks wait
CONTAINER_MEM, CONTAINER_CORES = 2048, 1
_CONTAINER_RES = pb.Resource(memory_mb=CONTAINER_MEM, vcores=CONTAINER_CORES)
_NODES_TAG = bytes([10 << 3 | 2])  # StateBatch.nodes_upserted: field 10, length-delimited


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


@dataclass
class _App:
    n: int
    pending: int
    running: int = 0


@dataclass
class ShimModel:
    """What the generator's pretend ResourceManager holds."""

    nodes: int
    apps: int
    seed: int = 0
    task_s: tuple[float, float] = (5.0, 30.0)  # container run time, uniform
    tasks: tuple[int, int] = (20, 200)  # containers per application, uniform
    commit: str = SHIM_COMMIT  # "plan": at once, as the shim by default; "heartbeat": on the node's next one
    rng: random.Random = field(init=False)
    alloc: list[list[int]] = field(init=False)  # per node [mem, cores]
    active: dict[int, _App] = field(default_factory=dict)
    containers: dict[str, tuple[int, int, float]] = field(default_factory=dict)  # id -> (node, app, end)
    ends: list[tuple[float, str]] = field(default_factory=list)  # heap of (end, container id)
    next_app: int = 1
    next_container: int = 1
    # (container id, attempt id, node id, placement id, start ms): messages built in the batch itself
    new_containers: list[tuple[str, str, str, str, int]] = field(default_factory=list)
    outcomes: list[Any] = field(default_factory=list)
    changed_asks: set[int] = field(default_factory=set)
    new_apps: list[int] = field(default_factory=list)
    removed_apps: list[int] = field(default_factory=list)
    cursor: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    proposals: dict[int, list[tuple[Any, float]]] = field(default_factory=dict)  # node -> (placement, time)
    start: str = "cold"  # "cold": an empty cluster; "warm": a busy one is handed over (see above)
    _node_wire: dict[int, tuple[tuple[int, int], bytes]] = field(default_factory=dict)  # i -> (alloc, field)

    def __post_init__(self) -> None:
        if self.commit not in ("heartbeat", "plan"):
            raise ValueError(f"commit must be 'heartbeat' or 'plan', got {self.commit!r}")
        if self.start not in ("warm", "cold"):
            raise ValueError(f"start must be 'warm' or 'cold', got {self.start!r}")
        self.rng = random.Random(self.seed)
        self.alloc = [[0, 0] for _ in range(self.nodes)]
        for _ in range(self.apps):
            self._add_app()
        self.new_apps.clear()
        if self.start == "warm":
            self._warm(time.monotonic())

    def _warm(self, now: float) -> None:
        """A busy cluster: per application (in random order) a random part done, then as many of the
        rest running as the free slots take, on the next nodes in turn; each application's running
        containers end within its own horizon."""
        apps = list(self.active.values())
        self.rng.shuffle(apps)
        i, per_node = 0, min(NODE_MEM // CONTAINER_MEM, NODE_CORES // CONTAINER_CORES)
        for a in apps:
            a.pending -= self.rng.randrange(a.pending)  # done already; at least one container left
            horizon = self.rng.uniform(0.0, self.task_s[1])
            while a.pending and i < self.nodes:
                k = min(a.pending, per_node - self.alloc[i][1] // CONTAINER_CORES)
                for _ in range(k):
                    cid = self._container_id(a.n)
                    end = now + self.rng.uniform(0.0, horizon)
                    self.containers[cid] = (i, a.n, end)
                    heapq.heappush(self.ends, (end, cid))
                    self.new_containers.append((cid, self.attempt(a.n), self.node_id(i), "", int(now * 1000)))
                self.alloc[i][0] += k * CONTAINER_MEM
                self.alloc[i][1] += k * CONTAINER_CORES
                a.pending -= k
                a.running += k
                if self.alloc[i][1] // CONTAINER_CORES >= per_node:
                    i += 1

    def _container_id(self, n: int) -> str:
        cid = f"container_1700000000000_{n:06d}_01_{self.next_container:08d}"
        self.next_container += 1
        return cid

    def _add_app(self) -> None:
        n = self.next_app
        self.next_app += 1
        self.active[n] = _App(n, self.rng.randint(*self.tasks))
        self.new_apps.append(n)

    @staticmethod
    def node_id(i: int) -> str:
        return f"node{i:05d}.bench:8041"

    @staticmethod
    def attempt(n: int) -> str:
        return f"appattempt_1700000000000_{n:06d}_000001"

    def _node(self, i: int) -> Any:
        m, c = self.alloc[i]
        return pb.NodeInfo(
            node_id=self.node_id(i),
            rack=f"/rack{i % 40}",
            state=pb.NODE_STATE_RUNNING,
            speed=1.0,
            capacity=pb.Resource(memory_mb=NODE_MEM, vcores=NODE_CORES),
            allocated=pb.Resource(memory_mb=m, vcores=c),
        )

    def _app(self, n: int) -> Any:
        return pb.ApplicationInfo(
            application_id=f"application_1700000000000_{n:06d}",
            attempt_id=self.attempt(n),
            queue="default",
            user="bench",
            name=f"job{n % 50}",
            submit_time_ms=1_700_000_000_000 + n,
            application_type="MAPREDUCE",
        )

    def _ask(self, a: _App) -> Any:
        return pb.Ask(
            attempt_id=self.attempt(a.n),
            priority=20,
            allocation_request_id=-1,
            num_containers=a.pending,
            capability=pb.Resource(memory_mb=CONTAINER_MEM, vcores=CONTAINER_CORES),
            relax_locality=True,
        )

    def _node_field(self, i: int) -> bytes:
        """Node i's NodeInfo as an encoded `nodes_upserted` field (tag, length, message)."""
        alloc = (self.alloc[i][0], self.alloc[i][1])
        hit = self._node_wire.get(i)
        if hit is None or hit[0] != alloc:
            raw = self._node(i).SerializeToString()
            hit = self._node_wire[i] = (alloc, _NODES_TAG + _varint(len(raw)) + raw)
        return hit[1]

    def full_resync(self, session_id: str) -> Any:
        with self.lock:
            batch = pb.StateBatch(
                session_id=session_id,
                seq=1,
                full_resync=True,
                rm_time_ms=int(time.time() * 1000),
                nodes_upserted=[self._node(i) for i in range(self.nodes)],
                apps_upserted=[self._app(a.n) for a in self.active.values()],
                asks=[self._ask(a) for a in self.active.values() if a.pending],
            )
            self._add_new_containers(batch)
            return batch

    def _add_new_containers(self, batch: Any) -> None:
        add = batch.containers_allocated.add  # built in place: no message copied per container
        for cid, attempt_id, node_id, placement_id, start_ms in self.new_containers:
            add(
                container_id=cid,
                attempt_id=attempt_id,
                node_id=node_id,
                priority=20,
                allocation_request_id=-1,
                placement_id=placement_id,
                start_time_ms=start_ms,
                resource=_CONTAINER_RES,
            )
        self.new_containers = []

    def on_plan(self, plan: Any, now: float) -> None:
        """Take a plan: its placements wait for their node's next heartbeat (or commit now)."""
        with self.lock:
            for p in plan.placements:
                i = int(p.node_id[4:9])
                if self.commit == "plan":
                    self._commit(p, i, now)
                else:
                    self.proposals.setdefault(i, []).append((p, now))

    def _commit(self, p: Any, i: int, now: float) -> None:
        """Commit one placement if it still fits and is still pending (the shim re-validates)."""
        n = int(p.attempt_id.split("_")[2])
        a = self.active.get(n)
        room = min((NODE_MEM - self.alloc[i][0]) // CONTAINER_MEM, NODE_CORES - self.alloc[i][1])
        k = min(p.count, room, a.pending if a is not None else 0)
        if a is not None and k > 0:
            for _ in range(k):
                cid = self._container_id(n)
                end = now + self.rng.uniform(*self.task_s)
                self.containers[cid] = (i, n, end)
                heapq.heappush(self.ends, (end, cid))
                self.new_containers.append((cid, p.attempt_id, p.node_id, p.placement_id, int(now * 1000)))
            self.alloc[i][0] += k * CONTAINER_MEM
            self.alloc[i][1] += k * CONTAINER_CORES
            a.pending -= k
            a.running += k
            self.changed_asks.add(n)
        if k < p.count:
            self.outcomes.append(
                pb.PlacementOutcome(
                    placement_id=p.placement_id,
                    kind=pb.PLACEMENT_DROPPED_DOES_NOT_FIT,
                    containers=p.count - k,
                )
            )

    def tick(self, session_id: str, seq: int, now: float, heartbeats: int) -> Any:
        """The StateBatch of one tick (`tick_wire`, parsed)."""
        return pb.StateBatch.FromString(self.tick_wire(session_id, seq, now, heartbeats)[0])

    def tick_wire(self, session_id: str, seq: int, now: float, heartbeats: int) -> tuple[bytes, int]:
        """The encoded StateBatch of one tick, and how many nodes it upserts: heartbeats of the next
        `heartbeats` nodes (and of the nodes whose containers ended), completions, commits, finished
        and new applications."""
        with self.lock:
            done = []
            while self.ends and self.ends[0][0] <= now:
                done.append(heapq.heappop(self.ends)[1])
            touched: set[int] = set()
            completions = []
            for cid in done:
                i, n, _ = self.containers.pop(cid)
                self.alloc[i][0] -= CONTAINER_MEM
                self.alloc[i][1] -= CONTAINER_CORES
                touched.add(i)
                completions.append(
                    pb.ContainerCompletion(
                        container_id=cid, exit_kind=pb.CONTAINER_EXIT_SUCCESS, finish_time_ms=int(now * 1000)
                    )
                )
                a = self.active.get(n)
                if a is not None:
                    a.running -= 1
                    if a.pending == 0 and a.running == 0:
                        del self.active[n]
                        self.removed_apps.append(n)
                        self.changed_asks.discard(n)
                        self._add_app()
            beat = [(self.cursor + j) % self.nodes for j in range(heartbeats)]
            self.cursor = (self.cursor + heartbeats) % self.nodes
            if self.proposals:
                for i in beat:  # the shim commits a node's proposals on that node's heartbeat
                    for p, _ in self.proposals.pop(i, ()):
                        self._commit(p, i, now)
            rows = sorted(touched.union(beat))
            batch = pb.StateBatch(
                session_id=session_id,
                seq=seq,
                rm_time_ms=int(now * 1000),
                apps_upserted=[self._app(n) for n in self.new_apps],
                apps_removed=[f"application_1700000000000_{n:06d}" for n in self.removed_apps],
                asks=[self._ask(self.active[n]) for n in sorted(self.changed_asks | set(self.new_apps))],
                containers_completed=completions,
                outcomes=self.outcomes,
            )
            self._add_new_containers(batch)
            self.new_apps, self.removed_apps, self.outcomes = [], [], []
            self.changed_asks.clear()
            return b"".join([self._node_field(i) for i in rows]) + batch.SerializeToString(), len(rows)
