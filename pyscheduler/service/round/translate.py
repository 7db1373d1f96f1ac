"""Translation between the YARN mirror and the decision core (pyscheduler.policies).

YARN -> core (choices documented here, tested in tests/rpc/test_translate.py):
- each RUNNING node with non-zero capacity is a row of ClusterState; dimensions are vcores, memory_mb,
  then every further resource type seen, sorted; free = the mirror's free room (capacity minus the
  larger of the RM's allocation and the mirrored containers, minus outstanding placements), clipped at 0;
- each application is a Job (arrival = submit time in seconds); each pending scheduler key
  (attempt, priority, allocation id) with containers still to place is a Phase whose tasks are those
  containers. When the AM helper reported a job profile, a key whose YARN priority matches a profile
  phase takes that phase's statistics; otherwise θ and σ come, in DollyMP Sec. 5.2's order
  (estimate/runtimes.py), from the recurring-job history of the application's name in its queue at that
  YARN priority (service/state/runhistory.py), else from its own containers of that priority that succeeded,
  else from the framework-wide prior (earlier applications of its type in its queue at that priority), else
  1 s and 0 (nothing measured). The source of each ask's θ/σ is kept for the round's decisions' details
  (`RoundMemory.theta_sources`, read by service/round/coreround.py). DAG parents are NOT passed
  for YARN asks: an ask exists only once the AM decided to ask (MapReduce's reduce slow-start overlaps
  maps on purpose), so holding it back for an unfinished parent could only deadlock;
- containers of an ask that the AM helper says are for clones still waiting (ATTEMPT_WAITING reports)
  are left out of the Job and placed after the core's round, in idle capacity only (service/round/clones.py);
- zero-size asks cannot be a core Phase (demand must be non-zero): they are deferred as infeasible;
- asks with strict locality (relax_locality false) or a blacklist are not given to the core, which
  knows no node constraints: after the core's round, the service-side placer puts them, FCFS, on
  their preferred (and never on their blacklisted) nodes in the room the core left.

Core -> YARN (the placements and deferrals of the core's decisions, the round function): see
pyscheduler.service.round.coreround. The cluster rows are kept across rounds by
pyscheduler.service.round.clusterview.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pyscheduler.estimate.runtimes import PRIOR_ESTIMATE, theta_sigma
from pyscheduler.objects import Job, Phase, Resources
from pyscheduler.policies import Snapshot
from pyscheduler.service.limits import DEFAULTS, Limits, ask_bound
from pyscheduler.service.round.clones import CloneAsks, clone_counts
from pyscheduler.service.round.clusterview import cluster_of, dims_of
from pyscheduler.service.round.isolate import Isolation
from pyscheduler.service.round.placer import placer_only
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.state.mirror import AskKey, AskRec, Mirror, application_of_attempt
from pyscheduler.service.state.phasehints import HintSource, PhaseHint
from pyscheduler.service.state.resources import Res
from pyscheduler.service.state.runhistory import RunHistorySource


def _vector(r: Res, dims: tuple[str, ...]) -> tuple[float, ...]:
    if not r.others and len(dims) == 2:
        return (float(r.vcores), float(r.memory_mb))
    o = dict(r.others)
    return (float(r.vcores), float(r.memory_mb), *(float(o.get(d, 0)) for d in dims[2:]))


def _job(
    mirror: Mirror,
    memory: RoundMemory,
    app_id: str,
    asks: list[AskRec],
    hint: dict[int, PhaseHint],
    dims: tuple[str, ...],
    now_s: float,
    clones: dict[AskKey, int],
    bound: Callable[[Res], int],
    history: RunHistorySource | None = None,
) -> tuple[Job | None, list[tuple[str, AskRec]]]:
    """The core Job for an application's pending original containers (clone asks left out), or None
    when every pending container is a clone's; the same object while nothing changed. An ask's tasks
    are at most `bound(capability)` (service/limits.py: 64 cluster-fulls, at most a hard cap)."""
    app = mirror.apps.get(app_id)
    asks = sorted(
        (a for a in asks if a.num_containers - a.outstanding > clones.get(a.key, 0)),
        key=lambda a: (a.key[1], a.key[2], a.key[0]),
    )
    if not asks:
        return None, []
    stats = [hint.get(a.key[1]) or _measured(mirror, app_id, a.key[1], history) for a in asks]
    memory.theta_sources.update(zip([a.key for a in asks], stats, strict=True))
    pending = [a.num_containers - a.outstanding - clones.get(a.key, 0) for a in asks]
    tasks = [min(p, bound(a.capability)) for p, a in zip(pending, asks, strict=True)]
    memory.clamped.update(  # deferred by core_round
        (a.key, p - n) for a, p, n in zip(asks, pending, tasks, strict=True) if p > n
    )
    signature = (
        app.submit_time_ms if app is not None else None,
        app.priority if app is not None else 0,
        dims,
        tuple((a.key, n, a.capability) for a, n in zip(asks, tasks, strict=True)),
        tuple((h.mean, h.sd) if h is not None else None for h in stats),
    )
    jobs = memory.jobs
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
    mirror: Mirror,
    memory: RoundMemory,
    now_s: float,
    hints: HintSource | None = None,
    history: RunHistorySource | None = None,
) -> tuple[Snapshot, dict[tuple[str, str], AskRec], list[AskRec]]:
    """The core's view of the mirror, the (job id, phase id) -> ask map, and the zero-size asks."""
    snapshot, index, zero, _ = snapshot_and_clones(mirror, memory, now_s, hints, history=history)
    return snapshot, index, zero


def snapshot_and_clones(
    mirror: Mirror,
    memory: RoundMemory,
    now_s: float,
    hints: HintSource | None = None,
    limits: Limits = DEFAULTS,
    isolation: Isolation | None = None,
    history: RunHistorySource | None = None,
    late_first: bool = False,
) -> tuple[Snapshot, dict[tuple[str, str], AskRec], list[AskRec], CloneAsks]:
    """`to_snapshot`, plus the clone containers among the pending ones (service/round/clones.py), which the
    snapshot leaves out. With `isolation`, an application whose translation raises is left out of the
    round (service/round/isolate.py) and so is one excluded earlier that has not changed since. `history`: the
    recurring-job history of applications without an AM helper (service/state/runhistory.py). `late_first`
    (appmaster.late_first): clones judged alone are given to the core with their job's originals
    (`CloneAsks.ahead`)."""
    dims = dims_of(mirror)
    cluster = cluster_of(mirror, memory)
    total = cluster.capacity.sum(axis=0).tolist() if len(cluster.node_ids) else [0.0] * len(dims)
    memory.clamped = {}
    memory.theta_sources = {}
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
            return _app_job(mirror, memory, app_id, asks, hint, dims, now_s, bound, history, late_first)

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
        clones.ahead.update(app_clones.ahead)
        if job is None:
            continue
        jobs.append(job)
        for name, a in names:
            index[(app_id, name)] = a
    cached = memory.jobs
    for app_id in [k for k in cached if k not in by_app]:
        del cached[app_id]
    return Snapshot(now_s, cluster, jobs), index, zero, clones


def theta_source(memory: RoundMemory, key: AskKey) -> str:
    """Where the θ/σ of an ask in this round's core Jobs came from, for a decision's detail ("" for an
    ask the core was not given)."""
    sources = memory.theta_sources
    if key not in sources:
        return ""
    h = sources[key]
    return h.describe() if h is not None else PRIOR_ESTIMATE.describe()


def _measured(
    mirror: Mirror, app_id: str, priority: int, history: RunHistorySource | None = None
) -> PhaseHint | None:
    """θ and σ of an application's phase (its YARN priority) that no AM helper describes: the history of
    its name in its queue, else its own containers that succeeded (`Mirror.run_times`), else its
    framework's prior in its queue; None when none holds a run time (then 1 s and 0)."""
    own = mirror.run_times.get((app_id, priority))
    past = prior = None
    if history is not None:
        app = mirror.apps.get(app_id)
        if app is not None:
            past = history.moments(app.name, app.queue, priority) if app.name else None
            if past is None and own is None:
                prior = history.framework(app.application_type, app.queue, priority)
    if past is None and own is None and prior is None:  # nothing measured
        return None
    est = theta_sigma(past, own, prior)
    if est is PRIOR_ESTIMATE:
        return None
    return PhaseHint(f"p{priority}", est.mean, est.sd, source=est.source, samples=est.samples)


def _app_job(
    mirror: Mirror,
    memory: RoundMemory,
    app_id: str,
    asks: list[AskRec],
    hint: dict[int, PhaseHint],
    dims: tuple[str, ...],
    now_s: float,
    bound: Callable[[Res], int],
    history: RunHistorySource | None = None,
    late_first: bool = False,
) -> tuple[Job | None, list[tuple[str, AskRec]], CloneAsks]:
    """One application's core Job (`_job`) and its clone containers (service/round/clones.py); with
    `late_first`, the clones judged alone stay in the Job's pending tasks (`CloneAsks.ahead`)."""
    clones = CloneAsks()
    waiting = {prio: h.waiting_clones for prio, h in hint.items() if h.waiting_clones > 0}
    app_clones = clone_counts(asks, waiting) if waiting else {}
    alone = {prio: h.waiting_alone for prio, h in hint.items() if h.waiting_alone > 0}
    if alone and app_clones:
        clones.alone.update(clone_counts([a for a in asks if a.key in app_clones], alone, app_clones))
    if late_first and clones.alone:
        clones.ahead, clones.alone = clones.alone, {}
        app_clones = {
            k: n - clones.ahead.get(k, 0) for k, n in app_clones.items() if n > clones.ahead.get(k, 0)
        }
    clones.update(app_clones)
    first = {prio: h.waiting_first for prio, h in hint.items() if h.waiting_first > 0}
    if first and app_clones:
        clones.first.update(clone_counts([a for a in asks if a.key in app_clones], first, app_clones))
    job, names = _job(mirror, memory, app_id, asks, hint, dims, now_s, app_clones, bound, history)
    return job, names, clones
