"""Translation between the YARN mirror and the decision core (pyscheduler.policies).

YARN -> core (choices documented here, tested in tests/rpc/test_translate.py):
- each RUNNING node with non-zero capacity is a row of ClusterState; dimensions are vcores, memory_mb,
  then every further resource type seen, sorted; free = the mirror's free room (capacity minus the
  larger of the RM's allocation and the mirrored containers, minus outstanding placements), clipped at 0;
- each application is a Job (arrival = submit time in seconds); each pending scheduler key
  (attempt, priority, allocation id) with containers still to place is a Phase whose tasks are those
  containers. When the AM helper reported a job profile, a key whose YARN priority matches a profile
  phase takes that phase's statistics; otherwise mean 1 s, sd 0 (no data). DAG parents are NOT passed
  for YARN asks: an ask exists only once the AM decided to ask (MapReduce's reduce slow-start overlaps
  maps on purpose), so holding it back for an unfinished parent could only deadlock;
- containers of an ask that the AM helper says are for clones still waiting (ATTEMPT_WAITING reports)
  are left out of the Job and placed after the core's round, in idle capacity only (rpc/clones.py);
- zero-size asks cannot be a core Phase (demand must be non-zero): they are deferred as infeasible;
- asks with strict locality (relax_locality false) or a blacklist are not given to the core, which
  knows no node constraints: after the core's round, the service-side placer puts them, FCFS, on
  their preferred (and never on their blacklisted) nodes in the room the core left.

Core -> YARN: placements are grouped per (scheduler key, node) into one wire Placement with a count;
clone placements are not sent on Sync (the AM helper requests clone containers itself, from the
ClonePlan); every placement is re-checked against the mirror's free room and locality (relax_locality
false: preferred hosts/racks only), and whatever fails the check is deferred instead.

AM containers are spread (choice; the papers place tasks, not ApplicationMasters): an AM container
goes to the running node with the fewest AM containers (live, and placed earlier in the round) that has
room and suits its locality, the core's node first among equals. Packing them (best fit) put most of a
job mix's AMs on one node; on a slow or failing node that slows or kills every job at once.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from pyscheduler import metrics
from pyscheduler.objects import ClusterState, Job, Phase, Resources
from pyscheduler.policies import Decisions, Policy, Snapshot
from pyscheduler.rpc import yielding
from pyscheduler.rpc.amspread import preferred as _preferred
from pyscheduler.rpc.amspread import spread_am_containers as _spread_am_containers
from pyscheduler.rpc.clones import CloneAsks, clone_counts, place_clones
from pyscheduler.rpc.isolate import Isolation
from pyscheduler.rpc.limits import DEFAULTS, Limits, ask_bound
from pyscheduler.rpc.mirror import AskKey, AskRec, Mirror, NodeRec, application_of_attempt
from pyscheduler.rpc.nodearrays import CAP
from pyscheduler.rpc.placer import (
    DeferralChoice,
    KillChoice,
    PlacementChoice,
    RoundResult,
    fcfs_order,
    place,
    placer_only,
)
from pyscheduler.rpc.res import Res, fits_count, res_add
from pyscheduler.rpc.yielding import Copy, CopySource, waiting_alone, waiting_first, waiting_originals
from pyscheduler.wire import pb

log = logging.getLogger("dollymp.translate")
_PLACEMENT_REASONS = {
    "first_fit": pb.REASON_FCFS_ORDER,
    "fcfs_order": pb.REASON_FCFS_ORDER,
    "best_fit": pb.REASON_BEST_FIT,
    "priority_order": pb.REASON_PRIORITY_ORDER,
}
_DEFERRAL_REASONS = {
    "waiting_for_resources": pb.REASON_WAITING_FOR_RESOURCES,
    "infeasible": pb.REASON_INFEASIBLE,
    "parent_phase_unfinished": pb.REASON_PARENT_PHASE_UNFINISHED,
    "lower_priority": pb.REASON_LOWER_PRIORITY,
    "am_share_cap": pb.REASON_AM_SHARE_CAP,
}


@dataclass(frozen=True, slots=True)
class PhaseHint:
    """What the AM helper told us about the phase a YARN priority belongs to."""

    phase_id: str
    mean: float
    sd: float
    waiting_clones: int = 0  # clones the AM launched that wait for a container (see rpc/clones.py)
    waiting_alone: int = 0  # of those, clones judged alone (late, phase tail, last stage): placed first
    # of the others (clones at launch), those that would be their task's first running clone, of a task not
    # covered: clones worth the least (beaten or covered) yield to them (rpc/yielding.py)
    waiting_first: int = 0


# application_id -> {yarn priority -> hint}; filled by the AppMasterService.
HintSource = Callable[[str], dict[int, PhaseHint]]


CLAMPED = "clamped"  # mirror.cache: ask -> containers beyond its bound this round (rpc/limits.py)


def _dims(mirror: Mirror) -> tuple[str, ...]:
    return ("vcores", "memory_mb", *sorted(mirror.resource_types))


@dataclass(slots=True)
class _ClusterCache:
    """The running nodes as one ClusterState kept across rounds, and each row's row in the mirror's
    NodeArrays; rebuilt when the set of rows changes, its figures rewritten from the arrays each round."""

    layout: int
    dims: tuple[str, ...]
    state: ClusterState
    rows: npt.NDArray[np.intp]


def _row_member(n: NodeRec) -> bool:
    return n.state == pb.NODE_STATE_RUNNING and (n.capacity.memory_mb > 0 or n.capacity.vcores > 0)


def _figures(mirror: Mirror, rows: npt.NDArray[np.intp], dims: tuple[str, ...]) -> tuple[Any, Any]:
    """Capacity and free room (clipped to 0..capacity) of the mirror's node rows `rows`, columns `dims`:
    NodeRec.free() for every row at once."""
    cap = mirror.arrays.columns(CAP, rows, dims).astype(np.float64)
    free = mirror.arrays.free_rows(rows, dims).astype(np.float64)
    return cap, np.clip(free, 0.0, cap)


def _build(mirror: Mirror, dims: tuple[str, ...]) -> _ClusterCache:
    members = sorted((n for n in mirror.nodes.values() if _row_member(n)), key=lambda n: n.node_id)
    rows = np.fromiter((n.row for n in members), np.intp, len(members))
    cap, free = _figures(mirror, rows, dims)
    state = ClusterState.from_arrays([n.node_id for n in members], cap, free, dims)
    return _ClusterCache(mirror.layout, dims, state, rows)


def cluster_of(mirror: Mirror) -> ClusterState:
    """ClusterState of the running nodes (sorted by id), its figures read from the mirror's arrays."""
    dims = _dims(mirror)
    c = mirror.cache.get("cluster")
    if not isinstance(c, _ClusterCache) or c.layout != mirror.layout or c.dims != dims:
        c = mirror.cache["cluster"] = _build(mirror, dims)
    elif mirror.dirty:  # rows whose figures changed (rows come and go with `layout`)
        m = len(c.rows)
        c.state.capacity[:m], c.state.free[:m] = _figures(mirror, c.rows, dims)
    mirror.dirty.clear()
    return c.state


def _vector(r: Res, dims: tuple[str, ...]) -> tuple[float, ...]:
    if not r.others and len(dims) == 2:
        return (float(r.vcores), float(r.memory_mb))
    o = dict(r.others)
    return (float(r.vcores), float(r.memory_mb), *(float(o.get(d, 0)) for d in dims[2:]))


def _job(
    mirror: Mirror,
    app_id: str,
    asks: list[AskRec],
    hint: dict[int, PhaseHint],
    dims: tuple[str, ...],
    now_s: float,
    clones: dict[AskKey, int],
    bound: Callable[[Res], int],
) -> tuple[Job | None, list[tuple[str, AskRec]]]:
    """The core Job for an application's pending original containers (clone asks left out), or None
    when every pending container is a clone's; the same object while nothing changed. An ask's tasks
    are at most `bound(capability)` (rpc/limits.py: 64 cluster-fulls, at most a hard cap)."""
    app = mirror.apps.get(app_id)
    asks = sorted(
        (a for a in asks if a.num_containers - a.outstanding > clones.get(a.key, 0)),
        key=lambda a: (a.key[1], a.key[2], a.key[0]),
    )
    if not asks:
        return None, []
    stats = [hint.get(a.key[1]) for a in asks]
    pending = [a.num_containers - a.outstanding - clones.get(a.key, 0) for a in asks]
    tasks = [min(p, bound(a.capability)) for p, a in zip(pending, asks, strict=True)]
    clamped: dict[AskKey, int] = mirror.cache.setdefault(CLAMPED, {})  # deferred by core_round
    clamped.update((a.key, p - n) for a, p, n in zip(asks, pending, tasks, strict=True) if p > n)
    signature = (
        app.submit_time_ms if app is not None else None,
        app.priority if app is not None else 0,
        dims,
        tuple((a.key, n, a.capability) for a, n in zip(asks, tasks, strict=True)),
        tuple((h.mean, h.sd) if h is not None else None for h in stats),
    )
    jobs: dict[str, Any] = mirror.cache.setdefault("jobs", {})
    hit = jobs.get(app_id)
    if hit is not None and hit[0] == signature:
        return hit[1], hit[2]
    phases: list[Phase] = []
    names: list[tuple[str, AskRec]] = []
    for a, h, n in zip(asks, stats, tasks, strict=True):
        name = f"p{a.key[1]}.a{a.key[2]}.{a.key[0]}"
        phases.append(
            Phase(
                name,
                n,
                Resources(_vector(a.capability, dims)),
                h.mean if h is not None else 1.0,
                h.sd if h is not None else 0.0,
            )
        )
        names.append((name, a))
    arrival = app.submit_time_ms / 1000.0 if app is not None else now_s
    name = app.name if app is not None else ""
    job = Job(app_id, arrival, phases, name, app_id, app_priority=app.priority if app is not None else 0)
    jobs[app_id] = (signature, job, names)
    return job, names


def to_snapshot(
    mirror: Mirror, now_s: float, hints: HintSource | None = None
) -> tuple[Snapshot, dict[tuple[str, str], AskRec], list[AskRec]]:
    """The core's view of the mirror, the (job id, phase id) -> ask map, and the zero-size asks."""
    snapshot, index, zero, _ = snapshot_and_clones(mirror, now_s, hints)
    return snapshot, index, zero


def snapshot_and_clones(
    mirror: Mirror,
    now_s: float,
    hints: HintSource | None = None,
    limits: Limits = DEFAULTS,
    isolation: Isolation | None = None,
) -> tuple[Snapshot, dict[tuple[str, str], AskRec], list[AskRec], CloneAsks]:
    """`to_snapshot`, plus the clone containers among the pending ones (rpc/clones.py), which the
    snapshot leaves out. With `isolation`, an application whose translation raises is left out of the
    round (rpc/isolate.py) and so is one excluded earlier that has not changed since."""
    dims = _dims(mirror)
    cluster = cluster_of(mirror)
    total = cluster.capacity.sum(axis=0).tolist() if len(cluster.node_ids) else [0.0] * len(dims)
    mirror.cache[CLAMPED] = {}
    sizes: dict[Res, int] = {}

    def bound(cap: Res) -> int:
        b = sizes.get(cap)
        if b is None:
            b = sizes[cap] = ask_bound(_vector(cap, dims), total, limits.containers_per_ask)
        return b

    by_app: dict[str, list[AskRec]] = {}
    zero: list[AskRec] = []
    for a in mirror.asks.values():
        if a.num_containers - a.outstanding <= 0 or placer_only(a):
            continue
        if (
            a.capability.memory_mb == 0
            and a.capability.vcores == 0
            and not any(v for _, v in a.capability.others)
        ):
            zero.append(a)
            continue
        by_app.setdefault(application_of_attempt(a.key[0]), []).append(a)
    jobs: list[Job] = []
    index: dict[tuple[str, str], AskRec] = {}
    clones = CloneAsks()
    for app_id, asks in sorted(by_app.items()):

        def one(hint: dict[int, PhaseHint], app_id: str = app_id, asks: list[AskRec] = asks) -> Any:
            return _app_job(mirror, app_id, asks, hint, dims, now_s, bound)

        if isolation is not None:
            got = isolation.translate(app_id, asks, hints, one)
        else:
            got = one(hints(app_id) if hints is not None else {})
        if got is None:
            continue
        job, names, app_clones = got
        clones.update(app_clones)
        clones.alone.update(app_clones.alone)
        clones.first.update(app_clones.first)
        if job is None:
            continue
        jobs.append(job)
        for name, a in names:
            index[(app_id, name)] = a
    cached = mirror.cache.get("jobs", {})
    for app_id in [k for k in cached if k not in by_app]:
        del cached[app_id]
    return Snapshot(now_s, cluster, jobs), index, zero, clones


def _app_job(
    mirror: Mirror,
    app_id: str,
    asks: list[AskRec],
    hint: dict[int, PhaseHint],
    dims: tuple[str, ...],
    now_s: float,
    bound: Callable[[Res], int],
) -> tuple[Job | None, list[tuple[str, AskRec]], CloneAsks]:
    """One application's core Job (`_job`) and its clone containers (rpc/clones.py)."""
    clones = CloneAsks()
    waiting = {prio: h.waiting_clones for prio, h in hint.items() if h.waiting_clones > 0}
    app_clones = clone_counts(asks, waiting) if waiting else {}
    clones.update(app_clones)
    alone = {prio: h.waiting_alone for prio, h in hint.items() if h.waiting_alone > 0}
    if alone and app_clones:
        clones.alone.update(clone_counts([a for a in asks if a.key in app_clones], alone, app_clones))
    first = {prio: h.waiting_first for prio, h in hint.items() if h.waiting_first > 0}
    if first and app_clones:
        clones.first.update(clone_counts([a for a in asks if a.key in app_clones], first, app_clones))
    job, names = _job(mirror, app_id, asks, hint, dims, now_s, app_clones, bound)
    return job, names, clones


def from_decisions(
    mirror: Mirror, decisions: Decisions, index: dict[tuple[str, str], AskRec], zero: list[AskRec]
) -> RoundResult:
    out = RoundResult()
    counts: dict[tuple[AskKey, str, str], int] = {}
    jobs, node_ids = decisions.jobs, decisions.node_ids
    rows = max(len(node_ids), 1)
    for c in decisions.chunks:  # grouped with numpy: a first round can place tens of thousands
        keep = ~c.is_clone
        if not keep.any():
            continue
        # One int64 key per (job, phase, node): a 1-D unique is much cheaper than unique(axis=0).
        phases = int(c.phase_k.max()) + 1
        codes = (c.job_pos[keep].astype(np.int64) * phases + c.phase_k[keep]) * rows + c.node_row[keep]
        uniq, sizes = np.unique(codes, return_counts=True)
        asks: dict[int, AskRec] = {}
        for code, m in zip(uniq.tolist(), sizes.tolist(), strict=True):
            jk, row = divmod(code, rows)
            ask = asks.get(jk)
            if ask is None:
                j, k = divmod(jk, phases)
                job = jobs[j]
                ask = asks[jk] = index[(job.job_id, job.phases[k].phase_id)]
            group = (ask.key, node_ids[row], c.reason)
            counts[group] = counts.get(group, 0) + m
    if any(mirror.asks[key].am_container for key, _, _ in counts):
        counts = _spread_am_containers(mirror, counts)
    room = mirror.free_of({node_id for _, node_id, _ in counts})
    unplaced: dict[AskKey, int] = {}
    for (key, node_id, reason), want in counts.items():
        ask = mirror.asks[key]
        r = room[node_id]
        k = fits_count(ask.capability, r, want) if _preferred(mirror, ask, node_id) else 0
        if k > 0:
            cap = ask.capability
            room[node_id] = (
                Res(r.memory_mb - cap.memory_mb * k, r.vcores - cap.vcores * k)
                if not (r.others or cap.others)
                else res_add(r, cap, -k)
            )
            wire_reason = pb.REASON_AM_CONTAINER if ask.am_container else _PLACEMENT_REASONS.get(reason, 0)
            detail = "AM container" if ask.am_container else reason
            out.placements.append(
                PlacementChoice(key, node_id, cap, k, wire_reason or pb.REASON_PRIORITY_ORDER, detail)
            )
        if k < want:
            unplaced[key] = unplaced.get(key, 0) + want - k
    for key, n in unplaced.items():
        out.deferrals.append(
            DeferralChoice(
                key, pb.REASON_WAITING_FOR_RESOURCES, f"{n} unplaced: failed the fit/locality re-check"
            )
        )
    for d in decisions.deferrals:
        ask = index[(d.job_id, d.phase_id)]
        out.deferrals.append(
            DeferralChoice(
                ask.key,
                _DEFERRAL_REASONS.get(d.reason, pb.REASON_WAITING_FOR_RESOURCES),
                d.detail or d.reason,
            )
        )
    for a in zero:
        out.deferrals.append(DeferralChoice(a.key, pb.REASON_INFEASIBLE, "zero-size ask"))
    # Priorities, clone grants, ω, kills (placements and deferrals are logged by the session). A job's
    # priority is passed on only when it differs from the last round's (the session logs changes only):
    # not a thousand records per round for a thousand unchanged jobs.
    last: dict[str, tuple[int, int, str]] = mirror.cache.get("priorities", {})
    now: dict[str, tuple[int, int, str]] = {}
    changed = []
    for p in decisions.priorities:
        value = now[p.job_id] = (p.priority, p.rank, p.reason)
        if last.get(p.job_id) != value:
            changed.append(p)
    mirror.cache["priorities"] = now
    out.records = dataclasses.replace(decisions, chunks=[], deferrals=[], priorities=changed).to_records()
    return out


def core_round(
    policy: Policy,
    hints: HintSource | None = None,
    clock: Callable[[], float] | None = None,
    copies: CopySource | None = None,
    release_beaten: bool = True,
    limits: Limits = DEFAULTS,
    scoped: bool = False,
) -> Callable[[Mirror], RoundResult]:
    """A round function deciding with a core policy. With `copies` (the AM helper's running attempts),
    running clones yield their containers to originals still waiting after the round, and with
    `release_beaten` clones at launch that their task's lead clearly beats are released at once, every
    round (rpc/yielding.py)."""
    import time

    now = clock or time.time

    def running_of(mirror: Mirror) -> list[Copy]:
        """`copies()`; `scoped`: of the mirror's applications only (not other sessions' tenants)."""
        assert copies is not None
        try:
            return copies(mirror.apps.keys()) if scoped else copies()
        except Exception:  # the AM reports' side fails: the round goes on without yielding
            log.exception("running copies unavailable this round")
            return []

    def round_fn(mirror: Mirror) -> RoundResult:
        released: list[KillChoice] = []
        running = running_of(mirror) if copies is not None and release_beaten else None
        if running is not None:
            released = yielding.beaten(running, mirror, int(now() * 1000))
            metrics.CLONES_BEATEN.inc(len(released))
        if not any(a.num_containers > a.outstanding for a in mirror.asks.values()):
            return RoundResult(kills=released)  # nothing pending: no round (changed rows stay dirty)
        iso = Isolation(mirror)  # one application's error leaves it out, not the round (rpc/isolate.py)
        snapshot, index, zero, clones = snapshot_and_clones(mirror, now(), hints, limits, iso)
        result = from_decisions(mirror, iso.decide(policy, snapshot, index), index, zero)
        result.deferrals.extend(iso.deferrals())
        held = {d.key for d in result.deferrals}
        for key, n in mirror.cache.get(CLAMPED, {}).items():  # beyond an ask's bound: a later round
            if key not in held:
                result.deferrals.append(
                    DeferralChoice(key, pb.REASON_WAITING_FOR_RESOURCES, f"{n} beyond what the cluster holds")
                )
        result.records.extend(iso.records)
        strict = [a for a in mirror.asks.values() if placer_only(a)]
        if strict:
            ordered = [a for a in fcfs_order(mirror) if placer_only(a)]
            extra = place(mirror, ordered, pb.REASON_FCFS_ORDER, taken=result.placements)
            result.placements.extend(extra.placements)
            result.deferrals.extend(extra.deferrals)
        originals = waiting_originals(mirror, result, clones) if copies is not None else {}
        placed, deferred = place_clones(mirror, clones, result)  # last: only idle capacity is left
        result.placements.extend(placed)
        result.deferrals.extend(deferred)
        if copies is not None:
            alone = waiting_alone(mirror, clones.alone, placed)
            first = waiting_first(clones, alone, placed)
            now_ms = int(now() * 1000)
            # at most as many waiting as containers could yield (an ask of 2^31 containers: a list each)
            most = max(1, min(limits.containers_per_ask, len(mirror.containers)))
            counts = {("original", k): min(n, most) for k, n in originals.items()}
            counts.update({("alone", k): min(n, most) for k, n in alone.items()})
            counts.update({("first", k): min(n, most) for k, n in first.items()})
            waiting = yielding.steady(mirror, counts, now_ms)
            if waiting:
                result.kills = yielding.choose(
                    mirror,
                    waiting,
                    running if running is not None else copies(mirror.apps.keys()),
                    now_ms,
                    result.placements,
                )
                metrics.CLONES_YIELDED.inc(len(result.kills))
        result.kills[:0] = released
        return result

    return round_fn
