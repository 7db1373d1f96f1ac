"""The core's decisions -> the round's placements and deferrals (`from_decisions`), and the round function
deciding with a core policy (`core_round`); the mirror -> the core's Snapshot is
pyscheduler.service.round.translate.

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

import numpy as np

from pyscheduler import metrics
from pyscheduler.objects import Job
from pyscheduler.objects.decision import Decision, DecisionKind
from pyscheduler.policies import Decisions, Policy
from pyscheduler.service.limits import DEFAULTS, Limits
from pyscheduler.service.round import yielding
from pyscheduler.service.round.amspread import preferred as _preferred
from pyscheduler.service.round.amspread import spread_am_containers as _spread_am_containers
from pyscheduler.service.round.clones import place_clones
from pyscheduler.service.round.isolate import Isolation
from pyscheduler.service.round.placer import fcfs_order, place, placer_only
from pyscheduler.service.round.plan import DeferralChoice, KillChoice, PlacementChoice, RoundResult
from pyscheduler.service.round.round_memory import RoundMemory
from pyscheduler.service.round.translate import snapshot_and_clones, theta_source
from pyscheduler.service.round.waiting import steady, waiting_alone, waiting_first, waiting_originals
from pyscheduler.service.state.amcopies import CopySource
from pyscheduler.service.state.amview import AmSource, from_sources
from pyscheduler.service.state.mirror import AskKey, AskRec, Mirror, application_of_attempt
from pyscheduler.service.state.phasehints import HintSource
from pyscheduler.service.state.resources import Res, fits_count, res_add
from pyscheduler.service.state.runhistory import RunHistorySource
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


def _sourced(memory: RoundMemory, key: AskKey, text: str) -> str:
    """A decision's detail followed by where its ask's θ/σ came from (service/round/translate.py)."""
    src = theta_source(memory, key)
    return f"{text}; {src}" if src else text


def _with_sources(
    memory: RoundMemory, records: list[Decision], jobs: list[Job], index: dict[tuple[str, str], AskRec]
) -> list[Decision]:
    """Priority records whose detail says where each of the job's phases got its θ/σ."""
    by_id = {j.job_id: j for j in jobs}
    out = []
    for r in records:
        job = by_id.get(r.job_id) if r.kind is DecisionKind.PRIORITY else None
        if job is not None:
            keys = [index[(job.job_id, ph.phase_id)].key for ph in job.phases]
            said = dict.fromkeys(f"priority {k[1]}: {theta_source(memory, k)}" for k in keys)
            r = dataclasses.replace(r, detail="; ".join(said))
        out.append(r)
    return out


def from_decisions(
    mirror: Mirror,
    memory: RoundMemory,
    decisions: Decisions,
    index: dict[tuple[str, str], AskRec],
    zero: list[AskRec],
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
            detail = _sourced(memory, key, "AM container" if ask.am_container else reason)
            out.placements.append(
                PlacementChoice(key, node_id, cap, k, wire_reason or pb.REASON_PRIORITY_ORDER, detail)
            )
        if k < want:
            unplaced[key] = unplaced.get(key, 0) + want - k
    for key, n in unplaced.items():
        out.deferrals.append(
            DeferralChoice(
                key,
                pb.REASON_WAITING_FOR_RESOURCES,
                _sourced(memory, key, f"{n} unplaced: failed the fit/locality re-check"),
            )
        )
    for d in decisions.deferrals:
        ask = index[(d.job_id, d.phase_id)]
        out.deferrals.append(
            DeferralChoice(
                ask.key,
                _DEFERRAL_REASONS.get(d.reason, pb.REASON_WAITING_FOR_RESOURCES),
                _sourced(memory, ask.key, d.detail or d.reason),
            )
        )
    for a in zero:
        out.deferrals.append(DeferralChoice(a.key, pb.REASON_INFEASIBLE, "zero-size ask"))
    # Priorities, clone grants, ω, kills (placements and deferrals are logged by the session). A job's
    # priority is passed on only when it differs from the last round's (the session logs changes only):
    # not a thousand records per round for a thousand unchanged jobs.
    last = memory.priorities
    now: dict[str, tuple[int, int, str]] = {}
    changed = []
    for p in decisions.priorities:
        value = now[p.job_id] = (p.priority, p.rank, p.reason)
        if last.get(p.job_id) != value:
            changed.append(p)
    memory.priorities = now
    records = dataclasses.replace(decisions, chunks=[], deferrals=[], priorities=changed).to_records()
    out.records = _with_sources(memory, records, list(decisions.jobs), index) if changed else records
    return out


def core_round(
    policy: Policy,
    hints: HintSource | None = None,
    clock: Callable[[], float] | None = None,
    copies: CopySource | None = None,
    release_beaten: bool = True,
    limits: Limits = DEFAULTS,
    scoped: bool = False,
    beaten_rule: yielding.BeatenRule = yielding.BEATEN_RULE,
    history: RunHistorySource | None = None,
    am: AmSource | None = None,
    late_first: bool = False,
) -> Callable[[Mirror, RoundMemory], RoundResult]:
    """A round function deciding with a core policy. Each round reads the AM helpers' reports once, at its
    start (`am`, service/state/amview.py; without it, the `hints` and `copies` readers, each once). With
    copies (the AM helper's running attempts), running clones yield their containers to originals still
    waiting after the round, and with `release_beaten` clones at launch that their task's lead clearly beats
    (by `beaten_rule`) are released at once, every round (service/round/yielding.py, whose rules choose
    which clones yield).
    `history`: the recurring-job history of applications without an AM helper, θ/σ of their asks before their
    own containers end (service/state/runhistory.py). `late_first` (appmaster.late_first): clones judged alone
    are placed by the core with their job's originals (service/round/translate.py); still waiting, they count
    as clones judged alone for yielding, as without it."""
    import time

    now = clock or time.time
    source = am if am is not None else from_sources(hints, copies)

    def round_fn(mirror: Mirror, memory: RoundMemory) -> RoundResult:
        wanting = {
            application_of_attempt(a.key[0]) for a in mirror.asks.values() if a.num_containers > a.outstanding
        }
        # `scoped`: the copies of the mirror's applications only (not other sessions' tenants)
        view = source(wanting, mirror.apps.keys() if scoped else None)
        running = view.copies
        released: list[KillChoice] = []
        if running is not None and release_beaten:
            released = yielding.beaten(running, mirror, int(now() * 1000), beaten_rule)
            metrics.CLONES_BEATEN.inc(sum(1 for k in released if k.reason == yielding.REASON_CLONE_BEATEN))
        if not wanting:
            return RoundResult(kills=released, copies=running)  # nothing pending: no round (rows stay dirty)
        iso = Isolation(mirror, memory)  # one application's error leaves it out, not the round (isolate.py)
        snapshot, index, zero, clones = snapshot_and_clones(
            mirror, memory, now(), view.hint, limits, iso, history, late_first
        )
        result = from_decisions(mirror, memory, iso.decide(policy, snapshot, index), index, zero)
        result.deferrals.extend(iso.deferrals())
        held = {d.key for d in result.deferrals}
        for key, n in memory.clamped.items():  # beyond an ask's bound: a later round
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
        result.copies = running
        originals = waiting_originals(mirror, result, clones) if running is not None else {}
        placed, deferred = place_clones(mirror, clones, result)  # last: only idle capacity is left
        result.placements.extend(placed)
        result.deferrals.extend(deferred)
        if running is not None:
            alone = waiting_alone(mirror, clones.alone, placed)
            for k, n in clones.ahead.items():  # the core's pending: originals and these alike; a count
                if (m := min(n, originals.get(k, 0))) > 0:
                    originals[k] -= m
                    alone[k] = alone.get(k, 0) + m
            originals = {k: n for k, n in originals.items() if n > 0}
            first = waiting_first(clones, alone, placed)
            now_ms = int(now() * 1000)
            # at most as many waiting as containers could yield (an ask of 2^31 containers: a list each)
            most = max(1, min(limits.containers_per_ask, len(mirror.containers)))
            counts = {("original", k): min(n, most) for k, n in originals.items()}
            counts.update({("alone", k): min(n, most) for k, n in alone.items()})
            counts.update({("first", k): min(n, most) for k, n in first.items()})
            waiting = steady(mirror, memory, counts, now_ms)
            if waiting:
                result.kills = yielding.choose(mirror, waiting, running, now_ms, result.placements)
                metrics.CLONES_YIELDED.inc(len(result.kills))
        result.kills[:0] = released
        return result

    return round_fn
