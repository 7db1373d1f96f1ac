"""Sessions: one per registered ResourceManager, each with its mirror and its decision rounds.

State machine of a session (the shim owns recovery; the service only says when it must resync):

    Register ──> AWAITING_RESYNC ──full_resync batch──> ACTIVE
    ACTIVE ──seq gap / out of order──> BROKEN          (every later batch: BATCH_RESYNC_REQUIRED)
    any ──Register again for the same rm_id──> SUPERSEDED (ditto; the new session takes over)

A batch that is not a full resync while AWAITING_RESYNC is answered BATCH_RESYNC_REQUIRED with
REASON_NOT_RESYNCED and leaves the session waiting (the shim registers again).
"""

from __future__ import annotations

import enum
import itertools
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyscheduler import metrics
from pyscheduler.echo import shown
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.service.limits import DEFAULTS, Limits, Refusal
from pyscheduler.service.round.plan import PlacementChoice, RoundResult
from pyscheduler.service.round.planview import PlanView, publish
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.state.mirror import (
    AskKey,
    ContainerRec,
    Mirror,
    OutstandingPlacement,
    application_of_attempt,
)
from pyscheduler.service.state.resources import Res
from pyscheduler.wire import pb

# A round: the mirror in, placements, deferrals and further decisions out (see
# pyscheduler.service.round.policy).
RoundFn = Callable[[Mirror, RoundMemory], RoundResult]


class SessionState(enum.Enum):
    AWAITING_RESYNC = "awaiting_resync"
    ACTIVE = "active"
    BROKEN = "broken"
    SUPERSEDED = "superseded"


_REASON_NAMES = {
    pb.REASON_FCFS_ORDER: "fcfs_order",
    pb.REASON_PRIORITY_ORDER: "priority_order",
    pb.REASON_BEST_FIT: "best_fit",
    pb.REASON_CLONE_IDLE_CAPACITY: "clone_idle_capacity",
    pb.REASON_AM_CONTAINER: "am_container",
    pb.REASON_CLONE_LATE_COPY: "clone_late_copy",
    pb.REASON_CLONE_PHASE_TAIL: "clone_phase_tail",
    pb.REASON_WAITING_FOR_RESOURCES: "waiting_for_resources",
    pb.REASON_AM_SHARE_CAP: "am_share_cap",
    pb.REASON_INFEASIBLE: "infeasible",
    pb.REASON_PARENT_PHASE_UNFINISHED: "parent_phase_unfinished",
    pb.REASON_LOWER_PRIORITY: "lower_priority",
    pb.REASON_CLONE_LIMIT: "clone_limit",
    pb.REASON_NOT_RESYNCED: "not_resynced",
}


def reason_name(reason: int) -> str:
    return _REASON_NAMES.get(reason, f"reason_{reason}")


@dataclass(slots=True)
class RoundRecords:
    """A round's decisions for the log. The placement records (one per wire placement) are built by
    `build()`, which the servicer calls once the round's plan is sent: not on the plan's path."""

    rm_id: str
    session_id: str
    epoch: int
    wall: float
    placed: list[tuple[str, PlacementChoice]]  # (placement id, choice)
    json_caps: dict[Res, dict[str, Any]]  # one JSON form per distinct capability (shared, read-only)
    others: list[Decision]  # deferrals (when their reason changed), priorities, clone grants, ω

    def __len__(self) -> int:
        return len(self.placed) + len(self.others)

    def build(self) -> list[Decision]:
        """Placements first, then the others, in the round's order."""
        out: list[Decision] = []
        add, caps = out.append, self.json_caps
        for pid, c in self.placed:
            attempt, prio, alloc = c.key
            add(
                Decision(
                    self.wall,
                    DecisionKind.PLACEMENT,
                    reason_name(c.reason),
                    application_of_attempt(attempt),
                    node_id=c.node_id,
                    detail=c.detail,
                    inputs={
                        "placement_id": pid,
                        "rm_id": self.rm_id,
                        "session_id": self.session_id,
                        "epoch": self.epoch,
                        "attempt_id": attempt,
                        "priority": prio,
                        "allocation_request_id": alloc,
                        "count": c.count,
                        "capability": caps[c.capability],
                    },
                )
            )
        out.extend(self.others)
        return out


@dataclass
class Session:
    session_id: str
    rm_id: str
    first_epoch: int
    tick_ms: int
    resource_types: tuple[str, ...]
    state: SessionState = SessionState.AWAITING_RESYNC
    last_seq: int = 0
    mirror: Mirror = field(default_factory=Mirror)
    # what its rounds carry from one to the next (service/round/round_memory.py), beside the mirror
    memory: RoundMemory = field(default_factory=RoundMemory)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # the state its last round left, for AM plans (service/round/planview.py): replaced, never written
    view: PlanView | None = None
    _next_epoch: int = 0
    _placement_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _last_deferral: dict[AskKey, int] = field(default_factory=dict)
    _last_record: dict[tuple[str, str, str], tuple[str, dict[str, Any]]] = field(default_factory=dict)
    _priorities: dict[str, tuple[float, int]] = field(default_factory=dict)  # app -> (priority, rank)
    peer: str = ""  # the gRPC connection that registered it: only its Sync streams may use it
    caller: str = ""  # who registered it (service/rmproxy/callers.py): registrations are bounded per caller
    last_active: float = field(default_factory=time.monotonic)  # Register or the last applied batch
    # (round time, running clones) of the last round that left an original waiting for room, else None:
    # the clones' container-seconds until the next round are charged to
    # metrics.CLONE_SECONDS_WHILE_ORIGINALS_WAIT (what clones cost while originals wait)
    _clones_while_waiting: tuple[float, int] | None = None

    def __post_init__(self) -> None:
        self._next_epoch = self.first_epoch

    def take_epoch(self) -> int:
        e = self._next_epoch
        self._next_epoch += 1
        return e

    @property
    def last_epoch(self) -> int:
        return self._next_epoch - 1

    def resync_plan(self, seq: int, reason: str) -> Any:
        return pb.Plan(
            session_id=self.session_id,
            epoch=self.take_epoch(),
            in_reply_to_seq=seq,
            status=pb.BATCH_RESYNC_REQUIRED,
            detail=reason,
        )

    def admit(self, batch: Any) -> str | None:
        """Check session state and seq for a validated batch; None if it may be applied, else why not.
        Caller holds `lock`."""
        if self.state is SessionState.SUPERSEDED:
            return "session superseded by a newer registration of this rm_id: register again"
        if self.state is SessionState.BROKEN:
            return "session lost a batch earlier: register again and send a full resync"
        if self.state is SessionState.AWAITING_RESYNC and not batch.full_resync:
            return "the first batch after Register must be a full resync (reason: not_resynced)"
        if batch.seq != self.last_seq + 1:
            self.state = SessionState.BROKEN
            return f"seq gap: expected {self.last_seq + 1}, got {batch.seq}; register again"
        return None

    def last_deferral(self, key: AskKey) -> int | None:
        return self._last_deferral.get(key)

    def priority_of(self, app_id: str) -> tuple[float | None, int | None]:
        p = self._priorities.get(app_id)
        return (p[0], p[1]) if p is not None else (None, None)

    def apply(
        self,
        batch: Any,
        node_wires: Sequence[tuple[str, bytes]] | None = None,
        containers: Sequence[ContainerRec] | None = None,
    ) -> None:
        if (
            batch.fallback_active
            and self.mirror.fallback_active
            and batch.rm_time_ms > self.mirror.rm_time_ms
        ):
            metrics.FALLBACK_SECONDS.inc((batch.rm_time_ms - self.mirror.rm_time_ms) / 1000.0)
        self.mirror.apply(batch, node_wires, containers)
        self.last_active = time.monotonic()
        self.last_seq = batch.seq
        self.state = SessionState.ACTIVE

    def _charge_clones(self, now_s: float, result: RoundResult) -> None:
        """The container-seconds the running clones held since the last round, when that round left an
        original waiting for room; then this round's state, for the next."""
        last = self._clones_while_waiting
        if last is not None and now_s > last[0] and last[1]:
            metrics.CLONE_SECONDS_WHILE_ORIGINALS_WAIT.inc((now_s - last[0]) * last[1])
        waits = any(d.reason == pb.REASON_WAITING_FOR_RESOURCES for d in result.deferrals)
        clones = sum(1 for c in result.copies or () if c.is_clone)
        self._clones_while_waiting = (now_s, clones) if waits else None

    def decide(self, round_fn: RoundFn, now_s: float, ttl_s: float) -> tuple[Any, RoundRecords]:
        """One decision round on the current mirror: the Plan to send and the decisions to record
        (`RoundRecords.build()`: the placement records are built once the plan is out)."""
        self.mirror.expire(now_s, ttl_s)
        result = round_fn(self.mirror, self.memory)
        choices, deferred = result.placements, result.deferrals
        self._charge_clones(now_s, result)
        epoch = self.take_epoch()
        plan = pb.Plan(
            session_id=self.session_id, epoch=epoch, in_reply_to_seq=self.last_seq, status=pb.BATCH_ACCEPTED
        )
        decisions: list[Decision] = []
        wall = time.time()
        prefix = f"{self.session_id[:8]}-{epoch}-"
        wire_caps: dict[Res, Any] = {}  # one wire Resource and one JSON form per distinct capability
        json_caps: dict[Res, dict[str, Any]] = {}
        sent: list[OutstandingPlacement] = []
        placed: list[tuple[str, PlacementChoice]] = []
        last_deferral, add_wire = self._last_deferral, plan.placements.add
        for c in choices:
            pid = prefix + str(next(self._placement_ids))
            cap = c.capability
            sent.append(OutstandingPlacement(pid, c.key, c.node_id, cap, c.count, now_s))
            last_deferral.pop(c.key, None)
            attempt, prio, alloc = c.key
            wire_cap = wire_caps.get(cap)
            if wire_cap is None:
                wire_cap = wire_caps[cap] = cap.to_pb()
                json_caps[cap] = cap.to_json()
            add_wire(
                placement_id=pid,
                attempt_id=attempt,
                priority=prio,
                allocation_request_id=alloc,
                node_id=c.node_id,
                count=c.count,
                is_clone=c.reason == pb.REASON_CLONE_IDLE_CAPACITY,  # service/round/clones.py's pass
                reason=c.reason,
                detail=c.detail,
                capability=wire_cap,
            )
            placed.append((pid, c))
        self.mirror.add_placements(sent)
        # AM plans translate from this, without the lock (service/round/planview.py): once the round's
        # placements hold their room, as a translation under the lock before the next batch would see them
        self.view = publish(self.mirror, self.memory, epoch, now_s)
        for d in deferred:
            attempt, prio, alloc = d.key
            plan.deferrals.add(
                attempt_id=attempt,
                priority=prio,
                allocation_request_id=alloc,
                reason=d.reason,
                detail=d.detail,
            )
            # Log a deferral when its reason changes, not every tick (the plan carries it every tick).
            if self._last_deferral.get(d.key) != d.reason:
                self._last_deferral[d.key] = d.reason
                decisions.append(
                    Decision(
                        time=wall,
                        kind=DecisionKind.DEFERRAL,
                        reason=reason_name(d.reason),
                        application_id=application_of_attempt(attempt),
                        detail=d.detail,
                        inputs={
                            "rm_id": self.rm_id,
                            "attempt_id": attempt,
                            "priority": prio,
                            "allocation_request_id": alloc,
                        },
                    )
                )
        for k in result.kills:  # clones yielding to waiting originals (service/round/yielding.py)
            plan.kill_container_ids.append(k.container_id)
            plan.kill_application_ids.append(k.application_id)
            decisions.append(
                Decision(
                    time=wall,
                    kind=DecisionKind.KILL,
                    reason=k.reason,
                    application_id=k.application_id,
                    detail=k.detail,
                    inputs={"rm_id": self.rm_id, "container_id": k.container_id},
                )
            )
        for r in result.records:  # priorities, clone grants, ω: logged when they change
            if r.kind is DecisionKind.PRIORITY and "priority" in r.inputs:
                self._priorities[r.application_id] = (
                    float(r.inputs["priority"]),
                    int(r.inputs.get("rank", 0)),
                )
            memo = (r.kind.value, r.application_id, r.job_id)
            value = (r.reason, r.inputs)  # dict equality: no formatting per record and round
            if self._last_record.get(memo) != value:
                self._last_record[memo] = value
                decisions.append(r)
        for key in [k for k in self._last_deferral if k not in self.mirror.asks]:
            del self._last_deferral[key]
        if len(self._last_record) > 2 * len(self.mirror.apps) + 64:
            live = set(self.mirror.apps) | {application_of_attempt(k[0]) for k in self.mirror.asks}
            for memo in [m for m in self._last_record if m[1] not in live]:
                del self._last_record[memo]
            for app_id in [a for a in self._priorities if a not in live]:
                del self._priorities[app_id]
        return plan, RoundRecords(self.rm_id, self.session_id, epoch, wall, placed, json_caps, decisions)


@dataclass(slots=True)
class Owner:
    """The RM an application belongs to: the rm_id whose session mirrored it first (kept across that
    RM's registrations, as long as one of its sessions lives) and the AMRMToken digests it sent."""

    rm_id: str
    tokens: tuple[bytes, ...]


class Denied(Refusal):
    """A registration that another caller's live session forbids (PERMISSION_DENIED, not a bound)."""


class SessionRegistry:
    """All sessions, by id and by rm_id; Register replaces the rm_id's previous session.

    Bounded (service/limits.py): a session without a batch for `limits.session_idle_s` is reaped (a Sync
    stream idle for `limits.sync_idle_s`, shorter, was closed before); a Register for a new rm_id while
    `limits.sessions` are live, or while its caller (service/rmproxy/callers.py) holds
    `limits.sessions_per_caller` of them, is refused (live sessions are never evicted by newcomers).

    Applications belong to an RM (`claim`, `owner`): the first rm_id whose session mirrors one owns it,
    with its AMRMToken digests, until that RM removes it, leaves it out of a full resync or has no live
    session; the same application mirrored by another rm_id's session is its business alone (its own
    rounds) and never changes whose digest the AM must present.

    `bind_callers` (set when shims are not authenticated: loopback without a secret): an rm_id whose
    live session another caller registered, with a batch within `limits.sync_idle_s`, cannot be
    registered by this one (with a secret, any holder of it may take over, as an RM HA failover does)."""

    def __init__(self, limits: Limits = DEFAULTS, bind_callers: bool = False) -> None:
        self.limits = limits
        self.bind_callers = bind_callers
        self._lock = threading.Lock()
        self._by_id: dict[str, Session] = {}
        self._by_rm: dict[str, Session] = {}
        self._owners: dict[str, Owner] = {}  # application id -> its RM
        self.reaped = 0
        self.claims_refused = 0  # upserts of an application another live RM owns

    def _reap(self) -> None:
        """Forget idle sessions, and the applications of RMs without a session (caller holds `_lock`)."""
        cutoff = time.monotonic() - self.limits.session_idle_s
        for s in [s for s in self._by_id.values() if s.last_active < cutoff]:
            del self._by_id[s.session_id]
            if self._by_rm.get(s.rm_id) is s:
                del self._by_rm[s.rm_id]
            self.reaped += 1
        for app_id in [a for a, o in self._owners.items() if o.rm_id not in self._by_rm]:
            del self._owners[app_id]

    def register(
        self,
        rm_id: str,
        tick_ms: int,
        resource_types: Sequence[str],
        peer: str = "",
        caller: str = "",
    ) -> Session:
        with self._lock:
            self._reap()
            old = self._by_rm.get(rm_id)
            if old is None and len(self._by_id) >= self.limits.sessions:
                raise Refusal(
                    "rm_id",
                    f"{len(self._by_id)} live sessions, limit {self.limits.sessions} (limits.sessions)",
                )
            mine = sum(1 for s in self._by_id.values() if s.caller == caller)
            if (old is None or old.caller != caller) and mine >= self.limits.sessions_per_caller:
                raise Refusal(
                    "rm_id",
                    f"{mine} live sessions of this caller ({caller}), limit "
                    f"{self.limits.sessions_per_caller} (limits.sessions_per_caller)",
                )
            if (
                self.bind_callers
                and old is not None
                and old.caller != caller
                and time.monotonic() - old.last_active < self.limits.sync_idle_s
            ):
                raise Denied(
                    "rm_id",
                    f"{shown(rm_id)} is held by a live session of another caller, with a batch within "
                    f"{self.limits.sync_idle_s:g} s (limits.sync_idle_s); without a shared secret "
                    "(grpc.auth_secret_file) only that caller may register it again",
                )
            # Epochs grow across sessions and restarts: wall-clock microseconds, past the old session.
            first = time.time_ns() // 1000
            if old is not None:
                with old.lock:
                    old.state = SessionState.SUPERSEDED
                    first = max(first, old.last_epoch + 1)
                self._by_id.pop(old.session_id, None)
            s = Session(
                uuid.uuid4().hex, rm_id, first, tick_ms, tuple(resource_types), peer=peer, caller=caller
            )
            self._by_id[s.session_id] = s
            self._by_rm[rm_id] = s
            return s

    def claim(
        self,
        s: Session,
        upserted: Sequence[tuple[str, tuple[bytes, ...]]],
        removed: Sequence[str] = (),
        full_resync: bool = False,
    ) -> None:
        """What a batch of `s` (applied) says of its applications: (id, AMRMToken digests) upserted,
        ids removed; a full resync also releases the owned applications it leaves out."""
        with self._lock:
            if self._by_id.get(s.session_id) is not s:
                return  # superseded meanwhile: its successor claims for the rm_id
            owners, rm_id = self._owners, s.rm_id
            if full_resync:
                kept = {a for a, _ in upserted}
                for app_id in [a for a, o in owners.items() if o.rm_id == rm_id and a not in kept]:
                    del owners[app_id]
            for app_id in removed:
                o = owners.get(app_id)
                if o is not None and o.rm_id == rm_id:
                    del owners[app_id]
            for app_id, tokens in upserted:
                o = owners.get(app_id)
                if o is None or o.rm_id == rm_id or o.rm_id not in self._by_rm:
                    owners[app_id] = Owner(rm_id, tokens)
                else:
                    self.claims_refused += 1

    def owner(self, app_id: str) -> tuple[Owner, Session] | None:
        """The RM `app_id` belongs to and its current session; None if no live RM owns it."""
        with self._lock:
            o = self._owners.get(app_id)
            if o is None:
                return None
            s = self._by_rm.get(o.rm_id)
            return (o, s) if s is not None else None

    def plan_view(self, app_id: str) -> PlanView | None:
        """The latest round's view (service/round/planview.py) of the session of the RM that owns `app_id`,
        else of a session that mirrors it, else of any; None before any round. Takes no session's lock."""
        owned = self.owner(app_id)  # the RM the application belongs to, not another session mirroring it
        if owned is not None:
            return owned[1].view
        views = [v for s in self.sessions() if (v := s.view) is not None]
        return next((v for v in views if v.knows(app_id)), views[0] if views else None)

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            return self._by_id.get(session_id)

    def sessions(self) -> list[Session]:
        with self._lock:
            return list(self._by_id.values())
