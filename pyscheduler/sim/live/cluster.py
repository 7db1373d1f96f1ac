"""The ResourceManager and shim as the simulator plays them: nodes heartbeating every tick, the StateBatch
of each tick, and the plan carried out as the shim does: a placement is committed on its node's next
heartbeat only if it still fits and its ask is still pending (else reported dropped), and the plan's
kills end their containers (the AM sees its attempts killed). With `commit` "plan" (the shim's
yarn.scheduler.dollymp.commit, SHIM_COMMIT its default) the kills and placements are carried out as the
plan arrives, the same checks applied, rather than at the next tick's heartbeat and kills.

With `Workload.am_mem_mb` > 0 each application first asks for its AM container (priority 0, as the RM
asks for it); the AM starts `Workload.am_startup_s` after that container does and holds it until its
job finishes. AM containers count in no copy's container-seconds.

With `Workload.host_cores`, start-ups contend (`advance`): a container's start-up first waits
`Workload.startup_fixed_s` (wall time, no CPU), then every container starting shares the cores equally,
each start-up being its flat time in CPU-seconds."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pyscheduler.sim.live.appmaster import CLUSTER_TS, AppMaster, app_id
from pyscheduler.sim.live.records import LiveRecord
from pyscheduler.sim.live.workload import Workload
from pyscheduler.wire import pb

# How a copy's container ended, for the record's container-seconds by copy and end (records.py held_s)
_ENDS = {pb.CONTAINER_EXIT_SUCCESS: "won", pb.CONTAINER_EXIT_PREEMPTED: "preempted"}
AM_PRIORITY = 0  # the AM container's ask (the RM's, before the attempt registers)
# The shim's default of yarn.scheduler.dollymp.commit (ShimConfig.DEFAULT_COMMIT; test_live_commit.py
# checks they agree): "plan" commits a plan as it arrives, "heartbeat" on the node's next heartbeat
SHIM_COMMIT = "plan"
COMMITS = ("plan", "heartbeat")


@dataclass(slots=True)
class Container:
    container_id: str
    am: AppMaster
    attempt_id: str
    node: int
    mem_mb: int
    vcores: int
    start_s: float
    is_clone: bool


def attempt_of(n: int) -> str:
    return f"appattempt_{CLUSTER_TS}_{n:04d}_000001"


@dataclass
class Cluster:
    wl: Workload
    record: LiveRecord
    commit: str = SHIM_COMMIT  # when a plan is carried out: "plan" (as it arrives) or "heartbeat" (next tick)
    alloc: list[list[int]] = field(init=False)  # per node [memory, vcores] taken
    containers: dict[str, Container] = field(default_factory=dict)
    ams: dict[str, AppMaster] = field(default_factory=dict)  # by attempt id (the asks' key)
    proposals: list[Any] = field(default_factory=list)  # the last plan's placements, for the next heartbeat
    kills: list[str] = field(default_factory=list)  # the last plan's containers to kill
    kill_why: dict[str, str] = field(default_factory=dict)  # container -> the decision log's reason
    new_apps: list[AppMaster] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    new_containers: list[Any] = field(default_factory=list)
    completions: list[Any] = field(default_factory=list)
    outcomes: list[Any] = field(default_factory=list)
    sent_asks: dict[tuple[str, int], int] = field(default_factory=dict)
    sent_alloc: dict[int, tuple[int, int]] = field(default_factory=dict)  # node -> allocation last sent
    next_container: int = 1
    starting: dict[str, float] = field(default_factory=dict)  # container -> start-up CPU-seconds left
    cpu_from: dict[str, float] = field(default_factory=dict)  # container -> when its fixed wait ends, s

    def __post_init__(self) -> None:
        if self.commit not in COMMITS:
            raise ValueError(f"commit: expected one of {', '.join(COMMITS)}, got {self.commit!r}")
        self.alloc = [[0, 0] for _ in range(self.wl.node_count)]
        mem = sum(self.wl.capacity(i)[0] for i in range(self.wl.node_count))
        cores = sum(self.wl.capacity(i)[1] for i in range(self.wl.node_count))
        self.totals = (max(1, mem), max(1, cores))

    @staticmethod
    def node_id(i: int) -> str:
        return f"node{i:02d}.sim:8041"

    @staticmethod
    def node_index(node_id: str) -> int:
        return int(node_id[4 : node_id.index(".")])

    def submit(self, am: AppMaster, now: float) -> None:
        self.ams[attempt_of(am.spec.n)] = am
        self.new_apps.append(am)
        if self.wl.am_mem_mb <= 0:  # an unmanaged AM: ready at once
            am.ready_s = now

    def _am_asks(self) -> list[AppMaster]:
        return [am for am in self.ams.values() if am.ready_s is None and not am.am_container_id]

    def _release(self, cid: str, kind: int, at: float) -> Container | None:
        c = self.containers.pop(cid, None)
        if c is None:
            return None
        self.starting.pop(cid, None)
        self.cpu_from.pop(cid, None)
        self.alloc[c.node][0] -= c.mem_mb
        self.alloc[c.node][1] -= c.vcores
        self.completions.append(
            pb.ContainerCompletion(container_id=cid, exit_kind=kind, finish_time_ms=self.record.epoch_ms(at))
        )
        if not c.attempt_id:  # the AM's own container
            return c
        held = max(0.0, at - c.start_s)
        self.record.container_s[c.is_clone] += held
        self.record.spans.append((c.start_s, max(c.start_s, at), c.vcores, c.mem_mb))
        share = max(c.mem_mb / self.totals[0], c.vcores / self.totals[1])
        won = kind == pb.CONTAINER_EXIT_SUCCESS
        self.record.share_s[won] = self.record.share_s.get(won, 0.0) + share * held
        end = _ENDS.get(kind, "killed")
        key = f"{'clone' if c.is_clone else 'original'} {end}"
        self.record.held_s[key] = self.record.held_s.get(key, 0.0) + held
        return c

    def busy(self) -> bool:
        """Something is still to reach the service: containers held, a plan's placements or kills, or
        changes not yet sent."""
        return bool(
            self.containers
            or self.proposals
            or self.kills
            or self.new_apps
            or self.removed
            or self.new_containers
            or self.completions
            or self.outcomes
        )

    def preempt(self, now: float) -> None:
        """The last plan's kills: the shim preempts the containers, their AMs see the attempts killed."""
        for cid in self.kills:
            c = self._release(cid, pb.CONTAINER_EXIT_PREEMPTED, now)
            if c is not None:
                why = self.kill_why.pop(cid, "preempted by the plan")
                self.record.kill(now, c.am.app_id, c.attempt_id, cid, "service", why)
                c.am.preempted(cid, now)
        self.kills = []

    def end_work(self, now: float) -> None:
        """Copies whose work ended: their containers (and their beaten twins') complete."""
        for am in self.ams.values():
            if am.finish_s is not None:
                continue
            for cid, kind, at in am.finish_due(now):
                self._release(cid, kind, at)
            if am.finish_s is not None:
                self._release(am.am_container_id, pb.CONTAINER_EXIT_SUCCESS, am.finish_s)
                self.removed.append(am.app_id)

    def heartbeat(self, now: float) -> None:
        """Every node heartbeats each tick: the last plan's placements are committed or dropped."""
        for p in self.proposals:
            am = self.ams.get(p.attempt_id)
            if p.priority == AM_PRIORITY:
                self._start_am(am, p, now)
                continue
            waiting = [] if am is None or am.finish_s is not None else am.waiting(p.priority)
            if p.is_clone:  # a clone's placement goes to a waiting clone first
                waiting.sort(key=lambda a: (not a.is_clone, a.attempt_id))
            k = max(0, min(p.count, self._fits(p), len(waiting)))
            for a in waiting[:k]:
                assert am is not None
                self._start(am, a, p, now)
            if k < p.count:
                self._dropped(p, k, len(waiting), now)
        self.proposals = []

    def _fits(self, p: Any) -> int:
        i = self.node_index(p.node_id)
        mem, cores = p.capability.memory_mb, p.capability.vcores
        cap_mem, cap_cores = self.wl.capacity(i)
        return min(
            (cap_mem - self.alloc[i][0]) // max(1, int(mem)),
            (cap_cores - self.alloc[i][1]) // max(1, int(cores)),
        )

    def _dropped(self, p: Any, k: int, waiting: int, now: float) -> None:
        full = k < waiting or (k == 0 and self._fits(p) <= 0)
        kind = pb.PLACEMENT_DROPPED_DOES_NOT_FIT if full else pb.PLACEMENT_DROPPED_ASK_NOT_PENDING
        out = pb.PlacementOutcome(placement_id=p.placement_id, kind=kind, containers=p.count - k)
        self.outcomes.append(out)
        self.record.dropped.append((now, p.attempt_id, kind))

    def _start_am(self, am: AppMaster | None, p: Any, now: float) -> None:
        """The AM container placement `p`: committed if its AM still waits and it fits, else dropped."""
        pending = am is not None and am in self._am_asks()
        if not pending or self._fits(p) < 1:
            self._dropped(p, 0, int(pending), now)
            return
        assert am is not None
        cid = self._container(am, "", p, False, now, am_container=True)
        am.am_container_id = cid
        if self.wl.host_cores > 0:
            self._starts(cid, self.wl.am_startup_s, now)
        else:
            am.ready_s = now + self.wl.startup_fixed_s + self.wl.am_startup_s

    def _starts(self, cid: str, cpu_s: float, now: float) -> None:
        """Container `cid`'s start-up: `cpu_s` CPU-seconds on the shared cores, after the fixed wait."""
        self.starting[cid] = cpu_s
        if self.wl.startup_fixed_s > 0:
            self.cpu_from[cid] = now + self.wl.startup_fixed_s

    def advance(self, now: float, dt: float) -> None:
        """The start-ups of the last `dt` seconds to `now`, the cores shared equally (processor sharing):
        those done begin their work (an AM is up) when their CPU-seconds ran out."""
        left = dict(self.starting)
        t = now - dt
        while left and t < now - 1e-9:
            waits = [self.cpu_from[c] for c in left if self.cpu_from.get(c, t) > t + 1e-9]
            using = [c for c in left if self.cpu_from.get(c, t) <= t + 1e-9]  # past their fixed wait
            step, rate = min([now - t, *(w - t for w in waits)]), 0.0
            if using:
                rate = min(1.0, self.wl.host_cores / len(using))
                step = min(step, min(left[c] for c in using) / rate)
            t += step
            for cid in using:
                left[cid] -= rate * step
                if left[cid] <= 1e-9:
                    del left[cid]
                    self._started(cid, t)
        self.starting = {cid: s for cid, s in left.items() if cid in self.containers}
        self.cpu_from = {cid: w for cid, w in self.cpu_from.items() if cid in self.starting}

    def _started(self, cid: str, at: float) -> None:
        c = self.containers.get(cid)
        if c is None:
            return
        if not c.attempt_id:
            c.am.ready_s = at
            return
        a = c.am.attempts.get(c.attempt_id)
        if a is not None and a.container_id == cid:
            c.am.work_begins(a, at)

    def _start(self, am: AppMaster, a: Any, p: Any, now: float) -> None:
        """A container of placement `p` for attempt `a`, whose work begins after start-up."""
        cid = self._container(am, a.attempt_id, p, a.is_clone, now)
        am.launch(a, cid, p.node_id, now, self.node_index(p.node_id))
        if self.wl.host_cores > 0:
            self._starts(cid, self.wl.startup_s, now)
        self.record.containers.append((now, cid, a.attempt_id, p.node_id, a.is_clone))

    def _container(
        self, am: AppMaster, attempt_id: str, p: Any, is_clone: bool, now: float, am_container: bool = False
    ) -> str:
        """A new container of placement `p` on its node, reported in the next batch."""
        i = self.node_index(p.node_id)
        mem, cores = p.capability.memory_mb, p.capability.vcores
        cid = f"container_{CLUSTER_TS}_{am.spec.n:04d}_01_{self.next_container:06d}"
        self.next_container += 1
        self.alloc[i][0] += mem
        self.alloc[i][1] += cores
        self.containers[cid] = Container(cid, am, attempt_id, i, mem, cores, now, is_clone)
        self.new_containers.append(
            pb.ContainerInfo(
                container_id=cid,
                attempt_id=p.attempt_id,
                node_id=p.node_id,
                priority=p.priority,
                allocation_request_id=p.allocation_request_id,
                resource=pb.Resource(memory_mb=mem, vcores=cores),
                placement_id=p.placement_id,
                am_container=am_container,
                start_time_ms=self.record.epoch_ms(now),
            )
        )
        return cid

    def batch(self, session_id: str, seq: int, now: float) -> Any:
        """The tick's StateBatch (the first one a full resync). Every node heartbeats each tick; the batch
        carries those whose allocation changed since it was last sent (the mirror skips a heartbeat that
        changes nothing, service/state/mirror.py, so the others would change no decision)."""
        b = pb.StateBatch(
            session_id=session_id, seq=seq, full_resync=seq == 1, rm_time_ms=self.record.epoch_ms(now)
        )
        for i in range(self.wl.node_count):
            alloc = (self.alloc[i][0], self.alloc[i][1])
            if seq != 1 and self.sent_alloc.get(i) == alloc:
                continue
            self.sent_alloc[i] = alloc
            mem, cores = self.wl.capacity(i)
            b.nodes_upserted.add(
                node_id=self.node_id(i),
                rack="/default-rack",
                state=pb.NODE_STATE_RUNNING,
                speed=self.wl.speed(i),
                capacity=pb.Resource(memory_mb=mem, vcores=cores),
                allocated=pb.Resource(memory_mb=alloc[0], vcores=alloc[1]),
            )
        for am in self.new_apps:
            b.apps_upserted.add(
                application_id=am.app_id,
                attempt_id=attempt_of(am.spec.n),
                queue="default",
                user="sim",
                name=am.spec.name,
                submit_time_ms=self.record.epoch_ms(am.spec.submit_s),
                application_type="MAPREDUCE",
            )
        b.apps_removed.extend(self.removed)
        for am in self.ams.values():
            key = (attempt_of(am.spec.n), AM_PRIORITY)
            n = int(am in self._am_asks())
            if self.wl.am_mem_mb > 0 and self.sent_asks.get(key, 0) != n:
                self.sent_asks[key] = n
                b.asks.add(
                    attempt_id=key[0],
                    priority=AM_PRIORITY,
                    allocation_request_id=0,
                    capability=pb.Resource(memory_mb=self.wl.am_mem_mb, vcores=1),
                    num_containers=n,
                    relax_locality=True,
                    am_container=True,
                )
        for attempt, am in self.ams.items():
            if am.finish_s is not None:  # removed with its application
                continue
            for ph in am.spec.phases:
                n = len(am.waiting(ph.priority))
                if self.sent_asks.get((attempt, ph.priority), 0) != n:
                    self.sent_asks[(attempt, ph.priority)] = n
                    b.asks.add(
                        attempt_id=attempt,
                        priority=ph.priority,
                        allocation_request_id=0,
                        capability=pb.Resource(memory_mb=ph.mem_mb, vcores=ph.vcores),
                        num_containers=n,
                        relax_locality=True,
                    )
        b.containers_allocated.extend(self.new_containers)
        b.containers_completed.extend(self.completions)
        b.outcomes.extend(self.outcomes)
        self.new_apps, self.removed, self.new_containers, self.completions, self.outcomes = [], [], [], [], []
        return b

    def an_original_waits(self, plan: Any) -> bool:
        """After `plan`, an original waits for room (as sim/loadmeter.py counts a round): an original
        attempt of a phase the AM asks for is left without a placement and its container fits no node's
        room left by what the cluster holds and the plan places."""
        free = [[*self.wl.capacity(i)] for i in range(self.wl.node_count)]
        for i, (mem, cores) in enumerate(self.alloc):
            free[i][0] -= mem
            free[i][1] -= cores
        placed: dict[tuple[str, int], int] = {}
        for p in plan.placements:
            i = self.node_index(p.node_id)
            free[i][0] -= p.capability.memory_mb * p.count
            free[i][1] -= p.capability.vcores * p.count
            if not p.is_clone:
                placed[(p.attempt_id, p.priority)] = placed.get((p.attempt_id, p.priority), 0) + p.count
        for attempt, am in self.ams.items():
            if am.finish_s is not None or am.ready_s is None:
                continue
            for ph in am.spec.phases:
                left = sum(1 for a in am.waiting(ph.priority) if not a.is_clone)
                if left > placed.get((attempt, ph.priority), 0) and not any(
                    m >= ph.mem_mb and c >= ph.vcores for m, c in free
                ):
                    return True
        return False

    def take_plan(self, plan: Any, now: float) -> None:
        for p in plan.placements:
            self.record.placements.append(
                (now, p.attempt_id, p.priority, p.node_id, p.count, p.is_clone, p.reason)
            )
        self.proposals = list(plan.placements)
        self.kills = list(plan.kill_container_ids)
        if self.commit == "plan":  # the shim's plan-arrival pass: its kills, then every node's placements
            self.preempt(now)
            self.heartbeat(now)


__all__ = ["Cluster", "Container", "app_id", "attempt_of"]
